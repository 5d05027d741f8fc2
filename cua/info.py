"""What a sandbox host tells about its sandboxes: a sandbox's info, a snapshot's handle, an event.

Plain data, shared by the sandbox interface, the wire protocol and the client, so that
none of them imports another to name these.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cua.observation import Size

__all__ = ["CommandOutput", "EventName", "SandboxEvent", "SandboxEventName", "SandboxInfo", "SnapshotRef"]


class SandboxInfo(BaseModel):
    id: str
    kind: str
    status: Literal["starting", "ready", "crashed", "closed"] = "ready"
    screen: Size
    capabilities: list[str] = Field(default_factory=list)
    #: State query kinds this sandbox answers.
    queries: list[str] = Field(default_factory=list)
    created_at: float = Field(default_factory=time.time)
    last_active: float = Field(default_factory=time.time)
    #: e.g. {"create": 52.1, "restore_last": 31.0} in milliseconds.
    timings_ms: dict[str, float] = Field(default_factory=dict)
    #: Kind-specific facts, e.g. {"isolation": "container", "accel": "tcg"}.
    details: dict[str, Any] = Field(default_factory=dict)


class SnapshotRef(BaseModel):
    """A handle to saved sandbox state. The bytes stay with the sandbox host."""

    id: str
    sandbox_id: str
    kind: str
    created_at: float = Field(default_factory=time.time)
    size_bytes: int = 0
    meta: dict[str, Any] = Field(default_factory=dict)


class CommandOutput(BaseModel):
    """What a bounded command run in a sandbox (`run`) printed, and how it ended."""

    #: None when the command was killed at its time limit.
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    #: Output beyond the bound was dropped.
    truncated: bool = False
    timed_out: bool = False
    duration_ms: float = 0.0


#: What a sandbox reports on its own.
SandboxEventName = Literal["died", "navigated", "console", "dialog", "closed"]
#: A sandbox's own events, plus the server's word that a stream it was sending has ended.
EventName = SandboxEventName | Literal["stream_ended"]


class SandboxEvent(BaseModel):
    """Something reported about a sandbox on its own, not as an answer to a request: it died,
    its page navigated or logged to the console, a dialog was accepted, it closed
    (`data["reason"] == "idle"` when reaped), a stream of it ended.

    The one shape of an event from the sandbox that emits it, through the server's manager
    and connections, to a client's and a local handle's callbacks. On the wire it is an
    `event` message with these same fields (`cua.protocol.EventMessage`)."""

    model_config = ConfigDict(frozen=True)
    #: The sandbox it is about (the wire allows None, an event of the connection itself).
    sandbox_id: str | None
    event: EventName
    data: dict[str, Any] = Field(default_factory=dict)
