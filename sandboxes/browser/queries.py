"""Answers to state queries that read the page (dom, url, title, storage, cookies, a11y)."""

from __future__ import annotations

from typing import Any

from playwright.async_api import BrowserContext, Frame, Page
from playwright.async_api import Error as PlaywrightError

from cua.sandboxes.browser.pwerrors import target_closed
from cua.state import CookiesQuery, DomQuery, LocalStorageQuery, StateResult

__all__ = ["dom_query", "local_storage_query", "cookies_query"]

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


async def dom_query(page: Page, q: DomQuery) -> StateResult:
    if q.prop == "attr" and not q.attr:
        return StateResult.failure("failed", "prop 'attr' needs the attribute name in `attr`")
    try:
        frame, offset = await _frame_of(page, q.frame)
        if frame is None:
            return StateResult.failure("not_found", f"no iframe matches {q.frame!r}")
        engine = "xpath" if q.selector_type == "xpath" else "css"
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
