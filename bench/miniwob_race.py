"""MiniWoB++ episodes per second: cua (through `cua serve`) against Farama's MiniWoB env
(Selenium + chromedriver), the same scripted solver on both, interleaved in one run.

The solver is each task's oracle, recorded once as the unified actions it took (the same
trace `bench/miniwob_parity.py` replays), so both backends perform exactly the same clicks
and keystrokes at the same CSS coordinates. An episode is a reset, the actions, and the
reward: for cua the full episode of `cua eval` (reset with the task's seed, the utterance
read from the page, every step's 1280x720 JPEG observation, the judge's verdict); for
MiniWoB its `reset` and `step`s (its observation: a screenshot and the DOM element list).

Both sides keep a browser per task and slot, open across rounds (Farama's env has one
task; cua gets a sandbox per task and slot too), so every reset after the warm-up round
restarts its task in the loaded page on both sides.

Rounds alternate the backends (cua then MiniWoB, then MiniWoB then cua, ...), each round
running every (task, seed) once at the given parallelism; the figure per parallelism is the
median of the per-round ratios, which holds on a machine whose load changes under it.

    python bench/miniwob_race.py [--tasks click-button,enter-text] [--seeds 3] [--rounds 3]

Each round also says what an episode cost in CPU, by process (chromium, the Playwright
driver, the server, the app service, chromedriver, this process), measured over the round:
on a loaded machine the backend that needs less CPU per episode is the faster one.

Last line: `miniwob_eps_ratio_p1=<cua/farama> miniwob_eps_ratio_p4=<cua/farama>`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser_throughput import cpu_by_process, cpu_delta
from miniwob_parity import _key, _make_env, _wob_actions, available

import cua
from cua.actions import parse_action
from cua.episode import OracleAgent, open_local, run_episode
from cua.server.app import serve_in_subprocess
from cua.task import TaskInstance, actions_oracle
from cua.tasks.registry import get_template

#: Easy, single-page tasks of the kind the held-out race used: clicks, typing, a form.
TASKS = ("click-button", "click-link", "enter-text", "focus-text", "click-checkboxes")


@dataclass
class Job:
    task: str
    instance: TaskInstance
    actions: list[dict[str, Any]]


@dataclass
class Timing:
    episodes: int = 0
    seconds: float = 0.0
    steps_ms: list[float] = field(default_factory=list)
    resets_ms: list[float] = field(default_factory=list)
    passed: int = 0
    #: cua only: each phase of the episode record's timings (reset, state_initial, act, ...).
    phases_ms: dict[str, list[float]] = field(default_factory=dict)
    #: CPU seconds by process name over the round (every process of this run: the other
    #: backend's idle ones too).
    cpu_s: dict[str, float] = field(default_factory=dict)

    @property
    def eps(self) -> float:
        return self.episodes / self.seconds if self.seconds else 0.0

    def cpu_line(self) -> str:
        """CPU ms per episode, in all and by process (those that spent at least 1 ms)."""
        per = {name: 1000 * sec / max(1, self.episodes) for name, sec in self.cpu_s.items()}
        parts = ", ".join(f"{name} {ms:.0f}" for name, ms in sorted(per.items(), key=lambda kv: -kv[1]) if ms >= 1)
        return f"{sum(v for v in per.values() if v > 0):.0f} ms CPU/episode ({parts})"


async def timed(run: Any) -> Timing:
    """`run` (a coroutine giving a Timing), with the CPU every process of this run spent meanwhile."""
    before = cpu_by_process()
    timing: Timing = await run
    timing.cpu_s = cpu_delta(before, cpu_by_process())
    return timing


async def record_traces(tasks: list[str], seeds: list[int]) -> list[Job]:
    """Each task's oracle, run once in process, kept as the actions it took."""
    jobs: list[Job] = []
    for task in tasks:
        template = get_template(f"miniwob.{task.replace('-', '_')}@1")
        instances = [template.instantiate(seed) for seed in seeds]
        async with open_local(instances[0].sandbox_kind, instances[0].sandbox_config) as handle:
            for instance in instances:
                record = await run_episode(handle, instance, OracleAgent("oracle"))
                if record.status != "completed" or record.verdict is None or not record.verdict.passed:
                    raise SystemExit(f"the oracle of {task} seed {instance.seed} does not pass: {record.error}")
                jobs.append(Job(task, instance, [a.action for a in record.actions if a.action.get("type") != "done"]))
    return jobs


async def race_cua(sandboxes: dict[str, list[Any]], jobs: list[Job], parallel: int) -> Timing:
    """Every job once, `parallel` at a time over one connection, as `FaramaPool.race` runs
    them: worker `slot` takes the next job and plays it on its sandbox of that job's task
    (a sandbox per task and slot, kept open across rounds, as the Farama envs are), so a
    reset restarts the task in its page on both sides."""
    timing = Timing()
    pending = list(jobs)

    async def worker(slot: int) -> None:
        while pending:
            job = pending.pop(0)
            sandbox = sandboxes[job.task][slot]
            scripted = job.instance.model_copy(
                update={"oracle": actions_oracle([parse_action(a) for a in job.actions])})
            record = await run_episode(sandbox, scripted, OracleAgent("oracle"))
            if record.status != "completed":
                raise SystemExit(f"cua episode of {job.task} seed {job.instance.seed}: {record.error}")
            timing.resets_ms.append(record.timings_ms.get("reset", 0.0))
            timing.steps_ms += [s.act_ms for s in record.actions if s.act_ms]
            for phase, ms in record.timings_ms.items():
                timing.phases_ms.setdefault(phase, []).append(ms)
            timing.passed += bool(record.verdict and record.verdict.passed)
            timing.episodes += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(slot) for slot in range(parallel)))
    timing.seconds = time.perf_counter() - started
    return timing


class FaramaPool:
    """`parallel` MiniWoB envs per task, kept open across rounds (as cua keeps its sandboxes)."""

    def __init__(self, jobs: list[Job], parallel: int) -> None:
        keys = {_key(a["keys"]) for job in jobs for a in job.actions if a["type"] == "key"}
        self.envs = {task: [_make_env(task, keys) for _ in range(parallel)] for task in {j.task for j in jobs}}

    def close(self) -> None:
        for envs in self.envs.values():
            for env in envs:
                env.close()

    def race(self, jobs: list[Job], parallel: int) -> Timing:
        timing = Timing()
        lock = threading.Lock()
        pending = list(jobs)

        def worker(slot: int) -> None:
            while True:
                with lock:
                    if not pending:
                        return
                    job = pending.pop(0)
                env = self.envs[job.task][slot]
                t = time.perf_counter()
                env.reset(seed=int(job.instance.params["wob_seed"]))
                reset_ms = (time.perf_counter() - t) * 1000
                steps, passed = [], False
                for action in job.actions:
                    todo = _wob_actions(env, action)
                    if isinstance(todo, float):
                        time.sleep(todo)
                        continue
                    for wob_action in todo:
                        t = time.perf_counter()
                        _, _, terminated, _, info = env.step(wob_action)
                        steps.append((time.perf_counter() - t) * 1000)
                        if terminated:
                            passed = float(info["raw_reward"]) == 1.0
                with lock:
                    timing.resets_ms.append(reset_ms)
                    timing.steps_ms += steps
                    timing.passed += passed
                    timing.episodes += 1

        started = time.perf_counter()
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(parallel)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        timing.seconds = time.perf_counter() - started
        return timing


def _p50(values: list[float]) -> float:
    return round(statistics.median(values), 1) if values else 0.0


async def main_async(args: argparse.Namespace) -> int:
    tasks = args.tasks.split(",") if args.tasks else list(TASKS)
    jobs = await record_traces(tasks, list(range(args.seeds)))
    ratios: dict[int, list[float]] = {}
    tasks_run = sorted({job.task for job in jobs})
    async with serve_in_subprocess(max_sandboxes=len(tasks_run) * max(args.parallel)) as (url, token), \
            cua.connect(url, token) as client:
        for parallel in args.parallel:
            # in a thread: the selenium calls block, and the connection must keep answering pings
            pool = await asyncio.to_thread(FaramaPool, jobs, parallel)
            # each sandbox made on its own task's page, as each Farama env is made on its task
            first = {task: next(j.instance for j in jobs if j.task == task) for task in tasks_run}
            sandboxes = {task: [await client.create(first[task].sandbox_kind, config=first[task].sandbox_config)
                                for _ in range(parallel)] for task in tasks_run}
            try:
                await race_cua(sandboxes, jobs, parallel)  # warm: pages cached
                await asyncio.to_thread(pool.race, jobs, parallel)
                for r in range(args.rounds):
                    order = ("cua", "farama") if r % 2 == 0 else ("farama", "cua")
                    results: dict[str, Timing] = {}
                    for backend in order:
                        results[backend] = await timed(race_cua(sandboxes, jobs, parallel) if backend == "cua"
                                                       else asyncio.to_thread(pool.race, jobs, parallel))
                    c, f = results["cua"], results["farama"]
                    ratios.setdefault(parallel, []).append(c.eps / f.eps if f.eps else 0.0)
                    print(f"p{parallel} round {r}: cua {c.eps:.2f} eps/s (step p50 {_p50(c.steps_ms)} ms, reset p50 "
                          f"{_p50(c.resets_ms)} ms, passed {c.passed}/{c.episodes})  farama {f.eps:.2f} eps/s "
                          f"(step p50 {_p50(f.steps_ms)} ms, reset p50 {_p50(f.resets_ms)} ms, passed "
                          f"{f.passed}/{f.episodes})  ratio {ratios[parallel][-1]:.2f}", flush=True)
                    print("    cua phases p50 ms: " + " ".join(f"{k}={_p50(v)}" for k, v in c.phases_ms.items()),
                          flush=True)
                    print(f"    cua {c.cpu_line()}\n    farama {f.cpu_line()}", flush=True)
            finally:
                for sandbox in (s for group in sandboxes.values() for s in group):
                    await sandbox.close()
                pool.close()
    print(" ".join(f"miniwob_eps_ratio_p{p}={statistics.median(v):.2f}" for p, v in sorted(ratios.items())))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/miniwob_race.py")
    parser.add_argument("--tasks", help=f"comma-separated MiniWoB tasks (default: {','.join(TASKS)})")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args(argv)
    why = available()
    if why:
        print(why, file=sys.stderr)
        return 2
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
