"""Human demonstrations: the live view forwards a person's real input, and the recording is a
trajectory (the format eval writes) that keeps what the person saw and replays.

The "person" is a second headless Chromium that opens the live view page and uses its
mouse and keyboard on the screen image; the task's oracle only decides where to aim.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
import uvicorn
from playwright.async_api import async_playwright

from cua.actions import Click, Done, Key, Scroll, Type
from cua.episode import EpisodeContext, OracleAgent, run_episode
from cua.episode.local import open_local
from cua.record.live import LiveSession, build_live_app
from cua.sandboxes.browser.launcher import find_executable
from cua.state import DomQuery
from cua.tasks.registry import get_template
from cua.trajectory import TrajectoryWriter, read_trajectory, validate

KEYS = {"Control": "Control", "Enter": "Enter", "Tab": "Tab", "Escape": "Escape", "Backspace": "Backspace"}


async def _wait_for(predicate, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out waiting for the live view"
        await asyncio.sleep(0.05)  # polling state that another task updates


@pytest.mark.slow
@pytest.mark.parametrize("task", ["todo.mark_done@1", "todo.add_todo@1"])
async def test_a_person_demonstrates_through_the_live_view(tmp_path: Path, task: str) -> None:
    instance = get_template(task).instantiate(3)
    typed: list[str] = []
    kinds: list[str] = []
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        session = LiveSession(handle=handle, instance=instance, writer=TrajectoryWriter(tmp_path / "rec"))
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

                assert session.last is not None
                ctx = EpisodeContext(handle, session.last)
                async for action in instance.oracle(ctx):
                    before = session.last.step  # the sandbox's action counter
                    performed = 1
                    if isinstance(action, Click):
                        await page.mouse.click(box["x"] + action.x, box["y"] + action.y)
                    elif isinstance(action, Type):
                        await page.focus("#screen")
                        for char in action.text:  # one keydown per character, as a person types
                            await page.keyboard.press(char)
                        performed = len(action.text)
                        typed.append(action.text)
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
                    kinds.append(action.type)
                    await _wait_for(lambda: session.last is not None and session.last.step >= before + performed)
                    await _wait_for(lambda: session.lock.locked() is False)
                    ctx.update(session.last)
                await page.click("#done")
                await _wait_for(session.finished.is_set)
                await page.wait_for_selector("#result.pass", timeout=30_000)
                await browser.close()
        finally:
            server.should_exit = True
            await serving

    traj = read_trajectory(tmp_path / "rec")
    assert validate(tmp_path / "rec").ok, validate(tmp_path / "rec").problems
    assert traj.meta is not None and traj.meta.producer == "record" and traj.meta.task_id == task
    assert traj.meta.agent.kind == "human" and traj.meta.reset_seed == instance.reset_seed
    assert traj.end is not None and traj.end.status == "completed" and traj.end.done is not None
    assert traj.end.verdict is not None and traj.end.verdict.passed, traj.end.verdict
    actions = [s.action for s in traj.steps]
    assert actions and actions[-1] is not None and actions[-1]["type"] == "done"
    # consecutive keystrokes are one type step with its typing time, not one step per key
    assert [a["type"] for a in actions if a] == [*kinds, "done"]
    assert [a["text"] for a in actions if a and a["type"] == "type"] == typed
    assert all("typing" in s.timings_ms for s in traj.steps if s.action and s.action["type"] == "type"
               and len(s.action["text"]) > 1)
    # every step keeps the screen the person acted on; n steps, n + 1 frames
    refs = traj.observations()
    assert len(refs) == len(traj.steps) + 1 and all(traj.frame_bytes(r) for r in refs)
    assert len({r.frame for r in refs}) == len(refs)

    # an eval of the same task variant loads through the same reader, and tells the same story
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        record = await run_episode(handle, instance, OracleAgent(), writer=TrajectoryWriter(tmp_path / "eval"))
    evaluated = read_trajectory(tmp_path / "eval")
    assert record.verdict is not None and record.verdict.passed
    assert evaluated.meta is not None and evaluated.meta.producer == "eval"
    for a, b in ((traj.meta, evaluated.meta),):
        assert (a.task_id, a.seed, a.reset_seed, a.instruction, a.sandbox_kind) == \
            (b.task_id, b.seed, b.reset_seed, b.instruction, b.sandbox_kind)
    eval_kinds = [s.action["type"] for s in evaluated.steps if s.action]
    assert [k for k in eval_kinds if k != "done"] == kinds
    assert evaluated.end is not None and evaluated.end.verdict is not None and evaluated.end.verdict.passed


@pytest.mark.slow
async def test_a_recording_keeps_the_screen_before_each_action_and_replays(tmp_path: Path) -> None:
    from cua.policy.backends.scripted import load_script

    instance = get_template("todo.add_todo@1").instantiate(0)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        session = LiveSession(handle=handle, instance=instance, writer=TrajectoryWriter(tmp_path / "r"))
        first = await session.start()
        (box,) = await handle.query([DomQuery(selector="input[name=title], input[type=text]", prop="bbox")])
        assert box.ok and box.value, box
        await session.act({"type": "click", "x": box.value["x"] + 5, "y": box.value["y"] + 5})
        after_click = session.last
        for char in "hello":
            await session.act({"type": "type", "text": char})
        await session.act({"type": "key", "keys": ["Control", "a"]})
        record = await session.finish(None)  # Ctrl-C: kept, not judged
    assert record.steps == 3 and record.verdict is None
    traj = read_trajectory(tmp_path / "r")
    assert [s.action["type"] for s in traj.steps if s.action] == ["click", "type", "key"]
    assert traj.steps[1].action == {"type": "type", "text": "hello"}
    assert traj.end is not None and traj.end.failure == "abandoned" and traj.end.verdict is None
    # the observation kept with each step is the one before it: the click acted on the first screen
    assert first.screenshot is not None and after_click is not None and after_click.screenshot is not None
    assert traj.frame_bytes(traj.steps[0].observation) == first.screenshot.data
    assert traj.frame_bytes(traj.steps[1].observation) == after_click.screenshot.data
    script = load_script(tmp_path / "r" / "steps.jsonl")
    assert [step.actions for step in script] == [[Click(x=box.value["x"] + 5, y=box.value["y"] + 5)],
                                                 [Type(text="hello")], [Key(keys=["Control", "a"])]]
