"""The RL soak (bench/rollout_soak.py) scaled down: 16 rollouts, 4 at once, 2 faults (the
sandbox server killed, then the model unreachable for 10 s), through a real `cua rollout
serve`, its `cua serve` and the fake model, each its own process. Every rollout is
accounted for, none lost, duplicated or scored for a fault, and nothing outlives the run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[2] / "bench" / "rollout_soak.py"


def test_soak_scaled_down_accounts_for_every_rollout(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(BENCH), "--rollouts", "16", "--concurrency", "4", "--faults", "2",
                          "--runs", str(tmp_path / "runs")], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    last = run.stdout.strip().splitlines()[-1]
    figures = dict(part.split("=", 1) for part in last.split())
    assert figures["rollouts"] == "16", last
    assert int(figures["completed"]) + int(figures["masked"]) == 16, last
    for name in ("lost", "orphans", "scored_infra", "duplicated"):
        assert figures[name] == "0", f"{name}: {last}\n{run.stdout[-3000:]}"
    assert "fault 2/2" in run.stdout, run.stdout[-3000:]
