"""One QEMU process and its QMP connection: launch, pause, save and load device state.

Guest RAM is a file on tmpfs (`memory-backend-file`, `share=on`) and the `x-ignore-shared`
migration capability is on at both ends, so a migration stream holds only device state
(well under a megabyte): saving a running VM is "stop, write device state, copy the RAM
file and the disk overlay"; loading is "start QEMU on copies of those files with
`-incoming defer`, read the device state, continue". Nothing boots.

The QMP and guest-agent sockets are bound by the host and handed to QEMU as listening
file descriptors, so the host connects at once, with no polling for a socket to appear.
QMP serves one client at a time: each `QemuProcess` keeps exactly one `QMPClient`.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from qemu.qmp import EventListener, QMPClient, QMPError

from cua.errors import InternalError, SandboxCrashed, Timeout

__all__ = [
    "Accel",
    "LaunchSpec",
    "QemuProcess",
    "copy_sparse",
    "probe_accel",
    "qemu_binary",
    "reap_stale",
    "runtime_dir",
]

Accel = Literal["kvm", "tcg"]
AGENT_PORT_NAME = "cua.agent"
#: QEMU device id of the agent's virtio-serial port (named in VSERPORT_CHANGE events).
AGENT_DEVICE_ID = "agentport"


def qemu_binary() -> str:
    path = os.environ.get("CUA_QEMU") or shutil.which("qemu-system-x86_64")
    if not path:
        raise InternalError("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)")
    return path


def runtime_dir() -> Path:
    """Where RAM files, overlays and snapshots live: tmpfs, so that copies are memory copies."""
    env = os.environ.get("CUA_VM_RUNTIME")
    root = Path(env) if env else (Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir()))
    path = root / "cua-vm"
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- accelerator probe ---

_accel_cache: dict[str, Accel] = {}


def _probe_cache_file(kernel: Path) -> Path:
    root = os.environ.get("CUA_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "cua"
    version = subprocess.run([qemu_binary(), "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    st = kernel.stat()
    key = f"{os.uname().release}|{version}|{kernel.name}|{st.st_size}"
    return base / "vm-accel" / "".join(c if c.isalnum() or c in ".-_" else "_" for c in key)


def probe_accel(kernel: Path, *, timeout: float = 15.0) -> Accel:
    """"kvm" when the guest kernel actually boots under KVM here, else "tcg".

    Boots `kernel` under KVM with no root disk: a working KVM reaches the kernel's
    "unable to mount root" panic in about a second, and with `panic=-1 -no-reboot`
    QEMU then exits. Nested KVM can open /dev/kvm fine and still hang inside the guest's
    boot, so the probe has a timeout and anything but that panic means TCG. Cached per
    host kernel, QEMU version and guest kernel, on disk; `CUA_VM_ACCEL=kvm|tcg` overrides.
    """
    forced = os.environ.get("CUA_VM_ACCEL")
    if forced in ("kvm", "tcg"):
        return forced  # type: ignore[return-value]
    if (hit := _accel_cache.get(str(kernel))) is not None:
        return hit
    cache = _probe_cache_file(kernel)
    if cache.is_file() and (text := cache.read_text().strip()) in ("kvm", "tcg"):
        _accel_cache[str(kernel)] = text  # type: ignore[assignment]
        return text  # type: ignore[return-value]
    result: Accel = "tcg"
    if os.access("/dev/kvm", os.R_OK | os.W_OK):
        argv = [qemu_binary(), "-accel", "kvm", "-cpu", "host", "-nodefaults", "-display", "none", "-m", "256",
                "-no-reboot", "-serial", "stdio", "-kernel", str(kernel),
                "-append", "console=ttyS0 panic=-1 root=/dev/cua-probe-none"]
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
            if b"Kernel panic" in proc.stdout or b"VFS:" in proc.stdout:
                result = "kvm"
        except subprocess.TimeoutExpired:
            result = "tcg"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(result)
    _accel_cache[str(kernel)] = result
    return result


# --- file copies ---

def copy_sparse(src: Path, dst: Path) -> int:
    """Copy a file, skipping holes (a RAM file holds only the pages the guest touched).

    Uses copy_file_range between data extents, so on tmpfs it is one memory copy of the
    data. Returns the bytes copied.
    """
    copied = 0
    tmp = dst.with_name(dst.name + ".part")
    with open(src, "rb") as fin, open(tmp, "wb") as fout:
        size = os.fstat(fin.fileno()).st_size
        os.ftruncate(fout.fileno(), size)
        offset = 0
        while offset < size:
            try:
                start = os.lseek(fin.fileno(), offset, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # only a hole remains
                    break
                raise
            end = os.lseek(fin.fileno(), start, os.SEEK_HOLE)
            pos = start
            while pos < end:
                n = os.copy_file_range(fin.fileno(), fout.fileno(), end - pos, pos, pos)
                if n == 0:
                    break
                pos += n
            copied += end - start
            offset = end
    tmp.rename(dst)
    return copied


# --- one QEMU process ---

@dataclass
class LaunchSpec:
    """Everything one QEMU process needs. Paths are owned by the caller."""

    kernel: Path
    initrd: Path
    cmdline: str
    overlay: Path
    ram_file: Path
    workdir: Path
    memory_mb: int = 512
    cpus: int = 1
    accel: Accel = "tcg"
    incoming: bool = False
    #: Map `ram_file` privately (copy-on-write): a VM started from a snapshot's RAM file
    #: without copying it; its writes never reach the file.
    ram_private: bool = False
    extra_args: list[str] = field(default_factory=list)

    @property
    def qmp_path(self) -> Path:
        return self.workdir / "qmp.sock"

    @property
    def agent_path(self) -> Path:
        return self.workdir / "agent.sock"

    @property
    def console_path(self) -> Path:
        return self.workdir / "console.log"


def _die_with_parent() -> None:
    """In the forked child before exec: QEMU gets SIGKILL when the process that started it
    dies, so a crashed host process leaves no VM running."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def reap_stale(root: Path) -> list[Path]:
    """Delete runtime folders whose owner process is gone (RAM files on tmpfs are memory)."""
    removed = []
    for owner in root.glob("*/owner.pid"):
        try:
            pid = int(owner.read_text().strip())
        except (OSError, ValueError):
            continue
        if not Path(f"/proc/{pid}").exists():
            shutil.rmtree(owner.parent, ignore_errors=True)
            removed.append(owner.parent)
    return removed


def _listening_socket(path: Path) -> socket.socket:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(4)
    return sock


class QemuProcess:
    """A running QEMU with its one QMP client. Create with `await QemuProcess.launch(spec)`."""

    def __init__(self, spec: LaunchSpec, proc: asyncio.subprocess.Process, qmp: QMPClient) -> None:
        self.spec = spec
        self.proc = proc
        self.qmp = qmp
        self._events = EventListener(("MIGRATION", "VSERPORT_CHANGE", "SHUTDOWN", "RESET", "STOP", "RESUME"))
        self.qmp.register_listener(self._events)
        self.agent_port_open: bool | None = None
        #: STOP events read while waiting for a migration (`save_live` reports when the guest stopped).
        self._seen_stops: list[Any] = []
        #: QEMU's own figures of the last live save (downtime ms, RAM passes).
        self.last_migration: dict[str, Any] = {}
        self._agent_port_listeners: list[asyncio.Queue[bool]] = []
        #: SIGSTOPped by `freeze()`: answers no QMP until killed.
        self._frozen = False

    @classmethod
    async def launch(cls, spec: LaunchSpec, *, timeout: float = 30.0, ignore_shared: bool = True) -> "QemuProcess":
        spec.workdir.mkdir(parents=True, exist_ok=True)
        qmp_sock = _listening_socket(spec.qmp_path)
        agent_sock = _listening_socket(spec.agent_path)
        try:
            argv = cls.argv(spec, qmp_fd=qmp_sock.fileno(), agent_fd=agent_sock.fileno())
            (spec.workdir / "argv.json").write_text(json.dumps(argv))
            stderr = open(spec.workdir / "qemu.stderr", "wb")
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
                    pass_fds=(qmp_sock.fileno(), agent_sock.fileno()), start_new_session=True,
                    preexec_fn=_die_with_parent)
            finally:
                stderr.close()
        finally:
            # QEMU holds its own copies of the listening sockets now.
            qmp_sock.close()
            agent_sock.close()
        qmp = QMPClient(f"cua-vm-{spec.workdir.name}")
        try:
            await asyncio.wait_for(qmp.connect(str(spec.qmp_path)), timeout)
        except (QMPError, OSError, asyncio.TimeoutError) as exc:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise SandboxCrashed(f"QEMU did not start: {_tail(spec.workdir / 'qemu.stderr')}",
                                 details={"argv": argv}) from exc
        self = cls(spec, proc, qmp)
        await self.execute("migrate-set-capabilities", {"capabilities": [
            {"capability": "x-ignore-shared", "state": ignore_shared},
            {"capability": "events", "state": True},
        ]})
        return self

    @staticmethod
    def argv(spec: LaunchSpec, *, qmp_fd: int, agent_fd: int) -> list[str]:
        cpu = "host" if spec.accel == "kvm" else "qemu64"
        argv = [
            qemu_binary(), "-nodefaults", "-no-user-config", "-display", "none", "-vga", "none",
            "-accel", spec.accel, "-cpu", cpu, "-smp", str(spec.cpus),
            "-object", f"memory-backend-file,id=mem,size={spec.memory_mb}M,mem-path={spec.ram_file},"
                       f"share={'off' if spec.ram_private else 'on'}",
            "-machine", "pc,memory-backend=mem",
            "-m", f"{spec.memory_mb}M",
            "-kernel", str(spec.kernel), "-initrd", str(spec.initrd), "-append", spec.cmdline,
            "-drive", f"file={spec.overlay},if=none,id=disk0,format=qcow2,cache=unsafe,discard=unmap",
            "-device", "virtio-blk-pci,drive=disk0",
            "-device", "virtio-serial-pci,id=vser0",
            "-chardev", f"socket,id=agent,fd={agent_fd},server=on,wait=off",
            "-device", f"virtserialport,bus=vser0.0,chardev=agent,id={AGENT_DEVICE_ID},name={AGENT_PORT_NAME}",
            "-chardev", f"file,id=console,path={spec.console_path}",
            "-serial", "chardev:console",
            "-chardev", f"socket,id=qmp,fd={qmp_fd},server=on,wait=off",
            "-mon", "chardev=qmp,mode=control",
            "-nic", "none",
            "-rtc", "base=utc,clock=vm",
            "-no-reboot",  # a guest that reboots (or panics, with panic=-1) ends QEMU: a crash
        ]
        if spec.incoming:
            argv += ["-S", "-incoming", "defer"]
        return argv + spec.extra_args

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def exit_status(self) -> str | None:
        """None while QEMU runs; else how it ended ("status 1", "killed by SIGKILL",
        "exited", for one that is dead but not reaped yet)."""
        code = self.proc.returncode
        if code is None:
            try:
                with open(f"/proc/{self.proc.pid}/stat", "rb") as f:
                    stat = f.read()
            except FileNotFoundError:
                return "exited"
            fields = stat[stat.rindex(b")") + 2:].split()
            # a zombie, or exiting (PF_EXITING: its sockets close before it is a zombie)
            if fields[0] not in (b"Z", b"X") and not int(fields[6]) & 0x4:
                return None
            return "exited"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"status {code}"

    def stderr_tail(self, lines: int = 5) -> str:
        return _tail(self.spec.workdir / "qemu.stderr", lines)

    async def execute(self, cmd: str, args: dict[str, Any] | None = None, *, timeout: float = 30.0) -> Any:
        if not self.alive:
            raise SandboxCrashed(f"QEMU exited ({self.proc.returncode}): {_tail(self.spec.workdir / 'qemu.stderr')}")
        try:
            return await asyncio.wait_for(self.qmp.execute(cmd, args), timeout)
        except asyncio.TimeoutError as exc:
            raise Timeout(f"QMP {cmd} took more than {timeout:g} s") from exc
        except QMPError as exc:
            if not self.alive or self.qmp.runstate.name != "RUNNING":
                raise SandboxCrashed(f"QEMU went away during {cmd}: {exc}") from exc
            raise InternalError(f"QMP {cmd} failed: {exc}", details={"command": cmd}) from exc

    async def status(self) -> str:
        return str((await self.execute("query-status"))["status"])

    async def _wait_migration(self, timeout: float) -> None:
        """Wait for this side's migration to finish; the MIGRATION events say when."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout(f"migration did not finish within {timeout:g} s")
            try:
                event: Any = await asyncio.wait_for(self._events.get(), min(left, 1.0))
            except asyncio.TimeoutError:
                # Events can be missed only if QEMU died; check, and poll the state once.
                if not self.alive:
                    raise SandboxCrashed("QEMU exited during migration") from None
                info = await self.execute("query-migrate")
                state = info.get("status")
                if state == "completed":
                    return
                if state in ("failed", "cancelled"):
                    raise InternalError(f"migration {state}: {info.get('error-desc', '')}")
                continue
            self._note_event(event)
            if event["event"] == "STOP":
                self._seen_stops.append(event)
            if event["event"] == "MIGRATION":
                state = event["data"]["status"]
                if state == "completed":
                    return
                if state in ("failed", "cancelled"):
                    info = await self.execute("query-migrate")
                    raise InternalError(f"migration {state}: {info.get('error-desc', '')}")

    def _note_event(self, event: Any) -> None:
        if event["event"] == "VSERPORT_CHANGE":
            self.agent_port_open = bool(event["data"].get("open"))

    def drain_events(self) -> list[Any]:
        events = list(self._events.clear())
        for event in events:
            self._note_event(event)
        return events

    async def wait_status(self, wanted: set[str], timeout: float = 30.0) -> str:
        """Poll query-status until it is one of `wanted` (QMP has no event for every state)."""
        deadline = time.monotonic() + timeout
        while True:
            state = await self.status()
            if state in wanted:
                return state
            if time.monotonic() > deadline:
                raise Timeout(f"VM stayed {state!r}, wanted {sorted(wanted)}")
            await asyncio.sleep(0.005)  # polling a state change QMP does not announce

    async def wait_chardev_connected(self, label: str, timeout: float = 10.0) -> None:
        """Wait until QEMU has accepted the host's connection to a server chardev.

        A connect() on the listening socket returns before QEMU's main loop accepts it;
        loading device state before that would tell the guest its port's host side closed.
        """
        deadline = time.monotonic() + timeout
        while True:
            for dev in await self.execute("query-chardev"):
                if dev["label"] == label and not str(dev.get("filename", "")).startswith("disconnected"):
                    return
            if time.monotonic() > deadline:
                raise Timeout(f"QEMU did not accept the {label} connection within {timeout:g} s")
            await asyncio.sleep(0.002)  # QEMU announces no event for a chardev connection

    async def save_device_state(self, path: Path, *, timeout: float = 60.0) -> None:
        """Stop the VM and write its device state to `path` (RAM stays in the shared file).

        The VM is left stopped, its disk flushed: the caller copies the RAM file and the
        overlay, then calls `resume()`.
        """
        self.drain_events()
        await self.execute("stop")
        await self.execute("migrate", {"uri": "exec:cat > " + shlex.quote(str(path))})
        await self._wait_migration(timeout)

    async def resume(self) -> None:
        await self._cont()
        await self.wait_status({"running"})

    async def set_ignore_shared(self, on: bool) -> None:
        await self.execute("migrate-set-capabilities", {"capabilities": [
            {"capability": "x-ignore-shared", "state": on}]})

    async def save_live(self, path: Path, *, downtime_ms: int = 20, timeout: float = 300.0) -> float:
        """Write RAM and device state to `path` while the guest runs (a precopy migration
        into a file, RAM in the stream): QEMU tracks the pages the guest dirties and
        stops it only for the last of them and the device state, keeping that stop under
        `downtime_ms` when the guest lets it. The VM is left stopped (its disk flushed)
        for the caller to copy the overlay and `resume()`. Returns the wall time (QEMU's
        event clock) at which the guest stopped."""
        self.drain_events()
        await self.set_ignore_shared(False)
        try:
            await self.execute("migrate-set-parameters", {"downtime-limit": downtime_ms,
                                                          "max-bandwidth": 64 * 2**30})
            await self.execute("migrate", {"uri": "exec:cat > " + shlex.quote(str(path))})
            await self._wait_migration(timeout)
            info = await self.execute("query-migrate")
            self.last_migration = {k: info.get(k) for k in ("downtime", "total-time", "setup-time")}
            self.last_migration["ram"] = {k: (info.get("ram") or {}).get(k)
                                          for k in ("transferred", "dirty-sync-count", "pages-per-second")}
        finally:
            if self.alive:
                await self.set_ignore_shared(True)
        stopped = [e for e in self.drain_events() + self._seen_stops if e["event"] == "STOP"]
        self._seen_stops = []
        if stopped:
            stamp = stopped[-1]["timestamp"]
            return float(stamp["seconds"]) + float(stamp["microseconds"]) / 1e6
        return time.time()

    async def _cont(self) -> None:
        """`cont`, retried while a migration that reported completion is still being
        cleaned up (QEMU refuses to continue until then; seen on a loaded host)."""
        for _ in range(2000):
            try:
                await self.execute("cont")
                return
            except InternalError:
                info = await self.execute("query-migrate")
                if info.get("status") != "completed":
                    raise
            await asyncio.sleep(0.002)  # QEMU's cleanup runs in its main loop; no event marks its end
        await self.execute("cont")

    async def resume_timed(self) -> float:
        """`resume()`, returning QEMU's event time of the RESUME (to pair with a STOP)."""
        self.drain_events()
        await self._cont()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                event: Any = await asyncio.wait_for(self._events.get(), 1.0)
            except asyncio.TimeoutError:
                if await self.status() == "running":
                    return time.time()
                continue
            self._note_event(event)
            if event["event"] == "RESUME":
                stamp = event["timestamp"]
                return float(stamp["seconds"]) + float(stamp["microseconds"]) / 1e6
        raise Timeout("the VM did not resume within 30 s")

    async def load_device_state(self, path: Path, *, timeout: float = 60.0) -> None:
        """Load a saved device state into this `incoming` process; the guest stays paused
        (its clocks stopped) until `resume()`, so a loaded standby can wait any time."""
        self.drain_events()
        await self.execute("migrate-incoming", {"uri": "exec:cat " + shlex.quote(str(path))})
        await self._wait_migration(timeout)
        # An incoming VM started with -S stays paused, and a `cont` sent before it says
        # so is ignored: wait for the paused state first.
        await self.wait_status({"paused", "prelaunch", "postmigrate"}, timeout)

    def freeze(self) -> None:
        """SIGSTOP the process: the guest uses no more CPU, at once, and nothing of it
        changes; `kill()` it later, off the caller's time."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGSTOP)
            self._frozen = True

    async def kill(self) -> None:
        """Stop QEMU now (no guest shutdown: the state that matters is in snapshots)."""
        if self._frozen and self.proc.returncode is None:
            # a stopped QEMU answers no QMP: kill it before hanging up
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        # A QEMU that already died leaves its QMP reader at EOF, which disconnect() re-raises.
        with contextlib.suppress(QMPError, OSError, EOFError, asyncio.TimeoutError):
            await asyncio.wait_for(self.qmp.disconnect(), 2.0)
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 10.0)

    def console_tail(self, lines: int = 20) -> str:
        return _tail(self.spec.console_path, lines)


def _tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])
