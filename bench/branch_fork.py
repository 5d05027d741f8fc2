"""Branch from a step 10 steps deep: `cua.branch.fork` of a recorded todo episode, through the client.

A todo episode is played on a shared-isolation browser sandbox of a `cua serve` child
process, keeping a snapshot at every step (`--snapshots every`): the list opened, a todo
ticked, then scrolls down and up to 11 actions, and a Done. Then `fork(trajectory, step=10, source=...)`
is timed: from the call until a live sandbox stands in the state the agent acted on at
step 10, its screen checked pixel by pixel against the recorded frame (the check is part
of the figure). The fork's judge state must be the recording's at that step too. Between
rounds the fork is closed and the server's fork spares refilled (as in a training loop,
where the group's episodes cover that time; bench/fork_group.py measures them).

    python bench/branch_fork.py [--rounds 7] [--step 10]

Last line: branch_fork_p50_ms=<p50>
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import cua
from cua.actions import Action, Click, Done, Scroll
from cua.branch import SnapshottingHandle, SnapshotWriter, StepSnapshots, fork
from cua.client import RemoteSandbox
from cua.episode import Episode
from cua.info import SnapshotRef
from cua.server.app import serve_in_subprocess
from cua.state import AppStateQuery, DomQuery
from cua.tasks.registry import get_template
from cua.trajectory import read_trajectory

TASK = "todo.mark_done@1"
_PORT = re.compile(r"(127\.0\.0\.1|localhost):\d+")


async def judge_state(sb: Any, queries: list[Any]) -> list[Any]:
    """The judge's reads and the app state, loopback ports blanked (each shared sandbox's app has its own)."""
    return [(r.ok, json.loads(_PORT.sub(r"\1:*", json.dumps(r.value, sort_keys=True)))) for r in await sb.query(queries)]


async def centre(sb: RemoteSandbox, selector: str) -> Click:
    (res,) = await sb.query([DomQuery(selector=selector, prop="bbox")])
    b = res.value
    if not res.ok or not b:
        raise RuntimeError(f"no {selector} on the page")
    return Click(x=b["x"] + b["width"] / 2, y=b["y"] + b["height"] / 2)


async def record(sb: RemoteSandbox, folder: Path, depth: int, queries: list[Any]) -> list[Any]:
    """Play `depth + 1` actions and a Done, with a snapshot at every step; the judge state
    the agent acted on at each action."""
    instance = get_template(TASK).instantiate(0)
    keeper = StepSnapshots(every=1)
    ep = Episode(SnapshottingHandle(sb, keeper), instance, writer=SnapshotWriter(folder, keeper))
    await ep.reset()
    todo = instance.params["todo"]
    states: list[Any] = []

    async def step(action: Action) -> None:
        states.append(await judge_state(sb, queries))
        await ep.step(action)

    for selector in (f'a.list-card[data-list="{todo["list"]}"]', f'tr[data-id="{todo["id"]}"] input.toggle'):
        click = await centre(sb, selector)
        if click.y > 700:  # below the frame: scrolled in first, as an agent would
            await step(Scroll(x=640, y=360, dy=click.y - 360))
            click = await centre(sb, selector)
        await step(click)
    while len(states) <= depth:
        await step(Scroll(x=640, y=360, dy=120 if len(states) % 2 == 0 else -80))
    await ep.step(Done())
    await ep.judge()
    ep.finish()
    return states


async def spares_ready(parent: RemoteSandbox, timeout: float = 120.0) -> None:
    """Wait until the server holds a pre-started fork target again (polls: there is no event for it)."""
    deadline = time.monotonic() + timeout
    while int((await parent.refresh()).details.get("fork_spares", 0)) < 1 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)


async def bench(rounds: int, step: int) -> list[float]:
    instance = get_template(TASK).instantiate(0)
    queries = [*instance.judge.queries(), AppStateQuery()]
    times: list[float] = []
    raw: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "traj"
        async with serve_in_subprocess(max_sandboxes=4) as server:
            async with cua.connect(server.url, server.token, default_timeout=180) as client:
                sb = await client.create(instance.sandbox_kind, config={**instance.sandbox_config, "isolation": "shared"})
                states = await record(sb, folder, step, queries)
                traj = read_trajectory(folder)
                for i in range(rounds + 1):  # the first round is cold: no spare yet
                    if i:
                        await spares_ready(sb)
                    started = time.perf_counter()
                    branch = await fork(traj, step, source=sb)
                    elapsed = (time.perf_counter() - started) * 1000
                    try:
                        if branch.checked != 1 or branch.replayed != 0:
                            raise AssertionError(f"the fork was not checked against step {step}'s frame")
                        if await judge_state(branch.handle, queries) != states[step]:
                            raise AssertionError(f"the fork's judge state is not step {step}'s")
                    finally:
                        await branch.close()
                    await spares_ready(sb)
                    started = time.perf_counter()  # the bare fork of the same snapshot, for reference
                    bare = await sb.fork(SnapshotRef.model_validate(traj.steps[step].snapshot))
                    raw.append((time.perf_counter() - started) * 1000)
                    await bare.close()
                    if i:
                        times.append(elapsed)
                    else:
                        print(f"cold fork at step {step}: {elapsed:.0f} ms", flush=True)
                await sb.close()
    print(f"bare client fork of the same snapshot (no check), ms per round {[round(t) for t in raw[1:]]}, "
          f"p50 {statistics.median(raw[1:]):.0f}", flush=True)
    return times


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--step", type=int, default=10, help="the step to branch at (the episode is one step longer)")
    args = ap.parse_args()
    times = await bench(args.rounds, args.step)
    print(f"fork at step {args.step} (shared browser, checked): ms per round {[round(t) for t in times]}", flush=True)
    print(f"branch_fork_p50_ms={statistics.median(times):.0f}")


if __name__ == "__main__":
    asyncio.run(main())
