"""Who acts in an episode: the agent interface, what one turn returns, and the built-in agents.

An `EpisodeAgent` gets the task (with its final instruction) and an `EpisodeContext` once,
then one observation per turn, and answers with an `AgentTurn`: the actions to take plus
what a trajectory keeps of the decision (raw output, thought, parse error, tokens, the
actions in the model's own frame). Built in: the task's oracle (or near miss), a uniform
random agent (a floor for scores) and a no-op agent (judge QA: the initial state fails).
Policies (`cua.policy`) are wrapped by `cua.episode.policy_agent.PolicyAgent`.
"""

from __future__ import annotations

import random
import time
from collections.abc import AsyncIterator
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from cua.actions import Action, Click, Done, Key, Scroll, Type
from cua.episode.handle import SandboxHandle
from cua.observation import Observation, Size
from cua.state import StateQuery, StateResult
from cua.task import TaskInstance
from cua.trajectory import AgentInfo, ModelRetry, TokenTrace

__all__ = ["AgentTurn", "DescribedAgent", "EpisodeAgent", "EpisodeContext", "NoopAgent", "OracleAgent", "RandomAgent",
           "agent_info"]


class AgentTurn(BaseModel):
    """What an agent decided in one turn: zero or more actions (none = it has nothing more to do).

    `actions` are in the pixels of the observation the turn answers. `model_actions`, when the
    policy's model speaks another frame (`model_frame`), are the same actions as the model
    wrote them (one per action, as JSON). Token ids and logprobs come when the backend gives them.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    actions: list[Action] = Field(default_factory=list)
    raw: str | None = None
    thought: str | None = None
    parse_error: str | None = None
    tokens: TokenTrace | None = None
    model_actions: list[dict[str, Any]] | None = None
    model_frame: Size | None = None
    policy_ms: float = 0.0
    #: The model calls that failed and were retried before this turn's answer.
    retries: list[ModelRetry] = Field(default_factory=list)


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


@runtime_checkable
class DescribedAgent(Protocol):
    """An agent that says who it is for the trajectory (a policy: its family, model, settings)."""

    @property
    def info(self) -> AgentInfo: ...


def agent_info(agent: EpisodeAgent) -> AgentInfo:
    """How a trajectory names an agent: its own `info` when it has one, else its name as the kind."""
    if isinstance(agent, DescribedAgent):
        return agent.info
    return AgentInfo(name=agent.name, kind=agent.name if agent.name in ("oracle", "near_miss", "noop", "random")
                     else "python")


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
        self.name: str = which
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
