"""`cua openenv serve`: cua's tasks as an OpenEnv environment, for OpenEnv's clients and TRL.

    cua openenv serve --port 8400 [--local | --server ws://HOST:PORT/v1/ws] [--task fake.set_counter@1]

OpenEnv's spec: HTTP `/reset`, `/step`, `/state`, `/health`, `/schema`, `/metadata`, and the
`/ws` websocket, one sandbox per session (`--max-sessions`, idle sessions closed after
`--idle-timeout`). A reset takes `task` (any template id, of every sandbox kind) and `seed`;
a step takes `{"action": <a cua action>}`. Every route but /health needs the server's token
(`Authorization: Bearer TOKEN`, or `?token=` on the websocket; printed at start unless given).
Clients: `cua.hubs.openenv.client.CuaEnvClient`, or any OpenEnv client.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from cua.console import add_exposure_arguments, add_sandbox_source_arguments, serving_banner

__all__ = ["register"]

#: What anyone who reaches an unguarded OpenEnv server can do.
_UNGUARDED = "starts sandboxes and reads their screens"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("openenv", help="cua as an OpenEnv environment", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    osub = p.add_subparsers(dest="openenv_command", required=True, metavar="SUBCOMMAND")
    s = osub.add_parser("serve", help="serve OpenEnv's /reset, /step, /state, /health, /schema and /ws")
    add_exposure_arguments(s, token_env="CUA_OPENENV_TOKEN", unguarded=_UNGUARDED)
    s.add_argument("--port", type=int, default=8400)
    add_sandbox_source_arguments(s)
    s.add_argument("--max-sessions", type=int, default=4, help="sessions (and sandboxes) at once")
    s.add_argument("--idle-timeout", type=float, default=300.0,
                   help="seconds without a reset or step before a session and its sandbox are closed")
    s.add_argument("--task", default=None, help="the task a reset that names none starts")
    s.add_argument("--reward", choices=("sparse", "dense"), default="sparse")
    s.add_argument("--format", choices=("png", "jpeg"), default="jpeg", help="screenshot encoding")
    s.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    try:
        from cua.hubs.openenv.server import TOKEN_ENV, serve_openenv
    except ImportError as exc:
        print(f"cua openenv serve: needs openenv-core (scripts/setup.sh installs it): {exc}", file=sys.stderr)
        return 2
    from cua.exposure import check_bind, normalize_origins, resolve_token
    from cua.observation import ObserveOptions

    token, generated = resolve_token(args.token, env=TOKEN_ENV, no_auth=args.no_auth)
    try:  # refused before anything starts
        check_bind(args.host, auth=token is not None, unsafe_public_no_auth=args.unsafe_public_no_auth)
        normalize_origins(args.allow_origin)
        if args.max_sessions < 1 or args.idle_timeout <= 0:
            raise ValueError("--max-sessions is at least 1 and --idle-timeout positive")
    except ValueError as exc:
        print(f"cua openenv serve: {exc}", file=sys.stderr)
        return 2

    async def main() -> None:
        async with serve_openenv(local=args.local, server=args.server, server_token=args.server_token, token=token,
                                 no_auth=args.no_auth, max_sessions=args.max_sessions,
                                 idle_timeout_s=args.idle_timeout, default_task=args.task, reward=args.reward,
                                 observe=ObserveOptions(format=args.format), allowed_origins=args.allow_origin,
                                 unsafe_public_no_auth=args.unsafe_public_no_auth, host=args.host,
                                 port=args.port) as running:
            print(serving_banner(f"cua openenv serve: {running.url} (OpenEnv: /ws, /reset, /step, /state)", token,
                                 generated=generated, token_env=TOKEN_ENV, unguarded=_UNGUARDED), flush=True)
            await asyncio.Event().wait()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    return 0
