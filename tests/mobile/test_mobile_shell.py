"""The phone shell in real Chromium: Android's back, home and recents; open_app by name;
the keyboard area taking the screen's space; the notification shade fed by the apps'
state; a permission prompt and a share sheet an app asks for; the shell's state as app
`shell`. Everything is done by touch (taps on the shell's own buttons) or by `nav`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from _phone import frame_of, phone

from cua.sandboxes.mobile import MobileSandbox

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

NAV_Y = 915 - 24  # the navigation bar's buttons, on a Pixel 7 in portrait
BACK, HOME, RECENTS = (68, NAV_Y), (206, NAV_Y), (343, NAV_Y)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sb() -> AsyncIterator[MobileSandbox]:
    async with phone(share_paths={"todo": "/search?q={text}"}) as sandbox:
        yield sandbox


@pytest_asyncio.fixture(loop_scope="module", autouse=True)
async def _fresh(sb: MobileSandbox) -> None:
    await sb.reset(seed=0)


async def shell(sb: MobileSandbox) -> dict[str, Any]:
    [result] = await sb.query([{"kind": "app_state", "service": "shell"}])
    assert result.ok
    value: dict[str, Any] = result.value
    return value


async def tap(sb: MobileSandbox, xy: tuple[float, float]) -> None:
    obs = await sb.act({"type": "tap", "x": xy[0], "y": xy[1]})
    assert obs.error is None, obs.error


async def tap_selector(sb: MobileSandbox, selector: str, app: str | None = None) -> None:
    """Tap the centre of an element of the shell (or of `app`'s page), found by the test."""
    frame = frame_of(sb, app) if app else sb.page.main_frame
    box = await frame.locator(selector).first.bounding_box()
    assert box is not None, selector
    offset = 0.0
    if app:
        frame_box = await sb.page.locator(f"iframe[name={app}]").bounding_box()
        assert frame_box is not None
        offset = frame_box["y"]
    await tap(sb, (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2 + offset))


async def path_of(sb: MobileSandbox) -> str:
    [url] = await sb.query([{"kind": "url"}])
    return str(url.value).split("/", 3)[3]


async def test_home_shows_the_apps_and_a_tap_on_an_icon_opens_one_full_screen(sb: MobileSandbox) -> None:
    state = await shell(sb)
    assert state["screen"] == "home" and state["open_app"] is None and state["recents"] == []
    await tap_selector(sb, "#home-grid [data-app=probe]")
    state = await shell(sb)
    assert state["screen"] == "app" and state["open_app"] == "probe" and state["recents"] == ["probe"]
    frame_box = await sb.page.locator("iframe[name=probe]").bounding_box()
    assert frame_box == {"x": 0, "y": 24, "width": 412, "height": 915 - 24 - 48}  # between the two bars


async def test_the_drawer_lists_every_app_and_swiping_up_on_home_opens_it(sb: MobileSandbox) -> None:
    await sb.act({"type": "swipe", "x": 200, "y": 600, "direction": "up", "distance": 200})
    assert (await shell(sb))["screen"] == "drawer"
    labels = await sb.page.locator("#drawer-grid .icon").evaluate_all("els => els.map(e => e.dataset.app)")
    assert sorted(labels) == ["probe", "todo"]
    await tap_selector(sb, "#drawer-grid [data-app=todo]")
    assert (await shell(sb))["open_app"] == "todo"


async def test_back_walks_the_apps_history_then_leaves_it_at_its_root_keeping_it_in_recents(sb: MobileSandbox) -> None:
    await sb.act({"type": "open_app", "name": "Probe"})
    await tap_selector(sb, "#next", "probe")
    await tap_selector(sb, "#next", "probe")
    assert await path_of(sb) == "p3"
    await tap(sb, BACK)
    assert await path_of(sb) == "p2"
    await sb.act({"type": "nav", "button": "back"})
    assert await path_of(sb) == ""
    assert (await shell(sb))["open_app"] == "probe"
    await sb.act({"type": "nav", "button": "back"})  # at the root: back leaves the app
    state = await shell(sb)
    assert state["screen"] == "home" and state["open_app"] is None and state["recents"] == ["probe"]
    await sb.act({"type": "nav", "button": "back"})  # on home, back does nothing
    assert (await shell(sb))["screen"] == "home"


async def test_home_keeps_the_app_where_it_was_and_recents_reopens_it_there_most_recent_first(sb: MobileSandbox) -> None:
    await sb.act({"type": "open_app", "name": "probe"})
    await tap_selector(sb, "#next", "probe")
    await frame_of(sb, "probe").fill("#field", "kept")
    await tap(sb, HOME)
    await sb.act({"type": "open_app", "name": "Todo"})
    await sb.act({"type": "nav", "button": "home"})
    state = await shell(sb)
    assert state["screen"] == "home" and state["recents"] == ["todo", "probe"]
    await tap(sb, RECENTS)
    assert (await shell(sb))["screen"] == "recents"
    cards = await sb.page.locator("#recents-list .card").evaluate_all("els => els.map(e => e.dataset.app)")
    assert cards == ["todo", "probe"]
    await tap_selector(sb, "#recents-list [data-app=probe] .open")
    state = await shell(sb)
    assert state["open_app"] == "probe" and state["recents"] == ["probe", "todo"]
    assert await path_of(sb) == "p2"
    assert await frame_of(sb, "probe").input_value("#field") == "kept"  # the same page, not a reload


async def test_back_from_recents_returns_to_the_app_and_a_closed_app_leaves_recents(sb: MobileSandbox) -> None:
    await sb.act({"type": "open_app", "name": "probe"})
    await sb.act({"type": "nav", "button": "recents"})
    await sb.act({"type": "nav", "button": "back"})
    assert (await shell(sb))["open_app"] == "probe"
    await sb.act({"type": "nav", "button": "recents"})
    await tap_selector(sb, "#recents-list [data-app=probe] .close")
    state = await shell(sb)
    assert state["recents"] == [] and "probe" not in state["stacks"]


async def test_open_app_of_an_unknown_name_is_the_agents_error(sb: MobileSandbox) -> None:
    obs = await sb.act({"type": "open_app", "name": "Clock"})
    assert obs.error is not None and obs.error.reason == "unknown_app"
    assert (await shell(sb))["screen"] == "home"


async def test_a_focused_field_opens_the_keyboard_area_which_takes_the_apps_space(sb: MobileSandbox) -> None:
    await sb.act({"type": "open_app", "name": "probe"})
    full = await frame_of(sb, "probe").evaluate("innerHeight")
    await tap_selector(sb, "#field", "probe")
    state = await shell(sb)
    assert state["keyboard_open"] is True
    keyboard = await sb.page.locator("#keyboard").bounding_box()
    assert keyboard is not None and keyboard["height"] > 200
    assert await frame_of(sb, "probe").evaluate("innerHeight") == full - keyboard["height"]
    await sb.act({"type": "type", "text": "hi"})
    await tap_selector(sb, "#keyboard [data-key=a]")  # the on-screen keys type too, keeping the focus
    assert await frame_of(sb, "probe").input_value("#field") == "hia"
    await sb.act({"type": "nav", "button": "back"})  # back first closes the keyboard
    state = await shell(sb)
    assert state["keyboard_open"] is False and state["open_app"] == "probe"
    assert await frame_of(sb, "probe").evaluate("innerHeight") == full


async def test_the_shade_pulls_down_with_the_apps_notifications_and_one_opens_its_link(sb: MobileSandbox) -> None:
    await sb.act({"type": "swipe", "x": 200, "y": 6, "direction": "down", "distance": 300})
    state = await shell(sb)
    assert state["shade_open"] is True
    assert state["notifications_shown"] == [{"app": "probe", "id": "n1"}]
    assert "Missed call" in await sb.page.locator("#shade").inner_text()
    await tap_selector(sb, "#notifications button[data-id=n1]")
    state = await shell(sb)
    assert state["shade_open"] is False and state["open_app"] == "probe"
    assert state["opened_notifications"] == [{"app": "probe", "id": "n1"}]
    assert await path_of(sb) == "p3"


async def test_back_closes_the_shade(sb: MobileSandbox) -> None:
    await sb.act({"type": "swipe", "x": 200, "y": 6, "direction": "down", "distance": 300})
    await sb.act({"type": "nav", "button": "back"})
    assert (await shell(sb))["shade_open"] is False


async def test_a_permission_prompt_answers_the_app_and_is_remembered(sb: MobileSandbox) -> None:
    await sb.act({"type": "open_app", "name": "probe"})
    await tap_selector(sb, "#perm", "probe")
    state = await shell(sb)
    assert state["dialog"]["type"] == "permission" and state["dialog"]["permission"] == "camera"
    assert "Allow Probe to access camera?" in await sb.page.locator("#dialog").inner_text()
    await tap_selector(sb, "#dialog button >> text=Allow")
    state = await shell(sb)
    assert state["dialog"] is None and state["permissions"] == {"probe": {"camera": "granted"}}
    await tap_selector(sb, "#perm", "probe")  # asked again: answered at once, no dialog
    assert (await shell(sb))["dialog"] is None
    assert await frame_of(sb, "probe").evaluate("window.results") == [["permission", True], ["permission", True]]


async def test_a_denied_or_dismissed_permission_is_false(sb: MobileSandbox) -> None:
    await sb.act({"type": "open_app", "name": "probe"})
    await tap_selector(sb, "#perm", "probe")
    await sb.act({"type": "nav", "button": "back"})  # dismissed: not remembered
    assert (await shell(sb))["permissions"] == {}
    await tap_selector(sb, "#perm", "probe")
    await tap_selector(sb, "#dialog button >> text=Don’t allow")
    assert (await shell(sb))["permissions"] == {"probe": {"camera": "denied"}}
    assert await frame_of(sb, "probe").evaluate("window.results") == [["permission", False], ["permission", False]]


async def test_a_share_sheet_sends_the_text_to_the_chosen_app(sb: MobileSandbox) -> None:
    await sb.act({"type": "open_app", "name": "probe"})
    await tap_selector(sb, "#share", "probe")
    state = await shell(sb)
    assert state["dialog"]["type"] == "share"
    await tap_selector(sb, "#dialog button >> text=Todo")
    state = await shell(sb)
    assert state["open_app"] == "todo" and state["shares"] == [{"from": "probe", "to": "todo", "text": "hello from /"}]
    assert state["url"].endswith("/search?q=hello%20from%20%2F")
    assert await frame_of(sb, "probe").evaluate("window.results") == [["share", "todo"]]
