"""Evaluation you can resume and trust: `cua eval` killed (SIGKILL, SIGINT) and resumed ends
with every episode exactly once and no orphaned process; a sandbox server killed and
restarted mid-run costs only the attempts in flight; a folder holding a run is not appended
to; a resumed run must be the same experiment. Real `cua eval`, real servers, real browsers."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from cua.episode.episode import EpisodeRecord
from cua.trajectory import read_trajectory, validate

TASK = "todo.mark_done@1"
SEEDS = 5


def _cua(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cua.cli", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200"})


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "cua.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "COLUMNS": "200"})


def _records(out: Path) -> list[EpisodeRecord]:
    path = out / "episodes.jsonl"
    if not path.exists():
        return []
    return [EpisodeRecord.model_validate_json(line) for line in path.read_text().splitlines(keepends=True)
            if line.endswith("\n") and line.strip()]


def _wait_for(predicate, timeout: float, what: str, proc: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the process ended ({proc.returncode}) while waiting for {what}: "
                                 f"{proc.stderr.read()[-3000:] if proc.stderr else ''}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)  # polling another process's files


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of a live process, None when it is gone (or a zombie)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2:].split()
    if fields[0] == "Z":
        return None
    return int(fields[1]), int(fields[19])


def _descendants(root: int) -> dict[int, int]:
    """pid -> start time of every process under `root`."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st is not None:
                children.setdefault(st[0], []).append(int(entry.name))
                starts[int(entry.name)] = st[1]
    out: dict[int, int] = {}
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out[child] = starts[child]
            todo.append(child)
    return out


def _alive(processes: dict[int, int]) -> list[int]:
    return [pid for pid, start in processes.items() if (st := _stat(pid)) is not None and st[1] == start]


def _assert_each_episode_once(out: Path, expected: set[tuple[str, int]]) -> list[EpisodeRecord]:
    records = _records(out)
    counts = Counter((r.task_id, r.seed) for r in records)
    assert set(counts) == expected and all(n == 1 for n in counts.values()), counts
    folders = sorted(p.name for p in (out / "trajectories").iterdir())
    assert len(folders) == len(expected), folders
    assert all(read_trajectory(out / r.trajectory).complete for r in records if r.trajectory)
    report = validate(out)
    assert report.ok, report.problems
    return records


@pytest.mark.slow
def test_sigkill_then_resume_runs_every_episode_once_and_leaves_no_orphan(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ("eval", TASK, "--seeds", str(SEEDS), "--parallel", "2", "--policy", "oracle", "--out", str(out),
            "--no-progress")
    with _spawn(*args) as proc:  # leaving it closes the pipes nobody reads after the kill
        try:
            # kill it mid-run: some episodes finished, others in flight (a trajectory without its end)
            _wait_for(lambda: len(_records(out)) >= 1, 300, "a first finished episode", proc)
            tree = _descendants(proc.pid)
            assert tree, "cua eval started no child server"
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    done_before = {(r.task_id, r.seed) for r in _records(out)}
    assert 1 <= len(done_before) < SEEDS
    # the child server (and what it ran) dies with its parent
    _wait_for(lambda: not _alive(tree), 60, f"the killed run's processes to exit: {_alive(tree)}")

    resumed = _spawn(*args, "--resume")
    _, stderr = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, stderr[-3000:]
    assert f"{len(done_before)} finished episode(s) kept" in stderr
    records = _assert_each_episode_once(out, {(TASK, s) for s in range(SEEDS)})
    assert all(r.verdict is not None and r.verdict.passed for r in records)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == summary["passed"] == SEEDS and not summary["interrupted"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [i.get("resumed_at") is not None for i in manifest["invocations"]] == [False, True]
    assert (out / "report" / "index.html").exists()


@pytest.mark.slow
def test_sigint_stops_cleanly_and_resume_finishes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ("eval", TASK, "--seeds", str(SEEDS), "--policy", "oracle", "--out", str(out), "--no-progress")
    proc = _spawn(*args)
    _wait_for(lambda: len(_records(out)) >= 1, 300, "a first finished episode", proc)
    tree = _descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr and "--resume" in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] and summary["episodes"] == len(_records(out)) < SEEDS
    assert summary["not_run"] >= 1
    _wait_for(lambda: not _alive(tree), 60, f"the stopped run's processes to exit: {_alive(tree)}")
    resumed = _cua(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    _assert_each_episode_once(out, {(TASK, s) for s in range(SEEDS)})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(port: int, token: str) -> subprocess.Popen[bytes]:
    server = subprocess.Popen([sys.executable, "-m", "cua.cli", "serve", "--port", str(port), "--log-level", "warning"],
                              env={**os.environ, "CUA_TOKEN": token}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            assert server.poll() is None, "the server exited during startup"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)  # polling a starting process


@pytest.mark.slow
def test_a_server_killed_and_restarted_costs_only_the_attempts_in_flight(tmp_path: Path) -> None:
    port, token = _free_port(), "restart-test-token"
    server = _serve(port, token)
    out = tmp_path / "run"
    proc = _spawn("eval", TASK, "--seeds", str(SEEDS), "--policy", "oracle", "--out", str(out), "--no-progress",
                  "--server", f"ws://127.0.0.1:{port}/v1/ws", "--token", token, "--reconnect-s", "120")
    try:
        # kill the server while an episode is in flight (its trajectory has begun, not ended)
        def in_flight() -> bool:
            folders = list((out / "trajectories").glob("*")) if (out / "trajectories").exists() else []
            return len(_records(out)) >= 1 and any(not (f / "end.json").exists() and (f / "meta.json").exists()
                                                   for f in folders)
        _wait_for(in_flight, 300, "an episode in flight after a finished one", proc)
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        time.sleep(2)  # the server stays away a while; queued episodes must wait, not fail
        server = _serve(port, token)
        _, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)
    records = _assert_each_episode_once(out, {(TASK, s) for s in range(SEEDS)})
    assert all(r.status == "completed" and r.verdict is not None and r.verdict.passed for r in records), \
        [(r.seed, r.status, r.error) for r in records]
    retried = [r for r in records if r.attempts > 1]
    assert 1 <= len(retried) <= 2, [(r.seed, r.attempts) for r in records]  # only what was in flight
    traj = read_trajectory(out / retried[0].trajectory)
    assert traj.end is not None and [a.status for a in traj.end.attempts][-1] == "completed"
    lost = [a for a in traj.end.attempts[:-1]]
    assert lost and lost[0].error is not None and lost[0].error.failure == "server_lost", lost
    summary = json.loads((out / "summary.json").read_text())
    assert summary["infra_errors"] == 0 and summary["attempts_retried"] == sum(r.attempts - 1 for r in records)


@pytest.mark.slow  # a subprocess or thousands of frames: seconds even on an idle machine
def test_a_folder_holding_a_run_is_not_appended_to(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "episodes.jsonl").write_text(json.dumps({"task_id": TASK, "seed": 0}) + "\n")
    proc = _cua("eval", TASK, "--out", str(out), "--no-progress", timeout=120)
    assert proc.returncode == 2 and "already holds a run" in proc.stderr and "--resume" in proc.stderr
    assert (out / "episodes.jsonl").read_text().count("\n") == 1
    # without a manifest, a resume cannot check it is the same run
    proc = _cua("eval", TASK, "--out", str(out), "--no-progress", "--resume", timeout=120)
    assert proc.returncode == 2 and "manifest" in proc.stderr


@pytest.mark.slow
def test_resume_refuses_another_experiment_and_manifest_says_how_the_run_was_made(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _cua("eval", TASK, "--policy", "noop", "--local", "--out", str(out), "--no-progress", "--no-report")
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["cua"]["version"] and manifest["versions"]["python"] and manifest["versions"]["playwright"]
    assert manifest["versions"]["chromium"] and "git_commit" in manifest["cua"]
    assert [(t["id"], t["version"]) for t in manifest["tasks"]] == [(TASK, 1)] and manifest["tasks"][0]["digest"]
    assert manifest["seeds"] == [0] and manifest["policy"]["spec"] == "noop" and manifest["argv"]
    assert manifest["machine"]["cpus"] >= 1
    for changed in (("--seeds", "2"), ("--policy", "random"), ("--temperature", "0.7"), ("--observe", "screenshot,axtree")):
        proc = _cua("eval", TASK, "--policy", "noop", "--local", "--out", str(out), "--no-progress", "--resume",
                    *changed, timeout=120)
        assert proc.returncode == 2 and "another run" in proc.stderr, (changed, proc.stderr[-2000:])
    proc = _cua("eval", TASK, "--policy", "noop", "--local", "--out", str(out), "--no-progress", "--resume",
                "--seeds", "2", "--force", "--no-report")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(r.seed for r in _records(out)) == [0, 1]
    assert json.loads((out / "manifest.json").read_text())["invocations"][-1]["forced"] is True


@pytest.mark.slow
def test_a_child_server_that_dies_is_started_again(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _spawn("eval", TASK, "--seeds", "3", "--policy", "oracle", "--out", str(out), "--no-progress")
    try:
        _wait_for(lambda: len(_records(out)) >= 1, 300, "a first finished episode", proc)
        servers = [pid for pid in _descendants(proc.pid)
                   if b"cua.server" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert len(servers) == 1, servers
        under_server = _descendants(servers[0])
        os.kill(servers[0], signal.SIGKILL)
        _, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
    records = _assert_each_episode_once(out, {(TASK, s) for s in range(3)})
    assert all(r.status == "completed" and r.verdict is not None and r.verdict.passed for r in records), \
        [(r.seed, r.status, r.error) for r in records]
    assert "started a new one" in stderr
    # what the killed server ran (its browsers) did not outlive it
    _wait_for(lambda: not _alive(under_server), 60, f"the killed server's processes to exit: {_alive(under_server)}")


def test_resume_state_keeps_each_finished_episode_once_and_clears_the_rest(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from cua.eval.runner import EpisodeJob, resume_state

    def episode(task: str, seed: int, *, ended: bool) -> str:
        folder = tmp_path / "trajectories" / f"{task}__s{seed}"
        folder.mkdir(parents=True, exist_ok=True)
        if ended:
            (folder / "end.json").write_text("{}")
        return f"trajectories/{folder.name}"

    def record(task: str, seed: int, trajectory: str, status: str = "completed") -> str:
        return EpisodeRecord(task_id=task, seed=seed, instruction="", agent="a", status=status,  # type: ignore[arg-type]
                             trajectory=trajectory).model_dump_json() + "\n"

    done, unfinished, lost = episode("a", 0, ended=True), episode("a", 1, ended=False), episode("b", 0, ended=True)
    other = episode("c", 0, ended=True)  # finished, and no longer asked for
    (tmp_path / "episodes.jsonl").write_text(
        record("a", 0, done) + record("a", 0, done)  # a rerun's duplicate
        + record("b", 0, lost, status="infra_error") + record("c", 0, other) + '{"task_id": "a", "se')  # torn
    jobs = [EpisodeJob(template=SimpleNamespace(id=t), seed=s) for t, s in (("a", 0), ("a", 1), ("b", 0))]
    state = resume_state(tmp_path, jobs)
    assert sorted((r.task_id, r.seed) for r in state.kept) == [("a", 0), ("c", 0)]
    assert [(j.template.id, j.seed) for j in state.todo] == [("a", 1), ("b", 0)]
    assert sorted(state.removed) == sorted([unfinished, lost])
    assert sorted(p.name for p in (tmp_path / "trajectories").iterdir()) == ["a__s0", "c__s0"]
    assert [(r.task_id, r.seed) for r in map(EpisodeRecord.model_validate_json,
                                             (tmp_path / "episodes.jsonl").read_text().splitlines())] == \
        [("a", 0), ("c", 0)]


def test_resume_keeps_each_kept_records_own_fields_as_written(tmp_path: Path) -> None:
    """A Ray run's records name the node that ran them and the nodes lost on the way; a
    resume rewrote them from the model it read back, which knows none of those fields."""
    from types import SimpleNamespace

    from cua.eval.ray_backend import RayEpisodeRecord
    from cua.eval.runner import EpisodeJob, resume_state

    folder = tmp_path / "trajectories" / "a__s0"
    folder.mkdir(parents=True)
    (folder / "end.json").write_text("{}")
    line = RayEpisodeRecord(task_id="a", seed=0, instruction="", agent="a", status="completed",
                            trajectory="trajectories/a__s0", node="n1", node_ip="10.0.0.7", sandbox_host="10.0.0.7",
                            lost_nodes=["n0"], attempts=2).model_dump_json() + "\n"
    (tmp_path / "episodes.jsonl").write_text(line)
    state = resume_state(tmp_path, [EpisodeJob(template=SimpleNamespace(id="a"), seed=1)])
    assert [(r.task_id, r.seed) for r in state.kept] == [("a", 0)]
    kept = json.loads((tmp_path / "episodes.jsonl").read_text())
    assert (kept["node"], kept["node_ip"], kept["lost_nodes"], kept["attempts"]) == ("n1", "10.0.0.7", ["n0"], 2)
