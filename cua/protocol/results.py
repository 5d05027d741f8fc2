"""Result payloads: what the server answers to each request type (`RESULT_MODELS`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from cua.info import CommandOutput, SandboxInfo, SnapshotRef
from cua.observation import Observation
from cua.protocol.wire import PROTOCOL_VERSION
from cua.state import StateResult


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
