"""`FakeConfig`: the fake kind's screen and the faults it can be told to stage."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cua.observation import Size
from cua.sandbox import screen_from_viewport

__all__ = ["FakeConfig"]


class FakeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    #: The screen size (also accepted as `viewport`, the task format's name for it).
    screen: Size = Field(default_factory=lambda: Size(width=640, height=400))
    #: The form's heading, and the window title an observation carries.
    title: str = Field("Fake form", min_length=1, max_length=200)
    #: The seed a reset without one uses.
    seed: int = 0
    #: How long every action takes (seconds): lets tests see concurrency, cancellation and
    #: time limits on a sandbox that otherwise answers at once.
    act_delay_s: float = Field(0.0, ge=0, le=60)
    #: The sandbox dies (its `died` event, then `SandboxCrashed` from every call) when an
    #: action would make this many since the last reset: a staged infrastructure fault.
    die_at_step: int | None = Field(None, ge=1)

    _viewport = model_validator(mode="before")(staticmethod(screen_from_viewport))
