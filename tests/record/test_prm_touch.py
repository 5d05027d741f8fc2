"""PRM cases on a phone (cua/export/prm.py `perturb`): a touch on a point is moved off its
target as a click is, and a swipe or a fling is reversed."""

from __future__ import annotations

import json
from pathlib import Path

from cua.export.prm import OFFSET_PX, perturb
from cua.observation import Size
from cua.trajectory import ObservationRef, StepLine, Trajectory


def _step(folder: Path, action: dict[str, object], axtree: list[dict[str, object]] | None = None) -> StepLine:
    ref = None
    if axtree is not None:
        (folder / "ax.json").write_text(json.dumps(axtree), encoding="utf-8")
        ref = "ax.json"
    return StepLine(index=0, observation=ObservationRef(size=Size(width=360, height=740), axtree=ref), action=action)


def _traj(folder: Path) -> Trajectory:
    return Trajectory(folder=folder, meta=None, steps=[], all_steps=[], end=None)


def test_a_tap_moves_to_the_nearest_other_control_and_a_swipe_reverses(tmp_path: Path) -> None:
    traj = _traj(tmp_path)
    buttons = [{"role": "button", "name": "Alarm", "bbox": {"x": 10, "y": 100, "width": 60, "height": 48}},
               {"role": "button", "name": "Timer", "bbox": {"x": 90, "y": 100, "width": 60, "height": 48}}]
    for kind in ("tap", "double_tap", "long_press"):
        wrong = perturb(traj, _step(tmp_path, {"type": kind, "x": 40, "y": 120}, buttons), is_last=False)
        assert wrong is not None
        moved, why = wrong
        assert moved["type"] == kind and (moved["x"], moved["y"]) == (120.0, 124.0) and "Timer" in why
    alone = perturb(traj, _step(tmp_path, {"type": "tap", "x": 40, "y": 120}), is_last=False)
    assert alone is not None and alone[0]["x"] == 40 + OFFSET_PX
    for kind, direction, back in (("swipe", "up", "down"), ("fling", "left", "right")):
        action = {"type": kind, "x": 100, "y": 600, "direction": direction, "distance": 300}
        wrong = perturb(traj, _step(tmp_path, action), is_last=False)
        assert wrong is not None and wrong[0] == {**action, "direction": back}, wrong
    assert perturb(traj, _step(tmp_path, {"type": "nav", "button": "home"}), is_last=False) is None
