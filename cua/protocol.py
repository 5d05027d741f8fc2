"""The cua websocket protocol, sans I/O: messages, the binary screenshot frame, and the
two connection state machines.

Nothing here touches a socket, a clock or an event loop (the model is the `websockets`
library's protocol layer): the server and the client feed received frames in and send
the frames they get back. That keeps every rule of the protocol (hello first, auth,
id tracking, binary attachment, deadlines, malformed input) testable without I/O.

Wire format
-----------
- Text frames carry one JSON object with `"v": PROTOCOL_VERSION` and a `type`.
- Requests (client -> server) carry an `id`, an integer the client picks, unique among
  the requests in flight on its connection, and optionally `timeout` (seconds).
- The server answers each request with exactly one `result` or `error` (same `id`),
  and pushes `event` messages (no id) on its own.
- Screenshots travel as binary frames: `FRAME_HEADER` then the image bytes. The frame
  belonging to a response is sent just BEFORE its JSON `result`, whose `binary` field
  describes it; stream frames carry the `stream` request's id and the stream flag.
"""

from __future__ import annotations

import hmac
import json
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, TypeAdapter, ValidationError
from pydantic_core import from_json

from cua.actions import Action
from cua.errors import (
    BadRequest,
    CuaError,
    ErrorCode,
    InternalError,
    Timeout,
    Unauthorized,
    error_for_code,
)
from cua.info import CommandOutput, SandboxEventName, SandboxInfo, SnapshotRef
from cua.observation import ImageFormat, Observation, ObserveOptions, Screenshot, Size
from cua.state import StateQuery, StateResult

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "FRAME_HEADER",
    "FRAME_HEADER_LAYOUT",
    "PROTOCOL_VERSION",
    "BinaryFrame",
    "BinaryRef",
    "ClientConnection",
    "ClientMessage",
    "Completed",
    "EventMessage",
    "EventReceived",
    "Failed",
    "ProtocolError",
    "ServerConnection",
    "ServerMessage",
    "StreamFrame",
    "decode_frame",
    "encode_frame",
    "json_schema",
]

PROTOCOL_VERSION = 1
#: Largest text frame either side accepts; larger ones are refused with `bad_request`.
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
#: Request ids fit the binary header's u32.
MAX_REQUEST_ID = 2**32 - 1


# --- binary frames -----------------------------------------------------------------

#: magic "CUA" | header version u8 | image format u8 | flags u8 | request/stream id u32
#: | width u16 | height u16 -- all big-endian (network order), 14 bytes, then the image.
FRAME_HEADER = struct.Struct("!3sBBBIHH")
FRAME_MAGIC = b"CUA"
FRAME_HEADER_VERSION = 1
FLAG_STREAM = 0x01
FORMAT_CODES: dict[str, int] = {"png": 1, "jpeg": 2, "webp": 3}
_FORMATS_BY_CODE = {code: name for name, code in FORMAT_CODES.items()}

FRAME_HEADER_LAYOUT: dict[str, Any] = {
    "byte_order": "big-endian",
    "size": FRAME_HEADER.size,
    "fields": [
        {"name": "magic", "offset": 0, "type": "bytes[3]", "value": "CUA"},
        {"name": "header_version", "offset": 3, "type": "u8", "value": FRAME_HEADER_VERSION},
        {"name": "format", "offset": 4, "type": "u8", "values": FORMAT_CODES},
        {"name": "flags", "offset": 5, "type": "u8",
         "values": {"stream": FLAG_STREAM},
         "doc": "bit 0 set: a stream frame; clear: the screenshot of the response with this id"},
        {"name": "id", "offset": 6, "type": "u32", "doc": "the request id (response) or the stream request's id"},
        {"name": "width", "offset": 10, "type": "u16"},
        {"name": "height", "offset": 12, "type": "u16"},
    ],
    "payload": "the encoded image bytes follow the header to the end of the frame",
}


@dataclass(frozen=True, slots=True)
class BinaryFrame:
    id: int
    format: ImageFormat
    width: int
    height: int
    data: bytes
    stream: bool = False

    def screenshot(self) -> Screenshot:
        return Screenshot(format=self.format, width=self.width, height=self.height, data=self.data)


def encode_frame(request_id: int, shot: Screenshot, *, stream: bool = False) -> bytes:
    header = FRAME_HEADER.pack(FRAME_MAGIC, FRAME_HEADER_VERSION, FORMAT_CODES[shot.format],
                               FLAG_STREAM if stream else 0, request_id, shot.width, shot.height)
    return header + shot.data


def decode_frame(data: bytes | bytearray | memoryview) -> BinaryFrame:
    """Parse a binary frame; raises BadRequest for anything that is not one."""
    if len(data) < FRAME_HEADER.size:
        raise BadRequest(f"binary frame of {len(data)} bytes is shorter than the {FRAME_HEADER.size}-byte header")
    magic, version, fmt, flags, rid, width, height = FRAME_HEADER.unpack_from(data)
    if magic != FRAME_MAGIC:
        raise BadRequest(f"binary frame has magic {magic!r}, expected {FRAME_MAGIC!r}")
    if version != FRAME_HEADER_VERSION:
        raise BadRequest(f"binary frame header version {version}, this side speaks {FRAME_HEADER_VERSION}")
    if fmt not in _FORMATS_BY_CODE:
        raise BadRequest(f"binary frame has unknown image format code {fmt}")
    return BinaryFrame(id=rid, format=_FORMATS_BY_CODE[fmt], width=width, height=height,  # type: ignore[arg-type]
                       data=bytes(data[FRAME_HEADER.size:]), stream=bool(flags & FLAG_STREAM))


# --- client -> server requests -------------------------------------------------------

#: A request id: an integer (never a string or a boolean) that fits the frame header's u32.
RequestId = Annotated[int, Field(ge=0, le=MAX_REQUEST_ID, strict=True)]
#: A sandbox or snapshot id as the server hands them out.
ObjectId = Annotated[str, Field(min_length=1, max_length=256)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")
    v: StrictInt = PROTOCOL_VERSION


class _Request(_Message):
    id: RequestId
    #: Seconds the server may spend on this request before answering `timeout`.
    timeout: float | None = Field(None, gt=0, le=3600, allow_inf_nan=False, strict=True)


class Hello(_Request):
    """The first message of a connection. `token` may instead arrive as an
    `Authorization: Bearer` header on the websocket handshake."""

    type: Literal["hello"] = "hello"
    protocol: StrictInt = PROTOCOL_VERSION
    token: str | None = Field(None, max_length=4096)
    client: str = Field("", max_length=200)


class Create(_Request):
    type: Literal["create"] = "create"
    kind: str = Field(min_length=1, max_length=64)
    config: dict[str, Any] = Field(default_factory=dict)
    observe: ObserveOptions | None = None
    #: Keep the sandbox when this connection closes (reachable by id from the same
    #: principal's connections; closed by `close`, idle reaping or server shutdown).
    keep: StrictBool = False


class Reset(_Request):
    type: Literal["reset"] = "reset"
    sandbox_id: ObjectId
    seed: Annotated[int, Field(ge=-(2**63), le=2**63 - 1, strict=True)] | None = None
    options: dict[str, Any] | None = None
    observe: ObserveOptions | None = None
    #: State queries answered once the reset has settled, in the same answer: an episode's
    #: initial reads (the judge's, the instruction from the page) cost no second round trip.
    queries: list[StateQuery] | None = Field(None, max_length=1000)


class Act(_Request):
    """One action, or several performed in order with a single observation at the end."""

    type: Literal["act"] = "act"
    sandbox_id: ObjectId
    action: Action | list[Action]
    #: The frame the action coordinates refer to (default: the last observation's).
    frame: Size | None = None
    observe: ObserveOptions | None = None
    #: State queries answered once the action has settled, in the same answer
    #: (`ObservationResult.results`): an RL step with dense reward costs one round trip.
    queries: list[StateQuery] | None = Field(None, max_length=1000)


class Observe(_Request):
    type: Literal["observe"] = "observe"
    sandbox_id: ObjectId
    options: ObserveOptions | None = None


class Query(_Request):
    type: Literal["query"] = "query"
    sandbox_id: ObjectId
    queries: list[StateQuery] = Field(max_length=1000)


class Snapshot(_Request):
    type: Literal["snapshot"] = "snapshot"
    sandbox_id: ObjectId


class Restore(_Request):
    type: Literal["restore"] = "restore"
    sandbox_id: ObjectId
    snapshot_id: ObjectId
    observe: ObserveOptions | None = None


class DeleteSnapshot(_Request):
    """Free a snapshot's saved state (long RL runs take many)."""

    type: Literal["delete_snapshot"] = "delete_snapshot"
    snapshot_id: ObjectId


class Fork(_Request):
    type: Literal["fork"] = "fork"
    sandbox_id: ObjectId
    snapshot_id: ObjectId
    observe: ObserveOptions | None = None
    keep: StrictBool = False


class Close(_Request):
    type: Literal["close"] = "close"
    sandbox_id: ObjectId


class ListSandboxes(_Request):
    type: Literal["list"] = "list"
    #: Every sandbox this caller may see (an admin: all of the server's), not only those
    #: this connection created or used.
    all: StrictBool = False


class Stream(_Request):
    """Ask for live screenshot frames; they arrive as binary stream frames with this
    request's id until `unstream`, or the sandbox closes (then an event `stream_ended`)."""

    type: Literal["stream"] = "stream"
    sandbox_id: ObjectId
    options: ObserveOptions | None = None
    max_fps: float = Field(10.0, gt=0, le=60, allow_inf_nan=False, strict=True)


class Unstream(_Request):
    type: Literal["unstream"] = "unstream"
    stream_id: RequestId


class Cancel(_Request):
    """Abort the in-flight request `target`; it is answered with error `cancelled`."""

    type: Literal["cancel"] = "cancel"
    target: RequestId


class Ping(_Request):
    type: Literal["ping"] = "ping"


# --- files and commands in a sandbox: upload, run ------------------------------------
# Both need the `drive` scope on a sandbox the caller may drive (never an open endpoint).

#: Bytes of file data one `upload` carries (base64 grows it by a third, under the
#: default message limit); bigger files go in chunks with `append: true`.
UPLOAD_CHUNK_BYTES = 2 * 1024 * 1024


class Upload(_Request):
    """Write bytes into a file in the sandbox: `path` relative to the sandbox user's home
    (or absolute inside it), parent folders made, written as that user. `data` is base64;
    `append` adds to the file instead of replacing it (chunked uploads)."""

    type: Literal["upload"] = "upload"
    sandbox_id: ObjectId
    path: str = Field(min_length=1, max_length=4096)
    data: str = Field(max_length=(UPLOAD_CHUNK_BYTES * 4) // 3 + 4)
    append: StrictBool = False
    #: Permission bits of a new file, e.g. 0o755 for a script.
    mode: Annotated[int, Field(ge=0, le=0o7777, strict=True)] | None = None


class Run(_Request):
    """Run one command in the sandbox (no shell unless argv names one), as its user, with a
    time limit and a bound on the output kept; answered with what it printed."""

    type: Literal["run"] = "run"
    sandbox_id: ObjectId
    argv: list[Annotated[str, Field(max_length=65536)]] = Field(min_length=1, max_length=1024)
    #: Working directory, relative to the sandbox user's home.
    cwd: str | None = Field(None, max_length=4096)
    #: Base64 bytes fed to the command's standard input.
    stdin: str | None = Field(None, max_length=(UPLOAD_CHUNK_BYTES * 4) // 3 + 4)
    time_limit: float = Field(30.0, gt=0, le=600, allow_inf_nan=False)
    #: Bytes of stdout and of stderr kept (the rest is dropped; `truncated` says so).
    max_output_bytes: Annotated[int, Field(ge=0, le=1_000_000, strict=True)] = 100_000


Request = (Hello | Create | Reset | Act | Observe | Query | Snapshot | Restore | DeleteSnapshot | Fork | Close
           | ListSandboxes | Stream | Unstream | Cancel | Ping | Upload | Run)
ClientMessage = Annotated[Request, Field(discriminator="type")]
ClientMessageAdapter: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
REQUEST_TYPES: tuple[str, ...] = ("hello", "create", "reset", "act", "observe", "query", "snapshot", "restore",
                                  "delete_snapshot", "fork", "close", "list", "stream", "unstream", "cancel", "ping",
                                  "upload", "run")


# --- result payloads -----------------------------------------------------------------

class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HelloResult(_Payload):
    protocol: int = PROTOCOL_VERSION
    server: str
    session: str
    max_message_bytes: int


class SandboxResult(_Payload):
    """create / fork: the new sandbox and its first observation."""

    sandbox: SandboxInfo
    observation: Observation


class ObservationResult(_Payload):
    """reset / act / observe / restore."""

    observation: Observation
    #: The reset's or act's `queries`, answered after it (None when it asked none).
    results: list[StateResult] | None = None


class QueryResult(_Payload):
    results: list[StateResult]


class SnapshotResult(_Payload):
    snapshot: SnapshotRef


class ListResult(_Payload):
    sandboxes: list[SandboxInfo]


class StreamResult(_Payload):
    stream_id: int


class CancelResult(_Payload):
    #: False when the target was no longer in flight (already answered).
    cancelled: bool


class EmptyResult(_Payload):
    pass


class UploadResult(_Payload):
    #: The file's absolute path in the sandbox, and its size after this chunk.
    path: str
    size: int


class RunResult(_Payload):
    output: CommandOutput


RESULT_MODELS: dict[str, type[_Payload]] = {
    "hello": HelloResult, "create": SandboxResult, "fork": SandboxResult,
    "reset": ObservationResult, "act": ObservationResult, "observe": ObservationResult,
    "restore": ObservationResult, "query": QueryResult, "snapshot": SnapshotResult,
    "delete_snapshot": EmptyResult, "close": EmptyResult, "list": ListResult, "stream": StreamResult,
    "unstream": EmptyResult, "cancel": CancelResult, "ping": EmptyResult,
    "upload": UploadResult, "run": RunResult,
}


# --- server -> client messages -------------------------------------------------------

class BinaryRef(BaseModel):
    """Describes the binary frame sent just before this result (the screenshot of its
    observation)."""

    model_config = ConfigDict(extra="forbid")
    format: ImageFormat
    width: int
    height: int
    length: int


class ResultMessage(_Message):
    type: Literal["result"] = "result"
    id: int
    result: dict[str, Any]
    binary: BinaryRef | None = None


class ErrorMessage(_Message):
    type: Literal["error"] = "error"
    #: None when the request's id could not be read.
    id: int | None
    code: ErrorCode
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


#: A sandbox's own events, plus the server's word that a stream it was sending has ended.
EventName = SandboxEventName | Literal["stream_ended"]


class EventMessage(_Message):
    type: Literal["event"] = "event"
    sandbox_id: str | None
    event: EventName
    data: dict[str, Any] = Field(default_factory=dict)


ServerMessage = Annotated[ResultMessage | ErrorMessage | EventMessage, Field(discriminator="type")]
ServerMessageAdapter: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)


def json_schema() -> dict[str, Any]:
    """JSON Schema of everything on the wire, for clients in other languages."""
    payloads = {name: model.model_json_schema() for name, model in
                {m.__name__: m for m in RESULT_MODELS.values()}.items()}
    return {
        "protocol_version": PROTOCOL_VERSION,
        "client_message": ClientMessageAdapter.json_schema(),
        "server_message": ServerMessageAdapter.json_schema(),
        "result_payloads": {rtype: model.__name__ for rtype, model in RESULT_MODELS.items()},
        "payload_schemas": payloads,
        "binary_frame": FRAME_HEADER_LAYOUT,
    }


# --- shared helpers ------------------------------------------------------------------

class ProtocolError(BadRequest):
    """The peer broke the protocol (garbage, an answer to nothing, a missing frame)."""


def _loads(data: str | bytes, max_bytes: int) -> dict[str, Any]:
    size = len(data)
    if isinstance(data, str) and 4 * size > max_bytes:  # only long texts can be over: count their bytes
        size = len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise BadRequest(f"message of {size} bytes exceeds the limit of {max_bytes}",
                         details={"size": size, "limit": max_bytes})
    try:
        obj = from_json(data)  # pydantic's parser: faster than json.loads on big trees
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"invalid JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise BadRequest(f"a message must be a JSON object, got {type(obj).__name__}")
    return obj


def _recoverable_id(obj: dict[str, Any]) -> int | None:
    rid = obj.get("id")
    if isinstance(rid, int) and not isinstance(rid, bool) and 0 <= rid <= MAX_REQUEST_ID:
        return rid
    return None


def _validation_error(exc: ValidationError) -> BadRequest:
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    loc, msg = (errors[0]["loc"], errors[0]["msg"]) if errors else ((), "invalid")
    where = ".".join(str(p) for p in loc)
    return BadRequest(f"invalid message: {where}: {msg}"
                      + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""),
                      details={"errors": errors})


def _check_version(obj: dict[str, Any]) -> None:
    v = obj.get("v", PROTOCOL_VERSION)
    if v != PROTOCOL_VERSION:
        raise BadRequest(f"protocol version {v!r} not supported; this side speaks version {PROTOCOL_VERSION}",
                         details={"peer": v, "supported": PROTOCOL_VERSION})


def _dumps(message: BaseModel) -> str:
    return message.model_dump_json(exclude_none=False)


# --- server side ---------------------------------------------------------------------

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
            obj = _loads(data, self.max_message_bytes)
        except BadRequest as exc:
            return self._refuse(None, exc)
        rid = _recoverable_id(obj)
        try:
            _check_version(obj)
            message = ClientMessageAdapter.validate_python(obj)
        except BadRequest as exc:
            return self._refuse(rid, exc)
        except ValidationError as exc:
            if obj.get("type") not in REQUEST_TYPES:
                return self._refuse(rid, BadRequest(f"unknown message type {obj.get('type')!r}",
                                                    details={"known": list(REQUEST_TYPES)}))
            return self._refuse(rid, _validation_error(exc))
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
        return _dumps(ErrorMessage(id=request_id, code=exc.code, message=exc.message, details=_jsonable(exc.details)))

    def timeout_error(self, request_id: int, seconds: float | None) -> str:
        return self.error(request_id, Timeout(f"request {request_id} exceeded its timeout of {seconds}s",
                                              details={"timeout": seconds}))

    def event(self, sandbox_id: str | None, event: str, data: dict[str, Any] | None = None) -> str:
        return _dumps(EventMessage(sandbox_id=sandbox_id, event=event, data=data or {}))  # type: ignore[arg-type]

    @staticmethod
    def stream_frame(stream_id: int, shot: Screenshot) -> bytes:
        return encode_frame(stream_id, shot, stream=True)


def _jsonable(value: Any) -> Any:
    """Error details must survive JSON; anything odd becomes its repr."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=repr))


# --- client side ---------------------------------------------------------------------

@dataclass(slots=True)
class Completed:
    id: int
    request: Request
    #: The typed payload (see RESULT_MODELS), observations with the screenshot attached.
    result: Any


@dataclass(slots=True)
class Failed:
    id: int | None
    request: Request | None
    error: CuaError


@dataclass(slots=True)
class EventReceived:
    sandbox_id: str | None
    event: str
    data: dict[str, Any]


@dataclass(slots=True)
class StreamFrame:
    stream_id: int
    screenshot: Screenshot


Received = Completed | Failed | EventReceived | StreamFrame


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
        return request.id, _dumps(request)

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
        obj = _loads(data, self.max_message_bytes)
        _check_version(obj)
        try:
            message = ServerMessageAdapter.validate_python(obj)
        except ValidationError as exc:
            raise ProtocolError(f"server sent an invalid message: {_validation_error(exc).message}") from exc
        if isinstance(message, EventMessage):
            if message.event == "stream_ended":
                self._streams.discard(int(message.data.get("stream_id", -1)))
            return [EventReceived(message.sandbox_id, message.event, message.data)]
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
                f"server sent an invalid {request.type} result: {_validation_error(exc).message}"))
        self._after_answer(request, ok=True, payload=payload)
        if isinstance(request, Hello):
            self.opened = True
        return Completed(message.id, request, payload)

    def _after_answer(self, request: Request, *, ok: bool, payload: Any = None) -> None:
        if ok and isinstance(request, Stream):
            self._streams.add(request.id)
        elif isinstance(request, Unstream):
            self._streams.discard(request.stream_id)

    def streams(self) -> Iterable[int]:
        return tuple(self._streams)
