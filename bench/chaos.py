"""Chaos: an eval that loses nothing while its infrastructure is being killed.

A real `cua serve` (its own process, restarted on the same port and token whenever it
dies) serves `cua eval SUITE --policy oracle` (its own process too, `--server URL`,
`--retries`). Meanwhile a killer, every `--every` seconds, SIGKILLs one of:
- a random Chromium browser process under the server (weight 4);
- a random app/service process under the server (weight 2);
- the server itself (weight 1, at most `--server-kills` times).
With `--kind desktop` the eval runs the desktop suite (X desktops in containers), and the
pool is the desktops' guest agents (weight 3) and their X servers (Xvfb, weight 2)
instead; a VM's QEMU joins the pool wherever one runs under the server.

At the end it reads the run's episodes.jsonl and checks, for every (task, seed) job:
- lost: no line at all;
- duplicated: more than one line;
- unclassified: a failure without a failure class;
- infra: episodes that ended as infrastructure errors after their retries, and how
  many episodes needed a retry but then completed.

    python bench/chaos.py [--episodes 200] [--suite miniwob] [--parallel 4] [--every 4]
    python bench/chaos.py --kind desktop [--episodes 40] [--every 10]

Last line: chaos episodes=<n> lost=<n> duplicated=<n> unclassified=<n> infra_final=<n> retried_completed=<n> kills=<n>
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sys
import time
from collections import Counter
from pathlib import Path

from _proc import argv, process_tree  # bench/ is this script's folder

from cua.server.app import free_port
from cua.server.auth import generate_token

WEIGHTS = {"chromium": 4, "service": 2, "guest": 3, "xvfb": 2, "qemu": 2, "server": 1}
#: The suite each `--kind` runs by default.
SUITES = {"browser": "miniwob_untimed", "desktop": "desktop"}


def victims(server_pid: int) -> dict[str, list[int]]:
    """Killable processes under the server, by kind."""
    out: dict[str, list[int]] = {k: [] for k in WEIGHTS}
    for proc in process_tree(server_pid):
        if proc.pid == server_pid:
            continue
        args = argv(proc.pid)
        joined = b" ".join(args)
        if (b"chrom" in (args[0] if args else b"") or b"headless_shell" in joined) and b"--type=" not in joined:
            out["chromium"].append(proc.pid)
        elif b"cua.tasks.apps" in joined:
            out["service"].append(proc.pid)
        elif b"guest" in joined and b"agent" in joined:
            out["guest"].append(proc.pid)
        elif args and args[0].rsplit(b"/", 1)[-1] == b"Xvfb":
            out["xvfb"].append(proc.pid)
        elif args and b"qemu-system" in args[0]:
            out["qemu"].append(proc.pid)
    return out


class Server:
    """`python -m cua.server` on a fixed port, restarted when it dies."""

    def __init__(self, port: int, token: str, max_sandboxes: int) -> None:
        self.port, self.token, self.max_sandboxes = port, token, max_sandboxes
        self.proc: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self.stopping = False

    async def start(self) -> None:
        argv = [sys.executable, "-m", "cua.server", "--port", str(self.port), "--max-sandboxes",
                str(self.max_sandboxes), "--idle-timeout", "300", "--log-level", "warning"]
        self.proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.DEVNULL,
                                                         env={**os.environ, "CUA_TOKEN": self.token})

    async def supervise(self) -> None:
        while not self.stopping:
            assert self.proc is not None
            await self.proc.wait()
            if self.stopping:
                return
            self.restarts += 1
            await asyncio.sleep(1.0)  # the kernel frees the port; the runner sees the loss
            await self.start()

    async def stop(self) -> None:
        self.stopping = True
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(self.proc.wait(), 30)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


async def killer(server: Server, every: float, server_kills: int, kills: Counter[str], stop: asyncio.Event,
                 rng: random.Random) -> None:
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
        if stop.is_set() or server.proc is None or server.proc.returncode is not None:
            continue
        pool = victims(server.proc.pid)
        if kills["server"] < server_kills:
            pool["server"] = [server.proc.pid]
        kinds = [k for k, pids in pool.items() if pids]
        if not kinds:
            continue
        kind = rng.choices(kinds, weights=[WEIGHTS[k] for k in kinds])[0]
        pid = rng.choice(pool[kind])
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            kills[kind] += 1
            print(f"[{time.strftime('%H:%M:%S')}] killed {kind} {pid}", flush=True)


def check(out: Path) -> dict[str, int]:
    lines = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    seen = Counter((r["task_id"], r["seed"]) for r in lines)
    final_infra = [r for r in lines if r.get("status") == "infra_error"]
    unclassified = [r for r in lines if r.get("verdict", {}) is not None and not (r.get("verdict") or {}).get("passed")
                    and not r.get("failure")]
    failures = Counter(r.get("failure") or "passed" for r in lines)
    print(f"outcomes: {dict(sorted(failures.items()))}")
    print(f"infra codes after retries: {Counter((r.get('error') or {}).get('code') for r in final_infra)}")
    return {"episodes": len(seen), "duplicated": sum(n - 1 for n in seen.values() if n > 1),
            "unclassified": len(unclassified), "infra_final": len(final_infra),
            "retried_completed": sum(1 for r in lines if r.get("attempts", 1) > 1 and r.get("status") != "infra_error")}


def _suite_size(suite: str, limit: int) -> int:
    """How many templates `cua eval SUITE --limit N` runs (from `cua tasks list`)."""
    import subprocess

    listing = subprocess.run([str(Path(sys.executable).with_name("cua")), "tasks", "list"],
                             capture_output=True, text=True, check=True)
    for line in listing.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == suite and parts[1].isdigit():
            return min(limit, int(parts[1]))
    raise SystemExit(f"suite {suite!r} not in `cua tasks list`")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", choices=sorted(SUITES), default="browser", help="the sandboxes the eval runs in")
    ap.add_argument("--suite", help="the suite (default: miniwob_untimed; desktop for --kind desktop)")
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--every", type=float, default=4.0, help="seconds between kills")
    ap.add_argument("--server-kills", type=int, default=3)
    ap.add_argument("--retries", type=int, default=3)
    ap.add_argument("--isolation", choices=["shared", "container"], default="shared")
    ap.add_argument("--out", type=Path, default=Path("/tmp/cua-chaos"))
    ap.add_argument("--seed", type=int, default=15)
    args = ap.parse_args()
    args.suite = args.suite or SUITES[args.kind]

    port, token = free_port(), generate_token()
    server = Server(port, token, max_sandboxes=args.parallel + 4)
    await server.start()
    supervisor = asyncio.create_task(server.supervise())
    if args.out.exists():
        import shutil

        shutil.rmtree(args.out)
    seeds = 2
    templates = -(-args.episodes // seeds)
    argv = [str(Path(sys.executable).with_name("cua")), "eval", args.suite, "--policy", "oracle", "--limit", str(templates),
            "--seeds", str(seeds),
            "--parallel", str(args.parallel), "--out", str(args.out), "--server", f"ws://127.0.0.1:{port}/v1/ws",
            "--retries", str(args.retries), "--reconnect-s", "120", "--frames", "none", "--no-progress", "--no-report",
            *(["--isolation", args.isolation] if args.kind == "browser" else [])]
    stop = asyncio.Event()
    kills: Counter[str] = Counter()
    await asyncio.sleep(3)  # the server binds
    started = time.monotonic()
    evaluation = await asyncio.create_subprocess_exec(*argv, env={**os.environ, "CUA_TOKEN": token})
    chaos = asyncio.create_task(killer(server, args.every, args.server_kills, kills, stop, random.Random(args.seed)))
    code = await evaluation.wait()
    stop.set()
    await chaos
    await server.stop()
    supervisor.cancel()
    wall = time.monotonic() - started
    print(f"eval exited {code} after {wall:.0f} s; kills {dict(kills)}; server restarts {server.restarts}")
    if not (args.out / "episodes.jsonl").exists():
        print(f"chaos episodes=0 lost={args.episodes} duplicated=0 unclassified=0 infra_final=0 retried_completed=0 "
              f"kills={sum(kills.values())}")
        return
    planned = _suite_size(args.suite, templates) * seeds
    result = check(args.out)
    lost = planned - result["episodes"]
    print(f"chaos episodes={result['episodes']} lost={lost} duplicated={result['duplicated']} "
          f"unclassified={result['unclassified']} infra_final={result['infra_final']} "
          f"retried_completed={result['retried_completed']} kills={sum(kills.values())}")


if __name__ == "__main__":
    asyncio.run(main())
