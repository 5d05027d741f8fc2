"""In-process sandbox handles: the same interface and behaviour as the remote client, with no server.

Used by `cua tasks check` (judge QA wants speed and no ports), by `--local` runs, and by
users who embed sandboxes in their own process. Capabilities a kind lacks raise
`Unsupported`, as the server answers; a list of actions follows the server's rule
(`cua.sandbox.perform_actions`), reading every action in the frame the agent last saw.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel

from cua.actions import Action
from cua.episode.handle import EventCallback
from cua.info import SandboxEvent, SandboxInfo, SnapshotRef
from cua.observation import Observation, ObserveOptions, Screenshot, Size
from cua.sandbox import (
    Forkable,
    Queryable,
    Sandbox,
    ServiceImages,
    Snapshottable,
    Streamable,
    create_sandbox,
    perform_actions,
    perform_and_query,
    reset_and_query,
    unsupported,
)
from cua.state import StateQuery, StateResult

__all__ = ["LocalSandbox", "open_local"]

log = logging.getLogger(__name__)


class LocalSandbox:
    """Wraps a `cua.sandbox.Sandbox` in the `SandboxHandle` interface."""

    def __init__(self, sandbox: Sandbox, observation: Observation | None = None, *,
                 callbacks: list[EventCallback] | None = None) -> None:
        self.sandbox = sandbox
        self._observation = observation
        #: Shared with the sink the sandbox was created with (see `create`).
        self._callbacks: list[EventCallback] = callbacks if callbacks is not None else []
        self.closed = False

    @classmethod
    async def create(cls, kind: str, config: dict[str, Any] | BaseModel | None = None, *,
                     sandbox_id: str | None = None, observe: ObserveOptions | None = None) -> LocalSandbox:
        """Start a sandbox of `kind` in this process (close it with `close()`); its own events
        go to the callbacks given to `on_event`."""
        callbacks: list[EventCallback] = []
        sandbox = await create_sandbox(kind, config, sandbox_id=sandbox_id or f"local-{uuid.uuid4().hex[:8]}",
                                       emit=lambda event: _deliver(callbacks, event))
        try:
            observation = await sandbox.observe(observe)
        except BaseException:
            await sandbox.close()
            raise
        return cls(sandbox, observation, callbacks=callbacks)

    @property
    def id(self) -> str:
        return self.sandbox.id

    @property
    def info(self) -> SandboxInfo:
        return self.sandbox.info()

    @property
    def observation(self) -> Observation:
        if self._observation is None:
            raise RuntimeError("no observation yet: reset() or observe() first")
        return self._observation

    @property
    def alive(self) -> bool:
        return self.sandbox.alive

    def __repr__(self) -> str:
        return f"LocalSandbox({self.id!r}, kind={self.sandbox.kind!r}, alive={self.alive})"

    def on_event(self, callback: EventCallback) -> None:
        self._callbacks.append(callback)

    def _seen(self, obs: Observation) -> Observation:
        self._observation = obs
        return obs

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation:
        return self._seen(await self.sandbox.reset(seed=seed, options=options, observe=observe))

    async def reset_query(self, queries: Sequence[StateQuery], *, seed: int | None = None,
                          options: dict[str, Any] | None = None, observe: ObserveOptions | None = None
                          ) -> tuple[Observation, list[StateResult]]:
        """`reset`, then `queries` (as `RemoteSandbox.reset_query`, which does both in one round trip;
        a sandbox that reads them alongside its observation does, `cua.sandbox.reset_and_query`)."""
        obs, results = await reset_and_query(self.sandbox, queries, seed=seed, options=options, observe=observe)
        return self._seen(obs), results

    async def act(self, action: Action | Sequence[Action], *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation:
        """Perform one action (or several in order) and observe once at the end."""
        actions: list[Action] = list(action) if isinstance(action, Sequence) else [action]
        return self._seen(await perform_actions(self.sandbox, actions, frame=self._frame(frame), observe=observe))

    def _frame(self, frame: Size | None) -> Size | None:
        """The frame an action's coordinates refer to: the one named, else this handle's last
        observation's (never the sandbox's own, which any other observer of it moves)."""
        if frame is None and self._observation is not None:
            return self._observation.frame
        return frame

    async def act_query(self, action: Action | Sequence[Action], queries: Sequence[StateQuery], *,
                        frame: Size | None = None, observe: ObserveOptions | None = None
                        ) -> tuple[Observation, list[StateResult]]:
        """`act`, then `queries` (as `RemoteSandbox.act_query`, which does both in one round trip;
        a sandbox that reads them alongside its observation does, `cua.sandbox.perform_and_query`)."""
        actions: list[Action] = list(action) if isinstance(action, Sequence) else [action]
        obs, results = await perform_and_query(self.sandbox, actions, queries, frame=self._frame(frame),
                                               observe=observe)
        return self._seen(obs), results

    async def observe(self, options: ObserveOptions | None = None) -> Observation:
        return self._seen(await self.sandbox.observe(options))

    async def query(self, queries: Sequence[StateQuery]) -> list[StateResult]:
        if not isinstance(self.sandbox, Queryable):
            raise unsupported("answer state queries", self.sandbox.kind)
        return await self.sandbox.query(queries)

    def _snapshottable(self, what: str) -> Snapshottable:
        if not isinstance(self.sandbox, Snapshottable):
            raise unsupported(what, self.sandbox.kind)
        return self.sandbox

    async def snapshot(self) -> SnapshotRef:
        return await self._snapshottable("snapshot").snapshot()

    async def restore(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> Observation:
        return self._seen(await self._snapshottable("restore").restore(ref, observe=observe))

    async def delete_snapshot(self, ref: SnapshotRef) -> None:
        await self._snapshottable("delete snapshots").delete_snapshot(ref)

    async def put_service_image(self, service: str, image: bytes) -> None:
        """Replace a service's database (`cua.sandbox.ServiceImages`): in process only, for judge QA."""
        if not isinstance(self.sandbox, ServiceImages):
            raise unsupported("replace a service's database", self.sandbox.kind)
        await self.sandbox.put_service_image(service, image)

    async def fork(self, ref: SnapshotRef | str, *, observe: ObserveOptions | None = None) -> LocalSandbox:
        """A new, independent sandbox in this process started from one of this sandbox's
        snapshots (as `RemoteSandbox.fork`); close it with `close()`."""
        if not isinstance(self.sandbox, Forkable):
            raise unsupported("fork", self.sandbox.kind)
        snapshot = ref if isinstance(ref, SnapshotRef) else SnapshotRef(id=ref, sandbox_id=self.id, kind=self.sandbox.kind)
        callbacks: list[EventCallback] = []
        child = await self.sandbox.fork(snapshot, sandbox_id=f"local-{uuid.uuid4().hex[:8]}",
                                        emit=lambda event: _deliver(callbacks, event))
        try:
            observation = await child.observe(observe)
        except BaseException:
            await child.close()
            raise
        return LocalSandbox(child, observation, callbacks=callbacks)

    async def refresh(self) -> SandboxInfo:
        return self.sandbox.info()

    def stream(self, options: ObserveOptions | None = None, *, max_fps: float = 10.0) -> AsyncIterator[Screenshot]:
        if not isinstance(self.sandbox, Streamable):
            raise unsupported("stream", self.sandbox.kind)
        return self.sandbox.frames(options or ObserveOptions(), max_fps=max_fps)

    async def close(self) -> None:
        """Close the sandbox; closing twice does nothing."""
        if self.closed:
            return
        self.closed = True
        await self.sandbox.close()


def _deliver(callbacks: list[EventCallback], event: SandboxEvent) -> None:
    for callback in list(callbacks):
        try:
            callback(event)
        except Exception:  # one failing callback must not stop the sandbox or the others
            log.exception("sandbox event callback failed")


@asynccontextmanager
async def open_local(kind: str, config: dict[str, Any] | BaseModel | None = None,
                     *, sandbox_id: str | None = None) -> AsyncIterator[LocalSandbox]:
    """Create a sandbox in this process; it is closed when the block exits."""
    handle = await LocalSandbox.create(kind, config, sandbox_id=sandbox_id)
    try:
        yield handle
    finally:
        await handle.close()
