"""Density: many shared browser sandboxes alive on one `cua serve`, a few of them acting.

Shared isolation (one browser per server, a context per sandbox; bundled apps from the
process-wide app host), the todo app on each. 8 sandboxes act at once (a click and a
1280x720 JPEG observation per step) while 8, then 128, then 8 again are alive; the figure
compares the step p50 at 128 with the mean of the two at 8 (taken before and after, so
that drift in the machine's load hits both). Memory: PSS of every process of this run
(the server, its browser, driver and app host included) with 128 alive, per sandbox.

    python bench/browser_density.py [--alive 128] [--acting 8] [--steps 20]

Last line: `mb_per_sandbox_at_128=<x> step_p50_ratio_128_vs_8=<y>`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _proc import tree_pss_bytes  # noqa: E402

import cua  # noqa: E402
from cua.actions import Click  # noqa: E402
from cua.server.app import serve_in_subprocess  # noqa: E402
from cua.tasks.apps import service as app_service  # noqa: E402

CONFIG: dict[str, Any] = {"isolation": "shared", "start_url": "/",
                          "services": [app_service("todo")]}


def pss_mb() -> float:
    return tree_pss_bytes(os.getpid()) / 2**20


async def steps(acting: list[Any], n: int) -> list[float]:
    """`n` steps on each acting sandbox, all at once; each step's latency."""
    times: list[float] = []

    async def drive(sandbox: Any) -> None:
        for i in range(n):
            started = time.perf_counter()
            obs = await sandbox.act(Click(x=1200 - (i % 2) * 10, y=700))  # blank corner: nothing changes
            if obs.screenshot is None:
                raise SystemExit("no screenshot in the observation")
            times.append((time.perf_counter() - started) * 1000)

    await asyncio.gather(*(drive(s) for s in acting))
    return times


async def create_many(client: Any, count: int, parallel: int = 4) -> list[Any]:
    made: list[Any] = []
    queue = list(range(count))

    async def worker() -> None:
        while queue:
            queue.pop()
            made.append(await client.create("browser", config=CONFIG))

    await asyncio.gather(*(worker() for _ in range(parallel)))
    return made


async def main_async(args: argparse.Namespace) -> int:
    async with serve_in_subprocess(max_sandboxes=args.alive + 4, idle_timeout=0) as (url, token), \
            cua.connect(url, token) as client:
        acting = await create_many(client, args.acting)
        await steps(acting, 3)  # warm
        before = await steps(acting, args.steps)
        print(f"at {args.acting} alive: step p50 {statistics.median(before):.1f} ms", flush=True)
        idle = await create_many(client, args.alive - args.acting)
        await asyncio.sleep(2)
        mb = pss_mb()
        print(f"{args.alive} alive: PSS {mb:.0f} MB in all, {mb / args.alive:.1f} MB per sandbox", flush=True)
        crowded = await steps(acting, args.steps)
        print(f"at {args.alive} alive: step p50 {statistics.median(crowded):.1f} ms", flush=True)
        await asyncio.gather(*(s.close() for s in idle))
        after = await steps(acting, args.steps)
        print(f"at {args.acting} alive again: step p50 {statistics.median(after):.1f} ms", flush=True)
        await asyncio.gather(*(s.close() for s in acting))
    base = (statistics.median(before) + statistics.median(after)) / 2
    print(f"mb_per_sandbox_at_{args.alive}={mb / args.alive:.1f} "
          f"step_p50_ratio_{args.alive}_vs_{args.acting}={statistics.median(crowded) / base:.2f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/browser_density.py")
    parser.add_argument("--alive", type=int, default=128)
    parser.add_argument("--acting", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20)
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
