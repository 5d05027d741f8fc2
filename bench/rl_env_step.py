"""`CuaEnv` step and reset cost with dense reward on the todo suite.

A seeded random policy (`ActionSpace.sample`: clicks, scrolls, typing, keys inside the
frame) steps `CuaEnv("todo.mark_done@1", reward="dense")`; every step reads the judge's
progress. Resets after the first reuse the sandbox (an app and page reset, not a launch).

    python bench/rl_env_step.py [--steps 100] [--server]   # --server: through a `cua serve` child

The same run also steps a sparse-reward env (no judge reads per step) as the reference:
`dense_over_sparse` is what dense reward costs on top of an act and its observation.

Last line: env_step_p50_ms=<x> env_reset_p50_ms=<after the first> env_first_reset_ms=<x> dense_over_sparse=<r>
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time

from cua.rl.env import CuaEnv

TASK = "todo.mark_done@1"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(steps: int, server: str | None, token: str | None, episode_len: int) -> None:
    dense = measure("dense", steps, server, token, episode_len)
    sparse = measure("sparse", steps, server, token, episode_len)
    step, resets, first = dense
    print(f"env_step_p50_ms={step:.1f} env_reset_p50_ms={resets:.1f} env_first_reset_ms={first:.0f} "
          f"dense_over_sparse={step / sparse[0]:.2f}")


def measure(reward: str, steps: int, server: str | None, token: str | None, episode_len: int
            ) -> tuple[float, float, float]:
    env = CuaEnv(TASK, reward=reward, server=server, token=token)  # type: ignore[arg-type]
    step_ms: list[float] = []
    reset_ms: list[float] = []
    try:
        env.action_space.seed(0)
        t = time.perf_counter()
        env.reset(seed=0)
        first = (time.perf_counter() - t) * 1000
        done, n, seed = False, 0, 1
        while len(step_ms) < steps:
            if done or n >= episode_len:
                t = time.perf_counter()
                env.reset(seed=seed)
                reset_ms.append((time.perf_counter() - t) * 1000)
                seed, n, done = seed + 1, 0, False
            action = env.action_space.sample()
            t = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            step_ms.append((time.perf_counter() - t) * 1000)
            assert "progress" in info or terminated or truncated or reward == "sparse"
            n += 1
            done = terminated or truncated
    finally:
        env.close()
    print(f"{reward}: steps {len(step_ms)}: p50 {statistics.median(step_ms):.1f} ms, p90 {pct(step_ms, 0.9):.1f} ms; "
          f"resets {len(reset_ms)}: p50 {statistics.median(reset_ms):.1f} ms; first reset {first:.0f} ms", flush=True)
    return statistics.median(step_ms), statistics.median(reset_ms), first


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--episode-len", type=int, default=10, help="steps before the next reset")
    ap.add_argument("--server", action="store_true", help="through a `cua serve` child process")
    args = ap.parse_args()
    if not args.server:
        run(args.steps, None, None, args.episode_len)
        return
    import asyncio

    from cua.server.app import serve_in_subprocess

    async def serve() -> None:
        async with serve_in_subprocess() as srv:
            await asyncio.to_thread(run, args.steps, srv.url, srv.token, args.episode_len)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


if __name__ == "__main__":
    main()
