"""A parallel slot that finds no room (a Ray cluster that lost nodes has too few left for
every slot) gives its job back: the other slots run it, each job exactly once; the last
slot left never gives up, it waits for room again."""

from __future__ import annotations

from pathlib import Path

from cua.episode.episode import EpisodeRecord
from cua.eval.runner import EpisodeJob, JobExecutor, SlotUnavailable, run_jobs
from cua.tasks.registry import get_template


class _Slot:
    """Runs a job to a record at once, or finds no room `full` times first."""

    def __init__(self, full: int) -> None:
        self.full = full
        self.ran: list[int] = []

    async def run(self, job: EpisodeJob) -> EpisodeRecord:
        if self.full:
            self.full -= 1
            raise SlotUnavailable("no room")
        self.ran.append(job.seed)
        return EpisodeRecord(task_id=job.template.id, seed=job.seed, instruction="", agent="test")

    async def aclose(self) -> None:
        return None


async def test_a_slot_without_room_hands_its_job_to_the_others(tmp_path: Path) -> None:
    template = get_template("fake.set_counter@1")
    jobs = [EpisodeJob(template=template, seed=s) for s in range(6)]
    slots = iter([_Slot(full=10**6), _Slot(full=0), _Slot(full=0)])
    made: list[_Slot] = []

    def executor() -> JobExecutor:
        made.append(next(slots))
        return made[-1]

    summary, records = await run_jobs(jobs, executor=executor, agent_name="test", parallel=3, out_dir=tmp_path)
    assert sorted(r.seed for r in records) == list(range(6)) and summary.not_run == 0
    assert made[0].ran == [] and sorted(made[1].ran + made[2].ran) == list(range(6))
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 6


async def test_the_last_slot_waits_for_room(tmp_path: Path) -> None:
    template = get_template("fake.set_counter@1")
    jobs = [EpisodeJob(template=template, seed=s) for s in range(3)]
    slot = _Slot(full=2)
    summary, records = await run_jobs(jobs, executor=lambda: slot, agent_name="test", parallel=1)
    assert sorted(r.seed for r in records) == [0, 1, 2] and summary.not_run == 0
