"""The token proxy against real HTTP model servers: what it adds, what it records, and
what it does when the endpoint refuses vLLM's fields or is not there."""

from __future__ import annotations

import time
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from cua.policy.service import serving_app
from cua.rollout.proxy import TokenProxy, token_trace


def model_app(*, takes_token_ids: bool, seen: list[dict[str, Any]]) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> Any:
        body = await request.json()
        seen.append(body)
        if "return_token_ids" in body and not takes_token_ids:
            return JSONResponse({"error": {"message": "Unrecognized request argument: return_token_ids"}}, 400)
        items = [{"token": f"token_id:{50 + i}", "logprob": -0.25 * i, "bytes": [], "top_logprobs": []}
                 for i in range(3)]
        choice: dict[str, Any] = {"index": 0, "finish_reason": "length", "logprobs": {"content": items},
                                  "message": {"role": "assistant", "content": "abc"}}
        data: dict[str, Any] = {"id": "x", "object": "chat.completion", "created": int(time.time()),
                                "model": body["model"], "choices": [choice],
                                "usage": {"prompt_tokens": 3, "completion_tokens": 3}}
        if body.get("return_token_ids") and takes_token_ids:
            choice["token_ids"] = [7, 8, 9]
            data["prompt_token_ids"] = [1, 2, 3]
        return data

    return app


def routes(proxy: TokenProxy) -> FastAPI:
    """The proxy's routes alone (the rollout service serves them behind its token and origin
    rules, tests/rollout/test_rollout_exposure.py)."""
    app = FastAPI()
    proxy.install(app)
    return app


async def test_records_vllm_token_ids_and_logprobs_whatever_the_agent_asked():
    seen: list[dict[str, Any]] = []
    proxy = TokenProxy()
    async with serving_app(model_app(takes_token_ids=True, seen=seen)) as model, serving_app(routes(proxy)) as url:
        recorder = proxy.open("r1", f"{model}/v1")
        async with httpx.AsyncClient() as http:  # a plain OpenAI client: no logprobs asked
            reply = await http.post(f"{url}/proxy/r1/v1/chat/completions",
                                    json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "abc"
        assert seen[-1]["logprobs"] is True and seen[-1]["return_token_ids"] is True
        (call,) = recorder.calls
        assert call.prompt_ids == [1, 2, 3] and call.completion_ids == [7, 8, 9]
        assert call.logprobs == [0.0, -0.25, -0.5] and call.finish_reason == "length" and call.model_ms > 0
    await proxy.aclose()


async def test_an_endpoint_without_return_token_ids_is_asked_again_and_ids_come_from_logprob_tokens():
    seen: list[dict[str, Any]] = []
    proxy = TokenProxy()
    async with serving_app(model_app(takes_token_ids=False, seen=seen)) as model, serving_app(routes(proxy)) as url:
        recorder = proxy.open("r2", f"{model}/v1")
        async with httpx.AsyncClient() as http:
            for _ in range(2):
                reply = await http.post(f"{url}/proxy/r2/v1/chat/completions",
                                        json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
                assert reply.status_code == 200
        assert ["return_token_ids" in b for b in seen] == [True, False, False]  # learnt once
        assert [c.completion_ids for c in recorder.calls] == [[50, 51, 52]] * 2
        assert all(c.prompt_ids is None for c in recorder.calls)  # unknown, not guessed
    await proxy.aclose()


async def test_unknown_rollouts_streams_and_unreachable_endpoints_are_clear_errors():
    proxy = TokenProxy()
    async with serving_app(routes(proxy)) as url:
        recorder = proxy.open("r3", "http://127.0.0.1:9/v1")  # nothing listens on port 9
        async with httpx.AsyncClient() as http:
            body = {"model": "m", "messages": []}
            assert (await http.post(f"{url}/proxy/nope/v1/chat/completions", json=body)).status_code == 404
            streamed = await http.post(f"{url}/proxy/r3/v1/chat/completions", json={**body, "stream": True})
            assert streamed.status_code == 400
            gone = await http.post(f"{url}/proxy/r3/v1/chat/completions", json=body)
            assert gone.status_code == 502 and gone.json()["error"]["type"] == "upstream_unreachable"
        assert [c.status for c in recorder.calls] == [502]
        proxy.close("r3")
    await proxy.aclose()


def test_token_trace_of_an_openai_answer_without_ids():
    trace, finish = token_trace({"choices": [{"finish_reason": "stop", "logprobs": {"content": [
        {"token": "a", "logprob": -1.0}]}}], "usage": {"prompt_tokens": 5, "completion_tokens": 1}})
    assert trace.completion_ids is None and trace.logprobs == [-1.0] and trace.prompt_tokens == 5 and finish == "stop"
