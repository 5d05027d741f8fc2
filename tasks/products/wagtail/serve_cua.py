# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
# (the line above: this module runs under the Wagtail venv, whose libraries the main venv lacks)
"""Waitress serving the Wagtail site for one sandbox instance, with what the app contract
needs around Django's WSGI application. Runs under the Wagtail venv's Python
(build.wagtail_python()), so it imports nothing of cua.

    python serve_cua.py --port PORT --socket CONTROL_SOCKET     (CUA_WAGTAIL_DB, CUA_WAGTAIL_MEDIA set)

- one request at a time (a lock around Django's application): `GET /.cua-idle` takes the
  same lock, so the service's barrier returns only once the request before it has
  finished, as MediaWiki's single `php -S` worker gives it;
- after a request that is not a static file, while still holding the lock,
  `POST /__cua/activity` on the control socket: the service logs what the request changed;
- static files come from Django's staticfiles finders (no collectstatic step);
- Django's ALLOWED_HOSTS answers loopback Host names only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import sys
import threading
from typing import Any, Callable, Iterable

IDLE_PATH = "/.cua-idle"

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

    def __init__(self, django_app: Any, control_socket: str) -> None:
        self.django = django_app
        self.control_socket = control_socket
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET")
        with self.lock:
            if path == IDLE_PATH:
                body = b"idle"
                start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "4")])
                return [body]
            result = self.django(environ, start_response)
            try:
                out = b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
            if not path.startswith(("/static/", "/media/")):
                self._activity(f"{method} {path}")
            return [out]

    def _activity(self, request: str) -> None:
        if not self.control_socket:
            return
        conn = UnixHTTPConnection(self.control_socket)
        try:
            conn.request("POST", "/__cua/activity", json.dumps({"request": request[:300]}),
                         {"Content-Type": "application/json"})
            conn.getresponse().read()
        except OSError as exc:
            print(f"serve_cua: activity log unreachable: {exc}", file=sys.stderr, flush=True)
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
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmsite"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
    import django
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.wsgi import get_wsgi_application
    from waitress import serve

    django.setup()
    app = CuaFront(StaticFilesHandler(get_wsgi_application()), args.socket)
    print(f"serve_cua: serving on 127.0.0.1:{args.port}", flush=True)
    # threads=2: the idle probe waits on the lock, not behind a queue; the lock keeps one request at a time
    serve(app, host="127.0.0.1", port=args.port, threads=2, ident="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
