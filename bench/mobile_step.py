"""Mobile act -> observation latency over the websocket against raw Playwright with the same
device emulation and CDP touch, in one run; and the mobile sandbox's restore latency.

cua: a mobile sandbox (Pixel 7, portrait) with the todo app open in the phone shell,
driven through a real server (its own process by default) over the websocket:
`act(Tap)` (CDP touch events) with settle detection on and a JPEG q80 412x915 screenshot.

Reference: raw async Playwright on the same Chromium build and switches, a context with the
same device emulation (viewport, pixel ratio, user agent, `is_mobile`, `has_touch`), the
same todo page served on the host: a CDP `Input.dispatchTouchEvent` start and end at the
same point, then `page.screenshot(type="jpeg", quality=80, scale="css")` (412x915, as cua's). The two alternate step by
step, so machine noise hits both alike. The tap lands on the page's heading (changes nothing).

Then restore: a snapshot of the phone with the todo app open at a list, restored
`--restores` times after a change; each restore's round trip through the client, its
observation included.

    python bench/mobile_step.py [--steps 200] [--warmup 20] [--restores 50] [--isolation shared]

Last lines: mobile_step_ratio_vs_playwright=<cua p50 / playwright p50> and mobile_restore_p50_ms=<p50>.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator

from _apps import host_app  # bench/ is this script's folder

import cua
from cua.actions import Nav, OpenApp, Tap
from cua.observation import ObserveOptions
from cua.state import DomQuery
from cua.tasks.apps import service as app_service

PAGE = "/lists/1"
OBSERVE = ObserveOptions(format="jpeg", quality=80)
DEVICE = "pixel_7"


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
    parser.add_argument("--restores", type=int, default=50)
    parser.add_argument("--isolation", default="container", choices=["container", "shared"])
    parser.add_argument("--in-process", action="store_true", help="run the server in this process's event loop")
    args = parser.parse_args()

    from playwright.async_api import async_playwright

    from cua.sandboxes.browser.launcher import BASE_ARGS, find_executable
    from cua.sandboxes.mobile.devices import DEVICES

    profile = DEVICES[DEVICE]
    size = profile.viewport("portrait")
    exe = find_executable()
    config = {"isolation": args.isolation, "device": DEVICE, "services": [app_service("todo", "todo")],
              "start_app": "todo"}
    async with server(args.in_process) as (url, token), cua.connect(url, token) as client, \
            host_app() as app_url, async_playwright() as pw:
        sandbox = await client.create("mobile", config=config, observe=OBSERVE)
        # the todo app at a list, as the reference shows it
        (link,) = await sandbox.query([DomQuery(selector="a[href='/lists/1']", prop="bbox", frame="iframe[name=todo]")])
        await sandbox.act(Tap(x=link.value["x"] + 8, y=link.value["y"] + link.value["height"] / 2))
        (box,) = await sandbox.query([DomQuery(selector="h1", prop="bbox", frame="iframe[name=todo]")])
        assert box.ok and box.value, box
        x, y = box.value["x"] + 4, box.value["y"] + box.value["height"] / 2

        browser = await pw.chromium.launch(executable_path=exe.path, args=list(BASE_ARGS))
        context = await browser.new_context(viewport={"width": size.width, "height": size.height},
                                            device_scale_factor=profile.device_scale_factor, is_mobile=True,
                                            has_touch=True, user_agent=profile.user_agent)
        page = await context.new_page()
        await page.goto(app_url + PAGE)
        cdp = await context.new_cdp_session(page)
        (ref_box,) = [await page.locator("h1").first.bounding_box()]
        assert ref_box is not None
        rx, ry = ref_box["x"] + 4, ref_box["y"] + ref_box["height"] / 2

        cua_ms: list[float] = []
        pw_ms: list[float] = []
        for i in range(args.warmup + args.steps):
            t0 = time.perf_counter()
            obs = await sandbox.act(Tap(x=x, y=y), observe=OBSERVE)
            t1 = time.perf_counter()
            await cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": rx, "y": ry}]})
            await cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
            shot = await page.screenshot(type="jpeg", quality=80, scale="css")
            t2 = time.perf_counter()
            assert obs.error is None and obs.screenshot is not None and obs.screenshot.width == size.width and shot
            if i >= args.warmup:
                cua_ms.append(1000 * (t1 - t0))
                pw_ms.append(1000 * (t2 - t1))
        await browser.close()

        # restore: the phone with todo open at a list (then left for the home screen)
        await sandbox.act(Nav(button="home"))
        await sandbox.act(OpenApp(name="todo"))
        ref = await sandbox.snapshot()
        await sandbox.act(Nav(button="back"))  # changed since the snapshot
        restore_ms: list[float] = []
        for _ in range(args.restores):
            t0 = time.perf_counter()
            obs = await sandbox.restore(ref, observe=OBSERVE)
            restore_ms.append(1000 * (time.perf_counter() - t0))
            assert obs.screenshot is not None
        (shell,) = await sandbox.query([{"kind": "app_state", "service": "shell"}])  # type: ignore[list-item]
        assert shell.value["open_app"] == "todo" and shell.value["url"].endswith(PAGE), shell
        await sandbox.close()

    print(f"browser: {exe.path} ({exe.source}); device {DEVICE} {size.width}x{size.height} "
          f"dpr {profile.device_scale_factor}; cua isolation={args.isolation}, server "
          f"{'in this process' if args.in_process else 'in its own process'}; {args.steps} steps after "
          f"{args.warmup} warm-up, alternating")
    for name, values in (("cua websocket", cua_ms), ("raw playwright", pw_ms), ("cua restore", restore_ms)):
        print(f"{name:>15}: p50 {pct(values, 0.5):6.2f} ms  p95 {pct(values, 0.95):6.2f} ms  "
              f"mean {statistics.mean(values):6.2f} ms")
    print(f"last restore timings (ms): {obs.timings_ms}")
    print(f"mobile_step_ratio_vs_playwright={pct(cua_ms, 0.5) / pct(pw_ms, 0.5):.3f}")
    print(f"mobile_restore_p50_ms={pct(restore_ms, 0.5):.1f}")


if __name__ == "__main__":
    asyncio.run(main())
