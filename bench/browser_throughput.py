"""Aggregate act -> observation throughput: 8 shared-mode browser sandboxes on one server,
driven at once over one websocket connection, with full observations (JPEG screenshot,
URL and title, accessibility tree).

Each driver loops `act(Click)` on a todo-app page (alternating between a click that
changes nothing and one that ticks a checkbox, which posts a form and loads the page
again) for a fixed wall-clock window after a warm-up. The page lists all of a list's
todos, done or not, so each tick moves a row and the page keeps its size (41 rows): the
work per step stays the same however long the run. (Under the default "open" filter
every tick removed a row, and the steps got cheaper as the run went on.) The server runs in its own process by default,
as deployed.

Besides the rate, it reports the CPU time every process of the run (this one, the
server, Playwright's driver, Chromium, the app services) spent per step in the window,
by process name: on a machine shared with other work the rate says little, while CPU
per step says what a step costs and where (`cores / cpu_per_step` bounds the rate).

    python bench/browser_throughput.py [--sandboxes 8] [--seconds 20] [--in-process]

Last line: steps_per_s_at_8=<aggregate steps per second>.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator

import cua
from cua.actions import Click
from cua.client import RemoteSandbox
from cua.observation import ObserveOptions
from cua.state import DomQuery

APP = [sys.executable, "-m", "cua.tasks.apps.serve", "todo"]
FULL = ObserveOptions(format="jpeg", quality=80, axtree=True)


_HZ = os.sysconf("SC_CLK_TCK")


def _python_role(pid: int) -> str:
    """Python processes told apart: the bench (client), the server, the app services."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return "python"
    if b"cua.server" in argv:
        return "server"
    if b"cua.tasks.apps.serve" in argv:
        return "app-services"
    return "bench-client" if pid == os.getpid() else "python"


def cpu_by_process() -> dict[int, tuple[str, float]]:
    """{pid: (name, CPU seconds)} for this process and all its descendants."""
    children: dict[int, list[int]] = {}
    stats: dict[int, tuple[str, float]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # exited meanwhile
        name, rest = stat.split("(", 1)[1].rsplit(")", 1)
        fields = rest.split()
        if name.startswith("python"):
            name = _python_role(int(entry.name))
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        stats[int(entry.name)] = (name, (int(fields[11]) + int(fields[12])) / _HZ)
    out: dict[int, tuple[str, float]] = {}
    stack = [os.getpid()]
    while stack:
        pid = stack.pop()
        if pid in stats:
            out[pid] = stats[pid]
        stack += children.get(pid, [])
    return out


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


async def drive(sb: RemoteSandbox, points: list[tuple[float, float]], start: float, stop: float,
                latencies: list[float]) -> int:
    """Step until `stop`; count the steps completed inside [start, stop)."""
    steps = 0
    i = 0
    while True:
        x, y = points[i % len(points)]
        i += 1
        t0 = time.perf_counter()
        obs = await sb.act(Click(x=x, y=y), observe=FULL)
        t1 = time.perf_counter()
        if obs.error is not None or obs.screenshot is None or not obs.axtree or obs.url is None:
            raise RuntimeError(f"incomplete observation from {sb.id}: {obs.error}")
        if t1 >= stop:
            return steps
        if t1 >= start:
            steps += 1
            latencies.append(1000 * (t1 - t0))


async def cpu_over(start: float, stop: float) -> dict[str, float]:
    """CPU seconds by process name spent in the window [start, stop)."""
    await asyncio.sleep(max(0.0, start - time.perf_counter()))  # the window's edges are times
    before = cpu_by_process()
    await asyncio.sleep(max(0.0, stop - time.perf_counter()))
    return cpu_delta(before, cpu_by_process())


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sandboxes", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--isolation", default="shared", choices=["shared", "container"])
    parser.add_argument("--in-process", action="store_true", help="run the server in this process's event loop")
    args = parser.parse_args()

    config = {"isolation": args.isolation, "start_url": "/lists/4?show=all", "services": [{"name": "app", "argv": APP}]}
    async with server(args.in_process, args.sandboxes) as (url, token), \
            cua.connect(url, token, default_timeout=120) as client:
        sandboxes = []
        for _ in range(args.sandboxes):  # one by one: startup is not what this measures
            sandboxes.append(await client.create("browser", config=config))
        points = [await targets(sb) for sb in sandboxes]
        latencies: list[float] = []
        now = time.perf_counter()
        start, stop = now + args.warmup, now + args.warmup + args.seconds
        cpu, *counts = await asyncio.gather(
            cpu_over(start, stop), *(drive(sb, pts, start, stop, latencies) for sb, pts in zip(sandboxes, points)))
        await asyncio.gather(*(sb.close() for sb in sandboxes))

    total = sum(counts)
    rate = total / args.seconds
    ordered = sorted(latencies)
    print(f"{args.sandboxes} {args.isolation} sandboxes, one server "
          f"({'in this process' if args.in_process else 'own process'}), one connection; "
          f"{args.seconds:.0f} s window after {args.warmup:.0f} s warm-up; full observations (jpeg q80 + url/title + axtree)")
    print(f"steps per sandbox: {counts}")
    if ordered:
        print(f"step latency: p50 {ordered[len(ordered) // 2]:.1f} ms  p95 {ordered[int(0.95 * (len(ordered) - 1))]:.1f} ms"
              f"  mean {statistics.mean(ordered):.1f} ms")
    if total:
        per_step = {name: 1000 * sec / total for name, sec in sorted(cpu.items(), key=lambda kv: -kv[1]) if sec > 0}
        cpu_ms = sum(per_step.values())
        print(f"CPU per step: {cpu_ms:.0f} ms (" + ", ".join(f"{n} {v:.0f}" for n, v in per_step.items()) + ")")
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; with {os.cpu_count()} idle cores "
              f"the CPU cost bounds the rate at {1000 * (os.cpu_count() or 1) / cpu_ms:.1f} steps/s")
    print(f"steps_per_s_at_{args.sandboxes}={rate:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
