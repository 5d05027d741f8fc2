"""Group rollouts: k continuations of one live episode, forked from one snapshot.

GRPO-style training compares the k rollouts of a group against each other, so they must
start from the same state. k resets of the same seed do not promise that (a page's
timers, an app's clock, a randomised layout); k forks of one snapshot do: every fork
starts with the parent's app databases, cookies, storage, page, form fields and scroll.
The forks are requested at once (over one connection they are pipelined, and the
server starts them in parallel).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from cua.episode.episode import Episode
from cua.episode.handle import SandboxHandle
from cua.errors import Unsupported
from cua.info import SnapshotRef
from cua.observation import ObserveOptions
from cua.trajectory import TrajectoryWriter

__all__ = ["ForkableHandle", "fork_episode", "fork_handles"]


@runtime_checkable
class ForkableHandle(Protocol):
    """A handle that can start an independent copy of its sandbox from a snapshot
    (`cua.client.RemoteSandbox`, `cua.episode.local.LocalSandbox`)."""

    async def fork(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> SandboxHandle: ...


async def fork_handles(handle: SandboxHandle, k: int, *, observe: ObserveOptions | None = None
                       ) -> tuple[SnapshotRef, list[SandboxHandle]]:
    """k forks of `handle`'s current state from one snapshot, started in parallel.

    All or nothing: if one fork fails, the others are closed and the first error raised.
    The snapshot is deleted once the forks stand (they do not need it), and returned for
    the record.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not isinstance(handle, ForkableHandle):
        raise Unsupported(f"{type(handle).__name__} cannot fork", details={"handle": type(handle).__name__})
    ref = await handle.snapshot()
    try:
        started = await asyncio.gather(*(handle.fork(ref, observe=observe) for _ in range(k)), return_exceptions=True)
    finally:
        await handle.delete_snapshot(ref)
    children = [c for c in started if not isinstance(c, BaseException)]
    failures = [c for c in started if isinstance(c, BaseException)]
    if failures:
        await asyncio.gather(*(c.close() for c in children), return_exceptions=True)
        raise failures[0]
    return ref, children


async def fork_episode(episode: Episode, k: int, *,
                       writers: Sequence[TrajectoryWriter | None] | None = None) -> list[Episode]:
    """k continuations of a live `episode` (see `Episode.fork`), each on its own fork of the
    sandbox; `writers[i]` (optional) receives the i-th one's trajectory. Close the forks'
    handles (`child.handle.close()`) when done with them."""
    if writers is not None and len(writers) != k:
        raise ValueError(f"{len(writers)} writers for {k} forks")
    ref, handles = await fork_handles(episode.handle, k, observe=episode.observe)
    snapshot = ref.model_dump(mode="json")
    return [episode.fork(h, h.observation, writer=writers[i] if writers else None, start_snapshot=snapshot)
            for i, h in enumerate(handles)]
