"""One episode: reset, steps, judge. The one loop that eval, RL and the recorder all drive.

`Episode` owns what every producer must do the same way, so they cannot disagree:

- reset with the instance's `reset_seed` and reset options (its start page), play the
  template's setup steps (not the agent's: neither counted nor recorded), fill in the
  instruction from state when the task reads it from the page (`TaskSetup.instruction_query`),
  and read the judge's initial state (for the side-effect diff);
- perform steps, each kept as a trajectory line with the observation the agent acted on;
- read dense progress (the judge's subgoals) and whether the app itself ended the
  episode (`TaskSetup.end_query`), in one query round trip;
- read the final state and judge it; write how it ended.

`cua.episode.loop.run_episode` drives an `EpisodeAgent` through an `Episode` (the one agent
loop) and never raises for sandbox or agent faults: infrastructure faults become
`status="infra_error"` with the typed error, a failing agent becomes `status="agent_error"`,
so a run never loses an episode. When given a `TrajectoryWriter`, the episode is written as
it happens (`cua.trajectory`), crash-safe.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cua.actions import Action, Done, Type
from cua.attack import SafetyReport
from cua.episode import safety as attack_safety
from cua.episode.agent import AgentTurn, EpisodeContext
from cua.episode.handle import ActQueryHandle, ResetQueryHandle, SandboxHandle
from cua.errors import ErrorRecord, FailureClass, InternalError
from cua.judges.safety import StepView
from cua.observation import ActionError, Observation, ObserveOptions
from cua.policy.base import TokenCounts
from cua.state import StateQuery, StateResult
from cua.task import JudgeInput, TaskInstance, Verdict, query_key
from cua.trajectory import (
    AgentInfo,
    ObservationRef,
    Producer,
    StepLine,
    TokenTrace,
    TrajectoryEnd,
    TrajectoryMeta,
    TrajectoryWriter,
)
from cua.variant import parse_variant

__all__ = ["Episode", "EpisodeRecord", "LastAttempt", "Status", "StepRecord", "StepResult",
           "failure_class", "gather_state", "trajectory_name"]

Status = Literal["completed", "infra_error", "agent_error"]


class StepRecord(BaseModel):
    """One step as the episodes.jsonl index keeps it (the trajectory keeps the rest)."""

    #: 0-based, the trajectory line's `index` (see `cua.trajectory` on numbering).
    index: int
    action: dict[str, Any]
    error: ActionError | None = None
    url: str | None = None
    act_ms: float = 0.0
    policy_ms: float = 0.0
    settle_ms: float | None = None
    raw: str | None = None
    parse_error: str | None = None
    #: The model's tokens for the turn this step began (None: not its first step, or not reported).
    tokens: TokenCounts | None = None


class EpisodeRecord(BaseModel):
    """One line of a run's episodes.jsonl: how the episode went, in brief."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    task_id: str
    seed: int
    #: Which try of this variant (task at seed) it is, from 0 (`cua eval --repeats`).
    repeat: int = 0
    #: The appearance variant the app showed (`cua.variant.Variant.key()`; None: its default look).
    variant: str | None = None
    instruction: str
    agent: str
    tags: dict[str, Any] = Field(default_factory=dict)
    status: Status = "completed"
    steps: int = 0
    truncated: bool = False
    #: The app itself ended the episode (`TaskSetup.end_query`), with or without a Done.
    ended: bool = False
    actions: list[StepRecord] = Field(default_factory=list)
    done: dict[str, Any] | None = None
    verdict: Verdict | None = None
    error: ErrorRecord | None = None
    parse_errors: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    #: The model's tokens over the episode (None: the policy reported none).
    tokens: TokenCounts | None = None
    sandbox_id: str | None = None
    #: The episode's trajectory folder, relative to the run folder (None when none was written).
    trajectory: str | None = None
    #: Infrastructure attempts this episode took (1 = no retry).
    attempts: int = 1
    #: Why it did not pass (None when it passed): the failure taxonomy, see `failure_class`.
    failure: FailureClass | None = None
    started_at: float = Field(default_factory=time.time)
    #: The ids of the attacks planted in it (`cua eval --attacks N`): it counts under attack
    #: whatever its end, an agent error or a step limit included.
    attacks: list[str] = Field(default_factory=list)
    #: The episode's safety, apart from its success (None: not judged, being neither attacked
    #: nor a safety template; `cua.episode.safety.judged`).
    safety: SafetyReport | None = None
    #: The state the judge saw (kept in memory for judge QA; not written to JSONL).
    judge_input: JudgeInput | None = Field(default=None, exclude=True)


class StepResult(BaseModel):
    """What one `Episode.step` gives back."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    observation: Observation
    #: 0-based index of the step (the trajectory line's index).
    index: int
    error: ActionError | None = None
    #: The step was the agent's Done.
    done: bool = False
    #: The app ended the episode (`TaskSetup.end_query` read true after this step).
    ended: bool = False
    #: The step limit is reached (and the episode did not end otherwise).
    truncated: bool = False
    #: Dense progress after the step, when it was asked for.
    progress: float | None = None
    #: Whether the judge would pass the state after the step, when progress was asked for.
    passed: bool | None = None


def _token_counts(trace: TokenTrace | None) -> TokenCounts | None:
    if trace is None or trace.prompt_tokens is None:
        return None
    return TokenCounts(prompt=trace.prompt_tokens, completion=trace.completion_tokens or 0, image=trace.image_tokens)


def trajectory_name(instance: TaskInstance) -> str:
    """An episode's trajectory folder name: `<task_id>__s<seed>` (unsafe characters replaced)."""
    return "".join(c if c.isalnum() or c in "._@-" else "_" for c in instance.task_id) + f"__s{instance.seed}"


def failure_class(record: EpisodeRecord, verdict: Verdict | None, *, feasible: bool = True) -> FailureClass | None:
    """The one failure class of an episode that did not pass (None when it passed); see
    `cua.errors.FailureClass` for what each says."""
    if record.status == "infra_error":
        return record.error.failure if record.error is not None else FailureClass.INTERNAL
    if record.status == "agent_error":
        return record.error.failure if record.error is not None else FailureClass.AGENT_ERROR
    if verdict is None:
        return FailureClass.ABANDONED
    if verdict.passed:
        return None
    if record.truncated:
        return FailureClass.STEP_LIMIT
    claimed = (record.done or {}).get("status")
    if feasible and claimed == "infeasible":
        return FailureClass.WRONG_INFEASIBLE_CLAIM
    if not feasible and claimed != "infeasible":
        return FailureClass.MISSED_INFEASIBLE
    if record.parse_errors and record.done is None:
        return FailureClass.PARSE_ERROR
    errors = sum(1 for step in record.actions if step.error is not None)
    if record.steps and errors * 2 >= record.steps:
        return FailureClass.ACTION_ERRORS
    return FailureClass.JUDGED_WRONG


async def gather_state(handle: SandboxHandle, queries: Sequence[StateQuery]) -> dict[str, StateResult]:
    """Read `queries` in one round trip, keyed by `cua.task.query_key`."""
    if not queries:
        return {}
    results = await handle.query(list(queries))
    return {query_key(q): r for q, r in zip(queries, results, strict=True)}


def _truthy(result: StateResult | None) -> bool:
    return result is not None and result.ok and bool(result.value)


class Episode:
    """One reset -> steps -> judge of a task instance on an open sandbox.

    Single use: `reset()` once, then `step()` until `over`, then `judge()` and `finish()`.
    `writer` (optional) receives the trajectory: meta and frame 0 at reset, one line per step,
    end.json at `finish`. `max_steps` overrides the instance's step limit.
    """

    def __init__(self, handle: SandboxHandle, instance: TaskInstance, *, observe: ObserveOptions | None = None,
                 writer: TrajectoryWriter | None = None, producer: Producer = "eval",
                 agent: AgentInfo | None = None, max_steps: int | None = None, run_id: str | None = None,
                 extra: dict[str, Any] | None = None, repeat: int = 0) -> None:
        self.handle = handle
        self.instance = instance
        self.observe = observe
        self.writer = writer
        self.producer: Producer = producer
        self.agent = agent or AgentInfo(name="unknown", kind="python")
        self.max_steps = max_steps or instance.max_steps
        self.run_id = run_id
        self.extra = extra or {}
        shown = instance.sandbox_config.get("variant")
        self.record = EpisodeRecord(task_id=instance.task_id, seed=instance.seed, repeat=repeat,
                                    variant=parse_variant(shown).key() if shown else None,
                                    instruction=instance.instruction,
                                    agent=self.agent.name, tags=instance.tags.model_dump(), sandbox_id=handle.id,
                                    attacks=[a.id for a in instance.attacks])
        self.initial: dict[str, StateResult] = {}
        #: Attacked episodes: the safety rules' reads at the start, and the activity log's last entry after each step.
        self._safety_initial: dict[str, StateResult] = {}
        self._step_seqs: list[int | None] = []
        self.steps = 0
        self.done: Done | None = None
        self.ended = False
        self.verdict: Verdict | None = None
        self._observation: Observation | None = None
        self._ref: ObservationRef | None = None
        self._turns = 0
        self._turn: AgentTurn | None = None
        self._typing_started = 0.0
        self._pending: StepLine | None = None  # a typing step that may still grow (the recorder's)
        #: The judge's reads taken after the last step (step count, state): `judge` reuses
        #: them when the app ended the episode there, whose state then no longer changes.
        self._read: tuple[int, dict[str, StateResult]] | None = None
        self._finished = False
        self._t0 = time.perf_counter()
        self.record.timings_ms.update(policy=0.0, act=0.0)

    # --- state ---

    @property
    def observation(self) -> Observation:
        """The latest observation (the one the next step acts on)."""
        if self._observation is None:
            raise RuntimeError("Episode.reset() first")
        return self._observation

    @property
    def instruction(self) -> str:
        return self.instance.instruction

    @property
    def truncated(self) -> bool:
        return self.done is None and not self.ended and self.steps >= self.max_steps

    @property
    def over(self) -> bool:
        """Done, ended by the app, or out of steps."""
        return self.done is not None or self.ended or self.steps >= self.max_steps

    def reset_options(self, options: dict[str, Any] | None = None) -> dict[str, Any] | None:
        start_url = self.instance.sandbox_config.get("start_url")
        variant = self.instance.sandbox_config.get("variant")  # each reset shows it (a sandbox serves several)
        merged = {**({"start_url": start_url} if start_url else {}), **({"variant": variant} if variant else {}),
                  **(options or {})}
        merged = {**attack_safety.plant_option(self.instance), **merged}  # the attacks' injections, if any
        return merged or None

    # --- reset ---

    async def reset(self, options: dict[str, Any] | None = None) -> Observation:
        """Reset the sandbox to the instance's initial state and return the first observation."""
        if self._observation is not None:
            raise RuntimeError("an Episode resets once; start a new Episode for the next one")
        instance, timings = self.instance, self.record.timings_ms
        setup_query = instance.setup.instruction_query
        queries = list(instance.judge.queries())
        asked = [*queries, setup_query] if setup_query is not None else queries
        asked = [*asked, *attack_safety.safety_queries(instance)]
        t = time.perf_counter()
        state: dict[str, StateResult] | None = None
        if asked and instance.setup.actions is None and isinstance(self.handle, ResetQueryHandle):
            # the initial reads ride on the reset (no setup steps come between)
            obs, results = await self.handle.reset_query(asked, seed=instance.reset_seed,
                                                         options=self.reset_options(options), observe=self.observe)
            state = {query_key(q): r for q, r in zip(asked, results, strict=True)}
        else:
            obs = await self.handle.reset(seed=instance.reset_seed, options=self.reset_options(options),
                                          observe=self.observe)
        if instance.setup.actions is not None:
            obs = await self._run_setup(obs)
        timings["reset"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        if state is None:
            state = await gather_state(self.handle, asked)
        if setup_query is not None:
            result = state.get(query_key(setup_query))
            if result is None or not result.ok or not isinstance(result.value, str) or not result.value.strip():
                raise InternalError(f"{instance.task_id}: the instruction query read no text "
                                    f"({result.error if result else 'no result'}: {result.message if result else ''})",
                                    details={"query": setup_query.model_dump(mode="json")})
            self.instance = instance = instance.model_copy(update={"instruction": result.value.strip()})
            self.record.instruction = instance.instruction
        self.initial = {query_key(q): state[query_key(q)] for q in queries}
        self._safety_initial = {query_key(q): state[query_key(q)] for q in attack_safety.safety_queries(instance)}
        timings["state_initial"] = (time.perf_counter() - t) * 1000
        self._observation = obs
        if self.writer is not None:
            self._ref = self.writer.begin(self._meta(), obs)
        return obs

    async def _run_setup(self, obs: Observation) -> Observation:
        ctx = EpisodeContext(self.handle, obs)
        async for action in self.instance.setup.actions(ctx):
            ctx.update(await self.handle.act(action, observe=self.observe))
            if ctx.observation.error is not None:
                raise InternalError(f"setup step {action.type} of {self.instance.task_id} failed: "
                                    f"{ctx.observation.error.message}")
        return ctx.observation

    def _meta(self) -> TrajectoryMeta:
        instance = self.instance
        version = instance.task_id.rpartition("@")[2]
        return TrajectoryMeta(
            producer=self.producer, run_id=self.run_id, task_id=instance.task_id,
            task_version=int(version) if version.isdigit() else None, seed=instance.seed, repeat=self.record.repeat,
            reset_seed=instance.reset_seed, instruction=instance.instruction, tags=instance.tags.model_dump(),
            sandbox_kind=instance.sandbox_kind, sandbox_config=instance.sandbox_config, agent=self.agent,
            observe=(self.observe or ObserveOptions()).model_dump(mode="json"),
            extra={**self.extra, **({"attacks": [a.model_dump(mode="json") for a in instance.attacks]}
                                    if instance.attacks else {})})

    def fork(self, handle: SandboxHandle, observation: Observation, *, writer: TrajectoryWriter | None = None,
             start_snapshot: dict[str, Any] | None = None) -> Episode:
        """This episode, continued on `handle`: a fork of its sandbox made at the current state
        (group rollouts: k continuations of one live state), whose first observation is
        `observation`.

        The fork keeps the instance and the judge's initial state, so its verdict and its
        side-effect diff are those this episode would get from the same end state. Its steps
        count from 0 within the steps left (its trajectory starts at the fork point, with
        `start_snapshot` and `extra["forked_at_step"]` in the meta).
        """
        if self._observation is None:
            raise RuntimeError("Episode.reset() first")
        if self._finished or self.over:
            raise RuntimeError("the episode is over; fork it before it ends")
        child = Episode(handle, self.instance, observe=self.observe, writer=writer, producer=self.producer,
                        agent=self.agent, max_steps=self.max_steps - self.steps, run_id=self.run_id,
                        extra={**self.extra, "forked_at_step": self.steps})
        child.initial = dict(self.initial)
        child._safety_initial = dict(self._safety_initial)  # an attacked episode's history counts from its start
        child._observation = observation
        if writer is not None:
            child._ref = writer.begin(child._meta().model_copy(update={"start_snapshot": start_snapshot}), observation)
        return child

    # --- steps ---

    def saw(self, observation: Observation) -> None:
        """The agent saw a newer screen than the last step's observation (a person watching the
        live stream): the next step is kept as acting on this one."""
        self.observation  # noqa: B018 -- reset() first
        self._flush()
        self._observation, self._ref = observation, None

    def _current_ref(self) -> ObservationRef | None:
        """The stored form of the latest observation, writing its frame the first time it is needed."""
        if self.writer is None:
            return None
        if self._ref is None:
            self._ref = self.writer.observation(self.observation)
        return self._ref

    def _flush(self) -> None:
        if self._pending is not None and self.writer is not None:
            self.writer.step(self._pending)
        self._pending = None

    async def step(self, action: Action | None, *, turn: AgentTurn | None = None, progress: bool = False,
                   merge_typing: bool = False) -> StepResult:
        """Perform one action (None: a turn that produced no action, e.g. unparseable output,
        which still counts as a step) and keep it.

        `progress`: also read the judge's dense progress after the step. `merge_typing`: a
        `Type` right after a `Type` step extends that step (one "hello", not five keystrokes),
        as the recorder wants; the merged step's line is written when the next step starts.
        """
        if self._finished:
            raise RuntimeError("the episode is finished")
        if self.over:
            raise RuntimeError("the episode is over (done, ended, or out of steps)")
        obs_before = self.observation
        pending = self._pending
        if merge_typing and isinstance(action, Type) and pending is not None and pending.action is not None \
                and pending.action.get("type") == "type" and pending.error is None:
            return await self._extend_typing(pending, action, progress)
        self._flush()
        index = self.steps
        self.steps += 1
        ref = self._current_ref()
        first_of_turn = turn is not None and turn is not self._turn
        timings: dict[str, float] = {}
        if turn is not None and first_of_turn:
            self._turn = turn
            self._turns += 1
            if turn.parse_error:
                self.record.parse_errors += 1
            if turn.policy_ms:  # a turn's policy time goes with its first step
                timings["policy"] = turn.policy_ms
                self.record.timings_ms["policy"] += turn.policy_ms
        if isinstance(action, Type):
            self._typing_started = time.time()
        obs, error = obs_before, None
        state: dict[str, StateResult] | None = None
        if isinstance(action, Done):
            self.done = action
        elif action is not None:
            t = time.perf_counter()
            asked = self._step_queries(progress)
            try:
                if asked and isinstance(self.handle, ActQueryHandle):  # the reads ride on the act
                    obs, results = await self.handle.act_query(action, asked, observe=self.observe)
                    state = {query_key(q): r for q, r in zip(asked, results, strict=True)}
                else:
                    obs = await self.handle.act(action, observe=self.observe)
            except BaseException:
                # The sandbox failed under the action (died, timed out, cancelled): the step left
                # no line, so it is not counted, and end.json agrees with steps.jsonl.
                self.steps = index
                raise
            timings["act"] = (time.perf_counter() - t) * 1000
            self.record.timings_ms["act"] += timings["act"]
            if obs.settle is not None:
                timings["settle"] = obs.settle.waited_ms
            error = obs.error
        judged = await self._after_step(progress, timings, state)
        value = judged.progress if judged is not None else None
        self._observation, self._ref = obs, None
        self.record.steps = self.steps
        self.record.actions.append(StepRecord(
            index=index, action=action.model_dump(mode="json") if action is not None else {}, error=error,
            url=obs.url, act_ms=timings.get("act", 0.0), policy_ms=timings.get("policy", 0.0),
            settle_ms=timings.get("settle"), raw=turn.raw if turn else None,
            parse_error=turn.parse_error if turn else None,
            tokens=_token_counts(turn.tokens) if turn is not None and first_of_turn else None))
        if self.writer is not None and ref is not None:
            line = self._line(index, ref, action, turn if first_of_turn else None, error, value, timings,
                              resolved=obs.resolved_action if obs is not obs_before else None)
            if merge_typing and isinstance(action, Type):
                self._pending = line
            else:
                self.writer.step(line)
        return StepResult(observation=obs, index=index, error=error, done=self.done is not None, ended=self.ended,
                          truncated=self.truncated, progress=value, passed=judged.passed if judged else None)

    def _line(self, index: int, ref: ObservationRef, action: Action | None, turn: AgentTurn | None,
              error: ActionError | None, value: float | None, timings: dict[str, float], *,
              resolved: dict[str, Any] | None = None) -> StepLine:
        """`turn` is given for the first step of a turn only: its output is kept once."""
        model_action = model_frame = None
        position = self._turn_position(action)
        if self._turn is not None and self._turn.model_actions and position is not None \
                and position < len(self._turn.model_actions):
            model_action, model_frame = self._turn.model_actions[position], self._turn.model_frame
        return StepLine(
            attempt=self.writer.attempt if self.writer else 0, index=index, turn=max(0, self._turns - 1),
            observation=ref, action=action.model_dump(mode="json") if action is not None else None,
            model_action=model_action, model_frame=model_frame,
            raw=turn.raw if turn else None, thought=turn.thought if turn else None,
            parse_error=turn.parse_error if turn else None, tokens=turn.tokens if turn else None,
            retries=turn.retries or None if turn else None,
            error=error, progress=value, resolved_action=resolved,
            timings_ms={k: round(v, 3) for k, v in timings.items()})

    def _turn_position(self, action: Action | None) -> int | None:
        if self._turn is None or action is None:
            return None
        return next((i for i, a in enumerate(self._turn.actions) if a is action), None)

    async def _extend_typing(self, pending: StepLine, action: Type, progress: bool) -> StepResult:
        t = time.perf_counter()
        obs = await self.handle.act(action, observe=self.observe)
        act_ms = (time.perf_counter() - t) * 1000
        self.record.timings_ms["act"] += act_ms
        assert pending.action is not None
        text = pending.action["text"] + action.text
        timings = dict(pending.timings_ms)
        timings["act"] = round(timings.get("act", 0.0) + act_ms, 3)
        # how long the person took to type it, first key to last
        timings["typing"] = round((time.time() - self._typing_started) * 1000, 3)
        judged = await self._after_step(progress, timings)
        value = judged.progress if judged is not None else None
        self._pending = pending.model_copy(update={"action": {**pending.action, "text": text}, "error": obs.error,
                                                   "timings_ms": timings, "t": time.time(), "progress": value})
        record = self.record.actions[-1]
        record.action = {**record.action, "text": text}
        record.error, record.url, record.act_ms = obs.error, obs.url, record.act_ms + act_ms
        self._observation, self._ref = obs, None
        return StepResult(observation=obs, index=self.steps - 1, error=obs.error, ended=self.ended,
                          truncated=self.truncated, progress=value, passed=judged.passed if judged else None)

    def _step_queries(self, progress: bool) -> list[StateQuery]:
        """What must be read after a step: the app's end flag, and the judge's queries for
        progress or along with the end flag (an episode the app ends is then judged without
        another round trip)."""
        end_query, seq_query = self.instance.setup.end_query, attack_safety.step_query(self.instance)
        queries = list(self.instance.judge.queries()) if progress or end_query is not None else []
        queries = [*queries, end_query] if end_query is not None else queries
        return [*queries, seq_query] if seq_query is not None else queries

    async def _after_step(self, progress: bool, timings: dict[str, float],
                          state: dict[str, StateResult] | None = None) -> Verdict | None:
        """Read what must be known after a step: the app's end flag and, if asked, the judge's
        view of the state (dense progress). `state`: those reads, already answered with the
        act (`ActQueryHandle`); else one query round trip."""
        end_query = self.instance.setup.end_query
        if not progress and end_query is None and attack_safety.step_query(self.instance) is None:
            return None
        t = time.perf_counter()
        queries = list(self.instance.judge.queries()) if progress else []
        if state is None:
            state = await gather_state(self.handle, self._step_queries(progress))
        if attack_safety.judged(self.instance):
            self._step_seqs.append(attack_safety.step_seq(self.instance, state))
        if end_query is not None:
            self._read = (self.steps, {query_key(q): state[query_key(q)] for q in self.instance.judge.queries()})
            if _truthy(state.get(query_key(end_query))):
                self.ended = True
        verdict = None
        if progress:
            verdict = self._evaluate({query_key(q): state[query_key(q)] for q in queries}, None)
        timings["judge"] = (time.perf_counter() - t) * 1000
        return verdict

    # --- judging ---

    def _evaluate(self, final: dict[str, StateResult], done: Done | None) -> Verdict:
        verdict: Verdict = self.instance.judge.evaluate(JudgeInput(initial=self.initial, final=final, done=done,
                                                                   steps=self.steps))
        return verdict

    def start_progress(self) -> float:
        """Dense progress of the state the episode started from, judged from the reads its
        reset already made (`initial`): no second read of the same state."""
        return self._evaluate(self.initial, None).progress

    async def progress(self) -> float:
        """Dense progress of the current state: the fraction of the judge's subgoals met."""
        final = await gather_state(self.handle, self.instance.judge.queries())
        return self._evaluate(final, None).progress

    async def judge(self, done: Done | None = None) -> Verdict:
        """Read the final state and judge it (with the agent's Done, if any)."""
        self._flush()
        done = done or self.done
        timings = self.record.timings_ms
        t = time.perf_counter()
        read = self._read
        if self.ended and read is not None and read[0] == self.steps:
            final = read[1]  # read with the end flag after the last step; an ended episode's state stays
        else:
            final = await gather_state(self.handle, self.instance.judge.queries())
        timings["state_final"] = (time.perf_counter() - t) * 1000
        judge_input = JudgeInput(initial=self.initial, final=final, done=done, steps=self.steps)
        t = time.perf_counter()
        self.verdict = self.instance.judge.evaluate(judge_input)
        timings["judge"] = (time.perf_counter() - t) * 1000
        self.record.verdict, self.record.judge_input = self.verdict, judge_input
        if attack_safety.judged(self.instance):
            await self._judge_safety()
        return self.verdict

    async def _judge_safety(self) -> None:
        """The episode's safety against its attacks, over every step and the whole history."""
        final = await gather_state(self.handle, attack_safety.safety_queries(self.instance))
        steps = [StepView(index=s.index, action=s.action, url=s.url) for s in self.record.actions]
        self.record.safety = attack_safety.assess(self.instance, self._safety_initial, final, steps, self._step_seqs)

    # --- the end ---

    def finish(self, *, status: Status = "completed", error: ErrorRecord | None = None,
               last_attempt: LastAttempt = True) -> EpisodeRecord:
        """Close the episode: fill in the record and write how it ended.

        For an infrastructure fault that the caller will retry (`last_attempt=False`) the
        trajectory starts a new attempt instead of ending, so the lost attempt stays on record;
        any other outcome ends the trajectory.
        """
        if self._finished:
            return self.record
        self._finished = True
        record = self.record
        record.status, record.error = status, error
        record.truncated = status == "completed" and self.truncated
        record.ended = self.ended
        record.done = self.done.model_dump(mode="json") if self.done else None
        record.failure = self._failure()
        record.tokens = TokenCounts.total_of([s.tokens for s in record.actions if s.tokens is not None])
        record.timings_ms["total"] = (time.perf_counter() - self._t0) * 1000
        writer = self.writer
        if writer is None:
            return record
        retried = status == "infra_error" and not (
            last_attempt(error, self.steps) if callable(last_attempt) else last_attempt)
        try:
            self._flush()
            if writer.meta is None:  # never reset: nothing of this attempt is on disk
                if retried:
                    writer.new_attempt(status=status, error=error, steps=0)
                return record
            if retried:
                writer.new_attempt(status=status, error=error, steps=self.steps)
                return record
            final = self._current_ref() if self._observation is not None else None
            writer.end(TrajectoryEnd(status=status, failure=self._failure(), steps=self.steps,
                                     truncated=record.truncated, done=record.done, verdict=self.verdict,
                                     error=error, final=final, safety=record.safety,
                                     timings_ms={k: round(v, 3) for k, v in record.timings_ms.items()}))
        except OSError as exc:  # the run goes on; the index line says the trajectory is incomplete
            record.timings_ms["trajectory_error"] = 1.0
            lost = f"{type(exc).__name__}: {exc}"
            record.error = (record.error or ErrorRecord.of(exc)).model_copy(update={"trajectory": lost})
        return record

    def _failure(self) -> FailureClass | None:
        return failure_class(self.record, self.verdict, feasible=self.instance.tags.feasible)


#: Whether an attempt that ends in an infrastructure fault is the episode's last (its
#: trajectory then ends instead of starting another attempt): a bool, or a function of the
#: fault's error and the steps the attempt took, for a runner whose retries depend on the
#: kind of fault (cua.eval.runner).
LastAttempt = bool | Callable[[ErrorRecord | None, int], bool]
