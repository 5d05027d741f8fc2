"""Sandbox create latency through `cua serve`: cold, and from the warm pool (`--pool N`,
`CUA_BROWSER_POOL`: N sandboxes per config started and loaded in the background).

Two servers, one after the other in this run, on the todo app (shared isolation, the
kind an RL run creates in numbers): one without a pool, one with `--pool N`. Each create
is timed at the client until its answer (the sandbox with its first observation, a
1280x720 JPEG). On the pooled server the first create is cold and names the config; once
its N spares are ready, N creates in a row take them (the pool lasting), then they close
and the pool refills; repeated for `--rounds`. Memory: PSS of this run's process tree
with the pool full, against the same server with no spare yet, per spare.

    python bench/browser_create.py [--pool 4] [--rounds 3]

Last line: `pooled_create_p50_ms=<x> cold_create_p50_ms=<y> pool_mb_per_spare=<z>`.
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

from _proc import tree_pss_bytes

import cua
from cua.server.app import serve_in_subprocess
from cua.tasks.apps import service as app_service

CONFIG: dict[str, Any] = {"isolation": "shared", "start_url": "/",
                          "services": [app_service("todo")]}


def pss_mb() -> float:
    return tree_pss_bytes(os.getpid()) / 2**20


async def timed_create(client: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    sandbox = await client.create("browser", config=CONFIG)
    return sandbox, (time.perf_counter() - started) * 1000


async def wait_pool(client: Any, keeper: Any, want: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        (info,) = [i for i in await client.list() if i.id == keeper.id]
        if int(info.details.get("create_spares", 0)) >= want:
            return
        await asyncio.sleep(0.2)
    raise SystemExit(f"the pool did not fill to {want} in {timeout:g} s")


async def cold(creates: int) -> list[float]:
    os.environ.pop("CUA_BROWSER_POOL", None)
    times = []
    async with serve_in_subprocess(max_sandboxes=16) as (url, token), cua.connect(url, token) as client:
        keeper, _ = await timed_create(client)  # the shared browser and app host are up, as on a busy server
        for _ in range(creates):
            sandbox, ms = await timed_create(client)
            times.append(ms)
            await sandbox.close()
        await keeper.close()
    return times


async def pooled(pool: int, rounds: int) -> tuple[list[float], float]:
    os.environ["CUA_BROWSER_POOL"] = str(pool)
    times = []
    try:
        async with serve_in_subprocess(max_sandboxes=pool + 4) as (url, token), cua.connect(url, token) as client:
            keeper, _ = await timed_create(client)
            empty = pss_mb()
            await wait_pool(client, keeper, pool)
            full = pss_mb()
            for r in range(rounds):
                made = []
                for _ in range(pool):
                    sandbox, ms = await timed_create(client)
                    made.append(sandbox)
                    times.append(ms)
                print(f"round {r}: pooled creates " + " ".join(f"{t:.0f}" for t in times[-pool:]) + " ms", flush=True)
                for sandbox in made:
                    await sandbox.close()
                await wait_pool(client, keeper, pool)
            await keeper.close()
    finally:
        os.environ.pop("CUA_BROWSER_POOL", None)
    return times, (full - empty) / pool


async def main_async(args: argparse.Namespace) -> int:
    cold_ms = await cold(args.pool)
    print("cold creates " + " ".join(f"{t:.0f}" for t in cold_ms) + " ms", flush=True)
    pooled_ms, per_spare = await pooled(args.pool, args.rounds)
    print(f"pooled_create_p50_ms={statistics.median(pooled_ms):.1f} cold_create_p50_ms={statistics.median(cold_ms):.1f} "
          f"pool_mb_per_spare={per_spare:.1f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/browser_create.py")
    parser.add_argument("--pool", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
