"""Step-level process-reward cases: at one state, the correct action and a plausible wrong one.

A case is the history (the task and the steps before), the observation at the step, the
correct action (from a passing trajectory) and a wrong one at the same state, each with
the judge's evidence when a judge saw it. Wrong actions come from two places, in order:

1. **A matching failed trajectory**: the same task and seed (so the same start state), and
   the same actions up to step k (pointer actions within `SAME_POINT_PX`); its action at
   step k is the wrong one and its verdict's evidence is kept (a near-miss oracle run or a
   failed policy run are the usual sources).
2. **A documented perturbation** of the correct action, for steps no failure covers:
   - a click, double-click, move or drag start moved to the centre of the nearest *other*
     interactive element in the accessibility tree (when the frame has one with boxes),
     else moved off target by `OFFSET_PX` pixels (to the right, or left near the edge);
   - a typed text with its last character dropped (a one-character typo; "x" for one
     character);
   - a key: Enter <-> Tab, anything else -> Escape;
   - a scroll in the opposite direction;
   - `done` at a step that is not the last: not applicable (the correct action there is
     not done); a final `done` is replaced by a wait, which never ends the task.
   A perturbed action was never executed, so it has no evidence of its own.

Whether the wrong action was executed, and what it did (`wrong_executed`,
`wrong_execution`):

- `"recorded"`: a matching failure's action was executed by the failing run itself: its
  next frame (`wrong_next_image`, `wrong_next_url`) is that run's, its progress that run's
  where it recorded any, and its continuation (`continuation: "failed_trajectory"`) is that
  run's own remaining actions, whose verdict is `continuation_passed`;
- `"executed"` (`cua export --format prm --execute`, `cua.export.prm_execute`): a
  perturbation was performed on the state of step k, reached by executing the passing
  trajectory's actions before it on its task again, each frame checked against the
  recording; then the passing trajectory's remaining actions play on, the correct one at k
  first (`continuation: "recorded_actions"`), and the end state is judged.
  `wrong_state_diff` is what the wrong action changed in the state the judge reads
  (`cua.export.diffs`);
- not executed (`wrong_executed` false): a perturbation without `--execute`, or one whose
  execution could not be done, with `wrong_not_executed` saying why.

`progress_before` is the judge's dense progress at step k, `correct_progress_after` and
`wrong_progress_after` after the correct and the wrong action (null where neither the
recording nor an execution gives it), `wrong_progress_delta` the wrong action's change.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from cua.export.rows import ImageMode, _image
from cua.trajectory import StepLine, Trajectory

__all__ = ["INTERACTIVE_ROLES", "NOT_EXECUTED", "OFFSET_PX", "SAME_POINT_PX", "perturb", "prm_cases", "same_action"]

OFFSET_PX = 48.0
SAME_POINT_PX = 4.0
INTERACTIVE_ROLES = frozenset({"button", "link", "checkbox", "textbox", "searchbox", "combobox", "menuitem",
                               "menuitemcheckbox", "menuitemradio", "tab", "radio", "option", "switch", "slider",
                               "spinbutton", "listbox", "treeitem"})
#: Why a perturbation case has no consequence, until `--execute` gives it one.
NOT_EXECUTED = "a perturbation, not executed (cua export --format prm --execute executes it)"
_POINTER = ("click", "move", "scroll", "mouse_down", "mouse_up")
_OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}


def same_action(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """The same action, pointer positions within `SAME_POINT_PX`."""
    if a is None or b is None or a.get("type") != b.get("type"):
        return False
    for key in set(a) | set(b):
        va, vb = a.get(key), b.get(key)
        if key in ("x", "y") and isinstance(va, (int, float)) and isinstance(vb, (int, float)):
            if abs(va - vb) > SAME_POINT_PX:
                return False
        elif key == "path" and isinstance(va, list) and isinstance(vb, list):
            if len(va) != len(vb) or any(abs(p["x"] - q["x"]) > SAME_POINT_PX or abs(p["y"] - q["y"]) > SAME_POINT_PX
                                         for p, q in zip(va, vb, strict=True)):
                return False
        elif va != vb:
            return False
    return True


def _boxes(traj: Trajectory, line: StepLine) -> list[tuple[float, float, float, float, str]]:
    """Interactive elements' boxes in frame pixels: (x, y, w, h, label)."""
    tree = traj.axtree(line.observation) or []
    ref = line.observation
    screen = ref.screen or ref.size
    sx, sy = ref.size.width / screen.width, ref.size.height / screen.height
    out = []
    for node in tree:
        box = node.get("bbox")
        if box and node.get("role") in INTERACTIVE_ROLES and "disabled" not in (node.get("states") or []):
            out.append((box["x"] * sx, box["y"] * sy, box["width"] * sx, box["height"] * sy,
                        f"{node.get('role')} {node.get('name', '')!r}".strip()))
    return out


def _moved_point(traj: Trajectory, line: StepLine, x: float, y: float) -> tuple[float, float, str]:
    width, height = line.observation.size.width, line.observation.size.height
    others = [(bx + bw / 2, by + bh / 2, label) for bx, by, bw, bh, label in _boxes(traj, line)
              if not (bx <= x <= bx + bw and by <= y <= by + bh)
              and 0 <= bx + bw / 2 < width and 0 <= by + bh / 2 < height]
    if others:
        cx, cy, label = min(others, key=lambda o: (o[0] - x) ** 2 + (o[1] - y) ** 2)
        return round(cx, 1), round(cy, 1), f"moved to the nearest other interactive element ({label})"
    dx = OFFSET_PX if x + OFFSET_PX < width else -OFFSET_PX
    return round(x + dx, 1), y, f"moved {dx:+g} px horizontally, off its target"


def perturb(traj: Trajectory, line: StepLine, is_last: bool) -> tuple[dict[str, Any], str] | None:
    """A plausible wrong action for `line` and what was changed; None where none applies."""
    action = line.action
    if action is None:
        return None
    kind = action.get("type")
    if kind in ("click", "move", "mouse_down", "tap", "double_tap", "long_press") and action.get("x") is not None:
        x, y, why = _moved_point(traj, line, float(action["x"]), float(action["y"]))
        return {**action, "x": x, "y": y}, why
    if kind in ("swipe", "fling"):
        opposite = _OPPOSITE[action["direction"]]
        return {**action, "direction": opposite}, f"the {kind} reversed ({opposite})"
    if kind == "drag":
        path = action["path"]
        x, y, why = _moved_point(traj, line, float(path[0]["x"]), float(path[0]["y"]))
        dx, dy = x - path[0]["x"], y - path[0]["y"]
        return {**action, "path": [{"x": p["x"] + dx, "y": p["y"] + dy} for p in path]}, f"the drag {why}"
    if kind == "type":
        text = str(action.get("text", ""))
        return {**action, "text": text[:-1] if len(text) > 1 else "x"}, "the text with its last character dropped"
    if kind == "key":
        keys = list(action.get("keys") or [])
        swap = {"Enter": "Tab", "Tab": "Enter"}
        new = [swap[keys[0]]] if len(keys) == 1 and keys[0] in swap else ["Escape"]
        if new == keys:
            new = ["Tab"]
        return {**action, "keys": new}, f"the key {'+'.join(keys)} replaced by {'+'.join(new)}"
    if kind == "scroll":
        return {**action, "dx": -float(action.get("dx", 0)), "dy": -float(action.get("dy", 0))}, \
            "the scroll reversed"
    if kind == "done" and is_last:
        return {"type": "wait", "seconds": 1.0}, "a wait instead of ending the task"
    return None


def _evidence(traj: Trajectory) -> list[dict[str, Any]] | None:
    verdict = traj.end.verdict if traj.end is not None else None
    return [e.model_dump(mode="json") for e in verdict.evidence] if verdict is not None else None


def _case(good: Trajectory, k: int, wrong: dict[str, Any], wrong_thought: str | None, source: str,
          how: str | None, bad: Trajectory | None, images: ImageMode, root: Path | None) -> dict[str, Any]:
    meta = good.meta
    assert meta is not None
    line = good.steps[k]
    return {
        "id": f"{meta.id}-{k}-{source}",
        "task_id": meta.task_id,
        "seed": meta.seed,
        "instruction": meta.instruction,
        "step": k,
        "history": json.dumps([{"step": s.index, "action": s.action, "thought": s.thought} for s in good.steps[:k]]),
        "image": _image(good, line.observation, images, root),
        "url": line.observation.url,
        "frame_width": line.observation.size.width,
        "frame_height": line.observation.size.height,
        "correct_action": json.dumps(line.action),
        "correct_thought": line.thought,
        "correct_trajectory_id": meta.id,
        "correct_evidence": json.dumps(_evidence(good)),
        "wrong_action": json.dumps(wrong),
        "wrong_thought": wrong_thought,
        "wrong_source": source,
        "wrong_perturbation": how,
        "wrong_trajectory_id": bad.meta.id if bad is not None and bad.meta is not None else None,
        "wrong_passed": bad.end.verdict.passed if bad is not None and bad.end and bad.end.verdict else None,
        "wrong_evidence": json.dumps(_evidence(bad)) if bad is not None else None,
        **_consequence(good, k, bad, images, root),
    }


def _consequence(good: Trajectory, k: int, bad: Trajectory | None, images: ImageMode,
                 root: Path | None) -> dict[str, Any]:
    """What the wrong action did, as far as the recordings show (module docstring)."""
    before = good.steps[k - 1].progress if k > 0 else None
    correct_after = good.steps[k].progress
    if bad is None:
        return {"wrong_executed": False, "wrong_execution": None,
                "wrong_not_executed": NOT_EXECUTED,
                "wrong_next_image": None, "wrong_next_url": None, "progress_before": before,
                "correct_progress_after": correct_after, "wrong_progress_after": None, "wrong_progress_delta": None,
                "wrong_state_diff": None, "continuation": None, "continuation_passed": None,
                "continuation_score": None}
    after = bad.observations()[k + 1] if k + 1 < len(bad.observations()) else None
    wrong_after = bad.steps[k].progress
    verdict = bad.end.verdict if bad.end is not None else None
    return {"wrong_executed": True, "wrong_execution": "recorded", "wrong_not_executed": None,
            "wrong_next_image": _image(bad, after, images, root), "wrong_next_url": after.url if after else None,
            "progress_before": before, "correct_progress_after": correct_after, "wrong_progress_after": wrong_after,
            "wrong_progress_delta": round(wrong_after - before, 9) if wrong_after is not None and before is not None
            else None, "wrong_state_diff": None, "continuation": "failed_trajectory",
            "continuation_passed": verdict.passed if verdict is not None else None,
            "continuation_score": verdict.score if verdict is not None else None}


def prm_cases(trajectories: Iterable[Trajectory], *, images: ImageMode = "embed",
              perturbations: bool = True, root: Path | None = None) -> Iterator[dict[str, Any]]:
    """PRM cases from complete trajectories: matched failures first, then perturbations of
    the passing trajectories' remaining steps (when `perturbations`). A referenced image's
    path is relative to `root`, the export folder."""
    by_state: dict[tuple[str, int], list[Trajectory]] = defaultdict(list)
    for traj in trajectories:
        if traj.meta is not None and traj.end is not None and traj.end.verdict is not None:
            by_state[(traj.meta.task_id, traj.meta.seed)].append(traj)
    for group in by_state.values():
        good = [t for t in group if t.end and t.end.verdict and t.end.verdict.passed]
        bad = [t for t in group if t.end and t.end.verdict and not t.end.verdict.passed]
        covered: set[tuple[str, int]] = set()
        for failed in bad:
            for passed in good:
                k = 0
                while (k < len(failed.steps) and k < len(passed.steps)
                       and same_action(failed.steps[k].action, passed.steps[k].action)):
                    k += 1
                if k >= len(passed.steps) or k >= len(failed.steps) or failed.steps[k].action is None:
                    continue
                source = "near_miss" if failed.meta and failed.meta.agent.kind == "near_miss" else "failed_trajectory"
                covered.add((passed.meta.id if passed.meta else "", k))
                yield _case(passed, k, failed.steps[k].action or {}, failed.steps[k].thought, source, None, failed,
                            images, root)
                break  # one matching passing trajectory per failure
        if not perturbations:
            continue
        for passed in good:
            last = len(passed.steps) - 1
            for k, line in enumerate(passed.steps):
                if (passed.meta.id if passed.meta else "", k) in covered:
                    continue
                wrong = perturb(passed, line, k == last)
                if wrong is not None:
                    yield _case(passed, k, wrong[0], None, "perturbation", wrong[1], None, images, root)
