"""`cua serve` and `cua protocol schema`. Imports stay inside the command functions so
that building the `cua` parser stays cheap."""

from __future__ import annotations

import argparse
import sys

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve = subparsers.add_parser("serve", help="run the sandbox server (websocket protocol + REST)",
                                  description="Serve sandboxes over the cua websocket protocol (/v1/ws).")
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: loopback only)")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--token", default=None,
                       help="bearer token clients must present (default: $CUA_TOKEN, else a generated one, printed)")
    serve.add_argument("--no-auth", action="store_true", help="accept every connection without a token")
    serve.add_argument("--max-sandboxes", type=int, default=16)
    serve.add_argument("--idle-timeout", type=float, default=900.0,
                       help="close sandboxes unused for this many seconds (0: never)")
    serve.add_argument("--max-message-bytes", type=int, default=None,
                       help="largest JSON message accepted (larger: bad_request)")
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.set_defaults(func=_serve)

    proto = subparsers.add_parser("protocol", help="protocol tools")
    proto_sub = proto.add_subparsers(dest="protocol_command", required=True, metavar="SUBCOMMAND")
    schema = proto_sub.add_parser("schema", help="print the JSON Schema of every protocol message")
    schema.add_argument("--indent", type=int, default=2)
    schema.set_defaults(func=_schema)


def _serve(args: argparse.Namespace) -> int:
    import logging

    from cua import protocol
    from cua.server.app import ServerSettings, run
    from cua.server.auth import resolve_token

    if args.max_sandboxes < 1:
        print("cua serve: --max-sandboxes must be at least 1", file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    token, generated = resolve_token(args.token, no_auth=args.no_auth)
    settings = ServerSettings(
        host=args.host, port=args.port, token=token, max_sandboxes=args.max_sandboxes,
        idle_timeout=args.idle_timeout or None,
        max_message_bytes=args.max_message_bytes or protocol.DEFAULT_MAX_MESSAGE_BYTES,
    )
    url = f"ws://{args.host}:{args.port}/v1/ws"
    if token is None:
        print(f"cua serve: {url} (auth DISABLED: anyone who can reach the port controls the sandboxes)", flush=True)
    elif generated:
        print(f"cua serve: {url}\ntoken: {token}\n(set CUA_TOKEN or pass --token to choose one)", flush=True)
    else:
        print(f"cua serve: {url} (token required)", flush=True)
    run(settings)
    return 0


def _schema(args: argparse.Namespace) -> int:
    import json

    from cua.protocol import json_schema

    try:
        print(json.dumps(json_schema(), indent=args.indent or None))
        sys.stdout.flush()
    except BrokenPipeError:  # `cua protocol schema | head`: the reader had enough
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
