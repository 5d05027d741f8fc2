"""The queue of demonstrations to collect: (task template, seed) jobs shared by every station.

A job is taken by one person at a time. It is done when a demonstration is kept (it
passed, or `keep="all"`); a failed one (with `keep="passing"`) or a discarded one goes
back to the queue for another try, and a job that failed `max_attempts` times is given
up (listed, never silently dropped). A demonstration lost to its sandbox crashing is not
the person's failure: its job goes back first in line without counting an attempt, and is
given up only when its sandbox crashed `max_attempts` times (a task that cannot run). The
queue is finished when no job waits and none is being demonstrated.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Job", "KeepPolicy", "RecordQueue"]

KeepPolicy = Literal["passing", "all"]


@dataclass
class Job:
    template: Any
    seed: int
    attempts: int = 0
    #: Demonstrations of it lost to a sandbox crash (the infrastructure's, not an attempt).
    crashes: int = 0

    @property
    def task_id(self) -> str:
        return str(self.template.id)

    @property
    def name(self) -> str:
        safe = "".join(c if c.isalnum() or c in "._@-" else "_" for c in self.task_id)
        return f"{safe}__s{self.seed}"


class RecordQueue:
    def __init__(self, jobs: Sequence[Job], *, keep: KeepPolicy = "passing", max_attempts: int = 3) -> None:
        self.keep: KeepPolicy = keep
        self.max_attempts = max_attempts
        self.total = len(jobs)
        self._waiting: deque[Job] = deque(jobs)
        self.active: dict[str, Job] = {}
        self.kept: list[Job] = []
        self.given_up: list[Job] = []
        self.discarded = 0
        self.failed = 0
        self.crashed = 0
        self.changed = asyncio.Event()
        self.finished = asyncio.Event()
        if not jobs:
            self.finished.set()

    def take(self, station: str) -> Job | None:
        """The next job for `station`, or None when none waits (others may still come back)."""
        if not self._waiting:
            return None
        job = self._waiting.popleft()
        self.active[station] = job
        self._changed()
        return job

    def kept_one(self, station: str) -> None:
        self.kept.append(self.active.pop(station))
        self._changed()

    def failed_one(self, station: str) -> bool:
        """A demonstration that did not pass; True when its job goes back for another try."""
        job = self.active.pop(station)
        self.failed += 1
        job.attempts += 1
        again = job.attempts < self.max_attempts
        if again:
            self._waiting.append(job)
        else:
            self.given_up.append(job)
        self._changed()
        return again

    def discarded_one(self, station: str, *, redo: bool = False) -> None:
        """Drop the station's demonstration; `redo`: the same station takes the job again now."""
        job = self.active.pop(station)
        self.discarded += 1
        if redo:
            self.active[station] = job
        else:
            self._waiting.append(job)
        self._changed()

    def crashed_one(self, station: str) -> bool:
        """The station's sandbox crashed; True when its job goes back (first in line) for another try."""
        job = self.active.pop(station)
        self.crashed += 1
        job.crashes += 1
        again = job.crashes < self.max_attempts
        if again:
            self._waiting.appendleft(job)
        else:
            self.given_up.append(job)
        self._changed()
        return again

    def release(self, station: str) -> None:
        """A station went away mid-demonstration: its job waits for someone else (first in line)."""
        job = self.active.pop(station, None)
        if job is not None:
            self._waiting.appendleft(job)
            self._changed()

    def _changed(self) -> None:
        if not self._waiting and not self.active:
            self.finished.set()
        self.changed.set()
        self.changed = asyncio.Event()

    def progress(self) -> dict[str, Any]:
        return {"total": self.total, "kept": len(self.kept), "waiting": len(self._waiting),
                "recording": len(self.active), "failed": self.failed, "discarded": self.discarded,
                "crashed": self.crashed, "given_up": len(self.given_up)}
