"""Restore-to-snapshot and fresh-create latency of browser sandboxes, in both isolations.

Each sandbox runs the todo app with a list page loaded. A snapshot is taken; every
round then changes the app and the screen (toggles a todo, which submits a form and
loads a page) and restores the snapshot, timing only `restore` (DB restore, cookies
and storage, navigation, scroll, settle and a JPEG observation). Create is timed from
nothing to the first settled page, the Playwright driver already running.

    python bench/browser_reset.py [--rounds 20] [--creates 5]

Last line: restore_p50_ms=<x> (container isolation, the default).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from cua.actions import Click
from cua.sandbox import ServiceSpec
from cua.sandboxes.browser import BrowserConfig, BrowserSandbox
from cua.state import DomQuery
from cua.tasks.apps import service as app_service


def config(mode: str) -> BrowserConfig:
    app = ServiceSpec.model_validate(app_service("todo"))
    return BrowserConfig(isolation=mode, services=[app], start_url="/lists/1")  # type: ignore[arg-type]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def toggle_first(sb: BrowserSandbox) -> None:
    (box,) = await sb.query([DomQuery(selector="tr.todo input.toggle", prop="bbox")])
    b = box.value
    await sb.act(Click(x=b["x"] + b["width"] / 2, y=b["y"] + b["height"] / 2))


async def bench_mode(mode: str, rounds: int, creates: int, keeper: BrowserSandbox) -> tuple[float, float]:
    create_ms: list[float] = []
    for i in range(creates):
        started = time.perf_counter()
        sb = await BrowserSandbox.create(config(mode), sandbox_id=f"bench-create-{mode}-{i}")
        create_ms.append((time.perf_counter() - started) * 1000)
        await sb.close()
    sb = await BrowserSandbox.create(config(mode), sandbox_id=f"bench-restore-{mode}")
    try:
        ref = await sb.snapshot()
        restore_ms: list[float] = []
        for _ in range(rounds + 2):
            await toggle_first(sb)
            started = time.perf_counter()
            obs = await sb.restore(ref)
            restore_ms.append((time.perf_counter() - started) * 1000)
            assert obs.screenshot is not None and obs.settle is not None
        restore_ms = restore_ms[2:]  # the first rounds warm caches (fonts, seed images)
    finally:
        await sb.close()
    print(f"{mode:9s} restore p50 {statistics.median(restore_ms):7.1f} ms  p90 {pct(restore_ms, 0.9):7.1f} ms  "
          f"(n={len(restore_ms)})   create p50 {statistics.median(create_ms):7.1f} ms  (n={len(create_ms)})",
          flush=True)
    return statistics.median(restore_ms), statistics.median(create_ms)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--creates", type=int, default=5)
    args = parser.parse_args()
    # Keeps the Playwright driver (and the shared browser) up, as in a long-running server.
    keeper = await BrowserSandbox.create(BrowserConfig(isolation="shared"), sandbox_id="bench-keeper")
    try:
        results = {mode: await bench_mode(mode, args.rounds, args.creates, keeper) for mode in ("shared", "container")}
    finally:
        await keeper.close()
    print(f"restore_p50_ms={results['container'][0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
