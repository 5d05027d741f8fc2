"""The `cua` command line. Each part owns its subcommands in a small module exposing
`register(subparsers)`; this file only wires them, and imports nothing heavy up front.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: (module, attribute) of every part's `register(subparsers)`. Importing a part's CLI
#: module must stay cheap: heavy imports belong inside the command functions.
COMMAND_MODULES: tuple[str, ...] = (
    "cua.server.cli",        # cua serve, cua protocol schema
    "cua.eval.cli",          # cua eval
    "cua.record.cli",        # cua record
    "cua.eval.tasks_cli",    # cua tasks list|check
    "cua.policy.cli",        # cua policy serve|parse
    "cua.sandboxes.vm.cli",  # cua vm build
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cua", description="Sandboxes for browser and computer-use agents.")
    parser.add_argument("--version", action="version", version=f"cua {importlib.import_module('cua').__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result = args.func(args)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
