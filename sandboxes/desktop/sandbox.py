"""`DesktopSandbox`: an X desktop with real apps in a bubblewrap container, driven through
the guest agent (the same agent a VM runs), over a unix socket.

Acting, observing, settling, queries, files and commands are `GuestSandbox`'s (shared
with the VM kind); this module is the container's lifecycle.

Lifecycle: create starts the container (the agent starts Xvfb and the window manager),
writes the configured files into $HOME, starts the apps, waits for their windows, and
keeps a copy of $HOME as the initial state. reset = back to that state (apps restarted);
snapshot = a copy of $HOME plus the command lines of the apps owning windows; restore =
kill the apps, put $HOME back, start those apps again. See README.md for exactly what a
snapshot keeps.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from cua.errors import BadRequest, CuaError, InfraError, SandboxCrashed, Timeout, UnknownSnapshot
from cua.observation import Observation, ObserveOptions
from cua.sandbox import EventSink, SnapshotRef, register_kind
from cua.sandboxes.desktop.config import APP_START_TIMEOUT, AppSpec, DesktopConfig
from cua.sandboxes.desktop.container import GUEST_GID, GUEST_HOME, GUEST_UID, DesktopContainer, own_tree
from cua.sandboxes.guest.client import GuestClient
from cua.sandboxes.guest.sandbox import GuestSandbox, Status, decode_base64_file, snapshot_step

__all__ = ["DesktopSandbox"]


@dataclass
class _Snapshot:
    ref: SnapshotRef
    home: Path
    apps: list[dict[str, Any]] = field(default_factory=list)
    #: The guest's file event log at the snapshot (put back with $HOME).
    events: dict[str, Any] | None = None


def _clear_dir(path: Path) -> None:
    """Empty a directory but keep it (it is a bind-mount point inside the container)."""
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


def _copy_tree(src: Path, dst: Path) -> None:
    """Copy a live directory tree (apps may be writing in it): entries that vanish while
    we copy are skipped, symlinks are copied as links, modes and times are kept."""
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copystat(src, dst, follow_symlinks=False)
    try:
        entries = list(os.scandir(src))
    except FileNotFoundError:
        return
    for entry in entries:
        target = dst / entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                _copy_tree(Path(entry.path), target)
            else:
                if target.is_symlink() or target.exists():
                    target.unlink()
                shutil.copy2(entry.path, target, follow_symlinks=False)
        except FileNotFoundError:
            continue  # removed while we copied (a temporary file)


def _copy_contents(src: Path, dst: Path) -> None:
    """Copy a snapshot's $HOME back into the desktop's, owned by the desktop user."""
    _copy_tree(src, dst)
    own_tree(dst)


def _tree_size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue  # removed while we counted
    return total


@register_kind
class DesktopSandbox(GuestSandbox):
    kind: ClassVar[str] = "desktop"
    config_model: ClassVar[type[BaseModel]] = DesktopConfig
    home: ClassVar[str] = GUEST_HOME

    def __init__(self, sandbox_id: str, config: DesktopConfig, container: DesktopContainer,
                 emit: EventSink | None) -> None:
        # The guest client's own bound on a request (90 s) is the desktop's: an action on a
        # loaded machine can take long, and a container that died is seen at once anyway.
        super().__init__(sandbox_id, screen=config.screen, settle=config.settle.model_dump(), agent_timeout=90.0,
                         emit=emit)
        self.config = config
        self._container = container
        self._proc: asyncio.subprocess.Process | None = None
        self._client: GuestClient | None = None
        self._monitor: asyncio.Task[None] | None = None
        self._starting = True
        self._initial: _Snapshot | None = None
        self._snapshots: dict[str, _Snapshot] = {}
        self._lock = asyncio.Lock()

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def create(cls, config: BaseModel, *, sandbox_id: str, emit: EventSink | None = None) -> "DesktopSandbox":
        return await cls._start(DesktopConfig.model_validate(config), sandbox_id, emit, None)

    @classmethod
    async def _start(cls, config: DesktopConfig, sandbox_id: str, emit: EventSink | None,
                     origin: _Snapshot | None) -> "DesktopSandbox":
        t0 = time.perf_counter()
        container = await asyncio.to_thread(DesktopContainer.prepare, sandbox_id, config)
        sandbox = cls(sandbox_id, config, container, emit)
        try:
            # $HOME is complete before anything starts: the window manager and the apps
            # read their configuration from it.
            if origin is None:
                await asyncio.to_thread(sandbox._write_files, config.files)
                await asyncio.to_thread(sandbox._write_files, config.binary_files, binary=True)
            else:
                await asyncio.to_thread(_copy_contents, origin.home, container.home)
            await sandbox._boot()
            if origin is not None:
                await sandbox._guarded(sandbox._agent().replace_file_events(origin.events))
            sandbox.timings_ms["boot"] = round((time.perf_counter() - t0) * 1000, 1)
            t1 = time.perf_counter()
            await sandbox._start_apps([a.model_dump() for a in config.apps] if origin is None else origin.apps)
            sandbox.timings_ms["apps"] = round((time.perf_counter() - t1) * 1000, 1)
            if origin is not None:
                sandbox._step = snapshot_step(origin.ref)
            sandbox._initial = await sandbox._take_snapshot("initial")
            sandbox._starting = False
            sandbox.timings_ms["create"] = round((time.perf_counter() - t0) * 1000, 1)
        except CuaError as exc:
            exc.message = f"{exc.message}\n--- container log ---\n{container.log_tail()}"
            exc.args = (exc.message,)
            await sandbox.close()
            raise
        except BaseException:
            await sandbox.close()
            raise
        return sandbox

    async def _boot(self) -> None:
        c = self._container
        log = open(c.log, "wb")
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *c.argv, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        finally:
            log.close()
        deadline = time.monotonic() + self.config.start_timeout
        while not c.socket.exists():
            if self._proc.returncode is not None:
                raise InfraError(f"desktop container exited during start (status {self._proc.returncode}): "
                                 f"{c.log_tail()}")
            if time.monotonic() > deadline:
                raise Timeout(f"desktop guest agent not ready within {self.config.start_timeout:g} s: {c.log_tail()}")
            # The agent renames its socket into place once it accepts connections; no
            # portable event reports a file's creation in another mount namespace.
            await asyncio.sleep(0.02)
        self._client = await GuestClient.connect_unix(str(c.socket), timeout=30.0, name=f"desktop {self.id}",
                                                      on_lost=self._on_lost)
        await self._read_agent_info()
        self._monitor = asyncio.create_task(self._watch(), name=f"desktop-watch-{self.id}")

    async def _watch(self) -> None:
        assert self._proc is not None
        status = await self._proc.wait()
        self._on_lost(f"desktop container exited with status {status}")

    def _on_lost(self, reason: str) -> None:
        verdict = self._container.cgroup.verdict()  # a memory or process limit the kernel enforced
        self._report_death(f"{reason} ({verdict})" if verdict else reason, log=self._container.log_tail(1000))

    def _agent(self) -> GuestClient:
        if self._crash_reason is not None:
            raise SandboxCrashed(f"desktop {self.id} crashed: {self._crash_reason}")
        if self._client is None or self._closed:
            raise SandboxCrashed(f"desktop {self.id} is closed")
        return self._client

    @property
    def alive(self) -> bool:
        return (not self._closed and self._crash_reason is None and self._client is not None
                and self._client.alive)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._client is not None:
            await self._client.close()
        if self._proc is not None and self._proc.returncode is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # exited between the check and the kill
            await self._proc.wait()
        if self._monitor is not None:
            self._monitor.cancel()
        await asyncio.to_thread(self._kill_cgroup)
        await asyncio.to_thread(self._container.cleanup)

    def _kill_cgroup(self) -> None:
        """Kill anything left in the container's cgroup (a process that escaped the group kill)."""
        for d in self._container.cgroup.dirs:
            try:
                pids = (d / "cgroup.procs").read_text().split()
            except OSError:
                continue
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    continue
        deadline = time.monotonic() + 5
        while self._container.cgroup.populated() and time.monotonic() < deadline:
            time.sleep(0.01)  # killed processes leave the cgroup asynchronously; bounded

    # ------------------------------------------------------------------ apps and home

    def _write_files(self, files: dict[str, str], *, binary: bool = False) -> None:
        """Write files into $HOME as the desktop user: text, or base64 of bytes. On the host
        side of the bind mount: the files must be there before the guest starts."""
        for path, text in files.items():
            try:
                target = self._container.host_path(path)
            except ValueError as exc:
                raise BadRequest(str(exc), details={"path": path}) from exc
            target.parent.mkdir(parents=True, exist_ok=True)
            if binary:
                target.write_bytes(decode_base64_file(path, text))
            else:
                target.write_text(text)
            # the new file and any folders made for it belong to the desktop user
            home = self._container.home
            for owned in [target, *(home / q for q in target.relative_to(home).parents)]:
                os.lchown(owned, GUEST_UID, GUEST_GID)

    async def _take_snapshot(self, name: str) -> _Snapshot:
        apps = []
        configured = {tuple(a.argv): a for a in self.config.apps}
        agent = self._agent()
        focused = (await agent.windows())["focused"]
        for app in await agent.apps():
            for window in app["windows"]:
                window["focused"] = window["id"] == focused
            known: AppSpec | None = configured.get(tuple(app["argv"]))
            apps.append({"name": app["name"], "argv": app["argv"], "cwd": app["cwd"], "env": app.get("env") or {},
                         "window_class": known.window_class if known else (app["windows"][0]["class"] or None),
                         "start_timeout": known.start_timeout if known else APP_START_TIMEOUT,
                         "wait_window": bool(app["windows"]), "windows": app["windows"]})
        events = await self._guarded(agent.file_events())
        sid = f"{name}-{uuid.uuid4().hex[:10]}"
        home = self._container.run_dir / "snapshots" / sid
        t0 = time.perf_counter()
        await asyncio.to_thread(_copy_tree, self._container.home, home)
        size = await asyncio.to_thread(_tree_size, home)
        ref = SnapshotRef(id=sid, sandbox_id=self.id, kind=self.kind, size_bytes=size,
                          meta={"apps": [a["name"] for a in apps], "home_bytes": size, "step": self._step,
                                "copy_ms": round((time.perf_counter() - t0) * 1000, 1)})
        return _Snapshot(ref=ref, home=home, apps=apps, events=events)

    async def _return_to(self, snap: _Snapshot, files: dict[str, str] | None = None) -> None:
        await self._agent().kill(all=True, timeout=10.0)
        await asyncio.to_thread(_clear_dir, self._container.home)
        await asyncio.to_thread(_copy_contents, snap.home, self._container.home)
        if files:
            await asyncio.to_thread(self._write_files, files)
        # the log of the moment restored, without the events of the copy just made
        await self._guarded(self._agent().replace_file_events(snap.events))
        await self._start_apps(snap.apps)
        self._step = snapshot_step(snap.ref)

    # ------------------------------------------------------------------ Sandbox API

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation:
        """Back to the state right after create: $HOME as it was, the apps restarted.

        `options["files"]` ({path: text}) are written into $HOME before the apps start
        (task setup files). The seed is accepted for interface parity: a desktop has no
        seeded app data of its own.
        """
        files = (options or {}).get("files") or {}
        if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            raise BadRequest("reset option 'files' must map paths to text")
        assert self._initial is not None
        async with self._lock:
            t0 = time.perf_counter()
            await self._return_to(self._initial, files)
            self._step = 0
            self.timings_ms["reset_last"] = round((time.perf_counter() - t0) * 1000, 1)
        return await self._settled_observe(observe)

    def _status(self) -> Status:
        if self._closed:
            return "closed"
        if self._crash_reason is not None:
            return "crashed"
        return "starting" if self._starting else "ready"

    def _details(self) -> dict[str, Any]:
        c = self._container
        return {
            "isolation": "container", "display": c.display.name, "home": GUEST_HOME,
            "network": self.config.network,
            "limits": {"applied": c.cgroup.applied, "memory_mb": self.config.memory_mb,
                       "pids": self.config.pids, "reason": c.cgroup.reason},
            "cgroups": [str(d) for d in c.cgroup.dirs],
            "container_pid": self._proc.pid if self._proc else None,
            "run_dir": str(c.run_dir),
        }

    # ------------------------------------------------------------------ snapshots

    async def snapshot(self) -> SnapshotRef:
        async with self._lock:
            t0 = time.perf_counter()
            snap = await self._take_snapshot("snap")
            self._snapshots[snap.ref.id] = snap
            self.timings_ms["snapshot_last"] = round((time.perf_counter() - t0) * 1000, 1)
        return snap.ref

    def _get(self, ref: SnapshotRef) -> _Snapshot:
        snap = self._snapshots.get(ref.id)
        if snap is None or ref.sandbox_id != self.id:
            raise UnknownSnapshot(f"snapshot {ref.id!r} does not belong to desktop {self.id}",
                                  details={"snapshot": ref.id})
        return snap

    async def restore(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> Observation:
        snap = self._get(ref)
        async with self._lock:
            t0 = time.perf_counter()
            await self._return_to(snap)
            self.timings_ms["restore_last"] = round((time.perf_counter() - t0) * 1000, 1)
        return await self._settled_observe(observe)

    async def delete_snapshot(self, ref: SnapshotRef) -> None:
        snap = self._get(ref)
        del self._snapshots[ref.id]
        await asyncio.to_thread(shutil.rmtree, snap.home, True)

    async def fork(self, ref: SnapshotRef, *, sandbox_id: str, emit: EventSink | None = None) -> "DesktopSandbox":
        """A new container whose $HOME and apps start as the snapshot's."""
        snap = self._get(ref)
        t0 = time.perf_counter()
        child = await self._start(self.config, sandbox_id, emit, snap)
        child.timings_ms["fork"] = round((time.perf_counter() - t0) * 1000, 1)
        return child
