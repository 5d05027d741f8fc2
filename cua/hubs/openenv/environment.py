"""`CuaEnvironment`: one OpenEnv session, one sandbox, one `cua.episode.Episode` at a time.

OpenEnv's server makes one environment per websocket session (and a throwaway one per HTTP
request), so making one opens nothing: the first reset opens the task's sandbox (a slot of
the server's `SandboxPool`), a later reset of a task that fits the same sandbox
(`sandbox_key`) reuses it, and one that needs another kind or config closes it and opens
that. Every reset and step goes through the episode layer: `Episode` resets with the task's
seed and setup and reads the instruction; `RewardAccount`, the one transition rule the other
trainers' drivers use, pays each step (sparse: the judge's score on the last step; dense:
progress as it changes) and says when the episode is over.

Errors are the typed `cua.errors`: a request the session cannot serve (no episode yet, the
episode is over, an unknown task, the session already closed) is a `ClientError`, and the
session goes on. A sandbox that fails (an `InfraError`) is closed at once, so the next reset
opens a fresh one. OpenEnv reports an environment's exception over the websocket by its text
alone (`EXECUTION_ERROR`); `WireError` makes that text `[code] message`, which
`cua.hubs.openenv.client` turns back into the typed error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import BaseModel, ConfigDict, Field

import cua
from cua.episode.episode import Episode
from cua.episode.handle import SandboxHandle
from cua.episode.openers import sandbox_key
from cua.episode.transition import RewardAccount
from cua.errors import BadRequest, CuaError, InfraError, Unsupported
from cua.hubs.openenv.models import CuaAction, CuaObservation, CuaState, RewardMode
from cua.hubs.openenv.pool import SandboxPool
from cua.observation import Observation
from cua.task import TaskInstance

__all__ = ["CuaEnvironment", "ResetParams", "WireError"]

#: How long a close asked for from another thread waits for the event loop to finish it.
CLOSE_TIMEOUT_S = 60.0


class WireError(Exception):
    """A `CuaError` as OpenEnv's websocket carries an environment's exception: its text,
    here `[code] message`. The HTTP routes answer the error itself (`cua.hubs.openenv.app`)."""

    def __init__(self, error: CuaError) -> None:
        super().__init__(f"[{error.code.value}] {error.message}")
        self.error = error


class ResetParams(BaseModel):
    """A reset's parameters: OpenEnv's `seed` and `episode_id`, and cua's `task` (any template
    id) and `reward`. The websocket hands them over unchecked, so they are checked here."""

    model_config = ConfigDict(extra="forbid", strict=True)
    task: str | None = Field(default=None, min_length=1, max_length=200)
    seed: int | None = Field(default=None, ge=0)
    episode_id: str | None = Field(default=None, max_length=255)
    reward: RewardMode | None = None


class _Sandbox:
    def __init__(self, key: str, cm: Any, handle: SandboxHandle) -> None:
        self.key, self.cm, self.handle = key, cm, handle


def _instance(task: str, seed: int) -> TaskInstance:
    from cua.tasks.registry import task_instance

    return task_instance(task, seed)


class CuaEnvironment(Environment[CuaAction, CuaObservation, CuaState]):
    """One session (see the module docstring). Made by the server's factory,
    `functools.partial(CuaEnvironment, pool)`."""

    #: Each session has its own sandbox and episode; they share only the pool's slot count.
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, pool: SandboxPool) -> None:
        super().__init__()
        self.pool = pool
        self._sandbox: _Sandbox | None = None
        self._account: RewardAccount | None = None
        self._episode_id: str | None = None
        self._reward: RewardMode = pool.reward
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    # -- OpenEnv's interface ---------------------------------------------------------------

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> CuaObservation:
        raise Unsupported("CuaEnvironment is async: OpenEnv's server calls reset_async")

    def step(self, action: CuaAction, timeout_s: float | None = None, **kwargs: Any) -> CuaObservation:
        raise Unsupported("CuaEnvironment is async: OpenEnv's server calls step_async")

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          **kwargs: Any) -> CuaObservation:
        try:
            return await self._reset(ResetParams.model_validate({"seed": seed, "episode_id": episode_id, **kwargs}))
        except CuaError as exc:
            raise WireError(exc) from exc

    async def step_async(self, action: CuaAction, timeout_s: float | None = None, **kwargs: Any) -> CuaObservation:
        try:
            if timeout_s is not None or kwargs:
                raise Unsupported("a step takes only its action (no timeout_s or other parameters)",
                                  details={"parameters": sorted(kwargs) + (["timeout_s"] if timeout_s else [])})
            return await self._step(action)
        except CuaError as exc:
            raise WireError(exc) from exc

    @property
    def state(self) -> CuaState:
        account = self._account
        if account is None:
            return CuaState(episode_id=self._episode_id, reward_mode=self._reward)
        ep = account.episode
        return CuaState(episode_id=self._episode_id, step_count=ep.steps, task_id=ep.instance.task_id,
                        seed=ep.instance.seed, instruction=ep.instruction, sandbox_kind=ep.instance.sandbox_kind,
                        over=ep.over, reward_mode=self._reward)

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="cua", version=cua.__version__,
            description="cua's browser, desktop and VM tasks with deterministic judges: reset with a task "
                        "(any template id) and a seed, step with cua's unified actions, rewarded by the task's judge.")

    def close(self) -> None:
        """Release the sandbox; the session takes no further reset. OpenEnv calls this from a
        worker thread (websocket sessions, the idle reaper) or on the event loop itself (its
        HTTP routes): there the close runs as a task the pool keeps."""
        self._closed = True
        loop = self._loop
        if loop is None or self._sandbox is None:
            return
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self.pool.close_later(self.aclose())
        elif loop.is_running():
            with contextlib.suppress(concurrent.futures.TimeoutError):
                asyncio.run_coroutine_threadsafe(self.aclose(), loop).result(CLOSE_TIMEOUT_S)

    async def aclose(self) -> None:
        self._closed = True
        async with self._lock:
            await self._release()

    # -- the work ------------------------------------------------------------------------

    async def _reset(self, params: ResetParams) -> CuaObservation:
        self._loop = asyncio.get_running_loop()
        async with self._lock:
            if self._closed:
                raise BadRequest("this session is closed (idle past the server's timeout, or shut down): "
                                 "open a new one", details={"reason": "session_closed"})
            old = self._account
            task = params.task or (old.episode.instance.task_id if old else self.pool.default_task)
            if task is None:
                raise BadRequest("reset needs a task: a template id, e.g. {\"task\": \"fake.set_counter@1\"}")
            seed = params.seed if params.seed is not None else (old.episode.instance.seed if old else 0)
            instance = await asyncio.to_thread(_instance, task, seed)  # a generator may read files
            self._reward = params.reward or self._reward
            if old is not None:
                old.episode.finish()
                self._account = None
            key = sandbox_key(instance)
            if self._sandbox is not None and self._sandbox.key != key:
                await self._release()
            try:
                if self._sandbox is None:
                    cm, handle = await self.pool.open(instance.sandbox_kind, dict(instance.sandbox_config))
                    self._sandbox = _Sandbox(key, cm, handle)
                    self.pool.live.add(self)
                episode = Episode(self._sandbox.handle, instance, observe=self.pool.observe, producer="rl")
                obs = await episode.reset()
            except InfraError:
                await self._release()
                raise
            self._account = RewardAccount.at_start(episode, self._reward)
            self._episode_id = params.episode_id
            return self._observation(obs, reward=None, done=False)

    async def _step(self, action: CuaAction) -> CuaObservation:
        async with self._lock:
            account = self._account
            if account is None:
                raise BadRequest("no episode: reset first (OpenEnv's HTTP /step is stateless; step over /ws)",
                                 details={"reason": "no_episode"})
            if account.episode.over:
                raise BadRequest("the episode is over: reset first", details={"reason": "episode_over"})
            try:
                t = await account.step(action.action)
            except InfraError:
                account.episode.finish()
                self._account = None
                await self._release()
                raise
            return self._observation(t.observation, reward=t.reward, done=t.over, truncated=t.truncated,
                                     progress=t.progress, verdict=t.verdict)

    def _observation(self, obs: Observation, **fields: Any) -> CuaObservation:
        assert self._account is not None
        ep = self._account.episode
        return CuaObservation.of(obs, task_id=ep.instance.task_id, seed=ep.instance.seed, instruction=ep.instruction,
                                 step=ep.steps, **fields)

    async def _release(self) -> None:
        sandbox, self._sandbox = self._sandbox, None
        self.pool.live.discard(self)
        if self._account is not None:
            self._account.episode.finish()
            self._account = None
        if sandbox is not None:
            with contextlib.suppress(CuaError):
                await self.pool.release(sandbox.cm)
