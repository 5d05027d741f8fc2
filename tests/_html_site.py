"""A small site on 127.0.0.1 for browser tests: each GET is answered by a function of its
path, in a thread of its own, so a page the test's Chromium loads is real HTTP."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Answer", "html_site"]

#: What a path gets: (status, extra headers, body); a body of HTML unless a header says otherwise.
Answer = tuple[int, dict[str, str], bytes]


@contextmanager
def html_site(answer: Callable[[str], Answer]) -> Iterator[str]:
    """Serve `answer(path)` for every GET until the block exits; yields the base URL."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, headers, body = answer(self.path)
            self.send_response(status)
            headers = {"Content-Type": "text/html", **headers}
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
