"""What the report shows, computed from a run folder: one row per episode, the breakdowns,
the failure taxonomy, the timing split, and the per-task delta between two runs.

It reads only the run's files (the trajectory format, `episodes.jsonl`, `summary.json`,
`manifest.json`), never the code that wrote them, so a report can be made of a run from
another machine or an older cua, and of a run still in progress (a trajectory without
`end.json` is shown as running).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from pydantic import ValidationError

from cua.errors import ErrorRecord, FailureClass
from cua.trajectory import END, META, STEPS, Trajectory, find_trajectories, read_trajectory

__all__ = [
    "EpisodeRow",
    "RowCache",
    "RunData",
    "TaskDelta",
    "compare_runs",
    "episode_key",
    "failure_counts",
    "load_run",
    "success_by",
    "timing_split",
    "trajectory_signature",
]

#: The status of an episode lost to the infrastructure (after its retries): not scored.
INFRA_STATUS = "infra_error"
#: Per-step timing categories: what `StepLine.timings_ms` names go into each.
TIMING_GROUPS: dict[str, tuple[str, ...]] = {
    "policy": ("policy",),
    "environment": ("act", "settle"),
    "judge": ("judge",),
}


def episode_key(relative: str) -> str:
    """A file-name-safe id for a trajectory folder's path relative to its run."""
    return re.sub(r"[^A-Za-z0-9_.@-]+", "_", relative).strip("_") or "episode"


@dataclass
class EpisodeRow:
    """One episode as the report's tables see it (from its trajectory, its index line, or both)."""

    key: str
    task_id: str
    seed: int
    status: str  # completed | agent_error | infra_error | running
    passed: bool
    score: float | None
    failure: FailureClass | None
    steps: int
    attempts: int
    tags: dict[str, Any]
    #: Summed per-step milliseconds per timing group (policy, environment, judge).
    timing_ms: dict[str, float]
    trajectory: Path | None
    record: dict[str, Any] | None = None

    @property
    def suite(self) -> str:
        return self.task_id.split(".", 1)[0]

    @property
    def scored(self) -> bool:
        """Counts toward success rates: finished, and not lost to the infrastructure."""
        return self.status not in (INFRA_STATUS, "running")

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "task_id": self.task_id, "seed": self.seed, "suite": self.suite,
                "status": self.status, "passed": self.passed, "score": self.score, "failure": self.failure,
                "steps": self.steps, "attempts": self.attempts, "tags": self.tags, "timing_ms": self.timing_ms,
                "has_trajectory": self.trajectory is not None}


@dataclass
class RunData:
    folder: Path
    rows: list[EpisodeRow]
    manifest: dict[str, Any] | None
    summary: dict[str, Any] | None
    #: Trajectories or index lines that could not be read, with why.
    problems: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.folder.resolve().name

    def trajectory(self, row: EpisodeRow) -> Trajectory | None:
        return read_trajectory(row.trajectory) if row.trajectory is not None else None


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _index_lines(run: Path) -> Iterator[dict[str, Any]]:
    path = run / "episodes.jsonl"
    if not path.exists():
        return
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.endswith("\n") or not line.strip():
                continue  # a torn last line: the writer was killed mid-write
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield record


def derived_failure(status: str, passed: bool, error: ErrorRecord | None, truncated: bool) -> FailureClass | None:
    """The failure class of a record written before records carried one."""
    if passed or status == "running":
        return None
    if status == INFRA_STATUS:
        return error.failure if error is not None else FailureClass.INTERNAL
    if status == "agent_error":
        return error.failure if error is not None else FailureClass.AGENT_ERROR
    return FailureClass.STEP_LIMIT if truncated else FailureClass.JUDGED_WRONG


def _stored_failure(value: object) -> FailureClass | None:
    """An index line's failure class; None when it names none this version knows (the
    caller then derives it)."""
    return FailureClass(value) if isinstance(value, str) and value in _FAILURE_NAMES else None


_FAILURE_NAMES = frozenset(f.value for f in FailureClass)


def _stored_error(value: object) -> ErrorRecord | None:
    """An index line's error as any version wrote it; None when there is none, or it is unreadable."""
    if value is None:
        return None
    try:
        return ErrorRecord.model_validate(value)
    except ValidationError:
        return None


def _sum_timings(steps: Iterable[Any]) -> dict[str, float]:
    out = dict.fromkeys(TIMING_GROUPS, 0.0)
    for step in steps:
        timings = step.timings_ms if hasattr(step, "timings_ms") else step
        for group, names in TIMING_GROUPS.items():
            out[group] += sum(float(timings.get(n) or 0.0) for n in names)
    return {k: round(v, 2) for k, v in out.items()}


def _row_from_trajectory(run: Path, folder: Path, traj: Trajectory, record: dict[str, Any] | None) -> EpisodeRow:
    meta, end = traj.meta, traj.end
    assert meta is not None
    verdict = end.verdict if end is not None else None
    passed = bool(verdict and verdict.passed)
    status = end.status if end is not None else "running"
    failure = end.failure if end is not None else None
    if failure is None and record is not None:
        failure = _stored_failure(record.get("failure"))
    if failure is None and end is not None:
        failure = derived_failure(status, passed, end.error, end.truncated)
    timing = _sum_timings(traj.steps)
    if end is not None:  # the final judge runs after the last step
        timing["judge"] = round(timing["judge"] + float(end.timings_ms.get("judge") or 0.0), 2)
    relative = folder.relative_to(run).as_posix() if folder != run else folder.name
    return EpisodeRow(key=episode_key(relative.removeprefix("trajectories/")),
                      task_id=meta.task_id, seed=meta.seed, status=status, passed=passed,
                      score=verdict.score if verdict is not None else None, failure=failure,
                      steps=len(traj.steps), attempts=(end.attempt if end is not None else traj.attempt) + 1,
                      tags=dict(meta.tags), timing_ms=timing, trajectory=folder, record=record)


def _row_from_record(record: dict[str, Any], index: int) -> EpisodeRow | None:
    """An index line with no readable trajectory (a run made before trajectories, or frames off)."""
    try:
        task_id, seed = str(record["task_id"]), int(record["seed"])
    except (KeyError, TypeError, ValueError):
        return None
    verdict = record.get("verdict") or {}
    passed = bool(verdict.get("passed"))
    status = str(record.get("status") or "completed")
    failure = _stored_failure(record.get("failure")) or derived_failure(status, passed, _stored_error(record.get("error")),
                                                        bool(record.get("truncated")))
    steps = record.get("actions") or []
    timing = _sum_timings({"policy": s.get("policy_ms"), "act": s.get("act_ms"), "settle": s.get("settle_ms")}
                          for s in steps if isinstance(s, dict))
    timing["judge"] = round(float((record.get("timings_ms") or {}).get("judge") or 0.0), 2)
    return EpisodeRow(key=episode_key(f"{task_id}-s{seed}-{index}"), task_id=task_id, seed=seed, status=status,
                      passed=passed, score=verdict.get("score"), failure=failure, steps=int(record.get("steps") or 0),
                      attempts=int((record.get("timings_ms") or {}).get("attempt") or 1),
                      tags=dict(record.get("tags") or {}), timing_ms=timing, trajectory=None, record=record)


def trajectory_signature(folder: Path) -> list[int]:
    """Changes whenever the producer writes to the trajectory (its files' mtimes and sizes)."""
    out: list[int] = []
    for name in (META, STEPS, END):
        try:
            st = (folder / name).stat()
        except FileNotFoundError:
            out += [0, 0]
        else:
            out += [st.st_mtime_ns, st.st_size]
    return out


#: A row already read, by trajectory folder: (signature, its index line, the row).
RowCache = dict[str, tuple[list[int], str, "EpisodeRow"]]


def load_run(folder: str | Path, cache: RowCache | None = None) -> RunData:
    """Read a run folder (or a folder of trajectories with no index) into report rows.
    With `cache`, a trajectory unchanged since the last call is not read again."""
    run = Path(folder)
    if not run.is_dir():
        raise FileNotFoundError(f"no run folder at {run}")
    data = RunData(folder=run, rows=[], manifest=_read_json(run / "manifest.json"),
                   summary=_read_json(run / "summary.json"))
    records = list(_index_lines(run))
    by_path = {str(r["trajectory"]): r for r in records if r.get("trajectory")}
    seen: set[str] = set()
    for path in find_trajectories(run):
        relative = path.relative_to(run).as_posix() if path != run else "."
        record = by_path.get(relative)
        signature = trajectory_signature(path)
        line = json.dumps(record, sort_keys=True, default=str)
        hit = cache.get(str(path)) if cache is not None else None
        if hit is not None and hit[0] == signature and hit[1] == line:
            seen.add(relative)
            data.rows.append(hit[2])
            continue
        try:
            traj = read_trajectory(path)
        except (ValidationError, ValueError, OSError) as exc:
            data.problems.append(f"{relative}: unreadable: {str(exc).splitlines()[0]}")
            continue
        if traj.meta is None:
            data.problems.append(f"{relative}: no meta.json (the episode had not reset yet)")
            continue
        seen.add(relative)
        row = _row_from_trajectory(run, path, traj, record)
        data.rows.append(row)
        if cache is not None and traj.complete:  # an unfinished one changes on every write
            cache[str(path)] = (signature, line, row)
    for i, record in enumerate(records):
        if record.get("trajectory") and str(record["trajectory"]) in seen:
            continue
        indexed = _row_from_record(record, i)
        if indexed is None:
            data.problems.append(f"episodes.jsonl line {i + 1}: no task_id/seed")
        else:
            data.rows.append(indexed)
    data.rows.sort(key=lambda r: (r.task_id, r.seed, r.key))
    return data


# ---------------------------------------------------------------------------------------- breakdowns


def _groups(row: EpisodeRow, by: str) -> list[str]:
    tags = row.tags
    if by == "suite":
        return [row.suite]
    if by == "task":
        return [row.task_id]
    if by == "app":
        return [str(tags.get("app") or row.suite)]
    if by == "tier":
        return [f"tier {tags['tier']}"] if tags.get("tier") is not None else ["(no tier)"]
    if by == "split":
        return [str(tags.get("split") or "(no split)")]
    if by == "tag":
        skills = [str(s) for s in tags.get("skills") or []]
        if tags.get("feasible") is False:
            skills.append("infeasible")
        return skills or ["(no tags)"]
    raise ValueError(f"unknown breakdown {by!r}")


def success_by(rows: Iterable[EpisodeRow], by: str) -> list[dict[str, Any]]:
    """Success per group: scored episodes (infra errors and running ones are not scored)."""
    acc: dict[str, dict[str, Any]] = {}
    for row in rows:
        for group in _groups(row, by):
            g = acc.setdefault(group, {"group": group, "episodes": 0, "scored": 0, "passed": 0, "score_sum": 0.0,
                                       "infra": 0, "running": 0})
            g["episodes"] += 1
            if row.status == INFRA_STATUS:
                g["infra"] += 1
            elif row.status == "running":
                g["running"] += 1
            else:
                g["scored"] += 1
                g["passed"] += row.passed
                g["score_sum"] += row.score or 0.0
    out = []
    for g in sorted(acc.values(), key=lambda g: g["group"]):
        scored = g.pop("scored")
        score_sum = g.pop("score_sum")
        out.append({**g, "scored": scored, "success": g["passed"] / scored if scored else None,
                    "mean_score": score_sum / scored if scored else None})
    return out


def failure_counts(rows: Iterable[EpisodeRow]) -> list[dict[str, Any]]:
    """How many episodes ended in each failure class, infrastructure's first."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for row in rows:
        if row.failure:
            owner = "infra" if row.status == INFRA_STATUS else "agent"
            counts[(owner, row.failure)] += 1
    return [{"owner": owner, "failure": failure, "episodes": n}
            for (owner, failure), n in sorted(counts.items(), key=lambda kv: (kv[0][0] != "infra", -kv[1], kv[0][1]))]


def timing_split(rows: Iterable[EpisodeRow]) -> dict[str, Any]:
    """Milliseconds per step in each group: the run's mean, and the median of episodes' means."""
    rows = [r for r in rows if r.steps]
    steps = sum(r.steps for r in rows)
    mean = {g: round(sum(r.timing_ms.get(g, 0.0) for r in rows) / steps, 2) if steps else 0.0
            for g in TIMING_GROUPS}
    per_episode = {g: round(median(r.timing_ms.get(g, 0.0) / r.steps for r in rows), 2) if rows else 0.0
                   for g in TIMING_GROUPS}
    return {"steps": steps, "mean_per_step_ms": mean, "median_episode_per_step_ms": per_episode}


@dataclass
class TaskDelta:
    task_id: str
    a_passed: int
    a_scored: int
    b_passed: int
    b_scored: int
    #: seed -> [passed in A, passed in B] (None where that run has no scored episode of it).
    seeds: dict[int, list[bool | None]]

    @property
    def a_rate(self) -> float | None:
        return self.a_passed / self.a_scored if self.a_scored else None

    @property
    def b_rate(self) -> float | None:
        return self.b_passed / self.b_scored if self.b_scored else None

    @property
    def delta(self) -> float | None:
        a, b = self.a_rate, self.b_rate
        return None if a is None or b is None else b - a

    def as_json(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "a_passed": self.a_passed, "a_scored": self.a_scored,
                "b_passed": self.b_passed, "b_scored": self.b_scored, "a_rate": self.a_rate, "b_rate": self.b_rate,
                "delta": self.delta, "seeds": {str(k): v for k, v in sorted(self.seeds.items())}}


def compare_runs(a: RunData, b: RunData) -> list[TaskDelta]:
    """Per-task success of run A beside run B (B minus A), over the tasks either run has."""
    out: dict[str, TaskDelta] = {}
    for side, run in ((0, a), (1, b)):
        for row in run.rows:
            d = out.setdefault(row.task_id, TaskDelta(row.task_id, 0, 0, 0, 0, {}))
            if not row.scored:
                continue
            cell = d.seeds.setdefault(row.seed, [None, None])
            cell[side] = bool(cell[side]) or row.passed
            if side == 0:
                d.a_scored += 1
                d.a_passed += row.passed
            else:
                d.b_scored += 1
                d.b_passed += row.passed
    return sorted(out.values(), key=lambda d: (-(abs(d.delta) if d.delta is not None else -1), d.task_id))
