"""The create-to-release cycle, as BrowserArena times hosted browsers (issue 37): sequential
cycles through `cua serve` and its client, each one

    connect (a new websocket client) -> create a browser sandbox, which loads its start page
    and answers with the first observation (a 1280x720 JPEG of the todo app) -> release it
    -> disconnect.

Two servers in this run, one after the other: without a warm pool (every create starts its
context and page) and with `--pool N` (`CUA_BROWSER_POOL`: N spares per config, started and
loaded in the background, as hosted browsers keep theirs). A cycle's time is measured at the
client from before the connect to after the disconnect; the first cycle of each server (the
shared browser and app host starting) is left out. Hosted anchors (BrowserArena, p50):
self-hosted Firecracker 224 ms, Kernel 365 ms, Browserbase 578 ms, Steel 972 ms.

    python bench/browser_lifecycle.py [--cycles 40] [--pool 2]

Last line: `lifecycle_p50_ms=<pooled> lifecycle_p99_ms=<pooled> cold_lifecycle_p50_ms=<x>
cold_lifecycle_p99_ms=<y>`; the goal is lifecycle_p50_ms <= 150.

Measured 2026-12-07 on this 2-core machine while four judge-QA runs shared it (load
average 8-9), `python bench/browser_lifecycle.py --cycles 30`:
`lifecycle_p50_ms=118.1 lifecycle_p99_ms=292.3 cold_lifecycle_p50_ms=1404.0
cold_lifecycle_p99_ms=2129.6` (pooled medians: connect 8.6, create 33.3, release 25.5 ms);
the pooled cycle is 0.084 of the cold one in the same run. Before (2026-12-06, an idle
machine, load 0.3), the pool gave no gain: `lifecycle_p50_ms=1338.7` against a cold 1021.9,
since its spares closed with the last sandbox (every sequential cycle started the browser,
Playwright and the app host again) and were replaced only once creates paused; an app
instance's stop also waited for uvicorn's 0.1 s tick plus a fixed 0.1 s (184 ms of each
release), and each create built a TLS context it never used (25 ms of CPU).
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

import cua
from cua.server.app import serve_in_subprocess
from cua.tasks.apps import service as app_service

CONFIG: dict[str, Any] = {"isolation": "shared", "start_url": "/", "services": [app_service("todo")]}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def cycle(url: str, token: str) -> tuple[float, dict[str, float]]:
    """One connect-create-release-disconnect cycle: its total ms and its parts."""
    parts: dict[str, float] = {}
    started = time.perf_counter()
    async with cua.connect(url, token) as client:
        connected = time.perf_counter()
        sandbox = await client.create("browser", config=CONFIG)
        created = time.perf_counter()
        if sandbox.observation is None or sandbox.observation.screenshot is None:
            raise SystemExit("a create answered without its first observation")
        await sandbox.close()
        released = time.perf_counter()
    ended = time.perf_counter()
    parts.update(connect=(connected - started) * 1000, create=(created - connected) * 1000,
                 release=(released - created) * 1000, disconnect=(ended - released) * 1000)
    return (ended - started) * 1000, parts


async def run(cycles: int, pool: int) -> tuple[list[float], dict[str, float]]:
    if pool:
        os.environ["CUA_BROWSER_POOL"] = str(pool)
    else:
        os.environ.pop("CUA_BROWSER_POOL", None)
    totals: list[float] = []
    parts: dict[str, list[float]] = {}
    try:
        async with serve_in_subprocess(max_sandboxes=pool + 4) as (url, token):
            await cycle(url, token)  # the shared browser and the app host start: not a cycle
            for _ in range(cycles):
                total, each = await cycle(url, token)
                totals.append(total)
                for name, ms in each.items():
                    parts.setdefault(name, []).append(ms)
    finally:
        os.environ.pop("CUA_BROWSER_POOL", None)
    return totals, {name: statistics.median(ms) for name, ms in parts.items()}


def describe(label: str, totals: list[float], parts: dict[str, float]) -> None:
    split = " ".join(f"{name}={ms:.1f}" for name, ms in parts.items())
    print(f"{label}: p50 {statistics.median(totals):.1f} ms, p99 {percentile(totals, 0.99):.1f} ms "
          f"over {len(totals)} cycles (medians: {split})", flush=True)


async def main_async(args: argparse.Namespace) -> int:
    cold, cold_parts = await run(args.cycles, 0)
    describe("cold", cold, cold_parts)
    pooled, pooled_parts = await run(args.cycles, args.pool)
    describe(f"pool {args.pool}", pooled, pooled_parts)
    print(f"lifecycle_p50_ms={statistics.median(pooled):.1f} lifecycle_p99_ms={percentile(pooled, 0.99):.1f} "
          f"cold_lifecycle_p50_ms={statistics.median(cold):.1f} cold_lifecycle_p99_ms={percentile(cold, 0.99):.1f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/browser_lifecycle.py")
    parser.add_argument("--cycles", type=int, default=40)
    parser.add_argument("--pool", type=int, default=2)
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
