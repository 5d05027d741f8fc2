# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
"""The Oscar shop's server for one sandbox instance: waitress (pinned in the Oscar venv)
serving Django's WSGI application behind the products' shared front (../wsgi_front.py: the
page side's rules, one request at a time, the activity log). Runs under the Oscar venv's
Python (build.oscar_python()), so it imports nothing of cua.

    python serve_oscar.py --port PORT --socket CONTROL_SOCKET     ($CUA_OSCAR_DATA: the instance)

No cache outlives a reset: Django keeps the current Site and the content types in process;
before each request the front asks SQLite whether another connection (the service putting
an image back) wrote the file since this server's last request ended, and if so drops both
caches and empties the uploads folder (no seed has uploads). Pages are rendered with a
dummy cache and database sessions, so nothing else is kept.
"""

from __future__ import annotations

import os
import runpy
import shutil
import sqlite3
import sys
from typing import TYPE_CHECKING

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cua_oscar_site.settings")

import django  # noqa: E402  # the Oscar venv's

django.setup()

import waitress  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.contenttypes.models import ContentType  # noqa: E402
from django.contrib.sites.models import Site  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.db import connections  # noqa: E402

if TYPE_CHECKING:  # (read by its package's name; run, from its file: see wsgi_front's docstring)
    from cua.tasks.products.wsgi_front import SerialFront, arguments
else:  # (not by sys.path: the products' folder would shadow packages of the venv)
    _front = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                         "wsgi_front.py"))
    SerialFront, arguments = _front["SerialFront"], _front["arguments"]


class OscarFront(SerialFront):
    """The shared front, dropping Django's in-process caches after a restore."""

    def __init__(self, control_socket: str) -> None:
        super().__init__(get_wsgi_application(), "serve_oscar", control_socket)
        self.watch = sqlite3.connect(settings.DATABASES["default"]["NAME"], check_same_thread=False, timeout=30)
        self.seen = self._version()

    def _version(self) -> int:
        return int(self.watch.execute("PRAGMA data_version").fetchone()[0])

    def before(self) -> None:
        if self._version() == self.seen:
            return
        Site.objects.clear_cache()
        ContentType.objects.clear_cache()
        connections.close_all()
        if os.path.isdir(settings.MEDIA_ROOT):
            shutil.rmtree(settings.MEDIA_ROOT, ignore_errors=True)

    def after(self) -> None:
        self.seen = self._version()


def main() -> int:
    args = arguments()
    app = OscarFront(args.socket)
    print(f"serve_oscar: serving {settings.DATABASES['default']['NAME']} on 127.0.0.1:{args.port}", flush=True)
    waitress.serve(app, host="127.0.0.1", port=args.port, threads=2, ident="waitress", _quiet=True,
                   clear_untrusted_proxy_headers=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
