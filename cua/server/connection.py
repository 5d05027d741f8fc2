"""One websocket connection: the thin asyncio shell around `cua.protocol.ServerConnection`.

A reader loop parses frames and starts one task per request (so many requests are in
flight at once; the sandbox lock keeps one sandbox's requests in arrival order). One
writer task sends queued frames, so a screenshot frame and its JSON result always go
out back to back. Nothing a client sends, and nothing a sandbox raises, ends the
connection or the server: every failure becomes an `error` frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncGenerator
from typing import Any

from starlette.websockets import WebSocket

from cua import protocol as p
from cua.errors import Cancelled, CuaError, InternalError, Unauthorized
from cua.observation import ObserveOptions
from cua.sandbox import Sandbox, Streamable
from cua.server.auth import bearer_token, token_matches
from cua.server.manager import Managed, SandboxManager
from cua.server.metrics import Metrics
from cua.server.ops import HANDLERS, Context

__all__ = ["Connection"]

log = logging.getLogger("cua.server")

#: Stream frames are dropped (not queued) while this many frames wait to be sent: a
#: live view wants the newest frame, not a backlog.
STREAM_BACKLOG = 8


class Connection:
    def __init__(self, ws: WebSocket, manager: SandboxManager, metrics: Metrics, *, token: str | None,
                 max_message_bytes: int, server_name: str) -> None:
        self.ws = ws
        self.manager = manager
        self.metrics = metrics
        self.id = f"c-{secrets.token_hex(6)}"
        header = bearer_token(ws.headers.get("authorization"))
        self._header_rejected = header is not None and not token_matches(token, header)
        self.proto = p.ServerConnection(token=token, authorized=header is not None and not self._header_rejected,
                                        server_name=server_name, session=self.id,
                                        max_message_bytes=max_message_bytes)
        self._outbox: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._cancel_requested: set[int] = set()
        self._streams: dict[int, tuple[asyncio.Task[None], Managed]] = {}
        self._ctx = Context(manager, self)

    # --- the loops ---

    async def run(self) -> None:
        await self.ws.accept()
        self.metrics.connections_total += 1
        self.metrics.connections_open += 1
        writer = asyncio.create_task(self._write_loop(), name=f"cua-writer-{self.id}")
        self.manager.connect(self.id, self._on_event)
        try:
            if self._header_rejected:
                self.send([self.proto.error(None, Unauthorized("wrong token in the Authorization header"))])
                return
            await self._read_loop()
        finally:
            for task in list(self._tasks.values()):
                task.cancel()
            for sid in list(self._streams):
                self.stop_stream(sid)
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
            await self.manager.disconnect(self.id)
            self._outbox.put_nowait(None)
            with contextlib.suppress(Exception):
                await writer
            with contextlib.suppress(Exception):
                await self.ws.close(code=1008 if self.proto.state == "closed" else 1000)
            self.metrics.connections_open -= 1

    async def _read_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            message = await self.ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            data = message.get("text")
            if data is None:
                data = message.get("bytes") or b""
            incoming = self.proto.receive(data, loop.time())
            if incoming.refused:
                self.metrics.protocol_errors += 1
            if incoming.reply:
                self.send(incoming.reply)
            if incoming.close:
                return
            if incoming.request is not None:
                self._dispatch(incoming.request)

    async def _write_loop(self) -> None:
        queue = self._outbox
        ws = self.ws
        while True:
            frame = await queue.get()
            if frame is None:
                return
            try:
                if isinstance(frame, str):
                    await ws.send_text(frame)
                else:
                    await ws.send_bytes(frame)
            except Exception as exc:  # noqa: BLE001 -- any send failure means the peer went away; the reader sees it
                log.debug("connection %s: send failed: %r", self.id, exc)
                return

    def send(self, frames: list[str | bytes]) -> None:
        put = self._outbox.put_nowait
        for frame in frames:
            put(frame)

    # --- requests ---

    def _dispatch(self, request: p.Request) -> None:
        if isinstance(request, p.Cancel):
            task = self._tasks.get(request.target)
            if task is not None and not task.done():
                self._cancel_requested.add(request.target)
                task.cancel()
            self.send([self.proto.result(request.id, p.CancelResult(cancelled=task is not None))])
            self.metrics.request_done("cancel", 0.0)
            return
        task = asyncio.create_task(self._run_request(request), name=f"cua-req-{request.id}")
        self._tasks[request.id] = task
        task.add_done_callback(lambda t, r=request: self._cancelled_before_start(t, r))

    def _cancelled_before_start(self, task: asyncio.Task[None], request: p.Request) -> None:
        """A task cancelled before its first step never enters its own handler: answer for it."""
        rid = request.id
        if not task.cancelled() or rid not in self._cancel_requested:
            return
        self._tasks.pop(rid, None)
        self._cancel_requested.discard(rid)
        self.send([self.proto.error(rid, Cancelled(f"request {rid} was cancelled"))])
        self.metrics.request_done(request.type, 0.0, "cancelled")

    async def _run_request(self, request: p.Request) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        rid = request.id
        code: str | None = None
        try:
            handler = HANDLERS[request.type]
            deadline = self.proto.deadline_of(rid)
            try:
                async with asyncio.timeout_at(deadline):
                    frames = await handler(self._ctx, request)
            except TimeoutError:
                if deadline is None or loop.time() < deadline:
                    raise  # a TimeoutError from inside the sandbox, not our deadline
                frames = [self.proto.timeout_error(rid, request.timeout)]
                code = "timeout"
        except asyncio.CancelledError:
            if rid not in self._cancel_requested:
                raise  # the connection is closing
            frames = [self.proto.error(rid, Cancelled(f"request {rid} was cancelled"))]
            code = "cancelled"
        except CuaError as exc:
            frames = [self.proto.error(rid, exc)]
            code = exc.code.value
        except Exception as exc:
            log.exception("internal error in %s request %s", request.type, rid)
            frames = [self.proto.error(rid, InternalError(f"{type(exc).__name__}: {exc}"))]
            code = "internal"
        finally:
            self._tasks.pop(rid, None)
            self._cancel_requested.discard(rid)
        self.send(frames)
        self.metrics.request_done(request.type, loop.time() - started, code)

    # --- events and streams ---

    def _on_event(self, sandbox_id: str, event: str, data: dict[str, Any]) -> None:
        if event in ("closed", "died"):
            self.stop_streams_of(sandbox_id)
        self.send([self.proto.event(sandbox_id, event, data)])

    def start_stream(self, stream_id: int, managed: Managed, sandbox: Sandbox, options: ObserveOptions,
                     max_fps: float) -> None:
        assert isinstance(sandbox, Streamable)
        task = asyncio.create_task(self._pump(stream_id, managed, sandbox, options, max_fps),
                                   name=f"cua-stream-{stream_id}")
        self._streams[stream_id] = (task, managed)
        managed.streams += 1

    async def _pump(self, stream_id: int, managed: Managed, sandbox: Streamable, options: ObserveOptions,
                    max_fps: float) -> None:
        reason = "ended"
        try:
            frames = sandbox.frames(options, max_fps=max_fps)
            try:
                async for shot in frames:
                    if self._outbox.qsize() < STREAM_BACKLOG:
                        self._outbox.put_nowait(self.proto.stream_frame(stream_id, shot))
                    managed.last_active = self.manager.now()
            finally:
                if isinstance(frames, AsyncGenerator):  # closing it stops the screencast
                    await frames.aclose()
        except asyncio.CancelledError:
            reason = "stopped"
            raise
        except CuaError as exc:
            reason = exc.code.value
        except Exception:
            log.exception("stream %s of sandbox %s failed", stream_id, managed.id)
            reason = "internal"
        finally:
            if self._streams.pop(stream_id, None) is not None:
                managed.streams -= 1
            self.send([self.proto.event(managed.id, "stream_ended", {"stream_id": stream_id, "reason": reason})])

    def stop_stream(self, stream_id: int) -> bool:
        entry = self._streams.get(stream_id)
        if entry is None:
            return False
        entry[0].cancel()
        return True

    def stop_streams_of(self, sandbox_id: str) -> None:
        for stream_id, (_task, managed) in list(self._streams.items()):
            if managed.id == sandbox_id:
                self.stop_stream(stream_id)
