"""verl: `CuaAgentLoop`, an `AgentLoopBase` that plays one cua episode per sample.

Register it with verl (`actor_rollout_ref.rollout.agent.agent_loop_config_path`, or the
`register` decorator verl applies here as "cua") and give each dataset row
`extra_info = {"task": "todo.mark_done@1", "seed": 3}` (or top-level `task`/`seed`).

`run` opens a sandbox (in process, or on `cua serve` at `$CUA_SERVER`), and each turn
renders the model family's prompt for the screenshot with verl's own processor, asks
verl's inference server (`server_manager.generate`) for tokens, and reads the text as a
turn (`ChatView.answer`); the turns are played by the one agent loop (`cua.episode.loop.play`:
a turn of unparseable text is a wasted step, a turn with no action ends the episode), so the
policy is judged after the same steps as in `cua eval`. The output is verl's `AgentLoopOutput`: the first prompt's
ids, every turn's response ids with the environment's tokens between them
(`response_mask` 1 for the model's, 0 for the environment's), their logprobs, the
screenshots as `multi_modal_data["image"]` and the judge's score as `reward_score`.
An infrastructure fault gives an all-zero `response_mask` and `extra_fields["mask_sample"]`.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any, Protocol, cast

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register

from cua.episode.agent import AgentTurn, EpisodeContext
from cua.episode.episode import Episode
from cua.episode.loop import AgentRaised, play
from cua.errors import CuaError, ErrorRecord
from cua.observation import Observation
from cua.rl.adapters.chat import ChatView
from cua.task import TaskInstance

__all__ = ["CuaAgentLoop"]


def _task_of(kwargs: dict[str, Any]) -> tuple[str, int]:
    info = kwargs.get("extra_info") or {}
    task = kwargs.get("task") or info.get("task")
    if not task:
        raise ValueError("a cua sample needs `task` (in extra_info or at the top level)")
    return str(task), int(kwargs.get("seed", info.get("seed", 0)))


class _Tokenizer(Protocol):
    """What the loop uses of a Hugging Face tokenizer."""

    pad_token_id: int | None

    def decode(self, token_ids: list[int], *, skip_special_tokens: bool = ...) -> str: ...

    def encode(self, text: str, *, add_special_tokens: bool = ...) -> list[int]: ...

    def apply_chat_template(self, conversation: list[dict[str, Any]], *, tokenize: bool,
                            add_generation_prompt: bool, **kwargs: Any) -> str: ...


class _Processor(Protocol):
    """What the loop uses of a Hugging Face multimodal processor."""

    def apply_chat_template(self, conversation: list[dict[str, Any]], *, tokenize: bool,
                            add_generation_prompt: bool, **kwargs: Any) -> str: ...

    def __call__(self, *, text: list[str], images: list[Any] | None, return_tensors: str) -> Any: ...


@register("cua")
class CuaAgentLoop(AgentLoopBase):
    family = "qwen2.5-vl"
    history_images = 64  # every screenshot stays in the context, so each turn extends the last

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        from cua.episode.openers import sandbox_opener
        from cua.tasks.registry import get_template

        task, seed = _task_of(kwargs)
        instance = get_template(task).instantiate(seed)
        server = os.environ.get("CUA_SERVER")
        started = time.perf_counter()
        sample = _Sample(self, sampling_params)
        reward: float | None = None
        masked = False
        error: dict[str, Any] | None = None
        async with sandbox_opener(local=server is None, server=server, token=os.environ.get("CUA_TOKEN")) as opener:
            try:
                async with opener(instance.sandbox_kind, instance.sandbox_config) as handle:
                    ep = Episode(handle, instance, producer="rl", agent=None)
                    obs = await ep.reset()
                    ctx = EpisodeContext(handle, obs)
                    await sample.begin(ep.instance, ctx)
                    try:
                        await play(ep, sample, ctx)
                    except AgentRaised as exc:  # the sample's own turn failed (verl's server, a tokenizer)
                        assert exc.__cause__ is not None
                        raise exc.__cause__ from None
                    verdict = await ep.judge()
                    ep.finish()
                    reward = verdict.score
            except CuaError as exc:
                if exc.fault != "infra":
                    raise
                masked, error = True, ErrorRecord.of(exc).model_dump(mode="json", exclude_none=True)
        prompt, response, mask, logprobs, images = (sample.prompt, sample.response, sample.mask, sample.logprobs,
                                                     sample.images)
        turns, model_s = sample.turns, sample.model_s
        if masked:
            mask = [0] * len(response)
        total = time.perf_counter() - started
        return AgentLoopOutput(
            prompt_ids=prompt or [self._tokenizer.pad_token_id or 0], response_ids=response, response_mask=mask,
            response_logprobs=logprobs, multi_modal_data={"image": images} if images else None,
            reward_score=reward, num_turns=2 * turns + 1,
            metrics=AgentLoopMetrics(generate_sequences=model_s, tool_calls=total - model_s),
            extra_fields={"mask_sample": masked, "infra_error": error, "task": task, "seed": seed})

    def _encode(self, messages: list[dict[str, Any]], images: list[Any]) -> tuple[list[int], list[Any]]:
        """The prompt ids as verl's processor renders them (image placeholders expanded)."""
        plain = [{"role": m["role"], "content": m["content"] if isinstance(m["content"], str) else
                  [{"type": "image"} if p["type"] == "image_url" else {"type": "text", "text": p["text"]}
                   for p in m["content"]]} for m in messages]
        processor = self._processor
        if processor is not None:
            text = processor.apply_chat_template(plain, tokenize=False, add_generation_prompt=True,
                                                 **self.apply_chat_template_kwargs)
            inputs = processor(text=[text], images=images or None, return_tensors="pt")
            ids: list[int] = inputs["input_ids"][0].tolist()
            return ids, images
        text = self._tokenizer.apply_chat_template(plain, tokenize=False, add_generation_prompt=True)
        return self._tokenizer.encode(text, add_special_tokens=False), []

    # verl annotates `tokenizer` and `processor` as AutoTokenizer and AutoProcessor, the
    # factories; the attributes hold what those factories made.
    @property
    def _tokenizer(self) -> _Tokenizer:
        return cast(_Tokenizer, self.tokenizer)

    @property
    def _processor(self) -> _Processor | None:
        return cast("_Processor | None", self.processor)


class _Sample:
    """One sample's turns, as the agent of the one loop (`cua.episode.loop.play`): each turn
    renders the prompt for the observation, asks verl's server for tokens, and reads the
    text as the turn (`ChatView.answer`); between turns it keeps verl's sequences (the first
    prompt, every response with the environment's tokens between, mask, logprobs, images)."""

    name = "verl"

    def __init__(self, loop: CuaAgentLoop, sampling_params: dict[str, Any]) -> None:
        self.loop, self.sampling_params = loop, sampling_params
        self.chat: ChatView | None = None
        self.prompt: list[int] = []
        self.response: list[int] = []
        self.mask: list[int] = []
        self.logprobs: list[float] = []
        self.images: list[Any] = []
        self.context: list[int] = []
        self.turns = 0
        self.model_s = 0.0

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        self.chat = ChatView(instance.instruction, family=self.loop.family, history_images=self.loop.history_images)

    async def turn(self, observation: Observation) -> AgentTurn:
        assert self.chat is not None, "begin() first"
        ids, turn_images = self.loop._encode(self.chat.prompt(observation), self.chat.images)
        if not self.prompt:
            self.prompt, self.context = list(ids), list(ids)
        else:
            if ids[:len(self.context)] != self.context:
                raise ValueError("a turn's prompt does not extend the previous context")
            added = ids[len(self.context):]
            self.response += added
            self.mask += [0] * len(added)
            self.logprobs += [0.0] * len(added)
            self.context = list(ids)
        self.images = turn_images
        t = time.perf_counter()
        out = await self.loop.server_manager.generate(uuid.uuid4().hex, prompt_ids=ids,
                                                      sampling_params=self.sampling_params,
                                                      image_data=turn_images or None)
        self.model_s += time.perf_counter() - t
        self.response += out.token_ids
        self.mask += [1] * len(out.token_ids)
        self.logprobs += list(out.log_probs) if out.log_probs else [0.0] * len(out.token_ids)
        self.context += out.token_ids
        self.turns += 1
        return self.chat.answer(self.loop._tokenizer.decode(out.token_ids, skip_special_tokens=True))
