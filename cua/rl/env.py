"""A cua task as a Gymnasium environment, for online RL.

`CuaEnv("todo.mark_done@1")` follows `gymnasium.Env`: `reset(seed, options) -> (obs, info)`
draws the task variant of that seed and resets the sandbox (a reset of the app and the
page, not a relaunch); `step(action) -> (obs, reward, terminated, truncated, info)`.

- Observations are `{"screenshot": uint8 array (H, W, 3)}`; URL, title, the action error
  and the instruction are in `info`. The frame is the task's viewport (or `observe.frame`).
- Actions are `cua.actions` models (or their dicts). `Done` ends the episode. A trainer
  whose policy answers in turns steps what `cua.episode.loop.plan` makes of each: its
  actions, `None` for a turn wasted on unparseable output (a step that does nothing), or
  `STOP` for a turn with nothing to do (the episode ends there, judged as it stands), so
  the policy is judged after the same steps as in `cua eval`.
- Every episode is a `cua.episode.Episode`, as in `cua eval` and `cua record`: the reset
  uses the task's reset seed and plays its setup steps, and the instruction may be read
  from the page after reset (`info["instruction"]`).
- `terminated`: the task ended (the agent's `Done`, the app ending the episode itself
  (`TaskSetup.end_query`), or success with `terminate_on_success`); `truncated`: the
  step limit. The final `info` carries the `verdict`.
- The episode's return is the judge's score of the final state. `reward="sparse"` pays it
  at the end; `reward="dense"` pays the change in the judge's progress (fraction of
  subgoal checks met) every step and the rest at the end, so the sum is the same score
  and ending the episode pays nothing by itself. Dense reward reads the judge's state
  after every step (one query round trip).
- `trajectory_dir=PATH`: every episode is written there as a trajectory (`cua.trajectory`,
  producer "rl"), one folder per episode; `info["trajectory"]` names it.
- Infrastructure faults raise the typed `cua.errors.InfraError`: recreate the env.
- `fork(k)`: k new envs continuing this env's live episode, all forked from one snapshot
  (group rollouts: the k start identical). They share this env's event loop and
  connection; closing this env closes them.

The sandbox lives in this process (`server=None`) or on a `cua serve` (`server=URL`).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Literal, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from PIL import Image

from cua.actions import Action, Click, Key, Scroll, Type, parse_action, points_of
from cua.episode.episode import Episode, trajectory_name
from cua.episode.handle import SandboxHandle
from cua.episode.loop import Planned
from cua.episode.openers import open_remote, sandbox_key
from cua.episode.transition import RewardAccount
from cua.errors import ErrorRecord
from cua.observation import Observation, ObserveOptions, Size
from cua.sync_api import _LoopThread
from cua.task import TaskInstance, TaskTemplate
from cua.trajectory import AgentInfo, FramePolicy, TrajectoryWriter

__all__ = ["ActionSpace", "CuaEnv"]

DEFAULT_FRAME = Size(width=1280, height=720)


class ActionSpace(spaces.Space[Action]):
    """The unified actions in a frame: `contains` validates, `sample` draws a random pointer,
    scroll, key or typing action inside the frame (a floor policy, and what check_env uses)."""

    def __init__(self, frame: Size, seed: int | None = None) -> None:
        super().__init__(shape=None, dtype=None, seed=seed)
        self.frame = frame

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> Action:
        rng = self.np_random
        x, y = float(rng.uniform(0, self.frame.width - 1)), float(rng.uniform(0, self.frame.height - 1))
        kind = int(rng.integers(0, 10))
        if kind < 6:
            return Click(x=x, y=y)
        if kind < 7:
            return Scroll(x=x, y=y, dy=float(rng.choice([-240, 240])))
        if kind < 9:
            return Type(text=str(rng.choice(["hello", "42", "2026-03-05", "Alice"])))
        return Key(keys=[str(rng.choice(["Enter", "Tab", "Escape"]))])

    def contains(self, x: Any) -> bool:
        try:
            action = parse_action(x)
        except ValueError:
            return False
        return all(0 <= px < self.frame.width and 0 <= py < self.frame.height for px, py in points_of(action))

    def __repr__(self) -> str:
        return f"ActionSpace({self.frame.width}x{self.frame.height})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActionSpace) and other.frame == self.frame


class CuaEnv(gym.Env[dict[str, np.ndarray], Action]):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, task: str | TaskTemplate, *, server: str | None = None, token: str | None = None,
                 reward: Literal["sparse", "dense"] = "sparse", observe: ObserveOptions | None = None,
                 max_steps: int | None = None, terminate_on_success: bool = False,
                 render_mode: Literal["rgb_array"] | None = None, trajectory_dir: str | Path | None = None,
                 frames: FramePolicy = "all", agent: AgentInfo | None = None) -> None:
        if isinstance(task, str):
            from cua.tasks.registry import get_template

            template: TaskTemplate = get_template(task)
        else:
            template = task
        self.template = template
        self.reward_mode = reward
        self.terminate_on_success = terminate_on_success
        self.render_mode = render_mode
        self._max_steps = max_steps
        self._server, self._token = server, token
        self.trajectory_dir = Path(trajectory_dir) if trajectory_dir is not None else None
        self.frames: FramePolicy = frames
        self.agent = agent or AgentInfo(name="rl", kind="policy")
        probe = self.template.instantiate(0)
        self.frame = (observe.frame if observe and observe.frame else None) or _viewport(probe) or DEFAULT_FRAME
        self.observe = (observe or ObserveOptions()).model_copy(update={"frame": self.frame, "screenshot": True})
        # gymnasium types a Dict space as a space of dicts of spaces, not of what it samples
        self.observation_space = cast("spaces.Space[dict[str, np.ndarray]]", spaces.Dict(
            {"screenshot": spaces.Box(0, 255, (self.frame.height, self.frame.width, 3), np.uint8)}))
        self.action_space = ActionSpace(self.frame)
        self._loop = _LoopThread()
        self._connection: Any = None
        self._client: Any = None
        self._handle: SandboxHandle | None = None
        self._handle_cm: Any = None
        self._handle_key: str | None = None
        #: The episode in progress (None before the first reset).
        self.episode: Episode | None = None
        #: The trajectory folder of the episode in progress, when `trajectory_dir` is given.
        self.trajectory: Path | None = None
        self._episodes = 0
        #: The episode's rewards (None before the first reset).
        self._account: RewardAccount | None = None
        self._last: np.ndarray | None = None
        self._closed = False
        self._forks: list[CuaEnv] = []
        self._parent: CuaEnv | None = None

    # --- gymnasium API ---

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        variant = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        instance = self.template.instantiate(variant)
        self._end_episode()
        obs = self._loop.call(self._reset(instance, options))
        self._account = RewardAccount.at_start(self._episode(), self.reward_mode,
                                               terminate_on_success=self.terminate_on_success)
        return self._obs(obs), self._info(obs)

    def step(self, action: Planned | dict[str, Any]
             ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        ep = self.episode
        if ep is None or ep.over:
            raise gym.error.ResetNeeded("call reset() before step(), and after the episode ended")
        act = parse_action(action) if isinstance(action, dict) else action
        assert self._account is not None
        step = self._loop.call(self._account.step(act))
        info = self._info(step.observation)
        if step.verdict is not None:
            info = {**info, "verdict": step.verdict, "progress": step.verdict.progress, "ended": step.ended}
        elif step.progress is not None and self.reward_mode == "dense":
            info = {**info, "progress": step.progress}
        return self._obs(step.observation), step.reward, step.terminated, step.truncated, info

    def render(self) -> np.ndarray | None:
        return self._last if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._parent is not None:  # a fork: its sandbox only; the loop is the parent's
            self._end_episode()
            if not self._parent._closed:
                self._loop.call(self._close_handle())
            return
        try:
            for child in self._forks:
                child.close()
            self._end_episode()
            self._loop.call(self._close_handle())
            if self._connection is not None:
                self._loop.call(self._connection.__aexit__(None, None, None))
        finally:
            self._loop.stop()

    # --- group rollouts ---

    def fork(self, k: int) -> list[CuaEnv]:
        """k envs continuing this env's live episode, each on its own fork of the sandbox, all
        from one snapshot and started at once. Each keeps the task instance, the judge's
        baseline, the progress paid so far and the steps left; its first observation is
        `fork.render()`/`fork.observation()`."""
        ep = self.episode
        if ep is None or ep.over:
            raise gym.error.ResetNeeded("fork a live episode: call reset() first, and fork before it ends")
        handles = self._loop.call(self._fork_handles(k))
        children = []
        for handle in handles:
            child = CuaEnv.__new__(CuaEnv)
            child.__dict__.update({k_: v for k_, v in self.__dict__.items()
                                   if k_ not in ("_forks", "_np_random", "_np_random_seed")})
            child._parent, child._forks, child._closed = self, [], False
            child._handle, child._handle_cm, child._handle_key = handle, _Owned(handle), self._handle_key
            child._connection = None
            child.action_space = ActionSpace(self.frame)
            writer = None
            if self.trajectory_dir is not None:
                self._episodes += 1
                child.trajectory = self.trajectory_dir / f"{trajectory_name(ep.instance)}__e{self._episodes:06d}f"
                writer = TrajectoryWriter(child.trajectory, frames=self.frames)
            child.episode = ep.fork(handle, handle.observation, writer=writer, start_snapshot=self._forked_from)
            assert self._account is not None
            child._account = self._account.fork(child.episode)
            child._obs(handle.observation)
            children.append(child)
        self._forks.extend(children)
        return children

    def observation(self) -> dict[str, np.ndarray]:
        """The current observation (the one the next step acts on)."""
        return self._obs(self._episode().observation)

    async def _fork_handles(self, k: int) -> list[Any]:
        from cua.episode.group import fork_handles

        assert self._handle is not None
        ref, handles = await fork_handles(self._handle, k, observe=self.observe)
        self._forked_from = ref.model_dump(mode="json")
        return handles

    # --- internals ---

    def _episode(self) -> Episode:
        assert self.episode is not None
        return self.episode

    def _end_episode(self) -> None:
        """Close an episode left unfinished (reset or close mid-episode): its trajectory ends as abandoned."""
        if self.episode is not None:
            self.episode.finish()

    async def _reset(self, instance: TaskInstance, options: dict[str, Any] | None) -> Observation:
        key = sandbox_key(instance)
        if self._handle is None or key != self._handle_key:
            await self._close_handle()
            self._handle_cm = await self._opener(instance)
            self._handle = await self._handle_cm.__aenter__()
            self._handle_key = key
        assert self._handle is not None
        writer = None
        if self.trajectory_dir is not None:
            self._episodes += 1
            self.trajectory = self.trajectory_dir / f"{trajectory_name(instance)}__e{self._episodes:06d}"
            writer = TrajectoryWriter(self.trajectory, frames=self.frames)
        self.episode = Episode(self._handle, instance, observe=self.observe, writer=writer, producer="rl",
                               agent=self.agent, max_steps=self._max_steps)
        try:
            return await self.episode.reset(options)
        except BaseException as exc:
            self.episode.finish(status="infra_error", error=ErrorRecord.of(exc))
            raise

    async def _opener(self, instance: TaskInstance) -> Any:
        if self._server is None:
            from cua.episode.local import open_local

            return open_local(instance.sandbox_kind, instance.sandbox_config)
        if self._client is None:
            import cua

            self._connection = cua.connect(self._server, self._token)
            self._client = await self._connection.__aenter__()
        return open_remote(self._client, instance.sandbox_kind, instance.sandbox_config)

    async def _close_handle(self) -> None:
        cm, self._handle_cm, self._handle, self._handle_key = self._handle_cm, None, None, None
        if cm is not None:
            await cm.__aexit__(None, None, None)

    def _obs(self, obs: Observation) -> dict[str, np.ndarray]:
        self._last = np.asarray(frame_image(obs, self.frame), dtype=np.uint8)
        return {"screenshot": self._last}

    def _info(self, obs: Observation) -> dict[str, Any]:
        ep = self._episode()
        return {"instruction": ep.instruction, "task_id": ep.instance.task_id,
                "seed": ep.instance.seed, "url": obs.url, "title": obs.title,
                "action_error": obs.error.model_dump() if obs.error else None, "step": ep.steps,
                "trajectory": str(self.trajectory) if self.trajectory is not None else None}


class _Owned:
    """Closes a forked handle when the fork env is done with it."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    async def __aexit__(self, *exc: object) -> None:
        await self.handle.close()


def frame_image(obs: Observation, frame: Size) -> Image.Image:
    """The observation's screenshot as an RGB image of `frame`'s size."""
    assert obs.screenshot is not None
    image: Image.Image = Image.open(io.BytesIO(obs.screenshot.data))
    if image.mode != "RGB":  # a JPEG decodes to RGB already: no copy through convert
        image = image.convert("RGB")
    if image.size != (frame.width, frame.height):
        image = image.resize((frame.width, frame.height))
    return image


def _viewport(instance: TaskInstance) -> Size | None:
    viewport = instance.sandbox_config.get("viewport") or instance.sandbox_config.get("screen")
    return Size.model_validate(viewport) if viewport else None
