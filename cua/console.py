"""What cua's commands share: the options that say who may reach a server they start, the
line that announces it, and a JSON document on a stdout whose reader may stop early.

`cua serve` and `cua rollout serve` take the same exposure options and announce a token the
same way, and `cua protocol schema` and `cua rollout schema` both print a schema that is
often piped into `head`; each of those is written here once, and so are the appearance
variant options of `cua eval` and `cua tasks check`. Process helper: it imports nothing else
of the project but the argument types.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from cua.argtypes import whole_number

__all__ = ["add_exposure_arguments", "add_sandbox_source_arguments", "add_variant_arguments", "print_json",
           "serving_banner"]


def add_sandbox_source_arguments(parser: argparse.ArgumentParser) -> None:
    """Where a server's sandboxes come from: a running `cua serve` (`--server`, with
    `--server-token`), this process (`--local`), or else a `cua serve` child it starts."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--server", help="a `cua serve` websocket URL for the sandboxes (default: start one)")
    where.add_argument("--local", action="store_true", help="sandboxes in this process")
    parser.add_argument("--server-token", default=os.environ.get("CUA_TOKEN"),
                        help="token of --server (default: $CUA_TOKEN)")


def add_variant_arguments(parser: argparse.ArgumentParser, *, verb: str) -> None:
    """The appearance variants a command runs each task instance in (`cua eval`, `cua tasks
    check`): `--variants K` and the `--hold-out` that splits them; `verb` says what it does."""
    parser.add_argument("--variants", type=whole_number(1), default=None, metavar="K",
                        help=f"{verb} each task instance in K seeded appearance variants (theme, layout, locale, "
                             "viewport; the app's default look among them)")
    parser.add_argument("--hold-out", metavar="AXIS=VALUE,...",
                        help=f"variants held out of training (e.g. theme=contrast,locale=de-DE): --split train {verb}s "
                             "the others, --split test the held ones (and test templates in any variant)")


def add_exposure_arguments(parser: argparse.ArgumentParser, *, token_env: str, unguarded: str) -> None:
    """The options of a server that `cua.exposure`'s rules apply to: where it listens and
    who may reach it. `token_env` names the variable a token may come from; `unguarded`
    says what anyone who reaches an unguarded public port can do."""
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: loopback only)")
    parser.add_argument("--token", default=None,
                        help=f"bearer token clients must present (default: ${token_env}, else a generated one, "
                             "printed)")
    parser.add_argument("--no-auth", action="store_true", help="accept every client without a token (loopback only)")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="a browser origin (scheme://host[:port]) allowed to connect; repeatable. "
                             "Requests from every other web page are refused")
    parser.add_argument("--unsafe-public-no-auth", action="store_true",
                        help=f"with --no-auth, serve a non-loopback --host anyway (anyone who reaches the port "
                             f"{unguarded})")


def serving_banner(where: str, token: str | None, *, generated: bool, token_env: str, unguarded: str) -> str:
    """What a server prints as it starts: `where` it listens, then how it is guarded.

    `token` None: auth is off, and `unguarded` says what anyone who reaches the port can do;
    a `generated` token is shown (the caller has no other way to learn it), with how to
    choose one; a token the caller chose is never echoed.
    """
    if token is None:
        return f"{where} (auth DISABLED: anyone who can reach the port {unguarded})"
    if generated:
        return f"{where}\ntoken: {token}\n(set {token_env} or pass --token to choose one)"
    return f"{where} (token required)"


def print_json(document: object, indent: int | None) -> None:
    """Print `document` as JSON on stdout. A reader that has had enough (`... | head`) ends
    the output quietly: the rest goes to /dev/null rather than into a BrokenPipeError at exit."""
    try:
        print(json.dumps(document, indent=indent))
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
