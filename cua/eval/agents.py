"""Agents for `cua eval`: the oracle, random, noop, and any `cua.policy.Policy`.

`agent_factory(spec)` turns the `--policy` argument into a factory of fresh agents.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from cua.eval.episode import AgentTurn, EpisodeAgent, EpisodeContext, NoopAgent, OracleAgent, RandomAgent
from cua.observation import Observation
from cua.task import TaskInstance

__all__ = ["BUILTIN_AGENTS", "PolicyAgent", "agent_factory"]


class PolicyAgent:
    """Asks a policy (a policy server, an OpenAI-compatible endpoint, a local model) each turn."""

    def __init__(self, policy: object, name: str) -> None:
        from cua.policy.base import Policy

        if not isinstance(policy, Policy):
            raise TypeError(f"{policy!r} is not a cua.policy.Policy")
        self.policy = policy
        self.name = name
        self.session_id = ""
        self.instruction = ""

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        self.session_id = f"{instance.task_id}-s{instance.seed}-{uuid.uuid4().hex[:8]}"
        self.instruction = instance.instruction
        await self.policy.reset(self.session_id)

    async def turn(self, observation: Observation) -> AgentTurn:
        started = time.perf_counter()
        step = await self.policy.act(self.session_id, self.instruction, observation)
        tokens = {"prompt": step.tokens.prompt, "completion": step.tokens.completion} if step.tokens else None
        return AgentTurn(actions=step.actions, raw=step.raw, thought=step.thought,
                         parse_error=step.parse_error.message if step.parse_error else None,
                         tokens=tokens, policy_ms=(time.perf_counter() - started) * 1000)


BUILTIN_AGENTS: dict[str, Callable[[], EpisodeAgent]] = {
    "oracle": OracleAgent,
    "random": RandomAgent,
    "noop": NoopAgent,
}


def agent_factory(spec: str, **policy_kw: object) -> tuple[Callable[[TaskInstance], EpisodeAgent], str, object | None]:
    """(factory, display name, policy to close at the end or None) for a --policy value."""
    if spec in BUILTIN_AGENTS:
        make = BUILTIN_AGENTS[spec]
        return (lambda _instance: make()), spec, None
    from cua.policy.base import make_policy

    policy = make_policy(spec, **policy_kw)
    return (lambda _instance: PolicyAgent(policy, spec)), spec, policy
