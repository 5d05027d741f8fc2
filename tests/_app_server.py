"""An ASGI app (a bundled app's pages, a live view) on a loopback port from this process, through
uvicorn, for tests that drive it from a real browser or a client: `serving(asgi)` yields the
port, `serving_app(app)` the base URL of a bundled app's pages (as its app host serves them), and
`start_server`/`stop_server` are the same for a test that starts and stops it itself;
`serving_bundled(name, kind)` loads a bundled app by name and serves it, and `open_tab(browser,
url)` opens a page in a fresh context of a real browser."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import uvicorn
from playwright.async_api import Browser, Page

from cua.listen import tcp_listener
from cua.tasks.apps import load_app
from cua.tasks.apps.base import WebApp, build_asgi

__all__ = ["open_tab", "serving", "serving_app", "serving_bundled", "start_server", "stop_server"]

A = TypeVar("A", bound=WebApp)


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


@asynccontextmanager
async def serving_bundled(name: str, kind: type[A]) -> AsyncIterator[tuple[A, str]]:
    """The bundled app `name` (of class `kind`) and the base URL of its pages, for the block."""
    app = load_app(name)
    assert isinstance(app, kind), f"{name} is a {type(app).__name__}, not a {kind.__name__}"
    async with serving_app(app) as base:
        yield app, base


async def open_tab(browser: Browser, url: str, width: int | None = 1280) -> Page:
    """`url` in a new page of a fresh context (`width` x 900, or Playwright's default viewport
    for None)."""
    context = await browser.new_context(viewport={"width": width, "height": 900} if width else None)
    tab = await context.new_page()
    await tab.goto(url)
    return tab
