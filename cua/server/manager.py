"""The sandbox manager: every sandbox the server holds, their limits and lifetimes.

- Capacity: at most `max_sandboxes` open or starting (a slot is reserved before the
  slow start, so concurrent creates cannot overshoot); beyond that `capacity`.
- Serialization: each sandbox has a FIFO lock; requests to one sandbox run one at a
  time in arrival order, requests to different sandboxes run concurrently.
- Ownership: a sandbox belongs to the connection that created it, and to that
  connection's principal (see `cua.server.auth`). It is closed when that connection
  goes away, unless created with `keep=True`; then it lives until `close`, idle reaping
  or server shutdown, and only connections of the same principal may drive it. Anyone
  else gets `unknown_sandbox`, exactly as for an id that never existed: no one learns
  another principal's ids. Viewers (scope `view`) watch their principal's sandboxes;
  admins list every sandbox and close any. Events go to every connection that created
  or used the sandbox.
- Snapshots: ids map to the sandbox that took them. A snapshot lives as long as that
  sandbox (or until `delete_snapshot`); it can be restored into that sandbox and into
  other sandboxes of the same kind that share its store (its forks).
- Crashes: a dead sandbox answers `sandbox_crashed` and a `died` event is sent once;
  it stays listed (status "crashed") until closed, so the client sees what happened.
- Idle reaping: a background task closes sandboxes unused for `idle_timeout` seconds
  (not while busy or streaming) and sends a `closed` event with reason "idle".
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from cua.errors import (
    BadRequest,
    Capacity,
    CuaError,
    SandboxCrashed,
    UnknownSandbox,
    UnknownSnapshot,
)
from cua.info import EventName
from cua.observation import Size
from cua.sandbox import (
    Forkable,
    Sandbox,
    SandboxEvent,
    SandboxInfo,
    SnapshotRef,
    Snapshottable,
    close_pools,
    create_sandbox,
    unsupported,
)
from cua.server.auth import OPERATOR, Grant
from cua.server.metrics import Metrics

__all__ = ["Access", "Caller", "ConnectionSink", "Managed", "PopulationWatcher", "SandboxManager"]

log = logging.getLogger("cua.server")

#: Where a connection receives the events of the sandboxes it subscribed to (a sandbox's
#: own, and the manager's `died` and `closed`), each naming its sandbox.
ConnectionSink = Callable[[SandboxEvent], None]


class PopulationWatcher(Protocol):
    """Told when the server's sandboxes come and go (heap.py's `HeapKeeper` is one)."""

    def grown(self) -> None:
        """A sandbox was created or forked."""

    def shrunk(self) -> None:
        """A sandbox closed."""


class _Unwatched:
    """No one is told (a manager without a heap policy)."""

    def grown(self) -> None:
        return

    def shrunk(self) -> None:
        return


#: What a request does with a sandbox: `drive` it (act, reset, snapshot...), `view` it
#: (observe, stream, query, list) or `close` it.
Access = Literal["drive", "view", "close"]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who makes a request: the connection and the grant its token resolved to."""

    conn_id: str
    grant: Grant = OPERATOR


@dataclass(eq=False)
class Managed:
    id: str
    kind: str
    keep: bool
    #: The connection that created it.
    owner: str
    #: The principal of that connection: the only one who may reattach a kept sandbox.
    principal: str = OPERATOR.principal
    sandbox: Sandbox | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    subscribers: set[str] = field(default_factory=set)
    last_active: float = field(default_factory=time.monotonic)
    busy: int = 0
    #: The tasks sending its live frames (to whichever connection asked): an idle sandbox
    #: is not reaped while one runs, and closing it stops them first.
    streams: set[asyncio.Task[None]] = field(default_factory=set)
    crashed: bool = False
    #: Why it died, as its `died` event said (a cgroup limit, a lost process).
    death: str | None = None
    closed: bool = False
    snapshots: dict[str, SnapshotRef] = field(default_factory=dict)
    #: The frame of the latest observation sent to a driver of this sandbox (a viewer's
    #: never moves it): the frame every action's coordinates refer to unless its request
    #: names another. The sandbox's own last frame is never used: any observer moves that.
    last_frame: Size | None = None

    def require(self) -> Sandbox:
        if self.sandbox is None:
            raise UnknownSandbox(f"sandbox {self.id} is still starting", details={"sandbox_id": self.id})
        return self.sandbox

    def drivable_by(self, caller: Caller) -> bool:
        return self.owner == caller.conn_id or (self.keep and self.principal == caller.grant.principal)

    def allows(self, caller: Caller, access: Access) -> bool:
        grant = caller.grant
        if access == "view":
            return (self.drivable_by(caller) or grant.has("admin")
                    or (grant.has("view") and self.principal == grant.principal))
        if grant.has("drive") and self.drivable_by(caller):
            return True
        return access == "close" and grant.has("admin")

    def info(self) -> SandboxInfo:
        sandbox = self.require()
        info = sandbox.info()
        if self.crashed and info.status != "crashed":
            info = info.model_copy(update={"status": "crashed"})
        return info


class SandboxManager:
    def __init__(self, *, max_sandboxes: int = 16, idle_timeout: float | None = 900.0,
                 metrics: Metrics | None = None, clock: Callable[[], float] = time.monotonic,
                 population: PopulationWatcher | None = None) -> None:
        if max_sandboxes < 1:
            raise ValueError("max_sandboxes must be at least 1")
        self.max_sandboxes = max_sandboxes
        self.idle_timeout = idle_timeout
        self.metrics = metrics or Metrics()
        self._clock = clock
        #: Told when a sandbox was created, forked or closed (the server's heap policy).
        self._population: PopulationWatcher = population or _Unwatched()
        self._sandboxes: dict[str, Managed] = {}
        self._snapshots: dict[str, Managed] = {}
        self._sinks: dict[str, ConnectionSink] = {}
        self._reaper: asyncio.Task[None] | None = None
        self._closing = False

    # --- lifecycle of the manager ---

    def start(self) -> None:
        if self.idle_timeout is not None and self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever(), name="cua-reaper")

    async def shutdown(self) -> None:
        self._closing = True
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        await asyncio.gather(*(self._close(m, reason="shutdown") for m in list(self._sandboxes.values())),
                             return_exceptions=True)
        await close_pools()

    def now(self) -> float:
        """The manager's clock (idle times are measured on it)."""
        return self._clock()

    @property
    def live(self) -> int:
        return sum(1 for m in self._sandboxes.values() if m.sandbox is not None)

    # --- connections ---

    def connect(self, conn_id: str, sink: ConnectionSink) -> None:
        self._sinks[conn_id] = sink

    async def disconnect(self, conn_id: str) -> None:
        """Forget a connection; close the sandboxes it owns unless they were kept."""
        self._sinks.pop(conn_id, None)
        doomed = []
        for managed in list(self._sandboxes.values()):
            managed.subscribers.discard(conn_id)
            if managed.owner == conn_id and not managed.keep:
                doomed.append(managed)
        results = await asyncio.gather(*(self._close(m, reason="disconnected") for m in doomed),
                                       return_exceptions=True)
        for managed, result in zip(doomed, results):
            if isinstance(result, BaseException):
                log.warning("closing sandbox %s of a gone connection failed: %r", managed.id, result)

    # --- sandboxes ---

    def _reserve(self, kind: str, owner: str, keep: bool, principal: str) -> Managed:
        if self._closing:
            raise Capacity("the server is shutting down")
        if len(self._sandboxes) >= self.max_sandboxes:
            raise Capacity(f"the server holds its maximum of {self.max_sandboxes} sandboxes",
                           details={"max_sandboxes": self.max_sandboxes})
        managed = Managed(id=f"sb-{secrets.token_hex(6)}", kind=kind, keep=keep, owner=owner, principal=principal,
                          subscribers={owner}, last_active=self._clock())
        self._sandboxes[managed.id] = managed
        return managed

    async def _start(self, kind: str, owner: str, keep: bool, principal: str,
                     start: Callable[[Managed], Awaitable[Sandbox]]) -> Managed:
        """Reserve a slot and start its sandbox with `start` (a create or a fork); a start
        that fails, or is cancelled, gives the slot back and is counted as failed."""
        managed = self._reserve(kind, owner, keep, principal)
        try:
            managed.sandbox = await start(managed)
        except BaseException:
            self._sandboxes.pop(managed.id, None)
            self.metrics.sandboxes["create_failed"] += 1
            raise
        self.metrics.sandboxes["created"] += 1
        self._population.grown()
        return managed

    def _emitter(self, managed: Managed) -> Callable[[SandboxEvent], None]:
        def emit(event: SandboxEvent) -> None:
            if event.event == "closed" and managed.closed:
                return  # the manager announces the close itself, with its reason
            if event.event == "died":
                if managed.crashed:
                    return
                reason = event.data.get("reason")
                managed.death = str(reason) if reason else None
                self._mark_crashed(managed, announce=False)
            self._send(managed, event.event, event.data)
        return emit

    async def create(self, kind: str, config: dict[str, Any], *, owner: str, keep: bool = False,
                     principal: str = OPERATOR.principal) -> Managed:
        return await self._start(kind, owner, keep, principal, lambda managed: create_sandbox(
            kind, config, sandbox_id=managed.id, emit=self._emitter(managed)))

    async def fork(self, parent: Managed, snapshot_id: str, *, owner: str, keep: bool = False,
                   principal: str = OPERATOR.principal, caller: Caller | None = None) -> Managed:
        """Fork `parent` (whose lock the caller holds) from one of the snapshots."""
        source = parent.require()
        if not isinstance(source, Forkable):
            raise unsupported("fork", parent.kind)
        ref = self.snapshot_ref(snapshot_id, kind=parent.kind, caller=caller)
        return await self._start(parent.kind, owner, keep, principal, lambda managed: source.fork(
            ref, sandbox_id=managed.id, emit=self._emitter(managed)))

    def get(self, sandbox_id: str, caller: Caller | None = None, access: Access = "drive") -> Managed:
        """The sandbox, if `caller` may use it that way (None: the server itself). A sandbox
        the caller may not reach is reported exactly like one that does not exist."""
        managed = self._sandboxes.get(sandbox_id)
        if managed is None or managed.sandbox is None or (caller is not None and not managed.allows(caller, access)):
            raise UnknownSandbox(f"no sandbox {sandbox_id!r}", details={"sandbox_id": sandbox_id})
        if caller is not None and access != "close":
            managed.subscribers.add(caller.conn_id)
        return managed

    def list(self, caller: Caller | None = None, *, all: bool = False) -> list[SandboxInfo]:
        """What `caller` may see (None: everything): with `all`, every sandbox it may view;
        without, those among them its connection created or used."""
        out = []
        for managed in list(self._sandboxes.values()):
            if managed.sandbox is None:
                continue
            if caller is not None and (not managed.allows(caller, "view")
                                       or (not all and caller.conn_id not in managed.subscribers)):
                continue
            out.append(managed.info())
        return out

    def list_for(self, grant: Grant) -> builtins.list[SandboxInfo]:
        """Every sandbox a credential may view, whichever connection made it (REST)."""
        return [m.info() for m in list(self._sandboxes.values()) if m.sandbox is not None
                and (grant.has("admin") or (m.principal == grant.principal and (grant.has("view") or grant.has("drive"))))]

    @contextlib.asynccontextmanager
    async def use(self, managed: Managed) -> AsyncIterator[Sandbox]:
        """Hold the sandbox's lock (FIFO: arrival order) while using it; map a dead
        sandbox to `sandbox_crashed` and announce its death once."""
        managed.busy += 1
        try:
            async with managed.lock:
                if managed.closed:
                    raise UnknownSandbox(f"sandbox {managed.id} was closed", details={"sandbox_id": managed.id})
                sandbox = managed.require()
                if managed.crashed or not sandbox.alive:
                    self._mark_crashed(managed)
                    why = f" ({managed.death})" if managed.death else ""
                    raise SandboxCrashed(f"sandbox {managed.id} has crashed{why}; close it and create another",
                                         details={"sandbox_id": managed.id, "reason": managed.death or "not alive"})
                try:
                    yield sandbox
                except SandboxCrashed:
                    self._mark_crashed(managed)
                    raise
                finally:
                    managed.last_active = self._clock()
        finally:
            managed.busy -= 1

    def _mark_crashed(self, managed: Managed, *, announce: bool = True) -> None:
        if managed.crashed:
            return
        managed.crashed = True
        self.metrics.sandboxes["crashed"] += 1
        log.warning("sandbox %s (%s) crashed", managed.id, managed.kind)
        if announce:
            self._send(managed, "died", {"reason": "not alive"})

    def _send(self, managed: Managed, name: EventName, data: dict[str, Any]) -> None:
        event = SandboxEvent(sandbox_id=managed.id, event=name, data=data)
        for conn_id in list(managed.subscribers):
            sink = self._sinks.get(conn_id)
            if sink is not None:
                sink(event)

    async def close(self, managed: Managed) -> None:
        await self._close(managed, reason="requested")

    async def _close(self, managed: Managed, *, reason: str) -> None:
        if managed.closed:
            return
        for task in list(managed.streams):  # before waiting on the lock: no frame of a closing sandbox
            task.cancel()
        async with managed.lock:
            if managed.closed:
                return
            managed.closed = True
            try:
                if managed.sandbox is not None:
                    await self._forget_snapshots(managed)
                    await managed.sandbox.close()
            finally:
                self._sandboxes.pop(managed.id, None)
                self.metrics.sandboxes["closed"] += 1
                self._send(managed, "closed", {"reason": reason})
                if not self._closing:
                    self._population.shrunk()

    # --- snapshots ---

    def add_snapshot(self, managed: Managed, ref: SnapshotRef) -> None:
        managed.snapshots[ref.id] = ref
        self._snapshots[ref.id] = managed

    def _snapshot_owner(self, snapshot_id: str, caller: Caller | None) -> Managed:
        owner = self._snapshots.get(snapshot_id)
        if owner is None or (caller is not None and not owner.drivable_by(caller)):
            raise UnknownSnapshot(f"no snapshot {snapshot_id!r}", details={"snapshot_id": snapshot_id})
        return owner

    def snapshot_ref(self, snapshot_id: str, *, kind: str, caller: Caller | None = None) -> SnapshotRef:
        """A snapshot's handle, if `caller` may drive the sandbox that took it."""
        owner = self._snapshot_owner(snapshot_id, caller)
        if owner.kind != kind:
            raise BadRequest(f"snapshot {snapshot_id} is of a {owner.kind} sandbox, not {kind}",
                             details={"snapshot_id": snapshot_id})
        return owner.snapshots[snapshot_id]

    async def delete_snapshot(self, snapshot_id: str, caller: Caller | None = None) -> None:
        owner = self._snapshot_owner(snapshot_id, caller)
        async with self.use(owner) as sandbox:
            ref = owner.snapshots.pop(snapshot_id)
            self._snapshots.pop(snapshot_id, None)
            if isinstance(sandbox, Snapshottable):
                await sandbox.delete_snapshot(ref)

    async def _forget_snapshots(self, managed: Managed) -> None:
        refs = list(managed.snapshots.values())
        managed.snapshots.clear()
        for ref in refs:
            self._snapshots.pop(ref.id, None)
        sandbox = managed.sandbox
        if not refs or managed.crashed or sandbox is None or not isinstance(sandbox, Snapshottable):
            return
        for ref in refs:
            try:
                await sandbox.delete_snapshot(ref)
            except CuaError as exc:
                log.info("could not delete snapshot %s of %s: %s", ref.id, managed.id, exc)

    # --- idle reaping ---

    async def reap_idle(self) -> builtins.list[str]:
        """Close sandboxes idle longer than `idle_timeout`; returns their ids."""
        if self.idle_timeout is None:
            return []
        now = self._clock()
        idle = [m for m in list(self._sandboxes.values())
                if m.sandbox is not None and not m.busy and not m.streams
                and now - m.last_active >= self.idle_timeout]
        for managed in idle:
            log.info("reaping sandbox %s idle for %.0fs", managed.id, now - managed.last_active)
            self.metrics.sandboxes["reaped"] += 1
            try:
                await self._close(managed, reason="idle")
            except Exception:
                log.exception("closing idle sandbox %s failed", managed.id)
        return [m.id for m in idle]

    async def _reap_forever(self) -> None:
        assert self.idle_timeout is not None
        period = min(max(self.idle_timeout / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(period)  # a periodic sweep: nothing to wait on but time
            await self.reap_idle()
