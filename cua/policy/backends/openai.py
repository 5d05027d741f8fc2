"""An OpenAI-compatible chat completions backend over httpx (vLLM, SGLang, TGI, OpenAI...).

Screenshots travel as data URLs. Sampling options, logprobs and top_logprobs pass
through; on servers that offer them (vLLM), token ids are asked for too
(``return_tokens_as_token_ids``, ``return_token_ids``): the first server that rejects
those fields is remembered and asked without them. 429 and 5xx answers and dropped
connections are retried with exponential backoff, honouring Retry-After; every retry is
kept (`Completion.retries`, and the final error's details when the retries run out), so a
flaky model shows in the trajectory. `probe()` asks the server whether it is there at all,
before a run starts sandboxes for it.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import os
import random
import time
from typing import Any, ClassVar

import httpx

from cua.errors import Capacity, InternalError, ModelUnreachable, Timeout, Unauthorized
from cua.policy.base import CallRetry, TokenCounts, TokenLogprob
from cua.policy.engine import Completion, CompletionRequest
from cua.policy.families.base import Message, PreparedImage

__all__ = ["OpenAIBackend", "to_openai_messages"]

_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_VLLM_EXTRAS = {"return_tokens_as_token_ids": True, "return_token_ids": True}


def _data_url(image: PreparedImage) -> str:
    return f"data:image/{image.format};base64,{base64.b64encode(image.data).decode('ascii')}"


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral messages -> chat completions messages (images as data URLs)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        parts = []
        for part in message["content"]:
            if part["type"] == "text":
                parts.append({"type": "text", "text": part["text"]})
            elif part["type"] == "image":
                parts.append({"type": "image_url", "image_url": {"url": _data_url(part["image"])}})
        if message["role"] in ("system", "assistant") and all(p["type"] == "text" for p in parts):
            out.append({"role": message["role"], "content": "\n".join(p["text"] for p in parts)})
        else:
            out.append({"role": message["role"], "content": parts})
    return out


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed is not None else None


def _retried(retries: list[CallRetry]) -> dict[str, Any]:
    """The error details that keep the calls retried before the one that failed for good."""
    return {"retries": [r.model_dump(mode="json") for r in retries]} if retries else {}


def _token_logprob(item: dict[str, Any]) -> TokenLogprob:
    token = str(item.get("token", ""))
    token_id = None
    if token.startswith("token_id:"):  # vLLM's return_tokens_as_token_ids spelling
        try:
            token_id = int(token.split(":", 1)[1])
        except ValueError:
            token_id = None
    top = item.get("top_logprobs")
    return TokenLogprob(
        token=token,
        logprob=float(item.get("logprob", 0.0)),
        token_id=token_id,
        top=[_token_logprob(t) for t in top] if top else None,
    )


class OpenAIBackend:
    """Chat completions over HTTP. `base_url` is the API root, e.g. http://host:8000/v1."""

    OPTION_NAMES: ClassVar[frozenset[str]] = frozenset(
        {"api_key", "timeout", "max_retries", "backoff_s", "max_backoff_s", "token_ids", "extra_body", "headers"}
    )
    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        token_ids: bool | None = None,
        extra_body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        #: None: ask for token ids and find out whether the server accepts the fields.
        self.token_ids = token_ids
        self.extra_body = dict(extra_body or {})
        key = api_key or os.environ.get("OPENAI_API_KEY")
        all_headers = {**(headers or {}), **({"Authorization": f"Bearer {key}"} if key else {})}
        self._client = httpx.AsyncClient(
            headers=all_headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            limits=httpx.Limits(max_keepalive_connections=32, max_connections=128),
        )

    def _body(self, messages: list[Message], request: CompletionRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(messages)}
        sampling = {"temperature": request.temperature, "top_p": request.top_p,
                    "max_tokens": request.max_tokens, "seed": request.seed}
        body.update({name: value for name, value in sampling.items() if value is not None})
        if request.logprobs:
            body["logprobs"] = True
            if request.top_logprobs is not None:
                body["top_logprobs"] = request.top_logprobs
            if self.token_ids is not False:
                body.update(_VLLM_EXTRAS)
        if request.tools:
            body["tools"] = request.tools
        body.update(self.extra_body)
        return body

    async def complete(self, messages: list[Message], request: CompletionRequest) -> Completion:
        body = self._body(messages, request)
        started = time.perf_counter()
        retries: list[CallRetry] = []
        data = await self._post(body, retries)
        elapsed = (time.perf_counter() - started) * 1000
        completion = self._completion(data, elapsed)
        completion.retries = retries
        return completion

    async def probe(self, timeout: float = 10.0) -> None:
        """Whether the server is there: `GET /models`, answered with any status but 401/403.

        Raises `ModelUnreachable` when nothing answers (refused, no route, no name, no answer
        in `timeout` s) and `Unauthorized` when the server refuses the key: either way no
        episode could reach the model, so a run stops before it starts a sandbox."""
        try:
            response = await self._client.get(f"{self.base_url}/models", timeout=timeout)
        except httpx.TransportError as exc:
            raise ModelUnreachable(f"the model server {self.base_url} cannot be reached: {type(exc).__name__}: "
                                   f"{exc or 'no answer'}", details={"base_url": self.base_url}) from exc
        if response.status_code in (401, 403):
            raise Unauthorized(f"the model server {self.base_url} refused the API key (HTTP {response.status_code}): "
                               f"{response.text[:300]}")

    async def _post(self, body: dict[str, Any], retries: list[CallRetry]) -> dict[str, Any]:
        url = f"{self.base_url}/chat/completions"
        attempt = 0
        while True:
            delay: float | None = None
            failed: CallRetry
            try:
                response = await self._client.post(url, json=body)
            except httpx.ConnectTimeout as exc:
                if attempt >= self.max_retries:
                    raise Timeout(f"model server {self.base_url} did not accept a connection",
                                  details=_retried(retries)) from exc
                failed = CallRetry(error=f"{type(exc).__name__}: no connection accepted", t=time.time())
            except httpx.TimeoutException as exc:  # a generation that overran: retrying would overrun again
                raise Timeout(f"model server {self.base_url} did not answer in time: {exc!r}",
                              details=_retried(retries)) from exc
            except httpx.TransportError as exc:
                if attempt >= self.max_retries:
                    raise InternalError(f"model server {self.base_url} unreachable: {exc!r}",
                                        details=_retried(retries)) from exc
                failed = CallRetry(error=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
                                   t=time.time())
            else:
                if response.status_code < 400:
                    try:
                        data = response.json()
                    except ValueError:
                        raise InternalError(f"model server sent non-JSON: {response.text[:300]!r}") from None
                    if not isinstance(data, dict):
                        raise InternalError(f"model server sent JSON that is not an object: {response.text[:300]!r}")
                    if self.token_ids is None and any(k in body for k in _VLLM_EXTRAS):
                        self.token_ids = True
                    return data
                if response.status_code == 400 and self.token_ids is None and any(k in body for k in _VLLM_EXTRAS):
                    # the server does not take vLLM's token-id fields: ask again without
                    self.token_ids = False
                    body = {k: v for k, v in body.items() if k not in _VLLM_EXTRAS}
                    continue
                if response.status_code not in _RETRY_STATUS or attempt >= self.max_retries:
                    detail = response.text[:500]
                    if response.status_code == 429:
                        raise Capacity(f"model server rate-limited us {attempt + 1} times: {detail}",
                                       details=_retried(retries))
                    raise InternalError(f"model server answered HTTP {response.status_code}: {detail}",
                                        details=_retried(retries))
                delay = _retry_after(response)
                failed = CallRetry(error=f"HTTP {response.status_code}: {response.text[:200]}".rstrip(": "),
                                   status=response.status_code, t=time.time())
            if delay is None:
                delay = self.backoff_s * (2**attempt) * (0.75 + 0.5 * random.random())
            delay = min(delay, self.max_backoff_s)
            retries.append(failed.model_copy(update={"backoff_ms": round(delay * 1000, 3)}))
            # backoff between retries is the point here: the server asked us to wait
            await asyncio.sleep(delay)
            attempt += 1

    def _completion(self, data: dict[str, Any], elapsed_ms: float) -> Completion:
        try:
            choice = data["choices"][0]
            message = choice.get("message") or {}
        except (KeyError, IndexError, TypeError):
            raise InternalError(f"model server answer has no choices: {str(data)[:300]}") from None
        content = message.get("content")
        if isinstance(content, list):  # some servers return content parts
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        text = content or ""
        if reasoning and "<think>" not in text:
            text = f"<think>{reasoning}</think>\n{text}"
        usage = data.get("usage") or {}
        tokens = None
        if "prompt_tokens" in usage:
            details = usage.get("prompt_tokens_details")
            image = details.get("image_tokens") if isinstance(details, dict) else None
            tokens = TokenCounts(prompt=int(usage.get("prompt_tokens") or 0),
                                 completion=int(usage.get("completion_tokens") or 0),
                                 image=int(image) if isinstance(image, int) and image >= 0 else None)
        logprobs = None
        raw_logprobs = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), dict) else None
        if raw_logprobs:
            logprobs = [_token_logprob(item) for item in raw_logprobs]
        token_ids = choice.get("token_ids")
        if token_ids is None and logprobs and all(t.token_id is not None for t in logprobs):
            token_ids = [t.token_id for t in logprobs]
        tool_calls = message.get("tool_calls") or None
        return Completion(
            text=text,
            tool_calls=tool_calls,
            tokens=tokens,
            logprobs=logprobs,
            token_ids=[int(t) for t in token_ids] if token_ids is not None else None,
            prompt_token_ids=data.get("prompt_token_ids") or choice.get("prompt_token_ids"),
            finish_reason=choice.get("finish_reason"),
            model=data.get("model"),
            timings_ms={"http": elapsed_ms},
        )

    async def aclose(self) -> None:
        await self._client.aclose()


def from_spec(rest: str, **kw: Any) -> Any:
    """`make_policy("openai:MODEL@BASE_URL", family=..., ...)`: this backend under a ModelPolicy."""
    from cua.policy.engine import ModelPolicy

    model, at, base_url = rest.partition("@")
    if not model or not at or not base_url:
        raise ValueError(f"bad openai policy spec 'openai:{rest}': expected openai:MODEL@BASE_URL")
    backend_kw = {k: kw.pop(k) for k in list(kw) if k in OpenAIBackend.OPTION_NAMES}
    return ModelPolicy(OpenAIBackend(base_url=base_url, model=model, **backend_kw), **kw)
