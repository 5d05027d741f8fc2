"""`cua serve`, `cua token` (issue, revoke and list scoped tokens) and `cua protocol
schema`. Imports stay inside the command functions so that building the `cua` parser
stays cheap."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from cua.console import add_exposure_arguments, print_json, serving_banner

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = subparsers.add_parser("serve", help="run the sandbox server (websocket protocol + REST)",
                                  description="Serve sandboxes over the cua websocket protocol (/v1/ws).")
    add_exposure_arguments(serve, token_env="CUA_TOKEN", unguarded="runs commands on this host")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--tokens", type=Path, default=None, metavar="FILE",
                       help="issued scoped tokens (`cua token issue --file FILE`; default: $CUA_TOKENS_FILE), "
                            "re-read when it changes")
    serve.add_argument("--max-sandboxes", type=int, default=16)
    serve.add_argument("--pool", type=int, default=None, metavar="N",
                       help="keep N browser sandboxes per config started and loaded, so creates take one "
                            "(the first create of a config starts its pool; each one taken is replaced at once; "
                            "they stay up between sandboxes until the server stops; $CUA_BROWSER_POOL)")
    serve.add_argument("--idle-timeout", type=float, default=900.0,
                       help="close sandboxes unused for this many seconds (0: never)")
    serve.add_argument("--max-message-bytes", type=int, default=None,
                       help="largest JSON message accepted (larger: bad_request)")
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.set_defaults(func=_serve)

    token = subparsers.add_parser("token", help="issue, revoke and list scoped tokens for `cua serve --tokens`",
                                  description="Manage the token file a server reads (`cua serve --tokens FILE`). "
                                              "Scopes: drive (create and act), view (watch the principal's "
                                              "sandboxes), admin (list all, close any).")
    token_sub = token.add_subparsers(dest="token_command", required=True, metavar="SUBCOMMAND")
    issue = token_sub.add_parser("issue", help="issue a token (printed once; the file keeps only its digest)")
    issue.add_argument("--file", type=Path, default=None, help="the token file (default: $CUA_TOKENS_FILE)")
    issue.add_argument("--principal", required=True, help="who the token speaks for (sandboxes are owned by it)")
    issue.add_argument("--scope", action="append", choices=["drive", "view", "admin"], default=None,
                       help="a scope to grant; repeatable (default: drive)")
    issue.set_defaults(func=_token_issue)
    revoke = token_sub.add_parser("revoke", help="revoke a token by id (its open connections close)")
    revoke.add_argument("--file", type=Path, default=None)
    revoke.add_argument("token_id")
    revoke.set_defaults(func=_token_revoke)
    listing = token_sub.add_parser("list", help="list issued tokens (ids, principals, scopes, revoked)")
    listing.add_argument("--file", type=Path, default=None)
    listing.set_defaults(func=_token_list)

    proto = subparsers.add_parser("protocol", help="protocol tools")
    proto_sub = proto.add_subparsers(dest="protocol_command", required=True, metavar="SUBCOMMAND")
    schema = proto_sub.add_parser("schema", help="print the JSON Schema of every protocol message")
    schema.add_argument("--indent", type=int, default=2)
    schema.set_defaults(func=_schema)


def _serve(args: argparse.Namespace) -> int:
    import logging

    from cua import protocol
    from cua.server.app import ServerSettings, check_exposure, is_loopback, run
    from cua.server.auth import TOKENS_FILE_ENV, resolve_token
    from cua.server.memory import map_large_blocks_separately

    if args.max_sandboxes < 1:
        print("cua serve: --max-sandboxes must be at least 1", file=sys.stderr)
        return 2
    if args.pool is not None:
        if args.pool < 0:
            print("cua serve: --pool must be 0 or more", file=sys.stderr)
            return 2
        os.environ["CUA_BROWSER_POOL"] = str(args.pool)  # read by the browser sandboxes' spares
    if args.no_auth and not is_loopback(args.host) and not args.unsafe_public_no_auth:
        print(f"cua serve: --no-auth is refused on {args.host}, which is not loopback: anyone who reaches the port "
              "could run commands on this host. Bind 127.0.0.1, use a token, or add --unsafe-public-no-auth.",
              file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    map_large_blocks_separately()
    token, generated = resolve_token(args.token, no_auth=args.no_auth)
    tokens_file = args.tokens or (Path(os.environ[TOKENS_FILE_ENV]) if os.environ.get(TOKENS_FILE_ENV) else None)
    settings = ServerSettings(
        host=args.host, port=args.port, token=token, max_sandboxes=args.max_sandboxes,
        idle_timeout=args.idle_timeout or None,
        max_message_bytes=args.max_message_bytes or protocol.DEFAULT_MAX_MESSAGE_BYTES,
        allowed_origins=tuple(args.allow_origin), tokens_file=tokens_file,
        unsafe_public_no_auth=args.unsafe_public_no_auth,
    )
    try:
        check_exposure(settings)
    except ValueError as exc:
        print(f"cua serve: {exc}", file=sys.stderr)
        return 2
    print(serving_banner(f"cua serve: ws://{args.host}:{args.port}/v1/ws", token, generated=generated,
                         token_env="CUA_TOKEN", unguarded="controls the sandboxes"), flush=True)
    run(settings)
    return 0


def _in_token_file(args: argparse.Namespace, work: Callable[[Path], int]) -> int:
    """Run one `cua token` command's `work` on the tokens file that `--file` or the
    environment names; exit 2 when none is named or the file cannot be used (ValueError)."""
    from cua.server.auth import TOKENS_FILE_ENV

    path = args.file or (Path(os.environ[TOKENS_FILE_ENV]) if os.environ.get(TOKENS_FILE_ENV) else None)
    if path is None:
        print(f"cua token: pass --file or set ${TOKENS_FILE_ENV}", file=sys.stderr)
        return 2
    try:
        return work(path)
    except ValueError as exc:
        print(f"cua token: {exc}", file=sys.stderr)
        return 2


def _token_issue(args: argparse.Namespace) -> int:
    from cua.server.auth import issue_token

    def issue(path: Path) -> int:
        token, entry = issue_token(path, args.principal, args.scope or ["drive"])
        print(f"id: {entry['id']}\nprincipal: {entry['principal']}\nscopes: {','.join(entry['scopes'])}\n"
              f"token: {token}", flush=True)
        return 0

    return _in_token_file(args, issue)


def _token_revoke(args: argparse.Namespace) -> int:
    from cua.server.auth import revoke_token

    def revoke(path: Path) -> int:
        if not revoke_token(path, args.token_id):
            print(f"cua token: no live token {args.token_id!r} in {path}", file=sys.stderr)
            return 1
        print(f"revoked {args.token_id}")
        return 0

    return _in_token_file(args, revoke)


def _token_list(args: argparse.Namespace) -> int:
    import json

    from cua.server.auth import list_tokens

    def list_(path: Path) -> int:
        for entry in list_tokens(path):
            print(json.dumps(entry))
        return 0

    return _in_token_file(args, list_)


def _schema(args: argparse.Namespace) -> int:
    from cua.protocol import json_schema

    print_json(json_schema(), args.indent or None)
    return 0
