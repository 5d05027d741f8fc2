"""What an eval record says beyond the episode's own record, and what the run's summary makes of it.

`EvalRecord` is an `EpisodeRecord` (one line of episodes.jsonl) that also says where the
episode stood in a reset-free stream (`cua eval --stream`: the stream's id, its position,
and whether it ran on the state the earlier tasks left or after its own reset) and which arm
of a demonstration-conditioned run it belongs to (`cua eval --demo`: with the demo or
without). Readers that know only `EpisodeRecord` read the same line and ignore both.

`stream_stats` and `demo_comparison` are the summary's figures for them: per-position
success with and without resets (state carried over is what makes a stream hard), and the
two demo arms side by side over the same instances (success, steps, per task).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from cua.episode.episode import EpisodeRecord

__all__ = ["ArmStats", "DemoArm", "DemoComparison", "EvalRecord", "PositionStats", "StreamInfo", "StreamStats",
           "demo_comparison", "stream_stats"]


class StreamInfo(BaseModel):
    """An episode's place in a reset-free stream."""

    #: The stream's id (the same for all its tasks; `cua.eval.stream.stream_id`).
    id: str
    #: 0-based position in the stream, and the stream's length.
    position: int = Field(ge=0)
    length: int = Field(ge=1)
    #: True: it ran on the state the stream's earlier tasks left (no reset; the first task
    #: resets as usual). False: the comparison arm, run after its own reset.
    carried: bool = True


class DemoArm(BaseModel):
    """An episode's arm of a `--demo` run."""

    arm: Literal["demo", "none"]
    #: The demo it was given (its trajectory, task and seed); None in the arm without, or
    #: where `auto` found no demo of its template at another seed.
    source: dict[str, Any] | None = None


class EvalRecord(EpisodeRecord):
    stream: StreamInfo | None = None
    demo: DemoArm | None = None

    @classmethod
    def of(cls, record: EpisodeRecord, *, stream: StreamInfo | None = None, demo: DemoArm | None = None) -> EvalRecord:
        """`record` with its stream place and demo arm (its in-memory judge input kept)."""
        out = cls.model_validate({**record.model_dump(), "stream": stream, "demo": demo})
        out.judge_input = record.judge_input
        return out


def _passed(record: EpisodeRecord) -> bool | None:
    """Whether a scored episode passed; None for one lost to the infrastructure."""
    if record.status == "infra_error":
        return None
    return bool(record.verdict is not None and record.verdict.passed)


class PositionStats(BaseModel):
    position: int
    task_id: str
    seed: int
    #: Passed on the carried state / after its own reset (None: not run, or lost to the infrastructure).
    passed: bool | None = None
    passed_reset: bool | None = None


class StreamStats(BaseModel):
    """One stream in figures: success by position, over the stream, with and without resets."""

    id: str
    length: int
    #: Success over the stream's scored positions, without resets (the stream's score).
    success: float | None = None
    #: The same tasks, each after its own reset (None: that arm was not run).
    success_reset: float | None = None
    positions: list[PositionStats] = Field(default_factory=list)


def _rate(values: Sequence[bool | None]) -> float | None:
    scored = [v for v in values if v is not None]
    return sum(scored) / len(scored) if scored else None


def stream_stats(records: Sequence[EpisodeRecord]) -> dict[str, StreamStats]:
    """Each stream of `records` (those that are `EvalRecord`s with a stream), by id."""
    streams: dict[str, StreamStats] = {}
    for r in records:
        info = r.stream if isinstance(r, EvalRecord) else None
        if info is None:
            continue
        stats = streams.setdefault(info.id, StreamStats(id=info.id, length=info.length,
                                                        positions=[PositionStats(position=i, task_id="", seed=0)
                                                                   for i in range(info.length)]))
        if info.position >= len(stats.positions):
            continue
        place = stats.positions[info.position]
        place.task_id, place.seed = r.task_id, r.seed
        if info.carried:
            place.passed = _passed(r)
        else:
            place.passed_reset = _passed(r)
    for stats in streams.values():
        stats.success = _rate([p.passed for p in stats.positions])
        if any(isinstance(r, EvalRecord) and r.stream is not None and r.stream.id == stats.id and not r.stream.carried
               for r in records):
            stats.success_reset = _rate([p.passed_reset for p in stats.positions])
    return dict(sorted(streams.items()))


class ArmStats(BaseModel):
    episodes: int = 0
    scored: int = 0
    passed: int = 0
    success_rate: float | None = None
    #: Mean steps over the scored episodes.
    mean_steps: float | None = None
    #: Episodes of the demo arm that ran without one (`auto` found none of their template).
    no_demo_found: int = 0


def _arm(records: Sequence[EvalRecord]) -> ArmStats:
    scored = [r for r in records if r.status != "infra_error"]
    stats = ArmStats(episodes=len(records), scored=len(scored),
                     passed=sum(1 for r in scored if r.verdict is not None and r.verdict.passed),
                     no_demo_found=sum(1 for r in records if r.demo is not None and r.demo.arm == "demo"
                                      and r.demo.source is None))
    if scored:
        stats.success_rate = stats.passed / len(scored)
        stats.mean_steps = sum(r.steps for r in scored) / len(scored)
    return stats


class DemoComparison(BaseModel):
    """The two arms of a `--demo` run over the same instances."""

    with_demo: ArmStats
    without_demo: ArmStats
    #: with_demo.success_rate - without_demo.success_rate (None where an arm has no scored episode).
    success_gain: float | None = None
    by_task: dict[str, dict[str, ArmStats]] = Field(default_factory=dict)


def demo_comparison(records: Sequence[EpisodeRecord]) -> DemoComparison | None:
    """The demo arms of `records` side by side (None: not a `--demo` run)."""
    arms: dict[str, list[EvalRecord]] = defaultdict(list)
    tasks: dict[str, dict[str, list[EvalRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if isinstance(r, EvalRecord) and r.demo is not None:
            arms[r.demo.arm].append(r)
            tasks[r.task_id][r.demo.arm].append(r)
    if not arms:
        return None
    with_demo, without = _arm(arms["demo"]), _arm(arms["none"])
    gain = None if with_demo.success_rate is None or without.success_rate is None \
        else with_demo.success_rate - without.success_rate
    by_task = {task: {"with_demo": _arm(per["demo"]), "without_demo": _arm(per["none"])}
               for task, per in sorted(tasks.items())}
    return DemoComparison(with_demo=with_demo, without_demo=without, success_gain=gain, by_task=by_task)
