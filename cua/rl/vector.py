"""Many task episodes as one Gymnasium 1.x `VectorEnv`, over one server connection.

`CuaVectorEnv("todo.mark_done@1", num_envs=16)` (or `gymnasium.make_vec("cua/todo.mark_done-v1",
num_envs=16, vectorization_mode="vector_entry_point")`) holds `num_envs` sandboxes on one
`cua serve`: a server given as `server=URL`, or a child process it starts and stops. Every
env is a `cua.episode.Episode`, as in `CuaEnv`, so rewards, termination, truncation and
trajectories mean the same in both.

- One connection, pipelined: a `step` sends every env's act request at once and waits for
  all the answers; the server works on them in parallel. There is no process per env and
  no copy of a model per env.
- Autoreset is Gymnasium 1.x's default, next-step (`metadata["autoreset_mode"]`): the step
  after an env's episode ended resets that env, ignores its action and returns the first
  observation of the next episode with reward 0 and `terminated = truncated = False`.
- Observations are `{"screenshot": uint8 (num_envs, H, W, 3)}`; actions a tuple of
  `cua.actions` (or their dicts), one per env; like `CuaEnv`, an env also takes `None` (a
  wasted turn) and `STOP` (a turn with nothing to do), as `cua.episode.loop.plan` makes
  them. `infos` follow Gymnasium's vector layout:
  `infos[key]` an array over the envs and `infos["_" + key]` the mask of envs that set it.
- Tasks: one template for every env, or a list spread over the envs in turn. The next
  episode of an env draws its variant seed from the env's generator (seeded by `reset(seed=)`).
- An infrastructure fault in one env (its sandbox died, the server lost it) does not stop
  the others: that env's step comes back truncated with `infos["mask_sample"]` set and the
  typed error in `infos["infra_error"]` (a trainer drops the sample instead of scoring it),
  and its sandbox is recreated at its autoreset.
- `fork(k)`: a new vector env of `num_envs * k` envs, env `i * k + j` the j-th fork of env
  `i`, all k from one snapshot of env i's live state (group rollouts). It shares this env's
  connection; close both.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from cua.actions import parse_action
from cua.client import RemoteSandbox
from cua.episode.episode import Episode, trajectory_name
from cua.episode.group import fork_handles
from cua.episode.handle import SandboxOpener
from cua.episode.loop import Planned
from cua.episode.transition import RewardAccount
from cua.errors import CuaError, ErrorRecord, InfraError
from cua.observation import Observation, ObserveOptions, Size
from cua.rl.env import DEFAULT_FRAME, ActionSpace, _viewport, frame_image
from cua.sync_api import _LoopThread
from cua.task import TaskInstance, TaskTemplate
from cua.trajectory import AgentInfo, FramePolicy, TrajectoryWriter

__all__ = ["CuaVectorEnv"]


async def _gather(*aws: Any, return_exceptions: bool = False) -> list[Any]:
    return list(await asyncio.gather(*aws, return_exceptions=return_exceptions))


class _Session:
    """The loop thread and the episode layer's sandbox opener over one connection (to
    `server`, or to a `cua serve` child it starts), shared by a vector env and its forks;
    closed with the last of them."""

    def __init__(self, server: str | None, token: str | None, max_sandboxes: int) -> None:
        self.loop = _LoopThread()
        self.users = 0
        self._stack = contextlib.AsyncExitStack()
        try:
            self.opener: SandboxOpener = self.loop.call(self._open(server, token, max_sandboxes))
        except BaseException:
            self.loop.call(self._stack.aclose())
            self.loop.stop()
            raise

    async def _open(self, server: str | None, token: str | None, max_sandboxes: int) -> SandboxOpener:
        from cua.episode.openers import sandbox_opener

        return await self._stack.enter_async_context(
            sandbox_opener(server=server, token=token, max_sandboxes=max_sandboxes))

    def release(self) -> None:
        self.users -= 1
        if self.users <= 0:
            try:
                self.loop.call(self._stack.aclose())
            finally:
                self.loop.stop()


class _Slot:
    """One env of the vector: its template, sandbox and current episode."""

    def __init__(self, template: TaskTemplate, config: dict[str, Any]) -> None:
        self.template = template
        self.config = config
        self.handle: RemoteSandbox | None = None
        #: The opener's context of `handle` (None for a fork, which is closed directly).
        self.opened: Any = None
        self.episode: Episode | None = None
        #: The current episode's rewards.
        self.account: RewardAccount | None = None
        self.rng = np.random.default_rng()
        self.needs_reset = True
        self.trajectory: Path | None = None


class CuaVectorEnv(VectorEnv[dict[str, np.ndarray], tuple[Any, ...], np.ndarray]):
    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["rgb_array"]}
    render_mode: Literal["rgb_array"] | None

    def __init__(self, task: str | TaskTemplate | Sequence[str | TaskTemplate], num_envs: int = 1, *,
                 server: str | None = None, token: str | None = None,
                 reward: Literal["sparse", "dense"] = "sparse", observe: ObserveOptions | None = None,
                 max_steps: int | None = None, terminate_on_success: bool = False,
                 isolation: Literal["shared", "container"] | None = None,
                 trajectory_dir: str | Path | None = None, frames: FramePolicy = "all",
                 agent: AgentInfo | None = None, render_mode: Literal["rgb_array"] | None = None,
                 max_sandboxes: int | None = None,
                 _session: _Session | None = None, _slots: list[_Slot] | None = None) -> None:
        from cua.tasks.registry import get_template

        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        tasks = [task] if isinstance(task, (str, TaskTemplate)) else list(task)
        if not tasks:
            raise ValueError("no task given")
        templates = [get_template(t) if isinstance(t, str) else t for t in tasks]
        self.num_envs = num_envs
        self.reward_mode = reward
        self.terminate_on_success = terminate_on_success
        self.render_mode = render_mode
        self.trajectory_dir = Path(trajectory_dir) if trajectory_dir is not None else None
        self.frames: FramePolicy = frames
        self.agent = agent or AgentInfo(name="rl", kind="policy")
        self._max_steps = max_steps
        probe = templates[0].instantiate(0)
        self.frame: Size = (observe.frame if observe and observe.frame else None) or _viewport(probe) or DEFAULT_FRAME
        self.observe = (observe or ObserveOptions()).model_copy(update={"frame": self.frame, "screenshot": True})
        self.single_observation_space = spaces.Dict(
            {"screenshot": spaces.Box(0, 255, (self.frame.height, self.frame.width, 3), np.uint8)})
        self.single_action_space = ActionSpace(self.frame)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._isolation = isolation
        self._episodes = 0
        self._closed = False
        if _slots is not None:
            self._slots = _slots
        else:
            self._slots = []
            for i in range(num_envs):
                template = templates[i % len(templates)]
                config = dict(template.instantiate(0).sandbox_config)
                if isolation is not None:
                    config["isolation"] = isolation
                self._slots.append(_Slot(template, config))
        # The child server's cap: the envs, a fork group of 4 of each, and their replacements.
        cap = max_sandboxes if max_sandboxes is not None else max(16, 6 * num_envs)
        self._session = _session or _Session(server, token, max_sandboxes=cap)
        self._session.users += 1
        self._server_url, self._token = server, token

    # --- gymnasium API ---

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        self._check_open()
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        else:
            if len(seed) != self.num_envs:
                raise ValueError(f"{len(seed)} seeds for {self.num_envs} envs")
            seeds = list(seed)
        for slot, s in zip(self._slots, seeds, strict=True):
            slot.rng = np.random.default_rng(s)
        results = self._call(_gather(*(self._reset_slot(slot, s, options)
                                              for slot, s in zip(self._slots, seeds, strict=True))))
        obs = self._call(self._batch([r[0] for r in results]))
        infos: dict[str, Any] = {}
        for i, (_, info) in enumerate(results):
            infos = self._add_info(infos, info, i)
        return obs, infos

    def step(self, actions: Sequence[Planned | dict[str, Any]]
             ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self._check_open()
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} actions for {self.num_envs} envs")
        parsed = [parse_action(a) if isinstance(a, dict) else a for a in actions]
        results = self._call(_gather(*(self._step_slot(slot, a) for slot, a in zip(self._slots, parsed,
                                                                                           strict=True))))
        obs = self._call(self._batch([r[0] for r in results]))
        rewards = np.array([r[1] for r in results], dtype=np.float64)
        terminated = np.array([r[2] for r in results], dtype=np.bool_)
        truncated = np.array([r[3] for r in results], dtype=np.bool_)
        infos: dict[str, Any] = {}
        for i, r in enumerate(results):
            infos = self._add_info(infos, r[4], i)
        return obs, rewards, terminated, truncated, infos

    def render(self) -> tuple[np.ndarray, ...] | None:
        if self.render_mode != "rgb_array":
            return None
        return tuple(self._call(self._batch([s.handle.observation for s in self._slots if s.handle]))["screenshot"])

    def close_extras(self, **kwargs: Any) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._call(_gather(*(self._close_slot(s) for s in self._slots), return_exceptions=True))
        finally:
            self._session.release()

    # --- group rollouts ---

    def fork(self, k: int) -> CuaVectorEnv:
        """k forks of every env's live episode, each group from one snapshot, all started at
        once. Env `i * k + j` of the result is fork j of env i; it continues env i's episode
        (same task instance, same judge baseline, the steps left). Every env must be mid-episode."""
        self._check_open()
        for i, slot in enumerate(self._slots):
            if slot.needs_reset or slot.episode is None or slot.episode.over:
                raise RuntimeError(f"env {i} has no live episode to fork (reset it, or step it past its autoreset)")
        groups = self._call(_gather(*(self._fork_slot(slot, k) for slot in self._slots)))
        slots = [child for group in groups for child in group]
        return CuaVectorEnv([s.template for s in self._slots], self.num_envs * k, reward=self.reward_mode,
                            observe=self.observe, max_steps=self._max_steps,
                            terminate_on_success=self.terminate_on_success, isolation=self._isolation,
                            trajectory_dir=self.trajectory_dir, frames=self.frames, agent=self.agent,
                            render_mode=self.render_mode, _session=self._session, _slots=slots)

    async def _fork_slot(self, slot: _Slot, k: int) -> list[_Slot]:
        assert slot.handle is not None and slot.episode is not None
        ref, handles = await fork_handles(slot.handle, k, observe=self.observe)
        snapshot = ref.model_dump(mode="json")
        out = []
        for handle in handles:
            assert isinstance(handle, RemoteSandbox)
            child = _Slot(slot.template, slot.config)
            child.handle, child.needs_reset = handle, False
            child.rng = np.random.default_rng(slot.rng.integers(0, 2**63 - 1))
            writer = self._writer(slot.episode.instance, child)
            child.episode = slot.episode.fork(handle, handle.observation, writer=writer, start_snapshot=snapshot)
            assert slot.account is not None
            child.account = slot.account.fork(child.episode)
            out.append(child)
        return out

    # --- per env ---

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the vector env is closed")

    def _call(self, coro: Any) -> Any:
        return self._session.loop.call(coro)

    def _writer(self, instance: TaskInstance, slot: _Slot) -> TrajectoryWriter | None:
        if self.trajectory_dir is None:
            slot.trajectory = None
            return None
        self._episodes += 1
        slot.trajectory = self.trajectory_dir / f"{trajectory_name(instance)}__e{self._episodes:06d}"
        return TrajectoryWriter(slot.trajectory, frames=self.frames)

    async def _reset_slot(self, slot: _Slot, seed: int | None, options: dict[str, Any] | None
                          ) -> tuple[Observation, dict[str, Any]]:
        if slot.episode is not None and not slot.episode.over:
            slot.episode.finish()  # reset mid-episode: its trajectory ends as abandoned
        variant = seed if seed is not None else int(slot.rng.integers(0, 2**31 - 1))
        instance = slot.template.instantiate(variant)
        if slot.handle is None or not slot.handle.alive:
            await self._close_slot(slot)
            slot.opened = self._session.opener(instance.sandbox_kind, slot.config)
            slot.handle = await slot.opened.__aenter__()
        slot.episode = ep = Episode(slot.handle, instance, observe=self.observe, writer=self._writer(instance, slot),
                                    producer="rl", agent=self.agent, max_steps=self._max_steps)
        try:
            obs = await ep.reset(options)
            slot.account = RewardAccount.at_start(ep, self.reward_mode, terminate_on_success=self.terminate_on_success)
        except BaseException as exc:
            ep.finish(status="infra_error", error=ErrorRecord.of(exc))
            raise
        slot.needs_reset = False
        return obs, self._info(slot, obs)

    async def _step_slot(self, slot: _Slot, action: Planned) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if slot.needs_reset:
            try:
                obs, info = await self._reset_slot(slot, None, None)
            except CuaError as exc:
                if not isinstance(exc, InfraError):
                    raise
                return self._masked(slot, exc)
            return obs, 0.0, False, False, info
        ep, account = slot.episode, slot.account
        assert ep is not None and account is not None
        try:
            step = await account.step(action)
        except InfraError as exc:
            ep.finish(status="infra_error", error=ErrorRecord.of(exc))
            return self._masked(slot, exc)
        info = self._info(slot, step.observation)
        if step.verdict is not None:
            slot.needs_reset = True
            info = {**info, "verdict": step.verdict, "progress": step.verdict.progress, "ended": step.ended}
        elif step.progress is not None and self.reward_mode == "dense":
            info = {**info, "progress": step.progress}
        return step.observation, step.reward, step.terminated, step.truncated, info

    def _masked(self, slot: _Slot, exc: CuaError) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """The env's sandbox failed: end the episode as truncated and masked; recreate at autoreset."""
        slot.needs_reset = True
        if slot.handle is not None:
            slot.handle.alive = False
        last = slot.episode.observation if slot.episode is not None else None
        obs = last if last is not None else (slot.handle.observation if slot.handle is not None else None)
        assert obs is not None
        info = {**(self._info(slot, obs) if slot.episode is not None else {}),
                "mask_sample": True, "infra_error": ErrorRecord.of(exc).model_dump(mode="json", exclude_none=True)}
        return obs, 0.0, False, True, info

    async def _close_slot(self, slot: _Slot) -> None:
        if slot.episode is not None and not slot.episode.over:
            slot.episode.finish()
        handle, opened, slot.handle, slot.opened = slot.handle, slot.opened, None, None
        with contextlib.suppress(CuaError):
            if opened is not None:
                await opened.__aexit__(None, None, None)
            elif handle is not None:
                await handle.close()

    def _info(self, slot: _Slot, obs: Observation) -> dict[str, Any]:
        ep = slot.episode
        assert ep is not None
        return {"instruction": ep.instruction, "task_id": ep.instance.task_id, "seed": ep.instance.seed,
                "url": obs.url, "title": obs.title,
                "action_error": obs.error.model_dump() if obs.error else None, "step": ep.steps,
                "trajectory": str(slot.trajectory) if slot.trajectory is not None else None}

    async def _batch(self, observations: list[Observation]) -> dict[str, np.ndarray]:
        """Decode the JPEGs into one array, on worker threads (the decoder releases the GIL)."""
        out = np.empty((len(observations), self.frame.height, self.frame.width, 3), dtype=np.uint8)

        def decode(i: int, obs: Observation) -> None:
            out[i] = np.asarray(frame_image(obs, self.frame), dtype=np.uint8)

        await asyncio.gather(*(asyncio.to_thread(decode, i, o) for i, o in enumerate(observations)))
        return {"screenshot": out}
