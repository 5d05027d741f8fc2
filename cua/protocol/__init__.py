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

The package, one concern a module (`from cua.protocol import X` finds every name):
`wire` (version, limits, parsing), `frames` (the binary frame), `requests`, `results`,
`messages` (server -> client, and `json_schema`), `server` and `client` (the two state machines).
"""

from __future__ import annotations

from cua.info import EventName
from cua.protocol.client import (
    ClientConnection,
    Completed,
    Failed,
    Received,
    StreamFrame,
)
from cua.protocol.frames import (
    FLAG_STREAM,
    FORMAT_CODES,
    FRAME_HEADER,
    FRAME_HEADER_LAYOUT,
    FRAME_HEADER_VERSION,
    FRAME_MAGIC,
    BinaryFrame,
    decode_frame,
    encode_frame,
)
from cua.protocol.messages import (
    BinaryRef,
    ErrorMessage,
    EventMessage,
    ResultMessage,
    ServerMessage,
    ServerMessageAdapter,
    json_schema,
)
from cua.protocol.requests import (
    REQUEST_TYPES,
    UPLOAD_CHUNK_BYTES,
    Act,
    Cancel,
    ClientMessage,
    ClientMessageAdapter,
    Close,
    Create,
    DeleteSnapshot,
    Fork,
    Hello,
    ListSandboxes,
    ObjectId,
    Observe,
    Ping,
    Query,
    Request,
    RequestId,
    Reset,
    Restore,
    Run,
    Snapshot,
    Stream,
    Unstream,
    Upload,
)
from cua.protocol.results import (
    RESULT_MODELS,
    CancelResult,
    EmptyResult,
    HelloResult,
    ListResult,
    ObservationResult,
    QueryResult,
    RunResult,
    SandboxResult,
    SnapshotResult,
    StreamResult,
    UploadResult,
)
from cua.protocol.server import (
    Incoming,
    ServerConnection,
)
from cua.protocol.wire import (
    DEFAULT_MAX_MESSAGE_BYTES,
    MAX_REQUEST_ID,
    PROTOCOL_VERSION,
    ProtocolError,
)

__all__ = [
    "Act",
    "BinaryFrame",
    "BinaryRef",
    "Cancel",
    "CancelResult",
    "ClientConnection",
    "ClientMessage",
    "ClientMessageAdapter",
    "Close",
    "Completed",
    "Create",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DeleteSnapshot",
    "EmptyResult",
    "ErrorMessage",
    "EventMessage",
    "EventName",
    "FLAG_STREAM",
    "FORMAT_CODES",
    "FRAME_HEADER",
    "FRAME_HEADER_LAYOUT",
    "FRAME_HEADER_VERSION",
    "FRAME_MAGIC",
    "Failed",
    "Fork",
    "Hello",
    "HelloResult",
    "Incoming",
    "ListResult",
    "ListSandboxes",
    "MAX_REQUEST_ID",
    "ObjectId",
    "ObservationResult",
    "Observe",
    "PROTOCOL_VERSION",
    "Ping",
    "ProtocolError",
    "Query",
    "QueryResult",
    "REQUEST_TYPES",
    "RESULT_MODELS",
    "Received",
    "Request",
    "RequestId",
    "Reset",
    "Restore",
    "ResultMessage",
    "Run",
    "RunResult",
    "SandboxResult",
    "ServerConnection",
    "ServerMessage",
    "ServerMessageAdapter",
    "Snapshot",
    "SnapshotResult",
    "Stream",
    "StreamFrame",
    "StreamResult",
    "UPLOAD_CHUNK_BYTES",
    "Unstream",
    "Upload",
    "UploadResult",
    "decode_frame",
    "encode_frame",
    "json_schema",
]
