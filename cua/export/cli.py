"""`cua export SOURCE --format parquet|hf|jsonl|sft|prm|transitions [--execute] --out DIR`.

SOURCE is anything holding trajectories: an eval run folder, recordings, RL
trajectories, one trajectory, or a tree of them. The last line printed is
`format=… trajectories=… rows=… skipped=… files=… out=…`; DIR/export.json says how the
export was made and what it skipped.

  --format parquet|hf|jsonl   one row per step (--rows step) or per episode (--rows episode);
                              images embedded (default for parquet/hf) or by path
  --format sft --family F     the family's SFT layout (JSONL), prompts as the policy server
                              builds them, the assistant turn in the family's own text
  --format prm                step-level cases: correct and plausible wrong action at a state
  --format transitions        (frame t, action t, frame t+1, accessibility-tree diff,
                              judge-state diff, progress change), one row per step

  --execute (prm, transitions) executes each trajectory again on its task, as recorded, in a
  fresh sandbox (in this process with --local, a given --server, else a child `cua serve`),
  checking every frame against the recording: transitions gain the judge-state diff and
  progress; PRM perturbations are performed, with their next frame, progress change and the
  verdict when the trajectory's remaining actions play on from there. --parallel N executes
  N trajectories at once; the rows are the same, in the same order.
  What diverges from the recording or cannot be executed is dropped or marked, with why.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cua.argtypes import whole_number


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from cua.export.sft import SFT_FAMILIES

    p = sub.add_parser("export", help="trajectories to datasets: tables, SFT, PRM cases, transitions",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", type=Path, help="a trajectory, a run folder, recordings, or a tree of them")
    p.add_argument("--format", choices=["parquet", "hf", "jsonl", "sft", "prm", "transitions"], default="parquet")
    p.add_argument("--out", type=Path, required=True, help="output folder")
    p.add_argument("--rows", choices=["step", "episode"], default="step")
    p.add_argument("--images", choices=["embed", "path"], default=None,
                   help="embed frames in the rows, or reference them by path (default: embed for parquet/hf)")
    p.add_argument("--family", choices=SFT_FAMILIES, help="model family, for --format sft")
    p.add_argument("--history-images", type=int, default=None, help="screenshots in each SFT prompt (default: 3)")
    p.add_argument("--loss", choices=["last", "all"], default="last",
                   help="SFT loss on the last assistant turn only, or on every assistant turn")
    p.add_argument("--exact", action="store_true",
                   help="SFT: skip turns the family can only approximate instead of approximating them")
    p.add_argument("--no-perturb", action="store_true", help="PRM: only wrong actions from matching failures")
    p.add_argument("--execute", action="store_true",
                   help="prm, transitions: execute the trajectories again on their tasks (see above)")
    p.add_argument("--threshold", type=float, default=None,
                   help="--execute: fraction of changed cells above which a frame diverges (default: cua replay's)")
    p.add_argument("--local", action="store_true", help="--execute: sandboxes in this process, no server")
    p.add_argument("--server", default=None, help="--execute: ws:// URL of a running `cua serve`")
    p.add_argument("--token", default=None, help="--execute: the server's token")
    p.add_argument("--parallel", "-j", type=whole_number(1), default=1,
                   help="--execute: trajectories executed at once, each in its own sandbox (default 1); the "
                        "rows are those of one at a time, in the same order")
    p.add_argument("--verdict", choices=["pass", "fail", "any"], default="any")
    p.add_argument("--app", action="append", default=[], help="keep this app (repeatable)")
    p.add_argument("--tier", action="append", type=int, default=[], help="keep this tier (repeatable)")
    p.add_argument("--split", action="append", default=[], choices=["train", "test"])
    p.add_argument("--producer", action="append", default=[], choices=["eval", "record", "rl", "replay"])
    p.add_argument("--task", action="append", default=[], help="task id pattern, e.g. 'todo.*' (repeatable)")
    p.add_argument("--include-incomplete", action="store_true", help="also trajectories without end.json")
    p.add_argument("--force", action="store_true", help="write into a non-empty output folder")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from cua.errors import CuaError
    from cua.export import Selection, export
    from cua.export.execute import Execution
    from cua.screen_diff import SCREEN_THRESHOLD

    selection = Selection(verdict=args.verdict, apps=args.app, tiers=args.tier, splits=args.split,
                          producers=args.producer, tasks=args.task, incomplete=args.include_incomplete)
    execute = Execution(local=args.local, server=args.server, token=args.token, parallel=args.parallel,
                        threshold=SCREEN_THRESHOLD if args.threshold is None else args.threshold) \
        if args.execute else None
    try:
        summary = export(args.source, args.out, format=args.format, rows=args.rows, images=args.images,
                         selection=selection, family=args.family, history_images=args.history_images,
                         loss=args.loss, approximate=not args.exact, perturbations=not args.no_perturb,
                         force=args.force, execute=execute)
    except CuaError as exc:
        print(f"cua export: {exc.message}", file=sys.stderr)
        return 2
    for why, count in sorted(summary.skipped.items(), key=lambda kv: -kv[1]):
        print(f"skipped {count}: {why}")
    for line in summary.unreadable:
        print(f"unreadable: {line}")
    print(summary.line())
    return 0
