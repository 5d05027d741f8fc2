"""Client -> server requests: one pydantic model per request type, told apart by `type`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, StrictInt, TypeAdapter

from cua.actions import Action
from cua.observation import ObserveOptions, Size
from cua.protocol.wire import MAX_REQUEST_ID, PROTOCOL_VERSION, WireMessage
from cua.state import StateQuery

#: A request id: an integer (never a string or a boolean) that fits the frame header's u32.
RequestId = Annotated[int, Field(ge=0, le=MAX_REQUEST_ID, strict=True)]
#: A sandbox or snapshot id as the server hands them out.
ObjectId = Annotated[str, Field(min_length=1, max_length=256)]



class _Request(WireMessage):
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
