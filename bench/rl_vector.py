"""Vector env throughput: 16 shared browser sandboxes stepped together over one connection.

`CuaVectorEnv("todo.mark_done@1", num_envs=16, isolation="shared")` starts a `cua serve`
child; a seeded random policy (`ActionSpace.sample`) acts in every env each step, with
next-step autoreset. The figure is environment steps per second (transitions: 16 per
vector step), after a warm-up. Where the time goes is read from /proc: CPU seconds of
this process (client, JPEG decode), the server, its Chromium and its app host, against
the wall time of the two cores.

    python bench/rl_vector.py [--envs 16] [--steps 20] [--reward sparse|dense]

Last line: vector_steps_per_s_at_16=<x>
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

from _proc import process_tree

from cua.rl.vector import CuaVectorEnv


def cpu_by_group(root: int) -> dict[str, float]:
    out: dict[str, float] = collections.defaultdict(float)
    for proc in process_tree(root):
        if proc.pid == root:
            out["client (this process)"] += proc.cpu_s
        elif "chrom" in proc.name or "headless" in proc.name:
            out["chromium"] += proc.cpu_s
        elif proc.name in ("node",):
            out["playwright driver"] += proc.cpu_s
        elif "python" in proc.name or "cua" in proc.name:
            out["server + app host (python)"] += proc.cpu_s
        else:
            out[proc.name] += proc.cpu_s
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", type=int, default=16)
    ap.add_argument("--steps", type=int, default=20, help="timed vector steps")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reward", choices=["sparse", "dense"], default="sparse")
    ap.add_argument("--isolation", choices=["shared", "container"], default="shared")
    args = ap.parse_args()
    t = time.perf_counter()
    env = CuaVectorEnv("todo.mark_done@1", num_envs=args.envs, isolation=args.isolation, reward=args.reward,
                       max_steps=10)
    try:
        env.action_space.seed(0)
        env.reset(seed=0)
        print(f"{args.envs} envs created and reset in {time.perf_counter() - t:.1f} s", flush=True)
        for _ in range(args.warmup):
            env.step(env.action_space.sample())
        before = cpu_by_group(os.getpid())
        resets = 0
        t = time.perf_counter()
        for _ in range(args.steps):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            resets += int(terminated.sum() + truncated.sum())
        wall = time.perf_counter() - t
        after = cpu_by_group(os.getpid())
    finally:
        env.close()
    rate = args.envs * args.steps / wall
    load = os.getloadavg()[0]
    print(f"{args.steps} vector steps of {args.envs} envs in {wall:.2f} s ({wall / args.steps * 1000:.0f} ms each, "
          f"{resets} episode ends, load average {load:.1f})")
    print("CPU seconds over the timed steps (2 cores give %.1f):" % (2 * wall))
    for group in sorted(after, key=lambda g: -(after[g] - before.get(g, 0.0))):
        print(f"  {group:28s} {after[group] - before.get(group, 0.0):6.2f}")
    print(f"vector_steps_per_s_at_{args.envs}={rate:.1f}")


if __name__ == "__main__":
    main()
