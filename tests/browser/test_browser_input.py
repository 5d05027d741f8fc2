"""The agent's input (sandboxes/browser/input.py), in real Chromium.

An action lands where the agent pointed in its own frame; text arrives as real key
events; an element id is clicked at the element's centre and reported in the agent's
pixels; the agent's mistakes come back as `ActionError`s, never as exceptions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from _browser_rig import browser_kept, open_rig, serve  # tests/'s own helpers, as pytest puts tests/ on sys.path

from cua.actions import Click, ClickElement, Goto, HoverElement, Type
from cua.observation import ObserveOptions, Size

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

PAGE = """<title>input</title><style>body { margin: 0 } #b { position: absolute; left: 400px; top: 200px;
  width: 80px; height: 40px }</style>
<button id=b onclick="this.dataset.at = event.clientX + ',' + event.clientY">hit</button>
<input id=t onkeydown="this.dataset.keys = (+this.dataset.keys || 0) + 1">"""


@pytest_asyncio.fixture(scope="module", loop_scope="module", autouse=True)
async def _browser() -> AsyncIterator[None]:
    async with browser_kept():
        yield


async def test_a_click_in_the_agents_frame_lands_on_the_screen_and_moves_the_pointer() -> None:
    with serve({"/": PAGE}) as site:
        async with open_rig(site) as rig:  # a 640x400 screen
            await rig.navigator.goto(site.url("/"))
            error, resolved = await rig.input.act(Click(x=220, y=110), Size(width=320, height=200))  # half size
            assert error is None and resolved is None
            assert await rig.pages.page.get_attribute("#b", "data-at") == "440,220"
            assert (rig.input.pointer.x, rig.input.pointer.y) == (440, 220)


async def test_text_arrives_as_key_events_and_other_characters_as_input() -> None:
    with serve({"/": PAGE}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            await rig.pages.page.focus("#t")
            error, _ = await rig.input.act({"type": "type", "text": "héllo"}, rig.screen)
            assert error is None
            page = rig.pages.page
            assert await page.input_value("#t") == "héllo"
            assert await page.get_attribute("#t", "data-keys") == "4"  # h, l, l, o; é has no US key


async def test_an_element_id_is_clicked_at_its_centre_and_reported_in_the_agents_pixels() -> None:
    with serve({"/": PAGE}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            obs = await rig.observer.observe(ObserveOptions(element_ids=True, screenshot=False), {}, step=0)
            (button,) = [item["id"] for item in obs.axtree or () if item["role"] == "button"]
            frame = Size(width=320, height=200)
            error, resolved = await rig.input.act(ClickElement(element=button), frame)
            assert error is None
            assert await rig.pages.page.get_attribute("#b", "data-at") == "440,220"
            assert resolved is not None and (resolved["type"], resolved["x"], resolved["y"]) == ("click", 220, 110)
            error, resolved = await rig.input.act(HoverElement(element=button), rig.screen)
            assert error is None and resolved is not None and resolved["type"] == "move"


async def test_the_agents_mistakes_are_errors_not_exceptions() -> None:
    with serve({"/": PAGE}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            cases = [
                ({"type": "click", "x": "left"}, "malformed"),
                (Click(x=700, y=10), "out_of_bounds"),
                (ClickElement(element="e999"), "unknown_element"),
                (Goto(url="file:///etc/passwd"), "bad_url"),
                (Type(text="x"), None),
            ]
            for action, reason in cases:
                error, _ = await rig.input.act(action, rig.screen)
                assert (error.reason if error else None) == reason, action
            assert rig.guard.alive
