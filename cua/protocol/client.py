"""The client's state machine for one connection: ids, deadlines, binary attachments,
streams, and what each received frame completes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from cua.errors import CuaError, InternalError, Timeout, error_for_code
from cua.info import SandboxEvent
from cua.observation import Screenshot
from cua.protocol.frames import BinaryFrame, decode_frame
from cua.protocol.messages import ErrorMessage, EventMessage, ResultMessage, ServerMessageAdapter
from cua.protocol.requests import Cancel, Hello, Request, Stream, Unstream
from cua.protocol.results import RESULT_MODELS
from cua.protocol.wire import MAX_REQUEST_ID, ProtocolError, check_version, dumps, loads, validation_error


@dataclass(slots=True)
class Completed:
    id: int
    request: Request
    #: The typed payload (see RESULT_MODELS), observations with the screenshot attached.
    result: BaseModel


@dataclass(slots=True)
class Failed:
    id: int | None
    request: Request | None
    error: CuaError


@dataclass(slots=True)
class StreamFrame:
    stream_id: int
    screenshot: Screenshot


Received = Completed | Failed | SandboxEvent | StreamFrame


@dataclass(slots=True)
class _Pending:
    request: Request
    deadline: float | None
    frame: BinaryFrame | None = None


class ClientConnection:
    """The client's view of one connection.

    `send_request` gives the frame to send and tracks the request; `receive_text` and
    `receive_bytes` turn frames into completed responses and events; `expire(now)`
    fails requests whose deadline passed. Responses to requests the client gave up on
    (expired, cancelled) are dropped quietly; a response to an id never sent is a
    protocol violation (raised as ProtocolError).
    """

    #: How long after its own timeout the client waits for the server's `timeout` answer.
    DEADLINE_GRACE = 5.0
    _ABANDONED_KEEP = 4096

    def __init__(self, *, max_message_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_message_bytes = max_message_bytes
        self._next_id = 1
        self._pending: dict[int, _Pending] = {}
        self._abandoned: dict[int, None] = {}
        self._streams: set[int] = set()
        self.opened = False

    def next_id(self) -> int:
        rid = self._next_id
        self._next_id = 1 if rid >= MAX_REQUEST_ID else rid + 1
        return rid

    def hello(self, *, token: str | None, client: str = "", now: float = 0.0) -> tuple[int, str]:
        return self.send_request(Hello(id=self.next_id(), token=token, client=client), now)

    def send_request(self, request: Request, now: float = 0.0) -> tuple[int, str]:
        """Track `request` and return (its id, the text frame to send)."""
        if request.id in self._pending:
            raise ValueError(f"request id {request.id} is already in flight")
        self._abandoned.pop(request.id, None)
        deadline = None if request.timeout is None else now + request.timeout + self.DEADLINE_GRACE
        self._pending[request.id] = _Pending(request, deadline)
        return request.id, dumps(request)

    def pending(self) -> list[int]:
        return list(self._pending)

    def abandon(self, request_id: int) -> str | None:
        """Give up on a request (e.g. its caller was cancelled): returns the `cancel`
        frame to send, or None when it was not in flight."""
        if self._pending.pop(request_id, None) is None:
            return None
        self._remember_abandoned(request_id)
        _, frame = self.send_request(Cancel(id=self.next_id(), target=request_id))
        return frame

    def _remember_abandoned(self, request_id: int) -> None:
        self._abandoned[request_id] = None
        if len(self._abandoned) > self._ABANDONED_KEEP:
            self._abandoned.pop(next(iter(self._abandoned)))

    def next_deadline(self) -> float | None:
        pending = [p.deadline for p in self._pending.values() if p.deadline is not None]
        return min(pending) if pending else None

    def expire(self, now: float) -> list[Failed]:
        out: list[Failed] = []
        for rid, p in list(self._pending.items()):
            if p.deadline is not None and p.deadline <= now:
                del self._pending[rid]
                self._remember_abandoned(rid)
                out.append(Failed(rid, p.request, Timeout(
                    f"no answer to {p.request.type} request {rid} within its timeout of {p.request.timeout}s",
                    details={"timeout": p.request.timeout})))
        return out

    def fail_all(self, error: CuaError) -> list[Failed]:
        """The connection is gone: fail every pending request."""
        out = [Failed(rid, p.request, error) for rid, p in self._pending.items()]
        self._pending.clear()
        return out

    def receive_bytes(self, data: bytes) -> list[Received]:
        frame = decode_frame(data)
        if frame.stream:
            if frame.id not in self._streams:
                return []  # a frame in flight while the stream was being stopped
            return [StreamFrame(frame.id, frame.screenshot())]
        pending = self._pending.get(frame.id)
        if pending is None:
            if frame.id in self._abandoned:
                return []
            raise ProtocolError(f"binary frame for unknown request id {frame.id}")
        if pending.frame is not None:
            raise ProtocolError(f"two binary frames for request {frame.id}")
        pending.frame = frame
        return []

    def receive_text(self, data: str | bytes) -> list[Received]:
        obj = loads(data, self.max_message_bytes)
        check_version(obj)
        try:
            message = ServerMessageAdapter.validate_python(obj)
        except ValidationError as exc:
            raise ProtocolError(f"server sent an invalid message: {validation_error(exc).message}") from exc
        if isinstance(message, EventMessage):
            if message.event == "stream_ended":
                self._streams.discard(int(message.data.get("stream_id", -1)))
            return [message.received()]
        if isinstance(message, ErrorMessage):
            error = error_for_code(message.code, message.message, message.details)
            if message.id is None:
                return [Failed(None, None, error)]
            pending = self._pending.pop(message.id, None)
            if pending is None:
                if message.id in self._abandoned:
                    return []
                return [Failed(message.id, None, error)]
            self._after_answer(pending.request, ok=False)
            return [Failed(message.id, pending.request, error)]
        pending = self._pending.pop(message.id, None)
        if pending is None:
            if message.id in self._abandoned:
                return []
            raise ProtocolError(f"result for unknown request id {message.id}")
        return [self._complete(message, pending)]

    def _complete(self, message: ResultMessage, pending: _Pending) -> Completed | Failed:
        request = pending.request
        frame = pending.frame
        if (message.binary is None) != (frame is None):
            return Failed(message.id, request, ProtocolError(
                f"result {message.id} {'announces' if message.binary else 'lacks'} a binary frame "
                f"that {'never came' if frame is None else 'was sent'}"))
        if message.binary is not None and frame is not None and (
                len(frame.data) != message.binary.length or frame.format != message.binary.format):
            return Failed(message.id, request, ProtocolError(
                f"binary frame for {message.id} does not match its announcement"))
        model = RESULT_MODELS[request.type]
        body = message.result
        try:
            if "observation" in body and frame is not None:
                body = dict(body)
                obs = dict(body["observation"])
                shot = dict(obs.get("screenshot") or {})
                shot["data"] = frame.data
                obs["screenshot"] = shot
                body["observation"] = obs
            payload = model.model_validate(body)
        except ValidationError as exc:
            return Failed(message.id, request, InternalError(
                f"server sent an invalid {request.type} result: {validation_error(exc).message}"))
        self._after_answer(request, ok=True, payload=payload)
        if isinstance(request, Hello):
            self.opened = True
        return Completed(message.id, request, payload)

    def _after_answer(self, request: Request, *, ok: bool, payload: BaseModel | None = None) -> None:
        if ok and isinstance(request, Stream):
            self._streams.add(request.id)
        elif isinstance(request, Unstream):
            self._streams.discard(request.stream_id)

    def streams(self) -> Iterable[int]:
        return tuple(self._streams)
