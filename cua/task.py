"""Task and verdict types: the contract between task suites, judges and runners.

A task *template* has seeded parameters; `instantiate(seed)` makes a `TaskInstance`:
an instruction, a sandbox to create, a judge and an oracle. The runner creates the
sandbox, reads the judge's queries once after reset (the initial state, for the
side-effect diff) and once at the end, and the judge decides from those values
alone: no model, no sandbox access, no policy.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cua.actions import Action, Done
from cua.attack import Attack
from cua.observation import Observation
from cua.state import StateQuery, StateResult

__all__ = [
    "Evidence",
    "Judge",
    "JudgeInput",
    "Oracle",
    "OracleContext",
    "TaskInstance",
    "TaskSetup",
    "TaskTags",
    "TaskTemplate",
    "Verdict",
    "query_key",
]


def query_key(query: StateQuery) -> str:
    """A stable string key for a query, so that state can be stored and compared as JSON."""
    return json.dumps(query.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


class Evidence(BaseModel):
    """One check's account: what was read, what was expected, and whether it held."""

    check: str
    getter: str
    observed: Any = None
    expected: Any = None
    passed: bool
    detail: str = ""


class Verdict(BaseModel):
    score: float = Field(ge=0.0, le=1.0)
    passed: bool
    #: Fraction of subgoal checks met: a dense reward for RL, even when `passed` is False.
    progress: float = Field(ge=0.0, le=1.0)
    #: A workflow's partial credit (its judge's `checkpoints`): the share of its ordered
    #: checkpoints met in order, below 1 unless it passed. None: the task has no checkpoints.
    credit: float | None = Field(None, ge=0.0, le=1.0)
    evidence: list[Evidence] = Field(default_factory=list)
    #: Changes outside the task's expected changes (side effects): any one fails the task.
    violations: list[str] = Field(default_factory=list)
    judge_ms: float = 0.0


class JudgeInput(BaseModel):
    """Everything a judge may look at."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    initial: dict[str, StateResult] = Field(default_factory=dict)
    final: dict[str, StateResult] = Field(default_factory=dict)
    done: Done | None = None
    steps: int = 0


@runtime_checkable
class Judge(Protocol):
    def queries(self) -> list[StateQuery]:
        """The state to read after reset and at the end."""
        ...

    def evaluate(self, data: JudgeInput) -> Verdict: ...


class OracleContext(Protocol):
    """What an oracle may use: the last observation and read-only state queries, to
    find where to act. It acts only by yielding unified actions, as an agent would."""

    @property
    def observation(self) -> Observation: ...

    async def query(self, query: StateQuery) -> StateResult: ...


Oracle = Callable[[OracleContext], AsyncIterator[Action]]


#: The values of `TaskTags.fidelity`.
FIDELITIES = ("real", "mock")


class TaskTags(BaseModel):
    model_config = ConfigDict(extra="allow")
    app: str | None = None
    skills: list[str] = Field(default_factory=list)
    tier: Literal[1, 2, 3, 4] = 1
    split: Literal["train", "test"] = "test"
    feasible: bool = True
    #: False: the template has no scripted solution (`TaskInstance.oracle` is None), so
    #: judge QA can run only the checks that need none (doing nothing fails, determinism).
    oracle: bool = True
    #: What the app is: "real", a real open-source product (`cua.tasks.products`: MediaWiki,
    #: Trac, ...), or "mock", a bundled app built for the kit. Implicitly "mock", so a
    #: template claims a real product by saying so (the loader checks the claim).
    fidelity: Literal["real", "mock"] = "mock"
    #: The safety class of a template of the safety suite (issue 36): "refuse" (declining is
    #: right: done with status infeasible and nothing changed), "benign" (its harmless twin: a
    #: run's refusal rate on these is reported), "mandate" (judged on an irreversible step taken
    #: without the user's mandate), "injection" (a benign task with an injection planted in the
    #: app's content: the task is done and the injection ignored). None: not a safety template.
    safety: Literal["refuse", "benign", "mandate", "injection"] | None = None
    #: Every bundled app a workflow spans (`app: workflow`, suite workflows), in the order it uses them.
    apps: list[str] = Field(default_factory=list, max_length=16)
    #: The screen a phone task (`kind: mobile`) runs on: a phone or a tablet profile.
    device: Literal["phone", "tablet"] | None = None

    @field_validator("fidelity", mode="before")
    @classmethod
    def _fidelity(cls, value: Any) -> Any:
        if value not in FIDELITIES:
            raise ValueError(f"fidelity is one of {', '.join(map(repr, FIDELITIES))} (real: a real open-source "
                             f"product; mock: a bundled app, the default), not {value!r}")
        return value


class TaskSetup(BaseModel):
    """How a runner prepares the sandbox before the agent's first observation, and what
    it reads beside the judge while the episode runs (`cua.episode.Episode` does both).

    - `instruction_query`: for tasks whose instruction is only known once the page is up
      (MiniWoB++ draws its utterance in the page): read after reset and the setup steps,
      its string value (stripped; it must be non-empty) becomes the instance's
      instruction, so the agent, the trajectory and the index all see the real one.
    - `end_query`: for apps that end the episode themselves (MiniWoB++'s episode-done
      flag): read after every step; a truthy value ends the episode (RL: `terminated`),
      and the judge then reads the final state as usual.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    #: The seed to reset the sandbox (its apps) with; None: the instance's seed.
    seed: int | None = None
    #: Files to create in a desktop/VM sandbox after reset: absolute path -> text.
    files: dict[str, str] = Field(default_factory=dict)
    #: An Oracle run after reset and before the agent starts (its actions are not the agent's).
    actions: Any = None
    #: A query read after reset and setup whose string value becomes the instruction.
    instruction_query: StateQuery | None = None
    #: A query read after every step whose truthy value means the app ended the episode.
    end_query: StateQuery | None = None


class TaskInstance(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    task_id: str
    seed: int
    instruction: str
    sandbox_kind: str
    sandbox_config: dict[str, Any]
    max_steps: int = Field(30, ge=1, le=1000)
    params: dict[str, Any] = Field(default_factory=dict)
    tags: TaskTags = Field(default_factory=TaskTags)
    judge: Any  # a Judge
    oracle: Any  # an Oracle
    #: A plausible wrong solution that the judge must fail (judge QA), when the task has one.
    near_miss: Any = None
    setup: TaskSetup = Field(default_factory=TaskSetup)
    #: Prompt injections planted in the app's content at reset (`cua eval --attacks N`);
    #: the episode judges its safety against them (`cua.judges.safety`).
    attacks: list[Attack] = Field(default_factory=list)

    @property
    def reset_seed(self) -> int:
        """The seed a runner resets the sandbox with."""
        return self.seed if self.setup.seed is None else self.setup.seed


@runtime_checkable
class TaskTemplate(Protocol):
    id: str
    tags: TaskTags

    def instantiate(self, seed: int) -> TaskInstance: ...


def actions_oracle(actions: Sequence[Action]) -> Oracle:
    """An oracle that replays a fixed list of actions."""

    async def run(_: OracleContext) -> AsyncIterator[Action]:
        for action in actions:
            yield action

    return run


async def collect(oracle: Oracle, ctx: OracleContext, act: Callable[[Action], Awaitable[Observation]]) -> int:
    """Drive an oracle to the end through `act`; returns the number of actions taken."""
    n = 0
    async for action in oracle(ctx):
        await act(action)
        n += 1
    return n
