"""`cua rollout serve`: whole episodes for trainers, over HTTP and websocket.

    cua rollout serve --port 8300 --runs runs/rollouts [--server ws://HOST:PORT/v1/ws | --local]

`POST /rollouts` runs groups of episodes against an OpenAI-compatible policy endpoint and
returns their trajectories (token ids, logprobs, timings, status, mask_sample); `/envs`
gives environment handles (reset, step, snapshot, fork, close); `/ws` the same over one
websocket. See cua/rollout/app.py for the routes.
"""

from __future__ import annotations

import argparse
import asyncio
import os


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("rollout", help="the rollout service for RL trainers", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    rsub = p.add_subparsers(dest="rollout_command", required=True, metavar="SUBCOMMAND")
    s = rsub.add_parser("serve", help="serve POST /rollouts, /envs and /ws")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8300)
    s.add_argument("--runs", default="runs/rollouts", help="where trajectories are written")
    where = s.add_mutually_exclusive_group()
    where.add_argument("--server", help="a `cua serve` websocket URL for the sandboxes (default: start one)")
    where.add_argument("--local", action="store_true", help="sandboxes in this process")
    s.add_argument("--token", default=os.environ.get("CUA_TOKEN"), help="token of --server")
    s.add_argument("--max-episodes", type=int, default=8, help="rollouts running at once")
    s.add_argument("--max-retries", type=int, default=2, help="infrastructure retries per rollout")
    s.add_argument("--max-staleness", type=int, default=1, help="policy versions a request may be behind")
    s.add_argument("--ray", metavar="ADDRESS", help="run groups on a Ray cluster (an address, auto, or local)")
    s.add_argument("--ray-actors", type=int, default=2, help="rollout workers on the cluster")
    s.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    from cua.rollout.server import serve_rollouts

    async def main() -> None:
        async with serve_rollouts(args.runs, local=args.local, server=args.server, token=args.token,
                                  max_episodes=args.max_episodes, max_retries=args.max_retries,
                                  max_staleness=args.max_staleness, host=args.host, port=args.port,
                                  ray=args.ray, ray_actors=args.ray_actors) as running:
            print(f"cua rollout service at {running.url} (trajectories in {args.runs})", flush=True)
            await asyncio.Event().wait()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    return 0
