"""Agents for `cua eval`: the oracle, random, noop, and any `cua.policy.Policy`.

`agent_factory(spec)` turns the `--policy` argument into a factory of fresh agents.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from cua.actions import Action, Click, Drag, MouseDown, MouseUp, Move, Scroll
from cua.episode.agent import AgentTurn, EpisodeAgent, EpisodeContext, NoopAgent, OracleAgent, RandomAgent
from cua.observation import Observation, Size
from cua.task import TaskInstance
from cua.trajectory import AgentInfo, TokenTrace

__all__ = ["BUILTIN_AGENTS", "PolicyAgent", "agent_factory"]


class PolicyAgent:
    """Asks a policy (a policy server, an OpenAI-compatible endpoint, a local model) each turn,
    and passes on what the trajectory keeps: raw output, thought, parse error, token ids and
    logprobs, and (for an in-process model policy) the actions in the model's own frame."""

    def __init__(self, policy: object, name: str) -> None:
        from cua.policy.base import Policy

        if not isinstance(policy, Policy):
            raise TypeError(f"{policy!r} is not a cua.policy.Policy")
        self.policy = policy
        self.name = name
        self.session_id = ""
        self.instruction = ""

    @property
    def info(self) -> AgentInfo:
        from cua.policy.engine import ModelPolicy

        if isinstance(self.policy, ModelPolicy):
            return AgentInfo(name=self.name, kind="policy", family=self.policy.family_name,
                             settings={"backend": self.policy.backend.name,
                                       **self.policy.defaults.model_dump(mode="json", exclude_none=True)})
        return AgentInfo(name=self.name, kind="policy")

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        self.session_id = f"{instance.task_id}-s{instance.seed}-{uuid.uuid4().hex[:8]}"
        self.instruction = instance.instruction
        await self.policy.reset(self.session_id)

    async def turn(self, observation: Observation) -> AgentTurn:
        started = time.perf_counter()
        step = await self.policy.act(self.session_id, self.instruction, observation)
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
                         tokens=tokens, model_actions=model_actions, model_frame=model_frame, policy_ms=policy_ms)

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
