"""A token-faithful OpenAI-compatible proxy: any agent that speaks OpenAI drives the
environment, and the tokens the model read and wrote are kept.

Each rollout gets its own route, `/proxy/<rollout_id>/v1/chat/completions` (and
`/v1/models`), on the rollout service, behind its exposure rules (`cua.rollout.app`: the
service's token as the agent's OpenAI `api_key`, no foreign browser origin). The routes are
served only there: this module has no app of its own. A request there is forwarded to the
policy endpoint with what training needs added, whatever the agent asked for:

- `logprobs: true`, and vLLM's `return_token_ids: true` (prompt and completion token ids
  come back as `prompt_token_ids` and `choices[0].token_ids`); an endpoint that refuses
  the vLLM field (HTTP 400) is asked again without it, and from then on never with it;
- the answer goes back to the agent unchanged, while the proxy records one `ModelCall`
  per request: prompt ids, completion ids, one logprob per completion token, the usage
  counts and how long the model took.

Token ids come from the endpoint, never from a tokenizer here: ids re-derived from text
are not the ones sampled (a detokenize/retokenize round trip is not the identity).
Where the endpoint reports no ids (a server without `return_token_ids`), the completion
ids are read from logprob tokens of the form `token_id:123` (vLLM's
`return_tokens_as_token_ids`) and the prompt ids stay None: the trace says what is known.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from cua.trajectory import TokenTrace

__all__ = ["ModelCall", "ProxyRecorder", "TokenProxy", "token_trace"]

_VLLM_FIELDS = {"return_token_ids": True}


@dataclass
class ModelCall:
    """One chat completion that went through the proxy."""

    prompt_ids: list[int] | None
    completion_ids: list[int] | None
    logprobs: list[float] | None
    prompt_tokens: int | None
    completion_tokens: int | None
    model_ms: float
    status: int
    finish_reason: str | None = None

    @property
    def tokens(self) -> TokenTrace:
        return TokenTrace(prompt_ids=self.prompt_ids, completion_ids=self.completion_ids, logprobs=self.logprobs,
                          prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens)


def token_trace(data: dict[str, Any]) -> tuple[TokenTrace, str | None]:
    """The token trace of a chat completion answer (vLLM's or OpenAI's layout)."""
    choice = (data.get("choices") or [{}])[0] or {}
    raw = choice.get("logprobs") if isinstance(choice.get("logprobs"), dict) else None
    items = (raw or {}).get("content") or []
    logprobs = [float(i.get("logprob", 0.0)) for i in items] if items else None
    completion = choice.get("token_ids")
    if completion is None and items:
        ids = [_id_of_token(i.get("token")) for i in items]
        completion = ids if all(x is not None for x in ids) else None
    prompt = data.get("prompt_token_ids") or choice.get("prompt_token_ids")
    usage = data.get("usage") or {}
    trace = TokenTrace(prompt_ids=[int(t) for t in prompt] if prompt is not None else None,
                       completion_ids=[int(t) for t in completion] if completion is not None else None,
                       logprobs=logprobs, prompt_tokens=usage.get("prompt_tokens"),
                       completion_tokens=usage.get("completion_tokens"))
    return trace, choice.get("finish_reason")


def _id_of_token(token: Any) -> int | None:
    if isinstance(token, str) and token.startswith("token_id:"):
        try:
            return int(token.split(":", 1)[1])
        except ValueError:
            return None
    return None


@dataclass
class ProxyRecorder:
    """The model calls of one rollout, in order."""

    rollout_id: str
    calls: list[ModelCall] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, call: ModelCall) -> None:
        with self._lock:
            self.calls.append(call)

    def since(self, index: int) -> list[ModelCall]:
        with self._lock:
            return list(self.calls[index:])

    @property
    def model_ms(self) -> float:
        with self._lock:
            return sum(c.model_ms for c in self.calls)


class TokenProxy:
    """The proxy routes, for one upstream endpoint per rollout (`open(rollout_id, base_url)`)."""

    def __init__(self, *, timeout: float = 300.0) -> None:
        self._routes: dict[str, tuple[str, dict[str, str], ProxyRecorder]] = {}
        self._vllm_fields: dict[str, bool] = {}  # upstream -> takes return_token_ids
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=10.0),
                                         limits=httpx.Limits(max_keepalive_connections=64, max_connections=256))

    def install(self, app: FastAPI) -> None:
        """Serve the proxy's routes from `app` (one that applies the exposure rules)."""
        app.post("/proxy/{rollout_id}/v1/chat/completions")(self._completions)
        app.get("/proxy/{rollout_id}/v1/models")(self._models)

    def open(self, rollout_id: str, base_url: str, *, api_key: str | None = None) -> ProxyRecorder:
        """Route `rollout_id` to `base_url` (the API root, e.g. http://host:8000/v1)."""
        recorder = ProxyRecorder(rollout_id)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._routes[rollout_id] = (base_url.rstrip("/"), headers, recorder)
        return recorder

    def close(self, rollout_id: str) -> None:
        self._routes.pop(rollout_id, None)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _models(self, rollout_id: str) -> Any:
        route = self._routes.get(rollout_id)
        if route is None:
            return JSONResponse({"error": {"message": f"no rollout {rollout_id!r}"}}, 404)
        response = await self._client.get(f"{route[0]}/models", headers=route[1])
        return JSONResponse(response.json(), response.status_code)

    async def _completions(self, rollout_id: str, request: Request) -> Any:
        route = self._routes.get(rollout_id)
        if route is None:
            return JSONResponse({"error": {"message": f"no rollout {rollout_id!r}", "type": "not_found"}}, 404)
        upstream, headers, recorder = route
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": {"message": "the body is not JSON", "type": "invalid_request"}}, 400)
        if not isinstance(body, dict) or body.get("stream"):
            return JSONResponse({"error": {"message": "a JSON object without `stream` is expected (the proxy "
                                                      "records whole answers)", "type": "invalid_request"}}, 400)
        body = {**body, "logprobs": True}
        takes_vllm = self._vllm_fields.get(upstream)
        if takes_vllm is not False:
            body.update(_VLLM_FIELDS)
        started = time.perf_counter()
        try:
            response = await self._client.post(f"{upstream}/chat/completions", json=body, headers=headers)
            if response.status_code == 400 and takes_vllm is None:
                self._vllm_fields[upstream] = False
                body = {k: v for k, v in body.items() if k not in _VLLM_FIELDS}
                started = time.perf_counter()
                response = await self._client.post(f"{upstream}/chat/completions", json=body, headers=headers)
            elif response.status_code < 400 and takes_vllm is None:
                self._vllm_fields[upstream] = True
        except httpx.TransportError as exc:  # the agent sees what a gateway would say; the trace keeps it
            recorder.add(ModelCall(None, None, None, None, None, (time.perf_counter() - started) * 1000, 502))
            return JSONResponse({"error": {"message": f"the policy endpoint is unreachable: {exc!r}",
                                           "type": "upstream_unreachable"}}, 502)
        model_ms = (time.perf_counter() - started) * 1000
        try:
            data = response.json()
        except ValueError:
            data = {"error": {"message": response.text[:500]}}
        if response.status_code >= 400:
            recorder.add(ModelCall(None, None, None, None, None, model_ms, response.status_code))
            return JSONResponse(data, response.status_code)
        trace, finish = token_trace(data)
        recorder.add(ModelCall(trace.prompt_ids, trace.completion_ids, trace.logprobs, trace.prompt_tokens,
                               trace.completion_tokens, model_ms, response.status_code, finish))
        return JSONResponse(data, response.status_code)
