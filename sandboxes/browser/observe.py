"""What the agent sees: screenshot, accessibility tree, focused element, read over CDP.

The readers are plain functions of a CDP session or a page. `Observer` is the sandbox's
side of `observe`: it reads what the options ask for side by side, after the page the
agent now has (a popup, a replaced page) is switched to and settled; it reuses the
accessibility tree while the page's content is unchanged, and the last capture while the
screen is (an action that changed nothing: the settle's screen version says so, see
content_version.py; `timings_ms["screenshot_reused_from_step"]` names the capture's
step). It hands out an observation taken when the sandbox was made (a fork's restore, a
warm spare's start) instead of a second capture of the same screen.
"""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from cua.errors import InternalError, Timeout
from cua.observation import ActionError, Observation, ObserveOptions, Screenshot, SettleInfo, Size
from cua.sandboxes.browser.cdp import Cdp
from cua.sandboxes.browser.elements import ElementIds
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.pages import Pages
from cua.sandboxes.browser.settle import navigation_race

__all__ = ["CONTENT_VERSION_JS", "Observer", "accessibility_tree", "accessibility_tree_cdp", "accessibility_tree_nested",
           "capture_screenshot", "focused_element", "ms_since", "resize_image"]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: The page's content version (settle.py's init script, content_version.py): DOM, form values, focus,
#: scroll, viewport, hover.
CONTENT_VERSION_JS = "() => window.__cuaSettle ? window.__cuaSettle.version : null"


def resize_image(data: bytes, fmt: str, quality: int, frame: Size) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        small = img.convert("RGB").resize((frame.width, frame.height), Image.Resampling.BILINEAR)
    out = io.BytesIO()
    small.save(out, format={"jpeg": "JPEG", "png": "PNG", "webp": "WEBP"}[fmt],
               **({} if fmt == "png" else {"quality": quality}))
    return out.getvalue()


async def capture_screenshot(cdp: Cdp, options: ObserveOptions, screen: Size) -> Screenshot:
    """`Page.captureScreenshot` of the viewport, downscaled to `options.frame` when given.

    When the frame keeps the viewport's aspect ratio the compositor scales it (a clip
    with `scale`), which is cheaper than decoding and resizing here.
    """
    params: dict[str, Any] = {"format": options.format, "optimizeForSpeed": True}
    if options.format != "png":
        params["quality"] = options.quality
    frame = options.frame or screen
    same_aspect = frame.width * screen.height == frame.height * screen.width
    if frame != screen and same_aspect:
        params["clip"] = {"x": 0, "y": 0, "width": screen.width, "height": screen.height,
                          "scale": frame.width / screen.width}
    result = await cdp.send("Page.captureScreenshot", params)
    data = base64.b64decode(result["data"])
    if frame != screen and not same_aspect:
        # decoding and re-encoding a big capture takes tens of milliseconds: off the event
        # loop, so that other sandboxes' requests (and /v1/health) are not held behind it
        data = await asyncio.to_thread(resize_image, data, options.format, options.quality, frame)
    return Screenshot(format=options.format, width=frame.width, height=frame.height, data=data)


#: Structure that is shown only when it has a name.
_SKIP_ROLES = {"none", "generic", "presentation"}
#: Layout, never content: an InlineTextBox repeats its StaticText's text, one per line box,
#: and a LineBreak (a `<br>`) is named "\n". Chromium's tree has one of the first under
#: every text, so keeping them named every text on a page twice.
_LAYOUT_ROLES = {"InlineTextBox", "LineBreak"}


class _Boxes:
    """Layout boxes by backend node id, in viewport pixels, from one DOM snapshot; a box's
    dict is made only for the nodes the tree keeps (a page has many more layout objects)."""

    def __init__(self, snap: dict[str, Any] | None) -> None:
        self._bounds: dict[int, list[float]] = {}
        self._sx = self._sy = 0.0
        if snap and snap["documents"]:
            doc = snap["documents"][0]
            backend = doc["nodes"]["backendNodeId"]
            self._sx, self._sy = doc.get("scrollOffsetX", 0), doc.get("scrollOffsetY", 0)
            self._bounds = {backend[idx]: bounds
                            for idx, bounds in zip(doc["layout"]["nodeIndex"], doc["layout"]["bounds"], strict=True)}

    def get(self, backend: int) -> dict[str, float] | None:
        bounds = self._bounds.get(backend)
        if bounds is None:
            return None
        x, y, w, h = bounds
        return {"x": round(x - self._sx, 1), "y": round(y - self._sy, 1), "width": round(w, 1), "height": round(h, 1)}


async def _ax_nodes(cdp: Cdp, with_bbox: bool, *, rects: bool = False
                    ) -> tuple[list[dict[str, Any]], _Boxes, dict[str, Any] | None]:
    """The tree's nodes, the layout boxes, and the DOM snapshot they came from (`rects`: with
    the DOM rects and paint order that BrowserGym's snapshot carries)."""
    calls = [cdp.send("Accessibility.getFullAXTree")]
    if with_bbox or rects:
        params: dict[str, Any] = {"computedStyles": []}
        if rects:
            params.update(includeDOMRects=True, includePaintOrder=True)
        calls.append(cdp.send("DOMSnapshot.captureSnapshot", params))
    results = await asyncio.gather(*calls, return_exceptions=True)  # each failure retrieved, the first raised
    answers: list[dict[str, Any]] = []
    for result in results:
        if isinstance(result, BaseException):
            raise result
        answers.append(result)
    tree, *snaps = answers
    snap = snaps[0] if snaps else None
    return tree["nodes"], _Boxes(snap), snap


def _document_order(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The nodes in document order: depth first from each root, children in order. CDP lists
    them breadth first (a page's top bar after the cards below it); a node no walk reaches
    keeps its place after them."""
    by_id = {n["nodeId"]: n for n in nodes}
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    stack = [n["nodeId"] for n in reversed(nodes) if not n.get("parentId")]
    while stack:
        node_id = stack.pop()
        node = by_id.get(node_id)
        if node is None or node_id in seen:
            continue
        seen.add(node_id)
        out.append(node)
        stack.extend(reversed(node.get("childIds", ())))
    out.extend(n for n in nodes if n["nodeId"] not in seen)
    return out


_STATES = ("focused", "checked", "selected", "expanded", "disabled", "pressed", "required", "invalid", "readonly")


def _compact(node: dict[str, Any], boxes: _Boxes, states: bool,
             ids: dict[int, str] | None = None) -> dict[str, Any] | None:
    """{id?, role, name, value?, bbox?, states?} for a node worth showing, else None."""
    if node.get("ignored"):
        return None
    role = (node.get("role") or {}).get("value", "")
    if role in _LAYOUT_ROLES:
        return None
    name = (node.get("name") or {}).get("value", "")
    if (role in _SKIP_ROLES and not name) or (role == "StaticText" and not name.strip()):
        return None
    item: dict[str, Any] = {"role": role, "name": name}
    if ids is not None:
        eid = ids.get(node.get("backendDOMNodeId", -1))
        if eid is not None:
            item = {"id": eid, **item}
    value = (node.get("value") or {}).get("value")
    if value not in (None, ""):
        item["value"] = value
    box = boxes.get(node.get("backendDOMNodeId", -1)) if states else None  # not for a mere "is it kept?"
    if box is not None and box["width"] > 0 and box["height"] > 0:
        item["bbox"] = box
    if states:
        on = [p["name"] for p in node.get("properties", ())
              if p.get("name") in _STATES and (p.get("value") or {}).get("value") not in (False, "false", None)]
        if on:
            item["states"] = on
    return item


async def accessibility_tree(cdp: Cdp, max_nodes: int = 5000, *, with_bbox: bool = True,
                             element_ids: ElementIds | None = None) -> list[dict[str, Any]]:
    """The CDP accessibility tree, compacted to a flat list in document order:
    [{id?, role, name, value?, bbox?, states?}], ignored and empty structural nodes dropped.

    Boxes come from one `DOMSnapshot.captureSnapshot` (layout of every node at once),
    in viewport pixels. `states` lists what is on (checked, expanded, selected, disabled,
    focused, ...), so a ticked checkbox differs from an unticked one. With `element_ids`,
    interactive nodes carry their stable id (`ElementIds`).
    """
    nodes, boxes, _ = await _ax_nodes(cdp, with_bbox)
    ids = element_ids.assign(nodes) if element_ids is not None else None
    return _compact_list(nodes, boxes, ids, max_nodes)


def _compact_list(nodes: list[dict[str, Any]], boxes: _Boxes, ids: dict[int, str] | None,
                  max_nodes: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for node in _document_order(nodes):
        item = _compact(node, boxes, states=True, ids=ids)
        if item is not None:
            out.append(item)
            if len(out) >= max_nodes:
                break
    return out


async def accessibility_tree_cdp(cdp: Cdp, max_nodes: int = 5000, *, element_ids: ElementIds | None = None
                                 ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """`accessibility_tree`, and the CDP answers it was made from (`Observation.cdp`): the
    full tree's nodes (in document order, the root first), the DOM snapshot (with DOM rects
    and paint order), and the element ids by backend node id (string keys, as JSON carries them)."""
    nodes, boxes, snap = await _ax_nodes(cdp, True, rects=True)
    ids = element_ids.assign(nodes) if element_ids is not None else None
    raw = {"dom_snapshot": snap, "axtree_nodes": _document_order(nodes),
           "element_ids": {str(backend): eid for backend, eid in (ids or {}).items()}}
    return _compact_list(nodes, boxes, ids, max_nodes), raw


async def accessibility_tree_nested(cdp: Cdp, max_nodes: int = 5000) -> dict[str, Any]:
    """The same tree nested ({..., states?, children?}), as the `a11y` state query returns it.
    Dropped nodes hand their children to their nearest kept ancestor."""
    nodes, boxes, _ = await _ax_nodes(cdp, True)
    by_id = {n["nodeId"]: n for n in nodes}
    count = 0
    truncated = False

    def build(node_id: str) -> list[dict[str, Any]]:
        nonlocal count, truncated
        node = by_id.get(node_id)
        if node is None:
            return []
        kids: list[dict[str, Any]] = []
        item = None
        if count < max_nodes:
            item = _compact(node, boxes, states=True)
            if item is not None:
                count += 1
        elif _compact(node, boxes, states=False) is not None:
            truncated = True
            return []
        for child in node.get("childIds", ()):
            kids.extend(build(child))
        if item is None:
            return kids
        if kids:
            item["children"] = kids
        return [item]

    roots = [n["nodeId"] for n in nodes if not n.get("parentId")]
    children = [c for r in roots for c in build(r)]
    top = children[0] if len(children) == 1 else {"role": "document", "name": "", "children": children}
    return {**top, "nodes": count, "truncated": truncated}


_FOCUSED = r"""
() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const r = el.getBoundingClientRect();
  return {
    tag: el.tagName.toLowerCase(), id: el.id || null, name: el.getAttribute("name"),
    role: el.getAttribute("role"), type: el.getAttribute("type"),
    value: "value" in el ? String(el.value) : (el.isContentEditable ? el.innerText : null),
    bbox: { x: r.x, y: r.y, width: r.width, height: r.height },
  };
}
"""


async def focused_element(page: Page) -> dict[str, Any] | None:
    result: dict[str, Any] | None = await page.evaluate(_FOCUSED)
    return result


def ms_since(started: float) -> float:
    """Milliseconds since `started` (a `time.perf_counter()` reading), as timings report them."""
    return round((time.perf_counter() - started) * 1000, 2)


#: What the accessibility tree of a quiet settle reflects: page activity, loads, content
#: version, URL, whether it carried element ids, and whether the CDP answers were kept.
_AxKey = tuple[int, int, int, str, bool, bool]
#: A tree read: the compact tree, and the CDP answers when asked for (`ObserveOptions.cdp`).
_AxRead = tuple[list[dict[str, Any]], dict[str, Any] | None]
#: What a capture of a quiet settle shows: page activity, loads, screen version, URL,
#: viewport, and the capture's format, quality and frame.
_ShotKey = tuple[int, int, str, str, Size, str, int, Size | None]


class Observer:
    """Observations of the sandbox's page."""

    def __init__(self, guard: Guard, pages: Pages, elements: ElementIds, screen: Size, *,
                 reuse_unchanged: bool = True) -> None:
        self._guard = guard
        self._pages = pages
        self._elements = elements
        self.screen = screen
        #: The frame of the last observation: the agent's coordinates refer to it by default.
        self.frame = screen
        self.last_active = time.time()
        self._axtree: tuple[_AxKey, _AxRead] | None = None
        #: Send the last capture again while the screen is unchanged (False where the
        #: browser draws scrollbars, whose hover look no page event reports).
        self.reuse_unchanged = reuse_unchanged
        #: The last capture, with the screen it shows and the step it was taken at.
        self._shot: tuple[_ShotKey, Screenshot, int] | None = None
        #: A fork's restore observation, with the page's load count then.
        self._forked: tuple[Observation, int] | None = None
        #: A warm spare's observation, with the page's load count and content version then.
        self._warm: tuple[Observation, int, int | None] | None = None

    def keep_forked(self, obs: Observation) -> None:
        """Keep a fork's restore observation: the host's first observe of the new sandbox gets it."""
        assert self._pages.activity is not None
        self._forked = (obs, self._pages.activity.loads)

    async def keep_warm(self, obs: Observation) -> None:
        """Keep a warm spare's observation: the first observe after the create that takes the
        spare gets it, if the page has not changed since (one evaluate instead of a capture)."""
        assert self._pages.activity is not None
        version = await self._guard.call(self._pages.page.evaluate(CONTENT_VERSION_JS), "content version")
        self._warm = (obs, self._pages.activity.loads, version)

    def renamed(self, sandbox_id: str) -> None:
        """The sandbox was taken under a new id: a kept observation carries it."""
        if self._warm is not None:
            obs, loads, version = self._warm
            self._warm = (obs.model_copy(update={"sandbox_id": sandbox_id}), loads, version)

    def forget_kept(self) -> None:
        """The screen is about to change (an action, a reset, a restore): kept observations are stale."""
        self._forked = self._warm = None

    async def kept(self, options: ObserveOptions | None) -> Observation | None:
        """A kept observation, once, while the page has not changed since it was taken."""
        forked, self._forked = self._forked, None
        warm, self._warm = self._warm, None
        activity = self._pages.activity
        if options is not None or activity is None:
            return None
        if forked is not None and activity.loads == forked[1]:
            return forked[0]
        if warm is not None and activity.loads == warm[1] and await self._guard.call(
                self._pages.page.evaluate(CONTENT_VERSION_JS), "content version") == warm[2]:
            return warm[0]  # a warm spare's screen, unchanged since it was taken (no load, same DOM)
        return None

    async def observe(self, options: ObserveOptions | None, timings: dict[str, float], *, step: int,
                      settle: SettleInfo | None = None, error: ActionError | None = None) -> Observation:
        opts = options or ObserveOptions()
        started = time.perf_counter()
        pages = self._pages
        if await pages.switch():  # a popup opened or the page closed: show the page the agent now has
            await pages.settle()
        page, cdp, activity = pages.page, pages.cdp, pages.activity
        assert cdp is not None
        shot_key = self._screen_key(settle, opts)
        reused = self._shot if shot_key is not None and self._shot is not None and self._shot[0] == shot_key else None
        shot_read: _Read[Screenshot] | None = None
        if reused is not None:
            shot_read = partial(_ready, reused[1])
            timings["screenshot_reused_from_step"] = reused[2]
        elif opts.screenshot:
            shot_read = partial(self._screenshot, opts)
        title_read: _Read[str] = (lambda: self._guard.call(page.title(), "title")) \
            if settle is None or not settle.settled or activity is None or activity.settled_title is None \
            else partial(_ready, activity.settled_title)
        ax_key = self._axtree_key(settle, opts.element_ids, opts.cdp)
        cached = self._axtree[1] if ax_key is not None and self._axtree and self._axtree[0] == ax_key else None
        ax_read: _Read[_AxRead] | None = None
        if opts.axtree or opts.element_ids or opts.cdp:
            ids = self._elements if opts.element_ids else None
            ax_read = partial(_ready, cached) if cached is not None else \
                (lambda: self._guard.call(_tree(cdp, ids, opts.cdp), "axtree"))
        focus_read: _Read[dict[str, Any] | None] | None = \
            (lambda: self._guard.call(focused_element(page), "focused")) if opts.focused else None
        try:
            shot, title, tree, focused = await asyncio.gather(
                _read(shot_read), _read(title_read), _read(ax_read), _read(focus_read))
        except PlaywrightError as exc:
            if not navigation_race(exc):
                raise
            # The page navigated while we read it: settle on the new document and read again.
            await pages.settle()
            return await self.observe(options, timings, step=step, settle=settle, error=error)
        if shot is not None and reused is None:
            # kept only if no settle ran inside the capture (its retry), so the key is the capture's
            self._shot = (shot_key, shot, step) if shot_key is not None \
                and shot_key == self._screen_key(settle, opts) else None
        if tree is not None and cached is None:
            self._axtree = (ax_key, tree) if ax_key is not None else None
        axtree = tree[0] if tree is not None and (opts.axtree or opts.element_ids) else None
        raw = tree[1] if tree is not None else None
        self.frame = opts.frame or self.screen
        timings["observe"] = ms_since(started)
        self.last_active = time.time()
        return Observation(sandbox_id=self._guard.sandbox_id, frame=self.frame, screen=self.screen, screenshot=shot,
                           url=page.url, title=title, axtree=axtree, focused=focused, cdp=raw, settle=settle, error=error,
                           timings_ms=timings, step=step)

    def _axtree_key(self, settle: SettleInfo | None, element_ids: bool, cdp: bool) -> _AxKey | None:
        """Identifies the page content the accessibility tree reflects, when a quiet settle
        just read it: same document, same loads, same content version, same URL."""
        activity = self._pages.activity
        if settle is None or not settle.settled or activity is None or activity.version is None:
            return None
        return (id(activity), activity.loads, activity.version, self._pages.page.url, element_ids, cdp)

    def _screen_key(self, settle: SettleInfo | None, opts: ObserveOptions) -> _ShotKey | None:
        """Identifies the screen a capture shows, when a quiet settle just found it unable to
        change without an event (content_version.py): same document, loads, screen version,
        URL, viewport, and the same capture options."""
        activity = self._pages.activity
        if not self.reuse_unchanged or not opts.screenshot or settle is None or not settle.settled \
                or activity is None or activity.screen is None:
            return None
        return (id(activity), activity.loads, activity.screen, self._pages.page.url, self.screen,
                opts.format, opts.quality, opts.frame)

    async def _screenshot(self, opts: ObserveOptions) -> Screenshot:
        """A capture requested while a document is being replaced can go unanswered; such a
        capture is bounded tighter than other calls and taken again once the page settles."""
        cdp = self._pages.cdp
        assert cdp is not None
        sandbox_id = self._guard.sandbox_id
        first_try = min(self._guard.call_timeout_s, 10.0)
        try:
            return await self._guard.call(capture_screenshot(cdp, opts, self.screen), "screenshot", timeout=first_try)
        except Timeout:
            log.warning("screenshot of %s unanswered after %g s; settling and retrying", sandbox_id, first_try)
        except PlaywrightError as exc:  # "Unable to capture screenshot": the surface was being replaced
            log.warning("screenshot of %s failed (%s); settling and retrying", sandbox_id, str(exc).splitlines()[0])
        await self._pages.settle()
        cdp = self._pages.cdp  # the settle may have switched to a popup
        assert cdp is not None
        try:
            return await self._guard.call(capture_screenshot(cdp, opts, self.screen), "screenshot")
        except PlaywrightError as exc:
            raise InternalError(f"browser sandbox {sandbox_id}: screenshot failed twice: {str(exc).splitlines()[0]}",
                                details={"sandbox": sandbox_id}) from exc


async def _ready(value: T) -> T:
    return value


async def _tree(cdp: Cdp, ids: ElementIds | None, with_cdp: bool) -> _AxRead:
    if with_cdp:
        return await accessibility_tree_cdp(cdp, element_ids=ids)
    return await accessibility_tree(cdp, element_ids=ids), None


#: One of the reads an observation makes side by side, not yet started.
_Read = Callable[[], Awaitable[T]]


async def _read(read: _Read[T] | None) -> T | None:
    """Starts the read only once this task runs: an observation cancelled before its reads
    begin (a client's `cancel`) leaves no coroutine that was made and never awaited."""
    return None if read is None else await read()
