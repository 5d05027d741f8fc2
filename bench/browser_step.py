"""Act -> observation latency over the websocket, against raw Playwright, in one run.

cua: a container-mode browser sandbox with the todo app, driven through a real server
(its own process by default, as deployed) over the websocket: `act(Click)` with settle
detection on and a JPEG q80 1280x720 screenshot, received as a binary frame.

Reference: raw async Playwright on the same Chromium build, same switches, same page
of a todo app served on the host: `page.mouse.click` + `page.screenshot(type="jpeg",
quality=80)`. The two alternate step by step, so machine noise hits both alike.

    python bench/browser_step.py [--steps 200] [--warmup 20] [--in-process] [--frames]

Last line: step_p50_ratio_vs_playwright=<cua p50 / playwright p50>.

`--frames` also keeps each step as a trajectory would (`cua.trajectory.TrajectoryWriter`):
each cua step's observation is written by a writer keeping every frame (JPEG file + line)
and by one keeping none (line only), and the last line is then
frames_cost_vs_step_p50=<p50(step + frame write) / p50(step + line only) - 1> (goal <= 0.05).
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import shutil
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from _apps import host_app  # bench/ is this script's folder

import cua
from cua.actions import Click
from cua.observation import Observation, ObserveOptions
from cua.state import DomQuery
from cua.tasks.apps import service as app_service
from cua.trajectory import AgentInfo, StepLine, TrajectoryMeta, TrajectoryWriter

PAGE = "/lists/1"
OBSERVE = ObserveOptions(format="jpeg", quality=80)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@contextlib.asynccontextmanager
async def server(in_process: bool) -> AsyncIterator[tuple[str, str | None]]:
    from cua.server.app import serve_in_background, serve_in_subprocess

    cm = serve_in_background() if in_process else serve_in_subprocess()
    async with cm as running:
        yield running.url, running.token


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--isolation", default="container", choices=["container", "shared"])
    parser.add_argument("--in-process", action="store_true", help="run the server in this process's event loop")
    parser.add_argument("--frames", action="store_true",
                        help="also measure keeping every step's frame in a trajectory, with and without frames")
    args = parser.parse_args()

    from playwright.async_api import async_playwright

    from cua.sandboxes.browser.launcher import BASE_ARGS, find_executable

    exe = find_executable()
    config = {"isolation": args.isolation, "start_url": PAGE,
              "services": [app_service("todo")]}
    async with server(args.in_process) as (url, token), cua.connect(url, token) as client, \
            host_app() as app_url, async_playwright() as pw:
        sandbox = await client.create("browser", config=config, observe=OBSERVE)
        browser = await pw.chromium.launch(executable_path=exe.path, args=list(BASE_ARGS))
        page = await browser.new_page(viewport={"width": 1280, "height": 720})
        await page.goto(app_url + PAGE)
        # a click that changes nothing (the page heading): both sides measure the step itself
        (box,) = await sandbox.query([DomQuery(selector="h1", prop="bbox")])
        x, y = box.value["x"] + 4, box.value["y"] + box.value["height"] / 2

        cua_ms: list[float] = []
        pw_ms: list[float] = []
        sizes: list[int] = []
        with_frames: list[float] = []
        without_frames: list[float] = []
        writers = _writers(sandbox.observation) if args.frames else None
        for i in range(args.warmup + args.steps):
            t0 = time.perf_counter()
            obs = await sandbox.act(Click(x=x, y=y), observe=OBSERVE)
            t1 = time.perf_counter()
            await page.mouse.click(x, y)
            shot = await page.screenshot(type="jpeg", quality=80)
            t2 = time.perf_counter()
            assert obs.error is None and obs.screenshot is not None and obs.screenshot.width == 1280 and shot
            if writers is not None:
                kept = [_keep(w, i, obs) for w in (writers if i % 2 else writers[::-1])]  # alternate the order
                all_ms, none_ms = (kept if i % 2 else kept[::-1])
            if i >= args.warmup:
                cua_ms.append(1000 * (t1 - t0))
                pw_ms.append(1000 * (t2 - t1))
                sizes.append(len(obs.screenshot.data))
                if writers is not None:
                    with_frames.append(1000 * (t1 - t0) + all_ms)
                    without_frames.append(1000 * (t1 - t0) + none_ms)
        await sandbox.close()
        await browser.close()

    print(f"browser: {exe.path} ({exe.source}); cua isolation={args.isolation}, server "
          f"{'in this process' if args.in_process else 'in its own process'}; {args.steps} steps after "
          f"{args.warmup} warm-up, alternating")
    print(f"screenshot: jpeg q80 1280x720, mean {statistics.mean(sizes) / 1024:.1f} KiB")
    for name, values in (("cua websocket", cua_ms), ("raw playwright", pw_ms)):
        print(f"{name:>15}: p50 {pct(values, 0.5):6.2f} ms  p95 {pct(values, 0.95):6.2f} ms  "
              f"mean {statistics.mean(values):6.2f} ms")
    print(f"last observation timings (ms): {obs.timings_ms}")
    print(f"step_p50_ratio_vs_playwright={pct(cua_ms, 0.5) / pct(pw_ms, 0.5):.3f}")
    if args.frames:
        for name, values in (("step + frame", with_frames), ("step + line", without_frames)):
            print(f"{name:>15}: p50 {pct(values, 0.5):6.2f} ms  p95 {pct(values, 0.95):6.2f} ms")
        print(f"frames_cost_vs_step_p50={pct(with_frames, 0.5) / pct(without_frames, 0.5) - 1:.4f}")


def _writers(first: Observation) -> tuple[TrajectoryWriter, TrajectoryWriter]:
    """Two trajectory writers in temporary folders: one keeping every frame, one keeping none."""
    out = []
    for frames in ("all", "none"):
        folder = Path(tempfile.mkdtemp(prefix=f"cua-bench-frames-{frames}-"))
        atexit.register(shutil.rmtree, folder, True)
        writer = TrajectoryWriter(folder, frames=frames)  # type: ignore[arg-type]
        meta = TrajectoryMeta(producer="eval", task_id="bench.browser_step", seed=0, instruction="click",
                              sandbox_kind="browser", agent=AgentInfo(name="bench", kind="python"))
        writer.begin(meta, first)
        out.append(writer)
    return out[0], out[1]


def _keep(writer: TrajectoryWriter, index: int, obs: Observation) -> float:
    """Keep one step as an Episode does (the observation's frame, then the step's line); ms taken."""
    t0 = time.perf_counter()
    ref = writer.observation(obs)
    writer.step(StepLine(index=index, observation=ref, action={"type": "click"}, timings_ms={"act": 1.0}))
    return 1000 * (time.perf_counter() - t0)


if __name__ == "__main__":
    asyncio.run(main())
