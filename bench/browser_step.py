"""Act -> observation latency over the websocket, against raw Playwright, in one run.

cua: a container-mode browser sandbox with the todo app, driven through a real server
(its own process by default, as deployed) over the websocket: `act(Click)` with settle
detection on and a JPEG q80 1280x720 screenshot, received as a binary frame.

Reference: raw async Playwright on the same Chromium build, same switches, same page
of a todo app served on the host: `page.mouse.click` + `page.screenshot(type="jpeg",
quality=80)`. The two alternate step by step, so machine noise hits both alike.

    python bench/browser_step.py [--steps 200] [--warmup 20] [--in-process]

Last line: step_p50_ratio_vs_playwright=<cua p50 / playwright p50>.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator

import cua
from cua.actions import Click
from cua.observation import ObserveOptions
from cua.state import DomQuery

from _apps import APP, host_app  # bench/ is this script's folder

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
    args = parser.parse_args()

    from cua.sandboxes.browser.launcher import BASE_ARGS, find_executable
    from playwright.async_api import async_playwright

    exe = find_executable()
    config = {"isolation": args.isolation, "start_url": PAGE,
              "services": [{"name": "app", "argv": APP}]}
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
        for i in range(args.warmup + args.steps):
            t0 = time.perf_counter()
            obs = await sandbox.act(Click(x=x, y=y), observe=OBSERVE)
            t1 = time.perf_counter()
            await page.mouse.click(x, y)
            shot = await page.screenshot(type="jpeg", quality=80)
            t2 = time.perf_counter()
            assert obs.error is None and obs.screenshot is not None and obs.screenshot.width == 1280 and shot
            if i >= args.warmup:
                cua_ms.append(1000 * (t1 - t0))
                pw_ms.append(1000 * (t2 - t1))
                sizes.append(len(obs.screenshot.data))
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


if __name__ == "__main__":
    asyncio.run(main())
