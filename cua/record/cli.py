"""`cua record TASK` or `cua record SUITE... --seeds K`: demonstrate tasks by hand in a live view.

One task (`cua record todo.mark_done@1 --seed 3`): see below. A queue (suite names, task
ids or suite paths, with `--seeds K` or `--seed-list`): the live view hands each person who
opens its URL the next task, shows the instruction and a progress count, keeps passing
demonstrations (or all with `--keep all`) under OUT/trajectories/, puts failed or discarded
ones back in the queue (up to `--attempts` tries), and ends when every task is kept or
given up. Several people can open the URL at once (each gets their own task and sandbox,
from one `--server` or in process); OUT/recording.jsonl lists every demonstration.

Opens a sandbox for the task variant of `--seed`, serves the live view on loopback and
prints its URL (with a one-time token). Like `cua serve`, the live view refuses a request
without the token, a browser Origin other than its own page's (or an `--allow-origin`),
and on loopback a Host that does not name loopback (DNS rebinding). Click, drag, scroll and type in the page; press
Done (with an answer for questions) or Infeasible to end: the episode is judged and the
verdict is written into the recording. Ctrl-C ends it unjudged ("abandoned"), keeping the steps.
A sandbox lost mid-recording ends it as `infra_error` with the crash's error, keeping the
steps; the command then exits 1 (a queue puts the task back and goes on).

The recording is a trajectory folder (`cua.trajectory`, producer "record"), the same
format `cua eval` writes: `cua trajectory show OUT` prints it, and export and replay read
it like any other episode.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cua.argtypes import snapshot_period

if TYPE_CHECKING:
    from cua.record.queue import Job
    from cua.task import TaskInstance


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("record", help="demonstrate a task by hand in a live view, recording every step",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("task", nargs="+", help="a task template id (e.g. todo.mark_done@1), or suites/ids for a queue")
    p.add_argument("--seed", type=int, default=0, help="the variant of a single task")
    p.add_argument("--seeds", type=int, default=None, help="queue: seeds 0..K-1 of every task")
    p.add_argument("--seed-list", default=None, help="queue: explicit comma-separated seeds")
    p.add_argument("--keep", choices=["passing", "all"], default="passing",
                   help="queue: keep only passing demonstrations (default), or all")
    p.add_argument("--attempts", type=int, default=3, help="queue: tries per task before it is given up")
    p.add_argument("--out", type=Path, help="recording folder (default recordings/<task>-s<seed>-<time>)")
    p.add_argument("--port", type=int, default=8780, help="live view port on 127.0.0.1 (0: any free port)")
    p.add_argument("--host", default="127.0.0.1",
                   help="live view interface (default 127.0.0.1; the token is always required)")
    p.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="a browser origin (scheme://host[:port]) other than the live view's own that may use it")
    p.add_argument("--server", help="ws:// URL of a running `cua serve` (default: sandboxes in this process)")
    p.add_argument("--token", default=os.environ.get("CUA_TOKEN"), help="token of that server")
    p.add_argument("--fps", type=float, default=8.0, help="live view frame rate")
    p.add_argument("--frames", choices=["all", "last", "none"], default="all",
                   help="screenshots the trajectory keeps (default all)")
    p.add_argument("--operator", default="human", help="who demonstrates (kept in the trajectory's meta)")
    p.add_argument("--snapshots", type=snapshot_period, default="none", metavar="every|N|none",
                   help="a single task: keep a snapshot of the state at every step, or every N-th, named by reference "
                        "on the step's line; they live while the recording's sandbox does (default none)")
    p.set_defaults(func=main)


def _is_queue(args: argparse.Namespace) -> bool:
    return len(args.task) > 1 or "." not in args.task[0] or args.seeds is not None or args.seed_list is not None \
        or args.task[0].endswith((".yaml", ".yml"))


def main(args: argparse.Namespace) -> int:
    from cua.exposure import normalize_origins
    from cua.tasks.registry import get_template

    try:
        normalize_origins(args.allow_origin)
    except ValueError as exc:
        print(f"cua record: {exc}", file=sys.stderr)
        return 2
    if _is_queue(args):
        if args.snapshots != "none":
            print("cua record: --snapshots is for a single task's recording, not a queue", file=sys.stderr)
            return 2
        return _queue_main(args)
    args.task = args.task[0]
    try:
        template = get_template(args.task)
    except KeyError as exc:
        print(f"cua record: {exc.args[0]}", file=sys.stderr)
        return 2
    out = args.out or Path("recordings") / f"{args.task.replace('@', '-v')}-s{args.seed}-{_stamp()}"
    return _record_into(out, lambda: _record(args, template.instantiate(args.seed), out))


def _record_into(out: Path, record: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run `record` into the folder `out`, which must be new or empty (a recording never
    overwrites another: exit 2 before anything starts); Ctrl-C exits 130."""
    if out.exists() and any(out.iterdir()):
        print(f"cua record: {out} is not empty: a recording never overwrites another", file=sys.stderr)
        return 2
    try:
        return asyncio.run(record())
    except KeyboardInterrupt:
        return 130


def _url(host: str, port: int, token: str) -> str:
    """The URL a person opens (its token is what admits the page and its websocket)."""
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "[::]") else host.strip("[]")
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/?t={token}"


def _stamp() -> str:
    import time

    return time.strftime("%Y%m%d-%H%M%S")


async def _record(args: argparse.Namespace, instance: TaskInstance, out: Path) -> int:
    import uvicorn

    from cua.branch.snapshots import SnapshottingHandle, SnapshotWriter, StepSnapshots, snapshot_every
    from cua.episode.openers import sandbox_opener
    from cua.listen import tcp_listener
    from cua.record.live import LiveSession, build_live_app
    from cua.trajectory import TrajectoryWriter

    every = snapshot_every(args.snapshots)
    snapshots = StepSnapshots(every) if every is not None else None
    writer = TrajectoryWriter(out, frames=args.frames) if snapshots is None else \
        SnapshotWriter(out, snapshots, frames=args.frames)
    async with sandbox_opener(local=args.server is None, server=args.server, token=args.token) as opener, \
            opener(instance.sandbox_kind, instance.sandbox_config) as handle:
        driven = handle if snapshots is None else SnapshottingHandle(handle, snapshots)
        session = LiveSession(handle=driven, instance=instance, writer=writer, operator=args.operator)
        try:
            await session.start()
        except BaseException:
            if snapshots is not None:
                await snapshots.release(handle)
            raise
        app = build_live_app(session, max_fps=args.fps, host=args.host, allowed_origins=args.allow_origin)
        sock = tcp_listener(args.host, args.port)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        print(f"live view: {_url(args.host, sock.getsockname()[1], app.state.token)}", flush=True)
        print(f"task: {session.instance.instruction}", flush=True)
        try:
            await session.finished.wait()
        finally:
            result = session.result or await session.finish(None)
            server.should_exit = True
            await serving
            if snapshots is not None:  # the recording's sandbox closes next: nothing refers to them after
                await snapshots.release(handle)
    if result.status == "infra_error" and result.error is not None:
        print(f"recording lost: {result.error.message} ({result.error.failure}, the infrastructure's fault); "
              f"{result.steps} steps kept in {out}", file=sys.stderr)
        return 1
    verdict = result.verdict
    print(f"recorded {result.steps} steps in {out} · "
          + (f"{'passed' if verdict.passed else 'failed'} (score {verdict.score:.2f})" if verdict else "not judged"))
    return 0


def _queue_main(args: argparse.Namespace) -> int:
    from cua.record.queue import Job
    from cua.tasks.registry import select_templates

    try:
        templates = select_templates(args.task)
        seeds = [int(s) for s in args.seed_list.split(",")] if args.seed_list else list(range(args.seeds or 1))
    except (KeyError, ValueError) as exc:
        print(f"cua record: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    jobs = [Job(template=t, seed=s) for t in templates for s in seeds]
    if not jobs:
        print("cua record: no task to record", file=sys.stderr)
        return 2
    out = args.out or Path("recordings") / f"queue-{_stamp()}"
    return _record_into(out, lambda: _record_queue(args, jobs, out))


async def _record_queue(args: argparse.Namespace, jobs: list[Job], out: Path) -> int:
    import uvicorn

    from cua.episode.openers import sandbox_opener
    from cua.listen import tcp_listener
    from cua.record.queue import RecordQueue
    from cua.record.service import RecorderService

    queue = RecordQueue(jobs, keep=args.keep, max_attempts=args.attempts)
    async with sandbox_opener(local=args.server is None, server=args.server, token=args.token) as opener:
        service = RecorderService(queue, opener, out, frames=args.frames, max_fps=args.fps, host=args.host,
                                  allowed_origins=args.allow_origin)
        sock = tcp_listener(args.host, args.port)
        server = uvicorn.Server(uvicorn.Config(service.app, log_level="warning", lifespan="off"))
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        print(f"live view: {_url(args.host, sock.getsockname()[1], service.token)}"
              f"  (each person who opens it gets the next task; add &operator=NAME)", flush=True)
        print(f"queue: {len(jobs)} demonstrations to collect into {out}", flush=True)
        reported = 0
        try:
            while not queue.finished.is_set():
                await queue.changed.wait()
                for outcome, task_id, seed, operator, passed in service.log[reported:]:
                    p = queue.progress()
                    print(f"{outcome} {task_id} s{seed} by {operator}"
                          f"{'' if passed is None else (' (passed)' if passed else ' (failed)')} · "
                          f"kept {p['kept']}/{p['total']}", flush=True)
                reported = len(service.log)
            await asyncio.sleep(0.5)  # let the pages receive "finished" before the server goes
        finally:
            server.should_exit = True
            await serving
    p = queue.progress()
    print(f"kept={p['kept']} total={p['total']} failed={p['failed']} discarded={p['discarded']} "
          f"crashed={p['crashed']} given_up={p['given_up']} out={out}")
    return 0 if p["kept"] == p["total"] else 1
