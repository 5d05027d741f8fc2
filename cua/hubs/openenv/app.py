"""The OpenEnv server's app: OpenEnv's own `HTTPEnvServer` over `CuaEnvironment`, guarded.

OpenEnv's server class makes the spec's routes: HTTP `POST /reset`, `POST /step`,
`GET /state`, `GET /health`, `GET /schema`, `GET /metadata`, `/mcp`, and the `/ws`
websocket (messages `reset`, `step`, `state`, `close`; errors typed by `WSErrorCode`:
`CAPACITY_REACHED` past the declared sessions, `VALIDATION_ERROR` for a wrong action or
reset parameter, `EXECUTION_ERROR` for an environment's own error). Using it, rather than
routes of our own, keeps cua on the spec as OpenEnv defines it. Around it:

- the sessions are declared as OpenEnv expects (`ConcurrencyConfig`: `max_concurrent_envs`,
  `session_timeout`); its idle reaper destroys a session idle past the timeout, which closes
  the session's sandbox. The reaper is started by this app's lifespan: `HTTPEnvServer`
  registers it as an `on_startup` hook, which Starlette 1 no longer runs;
- the app's start reads the task registry (off the event loop), and its shutdown closes
  every sandbox still open (`SandboxPool.aclose`);
- HTTP errors are cua's typed errors as JSON, `{"error": ErrorRecord}` (client faults 400,
  capacity 503, other infrastructure faults 502), a bad reset parameter 422;
- the exposure rules and token of the kit's other services (`cua.guard.ServiceGuard`):
  every route but `/health` needs `Authorization: Bearer TOKEN`, or `?token=` on the websocket.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from fastapi import FastAPI, Request, WebSocketDisconnect
from fastapi.responses import JSONResponse
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.types import ConcurrencyConfig
from pydantic import ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

import cua
from cua.errors import CuaError, ErrorRecord
from cua.exposure import OriginPolicy, check_bind
from cua.guard import ServiceGuard
from cua.hubs.openenv.environment import CuaEnvironment, WireError
from cua.hubs.openenv.models import CuaAction, CuaObservation
from cua.hubs.openenv.pool import SandboxPool
from cua.tasks.registry import suites

__all__ = ["create_app"]


def _status(exc: CuaError) -> int:
    if exc.fault == "infra":
        return 503 if exc.retryable else 502
    return 400


def _error(exc: CuaError) -> JSONResponse:
    return JSONResponse({"error": ErrorRecord.of(exc).model_dump(mode="json", exclude_none=True)}, _status(exc))


def create_app(pool: SandboxPool, *, token: str | None, host: str = "127.0.0.1", max_sessions: int = 4,
               idle_timeout_s: float | None = 300.0, allowed_origins: Iterable[str] = (),
               unsafe_public_no_auth: bool = False,
               lifespan: Callable[[], contextlib.AbstractAsyncContextManager[Any]] | None = None) -> FastAPI:
    """The app for a bind to `host`: at most `max_sessions` websocket sessions (and sandboxes:
    the pool's slots), each destroyed after `idle_timeout_s` without a reset or step (None:
    never). `token` None serves without auth (refused off loopback unless
    `unsafe_public_no_auth`); raises ValueError for that, an empty token or a malformed origin.
    `lifespan`, if given, is entered before the first session and left after the last closes."""
    if token == "":
        raise ValueError("an empty token: pass None to serve without auth")
    check_bind(host, auth=token is not None, unsafe_public_no_auth=unsafe_public_no_auth)
    origins = OriginPolicy.for_bind(host, allowed_origins)
    server = HTTPEnvServer(functools.partial(CuaEnvironment, pool), CuaAction, CuaObservation,
                           concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions,
                                                                session_timeout=idle_timeout_s))

    @contextlib.asynccontextmanager
    async def _lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if lifespan is not None:
                await stack.enter_async_context(lifespan())
            await asyncio.to_thread(suites)  # the task registry, read once, before the first reset asks
            server._start_reaper()
            try:
                yield
            finally:
                server._stop_reaper()
                await pool.aclose()

    app = FastAPI(title="cua OpenEnv environment", version=cua.__version__, lifespan=_lifespan)
    server.register_routes(app)

    @app.exception_handler(WireError)
    async def _wire(_: Request, exc: WireError) -> JSONResponse:
        return _error(exc.error)

    @app.exception_handler(CuaError)
    async def _cua(_: Request, exc: CuaError) -> JSONResponse:
        return _error(exc)

    @app.exception_handler(ValidationError)
    async def _invalid(_: Request, exc: ValidationError) -> JSONResponse:
        return JSONResponse({"detail": exc.errors(include_url=False, include_context=False)}, 422)

    app.add_middleware(_GoneClient)
    app.add_middleware(ServiceGuard, origins=origins, token=token, refused=Counter[str]())  # outermost
    return app


class _GoneClient:
    """OpenEnv's websocket route closes the socket after a session ends and expects a socket
    the client already closed to raise RuntimeError; Starlette 1 raises WebSocketDisconnect,
    which would be logged as a crash of the app. The session was destroyed before that close
    (its sandbox released), so a client gone by then is the end of a session, nothing more."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        with contextlib.suppress(WebSocketDisconnect):
            await self.app(scope, receive, send)
