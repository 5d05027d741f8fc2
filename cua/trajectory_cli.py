"""`cua trajectory schema | validate PATH | show PATH`.

`schema` prints the JSON Schema of the trajectory format's three files. `validate` checks a
trajectory folder, a run folder or any tree of them (unfinished prefixes are valid: a
killed producer leaves one) and ends with `trajectories=… complete=… steps=… frames=…
problems=…`; exit code 1 on any problem. `show` prints each trajectory's steps as a table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("trajectory", help="the trajectory format: schema, validate, show", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    tsub = p.add_subparsers(dest="trajectory_command", required=True, metavar="SUBCOMMAND")
    sc = tsub.add_parser("schema", help="print the JSON Schema of meta.json, steps.jsonl lines and end.json")
    sc.set_defaults(func=schema_main)
    va = tsub.add_parser("validate", help="check a trajectory, a run folder or a tree of them")
    va.add_argument("path", type=Path)
    va.set_defaults(func=validate_main)
    sh = tsub.add_parser("show", help="print a step table for each trajectory under PATH")
    sh.add_argument("path", type=Path)
    sh.add_argument("--all-attempts", action="store_true", help="also the attempts lost to the infrastructure")
    sh.set_defaults(func=show_main)


def schema_main(args: argparse.Namespace) -> int:
    from cua.trajectory import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0


def validate_main(args: argparse.Namespace) -> int:
    from cua.trajectory import validate

    report = validate(args.path)
    for problem in report.problems:
        print(f"problem: {problem}")
    print(report.summary())
    return 0 if report.ok else 1


def _action_text(action: dict[str, Any] | None) -> str:
    if action is None:
        return "(no action)"
    kind = action.get("type", "?")
    rest = {k: v for k, v in action.items() if k != "type" and v not in (None, [], {})}
    args = " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v!r}" for k, v in rest.items())
    return f"{kind} {args}".strip()


def _clip(text: str | None, width: int) -> str:
    text = (text or "").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def show_main(args: argparse.Namespace) -> int:
    from cua.trajectory import find_trajectories, read_trajectory

    folders = find_trajectories(args.path)
    if not folders:
        print(f"cua trajectory: no trajectory under {args.path}", file=sys.stderr)
        return 1
    for folder in folders:
        traj = read_trajectory(folder)
        meta, end = traj.meta, traj.end
        head = f"{meta.task_id} seed={meta.seed} producer={meta.producer} agent={meta.agent.name}" if meta \
            else "(no meta.json)"
        print(f"== {folder}\n   {head}")
        if meta:
            print(f"   instruction: {_clip(meta.instruction, 100)}")
        print(f"   {'att':>3} {'#':>3}  {'action':<44} {'policy':>7} {'act':>7}  {'url':<28} error")
        for step in traj.all_steps if args.all_attempts else traj.steps:
            t = step.timings_ms
            error = step.error.message if step.error else (f"parse: {step.parse_error}" if step.parse_error else "")
            print(f"   {step.attempt:>3} {step.index:>3}  {_clip(_action_text(step.action), 44):<44} "
                  f"{t.get('policy', 0):>6.0f}m {t.get('act', 0):>6.0f}m  {_clip(step.observation.url, 28):<28} "
                  f"{_clip(error, 40)}")
        if end is None:
            print("   (unfinished: no end.json)")
        else:
            verdict = end.verdict
            score = f"score={verdict.score:g} passed={verdict.passed}" if verdict else "no verdict"
            lost = len(end.attempts) - 1
            print(f"   end: {end.status}{f' ({end.failure})' if end.failure else ''} steps={end.steps} {score}"
                  f"{f' attempts lost={lost}' if lost else ''}")
    return 0
