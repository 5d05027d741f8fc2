"""The trainer adapters against the real libraries' interfaces (TRL's rollout_func contract,
verl's AgentLoopBase/AgentLoopOutput, SkyRL's BaseTextEnv), on real browser sandboxes."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
from fastapi import FastAPI, Request

from cua.policy.service import serving_app

pytestmark = [pytest.mark.slow]

TASK = "todo.mark_done@1"
CLICK = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [40, 30]}}\n</tool_call>'
STOP = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}\n</tool_call>'


def _ids(text: str) -> list[int]:
    return [200 + ord(c) % 97 for c in text[:6]]


class ContextModel:
    """A chat completions server whose prompt ids grow with the conversation, as a real
    tokenizer's would: the system prompt, then each past answer's ids and the environment's
    turn ([900 + i]) — so multi-turn episodes flatten into one sequence."""

    def __init__(self) -> None:
        self.app = FastAPI()

        @self.app.post("/v1/chat/completions")
        async def completions(request: Request) -> dict[str, Any]:
            body = await request.json()
            answers = [m["content"] for m in body["messages"] if m["role"] == "assistant"]
            prompt = [1, 2, 3]
            for i, text in enumerate(answers):
                prompt += _ids(text) + [900 + i]
            text = CLICK if not answers else STOP
            items = [{"token": "x", "logprob": -0.5, "bytes": [], "top_logprobs": []} for _ in _ids(text)]
            return {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                    "prompt_token_ids": prompt,
                    "choices": [{"index": 0, "finish_reason": "stop", "token_ids": _ids(text),
                                 "logprobs": {"content": items}, "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": len(prompt), "completion_tokens": 6}}


@pytest_asyncio.fixture
async def service(tmp_path):
    from cua.rollout.server import serve_rollouts

    model = ContextModel()
    async with serving_app(model.app) as model_url, serve_rollouts(tmp_path, local=True, max_episodes=4) as running:
        yield running, f"{model_url}/v1"


async def test_trl_rollout_func_returns_what_grpo_trainer_reads(service):
    import inspect

    from trl import GRPOTrainer

    from cua.rl.adapters.trl import CuaRolloutFunc, cua_reward, task_dataset, task_prompt

    assert "rollout_func" in inspect.signature(GRPOTrainer.__init__).parameters
    running, model = service
    rollouts = CuaRolloutFunc(running.url, policy={"base_url": model, "model": "m"}, isolation="shared",
                              token=running.token)
    dataset = task_dataset([TASK], seeds=[1, 2])
    prompts = [row["prompt"] for row in dataset]
    assert prompts[0] == task_prompt(TASK, 1)
    trainer = SimpleNamespace(num_generations=2, state=SimpleNamespace(global_step=0))
    out = await asyncio.to_thread(rollouts, prompts, trainer)
    assert {"prompt_ids", "completion_ids", "logprobs"} <= set(out)  # what GRPOTrainer requires
    assert all(len(v) == 4 for v in out.values())
    for prompt, completion, logprobs, mask in zip(out["prompt_ids"], out["completion_ids"], out["logprobs"],
                                                  out["env_mask"], strict=True):
        assert prompt == [1, 2, 3]
        # turn 1's answer, the environment's turn, turn 2's answer
        assert completion == _ids(CLICK) + [900] + _ids(STOP)
        assert mask == [1] * 6 + [0] + [1] * 6 and len(logprobs) == len(completion)
    assert cua_reward(env_reward=out["env_reward"]) == [0.0] * 4 and out["mask_sample"] == [False] * 4


def test_skyrl_env_through_skyrl_gym():
    import skyrl_gym

    from cua.rl.adapters.skyrl import CuaSkyRLEnv, register

    register()
    env = skyrl_gym.make("cua", env_config={}, extras={"task": TASK, "seed": 2, "max_turns": 5})
    try:
        assert isinstance(env, CuaSkyRLEnv)
        prompt, info = env.init([])
        assert info["task_id"] == TASK and prompt[-1]["role"] == "user"
        assert any(p["type"] == "image_url" and p["image_url"]["url"].startswith("data:image/")
                   for p in prompt[-1]["content"])
        out = env.step(CLICK)
        assert out["done"] is False and out["reward"] == 0.0 and out["metadata"]["actions"][0]["type"] == "click"
        assert out["observations"][0]["role"] == "user"
        out = env.step("no tool call here")  # unparseable: the turn is spent, nothing happens
        assert out["done"] is False and out["metadata"]["parse_error"]
        out = env.step(STOP)
        assert out["done"] is True and out["metadata"]["verdict"]["passed"] is False and out["metadata"]["mask_sample"] is False
        assert env.get_metrics()["turns"] == 3
    finally:
        env.close()


async def test_verl_agent_loop_plays_an_episode_with_verls_types(tmp_path):
    from transformers import AutoTokenizer, Qwen2_5_VLProcessor
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput
    from verl.workers.rollout.replica import TokenOutput

    from cua.policy.tiny import CHAT_TEMPLATE, build_tiny_qwen25_vl
    from cua.rl.adapters.verl import CuaAgentLoop

    build_tiny_qwen25_vl(tmp_path)
    tokenizer = AutoTokenizer.from_pretrained(tmp_path)
    images = Qwen2VLImageProcessorPil.from_pretrained(tmp_path)

    class Processor:
        """Qwen2_5_VLProcessor's two calls verl's agent loops make. The real class cannot be
        built on this machine (its video processor needs torchvision, which has no build for
        torch 2.13 here); this expands the image placeholders as it does, with the real
        tokenizer and image processor (and cua's transformers backend's own expansion)."""

        def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True, **kw):
            return tokenizer.apply_chat_template(messages, chat_template=CHAT_TEMPLATE, tokenize=tokenize,
                                                 add_generation_prompt=add_generation_prompt)

        def __call__(self, text, images=None, return_tensors="pt"):
            from cua.policy.backends.transformers import TransformersBackend

            expanded = list(text)
            if images:
                grid = images_processor(images=images, return_tensors="pt")["image_grid_thw"]
                counts = [int(g.prod()) // 4 for g in grid]
                expanded = [TransformersBackend._expand_images(t, iter(counts)) for t in text]
            return tokenizer(expanded, return_tensors=return_tensors)

    images_processor = images
    processor = Processor()
    assert Qwen2_5_VLProcessor is not None

    class ScriptedServer:  # verl's LLMServerClient.generate, answering from a script
        def __init__(self) -> None:
            self.calls: list[dict[str, Any]] = []

        async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                           image_data: list[Any] | None = None, **kw: Any) -> TokenOutput:
            self.calls.append({"prompt_ids": prompt_ids, "images": len(image_data or [])})
            text = CLICK if len(self.calls) == 1 else STOP
            ids = tokenizer.encode(text, add_special_tokens=False) + [tokenizer.eos_token_id]
            return TokenOutput(token_ids=ids, log_probs=[-0.25] * len(ids))

    loop = CuaAgentLoop.__new__(CuaAgentLoop)  # verl builds it inside its Ray workers; the parts it sets:
    loop.tokenizer, loop.processor, loop.server_manager = tokenizer, processor, ScriptedServer()
    loop.apply_chat_template_kwargs = {}
    assert isinstance(loop, AgentLoopBase)
    out = await loop.run({"temperature": 1.0}, extra_info={"task": TASK, "seed": 1})
    assert isinstance(out, AgentLoopOutput)
    calls = loop.server_manager.calls
    assert len(calls) == 2 and calls[1]["images"] == 2 and out.prompt_ids == calls[0]["prompt_ids"]
    assert len(out.response_ids) == len(out.response_mask) == len(out.response_logprobs)
    assert out.response_mask[0] == 1 and 0 in out.response_mask and out.response_mask[-1] == 1
    assert out.reward_score == 0.0 and out.extra_fields["mask_sample"] is False
    assert len(out.multi_modal_data["image"]) == 2 and out.num_turns == 5
