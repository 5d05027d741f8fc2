# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
# (the line above: this module runs under the Wagtail venv, whose libraries the main venv lacks)
"""Waitress serving the Wagtail site for one sandbox instance, Django's WSGI application
behind the products' shared front (../wsgi_front.py: the page side's rules, one request at
a time, the activity log). Runs under the Wagtail venv's Python (build.wagtail_python()),
so it imports nothing of cua.

    python serve_cua.py --port PORT --socket CONTROL_SOCKET     (CUA_WAGTAIL_DB, CUA_WAGTAIL_MEDIA set)

Static files come from Django's staticfiles finders (no collectstatic step); static and
media files make no activity.
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import TYPE_CHECKING

_HERE = os.path.dirname(os.path.abspath(__file__))

if TYPE_CHECKING:  # (read by its package's name; run, from its file: see wsgi_front's docstring)
    from cua.tasks.products.wsgi_front import SerialFront, arguments
else:  # (not by sys.path: the products' folder would shadow packages of the venv)
    _front = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                         "wsgi_front.py"))
    SerialFront, arguments = _front["SerialFront"], _front["arguments"]


def main() -> int:
    args = arguments()
    sys.path.insert(0, os.path.join(_HERE, "cmsite"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
    import django
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.wsgi import get_wsgi_application
    from waitress import serve

    django.setup()
    app = SerialFront(StaticFilesHandler(get_wsgi_application()), "serve_cua", args.socket,
                      quiet=("/static/", "/media/"))
    print(f"serve_cua: serving on 127.0.0.1:{args.port}", flush=True)
    # threads=2: the idle probe waits on the lock, not behind a queue; the lock keeps one request at a time
    serve(app, host="127.0.0.1", port=args.port, threads=2, ident="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
