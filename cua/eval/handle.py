"""The one interface runners drive a sandbox through, local or remote.

`cua.client.RemoteSandbox` (over the websocket) and `cua.eval.local.LocalSandbox` (in
process) both satisfy it, so an episode runs the same way wherever the sandbox lives.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, runtime_checkable

from cua.actions import Action
from cua.observation import Observation, ObserveOptions, Screenshot, Size
from cua.info import SnapshotRef
from cua.state import StateQuery, StateResult

__all__ = ["SandboxHandle", "StreamingHandle"]


@runtime_checkable
class SandboxHandle(Protocol):
    @property
    def id(self) -> str: ...

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation: ...

    async def act(self, action: Action, *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation: ...

    async def observe(self, options: ObserveOptions | None = None) -> Observation: ...

    async def query(self, queries: Sequence[StateQuery]) -> list[StateResult]: ...

    async def snapshot(self) -> SnapshotRef: ...

    async def restore(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> Observation: ...

    async def close(self) -> None: ...


@runtime_checkable
class StreamingHandle(Protocol):
    """A handle whose screen can be watched as it changes (live views of demonstrations)."""

    def stream(self, options: ObserveOptions | None = None, *, max_fps: float = 10.0) -> AsyncIterator[Screenshot]: ...
