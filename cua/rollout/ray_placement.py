"""Groups on Ray: past one machine, the rollout service places groups on Ray actors.

Each actor is a rollout worker on whatever node Ray put it: its own sandboxes (in its
process), its own token proxy (served on its node, so model calls go from there to the
policy endpoint), at most `max_episodes` rollouts at once. The driver's service keeps the
request, the staleness bound and the masking rule, and hands each group to the next
actor; the actor runs it as a local service would and returns its `GroupResult`. The
trajectories are written under the run folder by the actor (a path every node sees, or
each node's own disk). Every node needs cua and its system packages (`scripts/setup.sh`).
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import threading
from collections.abc import AsyncIterator, Awaitable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from cua.episode.safety import with_attacks
from cua.rollout.models import GroupResult, RolloutRequest

if TYPE_CHECKING:
    from cua.rollout.service import RolloutService
    from cua.task import TaskTemplate

__all__ = ["GroupWorker", "RayPlacement", "WorkerHandle", "ray_placement"]


class GroupWorker:
    """Runs groups inside a Ray worker; becomes a Ray actor class through `ray.remote`."""

    def __init__(self, runs_dir: str, max_episodes: int, max_retries: int) -> None:
        self._args = (runs_dir, max_episodes, max_retries)
        self._stack: AsyncExitStack | None = None
        self._service: RolloutService | None = None
        self._lock: asyncio.Lock | None = None

    async def _ready(self) -> RolloutService:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._service is None:
                from cua.rollout.server import serve_rollouts

                runs_dir, max_episodes, max_retries = self._args
                self._stack = AsyncExitStack()
                running = await self._stack.enter_async_context(serve_rollouts(
                    runs_dir, local=True, max_episodes=max_episodes, max_retries=max_retries,
                    max_staleness=1 << 30))  # the driver applies the staleness bound
                self._service = running.service
            return self._service

    async def run_group(self, request: str, task_id: str, seed: int, group_id: str, folder: str) -> str:
        from cua.tasks.registry import get_template

        service = await self._ready()
        parsed = RolloutRequest.model_validate_json(request)
        Path(folder).mkdir(parents=True, exist_ok=True)
        template: TaskTemplate = get_template(task_id)
        instance = with_attacks(template.instantiate(seed), parsed.attacks)
        result = await service.run_group(parsed, instance, group_id, Path(folder))
        return result.model_dump_json()

    async def aclose(self) -> None:
        if self._stack is not None:
            await self._stack.aclose()


_Result_co = TypeVar("_Result_co", covariant=True)


class _RemoteMethod(Protocol[_Result_co]):
    """An actor method as the driver calls it: `.remote(...)` returns an awaitable ObjectRef."""

    def remote(self, *args: object) -> Awaitable[_Result_co]: ...


class WorkerHandle(Protocol):
    """A `GroupWorker` actor as the driver calls it. Ray types an actor's methods only when
    each is decorated with `ray.method`, which would make this module import Ray to load."""

    @property
    def run_group(self) -> _RemoteMethod[str]: ...

    @property
    def aclose(self) -> _RemoteMethod[None]: ...


class RayPlacement:
    """The driver's side: groups handed to the actors in turn."""

    def __init__(self, actors: list[WorkerHandle]) -> None:
        if not actors:
            raise ValueError("Ray placement needs at least one actor")
        self.actors = actors
        self._next = itertools.cycle(actors)

    async def run_group(self, request: RolloutRequest, task_id: str, seed: int, group_id: str,
                        folder: Path) -> GroupResult:
        actor = next(self._next)
        answer = await actor.run_group.remote(request.model_dump_json(), task_id, seed, group_id, str(folder))
        return GroupResult.model_validate_json(answer)


@asynccontextmanager
async def ray_placement(address: str, *, actors: int, runs_dir: str | Path, max_episodes: int = 4,
                        max_retries: int = 2, num_cpus: float = 1.0) -> AsyncIterator[RayPlacement]:
    """`actors` rollout workers on a Ray cluster (`address`: a cluster address, "auto", or
    "local" for a Ray instance in this process, shut down on exit)."""
    import ray
    from ray.actor import ActorHandle

    started_here = not ray.is_initialized()
    # ray.init replaces the process's SIGTERM handler (with one that exits) and never puts
    # it back: the process that embeds the service keeps its own once Ray is shut down.
    sigterm = signal.getsignal(signal.SIGTERM) if threading.current_thread() is threading.main_thread() else None
    if started_here:
        ray.init(address=None if address == "local" else address, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    actor_class = ray.remote(num_cpus=num_cpus)(GroupWorker)
    handles: list[ActorHandle[GroupWorker]] = []
    for _ in range(actors):
        handle = actor_class.remote(str(Path(runs_dir).resolve()), max_episodes, max_retries)
        if not isinstance(handle, ActorHandle):  # Ray types `remote()` as a handle or the class itself
            raise TypeError(f"Ray returned {type(handle).__name__}, not an actor handle")
        handles.append(handle)
    workers = [cast(WorkerHandle, h) for h in handles]
    try:
        yield RayPlacement(workers)
    finally:
        await asyncio.gather(*(w.aclose.remote() for w in workers), return_exceptions=True)
        for h in handles:
            ray.kill(h)
        if started_here:
            ray.shutdown()
            if sigterm is not None:
                signal.signal(signal.SIGTERM, sigterm)
