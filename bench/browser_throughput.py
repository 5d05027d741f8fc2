"""Aggregate act -> observation throughput: 8 shared-mode browser sandboxes on one server,
driven at once over one websocket connection, with full observations (JPEG screenshot,
URL and title, accessibility tree).

Each driver loops `act(Click)` on a todo-app page (alternating between a click that
changes nothing and one that ticks a checkbox, which posts a form and loads the page
again) for a fixed wall-clock window after a warm-up. The page lists all of a list's
todos, done or not, so each tick moves a row and the page keeps its size (41 rows): the
work per step stays the same however long the run. (Under the default "open" filter
every tick removed a row, and the steps got cheaper as the run went on.) The server runs
in its own process, as deployed, unless `--in-process` puts it in this one.

Besides the rate, it reports the CPU time every process of the run (this one, the
server, Playwright's driver, Chromium, the app services) spent per step in the window,
by process name: on a machine shared with other work the rate says little, while CPU
per step says what a step costs and where (`cores / cpu_per_step` bounds the rate). The
line `chromium_bound_steps_per_s=` is that bound from Chromium's processes alone, in cua's
windows: no kit driving this Chromium with these observations steps faster on this machine.

Reference, in the same run, in turn with cua (`--rounds` windows each, alternating, so
that a drift in the machine's speed hits both; the ratio is the median of the windows'
ratios): raw public Playwright on the same Chromium build and switches, 8 pages of one
browser doing the same work with nothing in between: the same clicks (it is told which one
navigates and waits for that load instead of detecting settling), then the same
observation over CDP (JPEG q80 screenshot, title, and, when the page changed,
`Accessibility.getFullAXTree` plus `DOMSnapshot.captureSnapshot` for boxes). It shows
what the observations themselves cost on this machine: the floor under any kit built on
Playwright that captures every screen. (cua sends the last capture again when its settle
finds the screen unchanged, as after the click that changes nothing; raw Playwright has no
such detection, and told only that the page did not change it could not know whether a
hover look did.)

    python bench/browser_throughput.py [--sandboxes 8] [--seconds 20] [--rounds 4] [--no-axtree] [--no-reference]
        [--in-process]

Last line: steps_per_s_at_8=<aggregate steps per second>.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from _apps import host_app  # bench/ is this script's folder
from _proc import argv, process_tree
from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

import cua
from cua.actions import Click
from cua.client import RemoteSandbox
from cua.observation import ObserveOptions
from cua.state import DomQuery
from cua.tasks.apps import service as app_service

#: All of list 4's todos, done or not: a tick moves a row, and the page keeps its 41 rows.
PAGE = "/lists/4?show=all"
SCREENSHOT = {"format": "jpeg", "quality": 80, "optimizeForSpeed": True}
#: Captures the raw reference had to take again (see raw_step).
RAW_RETRIES = [0]


def _python_role(pid: int) -> str:
    """Python processes told apart: the bench (client), the server, the app services."""
    args = argv(pid)
    if not args:
        return "python"
    if b"cua.server" in args:
        return "server"
    if b"cua.tasks.apps.serve" in args or b"cua.tasks.apps.multiserve" in args:
        return "app-services"
    return "bench-client" if pid == os.getpid() else "python"


def cpu_by_process() -> dict[int, tuple[str, float]]:
    """{pid: (name, CPU seconds)} for this process and all its descendants."""
    return {p.pid: (_python_role(p.pid) if p.name.startswith("python") else p.name, p.cpu_s)
            for p in process_tree(os.getpid())}


def cpu_delta(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    by_name: dict[str, float] = {}
    for pid, (name, cpu) in after.items():
        by_name[name] = by_name.get(name, 0.0) + cpu - before.get(pid, (name, 0.0))[1]
    return by_name


@contextlib.asynccontextmanager
async def server(in_process: bool, max_sandboxes: int) -> AsyncIterator[tuple[str, str | None]]:
    from cua.server.app import serve_in_background, serve_in_subprocess

    cm = (serve_in_background(max_sandboxes=max_sandboxes) if in_process
          else serve_in_subprocess(max_sandboxes=max_sandboxes))
    async with cm as running:
        yield running.url, running.token


async def targets(sb: RemoteSandbox) -> list[tuple[float, float]]:
    heading, toggle = await sb.query([DomQuery(selector="h1", prop="bbox"),
                                      DomQuery(selector="tr.todo input.toggle", prop="bbox")])
    points = []
    for box in (heading.value, toggle.value):
        points.append((box["x"] + min(4.0, box["width"] / 2), box["y"] + box["height"] / 2))
    return points


Step = Callable[[int], Awaitable[None]]


async def drive(step: Step, start: float, stop: float, latencies: list[float]) -> int:
    """Call `step(i)` for i = 0, 1, ... until `stop`; count the steps completed inside [start, stop)."""
    steps = 0
    i = 0
    while True:
        t0 = time.perf_counter()
        await step(i)
        i += 1
        t1 = time.perf_counter()
        if t1 >= stop:
            return steps
        if t1 >= start:
            steps += 1
            latencies.append(1000 * (t1 - t0))


def cua_step(sb: RemoteSandbox, points: list[tuple[float, float]], observe: ObserveOptions) -> Step:
    async def step(i: int) -> None:
        x, y = points[i % len(points)]
        obs = await sb.act(Click(x=x, y=y), observe=observe)
        if obs.error is not None or obs.screenshot is None or obs.url is None or (observe.axtree and not obs.axtree):
            raise RuntimeError(f"incomplete observation from {sb.id}: {obs.error}")
    return step


def raw_step(page: Page, cdp: CDPSession, points: list[tuple[float, float]], axtree: bool) -> Step:
    """Point 1 (the checkbox) posts a form and loads the page again; point 0 changes nothing."""
    async def step(i: int) -> None:
        x, y = points[i % len(points)]
        navigates = i % len(points) == 1
        if navigates:
            async with page.expect_navigation(wait_until="load"):
                await page.mouse.click(x, y)
        else:
            await page.mouse.click(x, y)
        reads = [capture(), page.title()]
        if axtree and navigates:
            reads += [cdp.send("Accessibility.getFullAXTree"), cdp.send("DOMSnapshot.captureSnapshot", {"computedStyles": []})]
        shot, *_ = await asyncio.gather(*reads)
        if not shot["data"] or not page.url:
            raise RuntimeError("incomplete raw observation")

    async def capture() -> dict[str, Any]:
        """Chromium sometimes refuses a capture just after a load ("Unable to capture
        screenshot"); like the sandbox, take it again once the page has loaded and drawn a
        frame (up to three tries)."""
        for attempt in range(3):
            try:
                return await cdp.send("Page.captureScreenshot", SCREENSHOT)
            except PlaywrightError:
                if attempt == 2:
                    raise
                RAW_RETRIES[0] += 1
                await page.wait_for_load_state("load")
                await page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")
        raise AssertionError("unreachable")
    return step


async def cpu_over(start: float, stop: float) -> dict[str, float]:
    """CPU seconds by process name spent in the window [start, stop)."""
    await asyncio.sleep(max(0.0, start - time.perf_counter()))  # the window's edges are times
    before = cpu_by_process()
    await asyncio.sleep(max(0.0, stop - time.perf_counter()))
    return cpu_delta(before, cpu_by_process())


@dataclass
class Phase:
    """One measured window: steps per driver, latencies, and CPU by process name."""

    counts: list[int]
    latencies: list[float]
    cpu: dict[str, float]
    seconds: float

    @property
    def rate(self) -> float:
        return sum(self.counts) / self.seconds

    @property
    def cpu_ms_per_step(self) -> float:
        return 1000 * sum(v for v in self.cpu.values() if v > 0) / max(1, sum(self.counts))

    @property
    def chromium_ms_per_step(self) -> float:
        """Chromium's own share: the page's work (loads, paint) and the observation's (the
        capture, the tree), which no kit built on this browser takes out."""
        return 1000 * sum(v for n, v in self.cpu.items() if n.startswith("chrom") and v > 0) / max(1, sum(self.counts))

    def report(self, title: str) -> None:
        total = sum(self.counts)
        print(f"{title}: {self.rate:.2f} steps/s; steps per driver {self.counts}")
        if not total:
            return
        ordered = sorted(self.latencies)
        print(f"  step latency: p50 {ordered[len(ordered) // 2]:.1f} ms  p95 {ordered[int(0.95 * (len(ordered) - 1))]:.1f} ms"
              f"  mean {statistics.mean(ordered):.1f} ms")
        per_step = {name: 1000 * sec / total for name, sec in sorted(self.cpu.items(), key=lambda kv: -kv[1]) if sec > 0}
        print(f"  CPU per step: {self.cpu_ms_per_step:.0f} ms (" + ", ".join(f"{n} {v:.0f}" for n, v in per_step.items())
              + f"); on {os.cpu_count()} idle cores that bounds the rate at "
              f"{1000 * (os.cpu_count() or 1) / self.cpu_ms_per_step:.1f} steps/s")
        if self.chromium_ms_per_step > 0:
            print(f"  Chromium alone: {self.chromium_ms_per_step:.0f} ms per step, which on {os.cpu_count()} idle cores "
                  f"bounds the rate at {1000 * (os.cpu_count() or 1) / self.chromium_ms_per_step:.1f} steps/s")


async def measure(steps: list[Step], warmup: float, seconds: float) -> Phase:
    latencies: list[float] = []
    now = time.perf_counter()
    start, stop = now + warmup, now + warmup + seconds
    cpu, *counts = await asyncio.gather(cpu_over(start, stop), *(drive(step, start, stop, latencies) for step in steps))
    return Phase(counts=list(counts), latencies=latencies, cpu=cpu, seconds=seconds)


@contextlib.asynccontextmanager
async def cua_steps(args: argparse.Namespace, observe: ObserveOptions) -> AsyncIterator[list[Step]]:
    config = {"isolation": args.isolation, "start_url": PAGE, "services": [app_service("todo")]}
    async with server(args.in_process, args.sandboxes) as (url, token), \
            cua.connect(url, token, default_timeout=120) as client:
        sandboxes = []
        for _ in range(args.sandboxes):  # one by one: startup is not what this measures
            sandboxes.append(await client.create("browser", config=config))
        yield [cua_step(sb, await targets(sb), observe) for sb in sandboxes]
        await asyncio.gather(*(sb.close() for sb in sandboxes))


@contextlib.asynccontextmanager
async def raw_steps(args: argparse.Namespace) -> AsyncIterator[list[Step]]:
    from playwright.async_api import async_playwright

    from cua.sandboxes.browser.launcher import BASE_ARGS, find_executable

    async with host_app() as app_url, async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_executable().path, args=list(BASE_ARGS))
        steps = []
        for _ in range(args.sandboxes):
            context = await browser.new_context(viewport={"width": 1280, "height": 720})
            page = await context.new_page()
            await page.goto(app_url + PAGE)
            cdp = await context.new_cdp_session(page)
            points = []
            for selector in ("h1", "tr.todo input.toggle"):
                box = await page.locator(selector).first.bounding_box()
                assert box is not None
                points.append((box["x"] + min(4.0, box["width"] / 2), box["y"] + box["height"] / 2))
            steps.append(raw_step(page, cdp, points, args.axtree))
        yield steps
        await browser.close()


def merged(phases: list[Phase]) -> Phase:
    """The windows of one side as one phase."""
    cpu: dict[str, float] = {}
    for phase in phases:
        for name, sec in phase.cpu.items():
            cpu[name] = cpu.get(name, 0.0) + sec
    counts = [sum(c) for c in zip(*(p.counts for p in phases), strict=True)]
    return Phase(counts=counts, latencies=[x for p in phases for x in p.latencies], cpu=cpu,
                 seconds=sum(p.seconds for p in phases))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sandboxes", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--isolation", default="shared", choices=["shared", "container"])
    parser.add_argument("--in-process", action="store_true", help="run the server in this process's event loop")
    parser.add_argument("--no-axtree", dest="axtree", action="store_false",
                        help="observe without the accessibility tree (screenshot, URL and title only)")
    parser.add_argument("--no-reference", dest="reference", action="store_false",
                        help="skip the raw Playwright reference")
    parser.add_argument("--rounds", type=int, default=4,
                        help="windows per side, cua and raw in turn, so that a drift in the machine's speed hits both")
    args = parser.parse_args()

    observe = ObserveOptions(format="jpeg", quality=80, axtree=args.axtree)
    what = "jpeg q80 + url/title" + (" + axtree" if args.axtree else "")
    rounds = args.rounds if args.reference else 1
    window = args.seconds / rounds
    print(f"{args.sandboxes} drivers at once, {args.seconds:.0f} s in all"
          + (f" as {rounds} windows of {window:.0f} s, cua and raw in turn," if rounds > 1 else "")
          + f" after {args.warmup:.0f} s warm-up; observations: {what}; page {PAGE} (41 rows)")
    cua_phases: list[Phase] = []
    raw_phases: list[Phase] = []
    async with contextlib.AsyncExitStack() as stack:
        cua_drivers = await stack.enter_async_context(cua_steps(args, observe))
        raw_drivers = await stack.enter_async_context(raw_steps(args)) if args.reference else []
        for i in range(rounds):
            warmup = args.warmup if i == 0 else 1.0  # a window after the other side's: a second to get going
            cua_phases.append(await measure(cua_drivers, warmup, window))
            if raw_drivers:
                raw_phases.append(await measure(raw_drivers, warmup, window))
    cua_phase = merged(cua_phases)
    cua_phase.report(f"cua: {args.sandboxes} {args.isolation} sandboxes, one server "
                     f"({'in this process' if args.in_process else 'own process'}), one websocket")
    if raw_phases:
        raw_phase = merged(raw_phases)
        raw_phase.report(f"raw Playwright: {args.sandboxes} pages of one browser, in this process"
                         f" ({RAW_RETRIES[0]} captures taken again)")
        ratios = [c.rate / r.rate for c, r in zip(cua_phases, raw_phases, strict=True)]
        cpu_ratios = [c.cpu_ms_per_step / r.cpu_ms_per_step for c, r in zip(cua_phases, raw_phases, strict=True)]
        print(f"per-window throughput ratios cua/raw {[round(x, 3) for x in ratios]}")
        print(f"throughput ratio cua/raw={statistics.median(ratios):.3f}; "
              f"CPU per step ratio cua/raw={statistics.median(cpu_ratios):.3f} (medians over the windows)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"chromium_bound_steps_per_s={1000 * (os.cpu_count() or 1) / max(1e-9, cua_phase.chromium_ms_per_step):.1f}")
    print(f"steps_per_s_at_{args.sandboxes}={cua_phase.rate:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
