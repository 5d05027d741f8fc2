"""In-process sandbox handles: the same interface as the remote client, with no server.

Used by `cua tasks check` (judge QA wants speed and no ports) and by users who embed
sandboxes in their own process. Capabilities a kind lacks raise `Unsupported`, as the
server would answer.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel

from cua.actions import Action
from cua.errors import Unsupported
from cua.observation import Observation, ObserveOptions, Screenshot, Size
from cua.sandbox import Queryable, Sandbox, Snapshottable, SnapshotRef, Streamable, create_sandbox
from cua.state import StateQuery, StateResult

__all__ = ["LocalSandbox", "open_local"]


class LocalSandbox:
    """Wraps a `cua.sandbox.Sandbox` in the `SandboxHandle` interface."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    @property
    def id(self) -> str:
        return self.sandbox.id

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation:
        return await self.sandbox.reset(seed=seed, options=options, observe=observe)

    async def act(self, action: Action, *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation:
        return await self.sandbox.act(action, frame=frame, observe=observe)

    async def observe(self, options: ObserveOptions | None = None) -> Observation:
        return await self.sandbox.observe(options)

    async def query(self, queries: Sequence[StateQuery]) -> list[StateResult]:
        if not isinstance(self.sandbox, Queryable):
            return [StateResult.failure("unsupported", f"{self.sandbox.kind} sandboxes answer no queries")
                    for _ in queries]
        return await self.sandbox.query(queries)

    def _snapshottable(self) -> Snapshottable:
        if not isinstance(self.sandbox, Snapshottable):
            raise Unsupported(f"{self.sandbox.kind} sandboxes cannot snapshot")
        return self.sandbox

    async def snapshot(self) -> SnapshotRef:
        return await self._snapshottable().snapshot()

    async def restore(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> Observation:
        return await self._snapshottable().restore(ref, observe=observe)

    def stream(self, options: ObserveOptions | None = None, *, max_fps: float = 10.0) -> AsyncIterator[Screenshot]:
        if not isinstance(self.sandbox, Streamable):
            raise Unsupported(f"{self.sandbox.kind} sandboxes cannot stream")
        return self.sandbox.frames(options or ObserveOptions(), max_fps=max_fps)

    async def close(self) -> None:
        await self.sandbox.close()


@asynccontextmanager
async def open_local(kind: str, config: dict[str, Any] | BaseModel | None = None,
                     *, sandbox_id: str | None = None) -> AsyncIterator[LocalSandbox]:
    """Create a sandbox in this process; it is closed when the block exits."""
    sandbox = await create_sandbox(kind, config, sandbox_id=sandbox_id or f"local-{uuid.uuid4().hex[:8]}")
    try:
        yield LocalSandbox(sandbox)
    finally:
        await sandbox.close()
