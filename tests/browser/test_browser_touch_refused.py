"""A desktop browser page has no touch screen: the touch actions (cua/actions.py TOUCH_ONLY)
come back as the agent's `unsupported_action`, and nothing reaches the page."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from _browser_rig import browser_kept, open_rig, serve  # tests/'s own helpers, as pytest puts tests/ on sys.path

from cua.actions import TOUCH_ONLY, Action, DoubleTap, Fling, LongPress, Nav, OpenApp, Pinch, Swipe, Tap

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

PAGE = """<title>touch</title><style>body { margin: 0 } #b { width: 200px; height: 200px }</style>
<button id=b>hit</button><script>
for (const kind of ["touchstart", "pointerdown", "mousedown", "click"])
  addEventListener(kind, () => { document.body.dataset.got = (document.body.dataset.got || "") + kind + " " }, true)
</script>"""

ACTIONS: list[Action] = [Tap(x=50, y=50), DoubleTap(x=50, y=50), LongPress(x=50, y=50, duration_ms=10),
                         Swipe(x=50, y=50, direction="up", distance=20), Fling(x=50, y=50, direction="down"),
                         Pinch(x=50, y=50, scale=2), OpenApp(name="Clock"), Nav(button="back")]


@pytest_asyncio.fixture(scope="module", loop_scope="module", autouse=True)
async def _browser() -> AsyncIterator[None]:
    async with browser_kept():
        yield


async def test_every_touch_action_is_refused_as_unsupported_and_the_page_gets_nothing() -> None:
    assert {a.type for a in ACTIONS} == TOUCH_ONLY
    with serve({"/": PAGE}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            for action in ACTIONS:
                error, resolved = await rig.input.act(action, rig.screen)
                assert error is not None and error.reason == "unsupported_action", (action, error)
                assert resolved is None
            assert await rig.pages.page.get_attribute("body", "data-got") is None
            assert rig.pages.page.url == site.url("/")  # nav back went nowhere
