"""A sandbox handle that forwards every call to the handle it wraps.

Handles that change one thing about a sandbox (snapshot before each act: `SnapshottingHandle`;
keep the state a stream's earlier task left instead of resetting: `cua.eval.stream`) subclass
it and override only that. The optional abilities a wrapper may not have (fork, stream) are
left to each subclass: a wrapper answers `isinstance(h, ForkableHandle)` truthfully only if
it says so itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cua.actions import Action
from cua.episode.handle import ActQueryHandle, EventCallback, ResetQueryHandle, SandboxHandle
from cua.info import SandboxInfo, SnapshotRef
from cua.observation import Observation, ObserveOptions, Size
from cua.state import StateQuery, StateResult

__all__ = ["ForwardingHandle"]


class ForwardingHandle:
    """Every `SandboxHandle` call, and `reset_query` and `act_query`, sent to `inner`."""

    def __init__(self, inner: SandboxHandle) -> None:
        self.inner = inner

    @property
    def id(self) -> str:
        return self.inner.id

    @property
    def info(self) -> SandboxInfo:
        return self.inner.info

    @property
    def observation(self) -> Observation:
        return self.inner.observation

    @property
    def alive(self) -> bool:
        return self.inner.alive

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation:
        return await self.inner.reset(seed=seed, options=options, observe=observe)

    async def reset_query(self, queries: Sequence[StateQuery], *, seed: int | None = None,
                          options: dict[str, Any] | None = None, observe: ObserveOptions | None = None
                          ) -> tuple[Observation, list[StateResult]]:
        if isinstance(self.inner, ResetQueryHandle):
            return await self.inner.reset_query(queries, seed=seed, options=options, observe=observe)
        obs = await self.inner.reset(seed=seed, options=options, observe=observe)
        return obs, await self.inner.query(queries)

    async def act(self, action: Action | Sequence[Action], *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation:
        return await self.inner.act(action, frame=frame, observe=observe)

    async def act_query(self, action: Action | Sequence[Action], queries: Sequence[StateQuery], *,
                        frame: Size | None = None, observe: ObserveOptions | None = None
                        ) -> tuple[Observation, list[StateResult]]:
        if isinstance(self.inner, ActQueryHandle):
            return await self.inner.act_query(action, queries, frame=frame, observe=observe)
        obs = await self.inner.act(action, frame=frame, observe=observe)
        return obs, await self.inner.query(queries)

    async def observe(self, options: ObserveOptions | None = None) -> Observation:
        return await self.inner.observe(options)

    async def query(self, queries: Sequence[StateQuery]) -> list[StateResult]:
        return await self.inner.query(queries)

    async def snapshot(self) -> SnapshotRef:
        return await self.inner.snapshot()

    async def restore(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> Observation:
        return await self.inner.restore(ref, observe=observe)

    async def delete_snapshot(self, ref: SnapshotRef) -> None:
        await self.inner.delete_snapshot(ref)

    async def refresh(self) -> SandboxInfo:
        return await self.inner.refresh()

    def on_event(self, callback: EventCallback) -> None:
        self.inner.on_event(callback)

    async def close(self) -> None:
        await self.inner.close()
