"""What an agent sees: a screenshot in a stated coordinate frame, plus optional text state.

Plain data shared by sandboxes, the protocol, policies and recorders. The screenshot's
bytes travel as a binary websocket frame; everything else travels as JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ActionError",
    "ImageFormat",
    "Observation",
    "ObserveOptions",
    "Screenshot",
    "SettleInfo",
    "Size",
]

ImageFormat = Literal["png", "jpeg", "webp"]


class Size(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    width: int = Field(gt=0, le=16384)
    height: int = Field(gt=0, le=16384)


class ObserveOptions(BaseModel):
    """What to put in an observation. Cheap by default: a JPEG and the URL/title."""

    model_config = ConfigDict(extra="forbid")
    screenshot: bool = True
    format: ImageFormat = "jpeg"
    quality: int = Field(80, ge=1, le=100)
    #: Resize the screenshot to this frame. Actions are then read in this frame too.
    frame: Size | None = None
    axtree: bool = False
    focused: bool = False


class Screenshot(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: ImageFormat
    width: int
    height: int
    data: bytes = Field(repr=False, exclude=True)


class SettleInfo(BaseModel):
    """How the sandbox decided the screen had settled after an action."""

    settled: bool
    waited_ms: float
    reason: str = ""


class ActionError(BaseModel):
    """An agent fault (bad coordinates, missing element, unsupported action), reported in
    the observation rather than raised, so the episode goes on and the agent can see it."""

    code: Literal["action_failed"] = "action_failed"
    reason: str
    message: str


class Observation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sandbox_id: str
    #: The frame that action coordinates refer to (the screenshot's size when present).
    frame: Size
    #: The sandbox's real screen size.
    screen: Size
    screenshot: Screenshot | None = None
    url: str | None = None
    title: str | None = None
    axtree: list[dict[str, Any]] | None = None
    focused: dict[str, Any] | None = None
    settle: SettleInfo | None = None
    error: ActionError | None = None
    timings_ms: dict[str, float] = Field(default_factory=dict)
    #: Monotonic counter of actions performed since the last reset.
    step: int = 0
