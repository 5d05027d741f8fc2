"""Environment handles over HTTP and websocket: reset, step, snapshot, fork, close.

For trainers that run their own agent loop (SkyRL's `Env.step`, OpenRLHF's
`AgentInstanceBase.step`, NeMo Gym's `/seed_session` + `/run` + `/verify`): each handle is
one sandbox with its current `cua.episode.Episode`.

- `create(task, seed)` opens a sandbox and resets it to the task instance;
  `reset(env, task=, seed=)` starts the next episode on the same sandbox, and
  `reset(env, snapshot=)` restores a snapshot taken of it (`snapshot(env)`) and continues
  the episode the snapshot was taken in, as it stood then, however often and whether or
  not that episode has ended since (a snapshot of an episode that is over is refused);
- `step(env, action)` returns the observation, the reward (sparse: the judge's score at
  the end; dense: the change in progress each step, summing to the same score),
  `terminated`, `truncated` and the verdict at the end: the one transition rule
  (`cua.episode.transition.RewardAccount`), as `CuaEnv` and the vector env pay;
- `fork(env, k)` gives k new handles continuing the live episode from one snapshot.

Each operation answers its typed model (`cua.rollout.models`: `EnvCreated`, `EnvState`,
`EnvStep` or `EnvEnded`, `EnvSnapshot`, `EnvForked`, `EnvClosed`), which the HTTP and
websocket layers send as JSON, the screenshot as base64 JPEG (`EnvObservation`).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass
from typing import Any

from cua.actions import parse_action
from cua.episode.episode import Episode
from cua.episode.group import fork_handles
from cua.episode.handle import SandboxHandle, SandboxOpener
from cua.episode.transition import RewardAccount, RewardMode
from cua.errors import BadRequest, CuaError, UnknownSandbox
from cua.info import SnapshotRef
from cua.observation import Observation, ObserveOptions
from cua.rollout.models import (
    EnvClosed,
    EnvCreated,
    EnvEnded,
    EnvForked,
    EnvObservation,
    EnvSnapshot,
    EnvState,
    EnvStep,
)
from cua.task import TaskInstance

__all__ = ["EnvHandles"]


@dataclass
class _Env:
    id: str
    handle: SandboxHandle
    cm: Any  # the opener's context (None for forks, which are closed directly)
    #: The episode in progress and what it has paid so far.
    account: RewardAccount
    lock: asyncio.Lock | None = None
    #: snapshot id -> (its ref, the episode it was taken in as it stood then, forked and never
    #: stepped: a restore continues that, however the episode itself went on or ended).
    snapshots: dict[str, tuple[SnapshotRef, Episode]] | None = None


class EnvHandles:
    def __init__(self, opener: SandboxOpener, observe: ObserveOptions | None = None, max_envs: int = 64) -> None:
        self.opener = opener
        self.observe = observe or ObserveOptions()
        self.max_envs = max_envs
        self._envs: dict[str, _Env] = {}

    def __len__(self) -> int:
        """Environments open now."""
        return len(self._envs)

    def _get(self, env_id: str) -> _Env:
        env = self._envs.get(env_id)
        if env is None:
            raise UnknownSandbox(f"no environment {env_id!r}", details={"env_id": env_id})
        return env

    @staticmethod
    def _instance(task: str, seed: int) -> TaskInstance:
        from cua.tasks.registry import task_instance

        return task_instance(task, seed)

    async def create(self, task: str, seed: int = 0, *, reward: RewardMode = "sparse",
                     isolation: str | None = None, terminate_on_success: bool = False) -> EnvCreated:
        if len(self._envs) >= self.max_envs:
            raise BadRequest(f"at most {self.max_envs} environments at once", details={"max_envs": self.max_envs})
        instance = self._instance(task, seed)
        config = dict(instance.sandbox_config)
        if isolation is not None:
            config["isolation"] = isolation
        cm = self.opener(instance.sandbox_kind, config)
        handle = await cm.__aenter__()
        try:
            episode = Episode(handle, instance, observe=self.observe, producer="rl")
            obs = await episode.reset()
            account = RewardAccount.at_start(episode, reward, terminate_on_success=terminate_on_success)
            env = _Env(f"env-{uuid.uuid4().hex[:12]}", handle, cm, account, lock=asyncio.Lock(), snapshots={})
        except BaseException:
            await cm.__aexit__(None, None, None)
            raise
        self._envs[env.id] = env
        return self._created(env, obs)

    async def reset(self, env_id: str, *, task: str | None = None, seed: int | None = None,
                    snapshot: str | None = None) -> EnvState:
        env = self._get(env_id)
        assert env.lock is not None and env.snapshots is not None
        async with env.lock:
            old = env.account
            old.episode.finish()
            if snapshot is not None:
                if snapshot not in env.snapshots:
                    raise BadRequest(f"no snapshot {snapshot!r} of {env_id}", details={"snapshot": snapshot})
                ref, taken_in = env.snapshots[snapshot]
                obs = await env.handle.restore(ref, observe=self.observe)
                env.account = await RewardAccount.at_current(taken_in.fork(env.handle, obs), old.mode,
                                                             terminate_on_success=old.terminate_on_success)
            else:
                instance = self._instance(task or old.episode.instance.task_id,
                                          seed if seed is not None else old.episode.instance.seed)
                episode = Episode(env.handle, instance, observe=self.observe, producer="rl")
                obs = await episode.reset()
                env.account = RewardAccount.at_start(episode, old.mode, terminate_on_success=old.terminate_on_success)
            return self._state(env, obs)

    async def step(self, env_id: str, action: dict[str, Any] | None) -> EnvStep | EnvEnded:
        """One step: an action, or None for a turn that produced none (unparseable model
        output): a step that does nothing, as `cua.episode.loop.plan` makes of such a turn."""
        env = self._get(env_id)
        assert env.lock is not None
        try:
            act = parse_action(action) if action is not None else None
        except ValueError as exc:
            raise BadRequest(f"not an action: {exc}", details={"action": action}) from None
        async with env.lock:
            if env.account.episode.over:
                raise BadRequest("the episode is over: reset first", details={"env_id": env_id})
            step = await env.account.step(act)
            state = dict(self._state(env, step.observation))
            if step.verdict is not None:
                return EnvEnded(**state, reward=step.reward, terminated=step.terminated, truncated=step.truncated,
                                verdict=step.verdict)
            return EnvStep(**state, reward=step.reward, terminated=step.terminated, truncated=step.truncated,
                           progress=step.progress)

    async def snapshot(self, env_id: str) -> EnvSnapshot:
        env = self._get(env_id)
        assert env.lock is not None and env.snapshots is not None
        async with env.lock:
            episode = env.account.episode
            if episode.over:
                raise BadRequest("the episode is over: a snapshot continues a live episode (reset first)",
                                 details={"env_id": env_id})
            ref = await env.handle.snapshot()
            env.snapshots[ref.id] = (ref, episode.fork(env.handle, env.handle.observation))
            return EnvSnapshot(snapshot=ref.id)

    async def fork(self, env_id: str, k: int) -> EnvForked:
        env = self._get(env_id)
        if not 1 <= k <= 64 or len(self._envs) + k > self.max_envs:
            raise BadRequest(f"cannot fork {k} more environments (at most {self.max_envs} at once)")
        assert env.lock is not None
        async with env.lock:
            ref, handles = await fork_handles(env.handle, k, observe=self.observe)
            children: list[EnvCreated] = []
            for handle in handles:
                episode = env.account.episode.fork(handle, handle.observation, start_snapshot=ref.model_dump(mode="json"))
                child = _Env(f"env-{uuid.uuid4().hex[:12]}", handle, None, env.account.fork(episode),
                             lock=asyncio.Lock(), snapshots={})
                self._envs[child.id] = child
                children.append(self._created(child, handle.observation))
            return EnvForked(envs=children)

    async def close(self, env_id: str) -> EnvClosed:
        env = self._envs.pop(env_id, None)
        if env is None:
            raise UnknownSandbox(f"no environment {env_id!r}", details={"env_id": env_id})
        env.account.episode.finish()
        with contextlib.suppress(CuaError):
            if env.cm is not None:
                await env.cm.__aexit__(None, None, None)
            else:
                await env.handle.close()
        return EnvClosed(closed=env_id)

    async def aclose(self) -> None:
        await asyncio.gather(*(self.close(e) for e in list(self._envs)), return_exceptions=True)

    def _state(self, env: _Env, obs: Observation) -> EnvState:
        ep = env.account.episode
        return EnvState(observation=EnvObservation.of(obs), instruction=ep.instruction, task_id=ep.instance.task_id,
                        seed=ep.instance.seed, step=ep.steps, over=ep.over)

    def _created(self, env: _Env, obs: Observation) -> EnvCreated:
        return EnvCreated(env_id=env.id, **dict(self._state(env, obs)))
