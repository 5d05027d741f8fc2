"""Soak: memory and step latency of a long-running server under steady RL-like load.

A real server (`python -m cua.server`, its own process, as deployed) serves `--sandboxes`
browser sandboxes with the todo app; one client per sandbox loops through an episode
shape: reset, then steps (a click that toggles a todo, typing, a scroll, each observed
with a JPEG), a SQL state read every 10 steps, a snapshot + restore + delete every 60.
Beside them, every 30 s a short-lived connection creates a sandbox, streams a few
frames and leaves without closing (the server must clean up after it), and another
connects, sends 60 observes and never reads (the server must drop it, not buffer it).

Every 10 s it samples the server's own RSS and the PSS of its whole process tree
(browsers, app host, services), the RSS of each role in the tree (the server's Python,
Playwright's node driver, Chromium, the services), and the tree's CPU seconds. At the
end it compares the first and the last `--window` minutes: median server RSS, median
tree PSS, the step latency p50, and the tree's CPU seconds per step (on a shared,
loaded machine latency follows the neighbours' load; CPU per step follows the server's
own work).

    python bench/soak.py --minutes 30 [--sandboxes 2] [--isolation shared] [--window 5]

Last line: soak rss_last_vs_first=<ratio> tree_pss_last_vs_first=<ratio> step_p50_last_vs_first=<ratio>
cpu_per_step_last_vs_first=<ratio> driver_rss_last_vs_first=<ratio> chromium_rss_last_vs_first=<ratio>
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from _proc import argv, memory_sample, process_tree, rss_bytes  # bench/ is this script's folder

import cua
from cua.actions import Click, Key, Scroll, Type
from cua.errors import CuaError
from cua.observation import ObserveOptions
from cua.server.app import serve_in_subprocess
from cua.state import DomQuery, SqlQuery
from cua.tasks.apps import service as app_service

TODO = app_service("todo")
OBSERVE = ObserveOptions(format="jpeg", quality=80)


@dataclass
class Record:
    started: float = field(default_factory=time.monotonic)
    steps: list[tuple[float, float]] = field(default_factory=list)  # (t, seconds)
    samples: list[tuple[float, int, int]] = field(default_factory=list)  # (t, server rss, tree pss) bytes
    #: (t, {role: rss bytes}, tree CPU seconds so far)
    roles: list[tuple[float, dict[str, int], float]] = field(default_factory=list)
    #: (t, the machine's 1-minute load average): what step latency on a shared machine follows
    load: list[tuple[float, float]] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    episodes: int = 0
    churned: int = 0
    dropped_readers: int = 0

    def now(self) -> float:
        return time.monotonic() - self.started

    def error(self, exc: BaseException) -> None:
        key = exc.code.value if isinstance(exc, CuaError) else type(exc).__name__
        self.errors[key] = self.errors.get(key, 0) + 1


def _server_pid() -> int:
    me = os.getpid()
    for proc in process_tree(me):
        if proc.pid != me and b"cua.server" in argv(proc.pid):
            return proc.pid
    raise RuntimeError("the server process was not found")


ROLES = ("server", "driver", "chromium", "services")


def _role(pid: int, server: int) -> str:
    if pid == server:
        return "server"
    line = b" ".join(argv(pid))
    if b"run-driver" in line:
        return "driver"
    return "chromium" if b"chrom" in line or b"headless_shell" in line else "services"


_HZ = os.sysconf("SC_CLK_TCK")


def _cpu_with_reaped(pid: int) -> float:
    """CPU seconds of `pid` and of its children it has reaped (renderers of closed contexts
    exit; their CPU time then lives on in their parent's cutime/cstime)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(v) for v in fields[11:15]) / _HZ


def roles_sample(server: int) -> tuple[dict[str, int], float]:
    """RSS by role in the server's tree, and the tree's CPU seconds so far."""
    rss = dict.fromkeys(ROLES, 0)
    cpu = 0.0
    for proc in process_tree(server):
        rss[_role(proc.pid, server)] += rss_bytes(proc.pid)
        cpu += _cpu_with_reaped(proc.pid)
    return rss, cpu


async def _center(sb: Any, selector: str) -> tuple[float, float]:
    (res,) = await sb.query([DomQuery(selector=selector, prop="bbox")])
    box = res.value
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


async def worker(url: str, token: str | None, config: dict[str, Any], rec: Record, stop: asyncio.Event) -> None:
    async with cua.connect(url, token, default_timeout=120) as client:
        sb = await client.create("browser", config=config)
        while not stop.is_set():
            try:
                await sb.reset(seed=rec.episodes % 7)
                toggle = await _center(sb, "tr.todo input.toggle")
                field_at = await _center(sb, "input[name=title]")
                for step in range(60):
                    if stop.is_set():
                        break
                    kind = step % 4
                    action = (Click(x=toggle[0], y=toggle[1]) if kind == 0 else
                              Click(x=field_at[0], y=field_at[1]) if kind == 1 else
                              Type(text="soak ") if kind == 2 else Scroll(x=field_at[0], y=field_at[1], dy=120))
                    started = time.perf_counter()
                    await sb.act(action, observe=OBSERVE)
                    rec.steps.append((rec.now(), time.perf_counter() - started))
                    if step % 10 == 9:
                        await sb.query([SqlQuery(query="SELECT COUNT(*) AS n FROM todos")])
                await sb.act(Key(keys=["Escape"]))
                snap = await sb.snapshot()
                await sb.restore(snap)
                await sb.delete_snapshot(snap)
                rec.episodes += 1
            except CuaError as exc:
                rec.error(exc)
                if not sb.alive:
                    sb = await client.create("browser", config=config)
        await sb.close()


async def churn(url: str, token: str | None, config: dict[str, Any], rec: Record, stop: asyncio.Event) -> None:
    """Connections that leave without cleaning up, and one that never reads."""
    from websockets.asyncio.client import connect as ws_connect

    while not stop.is_set():
        try:
            async with cua.connect(url, token, default_timeout=120) as client:
                sb = await client.create("browser", config={"isolation": config.get("isolation", "shared")})
                frames = sb.stream(max_fps=5)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(3):  # a still page sends few frames
                        async for _ in frames:
                            rec.churned += 1
                await frames.aclose()  # type: ignore[attr-defined]
            # a reader that stops reading
            async with ws_connect(url, additional_headers={"Authorization": f"Bearer {token}"}, max_size=None) as ws:
                await ws.send(json.dumps({"type": "hello", "id": 1}))
                await ws.recv()
                await ws.send(json.dumps({"type": "create", "id": 2, "kind": "browser",
                                          "config": {"isolation": config.get("isolation", "shared")}}))
                made: dict[str, Any] = {}
                while made.get("id") != 2:
                    msg = await ws.recv()
                    made = json.loads(msg) if isinstance(msg, str) else {}
                sid = made["result"]["sandbox"]["id"]
                ws.transport.pause_reading()
                for rid in range(10, 70):
                    await ws.send(json.dumps({"type": "observe", "id": rid, "sandbox_id": sid,
                                              "options": {"format": "png"}}))
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), 20)
            rec.dropped_readers += 1
        except Exception as exc:  # noqa: BLE001 -- counted; the soak goes on
            rec.error(exc)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), 10)


async def sampler(pid: int, rec: Record, stop: asyncio.Event) -> None:
    last_print = 0.0
    while not stop.is_set():
        rss, pss = await asyncio.to_thread(memory_sample, pid)
        roles, cpu = await asyncio.to_thread(roles_sample, pid)
        rec.samples.append((rec.now(), rss, pss))
        rec.roles.append((rec.now(), roles, cpu))
        rec.load.append((rec.now(), os.getloadavg()[0]))
        t = rec.now()
        if t - last_print >= 60:
            last_print = t
            recent = [s for ts, s in rec.steps if ts > t - 60]
            p50 = statistics.median(recent) * 1000 if recent else float("nan")
            by_role = " ".join(f"{k} {v / 2**20:.0f}" for k, v in roles.items())
            print(f"[{t / 60:5.1f} min] server rss {rss / 2**20:7.1f} MiB  tree pss {pss / 2**20:7.1f} MiB  "
                  f"rss by role [{by_role}] MiB  tree cpu {cpu:.0f} s  "
                  f"steps/min {len(recent):4d}  step p50 {p50:6.1f} ms  episodes {rec.episodes}  "
                  f"errors {rec.errors}", flush=True)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), 10)


def window(rec: Record, lo: float, hi: float) -> tuple[float, float, float, int]:
    rss = [r for t, r, _ in rec.samples if lo <= t < hi]
    pss = [p for t, _, p in rec.samples if lo <= t < hi]
    steps = [s for t, s in rec.steps if lo <= t < hi]
    return (statistics.median(rss) if rss else 0.0, statistics.median(pss) if pss else 0.0,
            statistics.median(steps) if steps else 0.0, len(steps))


def role_medians(rec: Record, lo: float, hi: float) -> dict[str, float]:
    rows = [r for t, r, _ in rec.roles if lo <= t < hi]
    return {k: statistics.median(r[k] for r in rows) if rows else 0.0 for k in ROLES}


def cpu_per_step(rec: Record, lo: float, hi: float) -> float:
    """Tree CPU seconds per step between the first and the last sample in [lo, hi), from
    the first step on (the sandboxes' start is not a step's cost)."""
    lo = max(lo, rec.steps[0][0] if rec.steps else lo)
    rows = [(t, c) for t, _, c in rec.roles if lo <= t < hi]
    if len(rows) < 2:
        return 0.0
    (t0, c0), (t1, c1) = rows[0], rows[-1]
    steps = sum(1 for t, _ in rec.steps if t0 <= t < t1)
    return (c1 - c0) / steps if steps else 0.0


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--sandboxes", type=int, default=2)
    ap.add_argument("--isolation", choices=["shared", "container"], default="shared")
    ap.add_argument("--window", type=float, default=5.0, help="minutes compared at the start and the end")
    args = ap.parse_args()
    config = {"isolation": args.isolation, "services": [TODO], "start_url": "/lists/1"}
    rec = Record()
    stop = asyncio.Event()
    async with serve_in_subprocess(max_sandboxes=args.sandboxes + 4, idle_timeout=300) as (url, token):
        pid = _server_pid()
        tasks = [asyncio.create_task(worker(url, token, config, rec, stop)) for _ in range(args.sandboxes)]
        tasks += [asyncio.create_task(churn(url, token, config, rec, stop)), asyncio.create_task(sampler(pid, rec, stop))]
        rec.started = time.monotonic()
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.gather(*tasks)), timeout=args.minutes * 60)
        except TimeoutError:
            pass
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    total = rec.now()
    w = args.window * 60
    first = window(rec, 0, w)
    last = window(rec, max(w, total - w), total + 1)
    print(f"ran {total / 60:.1f} min: {len(rec.steps)} steps, {rec.episodes} episodes, {rec.churned} streamed "
          f"frames of churned connections, {rec.dropped_readers} never-reading clients, errors {rec.errors}")
    for name, (rss, pss, p50, n) in (("first", first), ("last", last)):
        print(f"{name} {args.window:g} min: server rss {rss / 2**20:.1f} MiB, tree pss {pss / 2**20:.1f} MiB, "
              f"step p50 {p50 * 1000:.1f} ms over {n} steps")

    spans = {"first": (0, w), "last": (max(w, total - w), total + 1)}
    roles = {name: role_medians(rec, *span) for name, span in spans.items()}
    cpu = {name: cpu_per_step(rec, *span) for name, span in spans.items()}
    for name in spans:
        load = [v for t, v in rec.load if spans[name][0] <= t < spans[name][1]]
        print(f"{name} {args.window:g} min: rss by role " + ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in roles[name].items())
              + f"; tree CPU per step {cpu[name] * 1000:.1f} ms; load average {statistics.median(load) if load else 0:.1f}")

    def ratio(a: float, b: float) -> float:
        return a / b if b else float("nan")

    print(f"soak rss_last_vs_first={ratio(last[0], first[0]):.3f} tree_pss_last_vs_first={ratio(last[1], first[1]):.3f} "
          f"step_p50_last_vs_first={ratio(last[2], first[2]):.3f} "
          f"cpu_per_step_last_vs_first={ratio(cpu['last'], cpu['first']):.3f} "
          f"driver_rss_last_vs_first={ratio(roles['last']['driver'], roles['first']['driver']):.3f} "
          f"chromium_rss_last_vs_first={ratio(roles['last']['chromium'], roles['first']['chromium']):.3f}")


if __name__ == "__main__":
    asyncio.run(main())
