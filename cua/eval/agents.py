"""Agents for `cua eval`: the oracle, random, noop, any `cua.policy.Policy` (through
`cua.episode.policy_agent.PolicyAgent`, which every driver asks a policy through), and Python agents.

`agent_factory(spec)` turns the `--policy` argument into a factory of fresh agents;
`python_agent_factory("module:factory")` does the same for `--agent` (see docs/agents.md).
`policy_model(spec)` is the one reading of the model a spec names (the manifest's
`policy.model` and every trajectory's `meta.agent.model`), and `preflight(policy)` asks a
policy's model server whether it is there before a run starts its sandboxes.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from cua.episode.agent import EpisodeAgent, NoopAgent, OracleAgent, RandomAgent
from cua.episode.policy_agent import PolicyAgent, policy_fault
from cua.errors import CuaError
from cua.task import TaskInstance

__all__ = ["BUILTIN_AGENTS", "agent_factory", "policy_model", "preflight", "python_agent_factory"]


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
        raise policy_fault(name, exc) from exc


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
