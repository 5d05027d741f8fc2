"""A page of another origin in a real Chromium, to show that a listener the kit starts
keeps other pages out (tests/security/test_listeners_exposure.py, the real products' fronts
in tests/products/): a foreign site to open such a page on, the browser (where
`evil.example` and `rebind.example` resolve to 127.0.0.1) and the scripts such a page runs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from _html_site import html_site
from playwright.async_api import Browser, async_playwright

from cua.sandboxes.browser.launcher import find_executable

__all__ = ["IMAGE_LOAD", "NO_CORS_POST", "SCRIPT_INCLUDE", "WS_ATTEMPT", "chromium", "foreign_site"]


@contextmanager
def foreign_site() -> Iterator[int]:
    """A page of another origin on 127.0.0.1 (a port of its own): an empty page the tests
    script through Playwright, so its requests carry its origin. Yields the port."""
    page = b"<!doctype html><title>another site</title><p>nothing to see"
    with html_site(lambda _path: (200, {}, page)) as base:
        yield int(base.rsplit(":", 1)[1])


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=find_executable().path,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--host-resolver-rules=MAP evil.example 127.0.0.1, MAP rebind.example 127.0.0.1"])
        try:
            yield browser
        finally:
            await browser.close()


#: Run in a foreign page: open a websocket and say how it ended ("open" is a success for the attacker).
WS_ATTEMPT = """(url) => new Promise((resolve) => {
  const ws = new WebSocket(url);
  ws.onopen = () => { ws.close(); resolve("open"); };
  ws.onclose = (e) => resolve("closed " + e.code);
  setTimeout(() => resolve("silent"), 10000);
})"""

#: Run in a foreign page: include a report data script, as a page would to read it (JSONP).
SCRIPT_INCLUDE = """(url) => new Promise((resolve) => {
  window.__cuaLoaded = (id) => resolve("leaked " + id);
  const s = document.createElement("script");
  s.src = url;
  s.onerror = () => resolve("refused");
  s.onload = () => setTimeout(() => resolve("loaded, not called"), 200);
  document.head.appendChild(s);
})"""

#: Run in a foreign page: a simple POST no page needs permission for (no preflight), and a form.
NO_CORS_POST = """async ([url, body]) => {
  await fetch(url, {method: "POST", mode: "no-cors", body,
                    headers: {"content-type": "application/x-www-form-urlencoded"}}).catch(() => null);
  const frame = document.createElement("iframe");
  frame.name = "sink";
  document.body.appendChild(frame);
  const form = document.createElement("form");
  form.method = "post"; form.action = url; form.target = "sink";
  for (const [k, v] of new URLSearchParams(body)) {
    const input = document.createElement("input"); input.name = k; input.value = v; form.appendChild(input);
  }
  document.body.appendChild(form);
  const loaded = new Promise((resolve) => { frame.onload = resolve; });
  form.submit();
  await Promise.race([loaded, new Promise((r) => setTimeout(r, 10000))]);
  return "sent";
}"""

#: Run in a foreign page: load a URL as an image, as a page would to probe or use it.
IMAGE_LOAD = """(url) => new Promise((resolve) => {
  const img = new Image();
  img.onload = () => resolve("loaded");
  img.onerror = () => resolve("refused");
  img.src = url;
  setTimeout(() => resolve("silent"), 10000);
})"""
