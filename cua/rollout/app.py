"""The rollout server: `POST /rollouts`, environment handles, the token proxy, one app.

HTTP:
- `POST /rollouts` (a `RolloutRequest`) -> `RolloutResponse`: groups of whole episodes.
- `POST /policy_version {"version": N}`: the trainer's newest policy (staleness bound).
- `POST /envs {"task", "seed", "reward", "isolation"}`, `POST /envs/{id}/reset {"task", "seed"}`
  or `{"snapshot"}`, `POST /envs/{id}/step {"action"}`, `POST /envs/{id}/snapshot`,
  `POST /envs/{id}/fork {"k"}`, `DELETE /envs/{id}`.
- `/proxy/{rollout_id}/v1/chat/completions`: the token-faithful proxy (`cua.rollout.proxy`).
- `GET /health`.

Websocket `/ws`: the same operations as JSON messages `{"id": 1, "op": "rollouts" |
"create" | "reset" | "step" | "snapshot" | "fork" | "close" | "policy_version", ...args}`,
answered `{"id": 1, "result": ...}` or `{"id": 1, "error": {code, message, details, fault}}`;
many may be in flight on one socket.

Errors are the typed `cua.errors` (client faults 400/404/409, infrastructure 502/503).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from cua.episode.episode import error_dict
from cua.errors import BadRequest, CuaError, UnknownSandbox
from cua.rollout.envs import EnvHandles
from cua.rollout.models import RolloutRequest
from cua.rollout.proxy import TokenProxy
from cua.rollout.service import RolloutService, StalePolicy

__all__ = ["create_app"]


def _status(exc: CuaError) -> int:
    if isinstance(exc, StalePolicy):
        return 409
    if isinstance(exc, UnknownSandbox):
        return 404
    if exc.fault == "infra":
        return 503 if exc.retryable else 502
    return 400


def create_app(service: RolloutService, envs: EnvHandles, proxy: TokenProxy,
               lifespan: Callable[[], contextlib.AbstractAsyncContextManager[Any]] | None = None) -> FastAPI:
    @contextlib.asynccontextmanager
    async def _lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if lifespan is not None:
                await stack.enter_async_context(lifespan())
            try:
                yield
            finally:
                await envs.aclose()
                await proxy.aclose()

    app = FastAPI(title="cua rollout service", lifespan=_lifespan)
    proxy.install(app)

    @app.exception_handler(CuaError)
    async def _cua_error(_: Request, exc: CuaError) -> JSONResponse:
        return JSONResponse({"error": error_dict(exc)}, _status(exc))

    @app.exception_handler(ValidationError)
    async def _invalid(_: Request, exc: ValidationError) -> JSONResponse:
        return JSONResponse({"error": error_dict(BadRequest(f"invalid request: {exc.error_count()} error(s)",
                                                            details={"errors": exc.errors(include_url=False)}))},
                            400)

    ops = _Ops(service, envs)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"ok": True, "policy_version": service.policy_version, "live_rollouts": len(service.live)}

    @app.post("/rollouts")
    async def rollouts(request: Request) -> Any:
        return await ops.call("rollouts", await _json(request))

    @app.post("/policy_version")
    async def policy_version(request: Request) -> Any:
        return await ops.call("policy_version", await _json(request))

    @app.post("/envs")
    async def create(request: Request) -> Any:
        return await ops.call("create", await _json(request))

    @app.post("/envs/{env_id}/{op}")
    async def env_op(env_id: str, op: str, request: Request) -> Any:
        if op not in ("reset", "step", "snapshot", "fork"):
            raise BadRequest(f"unknown operation {op!r}")
        return await ops.call(op, {**await _json(request), "env_id": env_id})

    @app.delete("/envs/{env_id}")
    async def close(env_id: str) -> Any:
        return await ops.call("close", {"env_id": env_id})

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
                reply: dict[str, Any] = {"id": rid, "result": await ops.call(op, args)}
            except CuaError as exc:
                reply = {"id": rid, "error": error_dict(exc)}
            except ValidationError as exc:
                reply = {"id": rid, "error": error_dict(BadRequest(f"invalid request: {exc.error_count()} error(s)"))}
            async with send_lock:
                with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                    await socket.send_json(reply)

        try:
            while True:
                message = await socket.receive_json()
                if not isinstance(message, dict):
                    await socket.send_json({"id": None, "error": error_dict(BadRequest("messages are JSON objects"))})
                    continue
                task = asyncio.create_task(answer(message))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except (WebSocketDisconnect, ValueError):
            pass
        finally:
            for task in tasks:
                task.cancel()

    return app


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

    async def call(self, op: str, args: dict[str, Any]) -> Any:
        service, envs = self.service, self.envs
        if op == "rollouts":
            return (await service.run(RolloutRequest.model_validate(args))).model_dump(mode="json")
        if op == "policy_version":
            return {"policy_version": service.set_policy_version(int(_arg(args, "version")))}
        if op == "create":
            return await envs.create(str(_arg(args, "task")), int(args.get("seed", 0)),
                                     reward=args.get("reward", "sparse"), isolation=args.get("isolation"))
        env_id = str(_arg(args, "env_id"))
        if op == "reset":
            return await envs.reset(env_id, task=args.get("task"), seed=args.get("seed"), snapshot=args.get("snapshot"))
        if op == "step":
            return await envs.step(env_id, _arg(args, "action"))
        if op == "snapshot":
            return await envs.snapshot(env_id)
        if op == "fork":
            return await envs.fork(env_id, int(args.get("k", 1)))
        if op == "close":
            return await envs.close(env_id)
        raise BadRequest(f"unknown operation {op!r}")


def _arg(args: dict[str, Any], name: str) -> Any:
    if name not in args:
        raise BadRequest(f"missing `{name}`")
    return args[name]
