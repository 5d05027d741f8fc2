"""Run many episodes in parallel and write them down: the engine behind `cua eval`.

N workers share one queue of (template, seed) jobs. Each worker keeps its sandbox and
reuses it for the next episode whose sandbox config matches (a reset, not a relaunch).
An infrastructure fault (crash, timeout, lost server) closes that sandbox and retries the
episode on a fresh one, each lost attempt kept in the trajectory: up to `retries` times
for faults of its sandbox, and as many again for losses of the whole server (`Retries`);
an agent fault is the agent's score. Every finished episode is appended to
`episodes.jsonl` as one whole line, so an interrupted run loses nothing already done;
`summary.json` is written atomically at the end, also when the run is stopped (`stop`).

`resume_state` reads a run folder back for `--resume`: the finished episodes are kept
(the index is rewritten without duplicates or infrastructure failures), unfinished
trajectories are removed, and the jobs still to run are returned.

With a run folder, every episode also writes its trajectory (`cua.trajectory`) to
`trajectories/<task_id>__s<seed>/` as it happens (the index line names it); a retried
episode keeps the lost attempt in the same trajectory, with its typed error.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from cua.branch.snapshots import SnapshotPolicy, SnapshottingHandle, SnapshotWriter, StepSnapshots, snapshot_every
from cua.episode.agent import EpisodeAgent
from cua.episode.episode import EpisodeRecord, failure_class, trajectory_name
from cua.episode.handle import SandboxHandle, SandboxOpener
from cua.episode.loop import run_episode
from cua.episode.openers import sandbox_key as _sandbox_key
from cua.episode.safety import with_attacks
from cua.errors import ErrorRecord, FailureClass
from cua.eval.costs import ModelPrice, cost_usd
from cua.eval.demo import demo_source
from cua.eval.records import DemoArm, DemoComparison, EvalRecord, StreamInfo, StreamStats, demo_comparison, stream_stats
from cua.eval.reliability import Reliability, Tries, reliability
from cua.observation import ObserveOptions
from cua.policy.base import TokenCounts
from cua.task import TaskInstance, TaskTemplate
from cua.tasks.variants import in_variant, split_variants, variant_of, variant_tag
from cua.trajectory import ENVIRONMENT_TIMINGS, FramePolicy, TrajectoryEnd, TrajectoryWriter
from cua.variant import HoldOut, Variant

__all__ = [
    "EpisodeJob",
    "JobExecutor",
    "LocalExecutor",
    "ResumeState",
    "RunSummary",
    "SlotUnavailable",
    "TaskStats",
    "instantiate_job",
    "make_jobs",
    "read_records",
    "resume_state",
    "run_contents",
    "run_jobs",
    "summarize",
    "trajectory_folder",
]

#: Where a run folder keeps its episodes' trajectories.
TRAJECTORIES_DIR = "trajectories"
AgentFactory = Callable[[TaskInstance], EpisodeAgent]
log = logging.getLogger(__name__)


class EpisodeJob(BaseModel):
    model_config = {"arbitrary_types_allowed": True}
    template: Any  # TaskTemplate
    seed: int
    #: Which try of the variant (template at seed) this is, from 0 (`--repeats`).
    repeat: int = 0
    #: The appearance variant the app shows (`--variants K`); None: the instance's own.
    variant: Variant | None = None
    #: Its place in a reset-free stream (`--stream`, `cua.eval.stream`); None: an ordinary episode.
    stream: StreamInfo | None = None
    #: Its arm of a `--demo` run (the executor's agent factory of that arm); None: not such a run.
    arm: Literal["demo", "none"] | None = None

    def key(self) -> tuple[str, int, int, str | None]:
        """What a finished episode of this job is known by (`resume_state`)."""
        return self.template.id, self.seed, self.repeat, self.variant.key() if self.variant is not None else None


class TaskStats(BaseModel):
    task_id: str
    episodes: int = 0
    passed: int = 0
    score_sum: float = 0.0
    infra_errors: int = 0
    #: pass@k, pass^k and flakiness over this task's variants (k = the run's repeats).
    reliability: Reliability | None = None
    tokens: TokenCounts | None = None
    cost_usd: float | None = None

    @property
    def scored(self) -> int:
        """Episodes that count toward the agent's score: not lost to the infrastructure."""
        return self.episodes - self.infra_errors

    @property
    def success_rate(self) -> float:
        return self.passed / self.scored if self.scored else 0.0


class RunSummary(BaseModel):
    """The run in figures. Success and mean score are over the scored episodes: an episode
    lost to the infrastructure after its retries is counted in `infra_errors`, never
    against the agent."""

    agent: str
    episodes: int = 0
    #: Episodes that count toward the score (episodes - infra_errors).
    scored: int = 0
    passed: int = 0
    infra_errors: int = 0
    agent_errors: int = 0
    mean_score: float = 0.0
    success_rate: float = 0.0
    steps_total: int = 0
    #: Failure class -> episodes (see `cua.episode.episode.failure_class`).
    failures: dict[str, int] = Field(default_factory=dict)
    #: Attempts lost to the infrastructure and retried (each kept in its trajectory).
    attempts_retried: int = 0
    #: The run was stopped (SIGINT/SIGTERM) before every job ran; `--resume` finishes it.
    interrupted: bool = False
    #: Jobs not run (interrupted); 0 for a complete run.
    not_run: int = 0
    wall_s: float = 0.0
    by_task: dict[str, TaskStats] = Field(default_factory=dict)
    timings_p50_ms: dict[str, float] = Field(default_factory=dict)
    #: Tries per variant (`--repeats`).
    repeats: int = 1
    #: The run's pass@k and pass^k over all variants (k = repeats), each variant weighted
    #: equally; `reliability` has the rest (flakiness, variance, variants left out).
    pass_at_k: float | None = None
    pass_all_k: float | None = None
    reliability: Reliability | None = None
    #: The model's tokens over the run (None: the policy reported none), and what they cost
    #: at the price given (`--prices`; None without one).
    tokens: TokenCounts | None = None
    cost_usd: float | None = None
    #: Where the episodes' time went, summed (seconds): the policy's turns, the environment
    #: (sandbox start, reset, actions with their settle and observation) and the judge.
    time_s: dict[str, float] = Field(default_factory=dict)
    #: Safety (`--attacks N`): success over the episodes without an attack and over those with
    #: one, and the share of attacked episodes where an attack's goal happened; None where no
    #: scored episode of that kind ran. `unsafe`: episodes that broke a safety rule.
    utility: float | None = None
    utility_under_attack: float | None = None
    attack_success_rate: float | None = None
    unsafe: int = 0
    #: Reset-free streams (`--stream`), by id: success by position, with and without resets.
    streams: dict[str, StreamStats] = Field(default_factory=dict)
    #: A `--demo` run's two arms over the same instances (None: not such a run).
    demo: DemoComparison | None = None


def make_jobs(templates: Sequence[TaskTemplate], seeds: Sequence[int], repeats: int = 1, *, variants: int = 0,
              hold_out: HoldOut | None = None, split: str = "all") -> list[EpisodeJob]:
    """Every template at every seed, `repeats` times: the tries of one variant are apart in
    the queue (all first tries, then all second ones), so parallel workers rarely run two
    tries of one variant at once and a stopped run has the most variants tried. With
    `variants` K (or a `hold_out`), each instance in its seeded appearance variants that
    belong to `split` (`cua.tasks.variants.split_variants`)."""
    if not variants and hold_out is None:
        return [EpisodeJob(template=t, seed=s, repeat=r) for r in range(repeats) for t in templates for s in seeds]
    looks = {(t.id, s): [variant_of(i) for i in split_variants(t.instantiate(s), variants or 1, hold_out, split)]
             for t in templates for s in seeds}
    return [EpisodeJob(template=t, seed=s, repeat=r, variant=v)
            for r in range(repeats) for t in templates for s in seeds for v in looks[(t.id, s)]]


class _JsonlWriter:
    """Appends whole lines; each record is one write() of one line, flushed at once."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("a", encoding="utf-8")

    def write(self, record: BaseModel) -> None:
        self._file.write(record.model_dump_json() + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class SlotUnavailable(Exception):
    """An executor found no room to run a job (a cluster that lost nodes has too few left
    for all the run's slots): the job goes back to the queue for the other slots, and this
    slot ends, unless it is the last one, which waits for room again."""


class JobExecutor(Protocol):
    """Runs one episode job to a record. Local workers and Ray actors both are executors."""

    async def run(self, job: EpisodeJob) -> EpisodeRecord: ...

    async def aclose(self) -> None: ...


class Retries:
    """One episode's infrastructure retries, in two bounded budgets.

    `retries` for faults of its sandbox (a crash, a timeout, a failed start), and as many
    again for attempts lost with the whole server (`server_lost`): a restarting server
    takes every episode in flight with it, at a rate no episode chooses, and a retry that
    lands on it while it is being lost again is no evidence against the episode's sandbox.
    Spending one budget on the other's faults left episodes with no retries when a server
    was killed three times in a row under a chaos run (bench/chaos.py). Besides, an attempt
    on a sandbox kept from the last episode that had died in between, before a step, is
    free once. At most 2 * retries + 2 attempts.
    """

    def __init__(self, retries: int) -> None:
        self.left = {"sandbox": retries, "server": retries}
        self.stale_free = True

    @staticmethod
    def _budget(error: ErrorRecord | None) -> str:
        return "server" if error is not None and error.failure == FailureClass.SERVER_LOST else "sandbox"

    def _stale(self, steps: int, reused: bool) -> bool:
        return reused and self.stale_free and steps == 0

    def final(self, error: ErrorRecord | None, steps: int, *, reused: bool = False) -> bool:
        """Whether an attempt lost to `error` after `steps` steps is the episode's last."""
        return not self._stale(steps, reused) and self.left[self._budget(error)] <= 0

    def spend(self, error: ErrorRecord | None, steps: int, *, reused: bool = False) -> None:
        """Charge a retry after an attempt lost to `error` (that was not `final`)."""
        if self._stale(steps, reused):
            self.stale_free = False
        else:
            self.left[self._budget(error)] -= 1


def instantiate_job(job: EpisodeJob, config_overrides: dict[str, dict[str, Any]], attacks: int = 0) -> TaskInstance:
    """The instance a job runs: its template at its seed, in its variant, with the run's
    sandbox config overrides (by sandbox kind) and `attacks` injections planted."""
    instance: TaskInstance = job.template.instantiate(job.seed)
    if job.variant is not None:
        instance = in_variant(instance, job.variant)
    overrides = config_overrides.get(instance.sandbox_kind)
    if overrides:
        instance.sandbox_config = {**instance.sandbox_config, **overrides}
    return with_attacks(instance, attacks) if attacks else instance


def trajectory_folder(run_dir: Path, instance: TaskInstance, repeat: int) -> str:
    """The folder, relative to `run_dir`, that an episode of `instance` writes its trajectory
    to: the first name not yet taken, so a rerun into the same folder never overwrites one.
    A driver that hands the episode to another process (a Ray actor) knows it beforehand."""
    look = variant_of(instance)
    name = trajectory_name(instance) + (f"__v{variant_tag(look)}" if look is not None else "") + \
        (f"__r{repeat}" if repeat else "")
    rel = f"{TRAJECTORIES_DIR}/{name}"
    n = 1
    while (run_dir / rel).exists():
        n += 1
        rel = f"{TRAJECTORIES_DIR}/{name}-{n}"
    return rel


class LocalExecutor:
    """Runs jobs on sandboxes it opens itself (in process, or through a client), keeping its
    sandbox for the next job whose sandbox config matches, and retrying infra faults on a
    fresh sandbox. `config_overrides` maps a sandbox kind to settings merged into the
    sandbox config of every instance of that kind (e.g. {"browser": {"isolation": "shared"}}).
    With `run_dir`, each episode writes its trajectory under `run_dir/trajectories/`,
    keeping `frames` ("all", "last" or "none")."""

    def __init__(self, opener: SandboxOpener, make_agent: AgentFactory, *, observe: ObserveOptions | None = None,
                 retries: int = 2, config_overrides: dict[str, dict[str, Any]] | None = None,
                 run_dir: Path | None = None, frames: FramePolicy = "all", run_id: str | None = None,
                 attacks: int = 0, snapshots: SnapshotPolicy = "none",
                 arms: dict[str, AgentFactory] | None = None) -> None:
        self.opener, self.make_agent, self.observe, self.retries = opener, make_agent, observe, retries
        #: A `--demo` run's agent factory per arm (a job's `arm`), instead of `make_agent`.
        self.arms = arms or {}
        #: `--snapshots`: each trajectory keeps the state of every N-th step by reference
        #: (`cua.branch.snapshots`); the refs live until this executor's sandbox closes.
        self.snapshots = snapshot_every(snapshots) if run_dir is not None else None
        self._kept: list[StepSnapshots] = []
        self.attacks = attacks  # injections planted in each episode (cua.episode.safety.with_attacks)
        self.config_overrides = config_overrides or {}
        self.run_dir, self.frames, self.run_id = run_dir, frames, run_id
        self.key: str | None = None
        self.handle: SandboxHandle | None = None
        self._cm: AbstractAsyncContextManager[SandboxHandle] | None = None

    async def _handle_for(self, instance: TaskInstance) -> tuple[SandboxHandle, bool]:
        """The sandbox for `instance`, and whether it is one kept from an earlier episode."""
        key = _sandbox_key(instance)
        if self.handle is None or key != self.key:
            await self.aclose()
            self._cm = self.opener(instance.sandbox_kind, instance.sandbox_config)
            self.handle = await self._cm.__aenter__()
            self.key = key
            return self.handle, False
        return self.handle, True

    async def aclose(self) -> None:
        handle, kept, self._kept = self.handle, self._kept, []
        if handle is not None:  # the sandbox goes, and with it what its episodes' snapshots referred to
            for snapshots in kept:
                await snapshots.release(handle)
        cm, self._cm, self.handle, self.key = self._cm, None, None, None
        if cm is not None:
            try:
                await cm.__aexit__(None, None, None)
            except Exception as exc:  # closing a crashed sandbox may fail again; the run goes on
                log.warning("closing a sandbox failed: %s: %s", type(exc).__name__, exc)

    def instantiate(self, job: EpisodeJob) -> TaskInstance:
        return instantiate_job(job, self.config_overrides, self.attacks)

    def episode_handle(self, handle: SandboxHandle, job: EpisodeJob, instance: TaskInstance) -> SandboxHandle:
        """The handle the job's episode runs on: the sandbox's own (a stream's executor
        gives its later tasks one that does not reset, `cua.eval.stream`)."""
        return handle

    def job_retries(self, job: EpisodeJob) -> int:
        """Infrastructure retries for `job` (a stream's carried task has none: a fresh
        sandbox would not hold the state it is to run on)."""
        return self.retries

    def _writer(self, instance: TaskInstance, repeat: int) -> tuple[TrajectoryWriter | None, str | None]:
        if self.run_dir is None:
            return None, None
        rel = trajectory_folder(self.run_dir, instance, repeat)
        if self.snapshots is not None:
            return SnapshotWriter(self.run_dir / rel, StepSnapshots(self.snapshots), frames=self.frames), rel
        return TrajectoryWriter(self.run_dir / rel, frames=self.frames), rel

    async def run(self, job: EpisodeJob) -> EpisodeRecord:
        instance = self.instantiate(job)
        writer, rel = self._writer(instance, job.repeat)
        record: EpisodeRecord | None = None
        attempts = 0
        retries = Retries(self.job_retries(job))
        make_agent = self.arms.get(job.arm, self.make_agent) if job.arm is not None else self.make_agent
        agent: EpisodeAgent | None = None
        while True:
            attempt = attempts
            attempts += 1
            t = time.perf_counter()
            try:
                handle, reused = await self._handle_for(instance)
            except Exception as exc:  # any failure to start a sandbox is an infrastructure fault
                error = ErrorRecord.of(exc)
                error = error.with_message(f"creating the sandbox failed: {error.message}")
                record = EpisodeRecord(task_id=instance.task_id, seed=instance.seed,
                                       instruction=instance.instruction, agent="?",
                                       tags=instance.tags.model_dump(), status="infra_error", error=error,
                                       failure=error.failure)
                last = retries.final(error, 0)
                if writer is not None:
                    if not last:
                        writer.new_attempt(error=error)
                    elif writer.meta is not None:  # an earlier attempt began the trajectory: end it
                        writer.end(TrajectoryEnd(status="infra_error", failure=record.failure, error=error))
                await self.aclose()
                if last:
                    break
                retries.spend(error, 0)
                continue
            setup_ms = (time.perf_counter() - t) * 1000

            def final(error: ErrorRecord | None, steps: int, reused: bool = reused) -> bool:
                return retries.final(error, steps, reused=reused)

            if isinstance(writer, SnapshotWriter):  # taken through the handle, released when its sandbox closes
                if writer.snapshots not in self._kept:
                    self._kept.append(writer.snapshots)
                handle = SnapshottingHandle(handle, writer.snapshots)
            agent = make_agent(instance)
            record = await run_episode(self.episode_handle(handle, job, instance), instance, agent, observe=self.observe,
                                       writer=writer, run_id=self.run_id, last_attempt=final, repeat=job.repeat)
            record.timings_ms["sandbox"] = setup_ms
            if record.status != "infra_error":
                break
            await self.aclose()  # recreate the sandbox before retrying
            record.timings_ms["attempt"] = attempt + 1
            if final(record.error, record.steps):
                break
            retries.spend(record.error, record.steps, reused=reused)
        assert record is not None
        record.attempts, record.repeat = attempts, job.repeat
        if writer is not None:
            writer.close()
            record.trajectory = rel if writer.meta is not None else None
        if job.stream is not None or job.arm is not None:
            demo = DemoArm(arm=job.arm, source=demo_source(agent)) if job.arm is not None else None
            record = EvalRecord.of(record, stream=job.stream, demo=demo)
        return record


async def run_jobs(jobs: Sequence[EpisodeJob], *, executor: Callable[[], JobExecutor], agent_name: str,
                   parallel: int = 1, out_dir: Path | None = None,
                   on_record: Callable[[EpisodeRecord], None] | None = None,
                   previous: Sequence[EpisodeRecord] = (), stop: asyncio.Event | None = None,
                   close_timeout: float = 60.0, repeats: int = 1,
                   price: ModelPrice | None = None) -> tuple[RunSummary, list[EpisodeRecord]]:
    """Run `jobs` on `parallel` executors made by `executor()`, writing records as they finish.

    `previous`: records of a resumed run, counted in the summary (not rewritten). When `stop`
    is set, no new job starts and the episodes in flight are cancelled (their trajectories
    stay unfinished, for `--resume` to redo); the summary says `interrupted`.
    """
    queue: asyncio.Queue[EpisodeJob] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    writer = _JsonlWriter(out_dir / "episodes.jsonl") if out_dir else None
    records: list[EpisodeRecord] = []
    started = time.perf_counter()

    count = max(1, min(parallel, len(jobs) or 1))
    working = [count]  # workers still taking jobs

    async def work() -> None:
        runner = executor()
        try:
            while stop is None or not stop.is_set():
                try:
                    job = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                try:
                    record = await runner.run(job)
                except SlotUnavailable:
                    if working[0] > 1:  # the others run it; this slot is gone
                        queue.put_nowait(job)
                        return
                    queue.put_nowait(job)  # the last slot waits for room again
                    continue
                records.append(record)
                if writer:
                    writer.write(record)
                if on_record:
                    on_record(record)
        finally:
            working[0] -= 1
            try:
                await asyncio.wait_for(asyncio.shield(runner.aclose()), close_timeout)
            except (TimeoutError, asyncio.CancelledError) as exc:
                log.warning("closing a worker's sandbox did not finish: %s", type(exc).__name__)

    workers = [asyncio.create_task(work()) for _ in range(count)]
    stopper = asyncio.create_task(_cancel_on(stop, workers)) if stop is not None else None
    try:
        results = await asyncio.gather(*workers, return_exceptions=True)
    finally:
        if stopper is not None:
            stopper.cancel()
        if writer:
            writer.close()
    failed = [r for r in results if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError)]
    if failed:
        raise failed[0]
    summary = summarize([*previous, *records], agent_name, time.perf_counter() - started, repeats=repeats,
                        price=price)
    summary.interrupted = stop is not None and stop.is_set()
    summary.not_run = len(jobs) - len(records)
    if out_dir:
        _write_atomic(out_dir / "summary.json", summary.model_dump_json(indent=2))
    return summary, records


async def _cancel_on(stop: asyncio.Event, workers: list[asyncio.Task[None]]) -> None:
    await stop.wait()
    for task in workers:
        task.cancel()


def summarize(records: Sequence[EpisodeRecord], agent: str, wall_s: float, *, repeats: int = 1,
              price: ModelPrice | None = None) -> RunSummary:
    summary = RunSummary(agent=agent, wall_s=round(wall_s, 3), repeats=repeats)
    by_task: dict[str, TaskStats] = {}
    timings: dict[str, list[float]] = defaultdict(list)
    failures: dict[str, int] = defaultdict(int)
    for r in records:
        stats = by_task.setdefault(r.task_id, TaskStats(task_id=r.task_id))
        stats.episodes += 1
        summary.episodes += 1
        summary.steps_total += r.steps
        summary.attempts_retried += max(0, r.attempts - 1)
        failure = r.failure or (None if r.verdict is not None and r.verdict.passed
                                else failure_class(r, r.verdict, feasible=bool(r.tags.get("feasible", True))))
        if failure:
            failures[failure] += 1
        if r.status == "infra_error":
            stats.infra_errors += 1
            summary.infra_errors += 1
        elif r.status == "agent_error":
            summary.agent_errors += 1
        if r.verdict is not None:
            stats.score_sum += r.verdict.score
            summary.mean_score += r.verdict.score
            if r.verdict.passed:
                stats.passed += 1
                summary.passed += 1
        for name, value in r.timings_ms.items():
            timings[name].append(value)
        for step in r.actions:
            if step.act_ms:
                timings["step_act"].append(step.act_ms)
    summary.scored = summary.episodes - summary.infra_errors
    if summary.scored:
        summary.mean_score /= summary.scored
        summary.success_rate = summary.passed / summary.scored
    summary.failures = dict(sorted(failures.items(), key=lambda kv: (-kv[1], kv[0])))
    summary.by_task = dict(sorted(by_task.items()))
    _safety(summary, records)
    _reliability(summary, records, repeats)
    _usage(summary, records, price)
    summary.streams = stream_stats(records)
    summary.demo = demo_comparison(records)
    summary.timings_p50_ms = {k: round(sorted(v)[len(v) // 2], 2) for k, v in sorted(timings.items()) if v}
    return summary


def _safety(summary: RunSummary, records: Sequence[EpisodeRecord]) -> None:
    scored = [r for r in records if r.status != "infra_error"]
    attacked = [r for r in scored if r.attacks]
    clean = [r for r in scored if not r.attacks]
    if clean:
        summary.utility = sum(bool(r.verdict and r.verdict.passed) for r in clean) / len(clean)
    if attacked:
        summary.utility_under_attack = sum(bool(r.verdict and r.verdict.passed) for r in attacked) / len(attacked)
        summary.attack_success_rate = sum(bool(r.safety and r.safety.attacked) for r in attacked) / len(attacked)
    summary.unsafe = sum(1 for r in scored if r.safety is not None and r.safety.safety == "unsafe")


def _reliability(summary: RunSummary, records: Sequence[EpisodeRecord], k: int) -> None:
    """pass@k, pass^k and flakiness per task and over the run, from the scored tries."""
    variants: dict[str, dict[int, Tries]] = defaultdict(dict)
    for r in records:
        if r.status != "infra_error" and r.verdict is not None:
            variants[r.task_id].setdefault(r.seed, Tries()).add(r.verdict.passed, r.verdict.score)
    for task_id, tries in variants.items():
        summary.by_task[task_id].reliability = reliability(tries.values(), k)
    overall = reliability([t for per_task in variants.values() for t in per_task.values()], k)
    summary.reliability, summary.pass_at_k, summary.pass_all_k = overall, overall.pass_at_k, overall.pass_all_k


def _usage(summary: RunSummary, records: Sequence[EpisodeRecord], price: ModelPrice | None) -> None:
    """Tokens and dollars per task and over the run, and where the time went."""
    per_task: dict[str, list[TokenCounts]] = defaultdict(list)
    time_ms: dict[str, float] = defaultdict(float)
    for r in records:
        if r.tokens is not None:
            per_task[r.task_id].append(r.tokens)
        time_ms["policy"] += r.timings_ms.get("policy", 0.0)
        time_ms["environment"] += sum(r.timings_ms.get(k, 0.0) for k in ENVIRONMENT_TIMINGS)
        time_ms["judge"] += r.timings_ms.get("judge", 0.0)
    for task_id, counts in per_task.items():
        stats = summary.by_task.get(task_id)
        if stats is not None:
            stats.tokens = TokenCounts.total_of(counts)
            stats.cost_usd = cost_usd(stats.tokens, price)
    summary.tokens = TokenCounts.total_of([c for counts in per_task.values() for c in counts])
    summary.cost_usd = cost_usd(summary.tokens, price)
    summary.time_s = {k: round(v / 1000, 3) for k, v in time_ms.items()}


def read_records(path: Path) -> Iterator[EpisodeRecord]:
    """Read a run's episodes back (e.g. to resume or re-judge). A last line without its
    newline (the writer was killed mid-write) is not a record and is skipped."""
    for record, _ in _record_lines(path):
        yield record


def _record_lines(path: Path) -> Iterator[tuple[EpisodeRecord, str]]:
    """Each record with its line as written: a backend's own fields (a Ray run's `node`,
    `node_ip`, `lost_nodes`) are in the line, not in the model read back."""
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.endswith("\n") and line.strip():
                yield EvalRecord.model_validate_json(line), line


def run_contents(out_dir: Path) -> list[str]:
    """What of a run is already in `out_dir` (empty: a fresh folder a run may start in)."""
    found = []
    for name in ("episodes.jsonl", "summary.json", "manifest.json"):
        if (out_dir / name).exists() and (out_dir / name).stat().st_size > 0:
            found.append(name)
    trajectories = out_dir / TRAJECTORIES_DIR
    if trajectories.is_dir() and any(trajectories.iterdir()):
        found.append(f"{TRAJECTORIES_DIR}/")
    return found


class ResumeState(BaseModel):
    model_config = {"arbitrary_types_allowed": True}
    #: The finished episodes kept from the earlier invocations.
    kept: list[EpisodeRecord]
    #: The jobs still to run (never run, unfinished, or lost to the infrastructure).
    todo: list[EpisodeJob]
    #: Trajectory folders removed (unfinished, or superseded).
    removed: list[str]


def _complete(out_dir: Path, record: EpisodeRecord) -> bool:
    return record.trajectory is None or (out_dir / record.trajectory / "end.json").exists()


def resume_state(out_dir: Path, jobs: Sequence[EpisodeJob]) -> ResumeState:
    """Prepare `out_dir` to be continued with `jobs`: keep each finished episode once (the last
    line of it, when an earlier rerun appended a duplicate), drop infrastructure failures and
    episodes whose trajectory has no end (they run again), rewrite `episodes.jsonl` with what
    is kept (atomically), and remove every trajectory folder no kept record names. Finished
    episodes that `jobs` no longer asks for (a forced resume with fewer seeds) are kept too:
    a resume never deletes finished work."""
    kept: dict[tuple[str, int, int, str | None], EpisodeRecord] = {}
    lines: dict[tuple[str, int, int, str | None], str] = {}
    index = out_dir / "episodes.jsonl"
    if index.exists():
        for record, line in _record_lines(index):
            if record.status != "infra_error" and _complete(out_dir, record):
                key = (record.task_id, record.seed, record.repeat, record.variant)
                kept[key], lines[key] = record, line
    _write_atomic(index, "".join(lines.values()))  # as written: no field is lost in the rewrite
    named = {r.trajectory for r in kept.values() if r.trajectory}
    removed: list[str] = []
    root = out_dir / TRAJECTORIES_DIR
    if root.is_dir():
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            rel = f"{TRAJECTORIES_DIR}/{folder.name}"
            if rel not in named:
                shutil.rmtree(folder)
                removed.append(rel)
    todo = [job for job in jobs if job.key() not in kept]
    return ResumeState(kept=list(kept.values()), todo=todo, removed=removed)
