"""Settle detection: decide, quickly, that the page has stopped changing after an action.

Three signals, all event-driven:
- navigation: an init script listens to the Navigation API's `navigate` event (link
  clicks, form submissions, location changes) and the host counts `load` events;
- network: in-flight requests counted from Playwright's request events;
- DOM: a MutationObserver (invisible to the page) stamps the time of the last mutation,
  and the timers the page set say whether more work is about to run.

When nothing happened, the check is one `evaluate` round trip that answers at once,
so an idle click costs a millisecond or two of settling, not a fixed sleep.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Request

from cua.observation import SettleInfo
from cua.sandboxes.browser.content_version import VERSION_WATCH_JS

__all__ = ["INIT_SCRIPT", "PageActivity", "navigation_race"]

#: Connections that stay open by design; they never count as network activity.
_STREAMING = frozenset({"websocket", "eventsource"})

INIT_SCRIPT = r"""
(() => {
  if (window.__cuaSettle) return;
  // navigating: a cross-document navigation began (Navigation API `navigate` event).
  // pendingAt: a form submission was asked for; Chromium starts that navigation in a later
  // task, so without this an immediate check would see a quiet page that is about to go.
  const s = { last: performance.now(), navigating: false, pendingAt: null, submit: null, version: 0 };
  Object.defineProperty(window, "__cuaSettle", { value: s, enumerable: false });
  const stamp = () => { s.last = performance.now(); s.version++; };
  // version: bumped by anything that can change what the accessibility tree shows (DOM,
  // form values, focus, scroll offsets, viewport, hover), so an unchanged version lets the
  // host reuse it.
  const bump = () => { s.version++; };
""" + VERSION_WATCH_JS + r"""  new MutationObserver(stamp).observe(document,
      { subtree: true, childList: true, attributes: true, characterData: true });
  window.addEventListener("submit", (e) => { s.submit = e; s.pendingAt = performance.now(); }, true);
  const submit = HTMLFormElement.prototype.submit;
  HTMLFormElement.prototype.submit = function () { s.submit = null; s.pendingAt = performance.now(); return submit.call(this); };
  // popupAt: the page asked for a new window (window.open, a link to another target);
  // the host then waits for the new page to appear and shows it.
  s.popupAt = null; s.popupClick = null;
  const open = window.open;
  window.open = function (...args) { s.popupClick = null; s.popupAt = performance.now(); return open.apply(this, args); };
  document.addEventListener("click", (e) => {
    const a = e.composedPath().find((n) => n instanceof HTMLAnchorElement && n.href);
    if (!a) return;
    const target = (a.target || "").toLowerCase();
    if ((target && !["_self", "_top", "_parent"].includes(target)) || e.ctrlKey || e.metaKey || e.shiftKey) {
      s.popupClick = e; s.popupAt = performance.now();
    }
  }, true);
  // In-flight fetch/XHR (and fetched bodies being read) counted in the page too: the host
  // learns of a request through another channel than this check's answer, and may hear of
  // it only after the answer.
  s.fetches = new Set();
  const track = () => { const t = { at: performance.now() }; s.fetches.add(t); return () => { s.fetches.delete(t); stamp(); }; };
  if (window.fetch) {
    const fetch = window.fetch;
    window.fetch = function (...args) {
      const done = track();
      let p;
      try { p = fetch.apply(this, args); } catch (e) { done(); throw e; }
      p.then(done, done);
      return p;
    };
  }
  // Reading a response's body is part of the request: a page that fetches, reads the body,
  // then renders and fetches again is never idle in between.
  for (const method of ["arrayBuffer", "blob", "bytes", "formData", "json", "text"]) {
    const read = Response.prototype[method];
    if (!read) continue;
    Response.prototype[method] = function (...args) {
      const done = track();
      let p;
      try { p = read.apply(this, args); } catch (e) { done(); throw e; }
      p.then(done, done);
      return p;
    };
  }
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    const done = track();
    this.addEventListener("loadend", done, { once: true });
    try { return send.apply(this, args); } catch (e) { done(); throw e; }
  };
  if (window.navigation) {
    window.navigation.addEventListener("navigate", (e) => {
      s.pendingAt = null;
      if (!(e.destination && e.destination.sameDocument) && !e.downloadRequest) s.navigating = true;
    });
    window.navigation.addEventListener("navigateerror", () => { s.navigating = false; stamp(); });
  }
  // Timers the page set (setTimeout, setInterval), with when they are due: a page that
  // changed and scheduled no more work is settled at once, without the quiet window; one
  // with a timer about to fire waits for it. The check uses the originals (s.setTimeout).
  s.timers = new Map();
  const setT = window.setTimeout, clearT = window.clearTimeout, setI = window.setInterval, clearI = window.clearInterval;
  s.setTimeout = setT;
  const due = (delay) => performance.now() + (Number(delay) > 0 ? Number(delay) : 0);
  window.setTimeout = function (fn, delay, ...args) {
    if (typeof fn !== "function") return setT(fn, delay, ...args);
    let id = 0;
    const run = function (...a) { s.timers.delete(id); return fn.apply(this, a); };
    id = setT(run, delay, ...args);
    s.timers.set(id, { due: due(delay), every: 0 });
    return id;
  };
  window.setInterval = function (fn, delay, ...args) {
    const id = setI(fn, delay, ...args);
    const every = Math.max(Number(delay) || 0, 4);
    s.timers.set(id, { due: due(every), every });
    return id;
  };
  window.clearTimeout = function (id) { s.timers.delete(id); return clearT(id); };
  window.clearInterval = function (id) { s.timers.delete(id); return clearI(id); };
  // The parser's own insertions are over once the document has loaded; only later changes
  // (scripts rendering after load) count against the quiet window.
  window.addEventListener("load", () => { s.last = -Infinity; });
  window.addEventListener("pageshow", () => { s.navigating = false; });
})();
"""

# Resolves once no fetch/XHR younger than `longRequest` ms is in flight and the DOM is quiet,
# or at `budget`. Quiet means one of:
# - nothing changed during the last task turn and no timer is due within `quiet` ms (nor an
#   interval ticks that often): the page did its work and scheduled no more, as after most
#   in-page actions (a click that re-renders synchronously settles in one turn, not `quiet` ms);
# - otherwise, no mutation for `quiet` ms (work the page drives by other means: animation
#   frames, message channels, workers), and no one-shot timer about to fire that has not
#   been waited for once already (an action's delayed effect on a page that was still).
_QUIET_CHECK = r"""
([quiet, budget, longRequest]) => new Promise((resolve) => {
  const s = window.__cuaSettle;
  if (!s) { resolve({ quiet: true, navigating: false, noscript: true, title: document.title }); return; }
  const later = s.setTimeout || setTimeout;
  const t0 = performance.now();
  let popup = false;
  let turn = t0;  // when the previous check ran: a mutation after it means work still going on
  let busyTurns = 0;
  let heldForTimer = false;
  // When the next timer within `quiet` ms is due (-1: an interval ticks that often; Infinity: none).
  const nextDue = (now) => {
    if (!s.timers) return -1;
    let next = Infinity;
    for (const [id, t] of s.timers) {
      if (t.every) { if (t.every <= quiet) return -1; continue; }
      if (now - t.due > 1000) { s.timers.delete(id); continue; }  // cleared by means not seen here
      if (t.due <= now + quiet) next = Math.min(next, t.due);
    }
    return next;
  };
  const check = () => {
    const now = performance.now();
    if (s.popupAt !== null && now - s.popupAt < 2000 && !(s.popupClick && s.popupClick.defaultPrevented)) popup = true;
    s.popupAt = null;
    const pending = s.pendingAt !== null && now - s.pendingAt < 2000 && !(s.submit && s.submit.defaultPrevented);
    if (s.navigating || pending) { resolve({ quiet: false, navigating: true, popup }); return; }
    const since = now - s.last;
    let fetching = false;
    for (const f of s.fetches) if (now - f.at < longRequest) fetching = true;
    if (fetching && now - t0 < budget) { turn = now; later(check, 5); return; }
    const due = nextDue(now);
    const changed = s.last > turn;
    // A one-shot timer about to fire may be the action's delayed effect, even on a page that
    // has been still for longer than `quiet`: wait for it once (a page that keeps re-arming
    // one is not waited on again, so a poll loop costs one timer's wait, not the budget).
    const holdForTimer = !heldForTimer && due >= 0 && due !== Infinity;
    if (!fetching && !holdForTimer && (since >= quiet || (!changed && due === Infinity))) {
      resolve({ quiet: true, navigating: false, popup, title: document.title, version: s.version,
                screen: s.screen ? s.screen() : null });
      return;
    }
    if (holdForTimer) heldForTimer = true;
    if (now - t0 >= budget) { resolve({ quiet: false, navigating: false, popup }); return; }
    busyTurns = changed ? busyTurns + 1 : 0;
    turn = now;
    let wait;
    if (due >= 0 && due !== Infinity) wait = Math.max(1, due - now + 1);  // a timer is about to fire
    else if (changed && busyTurns <= 1) wait = 1;                          // one more turn: has it stopped?
    else wait = quiet - since + 1;                                         // busy by other means
    later(check, Math.max(0, Math.min(wait, budget - (now - t0)) ));
  };
  // One message-channel hop and one task turn first: work the action queued for "right
  // after" (zero-delay timers, scheduled form submissions, posted messages) runs, and its
  // mutations count. rAF-driven rendering needs no wait: the screenshot's frame runs
  // animation callbacks before it paints.
  const channel = new MessageChannel();
  channel.port1.onmessage = () => { channel.port1.close(); later(check, 0); };
  channel.port2.postMessage(0);
})
"""


def navigation_race(exc: PlaywrightError) -> bool:
    """Whether a failed page call failed because the page navigated under it.

    The one failure read from its text: Playwright raises a plain `Error` for it, with no
    type of its own. Misreading it costs one extra settle and re-read, never a verdict.
    """
    text = str(exc)
    return "Execution context was destroyed" in text or "navigat" in text.lower()


@dataclass
class PageActivity:
    """Network and load bookkeeping for one page, fed by Playwright events."""

    page: Page
    #: Requests in flight -> when they started (monotonic seconds).
    inflight: dict[Request, float] = field(default_factory=dict)
    loads: int = 0
    #: A request older than this no longer holds the page unsettled: long polls, beacons
    #: and streaming responses would otherwise make every action wait the full timeout.
    long_request_s: float = 2.0
    #: The page asked for a new window during the last settle; the sandbox waits for it.
    popup_requested: bool = False
    #: document.title as read by the check that found the page settled (saves a round trip).
    settled_title: str | None = None
    #: The page's content version at the last quiet check (None when the settle was not
    #: quiet): equal versions of one document mean an unchanged accessibility tree.
    version: int | None = None
    #: The page's screen version at the last quiet check (None when the settle was not
    #: quiet, or the screen may change without an event): equal screen versions of one
    #: document mean an unchanged screen (content_version.py).
    screen: str | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def attach(self) -> None:
        self.page.on("request", self._on_request)
        self.page.on("requestfinished", self._on_done)
        self.page.on("requestfailed", self._on_done)
        self.page.on("load", self._on_load)

    def _on_request(self, request: Request) -> None:
        if request.resource_type in _STREAMING:
            return
        self.inflight[request] = time.monotonic()
        self._changed.set()

    def _on_done(self, request: Request) -> None:
        self.inflight.pop(request, None)
        self._changed.set()

    def busy(self) -> int:
        """Requests in flight that still count (started less than `long_request_s` ago)."""
        cutoff = time.monotonic() - self.long_request_s
        return sum(1 for started in self.inflight.values() if started > cutoff)

    def _on_load(self, _page: Page) -> None:
        self.loads += 1
        self.inflight.clear()  # a new document: requests of the old one no longer matter
        self._changed.set()

    async def _until(self, predicate: Callable[[], bool], deadline: float) -> bool:
        """Wait for `predicate` on each network/load event, up to `deadline`. Also wakes when
        the oldest counted request turns long-lived, since that changes `busy()` without an event."""
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            counted = [t for t in self.inflight.values() if t > time.monotonic() - self.long_request_s]
            wake = min(remaining, (min(counted) + self.long_request_s - time.monotonic()) if counted else remaining)
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), max(wake, 0.001))
            except asyncio.TimeoutError:
                continue
        return True

    async def settle(self, *, timeout_ms: int, quiet_ms: int) -> SettleInfo:
        """Wait until navigation, network and DOM are quiet, or the timeout passes."""
        started = time.monotonic()
        deadline = started + timeout_ms / 1000
        self.settled_title = None
        self.version = None
        self.screen = None
        reasons: list[str] = []
        while True:
            if not await self._until(lambda: not self.busy(), deadline):
                return self._info(False, started, f"network busy ({self.busy()} requests)")
            budget = max(0.0, (deadline - time.monotonic()) * 1000)
            seen = self.loads  # before the check, so a load racing its answer is not missed
            try:
                result = await asyncio.wait_for(
                    self.page.evaluate(_QUIET_CHECK, [quiet_ms, budget, self.long_request_s * 1000]), budget / 1000 + 5)
            except PlaywrightError:
                # The document went away under the check: a navigation. Wait for its load.
                result = {"quiet": False, "navigating": True}
            except asyncio.TimeoutError:
                return self._info(False, started, "page unresponsive")
            if result.get("popup"):
                self.popup_requested = True
            if result.get("navigating"):
                reasons.append("navigation")
                if not await self._until(lambda: self.loads > seen, deadline):  # awaited before `seen` changes
                    return self._info(False, started, "navigation not finished")
                continue
            if not result.get("quiet"):
                return self._info(False, started, "dom still changing")
            if self.busy():  # a request started while we checked the DOM
                continue
            reasons.append("quiet")
            self.settled_title = result.get("title")
            self.version = result.get("version")
            self.screen = result.get("screen")
            return self._info(True, started, "+".join(dict.fromkeys(reasons)))

    @staticmethod
    def _info(settled: bool, started: float, reason: str) -> SettleInfo:
        return SettleInfo(settled=settled, waited_ms=round((time.monotonic() - started) * 1000, 2), reason=reason)
