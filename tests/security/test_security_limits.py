"""Limits that hold inside a sandbox: a memory hog or a fork bomb in a container sandbox
is stopped by its own cgroup (v1 memory/pids); the sandbox is reported `sandbox_crashed`
with the reason, and the server and the other sandboxes go on."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

import cua
from cua.client import Client, Event
from cua.errors import SandboxCrashed
from cua.sandboxes._container import Cgroup
from cua.server.app import RunningServer

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

HOG = """
import time
print("ready", flush=True)
time.sleep(5)  # let the sandbox finish starting
hoard = []
while True:
    hoard.append(bytearray(32 << 20))
    time.sleep(0.02)
"""
FORK_BOMB = """
import os, time
print("ready", flush=True)
time.sleep(5)
children = 0
while True:
    try:
        if os.fork() == 0:
            time.sleep(3600)
            os._exit(0)
        children += 1
    except OSError:
        time.sleep(0.05)  # the pids limit refused the fork: keep pushing against it
"""


def _limits_apply() -> str | None:
    probe = Cgroup.create("cua-limits-probe", 64, 16)
    try:
        return None if probe.applied else probe.reason
    finally:
        probe.remove()


@pytest.fixture(scope="module")
def server_options() -> dict[str, Any]:
    why = _limits_apply()
    if why is not None:
        pytest.skip(f"this host gives no cgroup v1 memory/pids controllers: {why}")
    return {"max_sandboxes": 4}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(server: RunningServer) -> AsyncIterator[Client]:
    async with cua.connect(server.url, server.token, default_timeout=180) as c:
        yield c


def _config(tmp: Path, name: str, program: str, **limits: Any) -> dict[str, Any]:
    script = tmp / f"{name}.py"
    script.write_text(program)
    return {"isolation": "container", "extra_ro_binds": [str(tmp)], "start_url": "about:blank",
            "services": [{"name": name, "argv": [sys.executable, str(script)]}], **limits}


class Deaths:
    """`died` events by sandbox id, from the moment of subscribing."""

    def __init__(self, client: Client) -> None:
        self.seen: dict[str, dict[str, Any]] = {}
        self.changed = asyncio.Event()
        client.on_event(self._on)

    def _on(self, event: Event) -> None:
        if event.event == "died" and event.sandbox_id is not None:
            self.seen[event.sandbox_id] = event.data
            self.changed.set()

    async def of(self, sandbox_id: str, timeout: float = 120) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while sandbox_id not in self.seen:
                self.changed.clear()
                await self.changed.wait()
        return self.seen[sandbox_id]


async def test_a_memory_hog_kills_only_its_own_sandbox(client: Client, tmp_path: Path) -> None:
    deaths = Deaths(client)
    bystander = await client.create("browser", config={"isolation": "shared"})
    hog = await client.create("browser", config=_config(tmp_path, "hog", HOG, memory_limit_mb=512))
    data = await deaths.of(hog.id)
    assert "out of memory" in data["reason"] and "512 MiB" in data["reason"], data
    with pytest.raises(SandboxCrashed) as caught:
        await hog.observe()
    assert "out of memory" in caught.value.message
    assert (await bystander.observe()).sandbox_id == bystander.id  # the others go on
    await hog.close()
    await bystander.close()


async def test_a_fork_bomb_is_held_at_the_pids_limit(client: Client, tmp_path: Path) -> None:
    deaths = Deaths(client)
    bomb = await client.create("browser", config=_config(tmp_path, "bomb", FORK_BOMB, pids_limit=96))
    info = await bomb.refresh()
    assert info.details["cgroup"]["applied"], info.details
    try:
        data = await deaths.of(bomb.id, timeout=20)
    except TimeoutError:
        data = None  # the browser lived on beside the held bomb: also fine, if it still works
    if data is not None:
        assert "process limit" in data["reason"] and "96" in data["reason"], data
    else:
        assert (await bomb.observe()).sandbox_id == bomb.id
    other = await client.create("browser", config={"isolation": "shared"})  # the host can still start processes
    assert (await other.observe()).sandbox_id == other.id
    await other.close()
    await bomb.close()
