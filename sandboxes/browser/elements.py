"""Stable ids for a page's interactive elements, for agents that ground by id (set-of-marks,
accessibility ids, BrowserGym's `bid`s).

Why ids are kept here and not written into the DOM: stamping attributes (as BrowserGym
does) mutates the page, which the settle detector counts as page work and which changes
what the page's own scripts see. Chromium's backend node ids already name a node for its
document's lifetime, so the map is backend id -> our id, grown as elements appear: an
element keeps its id across steps, and a new one gets the next number.

A snapshot keeps the ids in document order with each element's role and name; the first
tree read after a restore (a new document, new backend ids) gives the same elements the
same ids by matching that sequence, so an id an agent saw before a snapshot still names
the same element after a restore or in a fork.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Error as PlaywrightError

from cua.errors import ActionFailed
from cua.sandboxes.browser.cdp import Cdp
from cua.sandboxes.browser.pwerrors import TargetClosedError

__all__ = ["INTERACTIVE_ROLES", "ElementIds", "element_centre"]

INTERACTIVE_ROLES = frozenset({
    "button", "link", "checkbox", "radio", "textbox", "searchbox", "combobox", "listbox", "option",
    "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch", "slider", "spinbutton", "treeitem",
    "textField", "TextField", "PopUpButton", "ToggleButton", "columnheader", "gridcell",
})
_DOCUMENT_ROLES = frozenset({"RootWebArea", "WebArea", "Iframe", "IframePresentational"})
#: How far ahead a restore's matching looks for the next saved element (elements that did not
#: come back, e.g. a toast that expired, are skipped).
_LOOKAHEAD = 8


def _interactive(node: dict[str, Any]) -> bool:
    if node.get("ignored") or node.get("backendDOMNodeId") is None:
        return False
    role = (node.get("role") or {}).get("value", "")
    if role in INTERACTIVE_ROLES:
        return True
    if role in _DOCUMENT_ROLES:  # focusable, but it is the page, not a control on it
        return False
    return any(p.get("name") == "focusable" and (p.get("value") or {}).get("value") is True
               for p in node.get("properties", ()))


def _signature(node: dict[str, Any]) -> tuple[str, str]:
    return ((node.get("role") or {}).get("value", ""), str((node.get("name") or {}).get("value", ""))[:200])


class ElementIds:
    """The id map of one sandbox's page."""

    def __init__(self) -> None:
        self._by_backend: dict[int, str] = {}
        self._backend: dict[str, int] = {}
        self._next = 1
        #: The order of the last tree read: (id, role, name), what a snapshot keeps.
        self._order: list[tuple[str, str, str]] = []
        #: A restored order waiting for the first tree of the restored document.
        self._pending: list[tuple[str, str, str]] | None = None

    def clear(self) -> None:
        """Forget every id: a reset numbers elements afresh, as a new episode sees them."""
        self._by_backend.clear()
        self._backend.clear()
        self._next = 1
        self._order = []
        self._pending = None

    def assign(self, nodes: list[dict[str, Any]]) -> dict[int, str]:
        """Ids for the interactive nodes of a CDP accessibility tree (document order)."""
        pending, self._pending = self._pending, None
        cursor = 0
        order: list[tuple[str, str, str]] = []
        for node in nodes:
            if not _interactive(node):
                continue
            backend = int(node["backendDOMNodeId"])
            role, name = _signature(node)
            eid = self._by_backend.get(backend)
            if eid is None and pending is not None:
                for j in range(cursor, min(cursor + _LOOKAHEAD, len(pending))):
                    if pending[j][1:] == (role, name):
                        eid, cursor = pending[j][0], j + 1
                        break
            if eid is None:
                eid = f"e{self._next}"
                self._next += 1
            self._by_backend[backend] = eid
            self._backend[eid] = backend
            order.append((eid, role, name))
        self._order = order
        return {backend: eid for backend, eid in self._by_backend.items()}

    def backend_of(self, eid: str) -> int:
        backend = self._backend.get(eid)
        if backend is None:
            raise ActionFailed(f"no element {eid!r} on this page; ids come from an observation with element_ids",
                               reason="unknown_element", details={"element": eid})
        return backend

    def export(self) -> dict[str, Any]:
        return {"order": [list(item) for item in self._order], "next": self._next}

    def load(self, saved: dict[str, Any]) -> None:
        """Take a snapshot's ids: the next tree read maps its elements onto them."""
        self._by_backend.clear()
        self._backend.clear()
        order = [(str(e), str(r), str(n)) for e, r, n in saved.get("order", ())]
        self._pending = order or None
        self._order = order
        self._next = int(saved.get("next", 1))


async def element_centre(cdp: Cdp, backend: int, eid: str) -> tuple[float, float]:
    """The element's centre in viewport pixels, after scrolling it into view if needed."""
    try:
        await cdp.send("DOM.scrollIntoViewIfNeeded", {"backendNodeId": backend})
        quads = (await cdp.send("DOM.getContentQuads", {"backendNodeId": backend}))["quads"]
    except TargetClosedError:
        raise  # the page or browser went away: the sandbox's guard reports it as infrastructure
    except PlaywrightError as exc:  # CDP refused the node: gone from the document, or never there
        raise ActionFailed(f"element {eid!r} is no longer on the page", reason="unknown_element",
                           details={"element": eid}) from exc
    if not quads:
        raise ActionFailed(f"element {eid!r} has no box on screen (hidden?)", reason="element_hidden",
                           details={"element": eid})
    quad = quads[0]
    xs, ys = quad[0::2], quad[1::2]
    return sum(xs) / 4, sum(ys) / 4
