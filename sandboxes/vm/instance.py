"""One running VM: a QEMU process, its private files, and its guest agent connection.

A `VMSandbox` owns one current instance; restoring a snapshot swaps in another (started
from copies of the snapshot's files), and a standby instance may wait, loaded with
copies already, for the next restore. An instance watches its own death: QEMU exiting,
or the guest closing the agent's virtio-serial port (the agent was killed: QEMU reports
VSERPORT_CHANGE), fails every pending agent call with SandboxCrashed at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qemu.qmp import EventListener
from qemu.qmp.events import ListenerError

from cua.errors import CuaError, SandboxCrashed, Timeout
from cua.sandboxes.guest.client import GuestClient
from cua.sandboxes.vm.qemu import AGENT_DEVICE_ID, LaunchSpec, QemuProcess
from cua.sandboxes.vm.snapshots import SnapshotFiles

__all__ = ["Instance", "complete_live_snapshot"]


def create_overlay(base: Path, overlay: Path) -> None:
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", str(base), str(overlay)],
                   check=True, capture_output=True, timeout=60)


class Instance:
    """Build with `boot()` or `prepare()`; a prepared instance runs after `activate()`."""

    def __init__(self, spec: LaunchSpec, qemu: QemuProcess) -> None:
        self.spec = spec
        self.qemu = qemu
        self.client: GuestClient | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._watch: asyncio.Task[None] | None = None
        self.died: str | None = None
        self._on_death: Callable[[str], None] | None = None

    @property
    def dir(self) -> Path:
        return self.spec.workdir

    # --- starting ---

    @classmethod
    async def boot(cls, spec: LaunchSpec, base_disk: Path, *, timeout: float) -> "Instance":
        """Cold boot: a fresh overlay on the base image, then wait for the agent's hello."""
        spec.workdir.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(create_overlay, base_disk, spec.overlay)
        self = cls(spec, await QemuProcess.launch(spec))
        try:
            reader, writer = await asyncio.open_unix_connection(str(spec.agent_path), limit=1 << 22)
            self._writer = writer
            self.client = GuestClient(reader, writer, name=f"vm:{spec.workdir.name}", on_lost=self._lost,
                                      explain=self._explain_loss)
            self._start_watch()
            await self._wait_hello(timeout)
        except BaseException:
            await self.destroy()
            raise
        return self

    async def _wait_hello(self, timeout: float) -> None:
        """Wait for the agent's hello, failing early if QEMU or the agent dies."""
        assert self.client is not None
        deadline = time.monotonic() + timeout
        while self.client.hello is None:
            if self.died:
                raise SandboxCrashed(f"VM died while booting: {self.died}\n{self.qemu.console_tail()}")
            if time.monotonic() > deadline:
                raise Timeout(f"the guest agent did not answer within {timeout:g} s of boot",
                              details={"console": self.qemu.console_tail()})
            # The client resolves its hello future internally; poll its public attribute.
            await asyncio.sleep(0.05)

    @classmethod
    async def prepare(cls, spec: LaunchSpec, snap: SnapshotFiles, *, timeout: float) -> "Instance":
        """A QEMU loaded with a snapshot, paused, on a copy of its overlay and a private
        (copy-on-write) mapping of its RAM file: nothing of the RAM is copied, the VM's
        writes stay its own, and the snapshot's files are never written. The agent
        socket is connected first (so the guest never sees the host side of its port
        close: no reconnect, no second hello), then the device state is loaded, so that
        `activate` is only "continue": a paused guest's clocks stand still, so the
        state it runs on from is the snapshot's however long it waited."""
        spec.workdir.mkdir(parents=True, exist_ok=True)
        spec.ram_file, spec.ram_private = snap.ram, True
        self: Instance | None = None
        try:
            await asyncio.to_thread(shutil.copyfile, snap.overlay, spec.overlay)
            self = cls(spec, await QemuProcess.launch(spec))
            reader, writer = await asyncio.open_unix_connection(str(spec.agent_path), limit=1 << 22)
            self._writer = writer
            await self.qemu.wait_chardev_connected("agent")
            self.client = GuestClient(reader, writer, name=f"vm:{spec.workdir.name}", on_lost=self._lost,
                                      explain=self._explain_loss)
            await self.qemu.load_device_state(snap.devstate, timeout=timeout)
        except BaseException:
            if self is not None:
                await self.destroy()
            else:
                shutil.rmtree(spec.workdir, ignore_errors=True)
            raise
        return self

    async def activate(self, *, timeout: float) -> None:
        """Run a prepared instance on from its snapshot; returns once its guest is healthy
        (each answer within `timeout`).

        A ping proves only that the agent's event loop runs. A guest restored under TCG
        has been seen with corrupted kernel memory: it answered a ping and then hung on
        the first call that needed its X server. So the X server must answer too (a
        window listing); a guest that fails that is a crash."""
        self._start_watch()
        await self.qemu.resume()
        assert self.client is not None
        await self.client.ping(timeout=timeout)
        try:
            await self.client.call("windows", timeout=timeout)
        except Timeout as exc:
            self._die(f"the guest answered a ping but its X server not within {timeout:g} s")
            raise SandboxCrashed(f"{self.client.name}: {self.died}",
                                 details={"console": self.qemu.console_tail()}) from exc

    def freeze(self) -> None:
        """Stop the guest at once (SIGSTOP), to `destroy()` off the caller's time: a
        restore's old VM, which would otherwise compete for the CPU with the new one."""
        self._on_death = None
        self.qemu.freeze()

    def on_death(self, callback: Callable[[str], None]) -> None:
        self._on_death = callback
        if self.died:
            callback(self.died)

    # --- dying ---

    def _start_watch(self) -> None:
        if self._watch is None:
            self._watch = asyncio.create_task(self._watch_loop(), name=f"vm-watch-{self.dir.name}")

    async def _watch_loop(self) -> None:
        listener = EventListener(("VSERPORT_CHANGE", "SHUTDOWN"))
        self.qemu.qmp.register_listener(listener)
        exited = asyncio.create_task(self.qemu.proc.wait())
        event: asyncio.Task[Any] | None = None
        try:
            while True:
                event = asyncio.create_task(listener.get())
                done, _ = await asyncio.wait({exited, event}, return_when=asyncio.FIRST_COMPLETED)
                if exited in done:
                    self._die(self._explain_loss("QEMU exited"))
                    return
                msg = event.result()
                if msg["event"] == "VSERPORT_CHANGE" and msg["data"].get("id") == AGENT_DEVICE_ID \
                        and not msg["data"].get("open"):
                    self._die("the guest agent closed its port (killed or exited)")
                    return
                if msg["event"] == "SHUTDOWN":
                    self._die(self._with_panic(f"the guest shut down ({msg['data'].get('reason', 'no reason given')})"))
                    return
        finally:
            exited.cancel()
            if event is not None:
                event.cancel()
            with contextlib.suppress(ListenerError):
                self.qemu.qmp.remove_listener(listener)

    def _with_panic(self, reason: str) -> str:
        """The reason, with the guest kernel's panic line when its console has one (the
        guest boots with panic=-1 and QEMU with -no-reboot, so a panic ends QEMU)."""
        panic = next((line for line in reversed(self.qemu.console_tail(200).splitlines())
                      if "Kernel panic" in line), None)
        return f"the guest kernel panicked: {panic.strip()}" if panic else reason

    def _lost(self, reason: str) -> None:
        self._die(reason)

    def _explain_loss(self, reason: str) -> str:
        """The agent's connection closed: say so only if QEMU still runs. A killed QEMU
        closes its sockets as it exits, so the connection's end comes before the exit
        status (the process is a zombie then): look at the process, not the socket. A
        panicking guest closes the port before QEMU exits too (CI saw "guest agent closed
        the connection" above a console that showed the panic), so the console is read
        either way."""
        status = self.qemu.exit_status()
        if status is None:  # exiting, or not yet: a panic on the console is still the cause
            return self._with_panic(reason)
        tail = self.qemu.stderr_tail()
        return self._with_panic(f"QEMU exited ({status})" + (f": {tail}" if tail else ""))

    def _die(self, reason: str) -> None:
        if self.died:
            return
        self.died = reason
        # Fail the agent calls in flight now: a dead agent behind a live virtio-serial port
        # would otherwise leave them waiting for their timeouts.
        if self._writer is not None:
            self._writer.transport.abort()
        if self._on_death is not None:
            self._on_death(reason)

    async def destroy(self) -> None:
        """Kill QEMU and delete the instance's files (RAM file, overlay, sockets)."""
        self._on_death = None
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, CuaError):
                await self._watch
        if self.client is not None:
            with contextlib.suppress(CuaError, OSError):
                await self.client.close()
        elif self._writer is not None:
            self._writer.transport.abort()
        await self.qemu.kill()
        await asyncio.to_thread(shutil.rmtree, self.dir, True)


async def complete_live_snapshot(spec: LaunchSpec, stream: Path, snap: SnapshotFiles, *, timeout: float) -> None:
    """Turn a live-saved migration stream (RAM and devices, see `QemuProcess.save_live`)
    into the snapshot's usual files, off the guest's time: a QEMU that never runs loads
    the stream into a new RAM file at `snap.ram` (memory-backend-file: the load writes
    the file), then saves its device state without RAM (`x-ignore-shared`) to
    `snap.devstate`. The agent socket is connected first, so the saved state says a host
    is attached, as a restore's will."""
    spec.workdir.mkdir(parents=True, exist_ok=True)
    qemu: QemuProcess | None = None
    writer: asyncio.StreamWriter | None = None
    try:
        await asyncio.to_thread(shutil.copyfile, snap.overlay, spec.overlay)
        qemu = await QemuProcess.launch(spec, ignore_shared=False)
        _, writer = await asyncio.open_unix_connection(str(spec.agent_path))
        await qemu.wait_chardev_connected("agent")
        qemu.drain_events()
        await qemu.execute("migrate-incoming", {"uri": "exec:cat " + shlex.quote(str(stream))})
        await qemu._wait_migration(timeout)
        await qemu.wait_status({"paused", "prelaunch", "postmigrate"}, timeout)
        await qemu.set_ignore_shared(True)
        qemu.drain_events()
        await qemu.execute("migrate", {"uri": "exec:cat > " + shlex.quote(str(snap.devstate))})
        await qemu._wait_migration(timeout)
    finally:
        if writer is not None:
            writer.transport.abort()
        if qemu is not None:
            await qemu.kill()
        await asyncio.to_thread(shutil.rmtree, spec.workdir, True)
        stream.unlink(missing_ok=True)
