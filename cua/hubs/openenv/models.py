"""What an OpenEnv client sends and gets: cua's action, observation and state as OpenEnv types.

- `CuaAction`: one `cua.actions.Action` (the unified action union), validated by that union,
  so a wrong action is refused by validation (OpenEnv's `VALIDATION_ERROR`) before anything
  reaches the sandbox, and `/schema` shows every action's fields.
- `CuaObservation`: what the agent sees after a reset or step: the instruction, the page's
  URL and title where there is one, the screenshot as base64 PNG or JPEG (never a list of
  integers), the action that could not be performed, and, when the episode is over, the
  judge's verdict; `reward` and `done` as OpenEnv defines them.
- `CuaState`: where the session's episode is (task, seed, steps, over).
"""

from __future__ import annotations

import base64
from typing import Literal

from openenv.core.env_server.types import Action as OpenEnvAction
from openenv.core.env_server.types import Observation as OpenEnvObservation
from openenv.core.env_server.types import State as OpenEnvState
from pydantic import Field

from cua.actions import Action
from cua.observation import ActionError, ImageFormat, Observation
from cua.task import Verdict

__all__ = ["CuaAction", "CuaObservation", "CuaState", "RewardMode"]

RewardMode = Literal["sparse", "dense"]


class CuaAction(OpenEnvAction):
    """One step's action, e.g. ``{"action": {"type": "click", "x": 10, "y": 20}}``."""

    action: Action = Field(description="a cua unified action (`cua.actions`), in the observation's pixels")


class CuaObservation(OpenEnvObservation):
    task_id: str
    seed: int
    instruction: str
    url: str | None = None
    title: str | None = None
    #: The screenshot, base64 of the encoded image (`screenshot_format`), in the frame's pixels.
    screenshot: str | None = Field(default=None, description="base64 PNG or JPEG")
    screenshot_format: ImageFormat | None = None
    width: int = Field(description="the frame's width: action coordinates are in its pixels")
    height: int
    #: The agent's last action that could not be performed (the episode goes on).
    error: ActionError | None = None
    #: Steps taken in this episode.
    step: int = 0
    #: The judge's dense progress after the step, where it was read.
    progress: float | None = None
    truncated: bool = False
    #: The judge's verdict of the final state, once the episode is over.
    verdict: Verdict | None = None

    @classmethod
    def of(cls, obs: Observation, *, task_id: str, seed: int, instruction: str, step: int, reward: float | None,
           done: bool, truncated: bool = False, progress: float | None = None,
           verdict: Verdict | None = None) -> CuaObservation:
        shot = obs.screenshot
        return cls(task_id=task_id, seed=seed, instruction=instruction, url=obs.url, title=obs.title,
                   screenshot=base64.b64encode(shot.data).decode() if shot else None,
                   screenshot_format=shot.format if shot else None, width=obs.frame.width, height=obs.frame.height,
                   error=obs.error, step=step, progress=progress, truncated=truncated, verdict=verdict,
                   reward=reward, done=done)


class CuaState(OpenEnvState):
    """The session's episode; `task_id` None before the first reset."""

    task_id: str | None = None
    seed: int | None = None
    instruction: str | None = None
    sandbox_kind: str | None = None
    #: The episode is over (terminated or truncated): reset before the next step.
    over: bool = False
    reward_mode: RewardMode = "sparse"
