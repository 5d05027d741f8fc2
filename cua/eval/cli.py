"""`cua eval SUITE... --policy P --parallel N --out DIR`: run, judge, record, summarise.

By default the episodes run through a real sandbox server started as a child process
on a loopback port (the same websocket path remote users take); `--server URL` uses a
running `cua serve`, and `--local` drives sandboxes in process without a server.
Every episode writes its trajectory to OUT/trajectories/<task>__s<seed>/ (check a run with
`cua trajectory validate OUT`). Exit code 0 when the run completed, whatever the scores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="run a task suite with a policy, judge every episode, write JSONL",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("suites", nargs="+", metavar="SUITE", help="suite names (see `cua tasks list`), or task ids")
    p.add_argument("--policy", default="oracle",
                   help="oracle | random | noop | http://HOST:PORT (policy server) | openai:MODEL@BASE_URL | "
                        "scripted:FILE.jsonl (default: oracle)")
    p.add_argument("--policy-token", default=os.environ.get("CUA_POLICY_TOKEN"), help="token of a policy server")
    p.add_argument("--family", help="model family for openai:/transformers: policies, e.g. qwen2.5-vl")
    p.add_argument("--parallel", "-j", type=int, default=1, help="episodes run at once (default 1)")
    p.add_argument("--seeds", type=int, default=1, help="seeds per task template: 0..K-1 (default 1)")
    p.add_argument("--seed-list", help="explicit comma-separated seeds (overrides --seeds)")
    p.add_argument("--split", choices=["train", "test", "all"], default="all")
    p.add_argument("--limit", type=int, help="run at most this many templates")
    p.add_argument("--out", type=Path, default=None, help="output folder (default runs/<suite>-<policy>-<time>)")
    p.add_argument("--server", help="ws:// URL of a running `cua serve` (default: start one in process)")
    p.add_argument("--token", default=os.environ.get("CUA_TOKEN"), help="token of that server")
    p.add_argument("--local", action="store_true", help="drive sandboxes in process, without a server")
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="run episodes on Ray actors (one per --parallel slot): a cluster address, 'auto', "
                        "or nothing for a local Ray")
    p.add_argument("--ray-cpus", type=float, default=1.0, help="CPUs Ray reserves per episode actor (default 1)")
    p.add_argument("--isolation", choices=["container", "shared"], help="override browser isolation")
    p.add_argument("--format", choices=["png", "jpeg", "webp"], default="jpeg", help="screenshot format")
    p.add_argument("--quality", type=int, default=80)
    p.add_argument("--frames", choices=["all", "last", "none"], default="all",
                   help="screenshots each trajectory keeps (OUT/trajectories/<task>__s<seed>/): every step's, "
                        "the final one, or none (default all)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from cua.eval.runner import make_jobs
    from cua.tasks.registry import select_templates

    try:
        templates = select_templates(args.suites, split=None if args.split == "all" else args.split)
    except KeyError as exc:
        print(f"cua eval: {exc.args[0]}", file=sys.stderr)
        return 2
    if args.limit:
        templates = templates[: args.limit]
    if not templates:
        print("cua eval: no task templates selected", file=sys.stderr)
        return 2
    seeds = [int(s) for s in args.seed_list.split(",")] if args.seed_list else list(range(args.seeds))
    jobs = make_jobs(templates, seeds)
    out = args.out or _default_out(args)
    return asyncio.run(_run(args, jobs, out))


def _default_out(args: argparse.Namespace) -> Path:
    import time

    policy = "".join(c if c.isalnum() else "-" for c in args.policy)[:40]
    return Path("runs") / f"{'+'.join(args.suites)[:40]}-{policy}-{time.strftime('%Y%m%d-%H%M%S')}"


async def _run(args: argparse.Namespace, jobs: list[Any], out: Path) -> int:
    from cua.eval.agents import agent_factory
    from cua.episode.openers import sandbox_opener
    from cua.eval.report import print_summary, progress
    from cua.eval.runner import LocalExecutor, run_jobs
    from cua.observation import ObserveOptions

    policy_kw: dict[str, Any] = {}
    if args.policy_token:
        policy_kw["token"] = args.policy_token
    if args.family:
        policy_kw["family"] = args.family
    observe = ObserveOptions(format=args.format, quality=args.quality)
    overrides = {"browser": {"isolation": args.isolation}} if args.isolation else {}
    out.mkdir(parents=True, exist_ok=True)
    async with AsyncExitStack() as stack:
        if args.ray is not None:
            from cua.eval.ray_backend import ray_executors

            agent_name = args.policy
            executor = await stack.enter_async_context(ray_executors(
                args.ray, policy=args.policy, policy_kw=policy_kw, observe=observe, config_overrides=overrides,
                num_cpus=args.ray_cpus, run_dir=out, frames=args.frames))
        else:
            make_agent, agent_name, policy = agent_factory(args.policy, **policy_kw)
            if policy is not None:
                stack.push_async_callback(policy.aclose)  # type: ignore[attr-defined]
            opener = await stack.enter_async_context(sandbox_opener(
                local=args.local, server=args.server, token=args.token, max_sandboxes=max(8, 2 * args.parallel)))

            def executor() -> LocalExecutor:
                return LocalExecutor(opener, make_agent, observe=observe, config_overrides=overrides,
                                     run_dir=out, frames=args.frames, run_id=out.name)

        with progress(len(jobs), enabled=not args.no_progress) as advance:
            summary, _ = await run_jobs(jobs, executor=executor, agent_name=agent_name, parallel=args.parallel,
                                        out_dir=out, on_record=advance)
    print_summary(summary, out)
    return 0
