"""Human demonstrations: the live view forwards a person's real input, and the recording is
crash-safe and replayable.

The "person" is a second headless Chromium that opens the live view page and uses its
mouse and keyboard on the screen image; the task's oracle only decides where to aim.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest
import uvicorn
from playwright.async_api import async_playwright

from cua.actions import Click, Done, Key, Scroll, Type
from cua.eval.episode import EpisodeContext
from cua.eval.local import open_local
from cua.record.live import LiveSession, build_live_app
from cua.record.recording import Recording, read_recording
from cua.sandboxes.browser.launcher import find_executable
from cua.tasks.registry import get_template

KEYS = {"Control": "Control", "Enter": "Enter", "Tab": "Tab", "Escape": "Escape", "Backspace": "Backspace"}


async def _wait_for(predicate, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out waiting for the live view"
        await asyncio.sleep(0.05)  # polling state that another task updates


@pytest.mark.parametrize("task", ["todo.mark_done@1", "todo.add_todo@1"])
async def test_a_person_demonstrates_through_the_live_view(tmp_path: Path, task: str) -> None:
    instance = get_template(task).instantiate(3)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        session = LiveSession(handle=handle, instance=instance, recording=Recording(tmp_path / "rec", instance))
        await session.start()
        app = build_live_app(session)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=find_executable().path,
                                                   args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
                page = await browser.new_page(viewport={"width": 1400, "height": 900})
                port = sock.getsockname()[1]
                await page.goto(f"http://127.0.0.1:{port}/?t={app.state.token}")
                await page.wait_for_function("document.getElementById('screen').naturalWidth > 0")
                assert instance.instruction in await page.inner_text("#instruction")
                box = await page.locator("#screen").bounding_box()
                assert box is not None and round(box["width"]) == 1280  # shown unscaled

                ctx = EpisodeContext(handle, session.last)
                async for action in instance.oracle(ctx):
                    before = session.recording.count
                    if isinstance(action, Click):
                        await page.mouse.click(box["x"] + action.x, box["y"] + action.y)
                    elif isinstance(action, Type):
                        await page.focus("#screen")
                        for char in action.text:  # one keydown per character, as a person types
                            await page.keyboard.press(char)
                    elif isinstance(action, Key):
                        await page.focus("#screen")
                        await page.keyboard.press("+".join(KEYS.get(k, k) for k in action.keys))
                    elif isinstance(action, Scroll):
                        await page.mouse.move(box["x"] + action.x, box["y"] + action.y)
                        await page.mouse.wheel(action.dx, action.dy)
                    elif isinstance(action, Done):
                        break
                    else:
                        raise AssertionError(f"this test does not forward {action.type}")
                    await _wait_for(lambda: session.recording.count > before)
                    await _wait_for(lambda: session.lock.locked() is False)
                    ctx.update(session.last)
                await page.click("#done")
                await _wait_for(session.finished.is_set)
                await page.wait_for_selector("#result.pass", timeout=30_000)
                await browser.close()
        finally:
            server.should_exit = True
            await serving

    meta, steps, result = read_recording(tmp_path / "rec")
    assert meta.task_id == task and result is not None and result.status == "done"
    assert result.verdict is not None and result.verdict.passed, result.verdict
    assert steps and steps[-1].action["type"] == "done"
    assert all((tmp_path / "rec" / s.frame).exists() for s in steps if s.frame)
    assert (tmp_path / "rec" / "frames" / "000000.jpg").exists()


def test_a_torn_recording_reads_back_as_a_consistent_prefix(tmp_path: Path) -> None:
    instance = get_template("todo.mark_done@1").instantiate(0)
    rec = Recording(tmp_path / "r", instance)
    from cua.observation import Observation, Screenshot, Size

    size = Size(width=4, height=4)
    obs = Observation(sandbox_id="x", frame=size, screen=size,
                      screenshot=Screenshot(format="png", width=4, height=4, data=b"png"))
    rec.add(Click(x=1, y=1), obs)
    rec.add(Type(text="hi"), obs)
    # The writer dies while appending a third line.
    with (tmp_path / "r" / "steps.jsonl").open("a") as fh:
        fh.write('{"index": 3, "t": 1.0, "action": {"type": "cli')
    meta, steps, result = read_recording(tmp_path / "r")
    assert [s.index for s in steps] == [1, 2] and result is None
    # A recording never overwrites another.
    with pytest.raises(FileExistsError):
        Recording(tmp_path / "r", instance)


def test_recorded_steps_replay_through_the_scripted_policy(tmp_path: Path) -> None:
    from cua.policy.backends.scripted import load_script

    instance = get_template("todo.mark_done@1").instantiate(0)
    rec = Recording(tmp_path / "r", instance)
    rec.add(Click(x=10, y=20), None)
    rec.add(Key(keys="ctrl+s"), None)
    rec.finish(done=None, verdict=None)
    script = load_script(tmp_path / "r" / "steps.jsonl")
    assert [step.actions for step in script] == [[Click(x=10, y=20)], [Key(keys=["Control", "s"])]]
    assert json.loads((tmp_path / "r" / "result.json").read_text())["status"] == "aborted"
