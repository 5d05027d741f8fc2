"""`cua replay TRAJ... [--out DIR]`: re-execute trajectories and compare them with the recording.

TRAJ is a trajectory, a run folder or any tree of them. Each is replayed from its start
(its task, seed and observe options; its start snapshot when it has one) in a fresh
sandbox; every step's screen (perceptual difference, `--threshold`), URL, judge progress
and action error are compared with the recording. One line per trajectory names the
first divergence and both verdicts; the last line is
`replayed=… reproduced=… diverged=… unreplayable=…`. OUT/replay.jsonl holds every report
and OUT/trajectories/ the replays' own trajectories (producer "replay").
Exit code 0 when every verdict was reproduced, 1 otherwise, 2 for unusable input.

`--from-step K --policy SPEC` continues each trajectory from its step K instead
(`cua.replay.branch`): the recorded actions before K are performed again from the task's
reset, every screen checked against the recording, then SPEC plays on and the end is
judged. OUT/continue.jsonl holds one line per trajectory (or the typed reason it was
refused) and OUT/trajectories/ the continuations (meta.extra["branch"] names the parent
and the step); the last line is `continued=… refused=…`; exit code 1 when one was refused.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from cua.screen_diff import SCREEN_THRESHOLD

    p = sub.add_parser("replay", help="re-execute trajectories, report the first divergence and the verdict",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", nargs="+", type=Path, help="trajectories, run folders, or trees of them")
    p.add_argument("--out", type=Path, default=None, help="output folder (default runs/replay-<time>)")
    p.add_argument("--passing", action="store_true", help="replay only trajectories whose recording passed")
    p.add_argument("--threshold", type=float, default=SCREEN_THRESHOLD,
                   help=f"fraction of changed cells above which screens differ (default {SCREEN_THRESHOLD})")
    p.add_argument("--stop-at-divergence", action="store_true", help="stop each replay at its first divergence")
    p.add_argument("--parallel", "-j", type=int, default=1, help="replays at once (default 1)")
    p.add_argument("--from-step", type=int, default=None, metavar="K",
                   help="continue each trajectory from its step K with --policy instead: the recorded actions "
                        "before K are performed again (every screen checked), then the policy plays on and the "
                        "end is judged (a step that cannot be reached is refused)")
    p.add_argument("--policy", default=None,
                   help="who continues from --from-step: random | noop | oracle | http://HOST:PORT | "
                        "openai:MODEL@BASE_URL | scripted:FILE.jsonl | KIND:ARGS")
    p.add_argument("--family", default=None, help="model family of an openai:/transformers: policy")
    p.add_argument("--policy-token", default=os.environ.get("CUA_POLICY_TOKEN"), help="token of a policy server")
    p.add_argument("--local", action="store_true", help="sandboxes in this process, no server")
    p.add_argument("--server", default=None, help="ws:// URL of a running `cua serve`")
    p.add_argument("--token", default=None)
    p.set_defaults(func=main)


def _folders(sources: list[Path], passing: bool) -> list[Path]:
    from cua.trajectory import find_trajectories, read_trajectory

    found: list[Path] = []
    for source in sources:
        for folder in find_trajectories(source):
            if passing:
                traj = read_trajectory(folder)
                if traj.end is None or traj.end.verdict is None or not traj.end.verdict.passed:
                    continue
            found.append(folder)
    return found


async def _run(args: argparse.Namespace, folders: list[Path], out: Path) -> tuple[int, int, int, int]:
    from cua.episode import sandbox_opener
    from cua.errors import CuaError, ErrorRecord
    from cua.replay import replay

    reproduced = diverged = unreplayable = 0
    gate = asyncio.Semaphore(max(1, args.parallel))
    index = (out / "replay.jsonl").open("a", encoding="utf-8")
    names: set[str] = set()

    async def one(folder: Path, opener: object) -> None:
        nonlocal reproduced, diverged, unreplayable
        name = folder.name
        while name in names:
            name += "_"
        names.add(name)
        async with gate:
            try:
                report = await replay(folder, opener, out / "trajectories" / name,  # type: ignore[arg-type]
                                      threshold=args.threshold, stop_at_divergence=args.stop_at_divergence)
            except CuaError as exc:
                unreplayable += 1
                print(f"{folder}: not replayed ({exc.fault} fault): {exc.message}")
                error = ErrorRecord.of(exc).model_dump(mode="json", exclude_none=True)
                index.write(json.dumps({"source": str(folder), "error": error}) + "\n")
                index.flush()
                return
        reproduced += report.reproduced
        diverged += report.first_divergence is not None
        print(report.line(), flush=True)
        index.write(json.dumps(report.to_dict()) + "\n")
        index.flush()

    try:
        async with sandbox_opener(local=args.local, server=args.server, token=args.token,
                                  max_sandboxes=max(1, args.parallel)) as opener:
            await asyncio.gather(*(one(folder, opener) for folder in folders))
    finally:
        index.close()
    return len(folders), reproduced, diverged, unreplayable


def _agent(args: argparse.Namespace) -> tuple[Any, Any]:
    """The agent that continues from --from-step, and the policy to close after (or None)."""
    from cua.episode.agent import NoopAgent, OracleAgent, RandomAgent
    from cua.episode.policy_agent import PolicyAgent
    from cua.policy.registry import make_policy

    builtin = {"noop": NoopAgent, "random": RandomAgent, "oracle": OracleAgent}
    if args.policy in builtin:
        return builtin[args.policy](), None
    kw: dict[str, Any] = {}
    if args.family:
        kw["family"] = args.family
    if args.policy.startswith(("http://", "https://")) and args.policy_token:
        kw["token"] = args.policy_token
    policy = make_policy(args.policy, **kw)
    return PolicyAgent(policy, args.policy, None), policy


async def _continue(args: argparse.Namespace, folders: list[Path], out: Path) -> tuple[int, int]:
    """--from-step: each trajectory continued by --policy; (continued, refused)."""
    from cua.episode import sandbox_opener
    from cua.errors import CuaError, ErrorRecord
    from cua.replay.branch import continue_from

    continued = refused = 0
    index = (out / "continue.jsonl").open("a", encoding="utf-8")
    try:
        async with sandbox_opener(local=args.local, server=args.server, token=args.token, max_sandboxes=1) as opener:
            for n, folder in enumerate(folders):
                agent, policy = _agent(args)
                try:
                    report = await continue_from(folder, args.from_step, opener, agent,
                                                 out / "trajectories" / f"{folder.name}__k{args.from_step}_{n}")
                except CuaError as exc:
                    refused += 1
                    print(f"{folder}: not continued ({exc.fault} fault): {exc.message}")
                    index.write(json.dumps({"source": str(folder), "from_step": args.from_step,
                                            "error": ErrorRecord.of(exc).model_dump(mode="json", exclude_none=True)})
                                + "\n")
                    continue
                finally:
                    index.flush()
                    if policy is not None:
                        await policy.aclose()
                continued += 1
                print(report.line(), flush=True)
                index.write(json.dumps(report.to_dict()) + "\n")
    finally:
        index.close()
    return continued, refused


def main(args: argparse.Namespace) -> int:
    if (args.from_step is None) != (args.policy is None):
        print("cua replay: --from-step and --policy go together", file=sys.stderr)
        return 2
    if args.from_step is not None and args.from_step < 0:
        print("cua replay: --from-step takes a step number from 0", file=sys.stderr)
        return 2
    folders = _folders(args.source, args.passing)
    if not folders:
        print(f"cua replay: no trajectory under {', '.join(map(str, args.source))}", file=sys.stderr)
        return 2
    out = args.out or Path("runs") / time.strftime("replay-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    if args.from_step is not None:
        try:
            continued, refused = asyncio.run(_continue(args, folders, out))
        except ValueError as exc:  # a --policy spec that does not load
            print(f"cua replay: {exc}", file=sys.stderr)
            return 2
        print(f"continued={continued} refused={refused} out={out}")
        return 0 if refused == 0 else 1
    total, reproduced, diverged, unreplayable = asyncio.run(_run(args, folders, out))
    print(f"replayed={total - unreplayable} reproduced={reproduced} diverged={diverged} "
          f"unreplayable={unreplayable} out={out}")
    return 0 if reproduced == total else 1
