"""A phone app for the mobile sandbox's tests: one page at /, /p2 and /p3 (each links to
the next) that logs the touch, pointer and mouse events its pad receives, a text field,
a permission and a share button; its state carries one notification. Run as a service:
`python tests/mobile/probe_app.py` with the app contract's variables."""

from __future__ import annotations

import sys
from pathlib import Path

from cua.sandboxes.mobile.shell_server import serve

PAGE = Path(__file__).with_name("probe_page.html").read_bytes()
HTML = "text/html; charset=utf-8"
NOTIFICATION = {"id": "n1", "app": "probe", "title": "Missed call", "text": "Alice Example", "time": "08:55",
                "link": "/p3"}

if __name__ == "__main__":
    sys.exit(serve({"/": (PAGE, HTML), "/p2": (PAGE, HTML), "/p3": (PAGE, HTML)},
                   {"notifications": [NOTIFICATION]}))
