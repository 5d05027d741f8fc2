"""The server's state machine for one connection: hello and auth first, then requests
with their deadlines; it builds every frame the server sends."""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from cua.errors import BadRequest, CuaError, Timeout, Unauthorized
from cua.info import SandboxEvent
from cua.observation import Screenshot
from cua.protocol.frames import encode_frame
from cua.protocol.messages import BinaryRef, ErrorMessage, EventMessage
from cua.protocol.requests import REQUEST_TYPES, ClientMessageAdapter, Hello, Request
from cua.protocol.results import HelloResult, ObservationResult, SandboxResult
from cua.protocol.wire import (
    DEFAULT_MAX_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    check_version,
    dumps,
    jsonable,
    loads,
    recoverable_id,
    validation_error,
)


@dataclass(slots=True)
class Incoming:
    """What the server makes of one received frame."""

    #: A valid request to perform (never `hello`, `cancel` of nothing, or garbage).
    request: Request | None = None
    #: Frames to send back at once (hello's result, errors for malformed input).
    reply: list[str | bytes] = field(default_factory=list)
    #: The server must close the connection after sending `reply`.
    close: bool = False
    #: The frame was refused (malformed, out of protocol, unauthorized).
    refused: bool = False


class ServerConnection:
    """The server's view of one connection: hello and auth first, then requests.

    Tracks in-flight request ids (a duplicate id is a `bad_request`) with their
    deadlines, as plain numbers from the caller's clock.
    """

    def __init__(self, *, token: str | None, authorized: bool = False, server_name: str = "cua",
                 session: str = "", max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 authenticate: Callable[[str], object | None] | None = None, grant: object | None = None) -> None:
        self._token = token
        #: Resolves a hello token to the caller's grant (None: refused). Without it, the
        #: token must equal `token`, and the grant is True.
        self._authenticate = authenticate
        #: Whether the handshake already proved the token (Authorization header).
        self._header_auth = authorized or token is None
        #: Who the peer is, once authenticated (opaque to the protocol: the server's grant).
        self.grant: object | None = grant if self._header_auth else None
        self.server_name = server_name
        self.session = session
        self.max_message_bytes = max_message_bytes
        self.state: Literal["awaiting_hello", "open", "closed"] = "awaiting_hello"
        self.client_name = ""
        self._deadlines: dict[int, float | None] = {}

    # receiving

    def receive(self, data: str | bytes, now: float = 0.0) -> Incoming:
        if self.state == "closed":
            return Incoming()
        if isinstance(data, (bytes, bytearray, memoryview)):
            return self._refuse(None, BadRequest("clients send JSON in text frames; binary frames are refused"))
        try:
            obj = loads(data, self.max_message_bytes)
        except BadRequest as exc:
            return self._refuse(None, exc)
        rid = recoverable_id(obj)
        try:
            check_version(obj)
            message = ClientMessageAdapter.validate_python(obj)
        except BadRequest as exc:
            return self._refuse(rid, exc)
        except ValidationError as exc:
            if obj.get("type") not in REQUEST_TYPES:
                return self._refuse(rid, BadRequest(f"unknown message type {obj.get('type')!r}",
                                                    details={"known": list(REQUEST_TYPES)}))
            return self._refuse(rid, validation_error(exc))
        if isinstance(message, Hello):
            return self._hello(message)
        if self.state != "open":
            return self._refuse(message.id, BadRequest("the first message must be `hello`"))
        if message.id in self._deadlines:
            return self._refuse(None, BadRequest(f"request id {message.id} is already in flight",
                                                 details={"id": message.id}))
        self._deadlines[message.id] = None if message.timeout is None else now + message.timeout
        return Incoming(request=message)

    def _refuse(self, rid: int | None, exc: CuaError) -> Incoming:
        """Answer a bad frame. Before a successful hello, an unauthenticated peer gets
        `unauthorized` and the connection closes; anyone else gets the error."""
        if self.state == "open" or self._header_auth:
            return Incoming(reply=[self.error(rid, exc)], refused=True)
        return self._unauthorized(rid, "send `hello` with a valid token first (or an Authorization: Bearer header)")

    def _unauthorized(self, rid: int | None, message: str) -> Incoming:
        self.state = "closed"
        return Incoming(reply=[self.error(rid, Unauthorized(message))], close=True, refused=True)

    def _hello(self, hello: Hello) -> Incoming:
        if self.state == "open":
            return self._refuse(hello.id, BadRequest("`hello` was already received"))
        if hello.protocol != PROTOCOL_VERSION:
            return Incoming(reply=[self.error(hello.id, BadRequest(
                f"client speaks protocol version {hello.protocol}, server speaks {PROTOCOL_VERSION}",
                details={"client": hello.protocol, "server": PROTOCOL_VERSION}))], refused=True)
        if not self._header_auth:
            grant = self._check_token(hello.token)
            if grant is None:
                return self._unauthorized(hello.id, "missing or wrong token")
            self.grant = grant
        self.state = "open"
        self.client_name = hello.client
        payload = HelloResult(server=self.server_name, session=self.session, max_message_bytes=self.max_message_bytes)
        return Incoming(reply=[self.result(hello.id, payload)])

    def _check_token(self, token: str | None) -> object | None:
        if token is None:
            return None
        if self._authenticate is not None:
            return self._authenticate(token)
        if self._token is None or not hmac.compare_digest(token.encode("utf-8", "surrogatepass"),
                                                          self._token.encode("utf-8", "surrogatepass")):
            return None
        return True

    # in-flight bookkeeping

    def in_flight(self) -> list[int]:
        return list(self._deadlines)

    def deadline_of(self, request_id: int) -> float | None:
        return self._deadlines.get(request_id)

    def finish(self, request_id: int) -> None:
        """Forget a request once it was answered."""
        self._deadlines.pop(request_id, None)

    def next_deadline(self) -> float | None:
        pending = [d for d in self._deadlines.values() if d is not None]
        return min(pending) if pending else None

    def expire(self, now: float) -> list[int]:
        """Ids of requests whose deadline passed; the caller aborts them and answers
        `timeout` (see `timeout_error`)."""
        return [rid for rid, d in self._deadlines.items() if d is not None and d <= now]

    # building frames

    def result(self, request_id: int, payload: BaseModel | dict[str, Any],
               screenshot: Screenshot | None = None) -> str:
        """The JSON result frame. When `screenshot` is given, send `encode_frame` of it
        (see `result_frames`) before this."""
        self.finish(request_id)
        # The envelope is written by hand around pydantic's own JSON of the payload: on
        # the hot path (observations with accessibility trees) this skips building and
        # re-validating a Python dict of the whole payload.
        body = payload.model_dump_json() if isinstance(payload, BaseModel) else json.dumps(payload)
        binary = "null" if screenshot is None else BinaryRef(
            format=screenshot.format, width=screenshot.width, height=screenshot.height,
            length=len(screenshot.data)).model_dump_json()
        return (f'{{"v":{PROTOCOL_VERSION},"type":"result","id":{int(request_id)},'
                f'"result":{body},"binary":{binary}}}')

    def result_frames(self, request_id: int, payload: BaseModel | dict[str, Any],
                      screenshot: Screenshot | None = None) -> list[str | bytes]:
        frames: list[str | bytes] = []
        if screenshot is not None:
            frames.append(encode_frame(request_id, screenshot))
        frames.append(self.result(request_id, payload, screenshot))
        return frames

    def observation_frames(self, request_id: int, payload: SandboxResult | ObservationResult
                           ) -> list[str | bytes]:
        return self.result_frames(request_id, payload, payload.observation.screenshot)

    def error(self, request_id: int | None, exc: CuaError) -> str:
        if request_id is not None:
            self.finish(request_id)
        return dumps(ErrorMessage(id=request_id, code=exc.code, message=exc.message, details=jsonable(exc.details)))

    def timeout_error(self, request_id: int, seconds: float | None) -> str:
        return self.error(request_id, Timeout(f"request {request_id} exceeded its timeout of {seconds}s",
                                              details={"timeout": seconds}))

    def event(self, event: SandboxEvent) -> str:
        return dumps(EventMessage.of(event))

    @staticmethod
    def stream_frame(stream_id: int, shot: Screenshot) -> bytes:
        return encode_frame(stream_id, shot, stream=True)
