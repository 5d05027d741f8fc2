"""The guest agent run standalone, as inside a VM: the system Python with only the
standard library and Debian's python3-xlib/python3-pil, isolated from the project
(`-I`, no cua importable), started with its own Xvfb + openbox, over stdio pipes."""

from __future__ import annotations

import asyncio
import base64
import io
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from PIL import Image

from cua.errors import ActionFailed, BadRequest, SandboxCrashed
from cua.sandboxes.guest.client import GuestClient

AGENT = Path(__file__).resolve().parents[2] / "sandboxes" / "guest" / "agent.py"
SYSTEM_PYTHON = "/usr/bin/python3"

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]


def _system_python_ready() -> str | None:
    if not os.path.exists(SYSTEM_PYTHON):
        return "no system python3"
    for tool in ("Xvfb", "openbox", "xdotool", "xterm"):
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    probe = subprocess.run([SYSTEM_PYTHON, "-I", "-c", "import Xlib, PIL"], capture_output=True)
    if probe.returncode != 0:
        return "system python3 lacks python3-xlib/python3-pil (apt-get install python3-xlib python3-pil)"
    return None


class Guest:
    def __init__(self, proc: asyncio.subprocess.Process, client: GuestClient, home: Path) -> None:
        self.proc, self.client, self.home = proc, client, home


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guest(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Guest]:
    missing = _system_python_ready()
    if missing:
        pytest.skip(missing)
    home = tmp_path_factory.mktemp("guest-home")
    proc = await asyncio.create_subprocess_exec(
        SYSTEM_PYTHON, "-I", str(AGENT), "--listen", "stdio", "--start-x", "800x600", "--wm", "openbox",
        "--home", str(home), "--input", "xdotool", cwd="/",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env={"PATH": os.environ["PATH"]},
        start_new_session=True)
    assert proc.stdout is not None and proc.stdin is not None
    client = await GuestClient.from_streams(proc.stdout, proc.stdin, timeout=60.0, name="standalone")
    yield Guest(proc, client, home)
    await client.close()
    if proc.returncode is None:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 15)
        except asyncio.TimeoutError:
            os.killpg(proc.pid, 9)
            await proc.wait()


async def test_hello_and_info(guest: Guest) -> None:
    assert guest.client.hello is not None and guest.client.hello["agent"] == "cua-guest"
    info = await guest.client.info()
    assert info["screen"] == {"width": 800, "height": 600}
    assert info["input"] == "xdotool"
    assert info["settle"] == "damage"
    assert info["versions"]["Xlib"] is not None
    assert await guest.client.ping() > 0


async def test_screenshot_formats_and_resize(guest: Guest) -> None:
    for fmt, pil in (("png", "PNG"), ("jpeg", "JPEG"), ("webp", "WEBP")):
        meta, data = await guest.client.screenshot(fmt, 70, 400, 300)
        img = Image.open(io.BytesIO(data))
        assert img.format == pil and img.size == (400, 300) == (meta["width"], meta["height"])


async def test_typing_through_xdotool_keeps_angle_brackets(guest: Guest) -> None:
    pid = await guest.client.spawn(["xterm"])
    window = await guest.client.wait_window(pid=pid, timeout=30)
    await guest.client.act({"type": "click", "x": window["x"] + 40, "y": window["y"] + 40})
    await guest.client.act({"type": "type", "text": "echo 'x<y>z|&' > angle.txt\n"})
    for _ in range(100):
        if (guest.home / "angle.txt").exists():
            break
        await guest.client.act({"type": "wait", "seconds": 0.05})
    [result] = await guest.client.query([{"kind": "file", "path": "angle.txt"}])
    assert result == {"ok": True, "value": "x<y>z|&\n"}
    killed = await guest.client.kill(pids=[pid])
    assert killed == [pid]


async def test_write_file_and_file_queries(guest: Guest) -> None:
    payload = bytes(range(256))
    await guest.client.write_file("sub/dir/data.bin", payload)
    results = await guest.client.query([
        {"kind": "file", "path": "sub/dir/data.bin", "mode": "bytes"},
        {"kind": "file", "path": "sub/dir/data.bin", "mode": "exists"},
        {"kind": "file", "path": "sub/dir", "mode": "list"},
        {"kind": "file", "path": "missing.txt"},
        {"kind": "file", "path": "sub/dir/data.bin", "mode": "text", "max_bytes": 10},
        {"kind": "url"},
    ])
    assert base64.b64decode(results[0]["value"]) == payload
    assert results[1]["value"] is True and results[2]["value"] == ["data.bin"]
    assert results[3]["error"] == "not_found"
    assert results[4]["error"] == "too_large"
    assert results[5]["error"] == "unsupported"


async def test_command_query_is_bounded(guest: Guest) -> None:
    results = await guest.client.query([
        {"kind": "command", "argv": ["sh", "-c", "yes | head -c 100000"], "max_bytes": 1000},
        {"kind": "command", "argv": ["sleep", "30"], "timeout": 0.5},
        {"kind": "command", "argv": ["no-such-program-xyz"]},
    ])
    assert results[0]["ok"] and len(results[0]["value"]["stdout"]) == 1000 and results[0]["value"]["truncated"]
    assert results[1]["error"] == "timeout"
    assert results[2]["error"] == "not_found"


async def test_bad_requests_are_typed(guest: Guest) -> None:
    with pytest.raises(BadRequest):
        await guest.client.call("no_such_op")
    with pytest.raises(BadRequest):
        await guest.client.act({"type": "teleport"})
    with pytest.raises(ActionFailed) as err:
        await guest.client.act({"type": "click", "x": 5000, "y": 5})
    assert err.value.reason == "out_of_bounds"
    with pytest.raises(ActionFailed) as err:
        await guest.client.act({"type": "goto", "url": "http://x"})
    assert err.value.reason == "unsupported_action"
    assert await guest.client.ping() > 0  # still serving


async def _second_agent(guest: Guest, listen: str) -> asyncio.subprocess.Process:
    display = guest.client.hello["display"] if guest.client.hello else ":0"
    return await asyncio.create_subprocess_exec(
        SYSTEM_PYTHON, "-I", str(AGENT), "--listen", listen, "--display", display, "--home", str(guest.home),
        cwd="/", env={"PATH": os.environ["PATH"]}, stderr=asyncio.subprocess.DEVNULL)


async def test_tcp_transport(guest: Guest) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = await _second_agent(guest, f"tcp:127.0.0.1:{port}")
    try:
        client = None
        for _ in range(200):  # until the agent listens (bounded)
            try:
                client = await GuestClient.connect_tcp("127.0.0.1", port, timeout=10)
                break
            except OSError:
                await asyncio.sleep(0.05)
        assert client is not None, "the TCP agent never listened"
        assert (await client.info())["screen"] == {"width": 800, "height": 600}
        await client.close()
    finally:
        proc.terminate()
        await proc.wait()


async def test_serial_transport_over_a_raw_pty(guest: Guest) -> None:
    """A character device stream, as virtio-serial gives inside a VM (here a pty in raw mode)."""
    import tty

    master, slave = os.openpty()
    tty.setraw(slave)
    proc = await _second_agent(guest, f"serial:{os.ttyname(slave)}")
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    rtransport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                 os.fdopen(master, "rb", buffering=0))
    wtransport, wprotocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(os.dup(master), "wb", buffering=0))
    writer = asyncio.StreamWriter(wtransport, wprotocol, reader, loop)
    try:
        client = await GuestClient.from_streams(reader, writer, timeout=30, name="serial")
        meta, data = await client.screenshot("png")
        assert data.startswith(b"\x89PNG") and meta["width"] == 800
        await client.close()
    finally:
        proc.terminate()
        await proc.wait()
        rtransport.close()
        os.close(slave)


# Last: it kills the module's agent and its X server.
async def test_killed_agent_fails_calls_with_sandbox_crashed(guest: Guest) -> None:
    pending = asyncio.create_task(guest.client.act({"type": "wait", "seconds": 20}))
    await asyncio.sleep(0.2)  # let the request reach the agent before it dies
    guest.proc.kill()
    with pytest.raises(SandboxCrashed):
        await asyncio.wait_for(pending, 10)
    with pytest.raises(SandboxCrashed):
        await guest.client.ping()
    os.killpg(guest.proc.pid, 9)  # the Xvfb and openbox it started
