"""Episodes on Ray: past one machine, cua runs on a Ray cluster, not a home-made one.

Each parallel slot is a Ray actor holding a `LocalExecutor`: its sandboxes live on the
actor's node (in the actor's process, or behind the sandbox server of that node when
`server` names one per node with `{node_ip}`), and are reused from episode to episode as
on one machine. The driver hands out jobs (the template itself travels, so task files and
`--kind` work as locally) and writes the records, so `episodes.jsonl` and `summary.json`
are the same as for a local run: the actors ask the model with the same sampling options
(or run the same `--agent`), retry as often and name the run in every trajectory.

A node that dies takes its actors and their episodes with it. The driver sees the actor's
death, removes the episode's unfinished trajectory and runs the episode again on a new
actor, which Ray places on a node still alive; up to `retries` nodes may be lost per
episode. Each record says on which node it ran, where its sandbox was served from, and
which nodes were lost under it (`RayEpisodeRecord`). Every node needs cua and its system
packages installed (`scripts/setup.sh`).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast
from urllib.parse import urlsplit

import ray
from pydantic import BaseModel, Field
from ray.actor import ActorHandle
from ray.exceptions import RayActorError

from cua.episode.episode import EpisodeRecord
from cua.errors import ErrorRecord, NodeLost
from cua.eval.runner import EpisodeJob, JobExecutor, LocalExecutor, SlotUnavailable, instantiate_job, trajectory_folder
from cua.observation import ObserveOptions
from cua.policy.base import PolicyOptions
from cua.variant import parse_variant

__all__ = ["ActorSettings", "EpisodeActor", "RayEpisodeRecord", "ray_executors"]


_T = TypeVar("_T")
#: Seconds a new actor may wait for a node with room before its slot is given up.
PLACEMENT_S = 120.0
#: Actors started in turn for one slot before its episode counts a lost node (each one
#: that died before it answered was placed on a node that was dying).
SPAWN_TRIES = 4


class RayEpisodeRecord(EpisodeRecord):
    """An episodes.jsonl line of a Ray run: the record, and where it ran."""

    #: The Ray node id of the actor that ran the episode's last attempt.
    node: str | None = None
    #: That node's address.
    node_ip: str | None = None
    #: The host its sandbox was served from: the node's own address for sandboxes in the
    #: actor's process, the per-node server's host otherwise.
    sandbox_host: str | None = None
    #: Nodes that died while running an earlier attempt of this episode (each one counted in
    #: `attempts`), in order.
    lost_nodes: list[str] = Field(default_factory=list)


class ActorSettings(BaseModel):
    """What every episode actor is made with (sent to the cluster as JSON)."""

    policy: str = "oracle"
    policy_kw: dict[str, Any] = Field(default_factory=dict)
    #: `module:factory` of a Python agent (`--agent`), imported on the actor's node.
    agent: str | None = None
    observe: ObserveOptions | None = None
    options: dict[str, Any] | None = None
    config_overrides: dict[str, dict[str, Any]] = Field(default_factory=dict)
    run_dir: str | None = None
    frames: str = "all"
    retries: int = 2
    run_id: str | None = None
    attacks: int = 0
    #: Sandboxes in the actor's process (True) or through a sandbox server (`server`).
    local: bool = True
    #: A sandbox server's ws:// URL; `{node_ip}` in it becomes the actor's node address, so
    #: each actor uses the server of its own node.
    server: str | None = None
    token: str | None = None
    reconnect_s: float = 300.0


def _node() -> tuple[str, str]:
    context = ray.get_runtime_context()
    return context.get_node_id(), ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]


class EpisodeActor:
    """Runs episodes inside a Ray worker; becomes a Ray actor class through `ray.remote`."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self._settings = ActorSettings.model_validate(settings)
        self._node, self._ip = _node()
        self._stack = AsyncExitStack()
        self._executor: LocalExecutor | None = None

    def where(self) -> tuple[str, str]:
        """(node id, node address) of this actor."""
        return self._node, self._ip

    def _server(self) -> str | None:
        server = self._settings.server
        return server.replace("{node_ip}", self._ip) if server is not None else None

    async def _ready(self) -> LocalExecutor:
        if self._executor is not None:
            return self._executor
        from cua.episode.openers import sandbox_opener
        from cua.eval.agents import agent_factory, python_agent_factory

        s = self._settings
        if s.agent is not None:
            make_agent, _ = python_agent_factory(s.agent)
        else:
            options = PolicyOptions.model_validate(s.options) if s.options is not None else None
            make_agent, _, policy = agent_factory(s.policy, options=options, **s.policy_kw)
            if policy is not None:
                self._stack.push_async_callback(policy.aclose)  # type: ignore[attr-defined]
        opener = await self._stack.enter_async_context(sandbox_opener(
            local=s.local and s.server is None, server=self._server(), token=s.token, reconnect_s=s.reconnect_s))
        self._executor = LocalExecutor(opener, make_agent, config_overrides=s.config_overrides, observe=s.observe,
                                       run_dir=Path(s.run_dir) if s.run_dir else None,
                                       frames=s.frames, retries=s.retries, run_id=s.run_id,  # type: ignore[arg-type]
                                       attacks=s.attacks)
        self._stack.push_async_callback(self._executor.aclose)
        return self._executor

    async def run(self, template: Any, seed: int, repeat: int = 0, variant: dict[str, Any] | None = None) -> str:
        executor = await self._ready()
        record = await executor.run(EpisodeJob(template=template, seed=seed, repeat=repeat,
                                               variant=parse_variant(variant) if variant else None))
        server = self._server()
        host = urlsplit(server).hostname if server is not None else self._ip
        return RayEpisodeRecord(**dict(record), node=self._node, node_ip=self._ip, sandbox_host=host).model_dump_json()

    async def aclose(self) -> None:
        await self._stack.aclose()


class _Actor(Protocol):
    """An `EpisodeActor` handle as the driver calls it (Ray types methods only through `ray.method`)."""

    @property
    def where(self) -> Any: ...

    @property
    def run(self) -> Any: ...

    @property
    def aclose(self) -> Any: ...


async def _answer(ref: Awaitable[_T]) -> _T:
    return await ref


class _ActorExecutor:
    """The driver's side of one parallel slot: a `JobExecutor` whose work happens on an actor,
    replaced by a new one (on a node still alive) when its node dies."""

    def __init__(self, spawn: Callable[[], _Actor], settings: ActorSettings, placement_s: float) -> None:
        self._spawn, self._settings, self._placement_s = spawn, settings, placement_s
        self._actor: _Actor | None = None
        self._node = "?"

    async def _ready(self) -> _Actor:
        """The slot's actor, once it answered where it runs. One that dies before it answers
        (Ray placed it on a node that was dying, not yet known dead) is replaced, a few times,
        without charging the episode: it never held the episode's work."""
        for tries in range(SPAWN_TRIES):
            if self._actor is None:
                self._actor = self._spawn()
                self._node = "?"  # known once the actor answers
                try:
                    self._node, _ = await asyncio.wait_for(_answer(self._actor.where.remote()), self._placement_s)
                except TimeoutError:  # no node has room for it: the cluster lost too many
                    self._drop()
                    raise SlotUnavailable(f"no Ray node had room for an episode actor in {self._placement_s:g} s") \
                        from None
                except RayActorError:
                    self._drop()
                    if tries == SPAWN_TRIES - 1:
                        raise
                    continue
            break
        assert self._actor is not None
        return self._actor

    def _drop(self) -> str:
        """Forget the dead actor; the node it was on."""
        actor, node, self._actor = self._actor, self._node, None
        if actor is not None:
            ray.kill(actor)  # type: ignore[arg-type]
        return node

    def _forget_attempt(self, job: EpisodeJob, folder: str | None) -> None:
        """Remove the trajectory the lost attempt left unfinished (the retry writes it anew)."""
        if folder is None or self._settings.run_dir is None:
            return
        path = Path(self._settings.run_dir) / folder
        if path.is_dir() and not (path / "end.json").exists():
            shutil.rmtree(path, ignore_errors=True)

    async def run(self, job: EpisodeJob) -> EpisodeRecord:
        variant = job.variant.model_dump(mode="json") if job.variant is not None else None
        instance = instantiate_job(job, self._settings.config_overrides, self._settings.attacks)
        run_dir = self._settings.run_dir
        folder = trajectory_folder(Path(run_dir), instance, job.repeat) if run_dir is not None else None
        lost: list[str] = []
        while True:
            try:
                actor = await self._ready()
                answer = await actor.run.remote(job.template, job.seed, job.repeat, variant)
            except RayActorError as exc:
                lost.append(self._drop())
                self._forget_attempt(job, folder)
                if len(lost) > self._settings.retries:
                    error = ErrorRecord.of(NodeLost(f"the Ray nodes running this episode died ({len(lost)} times, "
                                                    f"the last {lost[-1]}): {type(exc).__name__}",
                                                    details={"nodes": lost}))
                    return RayEpisodeRecord(task_id=instance.task_id, seed=instance.seed, repeat=job.repeat,
                                            instruction=instance.instruction, agent="?",
                                            tags=instance.tags.model_dump(), status="infra_error", error=error,
                                            failure=error.failure, attempts=len(lost), lost_nodes=lost)
                continue
            record = RayEpisodeRecord.model_validate_json(answer)
            record.attempts += len(lost)
            record.lost_nodes = lost
            return record

    async def aclose(self) -> None:
        actor, self._actor = self._actor, None
        if actor is None:
            return
        try:
            await actor.aclose.remote()
        except RayActorError:  # its node is gone, and its sandboxes with it
            pass
        ray.kill(actor)  # type: ignore[arg-type]


@asynccontextmanager
async def ray_executors(address: str, settings: ActorSettings, *, num_cpus: float = 1.0,
                        placement_s: float = PLACEMENT_S) -> AsyncIterator[Callable[[], JobExecutor]]:
    """Yields a factory of executors, each driving one actor at a time. `address`: a Ray
    cluster address, "auto", or "local" to start a Ray instance in this process (shut down
    on exit). `settings.run_dir`: where the actors write trajectories (a path every node
    sees). Actors are spread over the nodes (Ray's SPREAD strategy); one that no node has
    room for within `placement_s` gives its slot up (`SlotUnavailable`)."""
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=None if address == "local" else address, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    actor_class = ray.remote(num_cpus=num_cpus, max_restarts=0)(EpisodeActor)
    payload = settings.model_dump(mode="json")

    def spawn() -> _Actor:
        handle = actor_class.options(scheduling_strategy="SPREAD").remote(payload)
        if not isinstance(handle, ActorHandle):  # Ray types `remote()` as a handle or the class itself
            raise TypeError(f"Ray returned {type(handle).__name__}, not an actor handle")
        return cast(_Actor, handle)

    def make() -> JobExecutor:
        return _ActorExecutor(spawn, settings, placement_s)

    try:
        yield make
    finally:
        if started_here:
            ray.shutdown()
