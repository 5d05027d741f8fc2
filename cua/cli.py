"""The `cua` command line. Each part owns its subcommands in a small module exposing
`register(subparsers)`; this file only wires them. Only the module of the command being
run is imported, so `cua tasks list` never loads Playwright or torch, and a part whose
optional dependencies are missing breaks only its own commands, with a clear message.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

#: Top-level command -> the module whose `register(subparsers)` defines it (and the extra
#: that provides its dependencies).
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("cua.server.cli", "browser"),
    "protocol": ("cua.server.cli", ""),
    "token": ("cua.server.cli", ""),
    "eval": ("cua.eval.cli", "browser"),
    "record": ("cua.record.cli", "browser"),
    "tasks": ("cua.tasks_cli", "browser"),
    "policy": ("cua.policy.cli", "policy"),
    "vm": ("cua.sandboxes.vm.cli", "vm"),
    "trajectory": ("cua.trajectory_cli", ""),
    "export": ("cua.export.cli", ""),
    "replay": ("cua.replay.cli", "browser"),
    "report": ("cua.report.cli", ""),
    "rollout": ("cua.rollout.cli", "browser"),
    "openenv": ("cua.hubs.openenv.cli", "browser"),
}


def _register(sub: argparse._SubParsersAction[argparse.ArgumentParser], module_name: str, extra: str) -> None:
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        names = [name for name, (mod, _) in COMMANDS.items() if mod == module_name]
        for name in names:
            broken = sub.add_parser(name, help=f"(unavailable: {exc.name or exc})")
            broken.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            broken.set_defaults(func=lambda _args, exc=exc: _unavailable(exc, extra))
        return
    module.register(sub)


def _unavailable(exc: ImportError, extra: str) -> int:
    hint = f" (pip install 'cua[{extra}]')" if extra else ""
    print(f"cua: this command needs {exc.name or 'a module'} that is not installed{hint}: {exc}", file=sys.stderr)
    return 2


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cua", description="Sandboxes for browser and computer-use agents.")
    parser.add_argument("--version", action="version", version=f"cua {importlib.import_module('cua').__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = [COMMANDS[command]] if command in COMMANDS else list(COMMANDS.values())
    for module_name, extra in {module: extra for module, extra in chosen}.items():
        _register(sub, module_name, extra)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser(command).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # the reader had enough (`cua ... | head`): end quietly, as `cat` does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
