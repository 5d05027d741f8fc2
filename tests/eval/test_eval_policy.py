"""Issue 5's end to end: `cua eval` asks a running policy server (scripted backend) over real
HTTP, the actions it returns drive a real browser sandbox, and the judge passes the result."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from cua.episode import OracleAgent, run_episode
from cua.episode.local import open_local
from cua.tasks.registry import get_template

pytestmark = pytest.mark.slow  # starts Chromium, a server or Ray

TASK, SEED = "todo.mark_done@1", 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _record_oracle(path: Path) -> int:
    instance = get_template(TASK).instantiate(SEED)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        record = await run_episode(handle, instance, OracleAgent())
    assert record.verdict is not None and record.verdict.passed
    lines = [json.dumps(step.action) for step in record.actions] + [json.dumps({"type": "done"})]
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


async def test_eval_through_a_policy_server(tmp_path: Path) -> None:
    script = tmp_path / "trajectory.jsonl"
    n_steps = await _record_oracle(script)
    port, token = _free_port(), "test-token-123"
    # leaving the with closes the stderr pipe (a ResourceWarning otherwise)
    with subprocess.Popen(
        [sys.executable, "-m", "cua.cli", "policy", "serve", "--backend", "scripted", "--script", str(script),
         "--port", str(port), "--token", token], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as server:
        try:
            deadline = time.monotonic() + 60
            while True:
                assert server.poll() is None, server.stderr.read().decode()[-2000:] if server.stderr else ""
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "policy server did not start"
                time.sleep(0.2)  # polling a starting process
            out = tmp_path / "run"
            proc = subprocess.run(
                [sys.executable, "-m", "cua.cli", "eval", TASK, "--seed-list", str(SEED), "--no-progress",
                 "--policy", f"http://127.0.0.1:{port}", "--policy-token", token, "--out", str(out)],
                capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})
            assert proc.returncode == 0, proc.stderr[-3000:]
            (line,) = (out / "episodes.jsonl").read_text().splitlines()
            record = json.loads(line)
            assert record["status"] == "completed", record
            assert record["verdict"]["passed"], record["verdict"]
            assert record["steps"] == n_steps and record["done"]["status"] == "success"
            assert all(step["policy_ms"] > 0 for step in record["actions"])
            # A wrong token is refused by the policy server before any sandbox starts: a message, exit 2.
            bad = subprocess.run(
                [sys.executable, "-m", "cua.cli", "eval", TASK, "--seed-list", str(SEED), "--no-progress", "--local",
                 "--policy", f"http://127.0.0.1:{port}", "--policy-token", "wrong", "--out", str(tmp_path / "bad")],
                capture_output=True, text=True, timeout=600)
            assert bad.returncode == 2, bad.stderr[-3000:]
            assert "unauthorized" in bad.stderr and "nothing was run" in bad.stderr and "Traceback" not in bad.stderr
            assert not (tmp_path / "bad").exists()
        finally:
            server.terminate()
            server.wait(timeout=30)
