# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
"""pretix's server for one sandbox instance: waitress (pinned in the pretix venv) serving
pretix's WSGI application behind the products' shared front (../wsgi_front.py: the page
side's rules, one request at a time, the activity log). Runs under the pretix venv's Python
(build.pretix_python()), so it imports nothing of cua.

    python serve_pretix.py --port PORT --socket CONTROL_SOCKET     ($PRETIX_*: the instance)

- no cache outlives a reset: Django keeps the content types in process; before each
  request the front asks SQLite whether another connection (the service putting an image
  back) wrote the file since this server's last request ended, and if so drops that cache,
  the database connections and the uploads folder (no seed has uploads). pretix renders
  with its dummy cache (no Redis configured) and keeps sessions in the database, so
  nothing else is kept;
- `/static/` is served from pretix's compiled static files (its STATIC_ROOT, the wheel's
  `static.dist`), as a production pretix's web server would, without waiting for the lock;
- the first page is rendered as the server starts (`PretixFront.warm`).
"""

from __future__ import annotations

import io
import mimetypes
import os
import runpy
import shutil
import sqlite3
import sys
import threading
from typing import TYPE_CHECKING, Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cua_pretix_site.settings")

import django  # noqa: E402  # the pretix venv's

django.setup()

import waitress  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.contenttypes.models import ContentType  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.db import connections  # noqa: E402

if TYPE_CHECKING:  # (read by its package's name; run, from its file: see wsgi_front's docstring)
    from cua.tasks.products.wsgi_front import SerialFront, StartResponse, arguments
else:  # (not by sys.path: the products' folder would shadow packages of the venv)
    _front = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                         "wsgi_front.py"))
    SerialFront, StartResponse, arguments = _front["SerialFront"], _front["StartResponse"], _front["arguments"]

STATIC_PREFIX = "/static/"


class PretixFront(SerialFront):
    """The shared front, serving pretix's static files and dropping Django's in-process
    caches after a restore."""

    def __init__(self, control_socket: str) -> None:
        super().__init__(get_wsgi_application(), "serve_pretix", control_socket, quiet=(STATIC_PREFIX,))
        self.watch = sqlite3.connect(settings.DATABASES["default"]["NAME"], check_same_thread=False, timeout=30)
        self.seen = self._version()

    def _version(self) -> int:
        return int(self.watch.execute("PRAGMA data_version").fetchone()[0])

    def unlocked(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes] | None:
        path = str(environ.get("PATH_INFO", ""))
        if path.startswith(STATIC_PREFIX) and environ.get("REQUEST_METHOD", "GET") in ("GET", "HEAD"):
            return self._static(start_response, path[len(STATIC_PREFIX):])
        return None

    def before(self) -> None:
        if self._version() == self.seen:
            return
        ContentType.objects.clear_cache()
        connections.close_all()
        if os.path.isdir(settings.MEDIA_ROOT):
            shutil.rmtree(settings.MEDIA_ROOT, ignore_errors=True)

    def after(self) -> None:
        self.seen = self._version()

    def warm(self, port: int) -> None:
        """Render the control panel's login page once, under the lock, as the server starts
        listening: pretix's first request loads its URL patterns, plugins and templates
        (seconds on a loaded machine), which the sandbox's first page load would otherwise
        bear alone. An anonymous GET writes nothing."""
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/control/login", "QUERY_STRING": "", "SERVER_NAME": "127.0.0.1",
                   "SERVER_PORT": str(port), "HTTP_HOST": f"127.0.0.1:{port}", "SERVER_PROTOCOL": "HTTP/1.1",
                   "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(b""), "wsgi.errors": sys.stderr,
                   "wsgi.version": (1, 0), "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False}
        with self.lock:
            result = self.app(environ, lambda status, headers, exc_info=None: None)
            try:
                b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
            connections.close_all()
            self.seen = self._version()

    def _static(self, start_response: StartResponse, relative: str) -> list[bytes]:
        """A file of pretix's compiled static files; 404 for anything outside them."""
        root = os.path.realpath(settings.STATIC_ROOT)
        path = os.path.realpath(os.path.join(root, relative))
        if not path.startswith(root + os.sep) or not os.path.isfile(path):
            return self.plain(start_response, "404 Not Found", "no such static file")
        with open(path, "rb") as f:
            body = f.read()
        kind = mimetypes.guess_type(path)[0] or "application/octet-stream"
        start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body))),
                                  ("Cache-Control", "public, max-age=3600")])
        return [body]


def main() -> int:
    args = arguments()
    app = PretixFront(args.socket)
    threading.Thread(target=app.warm, args=(args.port,), daemon=True).start()
    print(f"serve_pretix: serving {settings.DATABASES['default']['NAME']} on 127.0.0.1:{args.port}", flush=True)
    waitress.serve(app, host="127.0.0.1", port=args.port, threads=2, ident="waitress", _quiet=True,
                   clear_untrusted_proxy_headers=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
