"""A page read that a navigation interrupts (the document it ran in was replaced while it
ran: a click's page load committing) is read again in the new document, never answered
as a failure. Oracles poll pages with such reads (`wait_for`) while their clicks load the
next page; under load one landed on the commit and failed a check (cms_wagtail, in QA).
In real Chromium, on a page that keeps navigating by itself."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import cua.sandboxes.browser.queries as browser_queries
from cua.sandboxes.browser import BrowserConfig, BrowserSandbox
from cua.state import DomQuery, LocalStorageQuery, TitleQuery

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]

#: Each page of the chain loads the next 30 ms after it has loaded, this many times.
HOPS = 120


@contextmanager
def _hopping_site() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            n = int(parse_qs(urlsplit(self.path).query).get("n", ["0"])[0])
            nxt = f"<script>addEventListener('load', () => setTimeout(() => location.replace('/hop?n={n - 1}'), 30))</script>"
            filler = "".join(f"<li>item {i}</li>" for i in range(300))
            body = (f"<title>hop {n}</title><p id=n>{n}</p><ul>{filler}</ul>" + (nxt if n > 0 else "")).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def _failures_while_hopping(monkeypatch: pytest.MonkeyPatch, retries: int) -> tuple[int, int]:
    """(failed reads, reads) over a chain of self-navigating pages."""
    monkeypatch.setattr(browser_queries, "NAVIGATION_RETRIES", retries)
    with _hopping_site() as base:
        sb = await BrowserSandbox.create(BrowserConfig(start_url=f"{base}/hop?n=0", isolation="shared"),
                                         sandbox_id="bx-read-nav")
        try:
            await sb.query([DomQuery(selector="#n", prop="text")])
            commits = sb._pages.commits
            await sb._pages.page.evaluate(f"() => location.replace('/hop?n={HOPS}')")
            failed = reads = 0
            while sb._pages.commits - commits < HOPS:
                results = await sb.query([DomQuery(selector="li", prop="text", all=True), TitleQuery(),
                                          LocalStorageQuery()])
                reads += len(results)
                failed += sum(not r.ok for r in results)
            return failed, reads
        finally:
            await sb.close()


async def test_reads_during_navigations_read_the_new_document(monkeypatch: pytest.MonkeyPatch) -> None:
    failed, reads = await _failures_while_hopping(monkeypatch, browser_queries.NAVIGATION_RETRIES)
    assert reads > 30 and failed == 0, (failed, reads)
