"""One websocket connection: the thin asyncio shell around `cua.protocol.ServerConnection`.

A reader loop parses frames and starts one task per request (so many requests are in
flight at once; the sandbox lock keeps one sandbox's requests in arrival order). One
writer task sends queued frames, so a screenshot frame and its JSON result always go
out back to back. Nothing a client sends, and nothing a sandbox raises, ends the
connection or the server: every failure becomes an `error` frame.

Everything a connection holds is bounded (`ConnectionLimits`):
- the outbox: stream frames and console/dialog events are dropped first while it is
  backed up; a client that keeps it over `outbox_soft_bytes` without reading for
  `slow_grace_s`, or pushes it past `outbox_hard_bytes`, is closed with close code
  4008 (`slow_consumer`) rather than buffered without end;
- requests in flight (`max_in_flight`) and live streams (`max_streams`): more get `bad_request`;
- the time to send `hello` (`hello_timeout_s`, then close code 1008).

Requests are performed by the handlers of `cua.server.ops` (found in its typed `OPS`
table, which also says the scopes each needs); a handler returns a typed `Reply`, and
only this module turns it into frames, writes them, and runs the streams it asks for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import deque
from collections.abc import AsyncGenerator, MutableMapping
from dataclasses import dataclass
from typing import Any

from starlette.websockets import WebSocket

from cua import protocol as p
from cua.errors import BadRequest, Cancelled, CuaError, Forbidden, InternalError, SlowConsumer, Unauthorized
from cua.info import SandboxEvent
from cua.server.auth import Grant, TokenStore, bearer_token
from cua.server.manager import Caller, Managed, SandboxManager
from cua.server.metrics import Metrics
from cua.server.ops import OPS, Context, Op, Reply, StartStream, StopStream

__all__ = ["CLOSE_SLOW_CONSUMER", "CLOSE_UNAUTHORIZED", "TRANSPORT_EXTENSION", "Connection", "ConnectionLimits"]

log = logging.getLogger("cua.server")

#: Websocket close codes: a policy violation (no or wrong credentials, no hello in
#: time, a revoked token) and a client that stopped reading.
CLOSE_UNAUTHORIZED = 1008
CLOSE_SLOW_CONSUMER = 4008

#: The ASGI scope extension under which the server's app passes the websocket's transport.
TRANSPORT_EXTENSION = "cua.transport"

#: Stream frames are dropped (not queued) while this many frames wait to be sent: a
#: live view wants the newest frame, not a backlog.
STREAM_BACKLOG = 8
#: Events a sandbox may report without bound (a page looping `console.log` or `alert()`).
DROPPABLE_EVENTS = frozenset({"console", "dialog"})
#: Droppable events queued at most: beyond, they are dropped (and counted).
EVENT_BACKLOG = 256

@dataclass(frozen=True)
class ConnectionLimits:
    outbox_soft_bytes: int = 8 * 1024 * 1024
    outbox_hard_bytes: int = 64 * 1024 * 1024
    slow_grace_s: float = 15.0
    max_in_flight: int = 256
    max_streams: int = 8
    hello_timeout_s: float = 10.0


class Connection:
    def __init__(self, ws: WebSocket, manager: SandboxManager, metrics: Metrics, *, tokens: TokenStore,
                 max_message_bytes: int, server_name: str, limits: ConnectionLimits | None = None) -> None:
        self.ws = ws
        self.manager = manager
        self.metrics = metrics
        self.tokens = tokens
        self.limits = limits or ConnectionLimits()
        self.id = f"c-{secrets.token_hex(6)}"
        header = bearer_token(ws.headers.get("authorization"))
        grant = tokens.authenticate(header) if header is not None or not tokens.auth_required else None
        self._header_rejected = header is not None and grant is None
        self.proto = p.ServerConnection(token=tokens.operator_token, authorized=grant is not None,
                                        server_name=server_name, session=self.id,
                                        max_message_bytes=max_message_bytes, authenticate=tokens.authenticate,
                                        grant=grant)
        self._outbox: deque[str | bytes | None] = deque()
        self._outbox_bytes = 0
        self._wake = asyncio.Event()
        self._recheck: asyncio.TimerHandle | None = None
        self._last_progress = 0.0
        self._close_code = 1000
        self._closing: asyncio.Future[None] | None = None
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._cancel_requested: set[int] = set()
        self._streams: dict[int, tuple[asyncio.Task[None], Managed]] = {}

    @property
    def grant(self) -> Grant:
        grant = self.proto.grant
        assert isinstance(grant, Grant), "no request runs before authentication"
        return grant

    @property
    def caller(self) -> Caller:
        return Caller(self.id, self.grant)

    # --- the loops ---

    async def run(self) -> None:
        await self.ws.accept()
        loop = asyncio.get_running_loop()
        self._last_progress = loop.time()
        self._closing = loop.create_future()
        self.metrics.connections_total += 1
        self.metrics.connections_open += 1
        writer = asyncio.create_task(self._write_loop(), name=f"cua-writer-{self.id}")
        self.manager.connect(self.id, self._on_event)
        reader: asyncio.Task[None] | None = None
        try:
            if self._header_rejected:
                self._close_code = CLOSE_UNAUTHORIZED
                self.send([self.proto.error(None, Unauthorized("wrong token in the Authorization header"))])
                return
            reader = asyncio.create_task(self._read_loop(), name=f"cua-reader-{self.id}")
            await asyncio.wait({reader, self._closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if reader is not None and not reader.done():
                reader.cancel()
                with contextlib.suppress(BaseException):
                    await reader
            for task in list(self._tasks.values()):
                task.cancel()
            pumps = [task for task, _ in self._streams.values()]
            for sid in list(self._streams):
                self._stop_stream(sid)
            await asyncio.gather(*self._tasks.values(), *pumps, return_exceptions=True)
            await self.manager.disconnect(self.id)
            slow = self._close_code == CLOSE_SLOW_CONSUMER
            if slow:
                writer.cancel()
                self._outbox.clear()
                self._outbox_bytes = 0
            else:
                self._put(None)
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(writer, timeout=5.0)
            if self.proto.state == "closed" and self._close_code == 1000:
                self._close_code = CLOSE_UNAUTHORIZED
            try:
                # a peer that stopped reading may never take the close frame: do not wait on it
                await asyncio.wait_for(self.ws.close(code=self._close_code,
                                                     reason="slow_consumer" if slow else ""), timeout=2.0)
            except BaseException:  # noqa: BLE001 -- the peer is gone or not reading: cut the socket
                transport = (self.ws.scope.get("extensions") or {}).get(TRANSPORT_EXTENSION)
                if isinstance(transport, asyncio.Transport):
                    transport.abort()
            self.metrics.connections_open -= 1

    async def _receive(self) -> MutableMapping[str, Any] | None:
        """The next websocket message; None (after answering) when hello is overdue."""
        if self.proto.state != "awaiting_hello":
            return await self.ws.receive()
        try:
            return await asyncio.wait_for(self.ws.receive(), timeout=self.limits.hello_timeout_s)
        except TimeoutError:
            self.metrics.hello_timeouts += 1
            self._close_code = CLOSE_UNAUTHORIZED
            self.send([self.proto.error(None, Unauthorized(
                f"no `hello` within {self.limits.hello_timeout_s:g}s of connecting",
                details={"hello_timeout_s": self.limits.hello_timeout_s}))])
            return None

    async def _read_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            message = await self._receive()
            if message is None or message["type"] == "websocket.disconnect":
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
                self._close_code = CLOSE_UNAUTHORIZED
                return
            if incoming.request is not None:
                if not self.tokens.live(self.grant):
                    self._close_code = CLOSE_UNAUTHORIZED
                    self.send([self.proto.error(incoming.request.id, Unauthorized("the token was revoked"))])
                    return
                self._dispatch(incoming.request)

    async def _write_loop(self) -> None:
        outbox = self._outbox
        ws = self.ws
        loop = asyncio.get_running_loop()
        while True:
            while not outbox:
                self._last_progress = loop.time()  # caught up: nothing is waiting on the client
                self._wake.clear()
                await self._wake.wait()
            frame = outbox.popleft()
            if frame is None:
                return
            self._outbox_bytes -= len(frame)
            try:
                if isinstance(frame, str):
                    await ws.send_text(frame)
                else:
                    await ws.send_bytes(frame)
            except Exception as exc:  # noqa: BLE001 -- any send failure means the peer went away; the reader sees it
                log.debug("connection %s: send failed: %r", self.id, exc)
                return
            self._last_progress = loop.time()

    def _put(self, frame: str | bytes | None) -> None:
        self._outbox.append(frame)
        if frame is not None:
            self._outbox_bytes += len(frame)
        self._wake.set()

    def send(self, frames: list[str | bytes]) -> None:
        """Queue frames that must be sent (answers, lifecycle events)."""
        if self._close_code == CLOSE_SLOW_CONSUMER:
            return
        for frame in frames:
            self._put(frame)
        self._check_backlog()

    def send_droppable(self, frame: str | bytes, *, stream: bool = False) -> bool:
        """Queue a frame the client can do without (a stream frame, a console or dialog
        event) unless the outbox is backed up; False when it was dropped."""
        backlog = STREAM_BACKLOG if stream else EVENT_BACKLOG
        if (self._close_code == CLOSE_SLOW_CONSUMER or len(self._outbox) >= backlog
                or self._outbox_bytes >= self.limits.outbox_soft_bytes):
            self.metrics.frames_dropped += 1
            return False
        self._put(frame)
        return True

    def _check_backlog(self) -> None:
        size = self._outbox_bytes
        if size <= self.limits.outbox_soft_bytes or self._close_code == CLOSE_SLOW_CONSUMER:
            return
        loop = asyncio.get_running_loop()
        stalled = loop.time() - self._last_progress
        if size > self.limits.outbox_hard_bytes or stalled > self.limits.slow_grace_s:
            self._slow_consumer(size, stalled)
        elif self._recheck is None or self._recheck.cancelled() or self._recheck.when() <= loop.time():
            # nothing else may be sent: look again when the grace runs out
            self._recheck = loop.call_later(self.limits.slow_grace_s - stalled + 0.01, self._check_backlog)

    def _slow_consumer(self, size: int, stalled: float) -> None:
        if self._close_code == CLOSE_SLOW_CONSUMER:
            return
        log.warning("connection %s: closing a slow consumer (%d bytes unsent, no progress for %.1fs)",
                    self.id, size, stalled)
        self.metrics.slow_consumers += 1
        self._close_code = CLOSE_SLOW_CONSUMER
        error = SlowConsumer(f"the client left {size} bytes unread for {stalled:.1f}s",
                             details={"unsent_bytes": size, "stalled_s": round(stalled, 3)})
        self._outbox.clear()
        self._outbox_bytes = 0
        self._outbox.append(self.proto.error(None, error))  # if it ever reads again, it learns why
        self._wake.set()
        if self._closing is not None and not self._closing.done():
            self._closing.set_result(None)

    # --- requests ---

    def _refused(self, request: p.Request, op: Op | None) -> CuaError | None:
        """Why a well-formed request is not run: a missing scope, too many in flight, or a
        stream id still streaming. `op` is None for `cancel`, which any caller may send."""
        scopes = () if op is None else op.scopes
        if scopes and not any(self.grant.has(scope) for scope in scopes):
            named = " or ".join(f"`{scope}`" for scope in scopes)
            return Forbidden(f"`{request.type}` needs the {named} scope",
                             details={"scope": scopes[0], "type": request.type})
        if len(self._tasks) >= self.limits.max_in_flight and not isinstance(request, p.Cancel):
            return BadRequest(f"{len(self._tasks)} requests in flight: the limit is {self.limits.max_in_flight}",
                              details={"max_in_flight": self.limits.max_in_flight})
        if isinstance(request, p.Stream) and len(self._streams) >= self.limits.max_streams:
            return BadRequest(f"{len(self._streams)} streams are live on this connection: the limit is "
                              f"{self.limits.max_streams}", details={"max_streams": self.limits.max_streams})
        if isinstance(request, p.Stream) and request.id in self._streams:
            return BadRequest(f"id {request.id} names a live stream; unstream it or use another id",
                              details={"id": request.id})
        return None

    def _dispatch(self, request: p.Request) -> None:
        op = OPS.get(type(request))
        refusal = self._refused(request, op)
        if refusal is None and op is None and not isinstance(request, p.Cancel):
            refusal = InternalError(f"the server has no handler for `{request.type}`")
        if refusal is not None:
            self.send([self.proto.error(request.id, refusal)])
            self.metrics.request_done(request.type, 0.0, refusal.code.value)
            return
        if isinstance(request, p.Cancel):  # acts on this connection's requests in flight
            task = self._tasks.get(request.target)
            if task is not None and not task.done():
                self._cancel_requested.add(request.target)
                task.cancel()
            self.send([self.proto.result(request.id, p.CancelResult(cancelled=task is not None))])
            self.metrics.request_done("cancel", 0.0)
            return
        assert op is not None  # refused above otherwise
        task = asyncio.create_task(self._run_request(op, request), name=f"cua-req-{request.id}")
        self._tasks[request.id] = task
        task.add_done_callback(lambda t: self._cancelled_before_start(t, request))

    def _cancelled_before_start(self, task: asyncio.Task[None], request: p.Request) -> None:
        """A task cancelled before its first step never enters its own handler: answer for it."""
        rid = request.id
        if not task.cancelled() or rid not in self._cancel_requested:
            return
        self._tasks.pop(rid, None)
        self._cancel_requested.discard(rid)
        self.send([self.proto.error(rid, Cancelled(f"request {rid} was cancelled"))])
        self.metrics.request_done(request.type, 0.0, "cancelled")

    async def _run_request(self, op: Op, request: p.Request) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        rid = request.id
        code: str | None = None
        reply: Reply | None = None
        try:
            deadline = self.proto.deadline_of(rid)
            try:
                async with asyncio.timeout_at(deadline):
                    reply = await op.handle(Context(self.manager, self.caller, self._streams.keys()), request)
                frames = self._frames(rid, reply)
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
        if code is None and reply is not None and reply.stream is not None:
            self._carry_out(reply.stream)  # after the result: it precedes the stream's first frame
        self.metrics.request_done(request.type, loop.time() - started, code)

    def _frames(self, rid: int, reply: Reply) -> list[str | bytes]:
        """The frames of a reply: an observation's screenshot as a binary frame, then the result."""
        result = reply.result
        if isinstance(result, (p.SandboxResult, p.ObservationResult)):
            return self.proto.observation_frames(rid, result)
        return [self.proto.result(rid, result)]

    def _carry_out(self, intent: StartStream | StopStream) -> None:
        if isinstance(intent, StartStream):
            self._start_stream(intent)
        else:
            self._stop_stream(intent.stream_id)

    # --- events and streams ---

    def _on_event(self, event: SandboxEvent) -> None:
        if event.event in ("closed", "died") and event.sandbox_id is not None:
            self._stop_streams_of(event.sandbox_id)
        if event.event in DROPPABLE_EVENTS:
            if len(self._outbox) < EVENT_BACKLOG and self._outbox_bytes < self.limits.outbox_soft_bytes:
                self.send_droppable(self.proto.event(event))
            else:
                self.metrics.frames_dropped += 1  # not even encoded
            return
        self.send([self.proto.event(event)])

    def _start_stream(self, start: StartStream) -> None:
        task = asyncio.create_task(self._pump(start), name=f"cua-stream-{start.stream_id}")
        self._streams[start.stream_id] = (task, start.managed)
        start.managed.streams.add(task)

    async def _pump(self, start: StartStream) -> None:
        stream_id, managed = start.stream_id, start.managed
        reason = "ended"
        try:
            frames = start.sandbox.frames(start.options, max_fps=start.max_fps)
            try:
                async for shot in frames:
                    self.send_droppable(self.proto.stream_frame(stream_id, shot), stream=True)
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
            task = asyncio.current_task()
            entry = self._streams.get(stream_id)
            if entry is not None and entry[0] is task:  # not a later stream reusing the id
                del self._streams[stream_id]
            if task is not None:
                managed.streams.discard(task)
            self.send([self.proto.event(SandboxEvent(sandbox_id=managed.id, event="stream_ended",
                                                     data={"stream_id": stream_id, "reason": reason}))])

    def _stop_stream(self, stream_id: int) -> None:
        entry = self._streams.pop(stream_id, None)
        if entry is not None:
            task, managed = entry
            task.cancel()
            managed.streams.discard(task)

    def _stop_streams_of(self, sandbox_id: str) -> None:
        for stream_id, (_task, managed) in list(self._streams.items()):
            if managed.id == sandbox_id:
                self._stop_stream(stream_id)
