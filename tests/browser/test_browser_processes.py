"""A browser sandbox's processes (sandboxes/browser/processes.py) and its live frames
(stream.py), in real Chromium, bubblewrap and the bundled todo app.

Starting fills in the ports and controls the other parts use; stopping leaves nothing
behind (no service process, no socket folder, no container), also after a start that
failed half way; a screencast yields frames as the screen changes and stops cleanly.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from _browser_rig import browser_kept, open_rig, serve  # tests/'s own helpers, as pytest puts tests/ on sys.path

from cua.errors import InfraError
from cua.observation import ObserveOptions, Size
from cua.sandbox import ServiceSpec
from cua.sandboxes.browser import stream
from cua.sandboxes.browser.config import BrowserConfig
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.processes import Processes
from cua.sandboxes.browser.services import HostService, ServiceControl

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

#: The todo app as its own process (no app host), so the test sees the process it started.
TODO = ServiceSpec(name="app", argv=[sys.executable, "-m", "cua.tasks.apps.serve", "todo"])
#: A service that exits before it is ready.
BROKEN = ServiceSpec(name="broken", argv=[sys.executable, "-c", "raise SystemExit(3)"], ready_timeout=20)


@pytest_asyncio.fixture(scope="module", loop_scope="module", autouse=True)
async def _browser() -> AsyncIterator[None]:
    async with browser_kept():
        yield


def parts(config: BrowserConfig) -> tuple[Processes, Guard, dict[str, int], dict[str, ServiceControl]]:
    guard = Guard("proc-test", config.call_timeout_s, None)
    ports: dict[str, int] = {}
    controls: dict[str, ServiceControl] = {}
    return Processes(config, guard, ports, controls), guard, ports, controls


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


async def test_shared_processes_start_their_services_and_stop_without_a_trace() -> None:
    config = BrowserConfig(isolation="shared", services=[TODO], start_url="/")
    processes, guard, ports, controls = parts(config)
    browser = await processes.start("proc-shared")
    try:
        assert browser.is_connected() and guard.browser is browser and guard.browser_pid is not None
        assert set(ports) == set(controls) == {"app"}
        assert (await controls["app"].health())  # the app answers on its control socket
        (svc,) = processes.host_services
        assert isinstance(svc, HostService) and svc.port == ports["app"]
        pid, socket_dir = svc.proc.pid, Path(svc.socket_path).parent
    finally:
        problems = await processes.stop(None)
    assert problems == []
    assert gone(pid) and not socket_dir.exists()
    assert browser.is_connected()  # the shared browser stays for the module's other users


async def test_a_start_that_fails_half_way_is_infras_fault_and_stops_cleanly() -> None:
    config = BrowserConfig(isolation="shared", services=[TODO, BROKEN], start_url="/")
    processes, _guard, _ports, _controls = parts(config)
    with pytest.raises(InfraError):
        await processes.start("proc-broken")
    started = [svc.proc.pid for svc in processes.host_services if isinstance(svc, HostService)]
    assert await processes.stop(None) == []
    assert all(gone(pid) for pid in started)


async def test_a_container_is_removed_when_its_processes_stop() -> None:
    config = BrowserConfig(services=[TODO], start_url="/")
    processes, guard, ports, controls = parts(config)
    browser = await processes.start("proc-container")
    try:
        assert processes.container is not None and guard.container is processes.container
        run_dir = processes.container.run_dir
        assert run_dir.exists() and set(ports) == set(controls) == {"app"}
        pid = guard.browser_pid
        assert pid is not None and not gone(pid)
    finally:
        problems = await processes.stop(None)
    assert problems == []
    assert not browser.is_connected() and gone(pid) and not run_dir.exists()


async def test_a_screencast_yields_frames_as_the_screen_changes_and_stops_when_closed() -> None:
    with serve({"/": "<title>cast</title><p id=p>frame</p>"}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            frames = stream.frames(rig.guard, rig.pages, ObserveOptions(frame=Size(width=320, height=200)), rig.screen,
                                   max_fps=5)
            await rig.pages.page.evaluate("() => { document.body.style.background = 'rgb(0, 90, 200)'; }")
            shot = await anext(frames)
            assert shot.format == "jpeg" and (shot.width, shot.height) == (320, 200) and shot.data
            await frames.aclose()  # stops the screencast and detaches its session
            assert rig.guard.alive and os.path.exists(f"/proc/{rig.guard.browser_pid}")
