"""The server's long-lived objects, kept out of CPython's cycle collector's way.

Why: nearly all of a server's heap lives as long as the server or a sandbox does (modules,
each sandbox's Playwright objects and state), and CPython 3.11's collector walks all of it
in each full collection. Bursts of allocation start those: decoding one accessibility tree
of a 40-row page (340 KB of JSON, some 25,000 dicts and lists) took 8.3 ms in a server
holding one sandbox, 2.4 ms with the long-lived objects frozen (`gc.freeze`) and 2.3 ms with
the collector off. Every changed page a sandbox observes pays it, so the collector was about
a third of the server's CPU per step.

So the objects alive once the server and its sandboxes have started are frozen, out of the
collector's sight (freezing and unfreezing are O(1) list splices). A frozen object is still
freed when its last reference goes; only cyclic garbage frozen with the rest waits for the
next refresh: unfreeze everything, one full collection, freeze the survivors. That full
collection is the policy's cost (about 35 ms for a heap of 150,000 objects, more on a busy
machine), so it runs only
- soon after sandboxes close (a close leaves its sandbox's objects as cyclic garbage), once
  for a burst of closes;
- every `period_s`, for the garbage of what a sandbox drops while it lives (a recycled
  browser context, say).
A created or forked sandbox only has its objects frozen: a collection of the young
generations (a few milliseconds), then a freeze.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

from cua.server.metrics import Metrics

__all__ = ["HeapKeeper"]

log = logging.getLogger(__name__)


class HeapKeeper:
    """Freezes the server's long-lived objects, and refreshes the frozen set (see above)."""

    def __init__(self, metrics: Metrics, *, interval_s: float = 2.0, period_s: float = 300.0) -> None:
        self.metrics = metrics
        #: How long after a create or close its freeze or refresh runs (one for a burst).
        self.interval_s = interval_s
        #: The longest time between refreshes.
        self.period_s = period_s
        self._freeze: asyncio.TimerHandle | None = None
        self._refresh: asyncio.TimerHandle | None = None
        self._periodic: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """The server has started: freeze what it is made of."""
        self.refresh()

    def grown(self) -> None:
        """A sandbox was created or forked: freeze its objects soon."""
        if self._freeze is None and self._refresh is None:
            self._freeze = asyncio.get_running_loop().call_later(self.interval_s, self._freeze_young)

    def shrunk(self) -> None:
        """A sandbox closed: refresh soon, so that its objects are collected."""
        if self._refresh is None:
            self._refresh = asyncio.get_running_loop().call_later(self.interval_s, self.refresh)

    def _freeze_young(self) -> None:
        self._freeze = None
        gc.collect(1)
        gc.freeze()

    def refresh(self) -> None:
        """Unfreeze, collect the cyclic garbage of everything, freeze the survivors."""
        self.cancel()
        started = time.perf_counter()
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.metrics.heap_refreshes += 1
        self.metrics.heap_refresh_ms = round((time.perf_counter() - started) * 1000, 2)
        log.debug("heap refreshed in %.1f ms; %d objects frozen", self.metrics.heap_refresh_ms, gc.get_freeze_count())
        self._periodic = asyncio.get_running_loop().call_later(self.period_s, self.refresh)

    def cancel(self) -> None:
        """Drop the freezes and refreshes scheduled."""
        for handle in (self._freeze, self._refresh, self._periodic):
            if handle is not None:
                handle.cancel()
        self._freeze = self._refresh = self._periodic = None

    def stop(self) -> None:
        """The server is stopping: no refresh after it, and nothing left frozen."""
        self.cancel()
        gc.unfreeze()
