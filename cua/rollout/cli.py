"""`cua rollout serve`: whole episodes for trainers, over HTTP and websocket; `cua rollout
schema`: the JSON Schema of its requests and responses.

    cua rollout serve --port 8300 --runs runs/rollouts [--server ws://HOST:PORT/v1/ws | --local]
    cua rollout schema > rollout.schema.json

`POST /rollouts` runs groups of episodes against an OpenAI-compatible policy endpoint and
returns their trajectories (token ids, logprobs, timings, status, mask_sample); `/envs`
gives environment handles (reset, step, snapshot, fork, close); `/ws` the same over one
websocket. Every route but /health needs the service's token (`Authorization: Bearer
TOKEN`; printed at start unless given), and browser origins not allow-listed are refused.
See docs/rollout.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path

from cua.argtypes import real_number, whole_number
from cua.console import add_exposure_arguments, add_sandbox_source_arguments, print_json, serving_banner

__all__ = ["register"]


#: What anyone who reaches an unguarded rollout service can do.
_UNGUARDED = "starts sandboxes and reads their screens"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("rollout", help="the rollout service for RL trainers", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    rsub = p.add_subparsers(dest="rollout_command", required=True, metavar="SUBCOMMAND")
    s = rsub.add_parser("serve", help="serve POST /rollouts, /envs and /ws")
    add_exposure_arguments(s, token_env="CUA_ROLLOUT_TOKEN", unguarded=_UNGUARDED)
    s.add_argument("--port", type=int, default=8300)
    s.add_argument("--runs", default="runs/rollouts", help="where trajectories are written")
    add_sandbox_source_arguments(s)
    s.add_argument("--max-episodes", type=whole_number(1, 4096), default=8, help="rollouts running at once")
    s.add_argument("--max-queued", type=whole_number(0, 100_000), default=None, metavar="N",
                   help="rollouts admitted to wait for a slot beyond those running (default: 4x --max-episodes); "
                        "a request past them is refused with a retryable capacity error (HTTP 503)")
    s.add_argument("--max-retries", type=int, default=2, help="infrastructure retries per rollout")
    s.add_argument("--max-staleness", type=int, default=1, help="policy versions a request may be behind")
    s.add_argument("--ray", metavar="ADDRESS",
                   help="run groups on Ray workers spread over a cluster's nodes (an address, auto, or local); each "
                        "worker's sandboxes live on its node: in its process, or with --server "
                        "ws://{node_ip}:PORT/v1/ws at the server of its node. A lost node's groups run again on "
                        "another (up to --max-retries nodes each)")
    s.add_argument("--ray-actors", type=int, default=2, help="rollout workers on the cluster")
    s.add_argument("--ray-cpus", type=real_number(0.0, above=True), default=1.0,
                   help="CPUs Ray reserves per rollout worker (default 1; see docs/scale.md)")
    c = s.add_argument_group("the curriculum (requests with `sample` draw their tasks by it; GET /curriculum)")
    c.add_argument("--curriculum", choices=["uniform", "band", "progress"], default="uniform",
                   help="uniform; band: templates whose success is inside --band; progress: learning progress")
    c.add_argument("--band", type=_band, default=(0.2, 0.8), metavar="LOW,HIGH",
                   help="the band rule's target success (default 0.2,0.8)")
    c.add_argument("--explore", type=real_number(0.0), default=0.1, metavar="SHARE",
                   help="share of draws made uniformly, whatever the rule (default 0.1)")
    c.add_argument("--curriculum-state", type=Path, metavar="FILE",
                   help="where the curriculum is kept across restarts (default RUNS/curriculum.json)")
    s.set_defaults(func=_serve)
    schema = rsub.add_parser("schema", help="print the JSON Schema of the service's requests and responses")
    schema.add_argument("--indent", type=int, default=2)
    schema.set_defaults(func=_schema)


def _band(text: str) -> tuple[float, float]:
    """`LOW,HIGH`, two success rates with LOW <= HIGH: a usage error otherwise."""
    low, sep, high = text.partition(",")
    try:
        band = (float(low), float(high))
    except ValueError:
        band = (-1.0, -1.0)
    if not sep or not 0.0 <= band[0] <= band[1] <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected LOW,HIGH with 0 <= LOW <= HIGH <= 1, e.g. 0.2,0.8")
    return band


def _serve(args: argparse.Namespace) -> int:
    from cua.exposure import check_bind, normalize_origins, resolve_token
    from cua.rollout.curriculum import Curriculum, CurriculumSettings
    from cua.rollout.server import TOKEN_ENV, serve_rollouts

    token, generated = resolve_token(args.token, env=TOKEN_ENV, no_auth=args.no_auth)
    try:  # refused before anything starts
        check_bind(args.host, auth=token is not None, unsafe_public_no_auth=args.unsafe_public_no_auth)
        normalize_origins(args.allow_origin)
        curriculum = CurriculumSettings(rule=args.curriculum, band_low=args.band[0], band_high=args.band[1],
                                        explore=min(args.explore, 1.0))
        Curriculum(curriculum, args.curriculum_state or Path(args.runs) / "curriculum.json")  # a state file it can read
    except ValueError as exc:
        print(f"cua rollout serve: {exc}", file=sys.stderr)
        return 2

    async def main() -> None:
        async with contextlib.AsyncExitStack() as stack:
            placement = None
            if args.ray is not None:  # groups run on Ray actors, each a rollout service of its own
                from cua.rollout.ray_placement import ray_placement

                placement = await stack.enter_async_context(ray_placement(
                    args.ray, actors=args.ray_actors, runs_dir=args.runs, max_episodes=args.max_episodes,
                    max_retries=args.max_retries, num_cpus=args.ray_cpus, local=args.server is None,
                    server=args.server, server_token=args.server_token))
            running = await stack.enter_async_context(serve_rollouts(
                args.runs, local=args.local, server=_own_server(args.server), server_token=args.server_token,
                token=token,
                no_auth=args.no_auth, allowed_origins=args.allow_origin,
                unsafe_public_no_auth=args.unsafe_public_no_auth, max_episodes=args.max_episodes,
                max_queued=args.max_queued, max_retries=args.max_retries, max_staleness=args.max_staleness,
                host=args.host, port=args.port,
                placement=placement, curriculum=curriculum, curriculum_path=args.curriculum_state))
            print(serving_banner(f"cua rollout serve: {running.url} (trajectories in {args.runs})", token,
                                 generated=generated, token_env=TOKEN_ENV,
                                 unguarded=_UNGUARDED), flush=True)
            await asyncio.Event().wait()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    return 0


def _own_server(server: str | None) -> str | None:
    """The sandbox server this process uses (for /envs): a per-node URL (`{node_ip}`, with
    --ray) names the server of this machine's node."""
    if server is None or "{node_ip}" not in server:
        return server
    import ray.util

    return server.replace("{node_ip}", ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]


def _schema(args: argparse.Namespace) -> int:
    from cua.rollout.models import json_schema

    print_json(json_schema(), args.indent or None)
    return 0
