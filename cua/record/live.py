"""The live view: a local web page that shows a sandbox's screen as it changes and forwards
a person's mouse and keyboard to it as unified actions, recording every step as a trajectory.
On a phone (`TOUCH_KINDS`) the person's pointer, a mouse or a finger, is a finger: the page
sends the touch actions it makes (a press held still is a long press, a quick stroke a fling)
and the phone's back, home and recents buttons.

The page talks to this server over one websocket: screen frames arrive as binary
messages (JPEG bytes, never base64), status as JSON; the page sends `{"type": "action",
"action": {...}}` (validated here with `parse_action`, so a person's input is held to
the same schema as an agent's) and `{"type": "done", "status", "answer"}` to finish, at
which point the episode is judged and the verdict is shown and recorded.

The demonstration is a `cua.episode.Episode` (producer "record"), exactly as an eval
episode: the same reset seed, setup steps, initial state and judge, written in the same
trajectory format (`cua.trajectory`). What is kept is what the person saw and did: each
step's observation is the screen they acted on (the latest streamed frame when it is
newer than the last action's observation), and consecutive keystrokes are one `type`
step ("hello", not five steps) with the time it took to type them.

Frames come from the sandbox's stream (CDP screencast for browsers), and after each
action the action's own observation is pushed at once, so feedback does not wait for
the next stream frame.

A sandbox lost mid-demonstration (its browser or X server died, the connection to its
server dropped) ends the demonstration at once as `status="infra_error"` with the
`ErrorRecord` of the crash (the infrastructure's fault, not the person's), told by the
sandbox's `died` event, an action's or the judge's `SandboxCrashed`, or a stream that
ended while the sandbox no longer answers; the viewers get the `result` with that error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from cua.actions import Done, parse_action
from cua.episode.episode import Episode, EpisodeRecord
from cua.episode.handle import SandboxHandle, StreamingHandle
from cua.errors import CuaError, ErrorRecord, InfraError, SandboxCrashed, Unsupported
from cua.exposure import OriginPolicy
from cua.gate import PageGate, PageGuard
from cua.info import SandboxEvent
from cua.observation import Observation, ObserveOptions, Screenshot
from cua.task import TaskInstance
from cua.trajectory import AgentInfo, TrajectoryWriter

__all__ = ["LiveSession", "build_live_app", "live_gate", "page_message"]


def page_message(text: str) -> dict[str, Any]:
    """A message from the page: a JSON object, else ValueError (a JSONDecodeError is one)."""
    message = json.loads(text)
    if not isinstance(message, dict):
        raise ValueError("a message is a JSON object")
    return message

log = logging.getLogger(__name__)
PAGE = Path(__file__).with_name("live.html")
#: A person's demonstration is not held to an agent's step budget (the task format's cap).
MAX_STEPS = 1000
#: Sandbox kinds with a touch screen: the page turns the person's pointer into a finger there
#: (tap, double tap, long press, swipe, fling, pinch; the phone's buttons), never a mouse.
TOUCH_KINDS = frozenset({"mobile"})


@dataclass
class LiveSession:
    """One demonstration: a sandbox reset to a task, its episode (and trajectory), and the viewers."""

    handle: SandboxHandle
    instance: TaskInstance
    writer: TrajectoryWriter | None = None
    #: The same observation an eval episode gets by default, so both start from the same screen.
    observe: ObserveOptions = field(default_factory=ObserveOptions)
    operator: str = "human"
    viewers: set[WebSocket] = field(default_factory=set)
    last: Observation | None = None
    result: EpisodeRecord | None = None
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    episode: Episode | None = None
    #: The newest streamed frame, when it came after the last action's observation.
    _seen: Screenshot | None = None
    #: Ending the demonstration after the sandbox's `died` event (held so it is not collected).
    _ending: asyncio.Task[EpisodeRecord] | None = None

    async def start(self) -> Observation:
        loop = asyncio.get_running_loop()

        def on_event(event: SandboxEvent) -> None:  # a sandbox may tell from another thread
            loop.call_soon_threadsafe(self._on_event, event)

        self.handle.on_event(on_event)
        self.episode = Episode(self.handle, self.instance, observe=self.observe, writer=self.writer,
                               producer="record", agent=AgentInfo(name=self.operator, kind="human"),
                               max_steps=MAX_STEPS, extra={"operator": self.operator})
        obs = await self.episode.reset()
        self.instance = self.episode.instance  # its instruction may have been read from the page
        self.last = obs
        return obs

    @property
    def steps(self) -> int:
        return self.episode.steps if self.episode is not None else 0

    def status(self, obs: Observation | None = None) -> dict[str, Any]:
        obs = obs or self.last
        return {"type": "status", "task_id": self.instance.task_id, "instruction": self.instance.instruction,
                "steps": self.steps, "url": obs.url if obs else None, "title": obs.title if obs else None,
                "frame": obs.frame.model_dump() if obs else None,
                "touch": self.instance.sandbox_kind in TOUCH_KINDS,
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

    def _sync_seen(self, episode: Episode) -> None:
        """Keep the step as acting on the screen the person last saw (a newer streamed frame)."""
        shot, self._seen = self._seen, None
        if shot is not None and self.last is not None and \
                (shot.width, shot.height) == (self.last.frame.width, self.last.frame.height):
            episode.saw(self.last.model_copy(update={"screenshot": shot}))

    async def answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Carry out a page's `action` or `done` message. What to tell the page when it is
        refused (`rejected`: bad input; `error`: the sandbox failed); None once it is done."""
        kind = message.get("type")
        try:
            if kind == "done":
                await self.act({"type": "done", "status": message.get("status", "success"),
                                "answer": message.get("answer") or None})
            elif kind == "action":
                await self.act(message.get("action"))
            else:
                raise ValueError(f"unknown message type {kind!r}")
        except (ValidationError, ValueError) as exc:
            return {"type": "rejected", "message": str(exc)[:500]}
        except InfraError as exc:
            if await self._lost(exc):
                return None  # ended: the viewers have the result with the crash
            return {"type": "error", **exc.to_dict()}
        except CuaError as exc:
            return {"type": "error", **exc.to_dict()}
        return None

    async def act(self, data: Any) -> None:
        action = parse_action(data)
        if isinstance(action, Done):
            await self.finish(action)
            return
        async with self.lock:
            episode = self.episode
            if self.result is not None or episode is None or episode.over:
                return
            self._sync_seen(episode)
            step = await episode.step(action, merge_typing=True)
            obs = self.last = step.observation
            self._seen = None
        if obs.screenshot is not None:
            await self.broadcast_frame(obs.screenshot)
        await self.broadcast_json(self.status(obs))

    async def finish(self, done: Done | None) -> EpisodeRecord:
        """End the demonstration: with a Done it is judged; without (Ctrl-C, a closed page) it is kept unjudged."""
        async with self.lock:
            if self.result is not None:
                return self.result
            episode = self.episode
            assert episode is not None, "start() first"
            if done is not None and not episode.over:
                self._sync_seen(episode)
                await episode.step(done)
            if done is not None:
                await episode.judge()
            self.result = episode.finish()
        return await self._ended(self.result)

    async def crashed(self, exc: CuaError) -> EpisodeRecord:
        """End the demonstration because its sandbox is lost: `infra_error` with the crash's
        `ErrorRecord`, unjudged (its state can no longer be read). Once ended, does nothing."""
        async with self.lock:
            if self.result is not None:
                return self.result
            episode = self.episode
            assert episode is not None, "start() first"
            self.result = episode.finish(status="infra_error", error=ErrorRecord.of(exc))
        return await self._ended(self.result)

    async def _ended(self, record: EpisodeRecord) -> EpisodeRecord:
        status = "infra_error" if record.status == "infra_error" else "done" if record.done else "aborted"
        await self.broadcast_json({"type": "result", "status": status, "steps": record.steps,
                                   "verdict": json.loads(record.verdict.model_dump_json()) if record.verdict else None,
                                   "error": record.error.model_dump(mode="json") if record.error else None})
        self.finished.set()
        return record

    def _on_event(self, event: SandboxEvent) -> None:
        if event.event != "died" or self.result is not None or self._ending is not None:
            return
        reason = str(event.data.get("reason") or "died")
        self._ending = asyncio.create_task(self.crashed(SandboxCrashed(
            f"sandbox {event.sandbox_id} died: {reason}", details={"sandbox": event.sandbox_id, "reason": reason})))

    async def _lost(self, exc: InfraError | None) -> bool:
        """Whether the sandbox is gone after `exc` (None: its stream ended), and if so end the
        demonstration: a `SandboxCrashed` says so; after any other infrastructure error (a
        timeout, a lost connection) the sandbox is asked, and one that fails to answer or
        reports itself crashed is gone."""
        if not isinstance(exc, SandboxCrashed):
            try:
                info = await self.handle.refresh()
            except InfraError as failed:
                exc = exc or failed
            else:
                if info.status not in ("crashed", "closed"):
                    return False
        await self.crashed(exc or SandboxCrashed(f"sandbox {self.handle.id} stopped streaming and is gone",
                                                 details={"sandbox": self.handle.id}))
        return True

    async def stream(self, max_fps: float) -> None:
        """Forward the sandbox's screen stream to the viewers until the session ends."""
        frames = _frames(self.handle, self.observe, max_fps)
        if frames is None:
            return
        try:
            async for shot in frames:
                if self.finished.is_set():
                    return
                if not self.lock.locked():  # a frame during an action may predate it
                    self._seen = shot
                await self.broadcast_frame(shot)
        except InfraError as exc:
            await self._lost(exc)
            return
        if not self.finished.is_set():  # a stream ends with its sandbox: is it still there?
            await self._lost(None)


def _frames(handle: SandboxHandle, observe: ObserveOptions, max_fps: float) -> AsyncIterator[Screenshot] | None:
    if not isinstance(handle, StreamingHandle):
        return None
    try:
        return handle.stream(observe, max_fps=max_fps)
    except Unsupported:
        return None  # no stream: viewers still get each action's own observation


def live_gate(token: str, *, host: str = "127.0.0.1", allowed_origins: Iterable[str] = ()) -> Middleware:
    """The live view's gate (`cua.gate`, the rules `cua serve` follows), as Starlette middleware.

    The page drives a sandbox and records a demonstration, so a page of any other origin
    must not reach it: the token is in the URL printed to the person (``?t=TOKEN``) and the
    page passes it on to its websocket (it loads nothing else); a browser Origin other than
    the page's own (or one of `allowed_origins`) is refused with or without the token, and
    on a loopback bind so is a non-loopback Host (DNS rebinding). The token is never
    optional, so binding off loopback is allowed. Raises ValueError for a malformed origin."""
    return Middleware(PageGuard, gate=PageGate(OriginPolicy.for_bind(host, allowed_origins), token, param="t"))


def build_live_app(session: LiveSession, *, token: str | None = None, max_fps: float = 8.0, host: str = "127.0.0.1",
                   allowed_origins: Iterable[str] = ()) -> Starlette:
    """The live view's ASGI app: the page and its websocket require `?t=TOKEN` (`live_gate`)."""
    token = token or secrets.token_urlsafe(16)
    stream_task: asyncio.Task[None] | None = None

    async def page(request: Request) -> Response:
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    async def socket(ws: WebSocket) -> None:
        nonlocal stream_task
        await ws.accept()
        session.viewers.add(ws)
        if stream_task is None:
            stream_task = asyncio.create_task(session.stream(max_fps), name="live-stream")
        try:
            await ws.send_text(json.dumps(session.status(), default=str))
            if session.last is not None and session.last.screenshot is not None:
                await ws.send_bytes(session.last.screenshot.data)
            while True:
                text = await ws.receive_text()
                try:
                    refusal = await session.answer(page_message(text))
                except ValueError as exc:
                    refusal = {"type": "rejected", "message": str(exc)[:500]}
                if refusal is not None:
                    await ws.send_text(json.dumps(refusal))
        except WebSocketDisconnect:
            pass
        finally:
            session.viewers.discard(ws)

    app = Starlette(routes=[Route("/", page), WebSocketRoute("/ws", socket)],
                    middleware=[live_gate(token, host=host, allowed_origins=allowed_origins)])
    app.state.token = token
    return app
