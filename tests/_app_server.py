"""An ASGI app (a bundled app's pages, a live view) on a loopback port from this process, through
uvicorn, for tests that drive it from a real browser or a client: `serving(asgi)` yields the
port, `serving_app(app)` the base URL of a bundled app's pages (as its app host serves them), and
`start_server`/`stop_server` are the same for a test that starts and stops it itself."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn

from cua.listen import tcp_listener
from cua.tasks.apps.base import WebApp, build_asgi

__all__ = ["serving", "serving_app", "start_server", "stop_server"]


async def start_server(asgi: Any) -> tuple[uvicorn.Server, asyncio.Task[None], int]:
    """`asgi` served on a free loopback port, once uvicorn says it has started: (server, its task, port)."""
    sock = tcp_listener("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(asgi, log_level="warning", lifespan="off", access_log=False))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        assert not task.done(), "the server stopped while starting"
        await asyncio.sleep(0.01)  # uvicorn offers no started event, only this flag
    return server, task, int(sock.getsockname()[1])


async def stop_server(server: uvicorn.Server, task: asyncio.Task[None]) -> None:
    server.should_exit = True
    await task


@asynccontextmanager
async def serving(asgi: Any) -> AsyncIterator[int]:
    """`asgi` on a loopback port for the block; yields the port."""
    server, task, port = await start_server(asgi)
    try:
        yield port
    finally:
        await stop_server(server, task)


@asynccontextmanager
async def serving_app(app: WebApp) -> AsyncIterator[str]:
    """A bundled app's pages on a loopback port for the block; yields their base URL."""
    async with serving(build_asgi(app)) as port:
        yield f"http://127.0.0.1:{port}"
