"""`PolicyAgent`: a `cua.policy.Policy` as an episode's agent, and the one reading of a
policy's answer as a turn (`policy_turn`).

Every driver that asks a policy for turns (`cua eval` through `run_episode`, the rollout
service's group rollouts, a trainer's loop over `CuaEnv` or the vector env) asks it through
`PolicyAgent`, so a policy's answer becomes the same `AgentTurn` everywhere, and then the
same steps (`cua.episode.loop.plan`): an answer with a parse error is a wasted step, one with
no action and no parse error ends the episode. What the trajectory keeps of a turn (raw
output, thought, parse error, token ids and logprobs, the model's own frame, the retried
calls) is read here once, not once per driver.

A policy's infrastructure fault (a transport error, a server that answers 5xx) is the
model's (`ModelUnreachable`, `policy_fault`), whatever the transport called it, so a run
files it under `model_unreachable` whichever driver met it.
"""

from __future__ import annotations

import time
import uuid

from cua.actions import Action, Drag, Fling, Swipe, points_of
from cua.episode.agent import AgentTurn, EpisodeContext
from cua.errors import CuaError, ModelUnreachable
from cua.observation import Observation, Size
from cua.policy.base import Policy, PolicyOptions, PolicyStep
from cua.policy.engine import ModelPolicy
from cua.task import TaskInstance
from cua.trajectory import AgentInfo, ModelRetry, TokenTrace

__all__ = ["PolicyAgent", "policy_fault", "policy_turn"]


class PolicyAgent:
    """Asks a policy (a policy server, an OpenAI-compatible endpoint, a local model, a script)
    each turn, and passes on what the trajectory keeps (`policy_turn`).

    `begin` starts a fresh policy session for the task instance. A driver that continues an
    episode already begun (the rollout service's forks of a group's start state) names the
    session and the instruction here instead, and never calls `begin`.
    """

    def __init__(self, policy: Policy, name: str, options: PolicyOptions | None = None, *,
                 model: str | None = None, session_id: str = "", instruction: str = "") -> None:
        if not isinstance(policy, Policy):
            raise TypeError(f"{policy!r} is not a cua.policy.Policy")
        self.policy = policy
        self.name = name
        #: The model the spec names (`cua.eval.agents.policy_model`), kept in every trajectory's meta.
        self.model = model
        #: Sent with every call (sampling settings, screenshot history, family): `cua eval
        #: --temperature/--max-tokens/--top-p/--seed/--history`.
        self.options = options
        self.session_id = session_id
        self.instruction = instruction

    @property
    def info(self) -> AgentInfo:
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
            raise policy_fault(self.name, exc) from exc

    async def turn(self, observation: Observation) -> AgentTurn:
        started = time.perf_counter()
        try:
            step = await self.policy.act(self.session_id, self.instruction, observation, self.options)
        except CuaError as exc:
            raise policy_fault(self.name, exc) from exc
        policy_ms = (time.perf_counter() - started) * 1000
        model_actions, model_frame = self._model_frame_actions(step.actions, observation.frame)
        return policy_turn(step, policy_ms=policy_ms, model_actions=model_actions, model_frame=model_frame)

    def _model_frame_actions(self, actions: list[Action], frame: Size
                             ) -> tuple[list[dict[str, object]] | None, Size | None]:
        """The actions in the coordinates the model wrote (its grid), when this process knows its family."""
        if not actions or not isinstance(self.policy, ModelPolicy):
            return None, None
        model = self.policy.family().model_frame(frame)
        grid = Size(width=max(1, round(model.grid[0])), height=max(1, round(model.grid[1])))
        if (grid.width, grid.height) == (frame.width, frame.height):
            return None, None  # the model speaks the observation's own pixels

        def point(x: float, y: float) -> dict[str, int]:
            mx, my = model.from_frame(x, y)
            return {"x": mx, "y": my}

        out: list[dict[str, object]] = []
        for action in actions:
            data = action.model_dump(mode="json")
            if isinstance(action, Drag):
                data["path"] = [point(p.x, p.y) for p in action.path]
            elif points := points_of(action):
                data.update(point(*points[0]))
            if isinstance(action, (Swipe, Fling)):  # a distance along one axis, in that axis's units
                across, down = model.from_frame(action.distance, action.distance)
                data["distance"] = down if action.direction in ("up", "down") else across
            out.append(data)
        return out, grid


def policy_turn(step: PolicyStep, *, policy_ms: float = 0.0, model_actions: list[dict[str, object]] | None = None,
                model_frame: Size | None = None) -> AgentTurn:
    """A policy's answer as the turn the loop plans and the trajectory keeps."""
    tokens = None
    if step.tokens or step.token_ids or step.logprobs or step.prompt_token_ids:
        tokens = TokenTrace(
            prompt_ids=step.prompt_token_ids,
            completion_ids=step.token_ids or ([t.token_id for t in step.logprobs if t.token_id is not None]
                                              if step.logprobs else None) or None,
            logprobs=[t.logprob for t in step.logprobs] if step.logprobs else None,
            prompt_tokens=step.tokens.prompt if step.tokens else None,
            completion_tokens=step.tokens.completion if step.tokens else None,
            image_tokens=step.tokens.image if step.tokens else None)
    return AgentTurn(actions=step.actions, raw=step.raw, thought=step.thought,
                     parse_error=step.parse_error.message if step.parse_error else None,
                     tokens=tokens, model_actions=model_actions, model_frame=model_frame, policy_ms=policy_ms,
                     retries=[ModelRetry.model_validate(r.model_dump()) for r in step.retries])


def policy_fault(name: str, exc: CuaError) -> CuaError:
    """An infrastructure fault of the policy is the model's (`model_unreachable`), whatever
    the transport said; the original code stays in the details. Other faults pass as they are."""
    if exc.fault != "infra" or isinstance(exc, ModelUnreachable):
        return exc
    return ModelUnreachable(f"the policy {name} failed: {exc.message}", details={"code": exc.code.value, **exc.details})
