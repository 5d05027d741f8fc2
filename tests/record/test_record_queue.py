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
from playwright.async_api import async_playwright

from cua.cli import main as cli
from cua.trajectory import find_trajectories, read_trajectory, validate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _person import act, demonstrate, next_task, open_live_view, oracle_pixel_actions  # noqa: E402  (bench/'s person)

TASKS = ["todo.add_todo@1", "todo.mark_done@1", "todo.complete_overdue@1"]


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Each task's oracle actions in pixels (an oracle eval of the same variants)."""
    tmp = tmp_path_factory.mktemp("oracle")
    assert cli(["eval", *TASKS, "--policy", "oracle", "--local", "--out", str(tmp), "--no-progress"]) == 0
    return oracle_pixel_actions(tmp)


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
            browser, page = await open_live_view(pw, url + "&operator=alice")
            done_tasks: list[str] = []
            handed = 0
            discarded = False
            while len(done_tasks) < len(TASKS):
                handed += 1
                task = await next_task(page, handed)
                progress = await page.inner_text("#progress")
                assert f"kept {len(done_tasks)} of {len(TASKS)}" in progress, progress
                assert await page.inner_text("#instruction")
                box = await page.locator("#screen").bounding_box()
                assert box is not None and round(box["width"]) == 1280
                actions = oracle[task]
                if not discarded:  # the first demonstration goes wrong: discard it, it comes back later
                    await act(page, box, actions[0], ack_ms=30_000)
                    await page.click("#discard")
                    discarded = True
                    continue
                await demonstrate(page, box, actions, ack_ms=30_000)
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
