"""`cua eval` on the fake suite, in process and through a real server: the run folder
(episodes.jsonl, summary.json, manifest.json, trajectories, the report), resuming an
interrupted run, refusing to append to or resume another experiment, and a sandbox that
dies every attempt classified as the infrastructure's, with each lost attempt kept."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from cua.cli import main
from cua.episode.episode import EpisodeRecord
from cua.server.app import serve_in_thread
from cua.trajectory import read_trajectory, validate

SEEDS = 3
TEMPLATES = ("fake.set_counter@1", "fake.submit_form@1")


def records(out: Path) -> list[EpisodeRecord]:
    return [EpisodeRecord.model_validate_json(line) for line in (out / "episodes.jsonl").read_text().splitlines()
            if line.strip()]


def assert_each_episode_once(out: Path) -> list[EpisodeRecord]:
    got = records(out)
    assert sorted((r.task_id, r.seed) for r in got) == sorted((t, s) for t in TEMPLATES for s in range(SEEDS))
    assert len(list((out / "trajectories").iterdir())) == len(got)
    report = validate(out)
    assert report.ok, report.problems
    return got


def test_eval_writes_a_run_and_resumes_an_interrupted_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = ["eval", "fake", "--seeds", str(SEEDS), "--local", "--parallel", "2", "--out", str(out), "--no-progress"]
    assert main(args) == 0
    got = assert_each_episode_once(out)
    assert all(r.verdict is not None and r.verdict.passed and r.failure is None for r in got)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == summary["passed"] == 2 * SEEDS and not summary["interrupted"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [t["id"] for t in manifest["tasks"]] == list(TEMPLATES) and manifest["seeds"] == list(range(SEEDS))
    assert (out / "report" / "index.html").exists()
    traj = read_trajectory(out / got[0].trajectory)  # type: ignore[operator]
    assert traj.complete and traj.meta is not None and traj.meta.sandbox_kind == "fake"

    # a folder holding a run is not appended to
    capsys.readouterr()
    assert main(args) == 2
    assert "already holds a run" in capsys.readouterr().err

    # interrupted: two episodes on record, a torn line after them, no summary
    lines = (out / "episodes.jsonl").read_text().splitlines(keepends=True)
    kept = {(r.task_id, r.seed): r.started_at for r in records(out)[:2]}
    (out / "episodes.jsonl").write_text("".join(lines[:2]) + lines[2][:40])
    (out / "summary.json").unlink()
    capsys.readouterr()
    assert main([*args, "--resume", "--no-report"]) == 0
    assert "2 finished episode(s) kept" in capsys.readouterr().err
    again = assert_each_episode_once(out)
    assert {(r.task_id, r.seed): r.started_at for r in again if (r.task_id, r.seed) in kept} == kept
    assert json.loads((out / "summary.json").read_text())["passed"] == 2 * SEEDS


def test_eval_through_a_server_and_a_resume_of_another_experiment(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    with serve_in_thread(max_sandboxes=4) as server:
        args = ["eval", "fake", "--seeds", str(SEEDS), "--server", server.url, "--token", server.token or "",
                "--policy", "noop", "--parallel", "3", "--out", str(out), "--no-progress", "--no-report"]
        assert main(args) == 0
    got = assert_each_episode_once(out)
    assert all(r.verdict is not None and not r.verdict.passed and r.failure == "judged_wrong" for r in got)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == 2 * SEEDS and summary["passed"] == 0 and summary["infra_errors"] == 0
    capsys.readouterr()
    other = [a if a != "noop" else "oracle" for a in args]
    assert main([*other, "--resume"]) == 2
    assert "another run" in capsys.readouterr().err


DYING = """\
suite: dying
templates:
  - id: dying.set_counter@1
    instruction: Set the counter to 12.
    sandbox: {kind: fake, config: {die_at_step: 2}}
    judge:
      checks:
        - check: the counter shows 12
          get: {kind: app_state, path: count}
          expect: {op: equals, value: 12}
    oracle:
      - click: "#inc"
      - click: "#inc"
      - click: "#inc"
"""


def test_a_sandbox_that_dies_every_attempt_is_an_infra_error_with_each_attempt_kept(tmp_path: Path) -> None:
    tasks = tmp_path / "dying.yaml"
    tasks.write_text(textwrap.dedent(DYING))
    out = tmp_path / "run"
    assert main(["eval", str(tasks), "--local", "--retries", "1", "--out", str(out), "--no-progress",
                 "--no-report"]) == 0  # the run completed, whatever the scores
    (record,) = records(out)
    assert record.status == "infra_error" and record.failure == "sandbox_crashed" and record.attempts == 2
    assert record.verdict is None  # never scored against the agent
    traj = read_trajectory(out / record.trajectory)  # type: ignore[operator]
    assert traj.end is not None and [a.status for a in traj.end.attempts] == ["infra_error", "infra_error"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["infra_errors"] == 1 and summary["attempts_retried"] == 1
    assert validate(out).ok


def test_judge_qa_of_the_fake_suite(capsys: pytest.CaptureFixture[str]) -> None:
    """`cua tasks check`: each oracle passes, doing nothing and the near miss fail, verdicts
    are deterministic and progress never falls along the oracle."""
    assert main(["tasks", "check", "fake", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1] == "templates=2 variants=4 failures=0", out
    assert all(f"ok   {t}" in out for t in TEMPLATES), out


def test_server_losses_and_sandbox_faults_draw_on_separate_bounded_retry_budgets() -> None:
    """A server lost three times under an episode leaves its sandbox retries whole (a chaos
    run lost episodes so); each budget is still bounded, and a kept sandbox that died
    between episodes before a step costs nothing, once."""
    from cua.client import ConnectionLost
    from cua.errors import ErrorRecord, SandboxCrashed
    from cua.eval.runner import Retries

    lost = ErrorRecord.of(ConnectionLost("the server went away"))
    crashed = ErrorRecord.of(SandboxCrashed("the browser died"))

    def attempts(faults: list[ErrorRecord], retries: int = 3, reused_first: bool = False) -> int:
        budget = Retries(retries)
        for n, error in enumerate(faults, 1):
            reused = reused_first and n == 1
            if budget.final(error, 0, reused=reused):
                return n
            budget.spend(error, 0, reused=reused)
        return len(faults) + 1  # the next attempt runs

    assert attempts([lost, lost, lost, crashed, crashed]) == 6  # three server losses and two crashes: retried
    assert attempts([lost] * 10) == 4  # bounded: retries + 1 attempts lost with the server
    assert attempts([crashed] * 10) == 4  # and as many lost to the sandbox
    assert attempts([lost, crashed] * 10) == 7  # 2 * retries + 1 attempts in all (+ 1 for a stale kept sandbox)
    assert attempts([crashed] * 10, reused_first=True) == 5  # the stale kept sandbox, free once
    assert attempts([crashed] * 10, retries=0) == 1
