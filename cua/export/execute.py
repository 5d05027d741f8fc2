"""Executing a recorded trajectory again, for the exports that need what it does not hold.

A trajectory keeps frames, trees and actions, not the state the judge reads. `Reenactment`
sets its task up again on an open sandbox exactly as it was recorded (the same template
and version, seed and reset seed, appearance variant, observe options), through an
`Episode` of the episode layer, and performs actions there, reading the judge's queries
after each (the state, its dense progress and whether it would pass).

Every observation reached by a recorded action is checked against the recording (`check`):
the frame (`cua.screen_diff`, the rule `cua replay` uses), the URL, and the action's error
reason must match, and the judge's progress where the recording has it. A step whose check
fails has *diverged*: what the recording shows is not what this execution reached, so the
exports drop what depends on it and say why, rather than export it wrong.

What cannot be executed here is `NotExecutable` (the caller's input: a task no longer
bundled, a template whose seed now resets differently, an attacked episode), which the
exports turn into a reason too.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from cua.actions import Action, parse_action
from cua.branch.instance import NotReproducible, recorded_instance
from cua.episode import Episode, SandboxHandle, gather_state
from cua.errors import BadRequest
from cua.observation import Observation, ObserveOptions
from cua.screen_diff import SCREEN_THRESHOLD, screen_difference
from cua.state import StateResult
from cua.task import JudgeInput, TaskInstance, query_key
from cua.trajectory import AgentInfo, ObservationRef, StepLine, Trajectory

__all__ = ["Diverged", "Execution", "NotExecutable", "Reached", "Reenactment", "action_of",
           "instance_of", "reenact"]

@dataclass
class Execution:
    """How an export executes trajectories again (`--execute`): where its sandboxes come
    from (in this process, a given `cua serve`, or a child one), how many trajectories are
    executed at once (each in its own sandbox; the rows come out in the order of one at a
    time), and the screen threshold of a divergence."""

    local: bool = False
    server: str | None = None
    token: str | None = None
    threshold: float = SCREEN_THRESHOLD
    parallel: int = 1


class NotExecutable(BadRequest):
    """The trajectory cannot be executed again here: its task is not bundled, its seed now
    resets differently, it was attacked, or a step is not a unified action."""


def instance_of(traj: Trajectory) -> TaskInstance:
    """The task instance the trajectory was recorded on, as it was recorded; an attacked one
    is refused (its injections are not planted again)."""
    if traj.meta is not None and traj.meta.extra.get("attacks"):
        raise NotExecutable(f"{traj.meta.task_id}: an attacked episode (its injections are not planted again)")
    try:
        return recorded_instance(traj)
    except NotReproducible as exc:
        raise NotExecutable(exc.message, details=exc.details) from None


def action_of(line: StepLine) -> Action | None:
    """The step's action as a unified action (None: a turn that produced none)."""
    if line.action is None:
        return None
    try:
        return parse_action(line.action)
    except ValidationError as exc:
        raise NotExecutable(f"step {line.index} is not a unified action: {exc.errors()[0]['msg']}") from None


@dataclass
class Reached:
    """A state an execution reached: its observation, the judge's reads and their verdict."""

    observation: Observation
    state: dict[str, StateResult]
    progress: float
    passed: bool
    score: float


class Reenactment:
    """One execution of a trajectory's task on an open sandbox (single use: `start`, then
    `step` until done, then `finish`)."""

    def __init__(self, traj: Trajectory, instance: TaskInstance, handle: SandboxHandle, *,
                 threshold: float = SCREEN_THRESHOLD) -> None:
        meta = traj.meta
        assert meta is not None
        self.traj, self.instance, self.handle, self.threshold = traj, instance, handle, threshold
        self.observe = ObserveOptions.model_validate(meta.observe) if meta.observe else None
        # room for every recorded step and a PRM case's wrong action on top
        self.episode = Episode(handle, instance, observe=self.observe, producer="replay",
                               agent=AgentInfo(name="export", kind="replay"),
                               max_steps=max(instance.max_steps, len(traj.steps)) + 1)

    async def _read(self, obs: Observation) -> Reached:
        queries = list(self.instance.judge.queries())
        state = await gather_state(self.handle, queries)
        verdict = self.instance.judge.evaluate(JudgeInput(initial=self.episode.initial, final=state,
                                                          done=self.episode.done, steps=self.episode.steps))
        return Reached(observation=obs, state={query_key(q): state[query_key(q)] for q in queries},
                       progress=verdict.progress, passed=verdict.passed, score=verdict.score)

    async def start(self) -> Reached:
        """Reset as recorded; the first state (judged from the reset's own reads)."""
        obs = await self.episode.reset()
        verdict = self.instance.judge.evaluate(JudgeInput(initial=self.episode.initial, final=self.episode.initial,
                                                          done=None, steps=0))
        return Reached(observation=obs, state=dict(self.episode.initial), progress=verdict.progress,
                       passed=verdict.passed, score=verdict.score)

    async def step(self, action: Action | None) -> Reached:
        """Perform one action (None: a wasted turn) and read the state after it."""
        result = await self.episode.step(action)
        return await self._read(result.observation)

    @property
    def over(self) -> bool:
        return self.episode.over

    def check(self, reached: Reached, recorded: ObservationRef | None, line: StepLine | None) -> str | None:
        """Why `reached` is not the recorded observation `recorded` (reached by the step
        `line`, None for the reset); None when it is."""
        why = []
        if recorded is not None:
            frame = self.traj.frame_bytes(recorded)
            shot = reached.observation.screenshot
            if frame is not None and shot is not None:
                diff = screen_difference(frame, shot.data)
                if diff > self.threshold:
                    why.append(f"screen: {diff:.2%} of cells changed > {self.threshold:.2%}")
            if recorded.url != reached.observation.url:
                why.append(f"url {reached.observation.url!r} where the recording has {recorded.url!r}")
        if line is not None:
            want = line.error.reason if line.error is not None else None
            got = reached.observation.error.reason if reached.observation.error is not None else None
            if want != got:
                why.append(f"action error {got} where the recording has {want}")
            if line.progress is not None and abs(line.progress - reached.progress) > 1e-9:
                why.append(f"judge progress {reached.progress:g} where the recording has {line.progress:g}")
        return "; ".join(why) or None

    def finish(self) -> None:
        self.episode.finish()


@dataclass
class Diverged:
    """Where an execution left the recording: the step whose observation differs (-1: the reset)."""

    step: int
    detail: str

    def reason(self) -> str:
        where = "its reset" if self.step < 0 else f"step {self.step}"
        return f"the execution diverged from the recording at {where} ({self.detail})"


async def reenact(run: Reenactment, steps: int) -> tuple[list[Reached], Diverged | None]:
    """Reset, then perform the trajectory's first `steps` recorded actions, each observation
    checked against the recording: the states reached (the reset's first; one per step
    after it), and where it diverged (the states then stop before that step)."""
    traj = run.traj
    recorded = traj.observations()
    first = await run.start()
    why = run.check(first, recorded[0] if recorded else None, None)
    if why is not None:
        return [], Diverged(-1, why)
    states = [first]
    for index, line in enumerate(traj.steps[:steps]):
        if run.over:
            break
        reached = await run.step(action_of(line))
        why = run.check(reached, recorded[index + 1] if index + 1 < len(recorded) else None, line)
        if why is not None:
            return states, Diverged(index, why)
        states.append(reached)
    return states, None
