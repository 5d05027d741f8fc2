"""Snapshots of browser sandboxes: what a snapshot holds, where it is kept, how it is taken
and put back.

A snapshot holds the services' databases, cookies, the page's URL and web storage, its
unsubmitted form state and scroll offsets, the pointer, and the element ids. Only a
`SnapshotRef` (id and size) leaves the process; the bytes stay in one store per process,
so a snapshot taken in one sandbox restores into any other sandbox of the same process:
its forks, or a fresh sandbox with the same services.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from cua.errors import BadRequest, UnknownSnapshot
from cua.sandbox import SnapshotRef
from cua.sandboxes.browser.elements import ElementIds
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.input import Input
from cua.sandboxes.browser.navigation import Navigator, Storage
from cua.sandboxes.browser.pages import Pages, origin_of
from cua.sandboxes.browser.services import ServiceControl

__all__ = ["BrowserSnapshot", "PAGE_STATE_JS", "RESTORE_VIEW_JS", "SnapshotStore", "Snapshots", "STORE", "rebase_url"]


# --- page-side halves of snapshot and restore ---

# The page's elements in tree order, into open shadow roots: snapshot and restore must walk
# them alike, since scrolled elements are named by their place in this order.
_ELEMENTS_JS = r"""
  const elements = () => {
    const out = [];
    const walk = (root) => {
      for (const el of root.querySelectorAll("*")) {
        out.push(el);
        if (el.shadowRoot) walk(el.shadowRoot);
      }
    };
    walk(document);
    return out;
  };
"""

PAGE_STATE_JS = r"""
() => {
""" + _ELEMENTS_JS + r"""
  const out = { origin: location.origin, scroll: [window.scrollX, window.scrollY], local: {}, session: {} };
  try { out.local = { ...window.localStorage }; out.session = { ...window.sessionStorage }; } catch (e) {}
  // Form controls whose state differs from the page's markup (typed, ticked, chosen).
  const controls = Array.from(document.querySelectorAll("input, textarea, select"));
  const fields = [];
  controls.forEach((el, i) => {
    if (el.tagName === "SELECT") {
      const sel = Array.from(el.options).map((o) => o.selected);
      if (Array.from(el.options).some((o) => o.selected !== o.defaultSelected)) fields.push({ i, selected: sel });
    } else if (el.type === "checkbox" || el.type === "radio") {
      if (el.checked !== el.defaultChecked) fields.push({ i, checked: el.checked });
    } else if (el.type !== "file" && el.value !== el.defaultValue) {
      fields.push({ i, value: el.value });
    }
  });
  const active = controls.indexOf(document.activeElement);
  let selection = null;
  try { if (active >= 0) selection = [document.activeElement.selectionStart, document.activeElement.selectionEnd]; } catch (e) {}
  out.forms = { count: controls.length, fields, focus: active >= 0 ? active : null, selection };
  // Scrolled elements other than the document's own scroller (panes, lists, editors).
  const all = elements();
  const scrolled = [];
  all.forEach((el, i) => {
    if ((el.scrollTop || el.scrollLeft) && el !== document.scrollingElement) {
      scrolled.push({ i, tag: el.tagName, top: el.scrollTop, left: el.scrollLeft });
    }
  });
  out.scrollers = { count: all.length, items: scrolled };
  return out;
}
"""

# Puts unsubmitted form state back after a restore's page load, without firing events (as a
# browser's own form restoration does), so page scripts do not act on it a second time; then
# the scroll offsets, last, since setting a field's value or selection can scroll it.
RESTORE_VIEW_JS = r"""
([forms, scroll, scrollers]) => {
""" + _ELEMENTS_JS + r"""
  const restoreForms = () => {
    const controls = Array.from(document.querySelectorAll("input, textarea, select"));
    if (!forms.fields || controls.length !== forms.count) return false;  // another page: leave it as loaded
    for (const f of forms.fields) {
      const el = controls[f.i];
      if ("selected" in f) Array.from(el.options).forEach((o, k) => { o.selected = !!f.selected[k]; });
      else if ("checked" in f) el.checked = f.checked;
      else el.value = f.value;
    }
    if (forms.focus !== null) {
      const el = controls[forms.focus];
      el.focus({ preventScroll: true });
      if (forms.selection && forms.selection[0] !== null) {
        try { el.setSelectionRange(forms.selection[0], forms.selection[1]); } catch (e) {}
      }
    }
    return true;
  };
  const restored = restoreForms();
  const all = elements();
  if (scrollers && scrollers.items && all.length === scrollers.count) {
    for (const p of scrollers.items) {
      const el = all[p.i];
      if (el.tagName === p.tag) { el.scrollTop = p.top; el.scrollLeft = p.left; }
    }
  }
  window.scrollTo(scroll[0], scroll[1]);
  // Resolve once a frame with these changes has been drawn: a capture right after a page
  // load was seen to show the page as loaded, without the offsets set here. Bounded, since a
  // hidden or frozen page runs no animation frames.
  return new Promise((done) => {
    const t = setTimeout(() => done(restored), 200);
    requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(t); done(restored); }));
  });
}
"""


@dataclass
class BrowserSnapshot:
    url: str
    scroll: tuple[float, float]
    pointer: tuple[float, float]
    cookies: list[dict[str, Any]]
    #: origin -> {"local": {...}, "session": {...}} for the page's origin.
    storage: dict[str, dict[str, dict[str, str]]]
    #: service name -> database image.
    services: dict[str, bytes]
    #: service name -> the port the page used; restoring elsewhere rebases URLs onto that sandbox's ports.
    ports: dict[str, int] = field(default_factory=dict)
    #: Unsubmitted form state of the page: edited fields (by index among the page's form
    #: controls) and the focused control with its selection; see PAGE_STATE_JS.
    forms: dict[str, Any] = field(default_factory=dict)
    #: Scrolled elements besides the page itself: {"count": elements on the page, "items":
    #: [{i, tag, top, left}]}, i an element's place in tree order; restored only onto a page
    #: with as many elements (the same markup), and each only onto an element of that tag.
    scrollers: dict[str, Any] = field(default_factory=dict)
    #: The page's element ids (`ElementIds.export()`), so ids survive restore and fork.
    element_ids: dict[str, Any] = field(default_factory=dict)
    #: The episode's navigation history (history.py) and how many entries it dropped.
    history: list[dict[str, Any]] = field(default_factory=list)
    history_dropped: int = 0

    @property
    def size_bytes(self) -> int:
        storage = sum(len(k) + len(v) for origin in self.storage.values() for area in origin.values()
                      for k, v in area.items())
        return sum(len(b) for b in self.services.values()) + storage + 200 * len(self.cookies) + len(self.url)


def rebase_url(url: str, old: dict[str, int], new: dict[str, int]) -> str:
    """Point a loopback URL at a service's port in another sandbox (shared-mode ports differ)."""
    parts = urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost") or parts.port is None:
        return url
    for name, port in old.items():
        if parts.port == port and name in new:
            return urlunsplit(parts._replace(netloc=f"{parts.hostname}:{new[name]}"))
    return url


class SnapshotStore:
    def __init__(self) -> None:
        self._blobs: dict[str, BrowserSnapshot] = {}
        self._lock = threading.Lock()

    def put(self, snapshot_id: str, blob: BrowserSnapshot) -> None:
        with self._lock:
            self._blobs[snapshot_id] = blob

    def get(self, ref: SnapshotRef) -> BrowserSnapshot:
        with self._lock:
            blob = self._blobs.get(ref.id)
        if blob is None:
            raise UnknownSnapshot(f"no browser snapshot {ref.id!r} in this process", details={"snapshot": ref.id})
        return blob

    def delete(self, ref: SnapshotRef) -> None:
        with self._lock:
            self._blobs.pop(ref.id, None)

    def __len__(self) -> int:
        return len(self._blobs)


STORE = SnapshotStore()


class Snapshots:
    """Taking a sandbox's snapshot, and putting one back into it."""

    def __init__(self, guard: Guard, pages: Pages, navigator: Navigator, pointer: Input, elements: ElementIds,
                 controls: dict[str, ServiceControl], ports: dict[str, int], *, kind: str) -> None:
        self._guard = guard
        self._pages = pages
        self._navigator = navigator
        self._input = pointer
        self._elements = elements
        self._controls = controls
        self._ports = ports
        self._kind = kind

    async def take(self, *, step: int) -> SnapshotRef:
        """Snapshot the sandbox at episode step `step` into the store."""
        guard, pages = self._guard, self._pages
        assert pages.context is not None
        page = pages.page
        context = pages.context
        cookies, page_state, *images = await asyncio.gather(
            _guarded(guard, context.cookies, "cookies"),
            _guarded(guard, lambda: page.evaluate(PAGE_STATE_JS), "page storage"),
            *(_guarded(guard, c.snapshot, f"snapshot {c.name}") for c in self._controls.values()))
        origin = page_state["origin"]
        storage = {origin: {"local": page_state["local"], "session": page_state["session"]}} if origin_of(page.url) else {}
        pointer = self._input.pointer
        history, dropped = pages.history.export()
        blob = BrowserSnapshot(url=page.url, scroll=(page_state["scroll"][0], page_state["scroll"][1]),
                               pointer=(pointer.x, pointer.y), cookies=[dict(c) for c in cookies], storage=storage,
                               services=dict(zip(self._controls, images, strict=True)), ports=dict(self._ports),
                               forms=page_state.get("forms") or {}, scrollers=page_state.get("scrollers") or {},
                               element_ids=self._elements.export(), history=history, history_dropped=dropped)
        ref = SnapshotRef(id=f"bsnap-{uuid.uuid4().hex}", sandbox_id=guard.sandbox_id, kind=self._kind,
                          size_bytes=blob.size_bytes, meta={"url": page.url, "step": step,
                                                            "services": sorted(self._controls)})
        STORE.put(ref.id, blob)
        return ref

    async def restore(self, ref: SnapshotRef) -> int:
        """Put `ref`'s state back and load its page (not yet settled); the step it was taken at."""
        blob = STORE.get(ref)
        controls = self._controls
        if set(blob.services) != set(controls):
            raise BadRequest(f"snapshot {ref.id} has services {sorted(blob.services)}, this sandbox has "
                             f"{sorted(controls)}")
        storage: Storage = {origin_of(rebase_url(o + "/", blob.ports, self._ports)) or o: areas
                            for o, areas in blob.storage.items()}
        seeded = await self._navigator.prepare(
            storage, *(self._guard.call(controls[name].restore(image), f"restore {name}")
                       for name, image in blob.services.items()),
            self._restore_cookies(blob))
        after: list[Callable[[], Awaitable[Any]]] = [lambda: self._input.move_pointer(*blob.pointer)]
        if blob.forms.get("fields") or blob.forms.get("focus") is not None or blob.scroll != (0, 0) \
                or blob.scrollers.get("items"):
            after.append(lambda: self._guard.call(
                self._pages.page.evaluate(RESTORE_VIEW_JS, [blob.forms, list(blob.scroll), blob.scrollers]),
                "restore view"))
        await self._navigator.goto(rebase_url(blob.url, blob.ports, self._ports), seeded=seeded, then=after)
        self._elements.load(blob.element_ids)
        self._pages.history.load([{**e, "url": rebase_url(e["url"], blob.ports, self._ports),
                                   "redirects": [rebase_url(r, blob.ports, self._ports) for r in e["redirects"]]}
                                  for e in blob.history], blob.history_dropped)
        return int(ref.meta.get("step", 0))

    async def _restore_cookies(self, blob: BrowserSnapshot) -> None:
        await self._navigator.clear_state()
        if blob.cookies:
            assert self._pages.context is not None
            await self._guard.call(self._pages.context.add_cookies(blob.cookies), "add cookies")  # type: ignore[arg-type]


T = TypeVar("T")


async def _guarded(guard: Guard, read: Callable[[], Awaitable[T]], what: str) -> T:
    """`guard.call(read(), what)`, the browser's coroutine made only once this task runs: a
    snapshot cancelled before its reads begin (a client's `cancel`) leaves no coroutine that
    was made and never awaited."""
    return await guard.call(read(), what)
