"""Replay a trajectory: re-execute its actions from its start and say where it diverges.

The episode is set up as the recording's was, through the episode layer: the same task
template and version, seed and reset seed, sandbox kind and config, and observe options
(so frames have the recording's size and format); a trajectory that started from a
snapshot is restored to it when the sandbox still holds it. Then each recorded action
of the final attempt is performed with `Episode.step` (the judge's dense progress read
after each), and every observation is compared with the recorded one (`compare`):
screen, URL, judge progress, and the action's error. The first step where any of them
differs is the first divergence; the replay goes on to the end either way (unless told
to stop), then judges the end state and compares the verdict with the recorded one.

The replay writes its own trajectory (producer "replay", meta.extra["replay_of"] = the
recording's id), so a replay can itself be exported or replayed. This is also how a
recorded routine runs again with no model.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cua.actions import Action, Done, parse_action
from cua.branch.instance import NotReproducible, recorded_instance
from cua.episode import AgentTurn, Episode, SandboxOpener
from cua.errors import BadRequest
from cua.info import SnapshotRef
from cua.observation import Observation, ObserveOptions
from cua.screen_diff import SCREEN_THRESHOLD, screen_difference
from cua.task import TaskInstance
from cua.trajectory import AgentInfo, ObservationRef, Trajectory, TrajectoryWriter, read_trajectory

__all__ = ["Divergence", "ReplayError", "ReplayReport", "StepCheck", "replay"]


class ReplayError(BadRequest):
    """The trajectory cannot be replayed (no meta, an unknown task version, an action that
    is not a unified action): the input's fault, and replaying it again will not help."""


@dataclass
class StepCheck:
    """One observation compared: `step` is the index of the action that led to it (-1: the reset)."""

    step: int
    action: str | None
    screen_diff: float | None = None
    url_recorded: str | None = None
    url_replayed: str | None = None
    progress_recorded: float | None = None
    progress_replayed: float | None = None
    error_recorded: str | None = None
    error_replayed: str | None = None
    differs: list[str] = field(default_factory=list)


@dataclass
class Divergence:
    step: int
    what: list[str]
    detail: str


@dataclass
class ReplayReport:
    source: str
    trajectory: str
    task_id: str
    seed: int
    steps: int
    checks: list[StepCheck]
    first_divergence: Divergence | None
    recorded_passed: bool | None
    recorded_score: float | None
    replayed_passed: bool | None
    replayed_score: float | None
    threshold: float
    seconds: float

    @property
    def reproduced(self) -> bool:
        """The replay's verdict is the recording's (pass/fail and score)."""
        return self.recorded_passed == self.replayed_passed and (
            self.recorded_score is None or self.replayed_score is None
            or abs(self.recorded_score - self.replayed_score) < 1e-9)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "reproduced": self.reproduced}

    def line(self) -> str:
        div = self.first_divergence
        where = "none" if div is None else f"step {div.step} ({div.detail})"
        verdict = {True: "pass", False: "fail", None: "none"}
        return (f"{self.task_id} seed={self.seed} steps={self.steps} first_divergence={where} "
                f"verdict recorded={verdict[self.recorded_passed]} replayed={verdict[self.replayed_passed]} "
                f"reproduced={'yes' if self.reproduced else 'NO'}")


def _frame(traj: Trajectory, ref: ObservationRef | None) -> bytes | None:
    return traj.frame_bytes(ref)


def _screen_bytes(obs: Observation) -> bytes | None:
    return obs.screenshot.data if obs.screenshot is not None else None


def _check(step: int, action: str | None, recorded: ObservationRef | None, recorded_frame: bytes | None,
           replayed: Observation, *, progress_recorded: float | None, progress_replayed: float | None,
           error_recorded: str | None, error_replayed: str | None, threshold: float) -> StepCheck:
    check = StepCheck(step=step, action=action, progress_recorded=progress_recorded,
                      progress_replayed=progress_replayed, error_recorded=error_recorded,
                      error_replayed=error_replayed)
    shot = _screen_bytes(replayed)
    if recorded_frame is not None and shot is not None:
        check.screen_diff = round(screen_difference(recorded_frame, shot), 5)
        if check.screen_diff > threshold:
            check.differs.append("screen")
    if recorded is not None:
        check.url_recorded, check.url_replayed = recorded.url, replayed.url
        if recorded.url != replayed.url:
            check.differs.append("url")
    if progress_recorded is not None and progress_replayed is not None \
            and abs(progress_recorded - progress_replayed) > 1e-9:
        check.differs.append("judge")
    if error_recorded != error_replayed:
        check.differs.append("error")
    return check


def _detail(check: StepCheck, threshold: float) -> str:
    parts = []
    if "screen" in check.differs:
        parts.append(f"screen {check.screen_diff:.1%} of cells changed > {threshold:.1%}")
    if "url" in check.differs:
        parts.append(f"url {check.url_recorded!r} != {check.url_replayed!r}")
    if "judge" in check.differs:
        parts.append(f"judge progress {check.progress_recorded} != {check.progress_replayed}")
    if "error" in check.differs:
        parts.append(f"action error {check.error_recorded} != {check.error_replayed}")
    return "; ".join(parts)


def _instance(traj: Trajectory) -> TaskInstance:
    try:
        return recorded_instance(traj)
    except NotReproducible as exc:
        raise ReplayError(exc.message, details=exc.details) from None


def _actions(traj: Trajectory) -> list[Action | None]:
    out: list[Action | None] = []
    for line in traj.steps:
        if line.action is None:
            out.append(None)
            continue
        try:
            out.append(parse_action(line.action))
        except ValidationError as exc:
            raise ReplayError(f"{traj.folder}: step {line.index} is not a unified action: "
                              f"{exc.errors()[0]['msg']}") from None
    return out


async def replay(source: str | Path, opener: SandboxOpener, out: str | Path, *,
                 threshold: float = SCREEN_THRESHOLD, stop_at_divergence: bool = False,
                 on_step: Callable[[StepCheck], None] | None = None) -> ReplayReport:
    """Replay the trajectory at `source` in a sandbox from `opener`; write the replay's
    trajectory to `out`; return the comparison."""
    t0 = time.perf_counter()
    traj = read_trajectory(source)
    instance = _instance(traj)
    meta = traj.meta
    assert meta is not None
    actions = _actions(traj)
    observe = ObserveOptions.model_validate(meta.observe) if meta.observe else None
    writer = TrajectoryWriter(out, frames=meta.frames)
    agent = AgentInfo(name="replay", kind="replay", settings={"source": str(Path(source).resolve())})
    checks: list[StepCheck] = []
    first: Divergence | None = None

    def keep(check: StepCheck) -> None:
        nonlocal first
        checks.append(check)
        if check.differs and first is None:
            first = Divergence(step=check.step, what=list(check.differs), detail=_detail(check, threshold))
        if on_step is not None:
            on_step(check)

    async with opener(instance.sandbox_kind, instance.sandbox_config) as handle:
        episode = Episode(handle, instance, observe=observe, writer=writer, producer="replay", agent=agent,
                          max_steps=max(len(actions), 1), run_id=meta.run_id,
                          extra={"replay_of": meta.id, "replay_source": str(Path(source).resolve())})
        if meta.start_snapshot is not None:
            obs = await _restore(episode, handle, meta.start_snapshot, observe)
        else:
            obs = await episode.reset()
        recorded = traj.observations()
        keep(_check(-1, None, recorded[0] if recorded else None, _frame(traj, recorded[0]) if recorded else None, obs,
                    progress_recorded=None, progress_replayed=None, error_recorded=None, error_replayed=None,
                    threshold=threshold))
        done: Done | None = None
        for index, (line, action) in enumerate(zip(traj.steps, actions, strict=True)):
            if episode.over or (stop_at_divergence and first is not None):
                break
            turn = AgentTurn(actions=[action] if action is not None else [], raw=line.raw, thought=line.thought,
                             parse_error=line.parse_error)
            result = await episode.step(action, turn=turn, progress=True)
            if isinstance(action, Done):
                done = action
            after = recorded[index + 1] if index + 1 < len(recorded) else None
            keep(_check(index, action.type if action is not None else None, after, _frame(traj, after),
                        result.observation, progress_recorded=line.progress, progress_replayed=result.progress,
                        error_recorded=line.error.reason if line.error is not None else None,
                        error_replayed=result.error.reason if result.error is not None else None,
                        threshold=threshold))
        verdict = await episode.judge(done)
        episode.finish()
    recorded_verdict = traj.end.verdict if traj.end is not None else None
    return ReplayReport(
        source=str(Path(source)), trajectory=str(Path(out)), task_id=meta.task_id, seed=meta.seed,
        steps=len(actions), checks=checks, first_divergence=first,
        recorded_passed=recorded_verdict.passed if recorded_verdict is not None else None,
        recorded_score=recorded_verdict.score if recorded_verdict is not None else None,
        replayed_passed=verdict.passed, replayed_score=verdict.score, threshold=threshold,
        seconds=round(time.perf_counter() - t0, 3))


async def _restore(episode: Episode, handle: Any, snapshot: dict[str, Any],
                   observe: ObserveOptions | None) -> Observation:
    """Start from the recording's snapshot: the sandbox's reset and the judge's initial state
    come first (the judge compares the end with the task's start), then the restore."""
    await episode.reset()
    try:
        ref = SnapshotRef.model_validate(snapshot)
    except ValidationError as exc:
        raise ReplayError(f"the trajectory's start snapshot is not a snapshot reference: {exc.errors()[0]['msg']}") \
            from None
    obs: Observation = await handle.restore(ref, observe=observe)
    episode.saw(obs)
    return obs
