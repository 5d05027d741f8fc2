"""Kept sources: sandboxes held open after their episode so its snapshots can be branched from.

A trajectory's snapshot refs are good only while the sandbox that took them lives
(`cua.branch.snapshots`). A driver that wants branches later (the rollout service, for a
request's `snapshots`) keeps that sandbox here under the trajectory's id instead of closing
it; it is closed when the time to live runs out (counted from the last branch taken from
it), when `close(trajectory_id)` says its branches are done, or at `aclose` (the driver's
shutdown), its snapshots deleted first. Nothing is kept without a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from cua.branch.snapshots import StepSnapshots
from cua.episode.handle import SandboxHandle
from cua.errors import CuaError

__all__ = ["KeptSource", "KeptSources"]

log = logging.getLogger(__name__)


@dataclass
class KeptSource:
    trajectory_id: str
    handle: SandboxHandle
    snapshots: StepSnapshots
    timer: asyncio.TimerHandle | None = None


class KeptSources:
    """Sandboxes kept for branching, by trajectory id, each closed after `ttl_s` unused."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._kept: dict[str, KeptSource] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._kept)

    def keep(self, trajectory_id: str, handle: SandboxHandle, snapshots: StepSnapshots) -> None:
        source = KeptSource(trajectory_id, handle, snapshots)
        self._kept[trajectory_id] = source
        self._arm(source)

    def get(self, trajectory_id: str) -> KeptSource | None:
        """The kept source of a trajectory (its time to live starts again), or None."""
        source = self._kept.get(trajectory_id)
        if source is not None:
            self._arm(source)
        return source

    def _arm(self, source: KeptSource) -> None:
        if source.timer is not None:
            source.timer.cancel()
        loop = asyncio.get_running_loop()
        source.timer = loop.call_later(self.ttl_s, self._expire, source.trajectory_id)

    def _expire(self, trajectory_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self.close(trajectory_id), name=f"close-source-{trajectory_id}")
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close(self, trajectory_id: str) -> None:
        """The trajectory's branches are done: delete its snapshots and close its sandbox."""
        source = self._kept.pop(trajectory_id, None)
        if source is None:
            return
        if source.timer is not None:
            source.timer.cancel()
        try:
            await source.snapshots.release(source.handle)
            await source.handle.close()
        except CuaError as exc:  # a source that died meanwhile has nothing left to close
            log.info("closing the kept source of %s: %s", trajectory_id, exc.message)

    async def aclose(self) -> None:
        for task in list(self._closing):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await asyncio.gather(*(self.close(t) for t in list(self._kept)), return_exceptions=True)
