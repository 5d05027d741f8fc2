"""`VMSandbox`: a QEMU virtual machine running a desktop, with memory snapshots.

Lifecycle:
- create: cold boot of the recipe's image (direct kernel boot, KVM when it works, else
  TCG) until the guest agent says hello, then an "initial" snapshot that `reset` restores.
- snapshot: stop, write device state (~1 MB, RAM left out by `x-ignore-shared`), copy the
  RAM file and the disk overlay, continue. Tens of milliseconds of pause plus the copies.
- restore: a new QEMU on copies of the snapshot's files loads the device state and runs
  on from exactly where the snapshot was: the same windows, the same processes, no boot.
  With `standby` on, that QEMU is prepared in the background after each snapshot and
  restore, device state loaded and paused, so a restore is only "continue" (the old VM
  is stopped at once and killed after).
- fork: a second VM from a snapshot, with its own copies of the files.

Observe, act, query, files and commands go to the guest agent over virtio-serial, through
`GuestSandbox` (shared with the desktop kind); this module is QEMU's lifecycle. When QEMU
dies or the agent's port closes, every call fails with SandboxCrashed and a `died` event
is emitted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from cua.errors import BadRequest, CuaError, SandboxCrashed, SnapshotUnusable, Timeout, UnknownSnapshot
from cua.observation import Observation, ObserveOptions
from cua.sandbox import EventSink, SnapshotRef
from cua.sandboxes.guest.client import GuestClient
from cua.sandboxes.guest.sandbox import GuestSandbox, Status, decode_base64_file, snapshot_step
from cua.sandboxes.vm import snapshots
from cua.sandboxes.vm.config import VMConfig
from cua.sandboxes.vm.image import BuiltImage, image_for
from cua.sandboxes.vm.instance import Instance, complete_live_snapshot
from cua.sandboxes.vm.qemu import Accel, LaunchSpec, copy_sparse, probe_accel, reap_stale, runtime_dir
from cua.sandboxes.vm.snapshots import SnapshotFiles
from cua.sandboxes.vm.standby import Standby

__all__ = ["VMSandbox"]

log = logging.getLogger(__name__)


class VMSandbox(GuestSandbox):
    kind: ClassVar[str] = "vm"
    config_model: ClassVar[type[BaseModel]] = VMConfig

    def __init__(self, config: VMConfig, *, sandbox_id: str, image: BuiltImage, accel: Accel,
                 emit: EventSink | None) -> None:
        # Looser settling than a container's: an emulated CPU draws late.
        super().__init__(sandbox_id, screen=config.screen, agent_timeout=config.agent_timeout, emit=emit,
                         a11y_time_limit=config.a11y_timeout,
                         settle={"first_ms": config.settle_first_ms, "quiet_ms": config.settle_quiet_ms,
                                 "timeout_ms": config.settle_timeout_ms})
        self.config = config
        self.image = image
        self.accel = accel
        self._inst: Instance | None = None
        self._snapshots: dict[str, SnapshotFiles] = {}
        self._initial: SnapshotFiles | None = None
        #: Whether the initial snapshot came from this sandbox's own boot, so that a boot
        #: can make it again (a fork's is the parent's snapshot: nothing here can).
        self._initial_booted = False
        self._standby = Standby(sandbox_id, boot_timeout=config.boot_timeout)
        self._reaping: set[asyncio.Task[None]] = set()
        #: The snapshot the running VM started from (initial, last restored, forked): the
        #: standby goes back to it when the snapshot it was prepared for is deleted.
        self._home: SnapshotFiles | None = None
        self._lock = asyncio.Lock()
        reap_stale(runtime_dir())
        self._root = runtime_dir() / f"{sandbox_id}-{uuid.uuid4().hex[:8]}"
        self._root.mkdir(parents=True)
        (self._root / "owner.pid").write_text(str(os.getpid()))

    # --- creation ---

    @classmethod
    async def create(cls, config: BaseModel, *, sandbox_id: str, emit: EventSink | None = None) -> "VMSandbox":
        assert isinstance(config, VMConfig)
        t0 = time.monotonic()
        image = await asyncio.to_thread(image_for, config.image, build=config.build,
                                        log=lambda msg: log.info("vm image: %s", msg))
        accel: Accel = config.accel if config.accel != "auto" else await asyncio.to_thread(probe_accel, image.kernel)
        self = cls(config, sandbox_id=sandbox_id, image=image, accel=accel, emit=emit)
        try:
            try:
                await self._boot_to_initial()
            except SnapshotUnusable as exc:
                log.warning("vm %s: the initial snapshot does not restore (%s); booting again", self.id, exc)
                await self._boot_to_initial()
            self.timings_ms["create"] = _ms(t0)
        except BaseException:
            await self.close()
            raise
        return self

    async def _boot_to_initial(self) -> None:
        """Cold boot, the configured files and apps, then the initial snapshot that `reset`
        restores, proven by restoring it once: the running VM is then that restore, as
        after any reset. An earlier initial snapshot is deleted first, so that a caller
        whose initial snapshot does not restore (SnapshotUnusable) may call this again."""
        self._discard_initial()
        t1 = time.monotonic()
        inst = await Instance.boot(self._spec("boot"), self.image.disk, timeout=self.config.boot_timeout)
        self._adopt(inst)
        await self._read_agent_info()
        self.timings_ms["boot"] = _ms(t1)
        await self._write_files(self.config.files)
        for path, b64 in self.config.binary_files.items():
            await self.upload(path, decode_base64_file(path, b64))
        await self._start_configured_apps()
        self._initial = await self._take_still_snapshot()
        self._initial_booted = True
        await snapshots.ready(self._initial.id)
        self._home = self._initial
        self._schedule_standby(self._initial)
        await self._restore_files(self._initial, ObserveOptions(screenshot=False), timing="verify", step=0)

    def _discard_initial(self) -> None:
        snap, self._initial = self._initial, None
        if snap is None:
            return
        if self._home is snap:
            self._home = None
        self._snapshots.pop(snap.id, None)
        snapshots.forget(snap.id)
        snap.delete()

    def _spec(self, name: str, *, incoming: bool = False) -> LaunchSpec:
        workdir = self._root / f"{name}-{uuid.uuid4().hex[:6]}"
        # panic=-1: a panicking guest kernel reboots at once, and QEMU (-no-reboot) exits,
        # which the instance reports as a crash; the default (panic=0) hangs the guest with
        # its agent's port still open, so every call would wait for its timeout.
        # oops=panic: an oops (corrupted kernel memory, as a bad restore leaves it) ends
        # the guest the same way instead of leaving it half alive.
        args = f"{self.image.kernel_cmdline} panic=-1 oops=panic cua.screen={self._screen.width}x{self._screen.height}"
        if self.config.kernel_args:
            args += " " + self.config.kernel_args
        return LaunchSpec(kernel=self.image.kernel, initrd=self.image.initrd, cmdline=args,
                          overlay=workdir / "overlay.qcow2", ram_file=workdir / "ram", workdir=workdir,
                          memory_mb=self.config.memory_mb, cpus=self.config.cpus, accel=self.accel,
                          incoming=incoming)

    def _adopt(self, inst: Instance) -> None:
        self._inst = inst
        self._crash_reason = None
        inst.on_death(self._report_death)

    async def _start_configured_apps(self) -> None:
        await self._start_apps([app.model_dump() for app in self.config.apps], timeout_cap=self.config.app_timeout,
                               stall_s=self.config.app_stall_s)

    async def _write_files(self, files: dict[str, str]) -> None:
        """Write text files into the desktop user's home (task setup files), as that user."""
        for path, text in files.items():
            await self.upload(path, text.encode())

    # --- the agent ---

    def _agent(self) -> GuestClient:
        if self._closed:
            raise SandboxCrashed(f"VM sandbox {self.id} is closed")
        if self._inst is None or self._inst.client is None:
            raise SandboxCrashed(f"VM sandbox {self.id} has no running VM")
        if self._crash_reason:
            raise SandboxCrashed(f"VM sandbox {self.id} died: {self._crash_reason}")
        return self._inst.client

    def _fault(self, exc: CuaError) -> CuaError:
        """A timeout from a VM that has since died is a crash."""
        if isinstance(exc, Timeout) and (self._crash_reason or (self._inst is not None and not self._inst.qemu.alive)):
            return SandboxCrashed(f"VM sandbox {self.id} died: {self._crash_reason or 'QEMU exited'}")
        return exc

    # --- Sandbox ---

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation:
        """Back to the desktop as it was right after boot (a restore of the initial snapshot).

        `options["files"]` ({path: text}) are then written into the home and the configured
        apps restarted, so they open them (task setup files, as on the desktop kind). Other
        options are refused by name. The seed is accepted for interface parity: the VM has
        no seeded app data of its own.
        """
        if self._initial is None:
            raise SandboxCrashed(f"VM sandbox {self.id} has no initial snapshot")
        opts = dict(options or {})
        files = opts.pop("files", None) or {}
        if opts:
            raise BadRequest(f"VM reset does not take the option(s) {', '.join(sorted(opts))}; it takes: files",
                             details={"options": sorted(opts)})
        if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            raise BadRequest("reset option 'files' must map paths to text")
        await snapshots.ready(self._initial.id)
        try:
            obs = await self._restore_files(self._initial, None if files else observe, timing="reset", step=0)
        except SnapshotUnusable as exc:
            if not self._initial_booted:
                raise  # a fork's: `_restore_files` reported the death
            # The initial snapshot is the sandbox's own: make it again rather than fail
            # every later reset (a cold boot, tens of seconds under TCG).
            log.warning("vm %s: the initial snapshot no longer restores (%s); booting again", self.id, exc)
            self.timings_ms["initial_rebuilds"] = self.timings_ms.get("initial_rebuilds", 0) + 1
            try:
                await self._boot_to_initial()
            except BaseException as again:
                self._report_death(f"the initial snapshot could not be made again: {again}")
                raise
            obs = await self.observe(None if files else observe)
        if files:
            t0 = time.monotonic()
            await self._write_files(files)
            await self._guarded(self._agent().kill(all=True, timeout=10.0))
            await self._start_configured_apps()
            obs = await self._settled_observe(observe)
            self.timings_ms["reset"] += _ms(t0)
            obs.timings_ms["reset"] = self.timings_ms["reset"]
        return obs

    # --- snapshots ---

    async def snapshot(self) -> SnapshotRef:
        async with self._lock:
            snap, meta = await self._take_snapshot()
        self._schedule_standby(snap)
        return SnapshotRef(id=snap.id, sandbox_id=self.id, kind=self.kind, size_bytes=meta["stream_bytes"],
                           meta={"memory_mb": meta["memory_mb"], "accel": meta["accel"], "image": meta["image"],
                                 "snapshot_ms": meta["snapshot_ms"], "pause_ms": meta["pause_ms"], "step": self._step})

    async def _take_snapshot(self) -> tuple[SnapshotFiles, dict[str, Any]]:
        """A live snapshot: RAM and device state stream out while the guest runs, and the
        guest stops only for the last dirty pages, the device state and the disk overlay's
        copy (`timings_ms["snapshot_pause"]`, from QEMU's STOP and RESUME events). The
        stream is turned into the restorable files (RAM file + device state) in the
        background; restore, fork and the standby wait for that (`snapshots.ready`)."""
        self._agent()
        assert self._inst is not None
        inst = self._inst
        t0 = time.monotonic()
        snap = SnapshotFiles.new(self._root / "snapshots")
        stream = snap.dir / "stream"
        try:
            stopped_at = await inst.qemu.save_live(stream)
            t1 = time.monotonic()
            try:
                await asyncio.to_thread(_copy, inst.spec.overlay, snap.overlay)
            finally:
                resumed_at = await inst.qemu.resume_timed()
        except BaseException:
            snap.delete()
            raise
        paused_ms = round(max(0.0, resumed_at - stopped_at) * 1000, 2)
        meta: dict[str, Any] = {
            **self._snapshot_meta(inst),
            "live_save_ms": _ms(t0, t1), "snapshot_ms": _ms(t0), "pause_ms": paused_ms,
            "migration": inst.qemu.last_migration, "overlay_bytes": snap.overlay.stat().st_size,
            "stream_bytes": stream.stat().st_size}
        spec = self._spec("complete", incoming=True)
        spec.ram_file = snap.ram

        async def complete() -> None:
            t2 = time.monotonic()
            try:
                await complete_live_snapshot(spec, stream, snap, timeout=self.config.boot_timeout)
                snap.write_meta({**meta, "complete_ms": _ms(t2)})
            except BaseException:
                snap.delete()
                raise

        task = asyncio.create_task(complete(), name=f"vm-snapshot-{snap.id}")
        snapshots.pending(snap.id, task)
        self._keep(snap, snapshot_ms=meta["snapshot_ms"], pause_ms=paused_ms)
        return snap, meta

    def _snapshot_meta(self, inst: Instance) -> dict[str, Any]:
        """What every snapshot's meta.json says of the VM it was taken from."""
        return {"memory_mb": self.config.memory_mb, "accel": self.accel, "image": self.image.hash,
                "screen": self._screen.model_dump(), "cmdline": inst.spec.cmdline, "created_at": time.time()}

    def _keep(self, snap: SnapshotFiles, *, snapshot_ms: float, pause_ms: float) -> None:
        self.timings_ms["snapshot"] = snapshot_ms
        self.timings_ms["snapshot_pause"] = pause_ms
        self._snapshots[snap.id] = snap
        snapshots.register(snap)

    async def _take_still_snapshot(self) -> SnapshotFiles:
        """A snapshot taken with the guest stopped throughout: device state, then copies
        of the RAM file and the overlay, then continue. For a freshly booted VM only,
        whose RAM is that shared file (a restored one maps its RAM privately).

        The initial snapshot is taken so because it is taken while the apps just started
        are busy: under TCG, live snapshots taken then were seen to restore into a guest
        whose kernel memory was corrupt, every time. The pause (a copy of the touched
        RAM, a few hundred ms) falls within `create`, where nobody waits on it."""
        self._agent()
        assert self._inst is not None
        inst = self._inst
        assert not inst.spec.ram_private, "a still snapshot copies the RAM file: a booted VM's only"
        t0 = time.monotonic()
        snap = SnapshotFiles.new(self._root / "snapshots")
        try:
            await inst.qemu.save_device_state(snap.devstate, timeout=self.config.boot_timeout)
            try:
                await asyncio.to_thread(copy_sparse, inst.spec.ram_file, snap.ram)
                await asyncio.to_thread(_copy, inst.spec.overlay, snap.overlay)
            finally:
                await inst.qemu.resume()
            taken_ms = _ms(t0)
            snap.write_meta({**self._snapshot_meta(inst), "snapshot_ms": taken_ms, "pause_ms": taken_ms, "live": False,
                             "overlay_bytes": snap.overlay.stat().st_size, "ram_bytes": snap.ram.stat().st_blocks * 512})
        except BaseException:
            snap.delete()
            raise
        self._keep(snap, snapshot_ms=taken_ms, pause_ms=taken_ms)
        return snap

    def _lookup(self, ref: SnapshotRef) -> SnapshotFiles:
        snap = snapshots.lookup(ref.id, memory_mb=self.config.memory_mb)
        meta = snap.meta()
        if meta.get("accel") != self.accel or meta.get("image") != self.image.hash:
            raise BadRequest(f"snapshot {ref.id} was taken on another image or accelerator",
                             details={"snapshot_id": ref.id})
        return snap

    async def restore(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> Observation:
        await snapshots.ready(ref.id)
        return await self._restore_files(self._lookup(ref), observe, timing="restore", step=snapshot_step(ref))

    async def _restore_files(self, snap: SnapshotFiles, observe: ObserveOptions | None, *, timing: str,
                             step: int) -> Observation:
        """Run on from a snapshot's files (the guest exactly as it was: no settling needed),
        the step count resumed at `step`."""
        async with self._lock:
            if self._closed:
                raise SandboxCrashed(f"VM sandbox {self.id} is closed")
            t0 = time.monotonic()
            standby = await self._standby.take(snap.id)
            prepared_ms = _ms(t0)
            old, self._inst = self._inst, None
            if old is not None:
                # Stopped first, as a running TCG guest would slow the new one's start;
                # killed and its files deleted after, off the restore's time.
                old.freeze()
            try:
                t1 = time.monotonic()
                inst = await self._run_from(snap, "restore", standby)
            except SnapshotUnusable:
                if snap is not self._initial or not self._initial_booted:  # else the caller boots again
                    self._report_death("restore failed")
                raise
            except BaseException:
                self._report_death("restore failed")
                raise
            finally:
                if old is not None:
                    self._reap(old)
            self._adopt(inst)
            self._home = snap
            self.timings_ms[timing] = _ms(t0)
            self.timings_ms[f"{timing}_wait_standby"] = prepared_ms
            self.timings_ms[f"{timing}_run"] = _ms(t1)
            self._step = step
        self._schedule_standby(snap)
        obs = await self.observe(observe)
        return obs.model_copy(update={"timings_ms": {**obs.timings_ms, timing: self.timings_ms[timing]}})

    async def _run_from(self, snap: SnapshotFiles, name: str, prepared: Instance | None) -> Instance:
        """A running, healthy instance from a snapshot's files, `prepared` (a standby) or
        a new one.

        A guest that dies or hangs as it starts from the snapshot (under TCG a restored
        guest's kernel has been seen to oops at once, or to answer pings while its X
        server never answers) is started once more from fresh copies: the snapshot's
        files are never written, so a second start is an independent try, and the retry
        is counted in `timings_ms["restarts"]`. When that fails too, the snapshot itself
        is at fault: SnapshotUnusable."""
        inst = prepared or await self._prepare(name, snap)
        try:
            return await self._activated(inst)
        except (SandboxCrashed, Timeout) as exc:
            log.warning("vm %s: the guest failed starting from snapshot %s (%s); starting it again",
                        self.id, snap.id, exc)
            self.timings_ms["restarts"] = self.timings_ms.get("restarts", 0) + 1
        try:
            return await self._activated(await self._prepare(name, snap))
        except (SandboxCrashed, Timeout) as exc:
            raise SnapshotUnusable(f"VM sandbox {self.id}: the guest fails each time it starts from snapshot "
                                   f"{snap.id}: {exc.message}",
                                   details={"snapshot_id": snap.id, **exc.details}) from exc

    async def _prepare(self, name: str, snap: SnapshotFiles) -> Instance:
        return await Instance.prepare(self._spec(name, incoming=True), snap, timeout=self.config.boot_timeout)

    async def _activated(self, inst: Instance) -> Instance:
        """`inst` running and healthy, or destroyed if it could not be started. A restored
        guest runs already: seconds, not a boot's minutes, bound its first answers."""
        try:
            await inst.activate(timeout=self.config.agent_timeout)
        except BaseException:
            await inst.destroy()
            raise
        return inst

    async def delete_snapshot(self, ref: SnapshotRef) -> None:
        snap = self._snapshots.pop(ref.id, None)
        if snap is None:
            raise UnknownSnapshot(f"no VM snapshot {ref.id!r} in sandbox {self.id}",
                                            details={"snapshot_id": ref.id})
        snapshots.forget(ref.id)
        with contextlib.suppress(CuaError, OSError, asyncio.CancelledError):
            await snapshots.ready(ref.id)
        if self._standby.snapshot_id == ref.id:
            await self._standby.drop()
            home = self._home
            if home is not None and home.id != ref.id and (home.id in self._snapshots or home is self._initial):
                self._schedule_standby(home)
        await asyncio.to_thread(snap.delete)

    # --- standby (standby.py): a QEMU loaded with copies of a snapshot, waiting to be restored ---

    def _schedule_standby(self, snap: SnapshotFiles) -> None:
        if self.config.standby and not self._closed:
            self._standby.schedule(snap, lambda: self._spec("standby", incoming=True))

    def _reap(self, inst: Instance) -> None:
        """Destroy an instance in the background; `close` waits for it."""
        task = asyncio.create_task(inst.destroy(), name=f"vm-reap-{inst.dir.name}")
        self._reaping.add(task)
        task.add_done_callback(self._reaping.discard)

    async def standby_ready(self) -> bool:
        """Wait until the standby VM (if any) is prepared; True when one is waiting.

        A restore of its snapshot then only loads device state. Tools that measure restore
        latency, or that restore in a tight loop, call this between restores.
        """
        return await self._standby.ready()

    # --- fork ---

    async def fork(self, ref: SnapshotRef, *, sandbox_id: str, emit: EventSink | None = None) -> "VMSandbox":
        """A second VM running from `ref`, with its own copies of the snapshot's files.

        The fork's `reset` returns to the forked snapshot (it keeps a hard-linked copy).
        """
        t0 = time.monotonic()
        await snapshots.ready(ref.id)
        snap = self._lookup(ref)
        child = VMSandbox(self.config, sandbox_id=sandbox_id, image=self.image, accel=self.accel, emit=emit)
        try:
            own = await asyncio.to_thread(snap.link_to, child._root / "snapshots")
            child._snapshots[own.id] = own
            snapshots.register(own)
            child._initial = child._home = own
            child._adopt(await child._run_from(own, "fork", None))
            await child._read_agent_info()
            child._step = snapshot_step(ref)
        except BaseException:
            await child.close()
            raise
        child.timings_ms["fork"] = _ms(t0)
        self.timings_ms["fork"] = child.timings_ms["fork"]
        return child

    # --- the rest ---

    def _status(self) -> Status:
        if self._closed:
            return "closed"
        if self._crash_reason:
            return "crashed"
        if self._lock.locked() or self._inst is None:
            return "starting"
        return "ready" if self.alive else "crashed"

    def _details(self) -> dict[str, Any]:
        inst = self._inst
        return {"accel": self.accel, "memory_mb": self.config.memory_mb, "cpus": self.config.cpus,
                "image": self.image.name, "image_hash": self.image.hash,
                "qemu_pid": inst.qemu.pid if inst is not None else None,
                "standby": self._standby.snapshot_id is not None, "snapshots": len(self._snapshots),
                "runtime_dir": str(self._root), "died": self._crash_reason}

    @property
    def alive(self) -> bool:
        return (not self._closed and self._crash_reason is None and self._inst is not None
                and self._inst.qemu.alive)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._standby.drop()
        for snap_id in list(self._snapshots):
            with contextlib.suppress(CuaError, OSError, asyncio.CancelledError):
                await snapshots.ready(snap_id)
        if self._inst is not None:
            inst, self._inst = self._inst, None
            await inst.destroy()
        if self._reaping:
            await asyncio.gather(*self._reaping, return_exceptions=True)
        for snap_id in list(self._snapshots):
            snapshots.forget(snap_id)
        self._snapshots.clear()
        await asyncio.to_thread(_rmtree, self._root)


def _copy(src: Path, dst: Path) -> None:
    shutil.copyfile(src, dst)


def _rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _ms(t0: float, t1: float | None = None) -> float:
    return round(((t1 if t1 is not None else time.monotonic()) - t0) * 1000, 2)
