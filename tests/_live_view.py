"""A live view (`cua record`'s page and websocket) of the fake kind's counter task, in
process on a loopback port, and the reading of its messages: what the recorder's message
tests (tests/record/test_record_messages.py) and the listeners' exposure tests share."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from _app_server import serving

from cua.episode.local import open_local
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
async def live_view() -> AsyncIterator[tuple[int, str, LiveSession]]:
    """A live view of the fake kind's counter task (in process): (port, token, session)."""
    instance = get_template(TASK).instantiate(0)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        session = LiveSession(handle=handle, instance=instance)
        await session.start()
        app = build_live_app(session)
        async with serving(app) as port:
            yield port, app.state.token, session
