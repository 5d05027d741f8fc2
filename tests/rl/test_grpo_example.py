"""examples/grpo_cpu.py runs as a user runs it: a copy outside the checkout (so nothing of
tests/ is on its path, as with an installed package), one short iteration in real browsers,
and the trainer's recomputed logprobs agree with the sampler's."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the example needs torch")

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "grpo_cpu.py"


def test_grpo_example_runs_from_outside_the_checkout(tmp_path: Path) -> None:
    script = tmp_path / "grpo_cpu.py"
    shutil.copy(EXAMPLE, script)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(script), "--iterations", "1", "--seeds", "1", "--group", "2", "--turns", "1"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = re.search(r"iteration 0: 2 episodes .* over (\d+) turns, \|old - recomputed logprob\| (\S+);", done.stdout)
    assert line is not None, done.stdout
    assert int(line[1]) == 2 and float(line[2]) < 1e-3
