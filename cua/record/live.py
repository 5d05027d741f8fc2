"""The live view: a local web page that shows a sandbox's screen as it changes and forwards
a person's mouse and keyboard to it as unified actions, recording every step.

The page talks to this server over one websocket: screen frames arrive as binary
messages (JPEG bytes, never base64), status as JSON; the page sends `{"type": "action",
"action": {...}}` (validated here with `parse_action`, so a person's input is held to
the same schema as an agent's) and `{"type": "done", "status", "answer"}` to finish, at
which point the episode is judged and the verdict is shown and recorded.

Frames come from the sandbox's stream (CDP screencast for browsers), and after each
action the action's own observation is pushed at once, so feedback does not wait for
the next stream frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from cua.actions import Done, parse_action
from cua.errors import CuaError, Unsupported
from cua.eval.episode import gather_state
from cua.eval.handle import SandboxHandle, StreamingHandle
from cua.observation import Observation, ObserveOptions, Screenshot
from cua.record.recording import Recording, RecordingResult
from cua.task import JudgeInput, TaskInstance

__all__ = ["LiveSession", "build_live_app"]

log = logging.getLogger(__name__)
PAGE = Path(__file__).with_name("live.html")


@dataclass
class LiveSession:
    """One demonstration: a sandbox reset to a task, its recording, and the viewers."""

    handle: SandboxHandle
    instance: TaskInstance
    recording: Recording
    observe: ObserveOptions = field(default_factory=lambda: ObserveOptions(format="jpeg", quality=75))
    viewers: set[WebSocket] = field(default_factory=set)
    initial: dict[str, Any] = field(default_factory=dict)
    last: Observation | None = None
    result: RecordingResult | None = None
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def start(self) -> Observation:
        start_url = self.instance.sandbox_config.get("start_url")
        obs = await self.handle.reset(seed=self.instance.seed, options={"start_url": start_url} if start_url else None,
                                      observe=self.observe)
        self.initial = await gather_state(self.handle, self.instance.judge.queries())
        self.recording.start(obs)
        self.last = obs
        return obs

    def status(self, obs: Observation | None = None) -> dict[str, Any]:
        obs = obs or self.last
        return {"type": "status", "task_id": self.instance.task_id, "instruction": self.instance.instruction,
                "steps": self.recording.count, "url": obs.url if obs else None, "title": obs.title if obs else None,
                "frame": obs.frame.model_dump() if obs else None,
                "error": obs.error.model_dump() if obs and obs.error else None}

    async def broadcast_frame(self, shot: Screenshot) -> None:
        for ws in list(self.viewers):
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                await ws.send_bytes(shot.data)

    async def broadcast_json(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, default=str)
        for ws in list(self.viewers):
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                await ws.send_text(text)

    async def act(self, data: Any) -> None:
        action = parse_action(data)
        if isinstance(action, Done):
            await self.finish(action)
            return
        async with self.lock:
            if self.result is not None:
                return
            obs = await self.handle.act(action, observe=self.observe)
            self.recording.add(action, obs)
            self.last = obs
        if obs.screenshot is not None:
            await self.broadcast_frame(obs.screenshot)
        await self.broadcast_json(self.status(obs))

    async def finish(self, done: Done | None) -> RecordingResult:
        async with self.lock:
            if self.result is not None:
                return self.result
            verdict = None
            if done is not None:
                self.recording.add(done, None)
                final = await gather_state(self.handle, self.instance.judge.queries())
                verdict = self.instance.judge.evaluate(
                    JudgeInput(initial=self.initial, final=final, done=done, steps=self.recording.count))
            self.result = self.recording.finish(done=done, verdict=verdict)
        await self.broadcast_json({"type": "result", **json.loads(self.result.model_dump_json())})
        self.finished.set()
        return self.result

    async def stream(self, max_fps: float) -> None:
        """Forward the sandbox's screen stream to the viewers until the session ends."""
        frames = _frames(self.handle, self.observe, max_fps)
        if frames is None:
            return
        async for shot in frames:
            if self.finished.is_set():
                return
            await self.broadcast_frame(shot)


def _frames(handle: SandboxHandle, observe: ObserveOptions, max_fps: float) -> AsyncIterator[Screenshot] | None:
    if not isinstance(handle, StreamingHandle):
        return None
    try:
        return handle.stream(observe, max_fps=max_fps)
    except Unsupported:
        return None  # no stream: viewers still get each action's own observation


def build_live_app(session: LiveSession, *, token: str | None = None, max_fps: float = 8.0) -> Starlette:
    """The live view's ASGI app. With a token, the page and its websocket require `?t=TOKEN`."""
    token = token or secrets.token_urlsafe(16)
    stream_task: asyncio.Task[None] | None = None

    def allowed(params: Any) -> bool:
        return secrets.compare_digest(str(params.get("t", "")), token)

    async def page(request: Request) -> Response:
        if not allowed(request.query_params):
            return HTMLResponse("missing or wrong ?t= token", status_code=401)
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    async def socket(ws: WebSocket) -> None:
        nonlocal stream_task
        if not allowed(ws.query_params):
            await ws.close(code=4401)
            return
        await ws.accept()
        session.viewers.add(ws)
        if stream_task is None:
            stream_task = asyncio.create_task(session.stream(max_fps), name="live-stream")
        try:
            await ws.send_text(json.dumps(session.status(), default=str))
            if session.last is not None and session.last.screenshot is not None:
                await ws.send_bytes(session.last.screenshot.data)
            while True:
                message = json.loads(await ws.receive_text())
                try:
                    if message.get("type") == "done":
                        await session.act({"type": "done", "status": message.get("status", "success"),
                                           "answer": message.get("answer") or None})
                    elif message.get("type") == "action":
                        await session.act(message.get("action"))
                    else:
                        raise ValueError(f"unknown message type {message.get('type')!r}")
                except (ValidationError, ValueError) as exc:
                    await ws.send_text(json.dumps({"type": "rejected", "message": str(exc)[:500]}))
                except CuaError as exc:
                    await ws.send_text(json.dumps({"type": "error", **exc.to_dict()}))
        except WebSocketDisconnect:
            pass
        finally:
            session.viewers.discard(ws)

    app = Starlette(routes=[Route("/", page), WebSocketRoute("/ws", socket)])
    app.state.token = token
    return app
