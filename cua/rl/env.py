"""A cua task as a Gymnasium environment, for online RL.

`CuaEnv("todo.mark_done@1")` follows `gymnasium.Env`: `reset(seed, options) -> (obs, info)`
draws the task variant of that seed and resets the sandbox (a reset of the app and the
page, not a relaunch); `step(action) -> (obs, reward, terminated, truncated, info)`.

- Observations are `{"screenshot": uint8 array (H, W, 3)}`; URL, title, the action error
  and the instruction are in `info`. The frame is the task's viewport (or `observe.frame`).
- Actions are `cua.actions` models (or their dicts). `Done` ends the episode.
- The episode's return is the judge's score of the final state. `reward="sparse"` pays it
  at the end; `reward="dense"` pays the change in the judge's progress (fraction of
  subgoal checks met) every step and the rest at the end, so the sum is the same score.
  Dense reward reads the judge's state after every step (one query round trip).
- Infrastructure faults raise the typed `cua.errors.InfraError`: recreate the env.

The sandbox lives in this process (`server=None`) or on a `cua serve` (`server=URL`).
"""

from __future__ import annotations

import io
import json
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from PIL import Image

from cua.actions import Action, Click, Done, Drag, Key, MouseDown, MouseUp, Move, Scroll, Type, parse_action
from cua.eval.episode import gather_state
from cua.eval.handle import SandboxHandle
from cua.observation import Observation, ObserveOptions, Size
from cua.sync_api import _LoopThread
from cua.task import JudgeInput, TaskInstance, TaskTemplate, Verdict

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
        return all(0 <= px < self.frame.width and 0 <= py < self.frame.height for px, py in _points(action))

    def __repr__(self) -> str:
        return f"ActionSpace({self.frame.width}x{self.frame.height})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActionSpace) and other.frame == self.frame


def _points(action: Action) -> list[tuple[float, float]]:
    if isinstance(action, Drag):
        return [(p.x, p.y) for p in action.path]
    if isinstance(action, (Click, Move, Scroll)):
        return [(action.x, action.y)]
    if isinstance(action, (MouseDown, MouseUp)) and action.x is not None and action.y is not None:
        return [(action.x, action.y)]
    return []


class CuaEnv(gym.Env[dict[str, np.ndarray], Action]):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, task: str | TaskTemplate, *, server: str | None = None, token: str | None = None,
                 reward: Literal["sparse", "dense"] = "sparse", observe: ObserveOptions | None = None,
                 max_steps: int | None = None, terminate_on_success: bool = False,
                 render_mode: Literal["rgb_array"] | None = None) -> None:
        if isinstance(task, str):
            from cua.tasks.registry import get_template

            task = get_template(task)
        self.template: TaskTemplate = task
        self.reward_mode = reward
        self.terminate_on_success = terminate_on_success
        self.render_mode = render_mode
        self._max_steps = max_steps
        self._server, self._token = server, token
        probe = self.template.instantiate(0)
        self.frame = (observe.frame if observe and observe.frame else None) or _viewport(probe) or DEFAULT_FRAME
        self.observe = (observe or ObserveOptions()).model_copy(update={"frame": self.frame, "screenshot": True})
        self.observation_space = spaces.Dict(
            {"screenshot": spaces.Box(0, 255, (self.frame.height, self.frame.width, 3), np.uint8)})
        self.action_space = ActionSpace(self.frame)
        self._loop = _LoopThread()
        self._connection: Any = None
        self._client: Any = None
        self._handle: SandboxHandle | None = None
        self._handle_cm: Any = None
        self._handle_key: str | None = None
        self._instance: TaskInstance | None = None
        self._initial: dict[str, Any] = {}
        self._progress = 0.0
        self._steps = 0
        self._last: np.ndarray | None = None
        self._closed = False

    # --- gymnasium API ---

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        variant = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        instance = self.template.instantiate(variant)
        obs, initial = self._loop.call(self._reset(instance, options))
        self._instance, self._initial, self._steps = instance, initial, 0
        self._progress = self._judge({}).progress if self.reward_mode == "dense" else 0.0
        return self._obs(obs), self._info(obs)

    def step(self, action: Action | dict[str, Any]) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self._instance is None or self._handle is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        act = action if not isinstance(action, dict) else parse_action(action)
        self._steps += 1
        max_steps = self._max_steps or self._instance.max_steps
        if isinstance(act, Done):
            verdict = self._loop.call(self._verdict(act))
            return self._finish(None, verdict, terminated=True, truncated=False)
        obs = self._loop.call(self._handle.act(act, observe=self.observe))
        truncated = self._steps >= max_steps
        if self.reward_mode == "sparse" and not truncated:
            return self._obs(obs), 0.0, False, False, self._info(obs)
        verdict = self._loop.call(self._verdict(None))
        if truncated or (self.terminate_on_success and verdict.passed):
            return self._finish(obs, verdict, terminated=not truncated, truncated=truncated)
        reward = verdict.progress - self._progress
        self._progress = verdict.progress
        return self._obs(obs), reward, False, False, {**self._info(obs), "progress": verdict.progress}

    def render(self) -> np.ndarray | None:
        return self._last if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._loop.call(self._close_handle())
        if self._connection is not None:
            self._loop.call(self._connection.__aexit__(None, None, None))
        self._loop.stop()

    # --- internals ---

    def _finish(self, obs: Observation | None, verdict: Verdict, *, terminated: bool, truncated: bool
                ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        reward = verdict.score - (self._progress if self.reward_mode == "dense" else 0.0)
        self._progress = verdict.score
        info = {**(self._info(obs) if obs else {}), "verdict": verdict, "progress": verdict.progress}
        frame = self._obs(obs) if obs else {"screenshot": self._last}
        return frame, reward, terminated, truncated, info  # type: ignore[return-value]

    def _judge(self, final: dict[str, Any], done: Done | None = None) -> Verdict:
        assert self._instance is not None
        return self._instance.judge.evaluate(
            JudgeInput(initial=self._initial, final=final or self._initial, done=done, steps=self._steps))

    async def _verdict(self, done: Done | None) -> Verdict:
        assert self._instance is not None and self._handle is not None
        final = await gather_state(self._handle, self._instance.judge.queries())
        return self._judge(final, done)

    async def _reset(self, instance: TaskInstance, options: dict[str, Any] | None
                     ) -> tuple[Observation, dict[str, Any]]:
        key = json.dumps([instance.sandbox_kind, {k: v for k, v in instance.sandbox_config.items() if k != "start_url"}],
                         sort_keys=True, default=str)
        if self._handle is None or key != self._handle_key:
            await self._close_handle()
            self._handle_cm = await self._opener(instance)
            self._handle = await self._handle_cm.__aenter__()
            self._handle_key = key
        assert self._handle is not None
        start = instance.sandbox_config.get("start_url")
        reset_options = {**({"start_url": start} if start else {}), **(options or {})}
        obs = await self._handle.reset(seed=instance.seed, options=reset_options or None, observe=self.observe)
        return obs, await gather_state(self._handle, instance.judge.queries())

    async def _opener(self, instance: TaskInstance) -> Any:
        if self._server is None:
            from cua.eval.local import open_local

            return open_local(instance.sandbox_kind, instance.sandbox_config)
        if self._client is None:
            import cua

            self._connection = cua.connect(self._server, self._token)
            self._client = await self._connection.__aenter__()
        return _RemoteSandboxCM(self._client, instance)

    async def _close_handle(self) -> None:
        cm, self._handle_cm, self._handle, self._handle_key = self._handle_cm, None, None, None
        if cm is not None:
            await cm.__aexit__(None, None, None)

    def _obs(self, obs: Observation) -> dict[str, np.ndarray]:
        assert obs.screenshot is not None
        image = Image.open(io.BytesIO(obs.screenshot.data)).convert("RGB")
        if image.size != (self.frame.width, self.frame.height):
            image = image.resize((self.frame.width, self.frame.height))
        self._last = np.asarray(image, dtype=np.uint8)
        return {"screenshot": self._last}

    def _info(self, obs: Observation) -> dict[str, Any]:
        assert self._instance is not None
        return {"instruction": self._instance.instruction, "task_id": self._instance.task_id,
                "seed": self._instance.seed, "url": obs.url, "title": obs.title,
                "action_error": obs.error.model_dump() if obs.error else None, "step": self._steps}


class _RemoteSandboxCM:
    def __init__(self, client: Any, instance: TaskInstance) -> None:
        self.client, self.instance, self.sandbox = client, instance, None

    async def __aenter__(self) -> Any:
        self.sandbox = await self.client.create(self.instance.sandbox_kind, config=self.instance.sandbox_config)
        return self.sandbox

    async def __aexit__(self, *exc: object) -> None:
        if self.sandbox is not None:
            await self.sandbox.close()


def _viewport(instance: TaskInstance) -> Size | None:
    viewport = instance.sandbox_config.get("viewport") or instance.sandbox_config.get("screen")
    return Size.model_validate(viewport) if viewport else None
