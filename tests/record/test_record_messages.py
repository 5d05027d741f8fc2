"""A page's messages to the recorder: the live view (`cua record`) and the recording queue
(`cua record` over several tasks) read them and carry them out through one piece of code
(`page_message`, `LiveSession.answer`), so both answer bad input alike and stay connected.

The fake kind's counter task, in process; the pages are plain websocket clients.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from _live_view import TASK, live_view, next_text, serving  # tests/'s own helpers
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect

from cua.episode.local import open_local
from cua.record.queue import Job, RecordQueue
from cua.record.service import RecorderService
from cua.tasks.registry import get_template


async def _next_of(ws: ClientConnection, kind: str) -> dict[str, Any]:
    while (message := await next_text(ws))["type"] != kind:
        pass
    return message


async def _bad_input_is_answered_and_an_action_still_steps(ws: ClientConnection, not_a_message: str) -> None:
    await ws.send("[1, 2]")
    assert await _next_of(ws, "rejected") == {"type": "rejected", "message": not_a_message}
    await ws.send(json.dumps({"type": "bogus"}))
    assert await _next_of(ws, "rejected") == {"type": "rejected", "message": "unknown message type 'bogus'"}
    await ws.send(json.dumps({"type": "action", "action": {"type": "click", "x": 1}}))
    assert "y" in (await _next_of(ws, "rejected"))["message"]  # the action's schema names the missing field
    await ws.send(json.dumps({"type": "action", "action": {"type": "click", "x": 10, "y": 10}}))
    assert (await _next_of(ws, "status"))["steps"] == 1  # the page is still heard; nothing refused was a step


async def test_the_live_view_answers_bad_messages_and_goes_on() -> None:
    async with live_view() as (port, token, _), \
            ws_connect(f"ws://127.0.0.1:{port}/ws?t={token}", origin=f"http://127.0.0.1:{port}") as ws:  # type: ignore[arg-type]
        await _next_of(ws, "status")
        await _bad_input_is_answered_and_an_action_still_steps(ws, "a message is a JSON object")


async def test_the_recording_queue_answers_bad_messages_as_the_live_view_does(tmp_path: Path) -> None:
    @asynccontextmanager
    async def opener(kind: str, config: Any) -> AsyncIterator[Any]:
        async with open_local(kind, config) as handle:
            yield handle

    service = RecorderService(RecordQueue([Job(template=get_template(TASK), seed=0)]), opener, tmp_path / "rec")
    async with serving(service.app) as port, \
            ws_connect(f"ws://127.0.0.1:{port}/ws?t={service.token}",
                       origin=f"http://127.0.0.1:{port}") as ws:  # type: ignore[arg-type]
        await _next_of(ws, "task")
        await _next_of(ws, "status")
        await _bad_input_is_answered_and_an_action_still_steps(ws, "not a message: a message is a JSON object")
