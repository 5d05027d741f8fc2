"""`cua eval` and its engine: the run folder (episodes.jsonl, summary.json, manifest.json,
trajectories, the report) and the same verdicts through a server and in process, held over
the fake suite (fast lane) and the todo suite in real Chromium (slow lane) alike; resuming an
interrupted run, refusing to append to or resume another experiment, retries of infra faults
(a sandbox that dies every attempt, a browser killed under an episode) with each lost attempt
kept, and a run killed mid-episode leaving valid prefixes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cua.cli import main
from cua.episode import AgentTurn, EpisodeContext, EpisodeRecord, OracleAgent, run_episode
from cua.episode.local import LocalSandbox, open_local
from cua.eval.agents import agent_factory
from cua.eval.runner import LocalExecutor, make_jobs, run_jobs
from cua.observation import Observation
from cua.server.app import RunningServer
from cua.state import AppStateQuery
from cua.task import TaskInstance
from cua.tasks.registry import get_template, list_templates
from cua.trajectory import read_trajectory, validate

SEEDS = 3
TEMPLATES = ("fake.set_counter@1", "fake.submit_form@1")
#: The suite each kind's contract runs, and its seeds.
SUITES = {"fake": ("fake", SEEDS), "browser": ("todo", 1)}
#: Two templates of each kind that run alike in process and through a server.
PAIRS = {"fake": TEMPLATES, "browser": ("todo.set_priority@1", "todo.count_open_high@1")}
#: A template whose noop fails and whose oracle passes, by kind.
ONE = {"fake": "fake.set_counter@1", "browser": "todo.delete_one@1"}


def _cua(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cua.cli", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200"})


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


# --- the contract, over both kinds ---

def test_eval_oracle_through_a_real_server_writes_a_run(kind: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    suite, seeds = SUITES[kind]
    templates = [t.id for t in list_templates(suite=suite)]
    out = tmp_path / "run"
    assert main(["eval", suite, "--seeds", str(seeds), "--policy", "oracle", "--parallel", "2", "--out", str(out),
                 "--no-progress"]) == 0  # a server started in process: the websocket path remote users take
    printed = capsys.readouterr().out
    got = records(out)
    assert sorted((r.task_id, r.seed) for r in got) == sorted((t, s) for t in templates for s in range(seeds))
    assert all(r.status == "completed" and r.verdict is not None and r.verdict.passed and r.failure is None
               for r in got), [(r.task_id, r.status, r.error, r.verdict and r.verdict.evidence) for r in got
                               if not (r.verdict and r.verdict.passed)]
    assert all(r.steps > 0 or not r.tags["feasible"] for r in got)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == summary["passed"] == len(templates) * seeds and not summary["interrupted"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [t["id"] for t in manifest["tasks"]] == templates and manifest["seeds"] == list(range(seeds))
    assert (out / "report" / "index.html").exists()
    assert "success by task" in printed and templates[0] in printed
    # every episode left its trajectory; the run validates; n steps have n + 1 frames
    assert len(list((out / "trajectories").iterdir())) == len(got)
    assert validate(out).ok, validate(out).problems
    assert main(["trajectory", "validate", str(out)]) == 0
    for r in got:
        assert r.trajectory == f"trajectories/{r.task_id}__s{r.seed}"
        traj = read_trajectory(out / r.trajectory)
        assert traj.complete and traj.meta is not None and traj.meta.producer == "eval"
        assert traj.meta.sandbox_kind == kind
        assert traj.end is not None and traj.end.verdict == r.verdict and len(traj.steps) == r.steps
        frames = sorted((out / r.trajectory / "frames").iterdir())
        assert len(frames) == r.steps + 1 and all(traj.frame_bytes(ref) for ref in traj.observations())


def test_open_remote_and_local_give_the_same_verdicts(kind: str, tmp_path: Path) -> None:
    remote, local = tmp_path / "remote", tmp_path / "local"
    for out, extra in ((remote, []), (local, ["--local"])):
        assert main(["eval", *PAIRS[kind], "--seeds", "2", "--out", str(out), "--no-progress", "--no-report",
                     *extra]) == 0
    key = lambda r: (r.task_id, r.seed)
    a = {key(r): (r.verdict.score, r.steps) for r in records(remote) if r.verdict}
    b = {key(r): (r.verdict.score, r.steps) for r in records(local) if r.verdict}
    assert a == b and len(a) == 4


async def test_noop_fails_and_oracle_passes_on_the_same_sandbox(kind: str) -> None:
    template = get_template(ONE[kind])
    instance = template.instantiate(1)
    make_noop, _, _ = agent_factory("noop")
    make_oracle, _, _ = agent_factory("oracle")
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        noop = await run_episode(handle, instance, make_noop(instance))
        oracle = await run_episode(handle, instance, make_oracle(instance))
        again = await run_episode(handle, instance, make_noop(instance))  # reset really resets
    assert noop.verdict is not None and not noop.verdict.passed
    assert oracle.verdict is not None and oracle.verdict.passed and oracle.verdict.violations == []
    assert again.verdict is not None and not again.verdict.passed
    assert oracle.judge_input is not None and instance.judge.evaluate(oracle.judge_input).passed


# --- the run folder: resume, refusals, infrastructure faults (the fake suite) ---

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


def test_eval_through_a_server_and_a_resume_of_another_experiment(server: RunningServer, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
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


# --- the todo suite in real Chromium: policies, frames, kills, retries ---

@pytest.mark.slow
def test_cli_eval_random_scores_low_and_still_exits_zero(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _cua("eval", "todo.mark_done@1", "todo.rename@1", "--policy", "random", "--seeds", "2", "--local",
                "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = records(out)
    assert len(got) == 4
    assert sum(r.verdict.passed for r in got if r.verdict) == 0
    assert all(r.actions and r.actions[0].action["type"] for r in got)


@pytest.mark.slow
def test_cli_eval_frames_last_and_none(tmp_path: Path) -> None:
    for frames in ("last", "none"):
        out = tmp_path / frames
        proc = _cua("eval", "todo.mark_done@1", "--local", "--frames", frames, "--out", str(out), "--no-progress")
        assert proc.returncode == 0, proc.stderr[-3000:]
        (record,) = records(out)
        traj = read_trajectory(out / str(record.trajectory))
        assert traj.complete and len(traj.steps) == record.steps > 0
        kept = sorted(p.name for p in (out / str(record.trajectory) / "frames").glob("*.jpg")) \
            if (out / str(record.trajectory) / "frames").exists() else []
        assert kept == (["last.jpg"] if frames == "last" else [])
        assert all(s.observation.frame is None for s in traj.steps)
        assert _cua("trajectory", "validate", str(out), timeout=120).returncode == 0


@pytest.mark.slow
def test_cli_eval_killed_mid_episode_leaves_valid_prefixes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "cua.cli", "eval", "todo.add_todo@1", "todo.plan_three@1",
                             "--local", "--isolation", "shared", "--out", str(out), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    steps = out / "trajectories" / "todo.add_todo@1__s0" / "steps.jsonl"
    try:
        deadline = time.monotonic() + 300
        while not (steps.exists() and len(steps.read_bytes().splitlines()) >= 3):
            assert proc.poll() is None and time.monotonic() < deadline, "the episode did not get going"
            time.sleep(0.02)  # watching another process's files
        os.killpg(proc.pid, signal.SIGKILL)  # the eval and its browser, mid-episode
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    check = _cua("trajectory", "validate", str(out), timeout=120)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
    traj = read_trajectory(steps.parent)
    assert not traj.complete and traj.meta is not None and len(traj.steps) >= 3
    assert [s.index for s in traj.steps] == list(range(len(traj.steps)))
    assert all(traj.frame_bytes(s.observation) for s in traj.steps)


def test_cli_eval_unknown_suite_is_a_clear_error(tmp_path: Path) -> None:
    proc = _cua("eval", "no-such-suite", "--out", str(tmp_path / "x"), timeout=60)
    assert proc.returncode == 2 and "no-such-suite" in proc.stderr


class _KillBrowserOnce:
    """Kills its sandbox's Chromium on the first turn of the first episode: a real infra fault."""

    killed = False

    def __init__(self) -> None:
        self.name = "killer"
        self.oracle = OracleAgent()
        self.handle: LocalSandbox | None = None

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        assert isinstance(ctx.handle, LocalSandbox)
        self.handle = ctx.handle
        await self.oracle.begin(instance, ctx)

    async def turn(self, observation: Observation) -> AgentTurn:
        if not _KillBrowserOnce.killed:
            _KillBrowserOnce.killed = True
            assert self.handle is not None
            os.kill(self.handle.sandbox.info().details["browser_pid"], signal.SIGKILL)
        return await self.oracle.turn(observation)


@pytest.mark.slow
async def test_infra_fault_is_retried_on_a_fresh_sandbox(tmp_path: Path) -> None:
    jobs = make_jobs([get_template("todo.mark_done@1")], [0])
    summary, got = await run_jobs(
        jobs, executor=lambda: LocalExecutor(open_local, lambda _i: _KillBrowserOnce(), run_dir=tmp_path),
        agent_name="killer", out_dir=tmp_path)
    assert _KillBrowserOnce.killed
    (record,) = got
    assert record.status == "completed" and record.verdict is not None and record.verdict.passed
    assert record.timings_ms.get("attempt") is None  # the retry is the one that completed
    assert summary.infra_errors == 0 and summary.passed == 1 and record.attempts == 2
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 1
    # the lost attempt stays in the trajectory, with its typed error
    traj = read_trajectory(tmp_path / str(record.trajectory))
    assert traj.end is not None and traj.end.attempt == 1 and traj.end.status == "completed"
    lost, final = traj.end.attempts
    assert lost.status == "infra_error" and lost.error is not None and lost.error.code == "sandbox_crashed"
    assert final.attempt == 1 and len(traj.steps) == record.steps
    assert {s.attempt for s in traj.all_steps} <= {0, 1}


@pytest.mark.slow
async def test_infra_fault_without_retries_is_recorded_not_raised(tmp_path: Path) -> None:
    _KillBrowserOnce.killed = False
    jobs = make_jobs([get_template("todo.mark_done@1")], [0])
    summary, (record,) = await run_jobs(
        jobs, executor=lambda: LocalExecutor(open_local, lambda _i: _KillBrowserOnce(), retries=0), agent_name="killer")
    assert record.status == "infra_error" and record.error and record.error.code == "sandbox_crashed"
    assert record.verdict is None and summary.infra_errors == 1


@pytest.mark.slow
async def test_setup_steps_run_after_reset_and_are_not_the_agents() -> None:
    from cua.actions import Goto
    from cua.task import TaskSetup, actions_oracle

    instance = get_template("todo.mark_done@1").instantiate(0)
    instance.setup = TaskSetup(seed=7, actions=actions_oracle([Goto(url="http://127.0.0.1:8000/search?q=tickets")]))
    make_noop, _, _ = agent_factory("noop")
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        record = await run_episode(handle, instance, make_noop(instance))
        url = (await handle.observe()).url
        (after_setup,) = await handle.query([AppStateQuery()])
        states = {}
        for seed in (0, 7):
            await handle.reset(seed=seed)
            (states[seed],) = await handle.query([AppStateQuery()])
    assert record.status == "completed", record.error
    assert record.steps == 0 and record.actions == []
    assert url is not None and url.endswith("/search?q=tickets")
    assert after_setup.value == states[7].value != states[0].value  # reset with the pinned seed
