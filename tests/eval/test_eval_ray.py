"""`cua eval --ray`: episodes on Ray actors give the same verdicts as a local run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cua.episode import EpisodeRecord

pytestmark = pytest.mark.slow  # starts Chromium, a server or Ray


def test_eval_on_a_local_ray_cluster(tmp_path: Path) -> None:
    out = tmp_path / "ray"
    proc = subprocess.run(
        [sys.executable, "-m", "cua.cli", "eval", "todo.mark_done@1", "todo.count_open_high@1", "--seeds", "2",
         "--ray", "--parallel", "2", "--ray-cpus", "0.5", "--isolation", "shared", "--out", str(out), "--no-progress"],
        capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [EpisodeRecord.model_validate_json(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert sorted((r.task_id, r.seed) for r in records) == [
        ("todo.count_open_high@1", 0), ("todo.count_open_high@1", 1), ("todo.mark_done@1", 0), ("todo.mark_done@1", 1)]
    assert all(r.verdict is not None and r.verdict.passed for r in records), [r.error for r in records]
    assert len({r.sandbox_id for r in records}) <= 2  # each actor reuses its sandbox across episodes
    # the actors wrote each episode's trajectory into the run folder, as a local run does
    from cua.trajectory import read_trajectory, validate

    assert validate(out).ok, validate(out).problems
    for r in records:
        traj = read_trajectory(out / str(r.trajectory))
        assert traj.complete and traj.end is not None and traj.end.verdict == r.verdict


def test_ray_actors_ask_the_model_as_a_local_run_does(tmp_path: Path) -> None:
    """The sampling flags, the retry budget and the run's id reach the actors: a model asked
    from a Ray actor gets `--temperature`, and its trajectories name the model and the run."""
    import json

    from _model_server import CLICK, MODEL, ModelServer

    from cua.trajectory import read_trajectory

    model = ModelServer()
    model.plan = [CLICK, CLICK]
    out = tmp_path / "ray"
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "cua.cli", "eval", "fake.set_counter@1", "--seeds", "2", "--ray", "--parallel", "2",
             "--ray-cpus", "0.5", "--policy", f"openai:{MODEL}@{model.url}", "--family", "qwen2.5-vl",
             "--temperature", "0.3", "--out", str(out), "--no-progress", "--no-report"],
            capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "200"})
    finally:
        model.close()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert model.calls and {c.get("temperature") for c in model.calls} == {0.3}
    for line in (out / "episodes.jsonl").read_text().splitlines():
        traj = read_trajectory(out / json.loads(line)["trajectory"])
        assert traj.meta is not None and traj.meta.run_id == out.name
        assert traj.meta.agent.model == MODEL and traj.meta.agent.settings["temperature"] == 0.3
