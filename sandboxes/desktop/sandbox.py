"""`DesktopSandbox`: an X desktop with real apps in a bubblewrap container, driven through
the guest agent (the same agent a VM runs), over a unix socket.

Lifecycle: create starts the container (the agent starts Xvfb and the window manager),
writes the configured files into $HOME, starts the apps, waits for their windows, and
keeps a copy of $HOME as the initial state. reset = back to that state (apps restarted);
snapshot = a copy of $HOME plus the command lines of the apps owning windows; restore =
kill the apps, put $HOME back, start those apps again. See README.md for exactly what a
snapshot keeps.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import signal
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from cua.actions import BROWSER_ONLY, Action, Done
from cua.errors import ActionFailed, BadRequest, CuaError, InfraError, SandboxCrashed, Timeout, UnknownSnapshot
from cua.info import CommandOutput
from cua.observation import ActionError, Observation, ObserveOptions, Screenshot, SettleInfo, Size
from cua.sandbox import EventSink, Sandbox, SandboxEvent, SandboxInfo, SnapshotRef, capabilities_of, register_kind, scale_action
from cua.sandboxes.desktop.config import APP_START_TIMEOUT, AppSpec, DesktopConfig
from cua.sandboxes.desktop.container import GUEST_GID, GUEST_HOME, GUEST_UID, DesktopContainer, own_tree
from cua.sandboxes.guest.client import GuestClient, command_output, home_relative
from cua.state import StateQuery, StateResult

__all__ = ["DesktopSandbox"]

#: State query kinds the guest agent answers.
GUEST_QUERIES = ("file", "command", "windows", "clipboard", "a11y")


@dataclass
class _Snapshot:
    ref: SnapshotRef
    home: Path
    apps: list[dict[str, Any]] = field(default_factory=list)


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
class DesktopSandbox(Sandbox):
    kind: ClassVar[str] = "desktop"
    config_model: ClassVar[type[BaseModel]] = DesktopConfig

    def __init__(self, sandbox_id: str, config: DesktopConfig, container: DesktopContainer,
                 emit: EventSink | None) -> None:
        self.id = sandbox_id
        self.config = config
        self._container = container
        self._emit = emit
        self._proc: asyncio.subprocess.Process | None = None
        self._client: GuestClient | None = None
        self._monitor: asyncio.Task[None] | None = None
        self._status = "starting"
        self._closing = False
        self._crash_reason: str | None = None
        self._guest_info: dict[str, Any] = {}
        self._screen = config.screen
        self._frame = config.screen
        self._step = 0
        self._initial: _Snapshot | None = None
        self._snapshots: dict[str, _Snapshot] = {}
        self._timings: dict[str, float] = {}
        self._created = time.time()
        self._last_active = time.time()
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
            sandbox._timings["boot"] = round((time.perf_counter() - t0) * 1000, 1)
            t1 = time.perf_counter()
            await sandbox._start_apps([a.model_dump() for a in config.apps] if origin is None else origin.apps)
            sandbox._timings["apps"] = round((time.perf_counter() - t1) * 1000, 1)
            sandbox._initial = await sandbox._take_snapshot("initial")
            sandbox._status = "ready"
            sandbox._timings["create"] = round((time.perf_counter() - t0) * 1000, 1)
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
        self._guest_info = await self._client.info()
        screen = self._guest_info["screen"]
        self._screen = Size(width=screen["width"], height=screen["height"])
        self._frame = self._screen
        self._monitor = asyncio.create_task(self._watch(), name=f"desktop-watch-{self.id}")

    async def _watch(self) -> None:
        assert self._proc is not None
        status = await self._proc.wait()
        self._on_lost(f"desktop container exited with status {status}")

    def _on_lost(self, reason: str) -> None:
        if self._closing or self._crash_reason is not None:
            return
        verdict = self._container.cgroup.verdict()  # a memory or process limit the kernel enforced
        reason = f"{reason} ({verdict})" if verdict else reason
        self._crash_reason = reason
        self._status = "crashed"
        if self._emit is not None:
            self._emit(SandboxEvent(sandbox_id=self.id, event="died",
                                    data={"reason": reason, "log": self._container.log_tail(1000)}))

    @property
    def client(self) -> GuestClient:
        if self._crash_reason is not None:
            raise SandboxCrashed(f"desktop {self.id} crashed: {self._crash_reason}")
        if self._client is None or self._closing:
            raise SandboxCrashed(f"desktop {self.id} is closed")
        return self._client

    @property
    def alive(self) -> bool:
        return self._status in ("starting", "ready") and self._client is not None and self._client.alive

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._status = "closed"
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
        """Write files into $HOME as the desktop user: text, or base64 of bytes."""
        import base64
        import binascii

        for path, text in files.items():
            try:
                target = self._container.host_path(path)
            except ValueError as exc:
                raise BadRequest(str(exc), details={"path": path}) from exc
            target.parent.mkdir(parents=True, exist_ok=True)
            if binary:
                try:
                    target.write_bytes(base64.b64decode(text, validate=True))
                except (binascii.Error, ValueError) as exc:
                    raise BadRequest(f"binary_files[{path!r}] is not valid base64: {exc}",
                                     details={"path": path}) from exc
            else:
                target.write_text(text)
            # the new file and any folders made for it belong to the desktop user
            home = self._container.home
            for owned in [target, *(home / q for q in target.relative_to(home).parents)]:
                os.lchown(owned, GUEST_UID, GUEST_GID)

    async def _start_apps(self, apps: list[dict[str, Any]]) -> None:
        """Start apps and wait for each one's window (in parallel: they start independently);
        apps from a snapshot get their window's recorded geometry back, and the window
        that had the focus gets it again."""
        async def one(app: dict[str, Any]) -> dict[str, Any] | None:
            pid = await self.client.spawn(list(app["argv"]), env=dict(app.get("env") or {}),
                                          cwd=app.get("cwd"), name=app.get("name"))
            if not app.get("wait_window", True):
                return None
            return await self.client.wait_window(pid=pid, klass=app.get("window_class"),
                                                 timeout=float(app.get("start_timeout", APP_START_TIMEOUT)))

        windows = await asyncio.gather(*(one(a) for a in apps))
        places, focus = [], None
        for app, window in zip(apps, windows):
            recorded = (app.get("windows") or [None])[0]
            if window is None or recorded is None:
                continue
            places.append({"id": window["id"], **{k: recorded[k] for k in ("x", "y", "width", "height")}})
            if recorded.get("focused"):
                focus = window["id"]
        if places:
            await self.client.place_windows(places, focus=focus)

    async def _stop_apps(self) -> None:
        await self.client.kill(all=True, timeout=10.0)

    async def _take_snapshot(self, name: str) -> _Snapshot:
        apps = []
        configured = {tuple(a.argv): a for a in self.config.apps}
        focused = (await self.client.windows())["focused"]
        for app in await self.client.apps():
            for window in app["windows"]:
                window["focused"] = window["id"] == focused
            known: AppSpec | None = configured.get(tuple(app["argv"]))
            apps.append({"name": app["name"], "argv": app["argv"], "cwd": app["cwd"], "env": app.get("env") or {},
                         "window_class": known.window_class if known else (app["windows"][0]["class"] or None),
                         "start_timeout": known.start_timeout if known else APP_START_TIMEOUT,
                         "windows": app["windows"]})
        sid = f"{name}-{uuid.uuid4().hex[:10]}"
        home = self._container.run_dir / "snapshots" / sid
        t0 = time.perf_counter()
        await asyncio.to_thread(_copy_tree, self._container.home, home)
        size = await asyncio.to_thread(_tree_size, home)
        ref = SnapshotRef(id=sid, sandbox_id=self.id, kind=self.kind, size_bytes=size,
                          meta={"apps": [a["name"] for a in apps], "home_bytes": size,
                                "copy_ms": round((time.perf_counter() - t0) * 1000, 1)})
        return _Snapshot(ref=ref, home=home, apps=apps)

    async def _return_to(self, snap: _Snapshot, files: dict[str, str] | None = None) -> None:
        await self._stop_apps()
        await asyncio.to_thread(_clear_dir, self._container.home)
        await asyncio.to_thread(_copy_contents, snap.home, self._container.home)
        if files:
            await asyncio.to_thread(self._write_files, files)
        await self._start_apps(snap.apps)
        self._step = 0

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
            self._timings["reset_last"] = round((time.perf_counter() - t0) * 1000, 1)
        return await self._settled_observe(observe)

    async def observe(self, options: ObserveOptions | None = None) -> Observation:
        options = options or ObserveOptions()
        t0 = time.perf_counter()
        data: bytes | None = None
        meta: dict[str, Any] = {}
        if options.screenshot:
            meta, data = await self.client.screenshot(*self._shot_args(options))
        obs = await self._observation(options, meta, data, None, None)
        obs.timings_ms["observe"] = round((time.perf_counter() - t0) * 1000, 2)
        return obs

    async def _settled_observe(self, options: ObserveOptions | None) -> Observation:
        """Observe once the restarted apps have drawn and the screen is still."""
        options = options or ObserveOptions()
        result, data = await self.client.act({"type": "wait", "seconds": 0}, settle=self.config.settle.model_dump(),
                                             observe=self._shot_dict(options))
        return await self._observation(options, result.get("screenshot") or {}, data, result.get("settle"), None)

    def _shot_args(self, options: ObserveOptions) -> tuple[str, int, int | None, int | None]:
        frame = options.frame
        return options.format, options.quality, frame.width if frame else None, frame.height if frame else None

    def _shot_dict(self, options: ObserveOptions) -> dict[str, Any] | None:
        if not options.screenshot:
            return None
        fmt, quality, w, h = self._shot_args(options)
        return {"format": fmt, "quality": quality, "width": w, "height": h}

    async def _observation(self, options: ObserveOptions, meta: dict[str, Any], data: bytes | None,
                           settle: dict[str, Any] | None, error: ActionError | None) -> Observation:
        frame = options.frame or self._screen
        screenshot = None
        if data is not None:
            screenshot = Screenshot(format=meta["format"], width=meta["width"], height=meta["height"], data=data)
            frame = Size(width=meta["width"], height=meta["height"])
        self._frame = frame
        self._last_active = time.time()
        obs = Observation(sandbox_id=self.id, frame=frame, screen=self._screen, screenshot=screenshot,
                          settle=SettleInfo(**settle) if settle else None, error=error, step=self._step)
        if options.focused or options.axtree:
            queries: list[dict[str, Any]] = []
            if options.focused:
                queries.append({"kind": "windows"})
            if options.axtree:
                queries.append({"kind": "a11y", "max_nodes": 5000})
            results = await self.client.query(queries)
            if options.focused and results[0].get("ok"):
                listing = results[0]["value"]
                focused = next((w for w in listing["windows"] if w["id"] == listing["focused"]), None)
                obs.focused = focused
                obs.title = focused["title"] if focused else None
            if options.axtree and results[-1].get("ok"):
                obs.axtree = [results[-1]["value"]]
        return obs

    async def act(self, action: Action, *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation:
        options = observe or ObserveOptions()
        client = self.client
        t0 = time.perf_counter()
        self._step += 1
        try:
            scaled = scale_action(action, frame or self._frame, self._screen, foreign=BROWSER_ONLY)
        except ActionFailed as exc:
            obs = await self.observe(options)
            obs.error = ActionError(reason=exc.reason, message=exc.message)
            return obs
        if isinstance(scaled, Done):
            return await self.observe(options)
        try:
            result, data = await client.act(scaled.model_dump(mode="json"), settle=self.config.settle.model_dump(),
                                            observe=self._shot_dict(options))
        except ActionFailed as exc:
            obs = await self.observe(options)
            obs.error = ActionError(reason=exc.reason, message=exc.message)
            return obs
        obs = await self._observation(options, result.get("screenshot") or {}, data, result.get("settle"), None)
        obs.timings_ms.update({k: float(v) for k, v in (result.get("timings_ms") or {}).items()})
        obs.timings_ms["act"] = round((time.perf_counter() - t0) * 1000, 2)
        return obs

    def info(self) -> SandboxInfo:
        g = self._guest_info
        c = self._container
        return SandboxInfo(
            id=self.id, kind=self.kind,
            status=self._status,  # type: ignore[arg-type]
            screen=self._screen, capabilities=capabilities_of(self), queries=list(GUEST_QUERIES),
            created_at=self._created, last_active=self._last_active, timings_ms=dict(self._timings),
            details={
                "isolation": "container", "display": c.display.name, "home": GUEST_HOME,
                "network": self.config.network,
                "limits": {"applied": c.cgroup.applied, "memory_mb": self.config.memory_mb,
                           "pids": self.config.pids, "reason": c.cgroup.reason},
                "cgroups": [str(d) for d in c.cgroup.dirs],
                "container_pid": self._proc.pid if self._proc else None,
                "agent": {k: g.get(k) for k in ("input", "capture", "settle", "versions", "pid")},
                "run_dir": str(c.run_dir),
                "crash_reason": self._crash_reason,
            })

    # ------------------------------------------------------------------ capabilities

    async def query(self, queries: Sequence[StateQuery]) -> list[StateResult]:
        supported = [i for i, q in enumerate(queries) if q.kind in GUEST_QUERIES]
        out: list[StateResult] = [
            StateResult.failure("unsupported", f"desktop sandboxes do not answer {q.kind!r} queries")
            for q in queries]
        if supported:
            answers = await self.client.query([queries[i].model_dump(mode="json") for i in supported])
            for i, answer in zip(supported, answers, strict=True):
                out[i] = StateResult(ok=bool(answer.get("ok")), value=answer.get("value"),
                                     error=answer.get("error"), message=answer.get("message"))
        return out

    async def upload(self, path: str, data: bytes, *, append: bool = False, mode: int | None = None) -> tuple[str, int]:
        result = await self.client.write_file(home_relative(path, GUEST_HOME), data, mode=mode, append=append)
        return str(result["path"]), int(result["size"])

    async def run_command(self, argv: Sequence[str], *, time_limit: float = 30.0, max_output_bytes: int = 100_000,
                          cwd: str | None = None, stdin: bytes | None = None) -> CommandOutput:
        result = await self.client.run(argv, time_limit=time_limit, max_bytes=max_output_bytes,
                                       cwd=home_relative(cwd, GUEST_HOME, folder=True) if cwd else None, stdin=stdin)
        return command_output(result)

    async def snapshot(self) -> SnapshotRef:
        async with self._lock:
            t0 = time.perf_counter()
            snap = await self._take_snapshot("snap")
            self._snapshots[snap.ref.id] = snap
            self._timings["snapshot_last"] = round((time.perf_counter() - t0) * 1000, 1)
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
            self._timings["restore_last"] = round((time.perf_counter() - t0) * 1000, 1)
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
        child._timings["fork"] = round((time.perf_counter() - t0) * 1000, 1)
        return child

    async def frames(self, options: ObserveOptions, *, max_fps: float = 10.0) -> AsyncIterator[Screenshot]:
        """Screenshots whenever the screen changed, at most `max_fps` per second."""
        interval = 1.0 / max(0.1, min(max_fps, 60.0))
        last = b""
        while self.alive:
            t0 = time.monotonic()
            meta, data = await self.client.screenshot(*self._shot_args(options))
            digest = hashlib.blake2b(data, digest_size=16).digest()
            if digest != last:
                last = digest
                yield Screenshot(format=meta["format"], width=meta["width"], height=meta["height"], data=data)
            # A frame rate cap: the next grab is due one interval after this one began.
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - t0)))
