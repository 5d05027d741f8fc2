"""Scrollbars as a setting of the sandbox (`BrowserConfig.scrollbars`), in real Chromium.

MiniWoB's reference env draws classic scrollbars, so there a task area that scrolls is
15 px narrower and its text and icons sit elsewhere; cua's default draws none. The
setting is browser-wide (a Chromium switch, which Playwright also sets by default), so
in shared isolation each setting has its own shared browser, and one sandbox's choice
never reaches another's.
"""

from __future__ import annotations

import asyncio
from urllib.parse import quote

import pytest

from cua.sandboxes.browser import BrowserConfig, BrowserSandbox

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]

PAGE = "data:text/html," + quote(
    "<div id=a style='width:160px;height:100px;overflow-y:auto'><div style='height:400px'>x</div></div>")


async def inner_width(sb: BrowserSandbox) -> int:
    width: int = await sb.page.evaluate("() => document.getElementById('a').clientWidth")
    return width


@pytest.mark.parametrize("isolation", ["shared", "container"])
async def test_scrollbars_take_their_width_only_where_the_config_asks(isolation: str) -> None:
    bars, plain = await asyncio.gather(*(
        BrowserSandbox.create(BrowserConfig(isolation=isolation, start_url=PAGE, scrollbars=on), sandbox_id=f"sb-{on}")
        for on in (True, False)))
    try:
        assert await inner_width(bars) == 145  # a classic scrollbar: 15 px of the box
        assert await inner_width(plain) == 160
        await bars.close()
        await plain.reset()  # the other setting's browser is gone; this one's is untouched
        assert await inner_width(plain) == 160
        again = await BrowserSandbox.create(BrowserConfig(isolation=isolation, start_url=PAGE, scrollbars=True),
                                            sandbox_id="sb-again")
        try:
            assert await inner_width(again) == 145
        finally:
            await again.close()
    finally:
        await asyncio.gather(bars.close(), plain.close())
