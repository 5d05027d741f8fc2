"""`cua report` draws a phone's touch actions where they happened (real headless Chromium):
a tap's marker at its point, a swipe's path from its point along its direction and distance,
and the phone's buttons and app launches as captions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _runs import SIZE, write_episode  # tests/'s own helpers
from playwright.async_api import async_playwright

from cua.report import build_report
from cua.sandboxes.browser.launcher import find_executable

TOUCH: list[dict[str, Any] | None] = [
    {"type": "tap", "x": 212.0, "y": 131.0},
    {"type": "swipe", "x": 320.0, "y": 350.0, "direction": "up", "distance": 200.0, "duration_ms": 300},
    {"type": "long_press", "x": 100.0, "y": 100.0, "duration_ms": 800},
    {"type": "nav", "button": "back"},
    {"type": "open_app", "name": "Clock"},
    {"type": "done", "status": "success"},
]


@pytest.mark.slow
async def test_touch_actions_are_drawn_where_they_happened(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_episode(run, "phone.alarm@1", 0, passed=True, actions=TOUCH)
    index = build_report(run)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_executable().path,
                                           args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = await browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            await page.goto(index.resolve().as_uri())
            await page.wait_for_function("document.body.dataset.ready === '1'")
            await page.click("table.episodes tr[data-key='phone.alarm@1__s0'] a")
            await page.wait_for_selector(".episode")
            img = await page.locator("#step-0-0 .shot img").bounding_box()
            dot = await page.locator("#step-0-0 [data-marker=tap] circle").bounding_box()
            assert img is not None and dot is not None
            scale = img["width"] / SIZE.width
            assert abs(dot["x"] + dot["width"] / 2 - (img["x"] + 212 * scale)) < 1.5
            assert abs(dot["y"] + dot["height"] / 2 - (img["y"] + 131 * scale)) < 1.5
            line = page.locator("#step-0-1 line[data-action=swipe]")
            assert [await line.get_attribute(k) for k in ("x1", "y1", "x2", "y2")] == ["320", "350", "320", "150"]
            assert "swipe up 200 px" in await page.inner_text("#step-0-1 .badge")
            assert "long press 800 ms" in await page.inner_text("#step-0-2 .badge")
            assert await page.inner_text("#step-0-3 .badge") == "back button"
            assert await page.inner_text("#step-0-4 .badge") == "open app “Clock”"
            assert not errors, errors
        finally:
            await browser.close()
