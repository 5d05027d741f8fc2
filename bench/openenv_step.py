"""OpenEnv step speed (issue 34): one step through OpenEnv's websocket (OpenEnv's own client,
`CuaEnvClient`, over `cua openenv serve`'s app) against the same step through cua's own
protocol (`cua.client` over `cua serve`), same task, same sandbox config, same observation
(JPEG q80 at the task's frame), in the same run. Both servers run in this process's event
loop with their sandboxes in process, and both steps go through the same episode layer
(`Episode` and `RewardAccount`, sparse reward): on the native side in the client, on the
OpenEnv side in the server, so what differs is only OpenEnv's protocol and models. The two
step one by one in turn, who goes first alternating, so machine noise hits both alike; an
episode that ends is reset (not timed). Each step is a click at (5, 5), which changes nothing.

    python bench/openenv_step.py [--steps 1000] [--warmup 10] [--kind fake|browser|both]

Prints, per task, `openenv_step_p50_ms_<kind>=`, `native_step_p50_ms_<kind>=`,
`openenv_step_ratio_<kind>=`, and last `openenv_step_ratio_vs_native=` (over the browser
task when it ran, else the fake one; the line says which). Goal: ratio <= 1.15.

Figures, 2026-12-06, this 2-core machine shared with other engineers' runs (load 11-15),
p50 ms OpenEnv / native (ratio):

    before (c9bbaf7..67cd580: the OpenEnv server's websockets deflated), 200 steps, 14:09-14:16:
      fake     10.47 / 6.29 (1.66);  11.53 / 7.92 (1.46)
      browser   9.40 / 9.67 (0.97)
    after (996c413: not deflated, as `cua serve`'s), 1000 steps, 14:19-14:21, load 11.2-14.7:
      fake      7.31 / 7.36 (0.99);   4.58 / 5.29 (0.87);   3.58 / 4.13 (0.87)
      browser   9.49 / 8.57 (1.11);   7.91 / 9.33 (0.85);   7.21 / 7.89 (0.91)

What the OpenEnv step cost over the native one (cProfile of 100 steps of each, fake kind):
permessage-deflate, which uvicorn negotiates by default and OpenEnv's client (websockets)
offers: zlib compressing each reply's base64 JPEG (~1.2 ms a step under the profiler) and
inflating it in the client (~0.3 ms); `cua serve` runs uncompressed. The todo page's JPEG is
mostly white and deflates cheaply, hence the browser task's small gap before. What remains
on the OpenEnv side is OpenEnv's own server loop (its session bookkeeping, re-validating
the observation dict into its response model, JSON of the base64) and the client's JSON
parse, ~0.5 ms a step under the profiler; the screenshot is encoded once, by the sandbox,
and base64 once, and the step runs on the event loop (no thread hop). That is about what
cua's own protocol spends (its read and write loops, a timeout per request), so the two
are at parity within this machine's noise (run to run 0.85-1.11 at load 11-15).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from typing import Any

from _latency import p50, spread  # bench/ is this script's folder

import cua
from cua.actions import Click
from cua.episode.episode import Episode
from cua.episode.handle import SandboxHandle
from cua.episode.local import open_local
from cua.episode.openers import open_remote
from cua.episode.transition import RewardAccount
from cua.hubs.openenv.client import CuaEnvClient
from cua.hubs.openenv.models import CuaAction
from cua.hubs.openenv.server import serve_openenv
from cua.observation import ObserveOptions
from cua.server.app import serve_in_background
from cua.task import TaskInstance
from cua.tasks.registry import get_template

TASKS = {"fake": "fake.set_counter@1", "browser": "todo.mark_done@1"}
SEED = 3
OBSERVE = ObserveOptions(format="jpeg", quality=80)
ACTION = Click(x=5, y=5)


def config_of(instance: TaskInstance) -> dict[str, Any]:
    config = dict(instance.sandbox_config)
    if instance.sandbox_kind == "browser":
        config["isolation"] = "shared"
    return config


@contextlib.asynccontextmanager
async def shared_local(kind: str, config: dict[str, Any]) -> AsyncIterator[SandboxHandle]:
    """The OpenEnv server's opener: a local sandbox, a browser one in shared isolation."""
    if kind == "browser":
        config = {**config, "isolation": "shared"}
    async with open_local(kind, config) as handle:
        yield handle


class Native:
    """cua's protocol: the episode layer over a `cua.client` sandbox on `cua serve`."""

    def __init__(self, handle: SandboxHandle, instance: TaskInstance) -> None:
        self.handle, self.instance = handle, instance
        self.account: RewardAccount | None = None
        self.samples: list[float] = []

    async def reset(self) -> None:
        episode = Episode(self.handle, self.instance, observe=OBSERVE, producer="rl")
        await episode.reset()
        self.account = RewardAccount.at_start(episode, "sparse")

    async def step(self, *, keep: bool) -> None:
        if self.account is None or self.account.episode.over:
            await self.reset()
        assert self.account is not None
        started = time.perf_counter()
        t = await self.account.step(ACTION)
        took = (time.perf_counter() - started) * 1000
        if t.observation.screenshot is None:
            raise RuntimeError("native: a step without a screenshot")
        if keep:
            self.samples.append(took)


class OpenEnv:
    """OpenEnv's websocket, with OpenEnv's own client."""

    def __init__(self, env: CuaEnvClient, task: str) -> None:
        self.env, self.task = env, task
        self.done = True
        self.samples: list[float] = []

    async def step(self, *, keep: bool) -> None:
        if self.done:
            await self.env.reset(task=self.task, seed=SEED)
        started = time.perf_counter()
        result = await self.env.step(CuaAction(action=ACTION))
        took = (time.perf_counter() - started) * 1000
        if result.observation.screenshot is None:
            raise RuntimeError("openenv: a step without a screenshot")
        self.done = result.done
        if keep:
            self.samples.append(took)


async def bench(kind: str, steps: int, warmup: int, profile: str | None) -> tuple[list[float], list[float]]:
    task = TASKS[kind]
    instance = get_template(task).instantiate(SEED)
    async with contextlib.AsyncExitStack() as stack:
        running = await stack.enter_async_context(serve_in_background(max_sandboxes=2))
        client = await stack.enter_async_context(cua.connect(running[0], running[1], default_timeout=120))
        handle = await stack.enter_async_context(open_remote(client, instance.sandbox_kind, config_of(instance)))
        oe = await stack.enter_async_context(serve_openenv(opener=shared_local, observe=OBSERVE, max_sessions=2))
        env = CuaEnvClient(oe.url, token=oe.token, message_timeout_s=120)
        await stack.enter_async_context(env)
        pair: tuple[Native | OpenEnv, Native | OpenEnv] = (Native(handle, instance), OpenEnv(env, task))
        profiler: Any = None
        for i in range(warmup + steps):
            if i == warmup and profile:
                import cProfile

                profiler = cProfile.Profile()
                profiler.enable()
            for side in (pair if i % 2 else pair[::-1]):  # alternate who goes first
                await side.step(keep=i >= warmup)
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile)
        return pair[1].samples, pair[0].samples


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--kind", choices=("fake", "browser", "both"), default="both")
    parser.add_argument("--profile", help="write a cProfile of the timed steps (both sides) here")
    args = parser.parse_args()
    kinds = ("fake", "browser") if args.kind == "both" else (args.kind,)
    ratios: dict[str, float] = {}
    print(f"load {os.getloadavg()[0]:.1f}", flush=True)
    for kind in kinds:
        openenv_ms, native_ms = await bench(kind, args.steps, args.warmup, args.profile)
        ratios[kind] = p50(openenv_ms) / p50(native_ms)
        print(f"openenv_step_p50_ms_{kind}={p50(openenv_ms):.2f}  ({spread(openenv_ms)})", flush=True)
        print(f"native_step_p50_ms_{kind}={p50(native_ms):.2f}  ({spread(native_ms)})", flush=True)
        print(f"openenv_step_ratio_{kind}={ratios[kind]:.2f}", flush=True)
    over = "browser" if "browser" in ratios else "fake"
    print(f"load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"openenv_step_ratio_vs_native={ratios[over]:.2f}  (over the {over} task, {TASKS[over]})")


if __name__ == "__main__":
    asyncio.run(main())
