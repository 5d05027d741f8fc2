"""Answers to the state queries a judge asks of a browser sandbox.

The page answers dom, url, title, local_storage, cookies and a11y; the services answer
app_state and sql. Where the sandbox has origins of its own (origins.py), the page's
reads are answered only while the page (and a frame read) is on one of them: a page the
agent reached elsewhere fails them with error `foreign_page`, never reads as the task's.
A query the sandbox cannot answer, or one that fails, gets a failed `StateResult` (a
judge's verdict, not the sandbox's error); only the sandbox's death raises.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from playwright.async_api import BrowserContext, Frame, Page
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, ValidationError

from cua.errors import InfraError, SandboxCrashed, Timeout
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.observe import accessibility_tree_nested
from cua.sandboxes.browser.origins import FOREIGN_PAGE, OwnOrigins
from cua.sandboxes.browser.pages import Pages
from cua.sandboxes.browser.pwerrors import target_closed
from cua.sandboxes.browser.services import ServiceControl
from cua.state import (
    A11yQuery,
    AppStateQuery,
    CookiesQuery,
    DomQuery,
    LocalStorageQuery,
    NavigationQuery,
    SqlQuery,
    StateQuery,
    StateQueryAdapter,
    StateResult,
    TitleQuery,
    UrlQuery,
)

__all__ = ["QUERY_KINDS", "Queries", "cookies_query", "dom_query", "local_storage_query"]

QUERY_KINDS = ["app_state", "sql", "url", "title", "dom", "local_storage", "cookies", "a11y", "navigation"]
#: Reads of a document that navigations keep replacing, before the last failure is the answer.
NAVIGATION_RETRIES = 3
#: How long a read waits for the next document to be parsed before reading again.
NAVIGATION_WAIT_MS = 5_000

_DOM_PROP = r"""
(elements, [prop, attr, all, offset]) => {
  const read = (el) => {
    switch (prop) {
      case "text": return el.textContent;
      case "inner_text": return el.innerText ?? el.textContent;
      case "value": return "value" in el ? el.value : null;
      case "html": return el.outerHTML;
      case "attr": return el.getAttribute(attr);
      case "checked": return !!el.checked;
      case "selected": return el.tagName === "SELECT"
          ? Array.from(el.selectedOptions).map((o) => o.value) : !!el.selected;
      case "visible": {
        const r = el.getBoundingClientRect(), st = getComputedStyle(el);
        return r.width > 0 && r.height > 0 && st.visibility !== "hidden" && st.display !== "none";
      }
      case "bbox": {
        const r = el.getBoundingClientRect();
        return { x: r.x + offset[0], y: r.y + offset[1], width: r.width, height: r.height };
      }
    }
    return null;
  };
  if (prop === "count") return elements.length;
  if (all) return elements.map(read);
  return elements.length ? read(elements[0]) : null;
}
"""


# The same read in one evaluate, the elements found by the page's own DOM API, where that
# finds exactly what Playwright's selector engines would: an XPath (Playwright's xpath
# engine is document.evaluate, elements kept), or a CSS selector the browser parses itself
# on a document with no open shadow root (Playwright's css engine pierces those; it also
# takes its own extensions, :has-text() and the like, which the browser refuses). Else
# null, and the query goes through a Playwright locator: a round trip through its
# selector machinery that cost 6-10 ms, on every judge read and every instruction read.
_DOM_NATIVE = r"""
([selector, xpath, args]) => {
  let elements;
  if (xpath) {
    const found = document.evaluate(selector, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
    elements = [];
    for (let i = 0; i < found.snapshotLength; i++) {
      const node = found.snapshotItem(i);
      if (node.nodeType === Node.ELEMENT_NODE) elements.push(node);
    }
  } else {
    try { elements = Array.from(document.querySelectorAll(selector)); } catch (e) { return null; }
    const walker = document.createTreeWalker(document, NodeFilter.SHOW_ELEMENT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) if (node.shadowRoot) return null;
  }
  return { value: (__DOM_PROP__)(elements, args) };
}
""".replace("__DOM_PROP__", _DOM_PROP.strip())


async def _frame_of(page: Page, selector: str | None) -> tuple[Frame | None, tuple[float, float]]:
    if selector is None:
        return page.main_frame, (0.0, 0.0)
    handle = await page.query_selector(selector)
    if handle is None:
        return None, (0.0, 0.0)
    frame = await handle.content_frame()
    box = await handle.evaluate(
        "(el) => { const r = el.getBoundingClientRect(); return [r.x + el.clientLeft, r.y + el.clientTop]; }")
    return frame, (float(box[0]), float(box[1]))


async def dom_query(page: Page, q: DomQuery, own: OwnOrigins | None = None) -> StateResult:
    if q.prop == "attr" and not q.attr:
        return StateResult.failure("failed", "prop 'attr' needs the attribute name in `attr`")
    try:
        xpath = q.selector_type == "xpath"
        if q.frame is None:
            native: dict[str, Any] | None = await page.evaluate(
                _DOM_NATIVE, [q.selector, xpath, [q.prop, q.attr, q.all, [0.0, 0.0]]])
            if native is not None:
                return StateResult(value=native["value"])
        frame, offset = await _frame_of(page, q.frame)
        if frame is None:
            return StateResult.failure("not_found", f"no iframe matches {q.frame!r}")
        refused = own.refusal(frame.url) if own is not None else None
        if refused is not None and own is not None and frame.url.startswith("about:"):
            # an about:srcdoc or about:blank frame of the page has its parent's origin
            origin = await frame.evaluate("() => self.origin")
            refused = own.refusal(f"{origin}/") if isinstance(origin, str) else refused
        if refused is not None:
            return StateResult.failure(FOREIGN_PAGE, f"iframe {q.frame!r}: {refused}")
        engine = "xpath" if xpath else "css"
        value: Any = await frame.locator(f"{engine}={q.selector}").evaluate_all(
            _DOM_PROP, [q.prop, q.attr, q.all, list(offset)])
    except PlaywrightError as exc:
        if target_closed(exc):
            raise
        message = str(exc).splitlines()[0]
        return StateResult.failure("failed", message)
    return StateResult(value=value)


async def local_storage_query(page: Page, q: LocalStorageQuery) -> StateResult:
    try:
        if q.key is not None:
            return StateResult(value=await page.evaluate("(k) => window.localStorage.getItem(k)", q.key))
        return StateResult(value=await page.evaluate("() => ({ ...window.localStorage })"))
    except PlaywrightError as exc:
        if target_closed(exc):
            raise
        message = str(exc).splitlines()[0]
        return StateResult.failure("failed", f"no localStorage here: {message}")


async def cookies_query(context: BrowserContext, q: CookiesQuery) -> StateResult:
    cookies = [dict(c) for c in await context.cookies()]
    if q.name is not None:
        cookies = [c for c in cookies if c.get("name") == q.name]
    return StateResult(value=cookies)


class Queries:
    """The sandbox's answers to state queries."""

    def __init__(self, guard: Guard, pages: Pages, controls: dict[str, ServiceControl],
                 own: OwnOrigins | None = None) -> None:
        self._guard = guard
        self._pages = pages
        self._controls = controls
        #: Which pages are the task's own (None: every page is read).
        self._own = own

    async def answer(self, queries: Sequence[StateQuery | dict[str, Any]]) -> list[StateResult]:
        """Answer `queries` at once, in their order: they only read, so the page's reads and
        the services' run side by side (a judge's reads cost one round trip, not one each)."""
        self._guard.check_alive()
        return list(await asyncio.gather(*(self._answer(raw) for raw in queries)))

    async def _answer(self, raw: StateQuery | dict[str, Any]) -> StateResult:
        try:
            q: StateQuery = raw if isinstance(raw, BaseModel) else StateQueryAdapter.validate_python(raw)
        except ValidationError as exc:
            return StateResult.failure("failed", f"malformed query: {exc.errors(include_url=False)[0]['msg']}")
        try:
            return await self._guard.call(self._one(q), f"query {q.kind}")
        except Timeout as exc:
            return StateResult.failure("timeout", exc.message)
        except InfraError as exc:
            if isinstance(exc, SandboxCrashed):
                raise
            self._guard.check_alive()
            return StateResult.failure("failed", exc.message)

    async def _read_document(self, q: TitleQuery | DomQuery | LocalStorageQuery) -> StateResult:
        """Read the page's document; a read that a navigation interrupted (the document it
        ran in was replaced: a click's page load committed meanwhile) is read again in the
        new document once it is parsed, as the next read would have been, never a failure."""
        result = StateResult.failure("failed", "the page kept navigating while it was read")
        for _ in range(NAVIGATION_RETRIES):
            page, commits = self._pages.page, self._pages.commits
            refused = self._own.refusal(page.url) if self._own is not None else None
            if refused is not None:
                return StateResult.failure(FOREIGN_PAGE, refused)
            if isinstance(q, TitleQuery):
                try:
                    result = StateResult(value=await page.title())
                except PlaywrightError as exc:
                    if target_closed(exc):
                        raise
                    result = StateResult.failure("failed", str(exc).splitlines()[0])
            elif isinstance(q, DomQuery):
                result = await dom_query(page, q, self._own)
            else:
                result = await local_storage_query(page, q)
            # The commit that replaced the document may reach us after the read's own failure,
            # so any failed read is read again once the page's document is parsed (a read that
            # fails for itself, a bad selector, fails alike each time, at once).
            if result.ok or (result.error != "failed" and self._pages.commits == commits):
                return result
            with contextlib.suppress(PlaywrightError):  # a navigation that fails leaves the page as it is
                await page.wait_for_load_state("domcontentloaded", timeout=NAVIGATION_WAIT_MS)
        return result

    async def _one(self, q: StateQuery) -> StateResult:
        page = self._pages.page
        if isinstance(q, (AppStateQuery, SqlQuery)):
            control = self._controls.get(q.service)
            if control is None:
                return StateResult.failure("not_found", f"no service {q.service!r}; services: {sorted(self._controls)}")
            if isinstance(q, AppStateQuery):
                return StateResult(value=await control.state())
            ok, value = await control.sql(q.query, q.params)
            return StateResult(value=value) if ok else StateResult.failure("failed", str(value))
        reads_page = isinstance(q, (UrlQuery, TitleQuery, DomQuery, LocalStorageQuery, A11yQuery))
        refused = self._own.refusal(page.url) if self._own is not None and reads_page else None
        if refused is not None:
            return StateResult.failure(FOREIGN_PAGE, refused)
        if isinstance(q, UrlQuery):
            return StateResult(value=page.url)
        if isinstance(q, (TitleQuery, DomQuery, LocalStorageQuery)):
            return await self._read_document(q)
        if isinstance(q, CookiesQuery):
            assert self._pages.context is not None
            return await cookies_query(self._pages.context, q)
        if isinstance(q, NavigationQuery):  # recorded by the sandbox, never read from a page
            return StateResult(value=self._pages.history.value())
        if isinstance(q, A11yQuery):
            assert self._pages.cdp is not None
            return StateResult(value=await accessibility_tree_nested(self._pages.cdp, q.max_nodes))
        return StateResult.failure("unsupported", f"browser sandboxes do not answer {q.kind!r} queries; "
                                                  f"they answer {', '.join(QUERY_KINDS)}")
