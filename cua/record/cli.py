"""`cua record TASK`: demonstrate a task by hand in a live view; every step is recorded.

Opens a sandbox for the task variant of `--seed`, serves the live view on loopback and
prints its URL (with a one-time token). Click, drag, scroll and type in the page; press
Done (with an answer for questions) or Infeasible to end: the episode is judged and the
verdict is written into the recording. Ctrl-C ends it unjudged ("abandoned"), keeping the steps.

The recording is a trajectory folder (`cua.trajectory`, producer "record"), the same
format `cua eval` writes: `cua trajectory show OUT` prints it, and export and replay read
it like any other episode.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("record", help="demonstrate a task by hand in a live view, recording every step",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("task", help="a task template id, e.g. todo.mark_done@1")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, help="recording folder (default recordings/<task>-s<seed>-<time>)")
    p.add_argument("--port", type=int, default=8780, help="live view port on 127.0.0.1 (0: any free port)")
    p.add_argument("--server", help="ws:// URL of a running `cua serve` (default: sandboxes in this process)")
    p.add_argument("--token", default=os.environ.get("CUA_TOKEN"), help="token of that server")
    p.add_argument("--fps", type=float, default=8.0, help="live view frame rate")
    p.add_argument("--frames", choices=["all", "last", "none"], default="all",
                   help="screenshots the trajectory keeps (default all)")
    p.add_argument("--operator", default="human", help="who demonstrates (kept in the trajectory's meta)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from cua.tasks.registry import get_template

    try:
        template = get_template(args.task)
    except KeyError as exc:
        print(f"cua record: {exc.args[0]}", file=sys.stderr)
        return 2
    out = args.out or Path("recordings") / f"{args.task.replace('@', '-v')}-s{args.seed}-{_stamp()}"
    if out.exists() and any(out.iterdir()):
        print(f"cua record: {out} is not empty: a recording never overwrites another", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_record(args, template.instantiate(args.seed), out))
    except KeyboardInterrupt:
        return 130


def _stamp() -> str:
    import time

    return time.strftime("%Y%m%d-%H%M%S")


async def _record(args: argparse.Namespace, instance, out: Path) -> int:
    import socket

    import uvicorn

    from cua.episode.openers import sandbox_opener
    from cua.record.live import LiveSession, build_live_app
    from cua.trajectory import TrajectoryWriter

    writer = TrajectoryWriter(out, frames=args.frames)
    async with sandbox_opener(local=args.server is None, server=args.server, token=args.token) as opener, \
            opener(instance.sandbox_kind, instance.sandbox_config) as handle:
        session = LiveSession(handle=handle, instance=instance, writer=writer, operator=args.operator)
        await session.start()
        app = build_live_app(session, max_fps=args.fps)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", args.port))
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        print(f"live view: http://127.0.0.1:{sock.getsockname()[1]}/?t={app.state.token}", flush=True)
        print(f"task: {session.instance.instruction}", flush=True)
        try:
            await session.finished.wait()
        finally:
            result = session.result or await session.finish(None)
            server.should_exit = True
            await serving
    verdict = result.verdict
    print(f"recorded {result.steps} steps in {out} · "
          + (f"{'passed' if verdict.passed else 'failed'} (score {verdict.score:.2f})" if verdict else "not judged"))
    return 0
