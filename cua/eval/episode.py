"""One episode: reset, let an agent act until it is done or out of steps, then judge.

The judge's queries are read twice, right after reset (the initial state, for the
side-effect diff) and at the end. Whatever happens, the episode yields a record:
infrastructure faults become `status="infra_error"` with the typed error, a failing
agent becomes `status="agent_error"`, so a run never loses an episode.
"""

from __future__ import annotations

import random
import time
import traceback
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from cua.actions import Action, Click, Done, Key, Scroll, Type
from cua.errors import CuaError, InternalError
from cua.eval.handle import SandboxHandle
from cua.observation import ActionError, Observation, ObserveOptions
from cua.state import StateQuery, StateResult
from cua.task import JudgeInput, TaskInstance, Verdict, query_key

__all__ = [
    "AgentTurn",
    "EpisodeAgent",
    "EpisodeContext",
    "EpisodeRecord",
    "NoopAgent",
    "OracleAgent",
    "RandomAgent",
    "StepRecord",
    "gather_state",
    "run_episode",
]


class AgentTurn(BaseModel):
    """What an agent decided in one turn: zero or more actions (none = it has nothing more to do)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    actions: list[Action] = Field(default_factory=list)
    raw: str | None = None
    thought: str | None = None
    parse_error: str | None = None
    tokens: dict[str, int] | None = None
    policy_ms: float = 0.0


class EpisodeContext:
    """The `cua.task.OracleContext` an agent gets: the latest observation and read-only queries."""

    def __init__(self, handle: SandboxHandle, observation: Observation) -> None:
        self.handle = handle
        self._observation = observation

    @property
    def observation(self) -> Observation:
        return self._observation

    def update(self, observation: Observation) -> None:
        self._observation = observation

    async def query(self, query: StateQuery) -> StateResult:
        (result,) = await self.handle.query([query])
        return result


class EpisodeAgent(Protocol):
    name: str

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None: ...

    async def turn(self, observation: Observation) -> AgentTurn: ...


class NoopAgent:
    """Does nothing: judge QA uses it to prove that the initial state fails."""

    name = "noop"

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        return None

    async def turn(self, observation: Observation) -> AgentTurn:
        return AgentTurn()


class OracleAgent:
    """Plays the task's oracle (or its near miss), one action per turn, through the sandbox's actions."""

    def __init__(self, which: Literal["oracle", "near_miss"] = "oracle") -> None:
        self.which = which
        self.name = which
        self._actions: AsyncIterator[Action] | None = None

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        script = instance.oracle if self.which == "oracle" else instance.near_miss
        if script is None:
            raise ValueError(f"task {instance.task_id} has no {self.which}")
        self._actions = script(ctx)

    async def turn(self, observation: Observation) -> AgentTurn:
        assert self._actions is not None, "begin() first"
        started = time.perf_counter()
        try:
            action = await anext(self._actions)
        except StopAsyncIteration:
            return AgentTurn()
        return AgentTurn(actions=[action], policy_ms=(time.perf_counter() - started) * 1000)


class RandomAgent:
    """Uniform random clicks, scrolls, keys and words inside the observed frame: a floor for scores."""

    name = "random"
    WORDS = ("hello", "test", "2026-03-05", "42", "Alice", "search", "ok")

    def __init__(self, seed: int = 0, done_probability: float = 0.05) -> None:
        self.rng = random.Random(seed)
        self.done_probability = done_probability

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        self.rng.seed(f"{instance.task_id}:{instance.seed}")

    async def turn(self, observation: Observation) -> AgentTurn:
        rng, frame = self.rng, observation.frame
        if rng.random() < self.done_probability:
            return AgentTurn(actions=[Done(status="success")])
        x, y = rng.uniform(0, frame.width - 1), rng.uniform(0, frame.height - 1)
        kind = rng.choices(("click", "scroll", "type", "key"), weights=(6, 1, 2, 1))[0]
        action: Action
        if kind == "click":
            action = Click(x=x, y=y)
        elif kind == "scroll":
            action = Scroll(x=x, y=y, dy=rng.choice((-300, 300)))
        elif kind == "type":
            action = Type(text=rng.choice(self.WORDS))
        else:
            action = Key(keys=[rng.choice(("Enter", "Tab", "Escape"))])
        return AgentTurn(actions=[action])


class StepRecord(BaseModel):
    index: int
    action: dict[str, Any]
    error: ActionError | None = None
    url: str | None = None
    act_ms: float = 0.0
    policy_ms: float = 0.0
    settle_ms: float | None = None
    raw: str | None = None
    parse_error: str | None = None


class EpisodeRecord(BaseModel):
    """One JSONL line of a run."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    task_id: str
    seed: int
    instruction: str
    agent: str
    tags: dict[str, Any] = Field(default_factory=dict)
    status: Literal["completed", "infra_error", "agent_error"] = "completed"
    steps: int = 0
    truncated: bool = False
    actions: list[StepRecord] = Field(default_factory=list)
    done: dict[str, Any] | None = None
    verdict: Verdict | None = None
    error: dict[str, Any] | None = None
    parse_errors: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    sandbox_id: str | None = None
    started_at: float = Field(default_factory=time.time)
    #: The state the judge saw (kept in memory for judge QA; not written to JSONL).
    judge_input: JudgeInput | None = Field(default=None, exclude=True)


async def gather_state(handle: SandboxHandle, queries: Sequence[StateQuery]) -> dict[str, StateResult]:
    if not queries:
        return {}
    results = await handle.query(list(queries))
    return {query_key(q): r for q, r in zip(queries, results, strict=True)}


async def run_episode(handle: SandboxHandle, instance: TaskInstance, agent: EpisodeAgent, *,
                      observe: ObserveOptions | None = None, reset: bool = True) -> EpisodeRecord:
    """Run one episode on an already created sandbox; never raises for sandbox or agent faults."""
    record = EpisodeRecord(task_id=instance.task_id, seed=instance.seed, instruction=instance.instruction,
                           agent=agent.name, tags=instance.tags.model_dump(), sandbox_id=handle.id)
    timings = record.timings_ms
    t_start = time.perf_counter()
    done: Done | None = None
    try:
        t = time.perf_counter()
        obs = await handle.reset(seed=instance.reset_seed, options=_reset_options(instance), observe=observe) \
            if reset else await handle.observe(observe)
        if reset and instance.setup.actions is not None:
            obs = await _run_setup(handle, instance, obs, observe)
        timings["reset"] = (time.perf_counter() - t) * 1000
        queries = instance.judge.queries()
        t = time.perf_counter()
        initial = await gather_state(handle, queries)
        timings["state_initial"] = (time.perf_counter() - t) * 1000

        ctx = EpisodeContext(handle, obs)
        try:
            await agent.begin(instance, ctx)
        except CuaError:
            raise
        except Exception as exc:  # an agent's own bug: recorded, not raised
            return _agent_failed(record, exc, t_start)
        timings["policy"] = timings["act"] = 0.0
        while done is None and record.steps < instance.max_steps:
            try:
                turn = await agent.turn(ctx.observation)
            except CuaError:
                raise
            except Exception as exc:
                return _agent_failed(record, exc, t_start)
            timings["policy"] += turn.policy_ms
            if turn.parse_error:
                record.parse_errors += 1
            if not turn.actions:
                if turn.parse_error:  # a turn wasted on unparseable output still counts as a step
                    record.steps += 1
                    record.actions.append(StepRecord(index=record.steps, action={}, raw=turn.raw,
                                                     parse_error=turn.parse_error, policy_ms=turn.policy_ms))
                    continue
                break
            for action in turn.actions:
                if record.steps >= instance.max_steps:
                    break
                record.steps += 1
                step = StepRecord(index=record.steps, action=action.model_dump(mode="json"), raw=turn.raw,
                                  parse_error=turn.parse_error, policy_ms=turn.policy_ms)
                record.actions.append(step)
                if isinstance(action, Done):
                    done = action
                    break
                t = time.perf_counter()
                obs = await handle.act(action, observe=observe)
                step.act_ms = (time.perf_counter() - t) * 1000
                timings["act"] += step.act_ms
                step.error, step.url = obs.error, obs.url
                step.settle_ms = obs.settle.waited_ms if obs.settle else None
                ctx.update(obs)
        record.truncated = done is None and record.steps >= instance.max_steps
        record.done = done.model_dump(mode="json") if done else None

        t = time.perf_counter()
        final = await gather_state(handle, queries)
        timings["state_final"] = (time.perf_counter() - t) * 1000
        judge_input = JudgeInput(initial=initial, final=final, done=done, steps=record.steps)
        t = time.perf_counter()
        record.verdict = instance.judge.evaluate(judge_input)
        timings["judge"] = (time.perf_counter() - t) * 1000
        record.judge_input = judge_input
    except CuaError as exc:
        record.status = "infra_error" if exc.fault != "agent" else "agent_error"
        record.error = {**exc.to_dict(), "fault": exc.fault}
    timings["total"] = (time.perf_counter() - t_start) * 1000
    return record


async def _run_setup(handle: SandboxHandle, instance: TaskInstance, obs: Observation,
                     observe: ObserveOptions | None) -> Observation:
    """Play the template's setup steps (not the agent's: they are neither counted nor recorded)."""
    ctx = EpisodeContext(handle, obs)
    async for action in instance.setup.actions(ctx):
        ctx.update(await handle.act(action, observe=observe))
        if ctx.observation.error is not None:
            raise InternalError(f"setup step {action.type} of {instance.task_id} failed: {ctx.observation.error.message}")
    return ctx.observation


def _reset_options(instance: TaskInstance) -> dict[str, Any] | None:
    start_url = instance.sandbox_config.get("start_url")
    return {"start_url": start_url} if start_url else None


def _agent_failed(record: EpisodeRecord, exc: Exception, t_start: float) -> EpisodeRecord:
    record.status = "agent_error"
    record.error = {"code": "agent_error", "message": f"{type(exc).__name__}: {exc}", "fault": "agent",
                    "traceback": traceback.format_exc(limit=8)}
    record.timings_ms["total"] = (time.perf_counter() - t_start) * 1000
    return record
