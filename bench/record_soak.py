"""Record soak: memory of `cua record` over a long session of demonstrations.

The recorder runs as the real command (`cua record TASKS --seed-list 0,0,... --keep all`,
its own process, sandboxes in process) with a queue long enough for the whole run. A
"person" (a headless Chromium on the live view page) demonstrates task after task with
the mouse and keyboard, aiming where the task's oracle does (its pixel actions from an
oracle eval of the same variants), and presses Done; each demonstration opens and closes
its own sandbox. Every 10 s it samples the recorder's own RSS and the PSS of its whole
process tree (browsers, app hosts). At the end it compares the medians of the first and
the last `--window` minutes (OpenAdapt's users report a recorder growing to 9 GB).

    python bench/record_soak.py --minutes 30 [--window 5]

Last line: record_soak minutes=<m> demos=<n> rss_last_vs_first=<ratio> tree_pss_last_vs_first=<ratio>
rss_first_mb=<mb> rss_last_mb=<mb>
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _person import demonstrate, next_task, open_live_view, oracle_pixel_actions  # bench/ is this script's folder
from _proc import memory_sample

TASKS = ["todo.add_todo@1", "todo.mark_done@1", "todo.complete_overdue@1"]


async def oracle_actions(tmp: Path) -> dict[str, list[dict[str, Any]]]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "cua.cli", "eval", *TASKS, "--policy", "oracle",
                                                "--local", "--out", str(tmp), "--no-progress",
                                                stdout=asyncio.subprocess.DEVNULL)
    assert await proc.wait() == 0, "the oracle eval failed"
    return oracle_pixel_actions(tmp)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--window", type=float, default=5.0, help="minutes compared at the start and the end")
    args = parser.parse_args()
    from playwright.async_api import async_playwright

    tmp = Path(tempfile.mkdtemp(prefix="record-soak-"))
    oracle = await oracle_actions(tmp / "oracle")
    repeats = ",".join(["0"] * 2000)  # more than any run gets through
    recorder = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cua.cli", "record", *TASKS, "--seed-list", repeats, "--keep", "all", "--port", "0",
        "--out", str(tmp / "rec"), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert recorder.stdout is not None
    line = (await asyncio.wait_for(recorder.stdout.readline(), 120)).decode()
    url = line.split()[2]
    samples: list[tuple[float, int, int]] = []
    t0 = time.monotonic()
    end = t0 + args.minutes * 60
    demos = 0

    async def sampler() -> None:
        while True:
            samples.append((time.monotonic() - t0, *memory_sample(recorder.pid)))
            await asyncio.sleep(10)

    sampling = asyncio.create_task(sampler())
    async with async_playwright() as pw:
        browser, page = await open_live_view(pw, url + "&operator=soak")
        while time.monotonic() < end:
            task = await next_task(page, demos + 1)
            box = await page.locator("#screen").bounding_box()
            await demonstrate(page, box, oracle[task], ack_ms=60_000)
            demos += 1
        await browser.close()
    sampling.cancel()
    recorder.send_signal(signal.SIGINT)
    try:
        await asyncio.wait_for(recorder.wait(), 60)
    except TimeoutError:
        recorder.kill()
    window = args.window * 60
    first = [s for s in samples if s[0] <= window] or samples[:1]
    last = [s for s in samples if s[0] >= samples[-1][0] - window] or samples[-1:]
    rss_first, rss_last = statistics.median(s[1] for s in first), statistics.median(s[1] for s in last)
    pss_first, pss_last = statistics.median(s[2] for s in first), statistics.median(s[2] for s in last)
    kept = sum(1 for x in (tmp / "rec" / "recording.jsonl").read_text().splitlines()
               if json.loads(x)["outcome"] == "kept")
    print(json.dumps({"samples": [(round(t), r // 2**20, p // 2**20) for t, r, p in samples]}), file=sys.stderr)
    print(f"record_soak minutes={args.minutes:g} demos={demos} kept={kept} "
          f"rss_last_vs_first={rss_last / rss_first:.3f} tree_pss_last_vs_first={pss_last / pss_first:.3f} "
          f"rss_first_mb={rss_first / 2**20:.1f} rss_last_mb={rss_last / 2**20:.1f}")
    if os.environ.get("RECORD_SOAK_KEEP") is None:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
