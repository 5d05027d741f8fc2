"""`cua replay`: passing oracle trajectories of the todo and shop suites replay to the same
verdict with no divergence; a tampered action is reported as the first divergence at its
step; a failing recording replays to its failing verdict; unusable input is the caller's
fault. Real Chromium sandboxes; the screen comparison is checked on real frames."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from cua.cli import main as cli
from cua.errors import ErrorRecord
from cua.screen_diff import SCREEN_THRESHOLD, screen_difference
from cua.trajectory import read_trajectory

#: A sample of each suite (every passing oracle trajectory of both: the command in the report).
SAMPLE = ["todo.add_todo@1", "todo.complete_overdue@1", "shop.add_to_cart@1"]


def _jpeg(image: Image.Image, quality: int) -> bytes:
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality)
    return out.getvalue()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rec")
    assert cli(["eval", *SAMPLE, "--policy", "oracle", "--local", "--out", str(root / "run"), "--no-progress"]) == 0
    return root / "run"


@pytest.mark.slow
def test_passing_oracle_trajectories_replay_to_the_same_verdict(recorded: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "replay"
    assert cli(["replay", str(recorded), "--passing", "--local", "--out", str(out)]) == 0
    reports = [json.loads(line) for line in (out / "replay.jsonl").read_text().splitlines()]
    assert len(reports) == len(SAMPLE)
    assert {r["task_id"].split(".")[0] for r in reports} == {"todo", "shop"}
    for report in reports:
        assert report["reproduced"] and report["replayed_passed"] is True
        assert report["first_divergence"] is None, report["first_divergence"]
        assert len(report["checks"]) == report["steps"] + 1  # the reset, then one per step
        assert all(c["url_recorded"] == c["url_replayed"] for c in report["checks"])
        replayed = read_trajectory(report["trajectory"])
        assert replayed.meta is not None and replayed.meta.producer == "replay"
        assert replayed.meta.extra["replay_of"] == read_trajectory(report["source"]).meta.id  # type: ignore[union-attr]
        assert [s.action for s in replayed.steps] == [s.action for s in read_trajectory(report["source"]).steps]
        assert all(s.progress is not None for s in replayed.steps)  # the judge's state, kept for the next replay
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith(f"replayed={len(SAMPLE)} reproduced={len(SAMPLE)}")
    # a replay is itself replayable, and now the judge's progress is compared at every step too
    again = tmp_path / "again"
    assert cli(["replay", str(out / "trajectories"), "--local", "--out", str(again)]) == 0
    for line in (again / "replay.jsonl").read_text().splitlines():
        report = json.loads(line)
        assert report["first_divergence"] is None
        assert all(c["progress_recorded"] is not None for c in report["checks"][1:])


@pytest.mark.slow
def test_a_tampered_step_is_the_first_divergence(recorded: Path, tmp_path: Path) -> None:
    source = next(p for p in (recorded / "trajectories").iterdir() if p.name.startswith("todo.add_todo"))
    copy = tmp_path / "tampered"
    shutil.copytree(source, copy)
    lines = (copy / "steps.jsonl").read_text().splitlines()
    steps = [json.loads(line) for line in lines]
    k = next(i for i, s in enumerate(steps) if s["action"]["type"] == "click")
    size = steps[k]["observation"]["size"]
    steps[k]["action"] = {"type": "click", "x": size["width"] - 3, "y": size["height"] - 3, "button": "left",
                          "count": 1}
    (copy / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    out = tmp_path / "out"
    assert cli(["replay", str(copy), "--local", "--out", str(out)]) == 1
    report = json.loads((out / "replay.jsonl").read_text())
    assert report["first_divergence"] is not None and report["first_divergence"]["step"] == k
    assert set(report["first_divergence"]["what"]) & {"screen", "url"}
    assert report["recorded_passed"] is True and report["replayed_passed"] is False and not report["reproduced"]


@pytest.mark.slow
def test_a_failing_recording_replays_to_its_failure(tmp_path: Path) -> None:
    import asyncio

    from cua.episode import OracleAgent, open_local, run_episode
    from cua.tasks.registry import get_template
    from cua.trajectory import TrajectoryWriter

    instance = get_template("todo.add_todo@1").instantiate(1)

    async def near_miss() -> None:
        async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
            await run_episode(handle, instance, OracleAgent("near_miss"), writer=TrajectoryWriter(tmp_path / "nm"))

    asyncio.run(near_miss())
    assert read_trajectory(tmp_path / "nm").end.verdict.passed is False  # type: ignore[union-attr]
    assert cli(["replay", str(tmp_path / "nm"), "--local", "--out", str(tmp_path / "out")]) == 0
    report = json.loads((tmp_path / "out" / "replay.jsonl").read_text())
    assert report["reproduced"] and report["replayed_passed"] is False and report["first_divergence"] is None


def test_unusable_input_is_the_callers_fault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["replay", str(tmp_path / "nothing"), "--local", "--out", str(tmp_path / "o")]) == 2
    folder = tmp_path / "t"
    folder.mkdir()
    meta = {"format": "cua.trajectory", "version": 1, "producer": "eval", "task_id": "todo.no_such_task@9",
            "seed": 0, "instruction": "x", "sandbox_kind": "browser", "agent": {"name": "a"}}
    (folder / "meta.json").write_text(json.dumps(meta))
    assert cli(["replay", str(folder), "--local", "--out", str(tmp_path / "o2")]) == 1
    assert "not replayed (client fault)" in capsys.readouterr().out
    report = json.loads((tmp_path / "o2" / "replay.jsonl").read_text())
    error = ErrorRecord.model_validate(report["error"])
    assert error.fault == "client" and error.code == "bad_request" and "no_such_task" in error.message


def test_screen_difference_ignores_encoding_and_a_caret_and_catches_a_ticked_checkbox() -> None:
    base = Image.new("RGB", (1280, 720), "white")
    draw = ImageDraw.Draw(base)
    for row in range(12):
        draw.text((40, 40 + row * 50), f"Todo item number {row}", fill="black")
        draw.rectangle((10, 40 + row * 50, 26, 56 + row * 50), outline="black")
    a = _jpeg(base, 80)
    assert screen_difference(a, _jpeg(base, 60)) <= SCREEN_THRESHOLD  # re-encoded
    caret = base.copy()
    ImageDraw.Draw(caret).line((400, 40, 400, 58), fill="black", width=1)
    assert screen_difference(a, _jpeg(caret, 80)) <= SCREEN_THRESHOLD  # a blinking caret
    ticked = base.copy()
    ImageDraw.Draw(ticked).rectangle((10, 90, 26, 106), fill="black")
    assert screen_difference(a, _jpeg(ticked, 80)) > SCREEN_THRESHOLD
    assert screen_difference(a, _jpeg(Image.new("RGB", (720, 720), "white"), 80)) == 1.0
