"""A cua task as a SkyRL environment: `CuaSkyRLEnv(BaseTextEnv)` (`init` / `step` / `close`).

    import skyrl_gym
    from cua.rl.adapters.skyrl import register
    register()                      # as "cua" in skyrl_gym's registry
    env = skyrl_gym.make("cua", env_config={}, extras={"task": "todo.mark_done@1", "seed": 3})
    prompt, info = env.init([])     # the family's prompt for the first screenshot
    out = env.step(model_text)      # {"observations": [next user message], "reward", "done", "metadata"}

The model's text is parsed by the model family (`extras["family"]`, default qwen2.5-vl)
into unified actions and performed in a `CuaEnv` (in process, or on `extras["server"]`), by
the one rule for a turn (`cua.episode.loop.plan`): unparseable text is a wasted step, an
answer with no action ends the episode, as in `cua eval`.
Messages are OpenAI-format, the screenshot an `image_url` part (a data URL), so SkyRL's
multimodal generators can pass them to a VLM. The reward is the judge's score at the end
(sparse) or its per-step progress change (`extras["reward"] = "dense"`), summing to the
score. An infrastructure fault ends the episode with `metadata["mask_sample"] = True` and
the typed error: drop the sample (its reward 0.0 is not a score).
"""

from __future__ import annotations

from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from cua.episode.loop import plan
from cua.errors import ErrorRecord, InfraError
from cua.observation import Observation
from cua.rl.adapters.chat import ChatView
from cua.rl.env import CuaEnv

__all__ = ["CuaSkyRLEnv", "register"]


class CuaSkyRLEnv(BaseTextEnv):  # type: ignore[misc]  # skyrl_gym ships no type information
    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        extras = dict(extras or {})
        if "task" not in extras:
            raise ValueError("CuaSkyRLEnv needs extras['task'] (a template id such as todo.mark_done@1)")
        self.task = str(extras["task"])
        self.seed = int(extras.get("seed", 0))
        self.family = str(extras.get("family", "qwen2.5-vl"))
        self.history_images = int(extras.get("history_images", 1))
        self.env = CuaEnv(self.task, server=extras.get("server"), token=extras.get("token"),
                          reward=extras.get("reward", "sparse"), max_steps=extras.get("max_steps"))
        self.max_turns = int(extras.get("max_turns", self.env.template.instantiate(self.seed).max_steps))
        self.chat: ChatView | None = None
        self.total_reward = 0.0

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset the task and return the prompt for its first screenshot (`prompt`, the
        dataset's, is replaced: the task's instruction and screen are the prompt)."""
        _, info = self.env.reset(seed=self.seed)
        self.turns, self.total_reward = 0, 0.0
        self.chat = ChatView(info["instruction"], family=self.family, history_images=self.history_images)
        return self.chat.prompt(self._screen()), {"instruction": info["instruction"],
                                                                "task_id": info["task_id"], "seed": info["seed"]}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        if self.chat is None:
            raise RuntimeError("init() first")
        self.turns += 1
        turn = self.chat.answer(action)
        reward, done = 0.0, False
        info: dict[str, Any] = {}
        try:
            for act in plan(turn):
                _, r, terminated, truncated, info = self.env.step(act)
                reward += float(r)
                if terminated or truncated:
                    done = True
                    break
            if not done and self.turns >= self.max_turns:  # out of turns
                from cua.actions import Done

                _, r, _, _, info = self.env.step(Done())
                reward += float(r)
                done = True
        except InfraError as exc:
            return BaseTextEnvStepOutput(observations=[], reward=0.0, done=True, postprocessed_action=action,
                                         metadata={"mask_sample": True,
                                                   "infra_error": ErrorRecord.of(exc).model_dump(mode="json", exclude_none=True)})
        self.total_reward += reward
        metadata: dict[str, Any] = {"parse_error": turn.parse_error,
                                    "actions": [a.model_dump(mode="json") for a in turn.actions]}
        if done:
            verdict = info.get("verdict")
            metadata.update(verdict=verdict.model_dump(mode="json") if verdict else None, mask_sample=False)
            return BaseTextEnvStepOutput(observations=[], reward=reward, done=True, postprocessed_action=action,
                                         metadata=metadata)
        following = self.chat.prompt(self._screen())
        return BaseTextEnvStepOutput(observations=following[-1:], reward=reward, done=False,
                                     postprocessed_action=action, metadata=metadata)

    def _screen(self) -> Observation:
        """The observation the episode in progress stands at."""
        if self.env.episode is None:
            raise RuntimeError("init() first")
        return self.env.episode.observation

    def get_metrics(self) -> dict[str, Any]:
        return {"turns": self.turns, "return": self.total_reward}

    def close(self) -> None:
        self.env.close()


def register(env_id: str = "cua") -> None:
    """Register `CuaSkyRLEnv` in skyrl_gym's registry under `env_id` (once)."""
    import skyrl_gym
    from skyrl_gym.envs.registration import registry

    if env_id not in registry:
        skyrl_gym.register(id=env_id, entry_point="cua.rl.adapters.skyrl:CuaSkyRLEnv")
