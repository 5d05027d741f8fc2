"""The policy server: FastAPI over any `Policy`, behind a bearer token, on loopback.

Endpoints (all but /v1/health need ``Authorization: Bearer TOKEN``):

- ``POST /v1/act``: multipart (a ``request`` JSON part and a ``screenshot`` file part)
  or JSON (screenshot as base64). Answers a `PolicyStep`.
- ``POST /v1/sessions/{id}/reset``: forget a session's history.
- ``GET /v1/metrics``: calls, parse errors and backend errors by family, tokens, and
  the server's own overhead.
- ``WS /v1/ws``: the same over one socket: a JSON ``{"op": "act", "id": .., ...}``
  header, then the screenshot as one binary frame; replies ``{"id", "ok", "step"}``.
  Several requests may be in flight on one socket (distinct ``id``s).

Exposure (`cua.exposure`, the same rules as the sandbox server): every request and
websocket handshake whose browser ``Origin`` is not on ``allowed_origins`` is refused
with 403, before and regardless of the token, so no web page -- not even one inside a
sandbox -- can call the policy (and spend its model budget); on a loopback bind the
``Host`` must name loopback too (DNS rebinding). The token is never optional, so no
bind serves without auth.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any, Protocol, runtime_checkable

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.middleware.base import RequestResponseEndpoint
from starlette.types import ASGIApp, Receive, Scope, Send

from cua.errors import BadRequest, CuaError, ErrorCode, Forbidden, InternalError, Unauthorized
from cua.exposure import OriginPolicy, bearer_token, generate_token, token_matches
from cua.policy.base import Policy, PolicyStep
from cua.policy.engine import PolicyMetrics
from cua.policy.wire import ActRequest, decode_act_request

__all__ = ["create_app", "generate_token"]

#: Largest request accepted (a 4K PNG screenshot is well under this).
MAX_REQUEST_BYTES = 64 * 1024 * 1024

_STATUS = {
    ErrorCode.BAD_REQUEST: 400,
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.UNSUPPORTED: 400,
    ErrorCode.CANCELLED: 499,
    ErrorCode.TIMEOUT: 504,
    ErrorCode.CAPACITY: 503,
}


@runtime_checkable
class Metered(Protocol):
    """A policy that counts its calls and parse errors (ModelPolicy, ScriptedPolicy)."""

    @property
    def metrics(self) -> PolicyMetrics: ...


def _error_body(error: CuaError) -> dict[str, Any]:
    return {"error": error.to_dict()}


def _as_cua_error(exc: BaseException) -> CuaError:
    if isinstance(exc, CuaError):
        return exc
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return BadRequest(f"invalid {'.'.join(map(str, first['loc']))}: {first['msg']}")
    return InternalError(f"{type(exc).__name__}: {exc}")


def _error_response(error: CuaError) -> JSONResponse:
    status = _STATUS.get(error.code, 400 if error.fault == "client" else 502)
    return JSONResponse(_error_body(error), status_code=status)


class _Overhead:
    """Server time per call outside the policy itself (parsing, encoding, transport)."""

    def __init__(self) -> None:
        self.samples: deque[float] = deque(maxlen=2000)

    def add(self, total_ms: float, policy_ms: float) -> None:
        self.samples.append(max(0.0, total_ms - policy_ms))

    def p50(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None


class _OriginGuard:
    """Refuses browser-made requests by `OriginPolicy`, outside every route and before the
    token is looked at. A refused websocket is closed before it is accepted, which the
    client sees as HTTP 403."""

    def __init__(self, app: ASGIApp, origins: OriginPolicy) -> None:
        self.app = app
        self.origins = origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            why = self.origins.refusal_for_headers(scope.get("headers", ()))
            if why is not None:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008, "reason": why})
                else:
                    await _error_response(Forbidden(why))(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(
    policy: Policy, *, token: str, info: dict[str, Any] | None = None, host: str = "127.0.0.1",
    allowed_origins: Iterable[str] = (),
) -> FastAPI:
    """The ASGI app serving `policy`. `info` is shown by /v1/health (backend, family).
    `host` is the address it will be bound to (a loopback bind checks the Host header);
    `allowed_origins` the browser origins (``scheme://host[:port]``) it answers.
    Raises ValueError for an empty token or a malformed origin."""
    if not token:
        raise ValueError("a policy server needs a token")
    origins = OriginPolicy.for_bind(host, allowed_origins)
    overhead = _Overhead()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await policy.aclose()

    app = FastAPI(title="cua policy server", lifespan=lifespan, docs_url=None, redoc_url=None)
    def authorized(header: str | None) -> bool:
        return token_matches(token, bearer_token(header))

    async def run_act(request: ActRequest, received: float) -> PolicyStep:
        started = time.perf_counter()
        step = await policy.act(request.session_id, request.instruction, request.observation, request.options)
        policy_ms = (time.perf_counter() - started) * 1000
        step.timings_ms["policy"] = policy_ms
        step.timings_ms["server_decode"] = (started - received) * 1000
        return step

    @app.middleware("http")
    async def guard(request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.url.path != "/v1/health" and not authorized(request.headers.get("authorization")):
            return _error_response(Unauthorized("missing or wrong bearer token"))
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_REQUEST_BYTES:
            return _error_response(BadRequest(f"request larger than {MAX_REQUEST_BYTES} bytes"))
        return await call_next(request)

    @app.get("/v1/health")
    async def health() -> dict[str, Any]:
        return {"ok": True, **(info or {})}

    @app.post("/v1/act")
    async def act(request: Request) -> Response:
        received = time.perf_counter()
        try:
            content_type = request.headers.get("content-type", "")
            if content_type.startswith("multipart/form-data"):
                async with request.form(max_files=1, max_fields=4, max_part_size=MAX_REQUEST_BYTES) as form:
                    header = form.get("request")
                    upload = form.get("screenshot")
                    if header is None:
                        raise BadRequest("multipart request needs a `request` part")
                    header_text = header if isinstance(header, str) else (await header.read()).decode()
                    data = None if upload is None or isinstance(upload, str) else await upload.read()
                    parsed = decode_act_request(header_text, data)
            else:
                parsed = decode_act_request(await request.body())
            step = await run_act(parsed, received)
        except Exception as exc:  # every failure answers with a typed error body
            return _error_response(_as_cua_error(exc))
        step.timings_ms["server_total"] = (time.perf_counter() - received) * 1000
        overhead.add(step.timings_ms["server_total"], step.timings_ms["policy"])
        return Response(step.model_dump_json(), media_type="application/json")

    @app.post("/v1/sessions/{session_id:path}/reset")
    async def reset(session_id: str) -> Response:
        await policy.reset(session_id)
        return Response(status_code=204)

    @app.get("/v1/metrics")
    async def metrics() -> dict[str, Any]:
        body = policy.metrics.snapshot() if isinstance(policy, Metered) else {}
        return {**body, "server_overhead_p50_ms": overhead.p50(), **(info or {})}

    @app.websocket("/v1/ws")
    async def ws(socket: WebSocket) -> None:
        header = socket.headers.get("authorization")
        query = socket.query_params.get("token")
        if not (authorized(header) or (query is not None and token_matches(token, query))):
            await socket.close(code=4401, reason="missing or wrong token")
            return
        await socket.accept()
        send_lock = asyncio.Lock()
        tasks: set[asyncio.Task[None]] = set()

        async def send(message: dict[str, Any] | str) -> None:
            async with send_lock:
                await socket.send_text(message if isinstance(message, str) else json.dumps(message))

        async def handle_act(request_id: Any, parsed: ActRequest, received: float) -> None:
            try:
                step = await run_act(parsed, received)
            except Exception as exc:  # reported to the client, the socket stays open
                await send({"id": request_id, "ok": False, "error": _as_cua_error(exc).to_dict()})
                return
            step.timings_ms["server_total"] = (time.perf_counter() - received) * 1000
            overhead.add(step.timings_ms["server_total"], step.timings_ms["policy"])
            await send(f'{{"id": {json.dumps(request_id)}, "ok": true, "step": {step.model_dump_json()}}}')

        async def next_frame() -> tuple[str | None, bytes | None]:
            frame = await socket.receive()
            if frame["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(frame.get("code", 1000))
            return frame.get("text"), frame.get("bytes")

        try:
            while True:
                text, _ = await next_frame()
                received = time.perf_counter()
                request_id: Any = None
                try:
                    if text is None:
                        raise BadRequest("expected a JSON text frame (a binary frame may only follow an act header)")
                    message = json.loads(text)
                    if not isinstance(message, dict):
                        raise BadRequest("a message must be a JSON object")
                    request_id = message.get("id")
                    op = message.get("op")
                    if op == "act":
                        shot = (message.get("observation") or {}).get("screenshot")
                        data = None
                        if isinstance(shot, dict) and "data" not in shot:
                            _, data = await next_frame()
                            if data is None:
                                raise BadRequest("expected the screenshot as a binary frame after the act header")
                        parsed = decode_act_request(message, data)
                        task = asyncio.create_task(handle_act(request_id, parsed, received))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                    elif op == "reset":
                        session_id = message.get("session_id")
                        if not isinstance(session_id, str) or not session_id:
                            raise BadRequest("reset needs a session_id")
                        await policy.reset(session_id)
                        await send({"id": request_id, "ok": True})
                    else:
                        raise BadRequest(f"unknown op {op!r} (expected act or reset)")
                except json.JSONDecodeError as exc:
                    await send({"id": request_id, "ok": False, "error": BadRequest(f"message is not JSON: {exc.msg}").to_dict()})
                except Exception as exc:  # answered on the socket, which stays open
                    await send({"id": request_id, "ok": False, "error": _as_cua_error(exc).to_dict()})
        except WebSocketDisconnect:
            pass  # the client left; its in-flight requests are cancelled below
        finally:
            for task in list(tasks):
                task.cancel()

    app.add_middleware(_OriginGuard, origins=origins)  # added last: the outermost layer
    return app
