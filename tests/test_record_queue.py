"""`cua record SUITE --seeds`: a queue of tasks demonstrated one after another in the live
view, by a "person" (a second, headless Chromium using the page's mouse and keyboard on the
screen image). The recorder runs as the real command in a child process; the person aims
where the task's oracle would (its pixel actions from an oracle eval of the same variants).
Three tasks are kept in a row, a discarded demonstration goes back to the queue and is
done again, and every kept recording is a passing trajectory that replays."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, async_playwright

from cua.cli import main as cli
from cua.sandboxes.browser.launcher import find_executable
from cua.trajectory import find_trajectories, read_trajectory, validate

TASKS = ["todo.add_todo@1", "todo.mark_done@1", "todo.complete_overdue@1"]
KEYS = {"Control": "Control", "Enter": "Enter", "Tab": "Tab", "Escape": "Escape", "Backspace": "Backspace"}


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Each task's oracle actions in pixels (an oracle eval of the same variants)."""
    tmp = tmp_path_factory.mktemp("oracle")
    assert cli(["eval", *TASKS, "--policy", "oracle", "--local", "--out", str(tmp), "--no-progress"]) == 0
    out = {}
    for folder in find_trajectories(tmp):
        traj = read_trajectory(folder)
        assert traj.meta is not None
        out[traj.meta.task_id] = [s.action for s in traj.steps if s.action is not None]
    return out


async def _act(page: Page, box: dict[str, float], action: dict[str, Any]) -> None:
    """One action as a person does it, waiting for the live view to acknowledge each input."""

    async def acked(do: Any) -> None:
        before = await page.evaluate("window.cuaAcks")
        await do()
        await page.wait_for_function(f"window.cuaAcks > {before}", timeout=30_000)

    kind = action["type"]
    if kind == "click":
        await acked(lambda: page.mouse.click(box["x"] + action["x"], box["y"] + action["y"]))
    elif kind == "type":
        await page.focus("#screen")
        for char in action["text"]:
            await acked(lambda c=char: page.keyboard.press(c))
    elif kind == "key":
        await page.focus("#screen")
        await acked(lambda: page.keyboard.press("+".join(KEYS.get(k, k) for k in action["keys"])))
    elif kind == "scroll":
        await page.mouse.move(box["x"] + action["x"], box["y"] + action["y"])
        await acked(lambda: page.mouse.wheel(action.get("dx", 0), action.get("dy", 0)))
    else:
        raise AssertionError(f"this person does not do {kind}")


async def _next_task(page: Page, n: int) -> str:
    await page.wait_for_function(f"window.cuaTasks >= {n} && window.cuaFrames > window.cuaTaskFrame",
                                 timeout=120_000)
    return (await page.inner_text("#task")).split(" · ")[0]


@pytest.mark.slow
async def test_a_person_records_three_tasks_in_a_row(tmp_path: Path, oracle: dict[str, list[dict[str, Any]]]) -> None:
    out = tmp_path / "rec"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cua.cli", "record", *TASKS, "--seed-list", "0", "--port", "0", "--out", str(out),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env={**os.environ})
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 120)).decode()
        assert line.startswith("live view: "), line
        url = line.split()[2]
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=find_executable().path,
                                               args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            page = await browser.new_page(viewport={"width": 1400, "height": 900})
            await page.goto(url + "&operator=alice")
            done_tasks: list[str] = []
            handed = 0
            discarded = False
            while len(done_tasks) < len(TASKS):
                handed += 1
                task = await _next_task(page, handed)
                progress = await page.inner_text("#progress")
                assert f"kept {len(done_tasks)} of {len(TASKS)}" in progress, progress
                assert await page.inner_text("#instruction")
                box = await page.locator("#screen").bounding_box()
                assert box is not None and round(box["width"]) == 1280
                actions = oracle[task]
                if not discarded:  # the first demonstration goes wrong: discard it, it comes back later
                    await _act(page, box, actions[0])
                    await page.click("#discard")
                    discarded = True
                    continue
                final = actions[-1] if actions[-1]["type"] == "done" else {"type": "done"}
                for action in actions:
                    if action["type"] != "done":
                        await _act(page, box, action)
                if final.get("answer"):
                    await page.fill("#answer", final["answer"])
                await page.click("#done")
                done_tasks.append(task)
            await page.wait_for_function("document.getElementById('instruction').textContent.includes('all tasks')",
                                         timeout=60_000)
            assert "kept 3 of 3" in await page.inner_text("#progress")
            await browser.close()
        rest = (await asyncio.wait_for(proc.stdout.read(), 60)).decode()
        assert await asyncio.wait_for(proc.wait(), 60) == 0, rest
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert sorted(done_tasks) == sorted(TASKS)
    assert rest.strip().splitlines()[-1].startswith("kept=3 total=3 failed=0 discarded=1"), rest
    lines = [json.loads(x) for x in (out / "recording.jsonl").read_text().splitlines()]
    assert [x["outcome"] for x in lines].count("kept") == 3 and [x["outcome"] for x in lines].count("discarded") == 1
    assert all(x["operator"] == "alice" for x in lines)
    kept = find_trajectories(out / "trajectories")
    assert len(kept) == 3 and validate(out / "trajectories").ok
    for folder in kept:
        traj = read_trajectory(folder)
        assert traj.meta is not None and traj.meta.producer == "record" and traj.meta.agent.name == "alice"
        assert traj.end is not None and traj.end.verdict is not None and traj.end.verdict.passed
    assert not (out / "incoming").exists() or not any((out / "incoming").iterdir())
    # the recordings replay to their verdicts
    replay = await asyncio.create_subprocess_exec(sys.executable, "-m", "cua.cli", "replay", str(out / "trajectories"),
                                                  "--local", "--out", str(tmp_path / "replay"),
                                                  stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    said = (await replay.communicate())[0].decode()
    assert replay.returncode == 0 and "reproduced=3" in said, said
