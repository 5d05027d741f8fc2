"""`cua report --serve`: the report folder over loopback HTTP, rebuilt while the run goes on.

A tiny stdlib server (no framework: the report is static files) plus one thread that brings
the folder up to date every `interval` seconds; rebuilds are incremental (only episodes whose
trajectory changed are rewritten). The page sees it is served over HTTP and polls its index.
"""

from __future__ import annotations

import functools
import http.server
import logging
import sys
import threading
from typing import Any

from cua.report.build import ReportBuilder

__all__ = ["ReportServer", "serve_report"]
log = logging.getLogger(__name__)


class _Handler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        log.debug(format, *args)


class ReportServer:
    """Serves `builder.out` on 127.0.0.1 and rebuilds it in a thread until `close()`."""

    def __init__(self, builder: ReportBuilder, *, port: int = 0, interval: float = 1.0) -> None:
        self.builder = builder
        self.interval = interval
        builder.out.mkdir(parents=True, exist_ok=True)
        handler = functools.partial(_Handler, directory=str(builder.out))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self.httpd.serve_forever, name="report-http", daemon=True),
                         threading.Thread(target=self._rebuild, name="report-build", daemon=True)]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/index.html"

    def start(self) -> ReportServer:
        self.builder.build()
        for t in self._threads:
            t.start()
        return self

    def _rebuild(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.builder.build()
            except Exception as exc:  # a half-written run file: the next tick sees it whole
                log.warning("rebuilding the report failed: %s: %s", type(exc).__name__, exc)

    def wait(self) -> None:
        """Block until `close()` (or Ctrl-C in the calling thread)."""
        self._stop.wait()

    def close(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        for t in self._threads:
            if t.is_alive():
                t.join(timeout=10)


def serve_report(builder: ReportBuilder, *, port: int = 0, interval: float = 1.0) -> int:
    server = ReportServer(builder, port=port, interval=interval).start()
    print(server.url, flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.close()
    return 0
