"""`cua report RUN [--compare OTHER] [--out DIR] [--serve [--port P]]`.

Writes the run's static report (default `RUN/report/`; open its index.html from disk) and
prints the path. `--compare OTHER` adds a per-task delta of OTHER (B) against RUN (A) and
both runs' episodes. `--serve` serves the report on loopback and rebuilds it every second,
so it follows a run in progress; the page polls and redraws. Ctrl-C stops it. It prints
the URL to open, with a token (generated unless `--token`): like `cua serve`, it refuses
requests without the token, foreign browser Origins and, on loopback, a non-loopback Host.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("report", help="write a run's static HTML report (trajectory viewer, breakdowns, compare)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path, metavar="RUN", help="a run folder (cua eval --out), or a folder of trajectories")
    p.add_argument("--compare", type=Path, metavar="OTHER", help="a second run to compare with, task by task")
    p.add_argument("--out", type=Path, help="report folder (default RUN/report)")
    p.add_argument("--serve", action="store_true", help="serve on loopback and keep rebuilding while the run goes on")
    p.add_argument("--port", type=int, default=0, help="port for --serve (default: a free one)")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between rebuilds with --serve (default 1)")
    p.add_argument("--host", default="127.0.0.1", help="interface for --serve (default 127.0.0.1)")
    p.add_argument("--token", default=None, help="token for --serve (default: a generated one, printed in the URL)")
    p.add_argument("--no-auth", action="store_true", help="--serve without a token (loopback only)")
    p.add_argument("--unsafe-public-no-auth", action="store_true",
                   help="allow --no-auth off loopback: anyone who reaches the port reads the report")
    p.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="a browser origin (scheme://host[:port]) other than the report's own that may read it")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from cua.report.build import ReportBuilder

    for path in (args.run, args.compare):
        if path is not None and not path.is_dir():
            print(f"cua report: no run folder at {path}", file=sys.stderr)
            return 2
    builder = ReportBuilder(args.run, out=args.out, compare=args.compare, live=args.serve)
    index = builder.build()
    if not args.serve:
        print(index.resolve().as_uri())
        return 0
    from cua.report.serve import serve_report

    return serve_report(builder, host=args.host, port=args.port, interval=args.interval, auth=not args.no_auth,
                        token=args.token, allowed_origins=args.allow_origin,
                        unsafe_public_no_auth=args.unsafe_public_no_auth)
