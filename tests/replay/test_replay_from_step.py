"""`cua replay --from-step K --policy SPEC` (issue 35, item 1): an oracle trajectory of a real
Chromium todo task is continued from a step by another policy, through the command. The
recorded actions before K are performed again (screens checked), the policy plays on, and
the end is judged against the task's start: the no-op continuing after the tick passes, the
one continuing before it fails. A step past the end is refused with the typed reason."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cua.episode import OracleAgent, open_local, run_episode
from cua.tasks.registry import get_template
from cua.trajectory import TrajectoryWriter, read_trajectory, validate

pytestmark = pytest.mark.slow

TASK = "todo.mark_done@1"


async def _record(folder: Path) -> None:
    instance = get_template(TASK).instantiate(1)
    config = {**instance.sandbox_config, "isolation": "shared"}
    async with open_local(instance.sandbox_kind, config) as handle:
        record = await run_episode(handle, instance, OracleAgent(), writer=TrajectoryWriter(folder))
    assert record.verdict is not None and record.verdict.passed


def _replay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cua.cli", "replay", *args], capture_output=True, text=True,
                          timeout=600, check=False)


async def test_continue_a_trajectory_from_a_step_with_another_policy(tmp_path):
    source = tmp_path / "oracle"
    await _record(source)
    parent = read_trajectory(source)
    clicks = [s.index for s in parent.steps if s.action and s.action["type"] == "click"]
    tick = clicks[-1]  # the step that ticks the todo
    assert parent.meta is not None

    out = tmp_path / "out"
    done = _replay(str(source), "--local", "--from-step", str(tick + 1), "--policy", "noop", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    before = _replay(str(source), "--local", "--from-step", str(tick), "--policy", "noop", "--out", str(out))
    assert before.returncode == 0, before.stdout + before.stderr
    past = _replay(str(source), "--local", "--from-step", "40", "--policy", "noop", "--out", str(out))
    assert past.returncode == 1 and "not continued" in past.stdout, past.stdout + past.stderr

    lines = [json.loads(line) for line in (out / "continue.jsonl").read_text().splitlines()]
    after_tick, before_tick, refused = lines
    assert (after_tick["from_step"], after_tick["status"], after_tick["passed"]) == (tick + 1, "completed", True)
    assert (before_tick["from_step"], before_tick["passed"]) == (tick, False)
    assert refused["error"]["details"]["why"] == "out_of_range" and refused["error"]["fault"] == "client"
    for line in (after_tick, before_tick):
        child = read_trajectory(line["trajectory"])
        assert validate(line["trajectory"]).ok and child.meta is not None
        assert child.meta.extra["branch"]["of"] == parent.meta.id
        assert child.meta.extra["forked_at_step"] == line["from_step"]
        # the continuation starts on the screen the agent saw at that step of the recording
        assert child.frame_bytes(child.steps[0].observation if child.steps else child.end.final) == \
            parent.frame_bytes(parent.steps[line["from_step"]].observation if line["from_step"] < len(parent.steps)
                               else parent.end.final)
    bad = _replay(str(source), "--local", "--from-step", "1", "--out", str(out))
    assert bad.returncode == 2 and "go together" in bad.stderr
