"""Branch a recorded trajectory at any step: a live sandbox, or an episode, in the state the
agent acted on at step k.

Two ways to get there, both checked against the recording:

- `fork(trajectory, k, source=...)`: from the nearest snapshot at or before k that the
  trajectory names (`StepLine.snapshot`, kept with `--snapshots`), forked off `source`,
  the sandbox that holds it; the recorded actions between that snapshot and k are
  performed again. The fast way (one fork; `bench/branch_fork.py`).
- `replay_prefix(episode, trajectory, k)`: the task's reset, then the recorded actions
  0..k-1 through the episode, so the episode stands at step k with the judge's initial
  state of the task's start: what a continuation needs to be judged (`cua replay
  --from-step`, a rollout request's `from_step`). Needs no kept sandbox.

Every screen on the way, and the one at k, is compared with the recorded frame, pixel by
pixel: a branch never starts from a state that only looks like the recording's.
A step that cannot be reached is refused with `BranchRefused`, saying why (no snapshot at
or before it, the snapshot is gone with its sandbox, a replayed screen differs, the step
is past the trajectory's end).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cua.actions import Action, Done, parse_action
from cua.branch.instance import NotReproducible, recorded_instance
from cua.episode.episode import Episode
from cua.episode.group import ForkableHandle
from cua.episode.handle import SandboxHandle
from cua.errors import BadRequest, UnknownSnapshot
from cua.info import SnapshotRef
from cua.observation import Observation, ObserveOptions
from cua.task import TaskInstance
from cua.trajectory import ObservationRef, Trajectory, read_trajectory

__all__ = ["BranchRefused", "ForkedSandbox", "branch_extra", "fork", "load", "recorded_frame", "replay_prefix",
           "snapshot_at", "task_instance"]


class BranchRefused(BadRequest):
    """The trajectory cannot be branched at that step (see `details["why"]`): the input's
    fault; asking again will not help."""


@dataclass
class ForkedSandbox:
    """A live sandbox in the state the agent acted on at `step` (close it when done)."""

    handle: SandboxHandle
    observation: Observation
    step: int
    #: The step whose snapshot it was forked from.
    snapshot_step: int
    #: Recorded actions performed again after the fork (0: the snapshot was at `step`).
    replayed: int
    #: Screens compared with the recording on the way (0 when it kept no frames).
    checked: int

    async def close(self) -> None:
        await self.handle.close()


def load(trajectory: Trajectory | str | Path) -> Trajectory:
    return trajectory if isinstance(trajectory, Trajectory) else read_trajectory(trajectory)


def _refuse(traj: Trajectory, step: int, why: str, message: str) -> BranchRefused:
    return BranchRefused(f"{traj.folder}: cannot branch at step {step}: {message}",
                         details={"trajectory": str(traj.folder), "step": step, "why": why})


def _check_step(traj: Trajectory, step: int) -> None:
    if traj.meta is None:
        raise _refuse(traj, step, "no_meta", "the trajectory has no meta.json")
    if not 0 <= step <= len(traj.steps):
        raise _refuse(traj, step, "out_of_range", f"it has steps 0..{len(traj.steps) - 1} "
                                                  f"(and {len(traj.steps)}, its final state)")


def recorded_observation(traj: Trajectory, step: int) -> ObservationRef | None:
    """The observation the agent acted on at `step` (`len(steps)`: the final one)."""
    if step < len(traj.steps):
        return traj.steps[step].observation
    return traj.end.final if traj.end is not None else None


def recorded_frame(traj: Trajectory, step: int) -> bytes | None:
    return traj.frame_bytes(recorded_observation(traj, step))


def snapshot_at(traj: Trajectory, step: int) -> tuple[int, SnapshotRef] | None:
    """The nearest snapshot at or before `step`: (the step it was taken at, its ref)."""
    for index in range(min(step, len(traj.steps) - 1), -1, -1):
        snapshot = traj.steps[index].snapshot
        if snapshot is not None:
            try:
                return index, SnapshotRef.model_validate(snapshot)
            except ValidationError as exc:
                raise _refuse(traj, step, "bad_snapshot", f"step {index}'s snapshot is not a snapshot "
                                                          f"reference: {exc.errors()[0]['msg']}") from None
    return None


def _pixels_differ(recorded: bytes, shot: bytes) -> int:
    """How many pixels differ (-1: the frames differ in size)."""
    if recorded == shot:  # the same encoder's bytes for the same pixels: no need to decode them
        return 0
    import numpy as np
    from PIL import Image

    a = np.asarray(Image.open(io.BytesIO(recorded)).convert("RGB"))
    b = np.asarray(Image.open(io.BytesIO(shot)).convert("RGB"))
    if a.shape != b.shape:
        return -1
    return int((a != b).any(axis=-1).sum())


def _compare(traj: Trajectory, step: int, obs: Observation, target: int) -> bool:
    """Whether `obs` is the recorded screen of `step` (raises when it is not); False when
    there was nothing to compare (no recorded frame, or no screenshot)."""
    recorded = recorded_frame(traj, step)
    if recorded is None or obs.screenshot is None:
        return False
    differ = _pixels_differ(recorded, obs.screenshot.data)
    if differ:
        what = "a frame of another size" if differ < 0 else f"{differ} pixels differ"
        raise _refuse(traj, target, "diverged", f"the screen at step {step} is not the recorded one ({what})")
    return True


def _action(traj: Trajectory, index: int, target: int) -> Action | None:
    raw = traj.steps[index].action
    if raw is None:
        return None
    try:
        return parse_action(raw)
    except ValidationError as exc:
        raise _refuse(traj, target, "bad_action", f"step {index} is not a unified action: "
                                                  f"{exc.errors()[0]['msg']}") from None


def _observe(traj: Trajectory, observe: ObserveOptions | None) -> ObserveOptions | None:
    """The recording's observe options, when they are not the defaults (None lets the host
    answer with the observation it has ready: a fork spare's)."""
    if observe is not None or traj.meta is None or not traj.meta.observe:
        return observe
    recorded = ObserveOptions.model_validate(traj.meta.observe)
    return None if recorded == ObserveOptions() else recorded


async def fork(trajectory: Trajectory | str | Path, step: int, *, source: ForkableHandle,
               observe: ObserveOptions | None = None) -> ForkedSandbox:
    """A live sandbox in the state the agent acted on at `step`, forked off `source` (the
    sandbox that took the trajectory's snapshots) from the nearest snapshot at or before
    it, the recorded actions in between performed again; every screen checked.

    Raises `BranchRefused` when no snapshot precedes the step, the snapshot is gone (its
    sandbox closed, or it was released), or a screen differs from the recording."""
    traj = load(trajectory)
    _check_step(traj, step)
    observe = _observe(traj, observe)
    found = snapshot_at(traj, step)
    if found is None:
        raise _refuse(traj, step, "no_snapshot", "the trajectory keeps no snapshot at or before it "
                                                 "(record with --snapshots, or replay it from the reset)")
    at, ref = found
    try:
        handle = await source.fork(ref, observe=observe)
    except UnknownSnapshot:
        raise _refuse(traj, step, "snapshot_gone", f"step {at}'s snapshot {ref.id} is gone (its sandbox "
                                                   "closed, or it was released)") from None
    try:
        obs = handle.observation
        checked = 0
        for index in range(at, step):
            action = _action(traj, index, step)
            if action is not None and not isinstance(action, Done):
                obs = await handle.act(action, frame=traj.steps[index].observation.size, observe=observe)
            if index + 1 < step:
                checked += _compare(traj, index + 1, obs, step)
        checked += _compare(traj, step, obs, step)
    except BaseException:
        await handle.close()
        raise
    return ForkedSandbox(handle=handle, observation=obs, step=step, snapshot_step=at, replayed=step - at,
                         checked=checked)


def task_instance(traj: Trajectory) -> TaskInstance:
    """The task instance the trajectory ran (`recorded_instance`), refused as a branch."""
    try:
        return recorded_instance(traj)
    except NotReproducible as exc:
        raise _refuse(traj, 0, str(exc.details.get("why", "unknown_task")), exc.message) from None


async def replay_prefix(episode: Episode, trajectory: Trajectory | str | Path, step: int) -> Observation:
    """Reset `episode` (a fresh `Episode` of the trajectory's task instance) and perform the
    recorded actions 0..step-1 through it, checking every screen; the episode then stands
    at `step`, its judge's initial state the task's start. Returns the observation at `step`.

    Raises `BranchRefused` as `fork` does; the caller closes the sandbox."""
    traj = load(trajectory)
    _check_step(traj, step)
    obs = await episode.reset()
    _compare(traj, 0, obs, step)
    for index in range(step):
        action = _action(traj, index, step)
        result = await episode.step(action)
        obs = result.observation
        _compare(traj, index + 1, obs, step)
        if episode.over:
            raise _refuse(traj, step, "ended", f"the episode is over after step {index} when replayed: "
                                               "nothing is left to continue")
    return obs


def branch_extra(traj: Trajectory, step: int) -> dict[str, Any]:
    """What a branch's trajectory says of its parent (meta.extra["branch"])."""
    assert traj.meta is not None
    return {"branch": {"of": traj.meta.id, "step": step, "source": str(traj.folder)}}
