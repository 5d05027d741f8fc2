"""The last capture sent again for an unchanged screen (sandboxes/browser/observe.py and
content_version.py), in real Chromium.

After an action that changed nothing the sandbox sends the last capture instead of a new
one. Each case here is an action that changes the screen with no DOM mutation, or a page
whose screen changes on its own; none of them may be answered with the old capture. And
where the old capture is sent, it must be what a new capture would show, pixel for pixel.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Awaitable, Callable

import numpy as np
import pytest
import pytest_asyncio
from _browser_rig import Rig, browser_kept, open_rig, serve  # tests/'s own helpers, as pytest puts tests/ on sys.path
from PIL import Image

from cua.observation import Observation, ObserveOptions
from cua.sandboxes.browser.observe import capture_screenshot

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

OPTS = ObserveOptions(format="png")
BODY = """<style>body { margin: 20px; font: 16px sans-serif } #hot:hover { background: #c00 }
@keyframes spin { to { transform: rotate(360deg) } } .spin { animation: spin 1s linear infinite }</style>
<h2 id=plain>A plain heading</h2><p id=text>Some words to select.</p><div id=hot>hover me</div>
<input id=box type=checkbox aria-label=done> <input id=field value=typed> <button id=noop>noop</button>
<div id=spinner style="width: 20px; height: 20px; background: #00c"></div>"""


@pytest_asyncio.fixture(scope="module", loop_scope="module", autouse=True)
async def _browser() -> AsyncIterator[None]:
    async with browser_kept():
        yield


def _pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


async def _observe(rig: Rig, step: int) -> Observation:
    return await rig.observer.observe(OPTS, {}, step=step, settle=await rig.pages.settle())


async def _fresh(rig: Rig) -> np.ndarray:
    assert rig.pages.cdp is not None
    return _pixels((await capture_screenshot(rig.pages.cdp, OPTS, rig.screen)).data)


def _reused(obs: Observation) -> bool:
    return "screenshot_reused_from_step" in obs.timings_ms


async def _start(rig: Rig) -> Observation:
    await rig.pages.page.mouse.move(630, 390)  # over nothing: the page's empty corner
    first = await _observe(rig, 0)
    assert not _reused(first)
    return first


async def test_an_action_that_changes_nothing_sends_the_last_capture_as_it_is() -> None:
    with serve({"/": BODY}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            first = await _start(rig)
            await rig.pages.page.mouse.move(60, 40)  # onto the plain heading: no rule, no control
            again = await _observe(rig, 1)
            assert again.timings_ms["screenshot_reused_from_step"] == 0
            assert again.screenshot is first.screenshot
            assert first.screenshot is not None and np.array_equal(_pixels(first.screenshot.data), await _fresh(rig))
            await rig.pages.page.click("#plain")
            assert _reused(await _observe(rig, 2))
            # other capture options: a new capture
            assert "screenshot_reused_from_step" not in (await rig.observer.observe(
                ObserveOptions(format="jpeg"), {}, step=3, settle=await rig.pages.settle())).timings_ms
            # no settle (an observe of its own): a new capture
            assert "screenshot_reused_from_step" not in (await rig.observer.observe(OPTS, {}, step=3)).timings_ms


Action = Callable[[Rig], Awaitable[object]]

CHANGES: dict[str, tuple[Action, bool]] = {
    # name: (the action, whether the screen must differ from the last capture afterwards)
    "pointer onto a native checkbox": (lambda rig: rig.pages.page.hover("#box"), True),
    "pointer onto an element a :hover rule matches": (lambda rig: rig.pages.page.hover("#hot"), True),
    "a checkbox a script ticks": (lambda rig: rig.pages.page.evaluate(
        "() => { document.getElementById('box').checked = true; }"), True),
    "text selected": (lambda rig: rig.pages.page.evaluate(
        "() => getSelection().selectAllChildren(document.getElementById('text'))"), True),
    "focus into a field, where the caret blinks": (lambda rig: rig.pages.page.focus("#field"), False),
    "an animation starts": (lambda rig: rig.pages.page.evaluate(
        "() => document.getElementById('spinner').classList.add('spin')"), False),
}


@pytest.mark.parametrize("name", list(CHANGES))
async def test_a_change_without_a_mutation_is_captured_again(name: str) -> None:
    action, differs = CHANGES[name]
    with serve({"/": BODY}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            first = await _start(rig)
            await action(rig)
            after = await _observe(rig, 1)
            assert not _reused(after), name
            if differs:  # the case is real: the old capture would have shown another screen
                assert first.screenshot is not None and not np.array_equal(_pixels(first.screenshot.data), await _fresh(rig))


MOVING = {
    "an image": "<img src='data:image/gif;base64,R0lGODlhAQABAAAAACw=' width=10 height=10>",
    "a canvas": "<canvas width=10 height=10></canvas>",
    "a frame": "<iframe srcdoc='<p>inner</p>'></iframe>",
    "a style sheet's image": "<style>#plain { background: url('data:image/gif;base64,R0lGODlhAQABAAAAACw=') }</style>",
}


@pytest.mark.parametrize("name", list(MOVING))
async def test_a_page_whose_screen_can_change_on_its_own_is_always_captured(name: str) -> None:
    page = BODY + MOVING[name]
    with serve({"/": page}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            await _start(rig)
            await rig.pages.page.mouse.move(60, 40)
            assert not _reused(await _observe(rig, 1)), name
