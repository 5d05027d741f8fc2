"""Replay: re-execute a trajectory's actions from its start, through the episode layer,
and report where the replay's screens, URLs and judge state first differ from the
recording and whether the verdict is reproduced.

- the perceptual screen difference and its threshold: `cua.screen_diff`
- `replay`: `replay(source, opener, out)` -> `ReplayReport`

Drives `cua.episode`; reads `cua.trajectory`; never imports eval, rl or record.
"""

from cua.replay.replay import Divergence, ReplayError, ReplayReport, StepCheck, replay
from cua.screen_diff import SCREEN_THRESHOLD, screen_difference

__all__ = ["SCREEN_THRESHOLD", "Divergence", "ReplayError", "ReplayReport", "StepCheck", "replay",
           "screen_difference"]
