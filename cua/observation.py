"""What an agent sees: a screenshot in a stated coordinate frame, plus optional text state.

Plain data shared by sandboxes, the protocol, policies and recorders. The screenshot's
bytes travel as a binary websocket frame; everything else travels as JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "MAX_FRAME_PIXELS",
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


#: Largest observation frame (width x height) a client may ask for: a 4096x4096 image.
#: Bigger frames cost seconds of encoding and hundreds of MiB per observation.
MAX_FRAME_PIXELS = 4096 * 4096


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
    #: Give each interactive element of the accessibility tree a stable `id` (implies
    #: `axtree`). The ids survive later steps and snapshot restores, and `click_element` /
    #: `hover_element` actions name them.
    element_ids: bool = False
    #: Browser sandboxes: also Chromium's own structures the compact fields are read from,
    #: in `Observation.cdp`, for adapters that speak Chromium's formats (BrowserGym's
    #: `dom_object` and `axtree_object`). Hundreds of KB on a busy page; other kinds ignore it.
    cdp: bool = False

    @field_validator("frame")
    @classmethod
    def _bounded_frame(cls, value: Size | None) -> Size | None:
        if value is not None and value.width * value.height > MAX_FRAME_PIXELS:
            raise ValueError(f"a frame of {value.width}x{value.height} exceeds the limit of {MAX_FRAME_PIXELS} pixels")
        return value


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
    #: With `ObserveOptions.cdp`, from the same reads as `axtree`: `dom_snapshot` (CDP's
    #: `DOMSnapshot.captureSnapshot`, with DOM rects and paint order), `axtree_nodes`
    #: (`Accessibility.getFullAXTree`'s nodes) and `element_ids` ({str(backend node id): element id}).
    cdp: dict[str, Any] | None = None
    settle: SettleInfo | None = None
    error: ActionError | None = None
    #: The pointer action an element action (`click_element`, `hover_element`) was resolved
    #: to, in this observation's frame: what a pixel replay performs.
    resolved_action: dict[str, Any] | None = None
    #: Where the time went ("act", "settle", "observe", ...). A browser sandbox that found the
    #: screen unchanged since its last capture sends that capture again and says so here:
    #: "screenshot_reused_from_step" is the step the capture was taken at.
    timings_ms: dict[str, float] = Field(default_factory=dict)
    #: Monotonic counter of actions performed since the last reset.
    step: int = 0
