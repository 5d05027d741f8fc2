"""Memory per browser sandbox: added PSS at N = 1, 8, 32 in each isolation mode.

PSS (proportional set size, /proc/<pid>/smaps_rollup) is summed over every process this
benchmark started (Playwright driver, browsers, bwrap, supervisors, app services): shared
pages are split among their users, so the sum is what the sandboxes really cost. Each
sandbox has the todo app loaded. Per-sandbox figures divide the whole tree's PSS by N
(so the shared browser and the driver are charged to the sandboxes, not hidden).

    python bench/browser_memory.py [--counts 1,8,32] [--container-counts 1,8] [--modes shared,container]

Container mode at N=32 is heavy for a 2-core machine; it runs only when listed in
--container-counts. Last line: shared_mb_per_sandbox_at_32=<x>.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import time

from _proc import process_tree  # bench/ is this script's folder

from cua.sandbox import ServiceSpec
from cua.sandboxes.browser import BrowserConfig, BrowserSandbox
from cua.tasks.apps import service as app_service


def descendants(root: int) -> list[int]:
    return [p.pid for p in process_tree(root) if p.pid != root]


def pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


def tree_pss_mb() -> float:
    return sum(pss_kb(p) for p in descendants(os.getpid())) / 1024


def config(mode: str) -> BrowserConfig:
    app = ServiceSpec.model_validate(app_service("todo"))
    return BrowserConfig(isolation=mode, services=[app], start_url="/lists/1")  # type: ignore[arg-type]


async def measure(mode: str, n: int) -> tuple[float, float]:
    boxes: list[BrowserSandbox] = []
    started = time.perf_counter()
    try:
        for i in range(n):  # one at a time: a 2-core machine launches faster serially
            boxes.append(await BrowserSandbox.create(config(mode), sandbox_id=f"mem-{mode}-{i}"))
        for sb in boxes:
            await sb.observe()
        gc.collect()
        total = tree_pss_mb()
    finally:
        await asyncio.gather(*(sb.close() for sb in boxes))
    return total, time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="1,8,32", help="N values for shared mode")
    parser.add_argument("--container-counts", default="1,8", help="N values for container mode")
    parser.add_argument("--modes", default="shared,container")
    args = parser.parse_args()
    modes = args.modes.split(",")
    baseline = tree_pss_mb()
    results: dict[tuple[str, int], float] = {}
    for mode in modes:
        counts = [int(c) for c in (args.counts if mode == "shared" else args.container_counts).split(",") if c]
        for n in counts:
            total, took = await measure(mode, n)
            per = (total - baseline) / n
            results[(mode, n)] = per
            print(f"{mode:9s} N={n:3d}  tree PSS {total:8.1f} MB  per sandbox {per:6.1f} MB  ({took:.1f} s)", flush=True)
    shared32 = results.get(("shared", 32))
    print(f"shared_mb_per_sandbox_at_32={shared32:.1f}" if shared32 is not None else "shared_mb_per_sandbox_at_32=not_run")


if __name__ == "__main__":
    asyncio.run(main())
