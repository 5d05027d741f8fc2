"""Snapshot, restore and fork of a mobile sandbox hold the shell's state (which app is
open, its page, recents and each app's back stack, the shade, permissions) and the apps'
data; a reset goes back to the seed's home screen. Also the devices and orientations.
Real Chromium, shared isolation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from _phone import frame_of, phone

from cua.actions import OpenApp
from cua.conformance import check_sandbox
from cua.errors import BadRequest
from cua.sandboxes.mobile import DEVICES, MobileSandbox

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

#: What a restore must bring back of the shell's state (the URLs compared by path: a fork's ports differ).
KEPT = ("screen", "open_app", "recents", "shade_open", "permissions")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sb() -> AsyncIterator[MobileSandbox]:
    async with phone() as sandbox:
        yield sandbox


async def shell(sb: MobileSandbox) -> dict[str, Any]:
    [result] = await sb.query([{"kind": "app_state", "service": "shell"}])
    value: dict[str, Any] = result.value
    return value


def paths(state: dict[str, Any]) -> dict[str, Any]:
    return {**{k: state[k] for k in KEPT},
            "stacks": {app: [u.split("/", 3)[3] for u in stack] for app, stack in state["stacks"].items()},
            "url": state["url"].split("/", 3)[3] if state["url"] else None}


async def a_used_phone(sb: MobileSandbox) -> None:
    """Todo's data changed, probe two pages deep and in front, todo behind it in recents."""
    await sb.reset(seed=0)
    await sb.act({"type": "open_app", "name": "Todo"})
    todo = frame_of(sb, "todo")
    await todo.evaluate("() => fetch('/lists', {method: 'POST', body: new URLSearchParams({name: 'Phone list', color: '#123456'})})")
    await todo.goto(todo.url + "lists/2")  # the app's own navigation
    await sb.observe()
    await sb.act({"type": "open_app", "name": "Probe"})
    for _ in range(2):
        await frame_of(sb, "probe").click("#next")  # the page's own navigation (not the agent's input)
        await sb.observe()
    await sb.act({"type": "swipe", "x": 200, "y": 6, "direction": "down", "distance": 300})


async def test_restore_brings_back_the_shell_and_the_apps(sb: MobileSandbox) -> None:
    await a_used_phone(sb)
    before = paths(await shell(sb))
    assert before["open_app"] == "probe" and before["recents"] == ["probe", "todo"] and before["shade_open"]
    assert before["stacks"]["probe"] == ["", "p2", "p3"] and before["url"] == "p3"
    ref = await sb.snapshot()
    await sb.reset(seed=0)
    assert (await shell(sb))["recents"] == []
    await sb.restore(ref)
    assert paths(await shell(sb)) == before
    # only the open app's page is loaded; todo loads where it was when reopened from recents
    assert [f.name for f in sb.page.main_frame.child_frames] == ["probe"]
    await sb.act({"type": "nav", "button": "recents"})
    await sb.act({"type": "open_app", "name": "todo"})
    assert paths(await shell(sb))["url"] == "lists/2"
    await sb.restore(ref)
    [lists] = await sb.query([{"kind": "sql", "service": "todo", "query": "SELECT name FROM lists WHERE name = 'Phone list'"}])
    assert lists.value == [{"name": "Phone list"}]
    # Android's back still walks the restored app's history
    await sb.act({"type": "nav", "button": "back"})  # closes the shade
    await sb.act({"type": "nav", "button": "back"})
    assert paths(await shell(sb))["url"] == "p2"
    await sb.delete_snapshot(ref)


async def test_a_fork_is_the_same_phone_and_goes_its_own_way(sb: MobileSandbox) -> None:
    await a_used_phone(sb)
    before = paths(await shell(sb))
    ref = await sb.snapshot()
    child = await sb.fork(ref, sandbox_id="phone-fork")
    try:
        assert isinstance(child, MobileSandbox) and child.info().kind == "mobile"
        assert paths(await shell(child)) == before
        obs = await child.act({"type": "nav", "button": "home"})  # the child is a phone: nav works, mouse does not
        assert obs.error is None and (await shell(child))["screen"] == "home"
        assert (await child.act({"type": "click", "x": 5, "y": 5})).error is not None
        assert paths(await shell(sb)) == before  # the parent is untouched
    finally:
        await child.close()
        await sb.delete_snapshot(ref)


async def test_reset_goes_back_to_the_seeds_home_screen(sb: MobileSandbox) -> None:
    await a_used_phone(sb)
    await sb.reset(seed=0)
    state = await shell(sb)
    assert state["screen"] == "home" and state["recents"] == [] and state["stacks"] == {} and not state["shade_open"]
    [lists] = await sb.query([{"kind": "sql", "service": "todo", "query": "SELECT name FROM lists WHERE name = 'Phone list'"}])
    assert lists.value == []


async def test_a_reset_to_another_start_url_is_the_clients_error(sb: MobileSandbox) -> None:
    with pytest.raises(BadRequest):
        await sb.reset(seed=0, options={"start_url": "/p2"})
    assert (await shell(sb))["screen"] is not None  # the phone is still there


@pytest.mark.parametrize(("device", "orientation"), [("galaxy_s23", "portrait"), ("pixel_tablet", "landscape"),
                                                     ("pixel_5", "landscape")])
async def test_each_device_is_its_own_size_pixel_ratio_and_user_agent_touch_only(device: str, orientation: str) -> None:
    profile = DEVICES[device]
    async with phone(device=device, orientation=orientation, start_app="probe") as sb:
        size = profile.viewport(orientation)
        assert sb.info().screen == size and sb.info().details["device"] == device
        seen = await sb.page.evaluate("""() => [innerWidth, innerHeight, devicePixelRatio, navigator.userAgent,
            navigator.maxTouchPoints > 0, matchMedia('(pointer: coarse)').matches, matchMedia('(hover: none)').matches]""")
        assert seen == [size.width, size.height, profile.device_scale_factor, profile.user_agent, True, True, True]
        obs = await sb.observe()
        assert (obs.screenshot.width, obs.screenshot.height) == (size.width, size.height)
        assert await frame_of(sb, "probe").evaluate("innerWidth") == size.width  # the app is full screen
        assert (size.width > size.height) == (orientation == "landscape")


async def test_there_are_three_phones_and_a_tablet_each_its_own() -> None:
    phones = [p for p in DEVICES.values() if not p.tablet]
    assert len(phones) >= 3 and any(p.tablet for p in DEVICES.values())
    assert len({(p.width, p.height, p.device_scale_factor, p.user_agent) for p in DEVICES.values()}) == len(DEVICES)


async def test_in_a_container_each_app_has_its_own_port_and_the_phone_works() -> None:
    """A container runs every service on its spec's port, and the bundled apps' specs all
    say 8000: the apps are moved to ports of their own (else the second exits at start)."""
    async with phone(isolation="container", start_app="todo") as sb:
        ports = sb.info().details["services"]
        assert len({p["port"] for p in ports.values()}) == 3  # the shell, probe and todo
        await sb.act({"type": "open_app", "name": "probe"})
        ref = await sb.snapshot()
        await sb.act({"type": "nav", "button": "home"})
        await sb.restore(ref)
        state = await shell(sb)
        assert state["open_app"] == "probe" and state["recents"] == ["probe", "todo"]
        await sb.delete_snapshot(ref)


async def test_the_mobile_kind_honours_the_sandbox_contract() -> None:
    """`check_sandbox` on a phone: its pointer actions are taps (the mouse is refused), and a
    restore after an app was opened gives back the home screen pixel for pixel."""
    async with phone() as sb:
        report = await check_sandbox(sb, changing_action=OpenApp(name="Todo"))
        assert report.ok, str(report)
        assert not sb.alive


async def test_a_fork_served_by_a_pre_started_spare_is_a_phone(sb: MobileSandbox) -> None:
    """After a fork the browser kind refills a spare for the next fork of the same config in
    the background; the spare must be a phone (it was a plain browser sandbox before)."""
    await a_used_phone(sb)
    ref = await sb.snapshot()
    first = await sb.fork(ref, sandbox_id="phone-fork-1")
    await first.close()
    keep = await sb.fork(ref, sandbox_id="phone-fork-keep")  # keeps the pool's sandboxes alive
    try:
        await spare_ready(sb)
        child = await sb.fork(ref, sandbox_id="phone-fork-2")
        try:
            assert type(child) is MobileSandbox
            assert paths(await shell(child)) == paths(await shell(sb))
            assert (await child.act({"type": "nav", "button": "home"})).error is None
        finally:
            await child.close()
        await spare_ready(sb)  # the refill after this fork is over before the module's sandboxes close
    finally:
        await keep.close()
        await sb.delete_snapshot(ref)


async def spare_ready(sb: MobileSandbox) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while sb.info().details["fork_spares"] < 1:
        assert loop.time() < deadline, "no spare was started"
        await asyncio.sleep(0.05)
