"""Executed step-level negatives: a PRM case's wrong action performed at its state.

For a perturbation case at step k of a passing trajectory (`cua.export.prm`): a fresh
episode of its task, set up as recorded (`cua.export.execute`), replays the trajectory's
actions before k, each observation checked against the recording; the wrong action is
performed there, and its next frame, the judge's state change and progress are kept; then
the trajectory's own remaining actions play on (the correct one at k first) and the end
state is judged: a wrong action the rest of the plan cannot recover from fails there. (Not
the task's oracle: the bundled oracles are scripts from the task's start page, which from
a state mid-way fail whatever the wrong action did, so their verdict would say nothing.) The
trajectory is first executed whole once, which gives the progress before and after each
correct action and refuses early (with the reason) a trajectory that does not replay.

A case that cannot be executed keeps `wrong_executed` false and says why in
`wrong_not_executed`; it is never given a consequence it did not have.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cua.actions import parse_action
from cua.episode import SandboxHandle, SandboxOpener
from cua.errors import CuaError
from cua.export.diffs import state_diff
from cua.export.execute import NotExecutable, Reached, Reenactment, action_of, instance_of, reenact
from cua.export.prm import NOT_EXECUTED
from cua.export.rows import ImageMode, relative
from cua.screen_diff import SCREEN_THRESHOLD
from cua.task import TaskInstance
from cua.trajectory import Trajectory

__all__ = ["execute_cases"]


def _frame(reached: Reached, case_id: str, images: ImageMode, root: Path) -> str | None:
    """The wrong action's next frame: a file under ROOT/frames (its path relative to ROOT), or a data URL."""
    shot = reached.observation.screenshot
    if shot is None:
        return None
    if images == "embed":
        return f"data:image/{shot.format};base64," + base64.b64encode(shot.data).decode("ascii")
    folder = root / "frames"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{''.join(c if c.isalnum() or c in '._@-' else '_' for c in case_id)}.{shot.format}"
    path.write_bytes(shot.data)
    return relative(path, root)


def _not_executed(case: dict[str, Any], why: str) -> None:
    case.update(wrong_executed=False, wrong_execution=None, wrong_not_executed=why)


async def execute_cases(good: Trajectory, cases: list[dict[str, Any]], opener: SandboxOpener, *,
                        images: ImageMode, root: Path, threshold: float = SCREEN_THRESHOLD) -> None:
    """Execute the perturbation cases of the passing trajectory `good` in place (module
    docstring); other cases are left as they are."""
    todo = [c for c in cases if c["wrong_source"] == "perturbation"]
    if not todo:
        return
    try:
        instance = instance_of(good)
        for line in good.steps:
            action_of(line)
    except NotExecutable as exc:
        for case in todo:
            _not_executed(case, exc.message)
        return
    try:
        async with opener(instance.sandbox_kind, instance.sandbox_config) as handle:
            whole = Reenactment(good, instance, handle, threshold=threshold)
            states, diverged = await reenact(whole, len(good.steps))
            whole.finish()
            for case in todo:
                k = int(case["step"])
                if len(states) <= k:
                    _not_executed(case, diverged.reason() if diverged is not None
                                  else "the execution ended before the step")
                    continue
                case["progress_before"] = states[k].progress
                if k + 1 < len(states):
                    case["correct_progress_after"] = states[k + 1].progress
                await _one(good, case, instance, handle, images, root, threshold)
    except CuaError as exc:  # the sandbox failed under it: the cases not yet done say so
        for case in todo:
            if case["wrong_not_executed"] == NOT_EXECUTED:
                _not_executed(case, f"the sandbox failed ({exc.fault} fault): {exc.message}")


async def _one(good: Trajectory, case: dict[str, Any], instance: TaskInstance, handle: SandboxHandle,
               images: ImageMode, root: Path, threshold: float) -> None:
    k = int(case["step"])
    try:
        wrong = parse_action(json.loads(case["wrong_action"]))
    except ValidationError as exc:
        _not_executed(case, f"the wrong action is not a unified action: {exc.errors()[0]['msg']}")
        return
    run = Reenactment(good, instance, handle, threshold=threshold)
    try:
        states, diverged = await reenact(run, k)
        if diverged is not None or len(states) <= k:
            _not_executed(case, diverged.reason() if diverged is not None else "the execution ended before the step")
            return
        before = states[k]
        after = await run.step(wrong)
        case.update(wrong_executed=True, wrong_execution="executed", wrong_not_executed=None,
                    wrong_next_image=_frame(after, case["id"], images, root), wrong_next_url=after.observation.url,
                    progress_before=before.progress, wrong_progress_after=after.progress,
                    wrong_progress_delta=round(after.progress - before.progress, 9),
                    wrong_state_diff=json.dumps(state_diff(before.state, after.state), default=str))
        end, how = after, "none: the wrong action ended the episode"
        if not run.over:
            how = "recorded_actions"
            for line in good.steps[k:]:
                if run.over:
                    break
                end = await run.step(action_of(line))
        case.update(continuation=how, continuation_passed=end.passed, continuation_score=end.score)
    finally:
        run.finish()
