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
freed when its last reference goes; only cyclic garbage frozen with the rest outlives a
collection. A change of population (a sandbox created, forked or closed: a close leaves its
sandbox's objects as cyclic garbage) schedules one refresh, at most once per `interval_s`:
unfreeze everything, one full collection, freeze the survivors. That full collection is the
policy's only cost, once per burst of lifecycle changes, never per step.
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
    """Freezes the server's long-lived objects; refreshes the frozen set after lifecycle changes."""

    def __init__(self, metrics: Metrics, *, interval_s: float = 2.0) -> None:
        self.metrics = metrics
        self.interval_s = interval_s
        self._pending: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """The server has started: freeze what it is made of."""
        self.refresh()

    def changed(self) -> None:
        """A sandbox came or went: refresh the frozen set soon (once for a burst of changes)."""
        if self._pending is None:
            self._pending = asyncio.get_running_loop().call_later(self.interval_s, self._scheduled)

    def _scheduled(self) -> None:
        self._pending = None
        self.refresh()

    def refresh(self) -> None:
        """Unfreeze, collect the cyclic garbage of everything, freeze the survivors."""
        started = time.perf_counter()
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.metrics.heap_refreshes += 1
        self.metrics.heap_refresh_ms = round((time.perf_counter() - started) * 1000, 2)
        log.debug("heap refreshed in %.1f ms; %d objects frozen", self.metrics.heap_refresh_ms, gc.get_freeze_count())

    def stop(self) -> None:
        """The server is stopping: no refresh after it, and nothing left frozen."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        gc.unfreeze()
