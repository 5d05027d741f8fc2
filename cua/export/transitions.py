"""World-model transitions: (frame t, action t, frame t+1, what changed, progress change).

One row per step of a trajectory's final attempt: the observation the action was taken
on (`image`, `url`, `title`), the action (unified JSON, its point in pixels and normalised),
the observation it led to (`next_image`, `next_url`, `next_title`: the next step's, or the
final one after the last step), and what changed:

- `axtree_diff`: from the recorded accessibility trees of t and t+1 (`cua.export.diffs`;
  JSON, null when the trajectory kept no trees: record with `axtree` observed);
- `judge_state_diff`: what changed in the state the judge reads. A trajectory does not hold
  that state, so it is only filled with `--execute` (`cua.export.execute`: the trajectory
  is executed again on its task, as recorded, reading the judge's queries after each
  step); without `--execute` it is null, and `executed` is false;
- `progress_before`, `progress_after`, `progress_delta`: the judge's dense progress (the
  fraction of its subgoals met) before and after the step. Without `--execute`, as far as
  the recording has it (its steps' `progress`; the state before step 0 is not recorded);
  with it, from the execution. `passed_after`: whether the judge would pass the state after
  the step (executed only).

With `--execute` every observation reached is checked against the recorded one (frame,
URL, action error, progress where recorded): from a step whose check fails on, the rows are
dropped with the reason (the export's `skipped` and `dropped`), never exported from a state
the recording does not show. `screen_diff` is the executed frame's difference from the
recorded `next_image` (0: same). Rows of a trajectory that cannot be executed (its task not
bundled here, ...) are dropped with that reason too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cua.episode import SandboxOpener
from cua.errors import CuaError
from cua.export.diffs import axtree_diff, state_diff
from cua.export.execute import Diverged, NotExecutable, Reached, Reenactment, action_of, instance_of, reenact
from cua.export.rows import ImageMode, _image, action_geometry, trajectory_columns
from cua.screen_diff import SCREEN_THRESHOLD, screen_difference
from cua.trajectory import Trajectory

__all__ = ["Dropped", "executed_transitions", "transition_rows"]


@dataclass
class Dropped:
    """Rows left out of an export: a trajectory's steps from `step` on (all of them: 0), and why."""

    trajectory_id: str
    step: int
    rows: int
    reason: str
    #: The reason's kind, counted in the export's `skipped`.
    kind: str


def _delta(before: float | None, after: float | None) -> float | None:
    return round(after - before, 9) if before is not None and after is not None else None


def transition_rows(traj: Trajectory, images: ImageMode = "path", root: Path | None = None, *,
                    reached: list[Reached] | None = None) -> Iterator[dict[str, Any]]:
    """The trajectory's transitions (module docstring). `reached`: the states an execution
    reached, the reset's first, one per step after it (the rows stop where it stops: a
    divergence); None for a recording-only export."""
    shared = trajectory_columns(traj, root)
    recorded = traj.observations()
    steps = len(traj.steps) if reached is None else min(len(traj.steps), len(reached) - 1)
    for t in range(steps):
        line = traj.steps[t]
        obs = line.observation
        after = recorded[t + 1] if t + 1 < len(recorded) else None
        tree_diff = axtree_diff(traj.axtree(obs), traj.axtree(after))
        state = progress_before = progress_after = passed = shot_diff = None
        if reached is not None:
            state = json.dumps(state_diff(reached[t].state, reached[t + 1].state), default=str)
            progress_before, progress_after = reached[t].progress, reached[t + 1].progress
            passed = reached[t + 1].passed
            frame, shot = traj.frame_bytes(after), reached[t + 1].observation.screenshot
            if frame is not None and shot is not None:
                shot_diff = round(screen_difference(frame, shot.data), 5)
        else:
            progress_before = traj.steps[t - 1].progress if t > 0 else None
            progress_after = line.progress
        width, height = obs.size.width, obs.size.height
        yield {
            **shared,
            "step": line.index,
            "is_last": t == len(traj.steps) - 1,
            "action": json.dumps(line.action) if line.action is not None else None,
            **action_geometry(line.action, width, height),
            "thought": line.thought,
            "error_reason": line.error.reason if line.error is not None else None,
            "frame_width": width,
            "frame_height": height,
            "image": _image(traj, obs, images, root),
            "url": obs.url,
            "title": obs.title,
            "next_image": _image(traj, after, images, root),
            "next_url": after.url if after is not None else None,
            "next_title": after.title if after is not None else None,
            "axtree_diff": json.dumps(tree_diff) if tree_diff is not None else None,
            "judge_state_diff": state,
            "progress_before": progress_before,
            "progress_after": progress_after,
            "progress_delta": _delta(progress_before, progress_after),
            "passed_after": passed,
            "executed": reached is not None,
            "screen_diff": shot_diff,
        }


def dropped_of(traj: Trajectory, reached: list[Reached], diverged: Diverged | None) -> Dropped | None:
    """The rows an execution that stopped at `diverged` leaves out (None: none)."""
    if diverged is None or traj.meta is None:
        return None
    first = max(0, len(reached) - 1)
    return Dropped(trajectory_id=traj.meta.id, step=first, rows=len(traj.steps) - first,
                   reason=diverged.reason(), kind="execution diverged from the recording")


async def executed_transitions(traj: Trajectory, opener: SandboxOpener, images: ImageMode, root: Path, *,
                               threshold: float = SCREEN_THRESHOLD) -> tuple[list[dict[str, Any]], Dropped | None]:
    """The trajectory's transitions from an execution of it (module docstring): the rows up
    to where it diverged, and the rows left out with why."""
    assert traj.meta is not None
    every = len(traj.steps)
    try:
        instance = instance_of(traj)
        for line in traj.steps:
            action_of(line)
    except NotExecutable as exc:
        return [], Dropped(traj.meta.id, 0, every, f"not executable: {exc.message}", "trajectory not executable")
    try:
        async with opener(instance.sandbox_kind, instance.sandbox_config) as handle:
            run = Reenactment(traj, instance, handle, threshold=threshold)
            try:
                states, diverged = await reenact(run, every)
            finally:
                run.finish()
    except CuaError as exc:
        return [], Dropped(traj.meta.id, 0, every, f"the sandbox failed ({exc.fault} fault): {exc.message}",
                           "sandbox failed")
    rows = list(transition_rows(traj, images, root, reached=states))
    dropped = dropped_of(traj, states, diverged)
    if dropped is None and len(rows) < every:
        dropped = Dropped(traj.meta.id, len(rows), every - len(rows),
                          f"the execution's episode ended after step {len(rows) - 1}", "execution ended early")
    return rows, dropped
