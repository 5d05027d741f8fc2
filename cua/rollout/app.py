"""The rollout server: `POST /rollouts`, environment handles, the token proxy, one app.

HTTP:
- `POST /rollouts` (a `RolloutRequest`) -> `RolloutResponse`: groups of whole episodes. With
  an `Idempotency-Key` header a retry joins or replays it, never runs it twice
  (`cua.rollout.ledger`); without one, a request whose client hangs up is cancelled.
- `POST /policy_version {"version": N}`: the trainer's newest policy (staleness bound).
- `POST /envs {"task", "seed", "reward", "isolation", "terminate_on_success"}`, `POST /envs/{id}/reset {"task", "seed"}`
  or `{"snapshot"}`, `POST /envs/{id}/step {"action"}`, `POST /envs/{id}/snapshot`,
  `POST /envs/{id}/fork {"k"}`, `DELETE /envs/{id}`.
- `/proxy/{rollout_id}/v1/chat/completions`: the token-faithful proxy (`cua.rollout.proxy`).
- `GET /health`.

Websocket `/ws`: the same operations as JSON messages `{"id": 1, "op": "rollouts" |
"create" | "reset" | "step" | "snapshot" | "fork" | "close" | "policy_version", ...args}`,
answered `{"id": 1, "result": ...}` or `{"id": 1, "error": {code, message, details, fault}}`;
many may be in flight on one socket.

Errors are the typed `cua.errors` (client faults 400/404/409, infrastructure 502/503).

Exposure: the same rules as `cua serve` and `cua policy serve` (`cua.exposure`), applied
outside every route, the token proxy's included, before any route runs:

- a browser `Origin` not on `allowed_origins` is refused (403; a websocket handshake is
  closed before it is accepted), with or without the token, and on a loopback bind a
  `Host` that is not loopback is refused too (DNS rebinding);
- every route but `GET /health` needs the token: `Authorization: Bearer TOKEN` over HTTP
  (the token proxy's routes included: an OpenAI client passes it as its `api_key`), that
  header or `?token=TOKEN` on the websocket. HTTP never takes the token from the URL: a
  page's no-cors request can carry neither a header nor, then, the token;
- `token=None` (`cua rollout serve --no-auth`) serves without auth, on loopback only
  unless `unsafe_public_no_auth` (`check_bind`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from typing import Any

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from cua.errors import BadRequest, Cancelled, CuaError, ErrorRecord, UnknownSandbox
from cua.exposure import OriginPolicy, check_bind
from cua.guard import ServiceGuard
from cua.rollout.envs import EnvHandles
from cua.rollout.ledger import KeyConflict
from cua.rollout.models import (
    CreateEnvRequest,
    ForkEnvRequest,
    PolicyVersion,
    PolicyVersionRequest,
    ResetEnvRequest,
    RolloutRequest,
    StepEnvRequest,
)
from cua.rollout.proxy import TokenProxy
from cua.rollout.service import RolloutService, StalePolicy

__all__ = ["OPEN_PATHS", "create_app"]

#: Routes answered without the token (still under the Origin and Host rules).
OPEN_PATHS = frozenset({"/health"})


def _status(exc: CuaError) -> int:
    if isinstance(exc, (StalePolicy, KeyConflict)):
        return 409
    if isinstance(exc, UnknownSandbox):
        return 404
    if exc.fault == "infra":
        return 503 if exc.retryable else 502
    return 400


def create_app(service: RolloutService, envs: EnvHandles, proxy: TokenProxy, *, token: str | None,
               host: str = "127.0.0.1", allowed_origins: Iterable[str] = (), unsafe_public_no_auth: bool = False,
               lifespan: Callable[[], contextlib.AbstractAsyncContextManager[Any]] | None = None) -> FastAPI:
    """The rollout service's app for a bind to `host`. `token` None serves without auth
    (refused off loopback unless `unsafe_public_no_auth`); raises ValueError for that, an
    empty token or a malformed origin."""
    if token == "":
        raise ValueError("an empty token: pass None to serve without auth")
    check_bind(host, auth=token is not None, unsafe_public_no_auth=unsafe_public_no_auth)
    origins = OriginPolicy.for_bind(host, allowed_origins)
    refused: Counter[str] = Counter()

    @contextlib.asynccontextmanager
    async def _lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if lifespan is not None:
                await stack.enter_async_context(lifespan())
            try:
                yield
            finally:
                await envs.aclose()
                await service.aclose()
                await proxy.aclose()

    app = FastAPI(title="cua rollout service", lifespan=_lifespan)
    proxy.install(app)

    @app.exception_handler(CuaError)
    async def _cua_error(_: Request, exc: CuaError) -> JSONResponse:
        return JSONResponse({"error": _error_json(exc)}, _status(exc))

    @app.exception_handler(ValidationError)
    async def _invalid(_: Request, exc: ValidationError) -> JSONResponse:
        # no context: a validator's own exception is in it, and is not JSON
        errors = exc.errors(include_url=False, include_context=False)
        return JSONResponse({"error": _error_json(BadRequest(f"invalid request: {exc.error_count()} error(s)",
                                                            details={"errors": errors}))}, 400)

    ops = _Ops(service, envs)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"ok": True, "auth": token is not None, "policy_version": service.policy_version,
                "live_rollouts": len(service.live), "refused": dict(refused),
                "keyed_requests": {"running": service.ledger.running, "replayed": service.ledger.replayed}}

    @app.post("/rollouts")
    async def rollouts(request: Request) -> Any:
        args = await _json(request)
        key = request.headers.get("idempotency-key")
        if key is not None:
            args["idempotency_key"] = key
        return await _while_connected(request, ops.answer("rollouts", args))

    @app.get("/curriculum")
    async def curriculum() -> Any:
        return await ops.answer("curriculum", {})

    @app.post("/policy_version")
    async def policy_version(request: Request) -> Any:
        return await ops.answer("policy_version", await _json(request))

    @app.post("/envs")
    async def create(request: Request) -> Any:
        return await ops.answer("create", await _json(request))

    @app.post("/envs/{env_id}/{op}")
    async def env_op(env_id: str, op: str, request: Request) -> Any:
        if op not in ("reset", "step", "snapshot", "fork"):
            raise BadRequest(f"unknown operation {op!r}")
        return await ops.answer(op, {**await _json(request), "env_id": env_id})

    @app.delete("/envs/{env_id}")
    async def close(env_id: str) -> Any:
        return await ops.answer("close", {"env_id": env_id})

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await socket.accept()
        tasks: set[asyncio.Task[None]] = set()
        send_lock = asyncio.Lock()

        async def answer(message: dict[str, Any]) -> None:
            rid = message.get("id")
            try:
                op = message.get("op")
                if not isinstance(op, str):
                    raise BadRequest("a message needs an `op`")
                args = {k: v for k, v in message.items() if k not in ("id", "op")}
                reply: dict[str, Any] = {"id": rid, "result": await ops.answer(op, args)}
            except CuaError as exc:
                reply = {"id": rid, "error": _error_json(exc)}
            except ValidationError as exc:
                reply = {"id": rid, "error": _error_json(BadRequest(f"invalid request: {exc.error_count()} error(s)"))}
            async with send_lock:
                with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                    await socket.send_json(reply)

        try:
            while True:
                message = await socket.receive_json()
                if not isinstance(message, dict):
                    await socket.send_json({"id": None, "error": _error_json(BadRequest("messages are JSON objects"))})
                    continue
                task = asyncio.create_task(answer(message))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except (WebSocketDisconnect, ValueError):
            pass
        finally:
            for task in tasks:
                task.cancel()

    app.add_middleware(ServiceGuard, origins=origins, token=token, refused=refused,  # added last: the outermost layer
                       open_paths=OPEN_PATHS)
    return app


async def _while_connected(request: Request, work: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
    """`work`'s answer, unless the client hangs up first: then the work is cancelled (a
    group's rollouts stop and close their sandboxes) rather than run on to an answer nobody
    reads, that the curriculum would count and the disk keep beside the group the trainer
    asks for again. The request's body has been read: the next ASGI message is the disconnect."""

    async def gone() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    task, watch = asyncio.ensure_future(work), asyncio.ensure_future(gone())
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if task.cancelled():
        raise Cancelled("the client disconnected: its request was cancelled")
    return task.result()


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json() if await request.body() else {}
    except ValueError:
        raise BadRequest("the body is not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the body is a JSON object")
    return body


class _Ops:
    """One table of operations behind both HTTP and the websocket."""

    def __init__(self, service: RolloutService, envs: EnvHandles) -> None:
        self.service, self.envs = service, envs

    async def answer(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        """`call`'s answer as the JSON both HTTP and the websocket send."""
        return (await self.call(op, args)).model_dump(mode="json")

    async def call(self, op: str, args: dict[str, Any]) -> BaseModel:
        """Run `op` with `args` (validated by its `cua.rollout.models` request model); its
        answer is that route's response model (`cua.rollout.models.ROUTES`)."""
        service, envs = self.service, self.envs
        if op == "rollouts":
            rest = dict(args)
            key = rest.pop("idempotency_key", None)
            request = RolloutRequest.model_validate(rest)
            if key is None:
                return await service.run(request)
            if not isinstance(key, str):
                raise BadRequest("`idempotency_key` is a string", details={"idempotency_key": repr(key)[:200]})
            return await service.ledger.run(key, request, lambda: service.run(request))
        if op == "policy_version":
            return PolicyVersion(policy_version=service.set_policy_version(
                PolicyVersionRequest.model_validate(args).version))
        if op == "curriculum":
            if args:
                raise BadRequest("`curriculum` takes no arguments", details={"unexpected": sorted(args)})
            return service.curriculum.view()
        if op == "create":
            created = CreateEnvRequest.model_validate(args)
            return await envs.create(created.task, created.seed, reward=created.reward, isolation=created.isolation,
                                     terminate_on_success=created.terminate_on_success)
        if op not in ("reset", "step", "snapshot", "fork", "close"):
            raise BadRequest(f"unknown operation {op!r}")
        rest = dict(args)
        env_id = rest.pop("env_id", None)
        if not isinstance(env_id, str):
            raise BadRequest("missing `env_id`")
        if op == "reset":
            reset = ResetEnvRequest.model_validate(rest)
            return await envs.reset(env_id, task=reset.task, seed=reset.seed, snapshot=reset.snapshot)
        if op == "step":
            return await envs.step(env_id, StepEnvRequest.model_validate(rest).action)
        if op == "fork":
            return await envs.fork(env_id, ForkEnvRequest.model_validate(rest).k)
        if rest:
            raise BadRequest(f"`{op}` takes no arguments but `env_id`", details={"unexpected": sorted(rest)})
        return await (envs.snapshot(env_id) if op == "snapshot" else envs.close(env_id))


def _error_json(exc: CuaError) -> dict[str, Any]:
    """An error reply's `error`: the record a run keeps of it (`ErrorRecord`), as JSON."""
    return ErrorRecord.of(exc).model_dump(mode="json", exclude_none=True)
