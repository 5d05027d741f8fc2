"""`cua export --format sft` of a phone trajectory in each phone family: every turn the family
can say is a row whose last assistant text parses back to the step's touch action; one it can
say only approximately is a row that names the approximation; one it cannot say is skipped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _runs import write_episode  # tests/'s own helpers
from _same_action import assert_same

from cua.actions import parse_action
from cua.cli import main as cli
from cua.observation import Size
from cua.policy.families import get_family
from cua.trajectory import find_trajectories, read_trajectory

PHONE: list[dict[str, Any] | None] = [
    {"type": "tap", "x": 212.0, "y": 131.0},
    {"type": "long_press", "x": 100.0, "y": 100.0, "duration_ms": 800},
    {"type": "swipe", "x": 320.0, "y": 350.0, "direction": "up", "distance": 200.0, "duration_ms": 300},
    {"type": "nav", "button": "back"},
    {"type": "open_app", "name": "Clock"},
    {"type": "pinch", "x": 320.0, "y": 200.0, "scale": 2.0, "duration_ms": 400},  # no family says a pinch
    {"type": "done", "status": "success"},
]
#: What each family cannot say of the above (its module's docstring): skipped, not rewritten.
UNSAID = {"qwen2.5-vl-mobile": {"pinch"}, "qwen3-vl-mobile": {"pinch"}, "ui-tars-1.5-mobile": {"pinch"},
          "androidworld": {"pinch"}}
#: What a family says only approximately: AndroidWorld swipes edge to edge or scrolls from the centre.
APPROXIMATED = {"androidworld": {"swipe"}}


@pytest.mark.parametrize("family_name", sorted(UNSAID))
def test_a_phone_trajectory_exports_to_rows_that_parse_back(tmp_path: Path, family_name: str) -> None:
    run = tmp_path / "run"
    write_episode(run, "phone.alarm@1", 0, passed=True, actions=PHONE)
    out = tmp_path / "sft"
    assert cli(["export", str(run), "--format", "sft", "--family", family_name, "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / f"{family_name}.jsonl").read_text().splitlines()]
    [folder] = find_trajectories(run)
    traj = read_trajectory(folder)
    said = [s for s in traj.steps if s.action is not None and s.action["type"] not in UNSAID[family_name]]
    assert [row["step"] for row in rows] == [s.index for s in said]
    family = get_family(family_name)
    for row, line in zip(rows, said, strict=True):
        text = [c for c in row["conversations"] if c["from"] == "gpt"][-1]["value"]
        frame = Size(width=line.observation.size.width, height=line.observation.size.height)
        [action] = family.parse(text, family.context(frame)).actions
        assert line.action is not None
        if line.action["type"] in APPROXIMATED.get(family_name, set()):
            assert row["approximations"] and action.type == line.action["type"]
            assert action.direction == line.action["direction"]  # type: ignore[union-attr]
            continue
        assert_same(action, parse_action(line.action))
        assert not row["approximations"]
