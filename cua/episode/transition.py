"""The one transition rule of every driver that pays rewards: what a step pays, and when
the episode terminates or is truncated.

`CuaEnv`, the vector env and the rollout service's env handles step an `Episode` action by
action for a trainer. They must agree exactly, or the same policy is paid differently
depending on how it is trained; so each holds a `RewardAccount` and calls `step`:

- the agent's `Done` ends the episode: terminated; so does `STOP`, a turn with nothing to
  do (`cua.episode.loop.plan`: the episode is judged where it is, without a Done, and the
  step is not counted); `None`, a wasted turn, is a step that does nothing;
- the app ending the episode itself (`TaskSetup.end_query`), or, with
  `terminate_on_success`, a state the judge passes: terminated;
- the step limit: truncated;
- the episode's return is the judge's score of the final state. `sparse` pays it all on
  the last step; `dense` pays each change of the judge's progress as it happens, and the
  last step pays the score minus what was already paid, so ending pays nothing by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cua.actions import Done
from cua.episode.episode import Episode
from cua.episode.loop import Planned, Stop
from cua.observation import Observation
from cua.task import Verdict

__all__ = ["RewardAccount", "RewardMode", "Transition"]

RewardMode = Literal["sparse", "dense"]


@dataclass(frozen=True, slots=True)
class Transition:
    """One step as a trainer sees it."""

    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    #: Dense progress after the step (None mid-episode when no progress was read).
    progress: float | None
    #: The judge's verdict of the final state, on the step that ended the episode.
    verdict: Verdict | None = None
    #: The app ended the episode itself.
    ended: bool = False

    @property
    def over(self) -> bool:
        return self.terminated or self.truncated


class RewardAccount:
    """One episode's rewards: the episode, the reward mode, and the progress paid so far."""

    def __init__(self, episode: Episode, mode: RewardMode = "sparse", *, terminate_on_success: bool = False,
                 paid: float = 0.0) -> None:
        self.episode = episode
        self.mode: RewardMode = mode
        self.terminate_on_success = terminate_on_success
        #: Dense progress already paid (0 in sparse mode until the last step).
        self.paid = paid

    @classmethod
    def at_start(cls, episode: Episode, mode: RewardMode = "sparse", *,
                 terminate_on_success: bool = False) -> RewardAccount:
        """An account for an episode just reset: dense pays progress from the state it started in
        (read by the reset itself, no second read)."""
        paid = episode.start_progress() if mode == "dense" else 0.0
        return cls(episode, mode, terminate_on_success=terminate_on_success, paid=paid)

    @classmethod
    async def at_current(cls, episode: Episode, mode: RewardMode = "sparse", *,
                         terminate_on_success: bool = False) -> RewardAccount:
        """An account for an episode continued from a restored state: its progress is read now."""
        paid = await episode.progress() if mode == "dense" else 0.0
        return cls(episode, mode, terminate_on_success=terminate_on_success, paid=paid)

    def fork(self, episode: Episode) -> RewardAccount:
        """The same account for a fork of the episode (the progress paid so far carries over)."""
        return RewardAccount(episode, self.mode, terminate_on_success=self.terminate_on_success, paid=self.paid)

    async def step(self, action: Planned) -> Transition:
        """One planned step (`cua.episode.loop.plan`): an action, `None` (a wasted turn) or `STOP`."""
        ep = self.episode
        if isinstance(action, Stop):
            return await self.finish(ep.observation, terminated=True, truncated=False)
        if isinstance(action, Done):
            await ep.step(action)
            return await self.finish(ep.observation, terminated=True, truncated=False)
        result = await ep.step(action, progress=self.mode == "dense" or self.terminate_on_success)
        if result.ended or (self.terminate_on_success and result.passed):
            return await self.finish(result.observation, terminated=True, truncated=False)
        if result.truncated:
            return await self.finish(result.observation, terminated=False, truncated=True)
        if self.mode == "sparse":
            return Transition(result.observation, 0.0, False, False, result.progress)
        assert result.progress is not None
        reward, self.paid = result.progress - self.paid, result.progress
        return Transition(result.observation, reward, False, False, result.progress)

    async def finish(self, observation: Observation, *, terminated: bool, truncated: bool) -> Transition:
        """The episode's last step: judge the final state and pay what is left of its score."""
        ep = self.episode
        verdict = await ep.judge()
        ep.finish()
        reward = verdict.score - (self.paid if self.mode == "dense" else 0.0)
        self.paid = verdict.score
        return Transition(observation, reward, terminated, truncated, verdict.progress, verdict, ep.ended)
