"""`cua vm build [RECIPE]`: build (or find in the cache) a VM image from a recipe."""

from __future__ import annotations

import argparse
import sys
import time


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    vm = subparsers.add_parser("vm", help="QEMU virtual machine images")
    sub = vm.add_subparsers(dest="vm_command", required=True, metavar="VM_COMMAND")
    build = sub.add_parser("build", help="build a VM image from a recipe in vm-images/ (cached by recipe hash)")
    build.add_argument("recipe", nargs="?", default="desktop",
                       help="recipe name under vm-images/ or a path to a recipe folder (default: desktop)")
    build.add_argument("--force", action="store_true", help="rebuild even when the cache has this recipe's image")
    build.add_argument("--quiet", "-q", action="store_true", help="print only the result line")
    build.set_defaults(func=_build)


def _build(args: argparse.Namespace) -> int:
    from cua.errors import CuaError
    from cua.sandboxes.vm.image import build_image, load_recipe

    def say(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    t0 = time.monotonic()
    try:
        recipe = load_recipe(args.recipe)
        image = build_image(recipe, force=args.force, log=say)
    except CuaError as exc:
        print(f"cua vm build: {exc.message}", file=sys.stderr)
        return 2 if exc.fault == "client" else 1
    took = time.monotonic() - t0
    state = "cached" if image.cached else "built"
    print(f"{state} {image.name} {image.hash} in {took:.1f} s: {image.size_bytes / 2**20:.0f} MiB at {image.dir}")
    return 0
