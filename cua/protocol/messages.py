"""Server -> client messages (result, error, event) and the JSON Schema of the whole wire."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from cua.errors import ErrorCode
from cua.info import EventName, SandboxEvent
from cua.observation import ImageFormat
from cua.protocol.frames import FRAME_HEADER_LAYOUT
from cua.protocol.requests import ClientMessageAdapter
from cua.protocol.results import RESULT_MODELS
from cua.protocol.wire import PROTOCOL_VERSION, WireMessage


class BinaryRef(BaseModel):
    """Describes the binary frame sent just before this result (the screenshot of its
    observation)."""

    model_config = ConfigDict(extra="forbid")
    format: ImageFormat
    width: int
    height: int
    length: int


class ResultMessage(WireMessage):
    type: Literal["result"] = "result"
    id: int
    result: dict[str, Any]
    binary: BinaryRef | None = None


class ErrorMessage(WireMessage):
    type: Literal["error"] = "error"
    #: None when the request's id could not be read.
    id: int | None
    code: ErrorCode
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class EventMessage(WireMessage):
    """A `SandboxEvent` on the wire: its fields, in the message envelope."""

    type: Literal["event"] = "event"
    sandbox_id: str | None
    event: EventName
    data: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, event: SandboxEvent) -> EventMessage:
        return cls(sandbox_id=event.sandbox_id, event=event.event, data=event.data)

    def received(self) -> SandboxEvent:
        return SandboxEvent(sandbox_id=self.sandbox_id, event=self.event, data=self.data)


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
