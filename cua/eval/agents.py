"""Agents for `cua eval`: the oracle, random, noop, any `cua.policy.Policy`, and Python agents.

`agent_factory(spec)` turns the `--policy` argument into a factory of fresh agents;
`python_agent_factory("module:factory")` does the same for `--agent` (see docs/agents.md).
`policy_model(spec)` is the one reading of the model a spec names (the manifest's
`policy.model` and every trajectory's `meta.agent.model`), and `preflight(policy)` asks a
policy's model server whether it is there before a run starts its sandboxes.
"""

from __future__ import annotations

import importlib
import inspect
import time
import uuid
from collections.abc import Callable
from typing import Any

from cua.actions import Action, Click, Drag, MouseDown, MouseUp, Move, Scroll
from cua.episode.agent import AgentTurn, EpisodeAgent, EpisodeContext, NoopAgent, OracleAgent, RandomAgent
from cua.errors import CuaError, ModelUnreachable
from cua.observation import Observation, Size
from cua.task import TaskInstance
from cua.trajectory import AgentInfo, ModelRetry, TokenTrace

__all__ = ["BUILTIN_AGENTS", "PolicyAgent", "agent_factory", "policy_model", "preflight", "python_agent_factory"]


def policy_model(spec: str) -> str | None:
    """The model a `--policy` spec names: MODEL of `openai:MODEL@URL`, PATH of
    `transformers:PATH`; None for a policy server (it knows its own) and built-in agents."""
    kind, sep, rest = spec.partition(":")
    if not sep or spec.startswith(("http://", "https://")):
        return None
    if kind == "openai":
        return rest.partition("@")[0] or None
    if kind == "transformers":
        return rest or None
    return None


async def preflight(policy: object, name: str) -> None:
    """Ask the policy's model server whether it answers at all, before any sandbox starts:
    an endpoint nothing listens on raises `ModelUnreachable` (a refused key or token
    `Unauthorized`) here, once, instead of costing every episode its retries. Policies in this process
    (a local model, a script) have nothing to ask."""
    from cua.policy.backends.openai import OpenAIBackend
    from cua.policy.engine import ModelPolicy
    from cua.policy.remote import RemotePolicy

    try:
        if isinstance(policy, RemotePolicy):
            await policy.health()
            await policy.server_metrics()  # the one cheap call that needs the token: a wrong one stops here
        elif isinstance(policy, ModelPolicy) and isinstance(policy.backend, OpenAIBackend):
            await policy.backend.probe()
    except CuaError as exc:
        raise _unreachable(name, exc) from exc


class PolicyAgent:
    """Asks a policy (a policy server, an OpenAI-compatible endpoint, a local model) each turn,
    and passes on what the trajectory keeps: raw output, thought, parse error, token ids and
    logprobs, and (for an in-process model policy) the actions in the model's own frame."""

    def __init__(self, policy: object, name: str, options: Any = None, *, model: str | None = None) -> None:
        from cua.policy.base import Policy, PolicyOptions

        if not isinstance(policy, Policy):
            raise TypeError(f"{policy!r} is not a cua.policy.Policy")
        self.policy = policy
        self.name = name
        #: The model the spec names (`policy_model`), kept in every trajectory's meta.
        self.model = model
        #: Sent with every call (sampling settings, screenshot history, family): `cua eval
        #: --temperature/--max-tokens/--top-p/--seed/--history`.
        self.options: PolicyOptions | None = options
        self.session_id = ""
        self.instruction = ""

    @property
    def info(self) -> AgentInfo:
        from cua.policy.engine import ModelPolicy

        asked = self.options.model_dump(mode="json", exclude_none=True, exclude_defaults=True) if self.options else {}
        if isinstance(self.policy, ModelPolicy):
            return AgentInfo(name=self.name, kind="policy", family=self.policy.family_name, model=self.model,
                             settings={"backend": self.policy.backend.name,
                                       **self.policy.defaults.model_dump(mode="json", exclude_none=True), **asked})
        return AgentInfo(name=self.name, kind="policy", family=asked.get("family"), model=self.model, settings=asked)

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        self.session_id = f"{instance.task_id}-s{instance.seed}-{uuid.uuid4().hex[:8]}"
        self.instruction = instance.instruction
        try:
            await self.policy.reset(self.session_id)
        except CuaError as exc:
            raise _unreachable(self.name, exc) from exc

    async def turn(self, observation: Observation) -> AgentTurn:
        started = time.perf_counter()
        try:
            step = await self.policy.act(self.session_id, self.instruction, observation, self.options)
        except CuaError as exc:
            raise _unreachable(self.name, exc) from exc
        policy_ms = (time.perf_counter() - started) * 1000
        tokens = None
        if step.tokens or step.token_ids or step.logprobs or step.prompt_token_ids:
            tokens = TokenTrace(
                prompt_ids=step.prompt_token_ids,
                completion_ids=step.token_ids or ([t.token_id for t in step.logprobs if t.token_id is not None]
                                                  if step.logprobs else None) or None,
                logprobs=[t.logprob for t in step.logprobs] if step.logprobs else None,
                prompt_tokens=step.tokens.prompt if step.tokens else None,
                completion_tokens=step.tokens.completion if step.tokens else None)
        model_actions, model_frame = self._model_frame_actions(step.actions, observation.frame)
        return AgentTurn(actions=step.actions, raw=step.raw, thought=step.thought,
                         parse_error=step.parse_error.message if step.parse_error else None,
                         tokens=tokens, model_actions=model_actions, model_frame=model_frame, policy_ms=policy_ms,
                         retries=[ModelRetry.model_validate(r.model_dump()) for r in step.retries])

    def _model_frame_actions(self, actions: list[Action], frame: Size
                             ) -> tuple[list[dict[str, Any]] | None, Size | None]:
        """The actions in the coordinates the model wrote (its grid), when this process knows its family."""
        from cua.policy.engine import ModelPolicy

        if not actions or not isinstance(self.policy, ModelPolicy):
            return None, None
        model = self.policy.family().model_frame(frame)
        grid = Size(width=max(1, round(model.grid[0])), height=max(1, round(model.grid[1])))
        if (grid.width, grid.height) == (frame.width, frame.height):
            return None, None  # the model speaks the observation's own pixels

        def point(x: float, y: float) -> dict[str, int]:
            mx, my = model.from_frame(x, y)
            return {"x": mx, "y": my}

        out: list[dict[str, Any]] = []
        for action in actions:
            data = action.model_dump(mode="json")
            if isinstance(action, Drag):
                data["path"] = [point(p.x, p.y) for p in action.path]
            elif isinstance(action, (Click, Move, Scroll)) or (
                    isinstance(action, (MouseDown, MouseUp)) and action.x is not None and action.y is not None):
                assert action.x is not None and action.y is not None
                data.update(point(action.x, action.y))
            out.append(data)
        return out, grid


def _unreachable(name: str, exc: CuaError) -> CuaError:
    """An infrastructure fault of the policy is the model's (`model_unreachable`), whatever
    the transport said; the original code stays in the details. Other faults pass as they are."""
    if exc.fault != "infra" or isinstance(exc, ModelUnreachable):
        return exc
    return ModelUnreachable(f"the policy {name} failed: {exc.message}", details={"code": exc.code.value, **exc.details})


BUILTIN_AGENTS: dict[str, Callable[[], EpisodeAgent]] = {
    "oracle": OracleAgent,
    "random": RandomAgent,
    "noop": NoopAgent,
}


def agent_factory(spec: str, *, options: Any = None,
                  **policy_kw: object) -> tuple[Callable[[TaskInstance], EpisodeAgent], str, object | None]:
    """(factory, display name, policy to close at the end or None) for a --policy value.
    `options` (a `cua.policy.PolicyOptions`) go with every policy call."""
    if spec in BUILTIN_AGENTS:
        make = BUILTIN_AGENTS[spec]
        return (lambda _instance: make()), spec, None
    from cua.policy.registry import make_policy

    policy = make_policy(spec, **policy_kw)
    model = policy_model(spec)
    return (lambda _instance: PolicyAgent(policy, spec, options, model=model)), spec, policy


def python_agent_factory(spec: str) -> tuple[Callable[[TaskInstance], EpisodeAgent], str]:
    """(factory, display name) for `--agent module:factory`.

    `factory` is a class or a callable, called once per episode: with the `TaskInstance`
    when it takes an argument, else with none. What it returns must have a `name`, and the
    coroutines `begin(instance, ctx)` and `turn(observation) -> AgentTurn` (the
    `cua.episode.agent.EpisodeAgent` protocol). Raises ValueError for a spec that does not load."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--agent {spec!r}: expected module:factory, e.g. my_agents:make_agent")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"--agent {spec!r}: cannot import {module_name!r}: {exc}") from exc
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise ValueError(f"--agent {spec!r}: {module_name} has no {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"--agent {spec!r}: {attr} is not callable")
    try:
        takes_instance = bool(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        takes_instance = False

    def make(instance: TaskInstance) -> EpisodeAgent:
        agent = target(instance) if takes_instance else target()
        for member in ("name", "begin", "turn"):
            if not hasattr(agent, member):
                raise TypeError(f"--agent {spec}: the agent {agent!r} has no {member!r} (see docs/agents.md)")
        return agent  # type: ignore[no-any-return]

    return make, spec
