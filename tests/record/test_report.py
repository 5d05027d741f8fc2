"""`cua report`: the static run report, driven in a real headless Chromium.

The runs here are written by the real trajectory writer (tests/_runs.py: frames drawn
with PIL, so where an action lands is known to the pixel); `test_report_of_a_real_eval` in
test_eval_resume.py reports a run of `cua eval` itself. The checks are what a person would see: the steps, the
frames loaded, the action drawn where it happened, the evidence, the delta between runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _runs import ACTIONS, CLICK, DRAG, SIZE, TYPED, make_run, write_episode  # tests/'s own helpers
from playwright.async_api import Page, async_playwright

from cua.report import build_report, compare_runs, load_run
from cua.sandboxes.browser.launcher import find_executable
from cua.task import Verdict
from cua.trajectory import TrajectoryEnd


def _frames_held(folder: Path) -> int:
    """JPEG files stored in `folder` itself (links are not followed: what the folder costs)."""
    return sum(name.endswith(".jpg") for _, _, files in os.walk(folder) for name in files)


async def _open(pw: Any, url: str) -> tuple[Any, Page, list[str]]:
    browser = await pw.chromium.launch(executable_path=find_executable().path,
                                       args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto(url)
    await page.wait_for_function("document.body.dataset.ready === '1'")
    assert not errors, errors
    return browser, page, requests


def test_rows_breakdowns_and_delta_are_computed_from_the_files(tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", {("todo.rename@1", 0): True, ("todo.rename@1", 1): False, ("shop.buy@1", 0): False})
    b = make_run(tmp_path / "b", {("todo.rename@1", 0): True, ("todo.rename@1", 1): True, ("shop.buy@1", 0): False})
    run = load_run(a)
    assert [(r.task_id, r.seed, r.passed, r.attempts) for r in run.rows] == [
        ("shop.buy@1", 0, False, 2), ("todo.rename@1", 0, True, 1), ("todo.rename@1", 1, False, 1)]
    assert all(r.timing_ms == {"policy": 600.0, "environment": 420.0, "judge": 4.0} for r in run.rows)
    deltas = {d.task_id: d for d in compare_runs(run, load_run(b))}
    assert deltas["todo.rename@1"].delta == pytest.approx(0.5) and deltas["shop.buy@1"].delta == 0.0
    assert deltas["todo.rename@1"].seeds == {0: [True, True], 1: [False, True]}


@pytest.mark.slow
async def test_the_report_opens_from_disk_and_shows_each_step_with_its_action(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", {("todo.rename@1", 0): False, ("todo.rename@1", 1): True,
                                      ("shop.buy@1", 0): False})
    index = build_report(run)
    assert index == run / "report" / "index.html"
    async with async_playwright() as pw:
        browser, page, requests = await _open(pw, index.resolve().as_uri())
        try:
            assert await page.inner_text("[data-card=episodes] .v") == "3"
            assert await page.inner_text("[data-card=success] .v") == "33.3%"
            assert await page.inner_text("table.failures [data-failure=judged_wrong] td.num") == "2"
            await page.click("[data-tab=app]")
            assert await page.locator("table.success tr[data-group=shop]").count() == 1

            await page.click("table.episodes tr[data-key='todo.rename@1__s0'] a")
            await page.wait_for_selector(".episode")
            assert "Please do todo.rename@1." in await page.inner_text(".instruction")
            steps = page.locator(".episode > section.step:not(.final)")
            assert await steps.count() == len(ACTIONS)
            # every frame loaded: each step's and the final one
            widths = await page.eval_on_selector_all(".episode .shot img", "els => els.map(e => e.complete ? e.naturalWidth : 0)")
            assert widths == [SIZE.width] * (len(ACTIONS) + 1), widths

            # the click is drawn where it happened: the marker's centre, in the displayed
            # image's coordinates, is the action's point scaled to the displayed size
            img = await page.locator("#step-0-0 .shot img").bounding_box()
            dot = await page.locator("#step-0-0 [data-marker=click] circle").bounding_box()
            assert img is not None and dot is not None
            scale = img["width"] / SIZE.width
            assert abs(dot["x"] + dot["width"] / 2 - (img["x"] + CLICK[0] * scale)) < 1.5
            assert abs(dot["y"] + dot["height"] / 2 - (img["y"] + CLICK[1] * scale)) < 1.5
            # the drag's path goes through its points, start and end marked
            start = await page.locator("#step-0-2 [data-marker=drag] circle").bounding_box()
            assert start is not None
            assert abs(start["x"] + start["width"] / 2 - (img["x"] + DRAG[0][0] * scale)) < 1.5
            points = await page.get_attribute("#step-0-2 polyline", "points")
            assert points == " ".join(f"{x:g},{y:g}" for x, y in DRAG)
            # typed text is shown as text (markup in it is not interpreted)
            assert await page.inner_text("#step-0-1 .badge") == f"type “{TYPED}”"
            assert await page.locator("#step-0-1 .badge b").count() == 0
            # the model's output and thought, the action error, the parse error
            assert "model output 0" in await page.inner_text("#step-0-0 pre.raw")
            assert await page.inner_text("#step-0-0 pre.thought") == "thinking about step 0"
            assert "scrolled past the end" in await page.inner_text("#step-0-3 .action-error")
            assert "no action in the output" in await page.inner_text("#step-0-4 .parse-error")
            # steps count from 0, as in the trajectory and the exports' `step` column
            assert await page.inner_text("#step-0-0 h3") == "step 0"
            # the model's HTTP 500 that was retried before step 0's answer
            assert "HTTP 500: upstream overloaded" in await page.inner_text("#step-0-0 .retries li")
            assert "1" in await page.inner_text(".facts")
            # the verdict with each check's evidence
            row = page.locator("table.evidence tr[data-check='title is renamed']")
            assert "Buy milk" in await row.inner_text() and "Milk" in await row.inner_text()
            # every evidence line is a sentence: no Python type names, subgoals reached read yes
            lines = await page.eval_on_selector_all(
                "table.evidence tr[data-check]", "rows => rows.map(r => [r.dataset.check, r.cells[0].textContent, "
                "r.cells[0].className, r.cells[1].textContent])")
            by_check = {check: (held, cls, sentence) for check, held, cls, sentence in lines}
            assert not any("NoneType" in s or "not text" in s for _, _, s in by_check.values()), lines
            assert by_check["subgoal 1: #sort shows Price: high to low"][:2] == ("yes", "pass")
            held, cls, sentence = by_check["subgoal 1: #sort is Price: high to low"]
            assert (held, cls) == ("not needed", "muted") and "nothing" in sentence, sentence
            held, cls, sentence = by_check["subgoal 2: the cart is open"]
            assert (held, cls) == ("yes", "pass") and "later subgoal" in sentence, sentence
            assert by_check["subgoal 4: the order is placed"][:2] == ("no", "fail")
            assert await page.inner_text(".verdict .failure") == "judged_wrong"
            # the accessibility tree, loaded when opened
            await page.click("#step-0-0 details.axtree summary")
            await page.wait_for_function("document.querySelector('#step-0-0 pre.ax').textContent.includes('Save item')")

            # an infrastructure retry is kept as an attempt, with its error
            await page.goto(index.resolve().as_uri() + "#/ep/0/shop.buy@1__s0")
            await page.wait_for_selector(".episode[data-key='shop.buy@1__s0']")
            lost = page.locator("details.attempt-lost[data-attempt='0']")
            assert "sandbox_crashed" in await lost.inner_text()
            await page.screenshot(path=str(tmp_path / "viewer.png"), full_page=True)
        finally:
            await browser.close()
        assert requests and all(url.startswith("file://") for url in requests), \
            [u for u in requests if not u.startswith("file://")]


@pytest.mark.slow
async def test_two_runs_side_by_side_as_a_per_task_delta(tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", {("todo.rename@1", 0): True, ("todo.rename@1", 1): False})
    b = make_run(tmp_path / "b", {("todo.rename@1", 0): True, ("todo.rename@1", 1): True})
    out = tmp_path / "cmp"
    proc = subprocess.run([sys.executable, "-m", "cua.cli", "report", str(a), "--compare", str(b), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # the frames are linked, never copied: one relative link per episode, no image file
    links = sorted((out / "frames").glob("*/*"))
    assert len(links) == 2 * 2 and all(p.is_symlink() and not os.path.isabs(os.readlink(p)) for p in links)
    assert _frames_held(out) == 0
    # the default report folder (inside run A) links run B's frames the same way
    assert subprocess.run([sys.executable, "-m", "cua.cli", "report", str(a), "--compare", str(b)],
                          capture_output=True, text=True, timeout=120).returncode == 0
    assert all(p.is_symlink() for p in (a / "report" / "frames").glob("*/*"))
    assert _frames_held(a / "report") == 0
    async with async_playwright() as pw:
        browser, page, _ = await _open(pw, (out / "index.html").resolve().as_uri())
        try:
            row = page.locator("#compare tr[data-task='todo.rename@1']")
            text = await row.inner_text()
            assert "50.0% (1/2)" in text and "100.0% (2/2)" in text and "+50.0 pt" in text
            await row.locator("a").nth(3).click()  # seed 1 in run B
            await page.wait_for_selector(".episode")
            widths = await page.eval_on_selector_all(".episode .shot img", "els => els.map(e => e.naturalWidth)")
            assert widths and all(w == SIZE.width for w in widths)
            assert "passed" in await page.inner_text(".verdict")
        finally:
            await browser.close()


@pytest.mark.slow
async def test_serve_follows_a_run_in_progress(tmp_path: Path) -> None:
    run = tmp_path / "run"
    make_run(run, {("todo.rename@1", 0): True})
    writer = write_episode(run, "todo.rename@1", 1, passed=True, finish=False)
    # leaving the with closes the stdout pipe (a ResourceWarning otherwise)
    with subprocess.Popen([sys.executable, "-m", "cua.cli", "report", str(run), "--serve", "--interval", "0.3"],
                          stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}) as proc:
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:"), url
            async with async_playwright() as pw:
                browser, page, _ = await _open(pw, url)
                try:
                    assert await page.inner_text("[data-card=running] .v") == "1"
                    assert await page.is_visible("#live")
                    writer.end(TrajectoryEnd(status="completed", steps=len(ACTIONS),
                                             verdict=Verdict(score=1.0, passed=True, progress=1.0)))
                    await page.wait_for_function(
                        "document.querySelector('[data-card=running] .v').textContent === '0' && "
                        "document.querySelector('[data-card=passed] .v').textContent === '2'", timeout=20_000)
                finally:
                    await browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def test_evidence_of_a_real_judge_reads_as_sentences() -> None:
    """The fake suite's judge, fed a state one click short of the target: its subgoal held
    (green, yes), the target did not (no), and no line names a Python type."""
    from cua.report.evidence import evidence_lines
    from cua.state import StateResult
    from cua.task import JudgeInput, query_key
    from cua.tasks.registry import get_template

    instance = get_template("fake.set_counter@1").instantiate(0)
    target = int(instance.instruction.rsplit(" ", 1)[1].rstrip("."))
    (query,) = instance.judge.queries()
    state = {query_key(query): StateResult(ok=True, value={"count": target - 1, "submissions": [], "name": None})}
    verdict = instance.judge.evaluate(JudgeInput(initial=state, final=state))
    lines = {line["check"]: line for line in evidence_lines(e.model_dump(mode="json") for e in verdict.evidence)}
    assert lines["subgoal 1: one click short of the target"]["held"] is True
    assert lines["subgoal 1: one click short of the target"]["sentence"].startswith(
        "Subgoal 1, one click short of the target: yes; read")
    target_line = lines["the counter shows the target"]
    assert target_line["held"] is False
    assert target_line["sentence"] == (f"the counter shows the target: no; read {target - 1} "
                                       f"(app_state[app] -> count); expected {target}.")
    assert not any("NoneType" in line["sentence"] for line in lines.values())
