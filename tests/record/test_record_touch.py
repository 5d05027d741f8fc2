"""A person records a phone task through the live view: their pointer is a finger there.

The "person" is a second headless Chromium on the live view page, using its mouse on the
phone's screen image; the phone is a mobile sandbox with the probe app (tests/mobile), whose
pad logs the touch events it gets. A click is a tap, a press held still a long press, a slow
stroke a swipe and a quick one a fling, two quick clicks a double tap, and the page's buttons
the phone's back, home and recents; each is recorded as that touch action, and reaches the app
as touch input."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
import uvicorn
from _phone import probe_log, probe_service
from playwright.async_api import Page, async_playwright

from cua.episode.local import open_local
from cua.judges import spec as S
from cua.judges.judge import StateJudge
from cua.observation import Size
from cua.record.live import LiveSession, build_live_app
from cua.sandboxes.browser.launcher import find_executable
from cua.sandboxes.mobile import MobileSandbox
from cua.task import TaskInstance
from cua.tasks.apps import service
from cua.trajectory import TrajectoryWriter, read_trajectory, validate

pytestmark = pytest.mark.slow  # two Chromiums

#: A point of the probe's pad, in the phone screen's CSS px (the app area starts under the 24 px status bar).
PAD = (200.0, 24 + 150.0)


async def _until(predicate, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out waiting for the live view"
        await asyncio.sleep(0.05)  # polling state that another task updates


def _instance() -> TaskInstance:
    judge = StateJudge(S.JudgeSpec.model_validate(
        {"checks": [{"check": "the answer", "get": {"kind": "answer"}, "expect": {"op": "text", "value": "ok"}}]}))
    return TaskInstance(task_id="phone.probe@1", seed=0, instruction="Touch the pad", sandbox_kind="mobile",
                        sandbox_config={"isolation": "shared", "services": [probe_service(), service("todo", "todo")],
                                        "start_app": "probe"},
                        judge=judge, oracle=None)


async def test_a_persons_pointer_is_recorded_as_touch_actions_on_a_phone(tmp_path: Path) -> None:
    instance = _instance()
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        sandbox = handle.sandbox
        assert isinstance(sandbox, MobileSandbox)
        session = LiveSession(handle=handle, instance=instance, writer=TrajectoryWriter(tmp_path / "rec"))
        first = await session.start()
        frame = first.frame
        viewport = sandbox.page.viewport_size
        assert viewport is not None
        css = frame.width / viewport["width"]  # frame px per screen CSS px
        app = build_live_app(session)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=find_executable().path,
                                                   args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
                page = await browser.new_page(viewport={"width": 1400, "height": 1000})
                await page.goto(f"http://127.0.0.1:{sock.getsockname()[1]}/?t={app.state.token}")
                await page.wait_for_function("document.getElementById('screen').naturalWidth > 0")
                await page.wait_for_function("!document.getElementById('nav').hidden")  # the page knows a phone
                await probe_log(sandbox)
                box = await page.locator("#screen").bounding_box()
                assert box is not None

                def at(x: float, y: float) -> tuple[float, float]:
                    """A screen CSS point -> where it is shown on the live page."""
                    return box["x"] + x * css * box["width"] / frame.width, box["y"] + y * css * box["height"] / frame.height

                async def gesture(perform, kind: str) -> None:  # type: ignore[no-untyped-def]
                    before = session.steps
                    await perform(page)
                    await _until(lambda: session.steps > before and not session.lock.locked())
                    assert session.last is not None and session.last.error is None, (kind, session.last.error)

                async def tap(p: Page) -> None:
                    await p.mouse.click(*at(*PAD))

                async def long_press(p: Page) -> None:
                    await p.mouse.move(*at(*PAD))
                    await p.mouse.down()
                    await asyncio.sleep(0.7)  # the person holds the press: the hold is the gesture
                    await p.mouse.up()

                async def swipe(p: Page) -> None:
                    await p.mouse.move(*at(PAD[0], 24 + 60))
                    await p.mouse.down()
                    await asyncio.sleep(0.3)  # a slow stroke
                    await p.mouse.move(*at(PAD[0], 24 + 260), steps=8)
                    await p.mouse.up()

                async def fling(p: Page) -> None:
                    await p.mouse.move(*at(300, 24 + 150))
                    await p.mouse.down()
                    await p.mouse.move(*at(60, 24 + 150), steps=2)
                    await p.mouse.up()

                async def double_tap(p: Page) -> None:
                    await p.mouse.dblclick(*at(*PAD))

                async def home(p: Page) -> None:
                    await p.click("#nav [data-nav=home]")

                for perform in (tap, long_press, swipe, fling, double_tap):
                    await gesture(perform, perform.__name__)
                log = await probe_log(sandbox)
                kinds = [e["type"] for e in log]
                assert kinds.count("touchstart") == 6, kinds  # tap, press, swipe, fling, and two of the double tap
                assert "mousedown" not in kinds[:kinds.index("touchend")]
                await gesture(home, "home")
                await page.fill("#answer", "ok")
                await page.click("#done")
                await _until(session.finished.is_set)
                await page.wait_for_selector("#result.pass", timeout=30_000)
                await browser.close()
        finally:
            server.should_exit = True
            await serving

    assert validate(tmp_path / "rec").ok, validate(tmp_path / "rec").problems
    traj = read_trajectory(tmp_path / "rec")
    actions = [s.action for s in traj.steps if s.action]
    assert [a["type"] for a in actions] == ["tap", "long_press", "swipe", "fling", "double_tap", "nav", "done"], actions
    tap_action, press, stroke, quick, double, nav = actions[:6]
    expected = Size(width=round(PAD[0] * css), height=round(PAD[1] * css))
    assert abs(tap_action["x"] - expected.width) <= 2 * css and abs(tap_action["y"] - expected.height) <= 2 * css
    assert press["duration_ms"] >= 500
    assert stroke["direction"] == "down" and abs(stroke["distance"] - 200 * css) <= 4 * css and stroke["duration_ms"] >= 150
    assert quick["direction"] == "left" and abs(quick["distance"] - 240 * css) <= 4 * css
    assert abs(double["x"] - expected.width) <= 2 * css
    assert nav == {"type": "nav", "button": "home"}
