"""What cua's commands print alike: a server's address with how it is guarded, and a JSON
document on a stdout whose reader may stop early.

`cua serve` and `cua rollout serve` both announce a token the same way, and `cua protocol
schema` and `cua rollout schema` both print a schema that is often piped into `head`; each
of those is written here once. Process helper: it imports nothing else of the project.
"""

from __future__ import annotations

import json
import os
import sys

__all__ = ["print_json", "serving_banner"]


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
