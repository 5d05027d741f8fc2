"""What the agent sees, read over CDP: screenshot, accessibility tree, focused element."""

from __future__ import annotations

import asyncio
import base64
import io
from typing import Any

from playwright.async_api import Page

from cua.observation import ObserveOptions, Screenshot, Size
from cua.sandboxes.browser.cdp import Cdp
from cua.sandboxes.browser.elements import ElementIds

__all__ = ["capture_screenshot", "accessibility_tree", "accessibility_tree_nested", "focused_element", "resize_image"]


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


_SKIP_ROLES = {"none", "generic", "InlineTextBox", "LineBreak", "presentation"}


async def _ax_nodes(cdp: Cdp, with_bbox: bool) -> tuple[list[dict[str, Any]], dict[int, dict[str, float]]]:
    calls = [cdp.send("Accessibility.getFullAXTree")]
    if with_bbox:
        calls.append(cdp.send("DOMSnapshot.captureSnapshot", {"computedStyles": []}))
    results = await asyncio.gather(*calls, return_exceptions=True)  # each failure retrieved, the first raised
    for result in results:
        if isinstance(result, BaseException):
            raise result
    tree, *snaps = results
    boxes: dict[int, dict[str, float]] = {}
    for snap in snaps:
        if snap["documents"]:
            doc = snap["documents"][0]
            backend = doc["nodes"]["backendNodeId"]
            sx, sy = doc.get("scrollOffsetX", 0), doc.get("scrollOffsetY", 0)
            for idx, (x, y, w, h) in zip(doc["layout"]["nodeIndex"], doc["layout"]["bounds"], strict=True):
                boxes[backend[idx]] = {"x": round(x - sx, 1), "y": round(y - sy, 1), "width": round(w, 1),
                                       "height": round(h, 1)}
    return tree["nodes"], boxes


_STATES = ("focused", "checked", "selected", "expanded", "disabled", "pressed", "required", "invalid", "readonly")


def _compact(node: dict[str, Any], boxes: dict[int, dict[str, float]], states: bool,
             ids: dict[int, str] | None = None) -> dict[str, Any] | None:
    """{id?, role, name, value?, bbox?, states?} for a node worth showing, else None."""
    if node.get("ignored"):
        return None
    role = (node.get("role") or {}).get("value", "")
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
    box = boxes.get(node.get("backendDOMNodeId", -1))
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
    nodes, boxes = await _ax_nodes(cdp, with_bbox)
    ids = element_ids.assign(nodes) if element_ids is not None else None
    out: list[dict[str, Any]] = []
    for node in nodes:
        item = _compact(node, boxes, states=True, ids=ids)
        if item is not None:
            out.append(item)
            if len(out) >= max_nodes:
                break
    return out


async def accessibility_tree_nested(cdp: Cdp, max_nodes: int = 5000) -> dict[str, Any]:
    """The same tree nested ({..., states?, children?}), as the `a11y` state query returns it.
    Dropped nodes hand their children to their nearest kept ancestor."""
    nodes, boxes = await _ax_nodes(cdp, True)
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
