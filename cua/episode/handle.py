"""The one interface everything drives a sandbox through, local or remote.

`cua.client.RemoteSandbox` (over the websocket) and `cua.episode.local.LocalSandbox` (in
process) both satisfy `SandboxHandle` and behave the same, so an episode runs the same way
wherever the sandbox lives (tests/episode/test_handle_conformance.py holds both, and the blocking
facade `cua.sync_api.Sandbox`, to that):

- a list of actions is performed in order and observed once at the end
  (`cua.sandbox.perform_actions`, the rule the server applies too);
- a capability the sandbox lacks (queries, snapshots, streams) raises `Unsupported`;
  a query kind a queryable sandbox does not answer is a `StateResult` failure;
- `on_event` callbacks get the sandbox's own events (`died`, `navigated`, `closed`...) as
  `cua.info.SandboxEvent`; `refresh()` returns the current `SandboxInfo`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, runtime_checkable

from cua.actions import Action
from cua.info import SandboxEvent, SandboxInfo, SnapshotRef
from cua.observation import Observation, ObserveOptions, Screenshot, Size
from cua.state import StateQuery, StateResult

__all__ = ["ActQueryHandle", "EventCallback", "ResetQueryHandle", "SandboxHandle", "SandboxOpener", "StreamingHandle"]

EventCallback = Callable[[SandboxEvent], None]


@runtime_checkable
class SandboxHandle(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def info(self) -> SandboxInfo:
        """What the host knows about the sandbox (kind, screen, capabilities, queries)."""
        ...

    @property
    def observation(self) -> Observation:
        """The latest observation this handle returned."""
        ...

    @property
    def alive(self) -> bool: ...

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation: ...

    async def act(self, action: Action | Sequence[Action], *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation: ...

    async def observe(self, options: ObserveOptions | None = None) -> Observation: ...

    async def query(self, queries: Sequence[StateQuery]) -> list[StateResult]: ...

    async def snapshot(self) -> SnapshotRef: ...

    async def restore(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> Observation: ...

    async def delete_snapshot(self, ref: SnapshotRef) -> None: ...

    async def refresh(self) -> SandboxInfo: ...

    def on_event(self, callback: EventCallback) -> None: ...

    async def close(self) -> None: ...


@runtime_checkable
class ActQueryHandle(Protocol):
    """A handle that performs an action and answers state queries about its result in one
    exchange (`RemoteSandbox.act_query`: one round trip; `LocalSandbox.act_query`), so an
    episode's dense progress after a step costs no second request."""

    async def act_query(self, action: Action | Sequence[Action], queries: Sequence[StateQuery], *,
                        frame: Size | None = None, observe: ObserveOptions | None = None
                        ) -> tuple[Observation, list[StateResult]]: ...


@runtime_checkable
class ResetQueryHandle(Protocol):
    """A handle that resets and answers state queries about the reset state in one exchange
    (`RemoteSandbox.reset_query`: one round trip; `LocalSandbox.reset_query`), so an episode's
    initial reads come with its first observation."""

    async def reset_query(self, queries: Sequence[StateQuery], *, seed: int | None = None,
                          options: dict[str, Any] | None = None, observe: ObserveOptions | None = None
                          ) -> tuple[Observation, list[StateResult]]: ...


@runtime_checkable
class StreamingHandle(Protocol):
    """A handle whose screen can be watched as it changes (live views of demonstrations)."""

    def stream(self, options: ObserveOptions | None = None, *, max_fps: float = 10.0) -> AsyncIterator[Screenshot]: ...


#: Opens a sandbox for (kind, config) and closes it on exit: in process or over a client.
SandboxOpener = Callable[[str, dict[str, Any]], AbstractAsyncContextManager[SandboxHandle]]
