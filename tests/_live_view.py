"""A live view (`cua record`'s page and websocket) of the fake kind's counter task, in
process on a loopback port, and the reading of its messages: what the recorder's message
tests (tests/record/test_record_messages.py) and the listeners' exposure tests share."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn

from cua.episode.local import open_local
from cua.listen import tcp_listener
from cua.record.live import LiveSession, build_live_app
from cua.tasks.registry import get_template

TASK = "fake.set_counter@1"


async def next_text(ws: Any) -> dict[str, Any]:
    """The next JSON message of a live view's websocket (frames, which are bytes, skipped)."""
    while True:
        message = await asyncio.wait_for(ws.recv(), 30)
        if isinstance(message, str):
            return dict(json.loads(message))


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[int]:
    """`app` on a loopback port through uvicorn, as `cua record` serves it; yields the port."""
    sock = tcp_listener("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            assert not task.done(), "the server stopped while starting"
            await asyncio.sleep(0.01)  # uvicorn offers no started event, only this flag
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await task


@asynccontextmanager
async def live_view() -> AsyncIterator[tuple[int, str, LiveSession]]:
    """A live view of the fake kind's counter task (in process): (port, token, session)."""
    instance = get_template(TASK).instantiate(0)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        session = LiveSession(handle=handle, instance=instance)
        await session.start()
        app = build_live_app(session)
        async with serving(app) as port:
            yield port, app.state.token, session
