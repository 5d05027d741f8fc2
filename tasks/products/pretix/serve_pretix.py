# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
"""pretix's server for one sandbox instance: waitress (pinned in the pretix venv) serving
pretix's WSGI application, with what the app contract needs around it. Runs under the
pretix venv's Python (build.pretix_python()), so it imports nothing of cua.

    python serve_pretix.py --port PORT --socket CONTROL_SOCKET     ($PRETIX_*: the instance)

- one request at a time (a lock around Django): `GET /.cua-idle` takes the same lock, so the
  service's barrier returns only once the request before it has finished;
- after a request, still holding the lock, `POST /__cua/activity` on the control socket:
  the service logs what the request changed (the activity log);
- no cache outlives a reset: Django keeps the content types in process; before each
  request the front asks SQLite whether another connection (the service putting an image
  back) wrote the file since this server's last request ended, and if so drops that cache,
  the database connections and the uploads folder (no seed has uploads). pretix renders
  with its dummy cache (no Redis configured) and keeps sessions in the database, so
  nothing else is kept;
- `/static/` is served from pretix's compiled static files (its STATIC_ROOT, the wheel's
  `static.dist`), as a production pretix's web server would;
- pages are served only for loopback Host names.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import mimetypes
import os
import shutil
import socket
import sqlite3
import sys
import threading
from typing import Any, Callable, Iterable

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cua_pretix_site.settings")

import django  # noqa: E402  # type: ignore[import-not-found]  # the pretix venv's

django.setup()

import waitress  # noqa: E402  # type: ignore[import-not-found]  # the pretix venv's
from django.conf import settings  # noqa: E402  # type: ignore[import-not-found]
from django.contrib.contenttypes.models import ContentType  # noqa: E402  # type: ignore[import-not-found]
from django.core.wsgi import get_wsgi_application  # noqa: E402  # type: ignore[import-not-found]
from django.db import connections  # noqa: E402  # type: ignore[import-not-found]

IDLE_PATH = "/.cua-idle"
STATIC_PREFIX = "/static/"
CONTROL_PREFIX = "/__cua/"
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
        if path.startswith(CONTROL_PREFIX):  # the app contract's endpoints live on the unix socket only
            return self._plain(start_response, "404 Not Found", "not found")
        if path.startswith(STATIC_PREFIX) and method in ("GET", "HEAD"):
            return self._static(start_response, path[len(STATIC_PREFIX):])
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
            self._activity(f"{method} {path}")
            self.seen = self._version()
            return [body]

    def warm(self, port: int) -> None:
        """Render the control panel's login page once, under the lock, as the server starts
        listening: pretix's first request loads its URL patterns, plugins and templates
        (seconds on a loaded machine), which the sandbox's first page load would otherwise
        bear alone. An anonymous GET writes nothing."""
        with self.lock:
            self._warm(port)

    def _warm(self, port: int) -> None:
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/control/login", "QUERY_STRING": "", "SERVER_NAME": "127.0.0.1",
                   "SERVER_PORT": str(port), "HTTP_HOST": f"127.0.0.1:{port}", "SERVER_PROTOCOL": "HTTP/1.1",
                   "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(b""), "wsgi.errors": sys.stderr,
                   "wsgi.version": (1, 0), "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False}
        result = self.django(environ, lambda status, headers, exc_info=None: None)
        try:
            b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        connections.close_all()
        self.seen = self._version()

    @staticmethod
    def _static(start_response: StartResponse, relative: str) -> list[bytes]:
        """A file of pretix's compiled static files; 404 for anything outside them."""
        root = os.path.realpath(settings.STATIC_ROOT)
        path = os.path.realpath(os.path.join(root, relative))
        if not path.startswith(root + os.sep) or not os.path.isfile(path):
            return CuaFront._plain(start_response, "404 Not Found", "no such static file")
        with open(path, "rb") as f:
            body = f.read()
        kind = mimetypes.guess_type(path)[0] or "application/octet-stream"
        start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body))),
                                  ("Cache-Control", "public, max-age=3600")])
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
            print(f"serve_pretix: activity log unreachable: {exc}", file=sys.stderr, flush=True)
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
    threading.Thread(target=app.warm, args=(args.port,), daemon=True).start()
    print(f"serve_pretix: serving {settings.DATABASES['default']['NAME']} on 127.0.0.1:{args.port}", flush=True)
    waitress.serve(app, host="127.0.0.1", port=args.port, threads=2, ident="waitress", _quiet=True,
                   clear_untrusted_proxy_headers=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
