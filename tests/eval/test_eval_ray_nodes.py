"""`cua eval --ray` on a cluster of 3 Ray nodes (each its own raylet with its own resources)
that loses one mid-run: every job is recorded exactly once, passed, and the episode that
was on the dead node shows its retry (the extra attempt and the node it lost). The run is
bench/ray_node_loss.py scaled down, so the bench and this test check the same thing."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts a Ray cluster of 4 raylets and an eval driver

BENCH = Path(__file__).resolve().parents[2] / "bench" / "ray_node_loss.py"


def test_a_node_killed_mid_run_loses_no_episode(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, str(BENCH), "--nodes", "3", "--episodes", "9", "--parallel", "3",
                           "--kills", "1", "--kill-after", "2", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    figures = dict(part.split("=", 1) for part in last.split())
    assert figures["nodes"] == "3" and figures["killed"] == "1"
    assert figures["lost"] == figures["duplicated"] == figures["misplaced"] == "0"

    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert sorted(r["seed"] for r in records) == list(range(9))  # every job exactly once
    assert all(r["status"] == "completed" and r["verdict"]["passed"] for r in records)
    killed = {line.split()[2] for line in proc.stdout.splitlines() if line.startswith("killed node ")}
    retried = [r for r in records if r["lost_nodes"]]
    assert retried, "no episode was on the killed node when it died"
    for r in retried:  # the retry is in the record: the node lost, one attempt more, run elsewhere
        assert [n[:12] for n in r["lost_nodes"]] == [next(iter(killed))] and r["attempts"] == 2
        assert r["node"] not in r["lost_nodes"]
    # each actor's sandboxes were served from its own node, and more than one node served episodes
    assert all(r["sandbox_host"] == r["node_ip"] for r in records)
    assert len({r["node"] for r in records}) >= 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == 9 and summary["infra_errors"] == 0 and summary["attempts_retried"] == len(retried)
    # the retried episode's trajectory is whole: the lost attempt's unfinished one was removed
    from cua.trajectory import validate

    assert validate(out).ok, validate(out).problems
    assert sorted(p.name for p in (out / "trajectories").iterdir()) == sorted(r["trajectory"].split("/")[1]
                                                                              for r in records)


def test_each_actor_drives_the_sandbox_server_of_its_own_node(tmp_path: Path) -> None:
    """`--server ws://{node_ip}:PORT/v1/ws`: every actor fills in its node's address, so its
    sandboxes come from the server on its own node (here the one node of a local Ray)."""
    import secrets

    import httpx
    import ray.util

    from cua.server_process import free_port

    ip = ray.util.get_node_ip_address()  # what Ray calls this node: the address actors fill in
    port, token = free_port(ip), secrets.token_urlsafe(16)
    server = subprocess.Popen([sys.executable, "-m", "cua.server", "--host", ip, "--port", str(port),
                               "--log-level", "warning"], env={**os.environ, "CUA_TOKEN": token},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = tmp_path / "run"
    try:
        for _ in range(600):  # until it listens
            assert server.poll() is None, "the sandbox server exited"
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://{ip}:{port}/v1/health", timeout=5).status_code == 200:
                    break
            time.sleep(0.1)  # polling a starting process
        proc = subprocess.run(
            [sys.executable, "-m", "cua.cli", "eval", "fake.set_counter@1", "--seeds", "2", "--ray", "--parallel", "1",
             "--ray-cpus", "0.5", "--server", f"ws://{{node_ip}}:{port}/v1/ws", "--token", token,
             "--reconnect-s", "30", "--retries", "1", "--out", str(out), "--no-progress", "--no-report"],
            capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})
    finally:
        server.terminate()
        server.wait(60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["verdict"]["passed"] for r in records)
    for r in records:  # served by that server (not in the actor's process), on the actor's node
        assert r["sandbox_host"] == r["node_ip"] == ip and not r["sandbox_id"].startswith("local-")


def test_a_task_file_outside_the_package_runs_on_ray_actors(tmp_path: Path) -> None:
    """The template itself travels to the actor: a suite from a task file (which no actor's
    registry knows) runs on Ray as it does locally; the actors once looked ids up and failed."""
    import yaml

    from cua.tasks.registry import SUITES_DIR

    data = yaml.safe_load((SUITES_DIR / "fake" / "form.yaml").read_text())
    template = next(t for t in data["templates"] if t["id"] == "fake.set_counter@1")
    suite = tmp_path / "tasks.yaml"
    suite.write_text(yaml.safe_dump({"suite": "acme", "defaults": data["defaults"],
                                     "templates": [{**template, "id": "acme.set_counter@1"}]}, sort_keys=False))
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "cua.cli", "eval", str(suite), "--seeds", "2", "--ray", "--parallel",
                           "1", "--ray-cpus", "0.5", "--out", str(out), "--no-progress", "--no-report"],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert sorted((r["task_id"], r["seed"]) for r in records) == [("acme.set_counter@1", 0), ("acme.set_counter@1", 1)]
    assert all(r["verdict"]["passed"] for r in records)


def test_an_episode_out_of_node_retries_is_an_infra_error_never_a_score(tmp_path: Path) -> None:
    """With --retries 0 the episode on the killed node is recorded once, as lost to the
    infrastructure (NodeLost, server_lost, the node named), and the others run on."""
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, str(BENCH), "--nodes", "3", "--episodes", "6", "--parallel", "3",
                           "--kills", "1", "--kill-after", "2", "--retries", "0", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert sorted(r["seed"] for r in records) == list(range(6)), proc.stdout[-3000:] + proc.stderr[-3000:]
    killed = [line.split()[2] for line in proc.stdout.splitlines() if line.startswith("killed node ")]
    lost = [r for r in records if r["status"] == "infra_error"]
    assert len(killed) == 1 and lost, proc.stdout[-3000:]
    for r in lost:
        assert r["error"]["type"] == "NodeLost" and r["failure"] == "server_lost" and r["verdict"] is None
        assert [n[:12] for n in r["lost_nodes"]] == killed and r["attempts"] == 1
    assert all(r["verdict"]["passed"] for r in records if r not in lost)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["infra_errors"] == len(lost) and summary["scored"] == 6 - len(lost)
