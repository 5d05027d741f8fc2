"""`cua eval SUITE... --policy P --parallel N --out DIR`: run, judge, record, summarise.

By default the episodes run through a real sandbox server started as a child process
on a loopback port (the same websocket path remote users take); `--server URL` uses a
running `cua serve`, and `--local` drives sandboxes in process without a server.
Exit code 0 when the run completed, whatever the scores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
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
    p.add_argument("--isolation", choices=["container", "shared"], help="override browser isolation")
    p.add_argument("--format", choices=["png", "jpeg", "webp"], default="jpeg", help="screenshot format")
    p.add_argument("--quality", type=int, default=80)
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


@asynccontextmanager
async def _openers(args: argparse.Namespace) -> AsyncIterator[Any]:
    """Yields a SandboxOpener: in process, through a given server, or through one we start."""
    if args.local:
        from cua.eval.local import open_local

        yield open_local
        return
    import cua
    from cua.server.app import serve_in_subprocess

    async with AsyncExitStack() as stack:
        url, token = args.server, args.token
        if url is None:
            url, token = await stack.enter_async_context(serve_in_subprocess(max_sandboxes=max(8, 2 * args.parallel)))
        client = await stack.enter_async_context(cua.connect(url, token))

        @asynccontextmanager
        async def open_remote(kind: str, config: dict[str, Any]) -> AsyncIterator[Any]:
            sandbox = await client.create(kind, config=config)
            try:
                yield sandbox
            finally:
                await sandbox.close()

        yield open_remote


def _apply_overrides(jobs: list[Any], args: argparse.Namespace) -> None:
    if not args.isolation:
        return
    for job in jobs:
        job.template = _IsolationOverride(job.template, args.isolation)


class _IsolationOverride:
    """A template whose browser instances use the isolation mode asked for on the command line."""

    def __init__(self, template: Any, isolation: str) -> None:
        self.template, self.isolation = template, isolation
        self.id, self.tags = template.id, template.tags

    def instantiate(self, seed: int) -> Any:
        instance = self.template.instantiate(seed)
        if instance.sandbox_kind == "browser":
            instance.sandbox_config = {**instance.sandbox_config, "isolation": self.isolation}
        return instance


async def _run(args: argparse.Namespace, jobs: list[Any], out: Path) -> int:
    from cua.eval.agents import agent_factory
    from cua.eval.report import print_summary, progress
    from cua.eval.runner import run_jobs
    from cua.observation import ObserveOptions

    _apply_overrides(jobs, args)
    policy_kw: dict[str, Any] = {}
    if args.policy_token:
        policy_kw["token"] = args.policy_token
    if args.family:
        policy_kw["family"] = args.family
    make_agent, agent_name, policy = agent_factory(args.policy, **policy_kw)
    observe = ObserveOptions(format=args.format, quality=args.quality)
    out.mkdir(parents=True, exist_ok=True)
    try:
        async with _openers(args) as opener:
            with progress(len(jobs), enabled=not args.no_progress) as advance:
                summary, _ = await run_jobs(jobs, opener=opener, make_agent=make_agent, agent_name=agent_name,
                                            parallel=args.parallel, out_dir=out, observe=observe,
                                            on_record=advance)
    finally:
        if policy is not None:
            await policy.aclose()  # type: ignore[attr-defined]
    print_summary(summary, out)
    return 0
