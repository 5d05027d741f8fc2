"""`cua eval` and its engine, on real sandboxes: records, summaries, retries of infra faults."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cua.episode import AgentTurn, EpisodeContext, EpisodeRecord, OracleAgent, run_episode
from cua.episode.local import LocalSandbox, open_local
from cua.eval.agents import agent_factory
from cua.eval.runner import LocalExecutor, make_jobs, run_jobs
from cua.observation import Observation
from cua.state import AppStateQuery
from cua.task import TaskInstance
from cua.tasks.registry import get_template, list_templates
from cua.trajectory import read_trajectory

pytestmark = pytest.mark.slow  # starts Chromium, a server or Ray

TODO_TEMPLATES = len(list_templates(suite="todo"))


def _cua(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cua.cli", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200"})


def _records(out: Path) -> list[EpisodeRecord]:
    lines = (out / "episodes.jsonl").read_text().splitlines()
    return [EpisodeRecord.model_validate_json(line) for line in lines]


def test_cli_eval_oracle_through_a_real_server(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _cua("eval", "todo", "--policy", "oracle", "--parallel", "2", "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = _records(out)
    assert len(records) == TODO_TEMPLATES
    assert all(r.status == "completed" and r.verdict is not None and r.verdict.passed for r in records), \
        [(r.task_id, r.status, r.error, r.verdict and r.verdict.evidence) for r in records if not (r.verdict and r.verdict.passed)]
    assert all(r.steps > 0 or not r.tags["feasible"] for r in records)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == summary["passed"] == TODO_TEMPLATES
    assert "success by task" in proc.stdout and "todo.mark_done@1" in proc.stdout
    # every episode left its trajectory; the run validates; n steps have n + 1 frames
    check = _cua("trajectory", "validate", str(out), timeout=120)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
    for r in records:
        assert r.trajectory == f"trajectories/{r.task_id}__s{r.seed}"
        traj = read_trajectory(out / r.trajectory)
        assert traj.complete and traj.meta is not None and traj.meta.producer == "eval"
        assert traj.end is not None and traj.end.verdict == r.verdict and len(traj.steps) == r.steps
        frames = sorted((out / r.trajectory / "frames").iterdir())
        assert len(frames) == r.steps + 1 and all(traj.frame_bytes(ref) for ref in traj.observations())


def test_cli_eval_random_scores_low_and_still_exits_zero(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _cua("eval", "todo.mark_done@1", "todo.rename@1", "--policy", "random", "--seeds", "2", "--local",
                "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = _records(out)
    assert len(records) == 4
    assert sum(r.verdict.passed for r in records if r.verdict) == 0
    assert all(r.actions and r.actions[0].action["type"] for r in records)


def test_cli_eval_frames_last_and_none(tmp_path: Path) -> None:
    for frames in ("last", "none"):
        out = tmp_path / frames
        proc = _cua("eval", "todo.mark_done@1", "--local", "--frames", frames, "--out", str(out), "--no-progress")
        assert proc.returncode == 0, proc.stderr[-3000:]
        (record,) = _records(out)
        traj = read_trajectory(out / str(record.trajectory))
        assert traj.complete and len(traj.steps) == record.steps > 0
        kept = sorted(p.name for p in (out / str(record.trajectory) / "frames").glob("*.jpg")) \
            if (out / str(record.trajectory) / "frames").exists() else []
        assert kept == (["last.jpg"] if frames == "last" else [])
        assert all(s.observation.frame is None for s in traj.steps)
        assert _cua("trajectory", "validate", str(out), timeout=120).returncode == 0


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


async def test_infra_fault_is_retried_on_a_fresh_sandbox(tmp_path: Path) -> None:
    jobs = make_jobs([get_template("todo.mark_done@1")], [0])
    summary, records = await run_jobs(
        jobs, executor=lambda: LocalExecutor(open_local, lambda _i: _KillBrowserOnce(), run_dir=tmp_path),
        agent_name="killer", out_dir=tmp_path)
    assert _KillBrowserOnce.killed
    (record,) = records
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


async def test_infra_fault_without_retries_is_recorded_not_raised(tmp_path: Path) -> None:
    _KillBrowserOnce.killed = False
    jobs = make_jobs([get_template("todo.mark_done@1")], [0])
    summary, (record,) = await run_jobs(
        jobs, executor=lambda: LocalExecutor(open_local, lambda _i: _KillBrowserOnce(), retries=0), agent_name="killer")
    assert record.status == "infra_error" and record.error and record.error.code == "sandbox_crashed"
    assert record.verdict is None and summary.infra_errors == 1


async def test_noop_fails_and_oracle_passes_on_the_same_sandbox() -> None:
    template = get_template("todo.delete_one@1")
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


def test_open_remote_and_local_give_the_same_verdicts(tmp_path: Path) -> None:
    remote, local = tmp_path / "remote", tmp_path / "local"
    for out, extra in ((remote, []), (local, ["--local"])):
        proc = _cua("eval", "todo.set_priority@1", "todo.count_open_high@1", "--seeds", "2", "--out", str(out),
                    "--no-progress", *extra)
        assert proc.returncode == 0, proc.stderr[-3000:]
    key = lambda r: (r.task_id, r.seed)
    a = {key(r): (r.verdict.score, r.steps) for r in _records(remote) if r.verdict}
    b = {key(r): (r.verdict.score, r.steps) for r in _records(local) if r.verdict}
    assert a == b and len(a) == 4


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
