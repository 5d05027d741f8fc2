"""One model family's view of an episode as chat: the prompt for each observation and the
actions in the model's answer. The same code the policy server uses (`cua.policy.engine`),
so a trainer's rollouts prompt and parse exactly as `cua eval` does."""

from __future__ import annotations

from typing import Any

from cua.episode.agent import AgentTurn
from cua.episode.policy_agent import policy_turn
from cua.observation import Observation, Size
from cua.policy.backends.openai import to_openai_messages
from cua.policy.base import PolicyStep
from cua.policy.engine import Prompt, build_prompt, parse_output, remember_turn
from cua.policy.families import get_family

__all__ = ["ChatView"]


class ChatView:
    """The conversation of one episode as the family writes it. `prompt(obs)` -> the OpenAI
    messages for the next model call; `answer(text)` -> the turn it is (no action and the
    parse error for text that is not an action), remembering it."""

    def __init__(self, instruction: str, *, family: str = "qwen2.5-vl", history_images: int = 1) -> None:
        self.family = get_family(family)
        self.instruction = instruction
        self.history_images = history_images
        self._turns: list[Any] = []
        self._pointer: tuple[float, float] | None = None
        self._prompt: Prompt | None = None
        self._frame: Size | None = None

    def prompt(self, observation: Observation) -> list[dict[str, Any]]:
        self._prompt = build_prompt(self.family, self.instruction, self._turns, observation, self.history_images)
        self._frame = observation.frame
        return to_openai_messages(self._prompt.messages)

    @property
    def images(self) -> list[Any]:
        """The PIL images of the last prompt, in order (for processors that take them apart)."""
        assert self._prompt is not None
        return [part["image"].pil() for m in self._prompt.messages for part in m["content"] if part["type"] == "image"]

    def answer(self, text: str) -> AgentTurn:
        """The model's `text` as the turn the loop plans (`cua.episode.loop.plan`), remembered
        in the conversation."""
        if self._prompt is None or self._frame is None:
            raise RuntimeError("prompt() first")
        parsed, error, self._pointer = parse_output(self.family, text, self._frame, self._pointer)
        history = parsed.history_text if parsed is not None and parsed.history_text else text
        remember_turn(self._turns, self._prompt, history, self.history_images)
        return policy_turn(PolicyStep(actions=list(parsed.actions) if parsed is not None else [], raw=text,
                                      thought=parsed.thought if parsed is not None else None, parse_error=error))
