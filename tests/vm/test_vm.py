"""VM sandbox on real QEMU (TCG), booted once per module and reused through snapshots.

The image is the `desktop` recipe from vm-images/, built through `cua vm build`'s code
path when it is not in the cache yet (a first build takes a few minutes). `check_sandbox`
and the observation checks the VM shares with the desktop kind are in test_guest_sandbox.py.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal

import pytest
import pytest_asyncio
from PIL import ImageChops

from cua.actions import Drag, Key, Point, Type
from cua.conformance import image_of
from cua.errors import BadRequest, SandboxCrashed, SnapshotUnusable, UnknownSnapshot
from cua.observation import Observation, ObserveOptions
from cua.sandbox import SandboxEvent, create_sandbox
from cua.sandboxes.vm import VMConfig, VMSandbox
from cua.state import CommandQuery, FileQuery, UrlQuery, WindowsQuery

if shutil.which("qemu-system-x86_64") is None or shutil.which("qemu-img") is None:
    pytest.skip("QEMU is not installed (apt-get install qemu-system-x86 qemu-utils)", allow_module_level=True)

pytestmark = [pytest.mark.vm, pytest.mark.slow, pytest.mark.timeout(1500),
              pytest.mark.asyncio(loop_scope="module")]

PNG = ObserveOptions(format="png")
CONFIG = VMConfig(accel="tcg", apps=[["xterm", "-geometry", "80x20+60+60"]],
                  screen={"width": 1024, "height": 768}, boot_timeout=600, app_timeout=300)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def vm() -> VMSandbox:
    sandbox = await create_sandbox("vm", CONFIG, sandbox_id="test-vm")
    assert isinstance(sandbox, VMSandbox)
    try:
        yield sandbox
    finally:
        await sandbox.close()


def _same_pixels(a: Observation, b: Observation) -> bool:
    return ImageChops.difference(image_of(a).convert("RGB"), image_of(b).convert("RGB")).getbbox() is None


async def _xterm(sb: VMSandbox) -> dict:
    [result] = await sb.query([WindowsQuery()])
    assert result.ok, result
    terms = [w for w in result.value["windows"] if w["class"] == "XTerm"]
    assert len(terms) == 1, result.value
    return terms[0]


async def _exists(sb: VMSandbox, path: str) -> bool:
    [result] = await sb.query([FileQuery(path=path, mode="exists")])
    assert result.ok, result
    return bool(result.value)


async def _gone(pid: int) -> None:
    for _ in range(300):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    return
        except FileNotFoundError:
            return
        await asyncio.sleep(0.1)  # the replaced VM is killed in the background
    raise AssertionError(f"QEMU {pid} of the replaced VM still runs")


async def _run_in_xterm(sb: VMSandbox, line: str, made: str) -> None:
    """Type a shell line into the xterm and wait until the file it writes exists."""
    await sb.act(Type(text=line + "\n"))
    for _ in range(600):
        if await _exists(sb, made):
            return
        await asyncio.sleep(0.1)  # the guest's shell runs on an emulated CPU; poll its effect
    raise AssertionError(f"{made} never appeared after typing {line!r}")


async def test_boots_under_tcg_with_its_apps(vm: VMSandbox) -> None:
    info = vm.info()
    assert info.kind == "vm" and info.status == "ready" and vm.alive
    assert info.details["accel"] == "tcg"
    assert {"snapshot", "fork", "query"} <= set(info.capabilities)
    assert {"file", "command", "windows"} <= set(info.queries)
    assert info.timings_ms["boot"] > 0 and info.timings_ms["snapshot"] > 0
    obs = await vm.observe(PNG)
    assert obs.screenshot is not None and (obs.frame.width, obs.frame.height) == (1024, 768)
    term = await _xterm(vm)
    assert term["width"] > 100 and term["height"] > 100
    [who] = await vm.query([CommandQuery(argv=["id", "-un"])])
    assert who.ok and who.value["stdout"].strip() == "user"
    # the guest's loopback is up: a server on 127.0.0.1 answers (the image once lacked `ip`)
    echo = ("import socket; s = socket.create_server(('127.0.0.1', 0)); c = socket.create_connection(s.getsockname());"
            " a, _ = s.accept(); c.sendall(b'ping'); print(a.recv(4).decode())")
    [loop] = await vm.query([CommandQuery(argv=["python3", "-c", echo])])
    assert loop.ok and loop.value["stdout"].strip() == "ping", loop.value
    [url] = await vm.query([UrlQuery()])
    assert not url.ok and url.error == "unsupported"


async def test_restore_brings_back_memory_disk_and_screen(vm: VMSandbox) -> None:
    await vm.act(Key(keys=["Control", "l"]))  # a clean terminal, so the screen is comparable
    before = await vm.observe(PNG)
    window = await _xterm(vm)
    ref = await vm.snapshot()
    assert ref.kind == "vm" and ref.size_bytes > 0

    await _run_in_xterm(vm, "echo written > made.txt", "made.txt")
    # Drag the xterm by its title bar (just above the client area).
    grab = Point(x=window["x"] + window["width"] // 2, y=window["y"] - 8)
    await vm.act(Drag(path=[grab, Point(x=grab.x + 150, y=grab.y + 90)]))
    moved = await _xterm(vm)
    assert (moved["x"], moved["y"]) != (window["x"], window["y"]), "the drag did not move the window"
    assert not _same_pixels(before, await vm.observe(PNG))

    old_pid = vm.info().details["qemu_pid"]
    restored = await vm.restore(ref, observe=PNG)
    assert restored.timings_ms["restore"] > 0 and vm.info().timings_ms["restore"] > 0
    assert vm.info().details["qemu_pid"] != old_pid
    await _gone(old_pid)  # the replaced VM, stopped during the restore, is killed after it
    assert not await _exists(vm, "made.txt"), "the file written after the snapshot survived the restore"
    back = await _xterm(vm)
    assert (back["x"], back["y"], back["id"]) == (window["x"], window["y"], window["id"])
    assert _same_pixels(before, restored), "the screen after restore differs from the snapshot's"

    # The same snapshot restores again (from the standby VM prepared in the background).
    await _run_in_xterm(vm, "echo again > again.txt", "again.txt")
    await vm.restore(ref)
    assert not await _exists(vm, "again.txt")
    await vm.delete_snapshot(ref)
    with pytest.raises(UnknownSnapshot):
        await vm.restore(ref)


async def test_reset_returns_to_the_booted_desktop(vm: VMSandbox) -> None:
    await _run_in_xterm(vm, "echo x > before_reset.txt", "before_reset.txt")
    obs = await vm.reset()
    assert obs.step == 0 and obs.screenshot is not None
    assert not await _exists(vm, "before_reset.txt")
    assert (await _xterm(vm))["width"] > 100


async def test_fork_gives_two_independent_vms(vm: VMSandbox) -> None:
    ref = await vm.snapshot()
    events: list[SandboxEvent] = []
    child = await vm.fork(ref, sandbox_id="test-vm-child", emit=events.append)
    try:
        assert child.alive and child.info().timings_ms["fork"] > 0
        assert child.info().details["qemu_pid"] != vm.info().details["qemu_pid"]
        await _run_in_xterm(child, "echo child > child.txt", "child.txt")
        await _run_in_xterm(vm, "echo parent > parent.txt", "parent.txt")
        assert not await _exists(vm, "child.txt")
        assert not await _exists(child, "parent.txt")
        [text] = await child.query([FileQuery(path="child.txt")])
        assert text.value == "child\n"
        # The fork's reset goes back to the snapshot it was forked from.
        await child.reset()
        assert not await _exists(child, "child.txt")
    finally:
        await child.close()
    assert not child.alive and events == []  # a close is not a death
    assert vm.alive
    await vm.delete_snapshot(ref)


async def _crash_fork(vm: VMSandbox, name: str) -> tuple[VMSandbox, list[SandboxEvent], object]:
    ref = await vm.snapshot()
    events: list[SandboxEvent] = []
    child = await vm.fork(ref, sandbox_id=name, emit=events.append)
    return child, events, ref


async def test_killed_guest_agent_gives_sandbox_crashed(vm: VMSandbox) -> None:
    child, events, ref = await _crash_fork(vm, "test-vm-agent-killed")
    try:
        # The command's parent is the guest agent: it kills the agent mid-query.
        with pytest.raises(SandboxCrashed):
            await asyncio.wait_for(child.query([CommandQuery(argv=["sh", "-c", "kill -9 $PPID"])]), 120)
        with pytest.raises(SandboxCrashed):
            await asyncio.wait_for(child.observe(), 30)
        assert not child.alive and child.info().status == "crashed"
        assert [e.event for e in events] == ["died"]
    finally:
        await child.close()
    assert vm.alive
    await vm.delete_snapshot(ref)  # type: ignore[arg-type]


async def test_dead_qemu_gives_sandbox_crashed(vm: VMSandbox) -> None:
    child, events, ref = await _crash_fork(vm, "test-vm-qemu-killed")
    try:
        os.kill(child.info().details["qemu_pid"], signal.SIGKILL)
        with pytest.raises(SandboxCrashed) as info:
            await asyncio.wait_for(_observe_until_crash(child), 60)
        assert [e.event for e in events] == ["died"]
        # the cause, not its symptom ("guest agent closed the connection")
        assert "QEMU exited" in info.value.message, info.value.message
        assert "QEMU exited" in events[0].data["reason"], events[0].data
    finally:
        await child.close()
    await vm.delete_snapshot(ref)  # type: ignore[arg-type]


async def _observe_until_crash(sb: VMSandbox) -> Observation:
    while True:  # the kill lands asynchronously; the first observe may still be answered
        await sb.observe()


async def test_reset_honours_its_options(vm: VMSandbox) -> None:
    """`files` are written as the desktop user and the apps restarted; other options are refused by name."""
    with pytest.raises(BadRequest, match="bogus"):
        await vm.reset(options={"bogus": 1})
    await vm.reset(options={"files": {"notes/today.txt": "from reset\n"}})
    [text, owner] = await vm.query([FileQuery(path="notes/today.txt"),
                                    CommandQuery(argv=["stat", "-c", "%U", "notes/today.txt"])])
    assert text.value == "from reset\n" and owner.value["stdout"].strip() == "user"
    await _xterm(vm)  # the configured app is back
    await vm.reset()
    assert not await _exists(vm, "notes/today.txt"), "a plain reset keeps files of an earlier reset"


async def test_upload_and_run(vm: VMSandbox) -> None:
    data = bytes(range(256)) * 4096
    path, size = await vm.upload("bin/data.bin", data)
    assert path == "/home/user/bin/data.bin" and size == len(data)
    out = await vm.run_command(["sh", "-c", "md5sum bin/data.bin | cut -c1-32; id -un"])
    import hashlib

    assert out.stdout.split() == [hashlib.md5(data).hexdigest(), "user"]
    slow = await vm.run_command(["sleep", "60"], time_limit=2)
    assert slow.timed_out and slow.returncode is None


async def test_a_panicking_guest_kernel_is_a_crash_not_a_hang() -> None:
    """The guest boots with panic=-1 and QEMU with -no-reboot: a kernel panic ends QEMU at
    once, and the error names the panic. Before, the panicked guest hung with its agent's
    port open and every call waited out its timeout (seen right after a TCG restore).
    Here the panic is the kernel's own "unable to mount root fs", forced by a missing init
    and root device."""
    config = CONFIG.model_copy(update={"kernel_args": "rdinit=/cua-no-init root=/dev/cua-no-root", "apps": [],
                                       "boot_timeout": 900})
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    with pytest.raises(SandboxCrashed) as info:
        await create_sandbox("vm", config, sandbox_id="test-vm-panic")
    assert "kernel panicked" in info.value.message, info.value.message
    assert "Unable to mount root fs" in info.value.message, info.value.message
    assert loop.time() - t0 < 300  # a boot to the panic under TCG, not the 900 s boot timeout


async def test_a_guest_agent_that_exits_at_boot_is_a_crash_not_a_hang() -> None:
    """When the guest agent ends, the guest's init says why on the console and powers
    off, so the boot fails at once with the agent's own error. Before, the host waited
    out its whole boot timeout for a hello that never came (an agent that gave up on a
    slow Xvfb under load). Here the agent refuses a screen size it cannot parse."""
    config = CONFIG.model_copy(update={"kernel_args": "cua.screen=bogus", "apps": [], "boot_timeout": 900})
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    with pytest.raises(SandboxCrashed) as info:
        await create_sandbox("vm", config, sandbox_id="test-vm-agent-exits")
    assert "guest agent exited" in info.value.message, info.value.message
    assert "--start-x wants WIDTHxHEIGHT, got 'bogus'" in info.value.message, info.value.message
    assert loop.time() - t0 < 400  # a boot to the agent's exit under TCG, not the 900 s boot timeout


GRAB = ("from Xlib import display; import time; d = display.Display(); d.grab_server(); d.sync(); "
        "open('/tmp/x-grabbed', 'w').close(); time.sleep(100000)")


async def _hang_x_server(sb: VMSandbox) -> None:
    """Leave the guest's X server held by a client's server grab: the agent still answers
    pings, and every call that needs X waits (how a guest restored into corrupt kernel
    memory was seen to behave)."""
    await sb.run_command(["sh", "-c", f"setsid python3 -c \"{GRAB}\" </dev/null >/dev/null 2>&1 &"])
    for _ in range(300):
        if (await sb.run_command(["test", "-e", "/tmp/x-grabbed"])).returncode == 0:
            return
        await asyncio.sleep(0.1)  # the grabbing client starts on an emulated CPU
    raise AssertionError("the X server grab never began")


async def test_a_snapshot_that_restores_into_a_hung_guest_is_unusable_and_reset_heals() -> None:
    """A restored guest must answer through its X server, not only pings, or it is a
    crash: started again once from fresh copies, then SnapshotUnusable (not a call that
    waits out its timeout, and not a 'ready' sandbox that hangs on its first screenshot,
    as CI saw). A bad initial snapshot is made again by a boot, so `reset` still works.
    No standby, so every restore starts from the files."""
    config = CONFIG.model_copy(update={"standby": False, "agent_timeout": 8.0})
    sb = await create_sandbox("vm", config, sandbox_id="test-vm-hung-restore")
    assert isinstance(sb, VMSandbox)
    loop = asyncio.get_running_loop()
    try:
        assert sb.timings_ms["verify"] > 0  # create restored its initial snapshot once
        await _hang_x_server(sb)
        bad = await sb.snapshot()
        await sb.run_command(["pkill", "-f", "grab_server"])
        await _xterm(sb)  # the running guest answers through X again
        t0 = loop.time()
        with pytest.raises(SnapshotUnusable) as info:
            await sb.restore(bad)
        assert loop.time() - t0 < 90, "two tries of 8 s each, not a boot timeout"
        assert info.value.details["snapshot_id"] == bad.id and "X server" in info.value.message
        assert sb.timings_ms["restarts"] == 1 and sb.info().status == "crashed"
        await sb.reset()  # a failed restore leaves a crashed sandbox that reset brings back
        await _xterm(sb)
        # Fault injection: the initial snapshot's files replaced by the bad snapshot's.
        initial, hung = sb._initial, sb._snapshots[bad.id]
        assert initial is not None
        for name in ("devstate", "ram", "overlay.qcow2"):
            shutil.copyfile(hung.dir / name, initial.dir / name)
        obs = await sb.reset()
        assert sb.timings_ms["initial_rebuilds"] == 1 and sb.alive and obs.step == 0
        await _xterm(sb)
        await sb.reset()  # the rebuilt initial snapshot restores
        await _xterm(sb)
    finally:
        await sb.close()
