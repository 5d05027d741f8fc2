"""Reset-free eval (`cua eval --stream`): an ordered list of tasks in one sandbox, each judged in turn.

The first task of a stream resets the sandbox as usual. Every later task runs its own
`Episode` on a `CarriedHandle`: a handle whose `reset`/`reset_query` do not reset the app but
observe (and read the judge's queries) on the state the earlier tasks left, so the episode's
initial reads are that state and its judge diffs against it. A task whose start URL differs
from the task before's is taken there as its first observation, through the sandbox's own
navigate action (a browser's `goto`); a kind without one starts where the last task left.

Tasks in one stream share their sandbox config (kind, apps, services, reset seed): a stream
that mixes them is refused (`StreamError`, naming the tasks), since no one sandbox could
hold them. A task lost to the infrastructure breaks the stream: the state the later tasks
were to start from is gone, so they are recorded as lost, not run on a fresh sandbox.

Each task's record says its stream's id, its position and whether its state was carried
(`cua.eval.records.StreamInfo`); with `--stream-resets` the same tasks also run after their
own resets, and the summary gives success by position with and without resets.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from cua.actions import Goto
from cua.branch.forwarding import ForwardingHandle
from cua.episode.episode import EpisodeRecord
from cua.episode.handle import SandboxHandle
from cua.episode.openers import sandbox_key
from cua.errors import BadRequest, ErrorRecord, InternalError
from cua.eval.records import EvalRecord, StreamInfo
from cua.eval.runner import EpisodeJob, LocalExecutor, instantiate_job
from cua.observation import Observation, ObserveOptions
from cua.state import StateQuery, StateResult
from cua.task import TaskInstance, TaskTemplate

__all__ = ["CarriedHandle", "StreamError", "StreamExecutor", "check_stream", "parse_stream", "stream_id",
           "stream_jobs"]


class StreamError(BadRequest):
    """A stream that cannot run: a line that names no task, tasks that cannot share one
    sandbox, or options a stream cannot honour. The user's to fix; a retry does not help."""


#: The navigate action of each sandbox kind that has one: how a later task reaches its start URL.
NAVIGATE: dict[str, type[Goto]] = {"browser": Goto}


def parse_stream(path: Path, templates: Sequence[TaskTemplate], default_seed: int) -> list[tuple[TaskTemplate, int]]:
    """The tasks a stream file names, in order: one `TASK_ID[@SEED]` a line (blank lines and
    `#` comments skipped). A task id is a template's (`todo.rename@1`, or `todo.rename` for
    its highest version) among `templates` (the ones the command line selected), or any
    registered one; `@SEED` after it picks the seed (default `default_seed`)."""
    from cua.tasks.registry import get_template

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StreamError(f"--stream {path}: cannot read it ({type(exc).__name__}: {exc.strerror or exc})",
                          details={"stream": str(path)}) from None
    known = {t.id: t for t in templates}
    for t in templates:  # a bare id names the highest version selected
        bare = t.id.rsplit("@", 1)[0]
        if bare not in known or int(t.id.rsplit("@", 1)[1]) > int(known[bare].id.rsplit("@", 1)[1]):
            known[bare] = t

    def lookup(name: str) -> TaskTemplate | None:
        if name in known:
            return known[name]
        try:
            found: TaskTemplate = get_template(name)
        except KeyError:
            return None
        return found

    tasks: list[tuple[TaskTemplate, int]] = []
    bad: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        template, seed = lookup(name), default_seed
        head, sep, tail = name.rpartition("@")
        if template is None and sep and tail.isdigit():
            template, seed = lookup(head), int(tail)
        if template is None:
            bad.append(f"line {number}: {name!r}")
        else:
            tasks.append((template, seed))
    if bad:
        raise StreamError(f"--stream {path}: no such task: {'; '.join(bad)} (a line is TASK_ID or TASK_ID@SEED, "
                          "e.g. todo.rename@1@3)", details={"stream": str(path), "lines": bad})
    if not tasks:
        raise StreamError(f"--stream {path}: names no task", details={"stream": str(path)})
    return tasks


def stream_id(tasks: Sequence[tuple[str, int]]) -> str:
    """A stream's id: the same tasks in the same order always get the same one."""
    text = "\n".join(f"{task_id}@{seed}" for task_id, seed in tasks)
    return "stream-" + hashlib.sha256(text.encode()).hexdigest()[:10]


def check_stream(instances: Sequence[TaskInstance]) -> None:
    """Refuse a stream whose tasks cannot share one sandbox: another kind, other apps or
    services, or another reset seed than the first task's (`StreamError` naming them)."""
    if not instances:
        raise StreamError("--stream: no tasks to run")
    first = instances[0]
    key, seed = sandbox_key(first), first.reset_seed
    odd = [f"{i.task_id}@{i.seed} (position {n})" for n, i in enumerate(instances)
           if sandbox_key(i) != key or i.reset_seed != seed]
    if odd:
        raise StreamError(f"--stream: these tasks do not share the first task's sandbox ({first.task_id}@{first.seed}: "
                          f"kind {first.sandbox_kind}, its apps and services, reset seed {seed}), so one sandbox "
                          f"cannot run them without a reset: {', '.join(odd)}",
                          details={"tasks": odd, "first": f"{first.task_id}@{first.seed}"})
    for n, i in enumerate(instances):
        if i.attacks:
            raise StreamError(f"--stream: {i.task_id}@{i.seed} (position {n}) plants attacks; a stream does not")


def stream_jobs(tasks: Sequence[tuple[TaskTemplate, int]], *, resets: bool = False) -> list[EpisodeJob]:
    """The jobs of one stream, in order (the carried ones), then with `resets` the same tasks
    each after its own reset: run in this order by one worker (`StreamExecutor`)."""
    sid = stream_id([(t.id, s) for t, s in tasks])
    carried = [EpisodeJob(template=t, seed=s, stream=StreamInfo(id=sid, position=n, length=len(tasks)))
               for n, (t, s) in enumerate(tasks)]
    reset = [EpisodeJob(template=t, seed=s, stream=StreamInfo(id=sid, position=n, length=len(tasks), carried=False))
             for n, (t, s) in enumerate(tasks)] if resets else []
    return carried + reset


def _absolute(start_url: str, base: str | None) -> str:
    """A start URL as a navigate action takes it: a path is resolved against the page the
    stream's first task started on (its app's address)."""
    if start_url.startswith("/") and base and urlsplit(base).scheme in ("http", "https"):
        return urljoin(base, start_url)
    return start_url


class CarriedHandle(ForwardingHandle):
    """A sandbox handle for a stream's later task: `reset` and `reset_query` keep the app as
    the earlier tasks left it and observe it (going to the task's start URL first, when it
    differs from the last task's); everything else is the sandbox's own."""

    def __init__(self, inner: SandboxHandle, *, navigate_to: str | None = None) -> None:
        super().__init__(inner)
        #: Where the first observation is taken (None: where the last task left the sandbox).
        self.navigate_to = navigate_to

    async def _carried(self, observe: ObserveOptions | None) -> Observation:
        if self.navigate_to is not None:
            obs = await self.inner.act(Goto(url=self.navigate_to), observe=observe)
            if obs.error is not None:
                raise InternalError(f"the stream could not take its next task to {self.navigate_to}: "
                                    f"{obs.error.message}", details={"url": self.navigate_to})
            return obs
        return await self.inner.observe(observe)

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation:
        """No reset: the carried state, observed (the seed and options are the stream's first task's)."""
        return await self._carried(observe)

    async def reset_query(self, queries: Sequence[StateQuery], *, seed: int | None = None,
                          options: dict[str, Any] | None = None, observe: ObserveOptions | None = None
                          ) -> tuple[Observation, list[StateResult]]:
        """No reset: the carried state, observed, and `queries` read on it."""
        obs = await self._carried(observe)
        return obs, await self.inner.query(list(queries)) if queries else []

    async def close(self) -> None:
        """The stream's sandbox outlives its tasks: its executor closes it."""


class StreamExecutor(LocalExecutor):
    """Runs a stream's jobs in order on one sandbox (`stream_jobs`: one worker). The first
    task, and every task of the comparison arm, runs as an ordinary episode (a reset, its
    retries); each later task of the stream runs on a `CarriedHandle` of the same sandbox,
    without retries. Once a carried task is lost to the infrastructure, the stream's later
    tasks are recorded as lost too (their state is gone), not run."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        #: The stream's start URL so far and the page its first task started on, by stream id.
        self._start: dict[str, tuple[str | None, str | None]] = {}
        #: Streams whose sandbox was lost, and where.
        self._broken: dict[str, int] = {}

    def _carried(self, job: EpisodeJob) -> bool:
        return job.stream is not None and job.stream.carried and job.stream.position > 0

    def job_retries(self, job: EpisodeJob) -> int:
        return 0 if self._carried(job) else self.retries

    def episode_handle(self, handle: SandboxHandle, job: EpisodeJob, instance: TaskInstance) -> SandboxHandle:
        if job.stream is None or not job.stream.carried:
            return handle
        start_url = instance.sandbox_config.get("start_url")
        if job.stream.position == 0:
            self._start[job.stream.id] = (start_url, None)
            return handle
        last, base = self._start.get(job.stream.id, (None, None))
        self._start[job.stream.id] = (last if start_url is None else start_url, base)
        navigate = start_url is not None and start_url != last and instance.sandbox_kind in NAVIGATE
        return CarriedHandle(handle, navigate_to=_absolute(str(start_url), base) if navigate else None)

    async def run(self, job: EpisodeJob) -> EpisodeRecord:
        stream = job.stream
        if stream is not None and stream.carried and stream.id in self._broken:
            return self._lost(job, self._broken[stream.id])
        if self._carried(job) and self.handle is None:  # the sandbox closed under an earlier task
            self._broken[stream.id] = stream.position - 1  # type: ignore[union-attr]
            return self._lost(job, stream.position - 1)  # type: ignore[union-attr]
        record = await super().run(job)
        if stream is not None and stream.carried:
            if stream.position == 0 and self.handle is not None:
                last, _ = self._start.get(stream.id, (None, None))
                self._start[stream.id] = (last, self.handle.observation.url)
            if record.status == "infra_error":
                self._broken[stream.id] = stream.position
        return record

    def _lost(self, job: EpisodeJob, at: int) -> EvalRecord:
        instance = instantiate_job(job, self.config_overrides)
        error = ErrorRecord.of(InternalError(f"the stream's sandbox was lost at position {at}: the state this task "
                                             "was to start from is gone, so it was not run",
                                             details={"lost_at": at}))
        return EvalRecord(task_id=instance.task_id, seed=instance.seed, instruction=instance.instruction, agent="?",
                          tags=instance.tags.model_dump(), status="infra_error", error=error, failure=error.failure,
                          attempts=0, stream=job.stream)
