"""Whole episodes for a trainer: groups of rollouts from one forked state, masked, never zeroed.

`RolloutService.run(request)` runs `n` prompts of every task. A prompt is a group: one
sandbox is reset to the task's seed (the template's setup played, the judge's baseline
read), snapshotted, and `group_size` forks of it each run one episode, driven by a model
behind an OpenAI-compatible endpoint. So the group's rollouts start from one state, not
from `group_size` resets that merely share a seed.

- Every model call goes through the rollout's own route of the token proxy
  (`cua.rollout.proxy`): each step line of the trajectory carries the prompt and completion
  token ids and logprobs the endpoint reported, and the split of time between the
  environment and the model.
- Infrastructure faults (a sandbox that died, a server lost, a model endpoint unreachable)
  are retried, up to `max_retries` times per rollout, on a fresh fork of the same snapshot;
  each lost attempt stays in the trajectory (`cua.trajectory` attempts). A rollout that
  still fails masks its whole group: every rollout of the group comes back with
  `mask_sample=True`, none is scored 0 for the infrastructure's fault.
- Bounded staleness: every episode is tagged with the policy version it ran under
  (`meta.extra["policy_version"]`). The service knows the newest version any request has
  named (or `set_policy_version`); a request more than `max_staleness` versions behind is
  refused (`StalePolicy`), and a queued group that has fallen behind by the time it would
  start is not started (status "stale", masked).
- Concurrency: at most `max_episodes` rollouts (sandboxes) run at once across requests, and
  at most `max_episodes` groups hold their start state's sandbox at once (so a burst of
  groups never asks the sandbox server for more sandboxes than it holds).
- Backpressure: the rollouts admitted (running or waiting for a slot) are bounded by
  `max_episodes + max_queued`. A request that would pass the bound is refused at once with a
  retryable `Capacity` (HTTP 503, its details say how full the service is), never queued
  without end; one larger than the bound itself can never run and is a `BadRequest`.
- Trajectories are written under `runs_dir/<request id>/` in the shared format, as eval
  and the recorder write them.
- A curriculum (`cua.rollout.curriculum`) counts every scored rollout (never a masked or
  lost one) and draws the tasks of a request that asks for a `sample` instead of naming them.

This module drives `cua.episode` and writes `cua.trajectory`; it never imports `cua.eval`,
`cua.rl` or `cua.record`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from cua.branch import BranchRefused, branch_extra, replay_prefix, task_instance
from cua.branch.fork import snapshot_at
from cua.branch.snapshots import SnapshottingHandle, SnapshotWriter, StepSnapshots, snapshot_every
from cua.branch.sources import KeptSources
from cua.episode.agent import AgentTurn, EpisodeContext
from cua.episode.episode import Episode
from cua.episode.group import ForkableHandle
from cua.episode.handle import SandboxHandle, SandboxOpener
from cua.episode.loop import play
from cua.episode.policy_agent import PolicyAgent
from cua.episode.safety import with_attacks
from cua.errors import BadRequest, Capacity, CuaError, ErrorRecord, FailureClass
from cua.info import SnapshotRef
from cua.observation import Observation, ObserveOptions
from cua.rollout.curriculum import Curriculum, CurriculumSettings
from cua.rollout.ledger import RequestLedger
from cua.rollout.models import (
    GroupResult,
    PolicyEndpoint,
    RolloutRequest,
    RolloutResponse,
    RolloutTrajectory,
    TaskSample,
)
from cua.rollout.proxy import ProxyRecorder, TokenProxy
from cua.task import TaskInstance
from cua.trajectory import AgentInfo, TokenTrace, Trajectory, TrajectoryWriter, read_trajectory

__all__ = ["GroupPlacement", "RolloutService", "RolloutSettings", "StalePolicy"]

log = logging.getLogger(__name__)


class StalePolicy(BadRequest):
    """The request's policy version is further behind the newest than the service allows."""

    failure = FailureClass.STALE


class GroupPlacement(Protocol):
    """Where groups run past this process (`cua.rollout.ray_placement.RayPlacement`)."""

    async def run_group(self, request: RolloutRequest, task_id: str, seed: int, group_id: str,
                        folder: Path) -> GroupResult: ...


@dataclass
class RolloutSettings:
    runs_dir: Path
    #: Rollouts (sandboxes) running at once, across requests.
    max_episodes: int = 8
    #: Rollouts admitted to wait for a slot beyond the `max_episodes` running (None: 4x those).
    max_queued: int | None = None
    #: Infrastructure retries per rollout, unless a request says otherwise.
    max_retries: int = 2
    #: How many policy versions behind the newest a request may be.
    max_staleness: int = 1
    observe: ObserveOptions = field(default_factory=ObserveOptions)
    curriculum: CurriculumSettings = field(default_factory=CurriculumSettings)
    #: The curriculum's state file (None: `runs_dir/curriculum.json`).
    curriculum_path: Path | None = None
    #: How long a rollout's sandbox is kept for branching after its episode (requests with
    #: `snapshots`), counted from the last branch taken from it.
    source_ttl_s: float = 600.0
    #: How long a keyed request's answer is kept for its retries (`cua.rollout.ledger`).
    request_ttl_s: float = 3600.0


@dataclass
class _Live:
    """A rollout in flight (for inspection, and for tests that inject faults)."""

    rollout_id: str
    group_id: str
    attempt: int
    handle: SandboxHandle | None = None


class RolloutService:
    """See the module docstring. `opener` opens one sandbox per group (in process, or on a
    `cua serve`: `cua.episode.openers.sandbox_opener`); `proxy_url` is where the token
    proxy's routes are served (the rollout server's own address)."""

    def __init__(self, settings: RolloutSettings, opener: SandboxOpener, proxy: TokenProxy,
                 proxy_url: Callable[[], str], proxy_token: str | None = None) -> None:
        self.settings = settings
        self.opener = opener
        self.proxy = proxy
        self._proxy_url = proxy_url
        #: The rollout server's token, which its proxy routes require (None: served without auth).
        self._proxy_token = proxy_token
        self.policy_version = 0
        #: Where groups run past this process; None: here.
        self.placement: GroupPlacement | None = None
        self._slots = asyncio.Semaphore(settings.max_episodes)
        self._group_slots = asyncio.Semaphore(settings.max_episodes)
        queued = 4 * settings.max_episodes if settings.max_queued is None else settings.max_queued
        #: Rollouts admitted at most at once (running or waiting), and admitted now.
        self.capacity = settings.max_episodes + queued
        self.admitted = 0
        #: rollout id -> what it is doing now.
        self.live: dict[str, _Live] = {}
        #: Rollouts' sandboxes kept with their snapshots (requests with `snapshots`), by trajectory id.
        self.sources = KeptSources(settings.source_ttl_s)
        self.curriculum = Curriculum(settings.curriculum,
                                     settings.curriculum_path or settings.runs_dir / "curriculum.json")
        #: Keyed requests, so that a retry never runs its rollouts twice.
        self.ledger = RequestLedger(settings.runs_dir / "requests", ttl_s=settings.request_ttl_s)

    # --- staleness ---

    def set_policy_version(self, version: int) -> int:
        """The trainer moved on: refuse work more than `max_staleness` behind `version`."""
        self.policy_version = max(self.policy_version, version)
        return self.policy_version

    def _check_fresh(self, version: int) -> None:
        if version < self.policy_version - self.settings.max_staleness:
            raise StalePolicy(f"policy version {version} is more than {self.settings.max_staleness} behind the "
                              f"newest, {self.policy_version}",
                              details={"policy_version": version, "newest": self.policy_version,
                                       "max_staleness": self.settings.max_staleness})

    # --- requests ---

    @contextlib.contextmanager
    def _admit(self, groups: int, group_size: int) -> Iterator[None]:
        """Hold `groups x group_size` rollouts of the service's capacity while a request runs."""
        count = groups * group_size
        details = {"requested": count, "admitted": self.admitted, "capacity": self.capacity,
                   "max_episodes": self.settings.max_episodes}
        if count > self.capacity:
            raise BadRequest(f"a request of {count} rollouts is more than this service ever admits at once "
                             f"({self.capacity}): split it", details=details)
        if self.admitted + count > self.capacity:
            raise Capacity(f"the service is full: {self.admitted} of {self.capacity} rollouts admitted, "
                           f"{count} more asked; ask again when a request has ended", details=details)
        self.admitted += count
        try:
            yield
        finally:
            self.admitted -= count

    async def run(self, request: RolloutRequest) -> RolloutResponse:
        from cua.tasks.registry import get_template

        self.set_policy_version(request.policy_version)
        self._check_fresh(request.policy_version)
        if request.snapshots != "none" and self.placement is not None:
            raise BadRequest("`snapshots` keeps rollouts' sandboxes in this service, not on a placement's workers",
                             details={"snapshots": request.snapshots})
        if request.from_trajectory is not None:
            return await self._run_branches(request)
        names = request.sample.pool if request.sample is not None else request.tasks
        try:
            templates = {name: get_template(name) for name in names}
        except KeyError as exc:
            raise BadRequest(str(exc.args[0]), details={"tasks": names}) from None
        started = time.perf_counter()
        if request.sample is not None:
            drawn = self._draw(request.sample, [t.id for t in templates.values()])
            by_id = {t.id: t for t in templates.values()}
            jobs = [(by_id[task_id], seed, f"{task_id}__s{seed}__g{i}") for i, (task_id, seed) in enumerate(drawn)]
        else:
            seeds = request.seeds if request.seeds is not None else [request.seed_start + i for i in range(request.n)]
            jobs = [(template, seed, f"{template.id}__s{seed}__g{i}") for template in templates.values()
                    for i, seed in enumerate(seeds)]
        with self._admit(len(jobs), request.group_size):
            request_id = f"r{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
            folder = self.settings.runs_dir / request_id
            folder.mkdir(parents=True, exist_ok=True)
            groups = await asyncio.gather(*(
                self._place(request, with_attacks(t.instantiate(seed), request.attacks), gid, folder)
                for t, seed, gid in jobs))
        return RolloutResponse(request_id=request_id, policy_version=request.policy_version, groups=list(groups),
                               folder=str(folder), timings_ms={"total": (time.perf_counter() - started) * 1000})

    async def _run_branches(self, request: RolloutRequest) -> RolloutResponse:
        """Groups started at a step of a recorded trajectory (`from_step`), or at each of its
        steps (tree rollouts). They run here, not on a placement: the parent trajectory is
        on this service's disk."""
        assert request.from_trajectory is not None and request.from_step is not None
        parent = self._parent_trajectory(request.from_trajectory)
        instance = task_instance(parent)
        steps = list(range(len(parent.steps))) if request.from_step == "every" else [request.from_step]
        if not steps:
            raise BranchRefused(f"{parent.folder}: the trajectory has no steps to branch at",
                                details={"trajectory": str(parent.folder), "why": "out_of_range"})
        started = time.perf_counter()
        with self._admit(len(steps), request.group_size):
            request_id = f"r{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
            folder = self.settings.runs_dir / request_id
            folder.mkdir(parents=True, exist_ok=True)
            groups = await asyncio.gather(*(
                self._place_branch(request, instance, (parent, k), f"{instance.task_id}__s{instance.seed}__k{k}",
                                   folder)
                for k in steps))
        return RolloutResponse(request_id=request_id, policy_version=request.policy_version, groups=list(groups),
                               folder=str(folder), timings_ms={"total": (time.perf_counter() - started) * 1000})

    def _parent_trajectory(self, where: str) -> Trajectory:
        """A recorded trajectory under the runs folder (a request names no other path on this disk)."""
        root = self.settings.runs_dir.resolve()
        folder = (root / where).resolve()
        if not folder.is_relative_to(root) or not (folder / "meta.json").is_file():
            raise BadRequest(f"no trajectory {where!r} under the service's runs folder",
                             details={"from_trajectory": where})
        try:
            return read_trajectory(folder)
        except (ValidationError, ValueError, OSError) as exc:
            raise BadRequest(f"trajectory {where!r} is unreadable: {str(exc).splitlines()[0]}",
                             details={"from_trajectory": where}) from None

    async def _place_branch(self, request: RolloutRequest, instance: TaskInstance, branch: tuple[Trajectory, int],
                            group_id: str, folder: Path) -> GroupResult:
        group = await self.run_group(request, instance, group_id, folder, branch=branch)
        self.curriculum.record_many((t.task_id, t.seed, bool(t.passed)) for t in group.trajectories
                                    if t.status == "completed" and not t.mask_sample and t.passed is not None)
        return group

    def _draw(self, sample: TaskSample, pool: list[str]) -> list[tuple[str, int]]:
        """`sample.count` (template, seed) pairs drawn by the curriculum's rule."""
        rng = random.Random(sample.rng_seed)
        return [(task_id, rng.randrange(sample.seeds)) for task_id in self.curriculum.sample(pool, sample.count, rng)]

    # --- groups ---

    async def _place(self, request: RolloutRequest, instance: TaskInstance, group_id: str, folder: Path
                     ) -> GroupResult:
        group = await self._place_group(request, instance, group_id, folder)
        self.curriculum.record_many((t.task_id, t.seed, bool(t.passed)) for t in group.trajectories
                                    if t.status == "completed" and not t.mask_sample and t.passed is not None)
        return group

    async def _place_group(self, request: RolloutRequest, instance: TaskInstance, group_id: str, folder: Path
                           ) -> GroupResult:
        if self.placement is None:
            return await self.run_group(request, instance, group_id, folder)
        try:
            self._check_fresh(request.policy_version)
        except StalePolicy as exc:
            ids = [f"{group_id}__{j}" for j in range(request.group_size)]
            return self._unrun(request, instance, group_id, ids, "stale", exc)
        return await self.placement.run_group(request, instance.task_id, instance.seed, group_id, folder)

    async def run_group(self, request: RolloutRequest, instance: TaskInstance, group_id: str, folder: Path,
                        *, branch: tuple[Trajectory, int] | None = None) -> GroupResult:
        """One group here: reset, snapshot, `group_size` forked rollouts, the masking rule.
        `branch`: (a trajectory, k): the group starts at its step k, not at the reset."""
        async with self._group_slots:  # a group waiting here holds no sandbox yet
            group = await self._run_group(request, instance, group_id, folder, branch)
        if branch is None:
            return group
        named = {"parent": branch[0].meta.id if branch[0].meta else None, "parent_step": branch[1]}
        return group.model_copy(update={**named, "trajectories": [t.model_copy(update=named)
                                                                  for t in group.trajectories]})

    async def _run_group(self, request: RolloutRequest, instance: TaskInstance, group_id: str, folder: Path,
                         branch: tuple[Trajectory, int] | None) -> GroupResult:
        size = request.group_size
        ids = [f"{group_id}__{j}" for j in range(size)]
        try:
            self._check_fresh(request.policy_version)
        except StalePolicy as exc:
            return self._unrun(request, instance, group_id, ids, "stale", exc)
        retries = self.settings.max_retries if request.max_retries is None else request.max_retries
        config = dict(instance.sandbox_config)
        if request.isolation is not None:
            config["isolation"] = request.isolation
        last: BaseException | None = None
        for _ in range(retries + 1):  # the group's own start: open, reset, snapshot
            try:
                async with self._parent(request, instance, config, branch) as (base, ref):
                    results = await asyncio.gather(*(
                        self._rollout(request, base, ref, group_id, rid, folder / rid, retries) for rid in ids))
                break
            except CuaError as exc:
                if exc.fault != "infra":
                    raise
                last = exc
                log.warning("group %s could not start: %s", group_id, exc)
        else:
            assert last is not None
            return self._unrun(request, instance, group_id, ids, "infra_error", last)
        masked = any(r.status == "infra_error" for r in results)
        if masked:  # no score for any of them: a trainer that reads `reward` finds no fake number
            results = [r.model_copy(update={"status": r.status if r.status == "infra_error" else "masked",
                                            "mask_sample": True, "reward": None, "passed": None})
                       for r in results]
        return GroupResult(group_id=group_id, task_id=instance.task_id, seed=instance.seed, masked=masked,
                           trajectories=results)

    @contextlib.asynccontextmanager
    async def _parent(self, request: RolloutRequest, instance: TaskInstance, config: dict[str, Any],
                      branch: tuple[Trajectory, int] | None = None) -> AsyncIterator[tuple[Episode, Any]]:
        """The group's start state: a sandbox reset to the instance (and, for a branch, brought
        to its step by the recorded actions), and a snapshot of it. A branch at a step whose
        snapshot a kept source still holds starts from that snapshot itself instead: the
        group's forks share it with the parent trajectory (its ref is their start snapshot)."""
        extra: dict[str, Any] = {"policy_version": request.policy_version}
        if branch is not None:
            extra.update(branch_extra(*branch))
            kept = self._kept_snapshot(*branch)
            if kept is not None:
                async with self._kept_parent(request, instance, kept, branch[1], extra) as started:
                    yield started
                return
        async with self.opener(instance.sandbox_kind, config) as handle:
            base = Episode(handle, instance, observe=self.settings.observe, producer="rl",
                           agent=self._agent_info(request.policy), max_steps=request.max_steps, extra=extra)
            if branch is None:
                await base.reset()
            else:
                await replay_prefix(base, *branch)
            ref = await handle.snapshot()
            try:
                yield base, ref
            finally:
                with contextlib.suppress(CuaError):
                    await handle.delete_snapshot(ref)

    def _kept_snapshot(self, traj: Trajectory, step: int) -> tuple[ForkableHandle, SnapshotRef] | None:
        """The kept source of `traj` and its snapshot of `step`, when both are still there."""
        source = self.sources.get(traj.meta.id) if traj.meta is not None else None
        found = snapshot_at(traj, step) if source is not None else None
        if source is None or found is None or found[0] != step or not isinstance(source.handle, ForkableHandle):
            return None
        return source.handle, found[1]

    @contextlib.asynccontextmanager
    async def _kept_parent(self, request: RolloutRequest, instance: TaskInstance,
                           kept: tuple[ForkableHandle, SnapshotRef], step: int, extra: dict[str, Any]
                           ) -> AsyncIterator[tuple[Episode, Any]]:
        """A group parent forked off a kept source at its step's snapshot: reset once for the
        judge's reads of the task's start, then restored to the snapshot, which the group forks off."""
        source, ref = kept
        handle = await source.fork(ref, observe=self.settings.observe)
        try:
            base = Episode(handle, instance, observe=self.settings.observe, producer="rl",
                           agent=self._agent_info(request.policy), extra=extra,
                           max_steps=(request.max_steps or instance.max_steps) - step)
            await base.reset()
            base.saw(await handle.restore(ref, observe=self.settings.observe))
            yield base, ref
        finally:
            with contextlib.suppress(CuaError):
                await handle.close()

    async def aclose(self) -> None:
        """Stop the keyed requests still running and close the sandboxes kept for branching
        (the service is going away)."""
        await self.ledger.aclose()
        await self.sources.aclose()

    def _unrun(self, request: RolloutRequest, instance: TaskInstance, group_id: str, ids: list[str],
               status: Any, exc: BaseException) -> GroupResult:
        return GroupResult(group_id=group_id, task_id=instance.task_id, seed=instance.seed, masked=True,
                           trajectories=[RolloutTrajectory(
                               id=rid, group_id=group_id, task_id=instance.task_id, seed=instance.seed,
                               policy_version=request.policy_version, status=status, mask_sample=True,
                               attempts=0, error=ErrorRecord.of(exc), failure=_failure(exc)) for rid in ids])

    # --- one rollout ---

    async def _rollout(self, request: RolloutRequest, base: Episode, ref: Any, group_id: str, rollout_id: str,
                       folder: Path, retries: int) -> RolloutTrajectory:
        every = snapshot_every(request.snapshots)
        writer = TrajectoryWriter(folder, frames=request.frames) if every is None else \
            SnapshotWriter(folder, StepSnapshots(every), frames=request.frames)
        recorder = self.proxy.open(rollout_id, request.policy.base_url, api_key=request.policy.api_key)
        live = self.live[rollout_id] = _Live(rollout_id, group_id, 0)
        timings = {"env": 0.0, "model": 0.0}
        lost: CuaError | None = None
        try:
            for attempt in range(retries + 1):
                live.attempt = attempt
                try:
                    async with self._slots:
                        ep = await self._attempt(request, base, ref, rollout_id, writer, recorder, live, timings,
                                                 final=attempt == retries)
                    return self._result(request, base, group_id, rollout_id, folder, ep, attempt + 1, timings)
                except CuaError as exc:
                    if exc.fault != "infra":
                        raise
                    lost = exc
                    log.info("rollout %s attempt %d lost to %s: %s", rollout_id, attempt, exc.failure_class, exc)
            assert lost is not None
            return RolloutTrajectory(id=rollout_id, group_id=group_id, task_id=base.instance.task_id,
                                     seed=base.instance.seed, policy_version=request.policy_version,
                                     status="infra_error", mask_sample=True, attempts=retries + 1,
                                     failure=_failure(lost), error=ErrorRecord.of(lost),
                                     folder=str(folder), timings_ms=timings, **self._read(folder, request))
        finally:
            self.proxy.close(rollout_id)
            self.live.pop(rollout_id, None)
            writer.close()

    async def _attempt(self, request: RolloutRequest, base: Episode, ref: Any, rollout_id: str,
                       writer: TrajectoryWriter, recorder: ProxyRecorder, live: _Live,
                       timings: dict[str, float], *, final: bool) -> Episode:
        from cua.policy.backends.openai import OpenAIBackend
        from cua.policy.base import PolicyOptions
        from cua.policy.engine import ModelPolicy

        parent = base.handle
        if not isinstance(parent, ForkableHandle):
            raise BadRequest(f"{type(parent).__name__} cannot fork; group rollouts need forks")
        t = time.perf_counter()
        start = ref.model_dump(mode="json")
        try:
            handle = await parent.fork(ref, observe=self.settings.observe)
        except CuaError as exc:
            # The attempt is lost before its sandbox exists; it is on record all the same: it
            # starts at the group's start state (the parent's observation at the snapshot).
            lost = base.fork(parent, base.observation, writer=writer, start_snapshot=start)
            lost.finish(status="agent_error" if exc.fault == "agent" else "infra_error", error=ErrorRecord.of(exc),
                        last_attempt=final or exc.fault != "infra")
            raise
        finally:
            timings["env"] += (time.perf_counter() - t) * 1000
        live.handle = handle
        snapshots = writer.snapshots if isinstance(writer, SnapshotWriter) else None
        driven = handle if snapshots is None else SnapshottingHandle(handle, snapshots)
        ep = base.fork(driven, handle.observation, writer=writer, start_snapshot=start)
        kept = False
        spec = request.policy
        policy = ModelPolicy(OpenAIBackend(base_url=f"{self._proxy_url()}/proxy/{rollout_id}/v1", model=spec.model,
                                           api_key=self._proxy_token, max_retries=1), family=spec.family)
        options = PolicyOptions(temperature=spec.temperature, top_p=spec.top_p, max_tokens=spec.max_tokens,
                                history_images=spec.history_images, logprobs=True)
        agent = _ProxiedPolicy(PolicyAgent(policy, spec.model, options, model=spec.model, session_id=rollout_id,
                                           instruction=ep.instruction), recorder)
        try:
            t = time.perf_counter()
            try:
                await play(ep, agent, EpisodeContext(handle, ep.observation), progress=request.reward == "dense")
            finally:  # what the agent's turns did not take was the environment's
                timings["model"] += agent.model_ms
                timings["env"] += (time.perf_counter() - t) * 1000 - agent.policy_ms
            t = time.perf_counter()
            await ep.judge()
            timings["env"] += (time.perf_counter() - t) * 1000
            ep.finish()
            if snapshots is not None and writer.meta is not None:  # kept for branches from its steps
                self.sources.keep(writer.meta.id, handle, snapshots)
                kept = True
            return ep
        except CuaError as exc:
            if exc.fault == "infra":  # kept as a lost attempt; the caller retries or gives up
                ep.finish(status="infra_error", error=ErrorRecord.of(exc), last_attempt=final)
            else:
                ep.finish(status="agent_error", error=ErrorRecord.of(exc))
            raise
        except BaseException as exc:  # cancelled (the request went away) or a bug: the trajectory says so
            ep.finish(status="infra_error", error=ErrorRecord.of(exc))
            raise
        finally:
            live.handle = None
            await policy.aclose()
            if not kept:
                with contextlib.suppress(CuaError):
                    if snapshots is not None:
                        await snapshots.release(handle)
                    await handle.close()

    def _result(self, request: RolloutRequest, base: Episode, group_id: str, rollout_id: str, folder: Path,
                ep: Episode, attempts: int, timings: dict[str, float]) -> RolloutTrajectory:
        verdict = ep.verdict
        stored = self._read(folder, request)
        return RolloutTrajectory(
            id=rollout_id, group_id=group_id, task_id=base.instance.task_id, seed=base.instance.seed,
            policy_version=request.policy_version, status="completed", mask_sample=False,
            reward=verdict.score if verdict else None, passed=verdict.passed if verdict else None,
            attempts=attempts, failure=(stored.get("end") or {}).get("failure"), folder=str(folder),
            timings_ms={k: round(v, 3) for k, v in timings.items()}, **stored)

    def _read(self, folder: Path, request: RolloutRequest) -> dict[str, Any]:
        if not folder.exists():
            return {}
        traj = read_trajectory(folder)
        return {"meta": traj.meta.model_dump(mode="json") if traj.meta else None,
                "steps": [s.model_dump(mode="json") for s in traj.steps] if request.inline_steps else [],
                "end": traj.end.model_dump(mode="json") if traj.end else None}

    @staticmethod
    def _agent_info(spec: PolicyEndpoint) -> AgentInfo:
        return AgentInfo(name=spec.model, kind="policy", family=spec.family, model=spec.model,
                         settings={"base_url": spec.base_url, "temperature": spec.temperature,
                                   "top_p": spec.top_p, "max_tokens": spec.max_tokens})


class _ProxiedPolicy:
    """The rollout's agent: `PolicyAgent` over the rollout's route of the token proxy; each
    turn carries the tokens and logprobs of its model call as the proxy recorded them."""

    name = "policy"

    def __init__(self, agent: PolicyAgent, recorder: ProxyRecorder) -> None:
        self.agent, self.recorder = agent, recorder
        #: Milliseconds spent in turns, and in the model's calls (the proxy's measure).
        self.policy_ms = self.model_ms = 0.0

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        return None  # a fork continues the group's episode: the policy's session starts with its first turn

    async def turn(self, observation: Observation) -> AgentTurn:
        calls_before = len(self.recorder.calls)
        t = time.perf_counter()
        try:
            turn = await self.agent.turn(observation)
        finally:
            self.policy_ms += (time.perf_counter() - t) * 1000
        calls = self.recorder.since(calls_before)
        self.model_ms += sum(c.model_ms for c in calls)
        return turn.model_copy(update={"tokens": _turn_tokens(calls)})


def _failure(exc: BaseException) -> FailureClass:
    """A rollout's failure class: its typed error's (`CuaError.failure_class`), as the
    trajectory's end and its error record say, never a second reading."""
    return ErrorRecord.of(exc).failure


def _turn_tokens(calls: list[Any]) -> TokenTrace | None:
    """The tokens of a turn: its model call's (the last, when the backend retried)."""
    ok = [c for c in calls if c.status < 400]
    return ok[-1].tokens if ok else None

