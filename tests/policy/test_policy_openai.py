"""The openai backend against a local server speaking the chat completions wire format
(FastAPI on loopback): prompts and images on the wire, retries on 429/5xx with
Retry-After, timeouts, logprobs and token ids, tool calls; and the full chain
remote client -> policy server -> ModelPolicy -> OpenAI backend -> model server."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import time

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from PIL import Image

from cua.actions import Click, Done
from cua.errors import Capacity, InternalError, Timeout
from cua.observation import Observation, Screenshot, Size
from cua.policy import PolicyOptions, make_policy
from cua.policy.backends.openai import OpenAIBackend
from cua.policy.engine import ModelPolicy
from cua.policy.server import create_app
from cua.policy.service import serving_app as serving

QWEN_CLICK = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [644, 364]}}\n</tool_call>'


def observation(width: int = 1280, height: int = 720, **kw) -> Observation:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (250, 250, 250)).save(buffer, format="PNG")
    frame = Size(width=width, height=height)
    shot = Screenshot(format="png", width=width, height=height, data=buffer.getvalue())
    return Observation(sandbox_id="sb", frame=frame, screen=frame, screenshot=shot, **kw)


class FakeModelServer:
    """A chat completions endpoint whose answers the test scripts: each entry of
    `plan` is a status code (answered with an error body) or a message dict."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.plan: list = []
        self.headers: list[dict] = []
        self.delay_s = 0.0
        self.reject_token_ids = False
        self.app = FastAPI()

        @self.app.post("/v1/chat/completions")
        async def completions(request: Request):
            body = await request.json()
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            if self.reject_token_ids and "return_tokens_as_token_ids" in body:
                return JSONResponse({"error": {"message": "Unrecognized request argument supplied: return_tokens_as_token_ids"}}, 400)
            if self.delay_s:
                await asyncio.sleep(self.delay_s)  # a model that takes its time
            answer = self.plan.pop(0) if self.plan else {"content": QWEN_CLICK}
            if isinstance(answer, int):
                headers = {"Retry-After": "0"} if answer == 429 else {}
                return JSONResponse({"error": {"message": "busy"}}, answer, headers=headers)
            message = {"role": "assistant", "content": answer.get("content"), **({"tool_calls": answer["tool_calls"]} if "tool_calls" in answer else {})}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            if body.get("logprobs"):
                tokens = [{"token": f"token_id:{100 + i}" if body.get("return_tokens_as_token_ids") else ch,
                           "logprob": -0.1 * i, "bytes": [], "top_logprobs": [{"token": "x", "logprob": -3.0}] * body.get("top_logprobs", 0)}
                          for i, ch in enumerate((answer.get("content") or "")[:5])]
                choice["logprobs"] = {"content": tokens}
            return {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()), "model": body["model"],
                    "choices": [choice], "usage": {"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290}}


@pytest.fixture
async def model_server():
    fake = FakeModelServer()
    async with serving(fake.app) as url:
        yield fake, f"{url}/v1"


async def test_prompt_images_and_parsed_actions(model_server):
    fake, base = model_server
    policy = make_policy(f"openai:qwen2.5-vl-7b@{base}", family="qwen2.5-vl", api_key="sk-test", history_images=2)
    obs = observation()
    step = await policy.act("ep", "Open the settings", obs, PolicyOptions(temperature=0.2, max_tokens=64, seed=7))
    assert step.actions == [Click(x=640, y=360)] and step.parse_error is None
    assert step.tokens.prompt == 1234 and step.tokens.completion == 56 and step.model == "qwen2.5-vl-7b"
    body = fake.requests[-1]
    assert fake.headers[-1]["authorization"] == "Bearer sk-test"
    assert body["temperature"] == 0.2 and body["max_tokens"] == 64 and body["seed"] == 7 and "logprobs" not in body
    system, user = body["messages"]
    assert system["role"] == "system" and "computer_use" in system["content"] and "1288x728" in system["content"]
    image_url = next(p["image_url"]["url"] for p in user["content"] if p["type"] == "image_url")
    sent = Image.open(io.BytesIO(base64.b64decode(image_url.split(",", 1)[1])))
    assert sent.size == (1288, 728)  # smart_resized before sending: the model's coordinates are its pixels
    assert any(p.get("text") == "Open the settings" for p in user["content"])
    # history: the previous answer is in the prompt, and only the last 2 screenshots are
    for _ in range(3):
        await policy.act("ep", "Open the settings", obs)
    messages = fake.requests[-1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert messages[2]["content"] == QWEN_CLICK
    images = [p for m in messages if isinstance(m["content"], list) for p in m["content"] if p["type"] == "image_url"]
    assert len(images) == 2
    # reset forgets the history
    await policy.reset("ep")
    await policy.act("ep", "Open the settings", obs)
    assert len(fake.requests[-1]["messages"]) == 2
    await policy.aclose()


async def test_per_call_history_and_text_state(model_server):
    from cua.observation import ActionError

    fake, base = model_server
    policy = make_policy(f"openai:m@{base}", family="osworld", history_images=1)
    fake.plan = [{"content": "pyautogui.click(10, 10)"}] * 3
    obs = observation(url="http://shop/", title="Shop", axtree=[{"role": "button", "name": "Buy"}])
    await policy.act("s", "Buy it", obs)
    failed = obs.model_copy(update={"error": ActionError(reason="out_of_bounds", message="(5000, 10) is off the screen")})
    await policy.act("s", "Buy it", failed, PolicyOptions(history_images=2))
    messages = fake.requests[-1]["messages"]
    images = [p for m in messages if isinstance(m["content"], list) for p in m["content"] if p["type"] == "image_url"]
    assert len(images) == 1  # the first turn's screenshot was dropped when history_images was 1
    last_texts = [p["text"] for p in messages[-1]["content"] if p["type"] == "text"]
    assert any('Accessibility tree: [{"role":"button","name":"Buy"}]' in t for t in last_texts)
    assert any("The previous action failed: (5000, 10) is off the screen" in t for t in last_texts)
    assert sent_size(images[0]) == (1280, 720)  # osworld: the screenshot as it is
    await policy.aclose()


def sent_size(part: dict) -> tuple[int, int]:
    return Image.open(io.BytesIO(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))).size


async def test_logprobs_and_token_ids(model_server):
    fake, base = model_server
    policy = make_policy(f"openai:m@{base}", family="qwen2.5-vl")
    step = await policy.act("s", "go", observation(), PolicyOptions(logprobs=True, top_logprobs=2))
    body = fake.requests[-1]
    assert body["logprobs"] is True and body["top_logprobs"] == 2 and body["return_tokens_as_token_ids"] is True
    assert step.token_ids == [100, 101, 102, 103, 104]
    assert [round(t.logprob, 3) for t in step.logprobs] == [0.0, -0.1, -0.2, -0.3, -0.4]
    assert len(step.logprobs[0].top) == 2
    await policy.aclose()


async def test_servers_without_token_id_fields_are_asked_again_without_them(model_server):
    fake, base = model_server
    fake.reject_token_ids = True
    policy = make_policy(f"openai:m@{base}", family="qwen2.5-vl")
    step = await policy.act("s", "go", observation(), PolicyOptions(logprobs=True))
    assert step.parse_error is None and step.logprobs is not None and step.token_ids is None
    assert "return_tokens_as_token_ids" not in fake.requests[-1]
    await policy.act("s", "go", observation(), PolicyOptions(logprobs=True))
    assert len(fake.requests) == 3  # remembered: no second rejection
    await policy.aclose()


async def test_retries_on_429_and_5xx_then_gives_up(model_server):
    fake, base = model_server
    backend = OpenAIBackend(base_url=base, model="m", backoff_s=0.01, max_retries=3)
    policy = ModelPolicy(backend, family="qwen2.5-vl")
    fake.plan = [429, 503, 500, {"content": QWEN_CLICK}]
    step = await policy.act("s", "go", observation())
    assert step.actions == [Click(x=640, y=360)] and len(fake.requests) == 4
    # every retried call is kept with the answer, in order, with what it waited
    assert [r.status for r in step.retries] == [429, 503, 500] and "busy" in step.retries[1].error
    assert step.retries[0].backoff_ms == 0.0 and all(r.backoff_ms >= 0 for r in step.retries)
    fake.plan = [429] * 5
    with pytest.raises(Capacity):
        await policy.act("s", "go", observation())
    fake.plan = [502] * 5
    with pytest.raises(InternalError, match="HTTP 502") as lost:
        await policy.act("s", "go", observation())
    assert [r["status"] for r in lost.value.details["retries"]] == [502] * 3  # and a failure keeps its retries
    fake.plan = [400]
    before = len(fake.requests)
    with pytest.raises(InternalError, match="HTTP 400"):
        await policy.act("s", "go", observation())
    assert len(fake.requests) == before + 1  # a bad request is not retried
    assert policy.metrics.backend_errors["qwen2.5-vl"] == 3
    await policy.aclose()


async def test_timeout_is_a_typed_infra_error(model_server):
    fake, base = model_server
    fake.delay_s = 3.0
    policy = ModelPolicy(OpenAIBackend(base_url=base, model="m", timeout=0.3, max_retries=2), family="qwen2.5-vl")
    with pytest.raises(Timeout):
        await policy.act("s", "go", observation())
    assert len(fake.requests) == 1  # an overrun generation is not sent again
    await policy.aclose()


async def test_unparseable_output_is_a_parse_error_not_a_crash(model_server):
    fake, base = model_server
    fake.plan = [{"content": "I'm not sure what to do."}]
    policy = make_policy(f"openai:m@{base}", family="qwen2.5-vl")
    step = await policy.act("s", "go", observation())
    assert step.actions == [] and step.parse_error.raw == "I'm not sure what to do."
    assert policy.metrics.parse_errors["qwen2.5-vl"] == 1
    await policy.aclose()


async def test_qwen3_tool_calls_on_the_message(model_server):
    fake, base = model_server
    fake.plan = [{"content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
        "name": "computer_use", "arguments": json.dumps({"action": "terminate", "status": "success"})}}]}]
    policy = make_policy(f"openai:m@{base}", family="qwen3-vl")
    step = await policy.act("s", "go", observation())
    assert step.actions == [Done(status="success")]
    await policy.act("s", "go", observation())
    assistant = fake.requests[-1]["messages"][2]
    assert assistant["role"] == "assistant" and '"terminate"' in assistant["content"]
    await policy.aclose()


async def test_tool_api_sends_tools_and_a_plain_system_prompt(model_server):
    fake, base = model_server
    fake.plan = [{"content": "", "tool_calls": [{"id": "c", "type": "function", "function": {
        "name": "computer_use", "arguments": '{"action": "left_click", "coordinate": [500, 500]}'}}]}]
    policy = make_policy(f"openai:m@{base}", family="qwen3-vl", family_options={"tool_api": True})
    step = await policy.act("s", "go", observation())
    assert step.actions == [Click(x=640, y=360)]
    body = fake.requests[-1]
    assert body["tools"][0]["function"]["name"] == "computer_use"
    assert body["messages"][0] == {"role": "system", "content": "You are a helpful assistant."}
    await policy.aclose()


async def test_full_chain_through_the_policy_server(model_server):
    """make_policy(URL) -> policy server -> ModelPolicy -> OpenAI backend -> model server."""
    fake, base = model_server
    inner = make_policy(f"openai:m@{base}", family="ui-tars-1.5")
    fake.plan = [500, {"content": "Thought: the button is there\nAction: click(start_box='(644,364)')"}]
    async with serving(create_app(inner, token="t")) as url:
        remote = make_policy(url, token="t")
        step = await remote.act("s", "Press the button", observation(url="http://app/", title="App"))
        assert step.actions == [Click(x=640, y=360)] and step.thought == "the button is there"
        assert [r.status for r in step.retries] == [500]  # the server's retry reaches its client
        assert {"model", "http", "server_total"} <= set(step.timings_ms)
        user = fake.requests[-1]["messages"][0]
        texts = [p["text"] for p in user["content"] if p["type"] == "text"]
        assert "## User Instruction\nPress the button" in texts[0] and "URL: http://app/\nTitle: App" in texts
        await remote.aclose()
