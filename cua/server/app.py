"""The server application: FastAPI routes around one SandboxManager, and ways to run it.

- `create_app(settings)`: the ASGI app (`/v1/ws` websocket; REST `/v1/health`,
  `/v1/sandboxes`, `/v1/metrics`). The manager starts and shuts down with the app.
- `serve_in_background(...)`: an async context manager running a real server on a free
  loopback port in the current event loop; yields `(url, token)`. For tests, `cua eval`
  and benchmarks.
- `serve_in_thread(...)`: the same on a private event-loop thread, for synchronous code
  (the sync facade, scripts) that would otherwise block the server's loop.
- `run(settings)`: the blocking `cua serve` entry point.

Exposure rules (`check_exposure`): a server bound off loopback must require a token,
unless `unsafe_public_no_auth` says otherwise (logged loudly at startup). Every HTTP
request and websocket handshake that carries a browser `Origin` not on
`allowed_origins` is refused (403), with or without auth, so no web page -- not even
one inside a sandbox of this server -- can drive it; on a loopback bind the `Host` must
name loopback too, which defeats DNS rebinding.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import uvicorn
from fastapi import Depends, FastAPI, HTTPException, Request, WebSocket
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

import cua
from cua import protocol as p
from cua.exposure import OriginPolicy, check_bind, is_loopback, normalize_origins
from cua.listen import tcp_listener
from cua.server.auth import Grant, TokenStore, bearer_token, generate_token
from cua.server.connection import TRANSPORT_EXTENSION, Connection, ConnectionLimits
from cua.server.heap import HeapKeeper
from cua.server.manager import SandboxManager
from cua.server.metrics import Metrics
from cua.server_process import RunningServer, free_port, serve_in_subprocess

__all__ = ["RunningServer", "ServerSettings", "check_exposure", "create_app", "free_port", "is_loopback", "run",
           "serve_in_background", "serve_in_subprocess", "serve_in_thread"]

log = logging.getLogger("cua.server")


@dataclass
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8765
    #: None disables auth (only on an explicit request: `cua serve --no-auth`).
    token: str | None = field(default_factory=generate_token)
    max_sandboxes: int = 16
    #: Seconds of inactivity after which a sandbox is closed; None: never.
    idle_timeout: float | None = 900.0
    max_message_bytes: int = p.DEFAULT_MAX_MESSAGE_BYTES
    name: str = f"cua/{cua.__version__}"
    #: Browser origins (e.g. "http://localhost:5173") allowed to open the websocket or call
    #: the REST API. Requests without an Origin header (every non-browser client) pass.
    allowed_origins: tuple[str, ...] = ()
    #: Issued tokens (`cua token issue --file F`); re-read when it changes.
    tokens_file: Path | None = None
    #: Serve off loopback without auth: an explicit, logged opt-out of `check_exposure`.
    unsafe_public_no_auth: bool = False
    limits: ConnectionLimits = field(default_factory=ConnectionLimits)
    #: Freeze the server's long-lived objects out of the cycle collector's walks (heap.py).
    #: The process's collector state is global: `serve_in_background`, which shares a
    #: process with its caller, leaves it off unless asked.
    freeze_heap: bool = True

    @property
    def ws_transport_limit(self) -> int:
        """The transport refuses (closes on) frames above this; frames between
        `max_message_bytes` and it get a `bad_request` and the connection stays."""
        return max(4 * self.max_message_bytes, 16 * 1024 * 1024)


def check_exposure(settings: ServerSettings) -> None:
    """Refuse a server that anyone on the network could drive; raises ValueError."""
    check_bind(settings.host, auth=settings.token is not None, unsafe_public_no_auth=settings.unsafe_public_no_auth)
    normalize_origins(settings.allowed_origins)


class _OriginGuard:
    """Refuses browser-made requests: an `Origin` not on the allow-list, or (on a loopback
    bind) a `Host` that is not loopback (a DNS-rebound page). Websocket handshakes are
    refused before they are accepted (the client sees HTTP 403)."""

    def __init__(self, app: ASGIApp, settings: ServerSettings, metrics: Metrics) -> None:
        self.app = app
        self.origins = OriginPolicy.for_bind(settings.host, settings.allowed_origins)
        self.metrics = metrics

    def _refusal(self, scope: Scope) -> str | None:
        return self.origins.refusal_for_headers(scope.get("headers", ()))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            # The socket under the websocket, so that a peer that stopped reading can be cut
            # off: a close frame cannot reach it through a full send buffer (uvicorn's
            # protocol object is the `self` of its ASGI `send`).
            transport = getattr(getattr(send, "__self__", None), "transport", None)
            if isinstance(transport, asyncio.BaseTransport):
                scope = {**scope, "extensions": {**(scope.get("extensions") or {}), TRANSPORT_EXTENSION: transport}}
        if scope["type"] in ("http", "websocket"):
            why = self._refusal(scope)
            if why is not None:
                self.metrics.refused_origins += 1
                log.warning("refused a %s request to %s: %s", scope["type"], scope.get("path"), why)
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008, "reason": why})
                else:
                    await JSONResponse({"detail": {"code": "forbidden", "message": why}}, status_code=403)(
                        scope, receive, send)
                return
        await self.app(scope, receive, send)


def _require_grant(request: Request) -> Grant:
    tokens: TokenStore = request.app.state.tokens
    grant = tokens.authenticate(bearer_token(request.headers.get("authorization")))
    if grant is None:
        raise HTTPException(status_code=401, detail={"code": "unauthorized", "message": "missing or wrong token"},
                            headers={"WWW-Authenticate": "Bearer"})
    return grant


#: A REST route's caller, from its Bearer token.
Authenticated = Annotated[Grant, Depends(_require_grant)]


def create_app(settings: ServerSettings) -> ASGIApp:
    check_exposure(settings)
    if settings.token is None and not is_loopback(settings.host):
        for line in ("*" * 72, f"cua serve: AUTH IS DISABLED ON {settings.host}, a non-loopback address.",
                     "Anyone who can reach this port controls its sandboxes and runs commands on this host.",
                     "*" * 72):
            log.warning(line)
    metrics = Metrics()
    heap = HeapKeeper(metrics) if settings.freeze_heap else None
    manager = SandboxManager(max_sandboxes=settings.max_sandboxes, idle_timeout=settings.idle_timeout,
                             metrics=metrics, population=heap)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        manager.start()
        if heap is not None:
            heap.start()
        try:
            yield
        finally:
            try:
                await manager.shutdown()
            finally:
                if heap is not None:
                    heap.stop()

    app = FastAPI(title="cua", version=cua.__version__, lifespan=lifespan, docs_url=None, redoc_url=None)
    tokens = TokenStore(settings.token, settings.tokens_file)
    app.state.manager = manager
    app.state.metrics = metrics
    app.state.settings = settings
    app.state.tokens = tokens


    @app.get("/v1/health")
    async def health() -> dict[str, Any]:
        return {"ok": True, "server": settings.name, "protocol": p.PROTOCOL_VERSION, "sandboxes": manager.live,
                "max_sandboxes": settings.max_sandboxes}

    @app.get("/v1/sandboxes")
    async def sandboxes(grant: Authenticated) -> JSONResponse:
        return JSONResponse({"sandboxes": [i.model_dump(mode="json") for i in manager.list_for(grant)]})

    @app.get("/v1/metrics")
    async def get_metrics(grant: Authenticated, format: str = "prometheus") -> Response:
        if not (grant.has("view") or grant.has("admin")):
            raise HTTPException(status_code=403, detail={"code": "forbidden", "message": "metrics need `view` or `admin`"})
        if format == "json":
            return JSONResponse(metrics.as_dict(live=manager.live))
        if format != "prometheus":
            raise HTTPException(status_code=400, detail={"code": "bad_request",
                                                         "message": "format is `prometheus` or `json`"})
        return PlainTextResponse(metrics.prometheus(live=manager.live),
                                 media_type="text/plain; version=0.0.4")

    @app.websocket("/v1/ws")
    async def websocket(ws: WebSocket) -> None:
        connection = Connection(ws, manager, metrics, tokens=tokens, max_message_bytes=settings.max_message_bytes,
                                server_name=settings.name, limits=settings.limits)
        await connection.run()

    return _OriginGuard(app, settings, metrics)


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: an embedded server must not take over
    Ctrl-C of the process that embeds it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _config(settings: ServerSettings, app: ASGIApp) -> uvicorn.Config:
    return uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning", access_log=False,
                          ws="websockets-sansio", ws_max_size=settings.ws_transport_limit,
                          ws_per_message_deflate=False, ws_ping_interval=20.0, ws_ping_timeout=60.0,
                          lifespan="on")


def _settings(token: str | None, auth: bool, overrides: dict[str, Any]) -> ServerSettings:
    settings = ServerSettings(host="127.0.0.1", port=0, **overrides)
    settings.token = (token or generate_token()) if auth else None
    return settings


async def _serve(settings: ServerSettings, ready: asyncio.Event, server_box: list[_Server]) -> None:
    app = create_app(settings)
    server = _Server(_config(settings, app))
    server_box.append(server)
    sock = tcp_listener(settings.host, settings.port, inheritable=True)
    settings.port = sock.getsockname()[1]
    try:
        serve = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not serve.done():
            await asyncio.sleep(0.01)  # uvicorn exposes startup only as this flag
        ready.set()
        await serve
    finally:
        sock.close()


@contextlib.asynccontextmanager
async def serve_in_background(*, token: str | None = None, auth: bool = True,
                              **settings: Any) -> AsyncIterator[RunningServer]:
    """Run a real server on a free loopback port in the current event loop.

    Yields `(url, token)`; other keyword arguments are `ServerSettings` fields
    (max_sandboxes, idle_timeout, max_message_bytes). On exit every sandbox is closed.
    """
    conf = _settings(token, auth, {"freeze_heap": False, **settings})
    ready = asyncio.Event()
    box: list[_Server] = []
    task = asyncio.create_task(_serve(conf, ready, box), name="cua-server")
    waiter = asyncio.create_task(ready.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiter.cancel()
        task.result()  # raises the startup failure
        raise RuntimeError("the server stopped during startup")
    try:
        yield RunningServer(f"ws://127.0.0.1:{conf.port}/v1/ws", conf.token)
    finally:
        box[0].should_exit = True
        await task


@contextlib.contextmanager
def serve_in_thread(*, token: str | None = None, auth: bool = True, **settings: Any) -> Iterator[RunningServer]:
    """`serve_in_background` on a private event-loop thread, for synchronous callers."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    box: dict[str, Any] = {}
    stop = asyncio.Event()

    async def main() -> None:
        try:
            async with serve_in_background(token=token, auth=auth, **settings) as running:
                box["server"] = running
                started.set()
                await stop.wait()
        except BaseException as exc:
            box["error"] = exc
            raise
        finally:
            started.set()

    def target() -> None:
        asyncio.set_event_loop(loop)
        with contextlib.suppress(BaseException):
            loop.run_until_complete(main())
        loop.close()

    thread = threading.Thread(target=target, name="cua-server-thread", daemon=True)
    thread.start()
    started.wait()
    if "error" in box:
        thread.join()
        raise box["error"]
    try:
        yield box["server"]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join()


def run(settings: ServerSettings) -> None:
    """Serve until interrupted (the `cua serve` command)."""
    app = create_app(settings)
    sock = tcp_listener(settings.host, settings.port, inheritable=True)
    try:
        uvicorn.Server(_config(settings, app)).run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn re-raises Ctrl-C after its graceful shutdown; that is the normal exit
    finally:
        sock.close()
