"""A page read that a navigation interrupts (the document it ran in was replaced while it
ran: a click's page load committing) is read again in the new document, never answered
as a failure. Oracles poll pages with such reads (`wait_for`) while their clicks load the
next page; under load one landed on the commit and failed a check (cms_wagtail, in QA).
In real Chromium, on a page that keeps navigating by itself."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from _html_site import Answer, html_site

import cua.sandboxes.browser.queries as browser_queries
from cua.sandboxes.browser import BrowserConfig, BrowserSandbox
from cua.state import DomQuery, LocalStorageQuery, TitleQuery

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]

#: Each page of the chain loads the next 200 ms after it has loaded, this many times.
HOPS = 40


def _hop(path: str) -> Answer:
    n = int(parse_qs(urlsplit(path).query).get("n", ["0"])[0])
    nxt = f"<script>addEventListener('load', () => setTimeout(() => location.replace('/hop?n={n - 1}'), 200))</script>"
    filler = "".join(f"<li>item {i}</li>" for i in range(300))
    return 200, {}, (f"<title>hop {n}</title><p id=n>{n}</p><ul>{filler}</ul>" + (nxt if n > 0 else "")).encode()


async def _failures_while_hopping(monkeypatch: pytest.MonkeyPatch, retries: int) -> tuple[int, int]:
    """(failed reads, reads) over a chain of self-navigating pages."""
    monkeypatch.setattr(browser_queries, "NAVIGATION_RETRIES", retries)
    with html_site(_hop) as base:
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
