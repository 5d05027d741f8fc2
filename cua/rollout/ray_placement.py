"""Groups on Ray: past one machine, the rollout service places groups on Ray actors.

Each actor is a rollout worker on whatever node Ray put it: its own sandboxes (in its
process), its own token proxy (served on its node, so model calls go from there to the
policy endpoint), at most `max_episodes` rollouts at once. Its sandboxes live on its own
node: in its process (`local`), or at the sandbox server of its node (`server` with
`{node_ip}`, e.g. `ws://{node_ip}:8765/v1/ws`). The driver's service keeps the request, the
staleness bound and the masking rule, and hands each group to the next actor (spread over
the nodes); the actor runs it as a local service would and returns its `GroupResult`,
which names the node. The trajectories are written under the run folder by the actor (a
path every node sees, or each node's own disk).

A node that dies takes its actors' groups with it: the driver replaces the dead actor (Ray
places the new one on a node still alive), removes the group's unfinished trajectories and
runs the group again there, up to `max_retries` lost nodes per group; the result lists the
nodes lost (`GroupResult.lost_nodes`) and counts them in every rollout's `attempts`. A group
that lost more nodes than that comes back masked, each rollout an `infra_error` with a
typed `NodeLost` (never a reward); so does one whose new worker finds no node with room
(`PLACEMENT_S`, a few times over). Every node needs cua and its system packages (`scripts/setup.sh`).
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from cua.episode.safety import with_attacks
from cua.errors import ErrorRecord, NodeLost
from cua.rollout.models import GroupResult, RolloutRequest, RolloutTrajectory

if TYPE_CHECKING:
    from cua.rollout.service import RolloutService
    from cua.task import TaskTemplate

__all__ = ["GroupWorker", "RayPlacement", "WorkerHandle", "ray_placement"]


class GroupWorker:
    """Runs groups inside a Ray worker; becomes a Ray actor class through `ray.remote`."""

    def __init__(self, runs_dir: str, max_episodes: int, max_retries: int, local: bool = True,
                 server: str | None = None, server_token: str | None = None) -> None:
        import ray

        self._args = (runs_dir, max_episodes, max_retries)
        self.node = ray.get_runtime_context().get_node_id()
        ip = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        self._source = (local and server is None, server.replace("{node_ip}", ip) if server else None, server_token)
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
                local, server, server_token = self._source
                self._stack = AsyncExitStack()
                running = await self._stack.enter_async_context(serve_rollouts(
                    runs_dir, local=local, server=server, server_token=server_token, max_episodes=max_episodes,
                    max_retries=max_retries, max_staleness=1 << 30))  # the driver applies the staleness bound
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
        return result.model_copy(update={"node": self.node}).model_dump_json()

    def where(self) -> str:
        """The id of the Ray node this worker (and its sandboxes) runs on."""
        return self.node

    async def aclose(self) -> None:
        if self._stack is not None:
            await self._stack.aclose()


_Result_co = TypeVar("_Result_co", covariant=True)
_T = TypeVar("_T")
#: Seconds a new worker may wait for a node with room before it counts as not started.
PLACEMENT_S = 120.0
#: Actors started in turn for one slot before the slot counts as lost (each one that died
#: before it answered was placed on a node that was dying).
SPAWN_TRIES = 4


class _RemoteMethod(Protocol[_Result_co]):
    """An actor method as the driver calls it: `.remote(...)` returns an awaitable ObjectRef."""

    def remote(self, *args: object) -> Awaitable[_Result_co]: ...


class WorkerHandle(Protocol):
    """A `GroupWorker` actor as the driver calls it. Ray types an actor's methods only when
    each is decorated with `ray.method`, which would make this module import Ray to load."""

    @property
    def run_group(self) -> _RemoteMethod[str]: ...

    @property
    def where(self) -> _RemoteMethod[str]: ...

    @property
    def aclose(self) -> _RemoteMethod[None]: ...


class RayPlacement:
    """The driver's side: groups handed to the actors in turn; a dead actor (its node lost)
    is replaced by `spawn()` and its group run again on the next one."""

    def __init__(self, actors: list[WorkerHandle], spawn: Callable[[], WorkerHandle] | None = None,
                 max_retries: int = 2, placement_s: float = PLACEMENT_S) -> None:
        if not actors:
            raise ValueError("Ray placement needs at least one actor")
        self.actors = actors
        self._spawn, self._max_retries, self._placement_s = spawn, max_retries, placement_s
        self._turn = 0
        #: id() of an actor handle -> the node it runs on, once it answered.
        self._nodes: dict[int, str] = {}

    async def where(self) -> list[str]:
        """The node of every actor, in order (it waits for each to be up)."""
        nodes = await asyncio.gather(*(actor.where.remote() for actor in self.actors))
        self._nodes.update((id(actor), node) for actor, node in zip(self.actors, nodes, strict=True))
        return list(nodes)

    async def _live(self, index: int) -> WorkerHandle:
        """The actor at `index`, once it answered where it runs. One that dies before it
        answers (Ray placed it on a node that was dying, not yet known dead) is replaced, a
        few times, without charging the group: it never held the group's work."""
        from ray.exceptions import RayActorError

        for _ in range(SPAWN_TRIES - 1):
            actor = self.actors[index]
            if id(actor) in self._nodes:
                return actor
            try:
                self._nodes[id(actor)] = await asyncio.wait_for(_answer(actor.where.remote()), self._placement_s)
                return actor
            except (RayActorError, TimeoutError):  # dead at birth, or no node had room for it
                self._replace(index, actor)
        actor = self.actors[index]
        self._nodes[id(actor)] = await asyncio.wait_for(_answer(actor.where.remote()), self._placement_s)
        return actor

    def _replace(self, index: int, dead: WorkerHandle) -> str:
        """Put a new actor in place of the dead one at `index`; the node that was lost ("?"
        when the actor died before it ever answered)."""
        import ray

        ray.kill(dead)  # type: ignore[arg-type]
        if self._spawn is not None and self.actors[index] is dead:
            self.actors[index] = self._spawn()
        return self._nodes.get(id(dead), "?")

    async def run_group(self, request: RolloutRequest, task_id: str, seed: int, group_id: str,
                        folder: Path) -> GroupResult:
        from ray.exceptions import RayActorError

        lost: list[str] = []
        while True:
            index = self._turn % len(self.actors)
            self._turn += 1
            try:
                actor = await self._live(index)
            except (RayActorError, TimeoutError) as exc:  # no actor would start: the nodes are gone, or full
                return _lost_group(request, task_id, seed, group_id, [*lost, "?"], exc)
            try:
                answer = await actor.run_group.remote(request.model_dump_json(), task_id, seed, group_id, str(folder))
            except RayActorError as exc:
                lost.append(self._replace(index, actor))
                _forget_group(folder, group_id, request.group_size)
                if len(lost) > self._max_retries or self._spawn is None and len(lost) >= len(self.actors):
                    return _lost_group(request, task_id, seed, group_id, lost, exc)
                continue
            result = GroupResult.model_validate_json(answer)
            if result.node is not None:
                self._nodes[id(actor)] = result.node
            if lost:
                result.lost_nodes = lost
                for traj in result.trajectories:
                    traj.attempts += len(lost)
            return result


async def _answer(ref: Awaitable[_T]) -> _T:
    return await ref


def _forget_group(folder: Path, group_id: str, size: int) -> None:
    """Remove the unfinished trajectories a lost attempt of the group left (the retry writes them anew)."""
    for j in range(size):
        path = folder / f"{group_id}__{j}"
        if path.is_dir() and not (path / "end.json").exists():
            shutil.rmtree(path, ignore_errors=True)


def _lost_group(request: RolloutRequest, task_id: str, seed: int, group_id: str, lost: list[str],
                exc: BaseException) -> GroupResult:
    """The group after more lost nodes than its retries: every rollout masked, never scored."""
    error = ErrorRecord.of(NodeLost(f"the Ray nodes running this group died ({len(lost)} times, the last "
                                    f"{lost[-1]}): {type(exc).__name__}", details={"nodes": lost}))
    trajectories = [RolloutTrajectory(id=f"{group_id}__{j}", group_id=group_id, task_id=task_id, seed=seed,
                                      policy_version=request.policy_version, status="infra_error", mask_sample=True,
                                      attempts=len(lost), failure=error.failure, error=error)
                    for j in range(request.group_size)]
    return GroupResult(group_id=group_id, task_id=task_id, seed=seed, masked=True, trajectories=trajectories,
                       lost_nodes=lost)


@asynccontextmanager
async def ray_placement(address: str, *, actors: int, runs_dir: str | Path, max_episodes: int = 4,
                        max_retries: int = 2, num_cpus: float = 1.0, local: bool = True, server: str | None = None,
                        server_token: str | None = None) -> AsyncIterator[RayPlacement]:
    """`actors` rollout workers on a Ray cluster (`address`: a cluster address, "auto", or
    "local" for a Ray instance in this process, shut down on exit), spread over its nodes.
    Their sandboxes: in their processes (`local`), or at `server` (`{node_ip}` in it: the
    server of each worker's node)."""
    import ray
    from ray.actor import ActorHandle

    started_here = not ray.is_initialized()
    # ray.init replaces the process's SIGTERM handler (with one that exits) and never puts
    # it back: the process that embeds the service keeps its own once Ray is shut down.
    sigterm = signal.getsignal(signal.SIGTERM) if threading.current_thread() is threading.main_thread() else None
    if started_here:
        ray.init(address=None if address == "local" else address, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    actor_class = ray.remote(num_cpus=num_cpus, max_restarts=0)(GroupWorker)
    handles: list[ActorHandle[GroupWorker]] = []

    def spawn() -> WorkerHandle:
        handle = actor_class.options(scheduling_strategy="SPREAD").remote(
            str(Path(runs_dir).resolve()), max_episodes, max_retries, local, server, server_token)
        if not isinstance(handle, ActorHandle):  # Ray types `remote()` as a handle or the class itself
            raise TypeError(f"Ray returned {type(handle).__name__}, not an actor handle")
        handles.append(handle)
        return cast(WorkerHandle, handle)

    placement = RayPlacement([spawn() for _ in range(actors)], spawn, max_retries)
    try:
        yield placement
    finally:
        await asyncio.gather(*(w.aclose.remote() for w in placement.actors), return_exceptions=True)
        for h in handles:
            ray.kill(h)
        if started_here:
            ray.shutdown()
            if sigterm is not None:
                signal.signal(signal.SIGTERM, sigterm)
