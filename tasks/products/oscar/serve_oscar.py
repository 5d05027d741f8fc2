# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
"""The Oscar shop's server for one sandbox instance: waitress (pinned in the Oscar venv)
serving Django's WSGI application, with what the app contract needs around it. Runs under
the Oscar venv's Python (build.oscar_python()), so it imports nothing of cua.

    python serve_oscar.py --port PORT --socket CONTROL_SOCKET     ($CUA_OSCAR_DATA: the instance)

- one request at a time (a lock around Django): `GET /.cua-idle` takes the same lock, so the
  service's barrier returns only once the request before it has finished;
- after a request, still holding the lock, `POST /__cua/activity` on the control socket:
  the service logs what the request changed (the activity log);
- no cache outlives a reset: Django keeps the current Site and the content types in
  process; before each request the front asks SQLite whether another connection (the
  service putting an image back) wrote the file since this server's last request ended,
  and if so drops both caches and empties the uploads folder (no seed has uploads). Pages
  are rendered with a dummy cache and database sessions, so nothing else is kept;
- pages are served only for loopback Host names.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import sqlite3
import sys
import threading
from typing import Any, Callable, Iterable

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cua_oscar_site.settings")

import django  # noqa: E402  # type: ignore[import-not-found]  # the Oscar venv's

django.setup()

import waitress  # noqa: E402  # type: ignore[import-not-found]  # the Oscar venv's
from django.conf import settings  # noqa: E402  # type: ignore[import-not-found]
from django.contrib.contenttypes.models import ContentType  # noqa: E402  # type: ignore[import-not-found]
from django.contrib.sites.models import Site  # noqa: E402  # type: ignore[import-not-found]
from django.core.wsgi import get_wsgi_application  # noqa: E402  # type: ignore[import-not-found]
from django.db import connections  # noqa: E402  # type: ignore[import-not-found]

IDLE_PATH = "/.cua-idle"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")

StartResponse = Callable[..., Any]


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=60)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(60)
        sock.connect(self.unix_path)
        self.sock = sock


class CuaFront:
    """The WSGI application waitress serves (see the module's docstring)."""

    def __init__(self, control_socket: str) -> None:
        self.control_socket = control_socket
        self.lock = threading.Lock()
        self.django = get_wsgi_application()
        self.watch = sqlite3.connect(settings.DATABASES["default"]["NAME"], check_same_thread=False, timeout=30)
        self.seen = self._version()

    def _version(self) -> int:
        return int(self.watch.execute("PRAGMA data_version").fetchone()[0])

    def _forget_if_replaced(self) -> None:
        if self._version() == self.seen:
            return
        Site.objects.clear_cache()
        ContentType.objects.clear_cache()
        connections.close_all()
        media = settings.MEDIA_ROOT
        if os.path.isdir(media):
            shutil.rmtree(media, ignore_errors=True)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        host = environ.get("HTTP_HOST", "").rsplit(":", 1)[0] if environ.get("HTTP_HOST") else "127.0.0.1"
        if host not in LOOPBACK:
            return self._plain(start_response, "403 Forbidden", "this server answers loopback host names only")
        path = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET")
        with self.lock:
            if path == IDLE_PATH:
                return self._plain(start_response, "200 OK", "idle")
            self._forget_if_replaced()
            result = self.django(environ, start_response)
            try:
                body = b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
            if not path.startswith("/static/"):
                self._activity(f"{method} {path}")
            self.seen = self._version()
            return [body]

    @staticmethod
    def _plain(start_response: StartResponse, status: str, text: str) -> list[bytes]:
        body = text.encode()
        start_response(status, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
        return [body]

    def _activity(self, request: str) -> None:
        if not self.control_socket:
            return
        conn = UnixHTTPConnection(self.control_socket)
        try:
            conn.request("POST", "/__cua/activity", json.dumps({"request": request[:300]}),
                         {"Content-Type": "application/json"})
            conn.getresponse().read()
        except OSError as exc:
            print(f"serve_oscar: activity log unreachable: {exc}", file=sys.stderr, flush=True)
        finally:
            conn.close()


def _die_with_parent() -> None:
    """Stop when the service that started this server dies (Linux's parent-death signal)."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:
        sys.exit(1)


def main() -> int:
    _die_with_parent()
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--socket", default="")
    args = parser.parse_args()
    app = CuaFront(args.socket)
    print(f"serve_oscar: serving {settings.DATABASES['default']['NAME']} on 127.0.0.1:{args.port}", flush=True)
    waitress.serve(app, host="127.0.0.1", port=args.port, threads=2, ident="waitress", _quiet=True,
                   clear_untrusted_proxy_headers=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
