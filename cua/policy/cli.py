"""`cua policy serve` and `cua policy parse`. Heavy imports happen inside the commands."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

FAMILY_NAMES = ("qwen2.5-vl", "qwen3-vl", "ui-tars-1.5", "openai", "anthropic", "osworld",
                "qwen2.5-vl-mobile", "qwen3-vl-mobile", "ui-tars-1.5-mobile", "androidworld")
#: Families with Qwen's tool (`--tool-api`), and those that smart-resize the screenshot.
_QWEN = ("qwen2.5-vl", "qwen3-vl", "qwen2.5-vl-mobile", "qwen3-vl-mobile")
_RESIZED = (*_QWEN, "ui-tars-1.5", "ui-tars-1.5-mobile")


def register(subparsers: Any) -> None:
    policy = subparsers.add_parser("policy", help="VLM policy server and output parsers")
    sub = policy.add_subparsers(dest="policy_command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="serve a policy over HTTP and websocket (loopback, bearer token)")
    serve.add_argument("--backend", choices=("openai", "transformers", "scripted"), required=True)
    serve.add_argument("--family", choices=FAMILY_NAMES, help="model family (prompt + parser)")
    serve.add_argument("--model", help="model name (openai) or checkpoint path (transformers)")
    serve.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    serve.add_argument("--api-key", help="API key for the OpenAI-compatible server (default: $OPENAI_API_KEY)")
    serve.add_argument("--script", help="JSONL trajectory for the scripted backend")
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: loopback only)")
    serve.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                       help="a browser origin (scheme://host[:port]) allowed to call the server; repeatable. "
                            "Requests from every other web page are refused (403)")
    serve.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    serve.add_argument("--token", help="bearer token (default: generated and printed)")
    serve.add_argument("--history-images", type=int, default=3, help="screenshots kept in the prompt")
    serve.add_argument("--tool-api", action="store_true",
                       help="qwen families: send the tool in the request's `tools` (server-side tool calling)")
    serve.add_argument("--min-pixels", type=int)
    serve.add_argument("--max-pixels", type=int)
    serve.add_argument("--device", help="transformers: torch device (default: cuda when present, else cpu)")
    serve.add_argument("--dtype", help="transformers: torch dtype, e.g. bfloat16")
    serve.add_argument("--max-batch", type=int, default=8, help="transformers: requests batched together")
    serve.set_defaults(func=_serve)

    parse = sub.add_parser("parse", help="parse one raw model output (stdin) into unified actions (JSON)")
    parse.add_argument("--family", choices=FAMILY_NAMES, required=True)
    parse.add_argument("--screen", required=True, help="observation frame as WxH, e.g. 1280x720")
    parse.add_argument("--min-pixels", type=int)
    parse.add_argument("--max-pixels", type=int)
    parse.add_argument("--factor", type=int, help="smart_resize factor (Qwen-style families)")
    parse.add_argument("--pointer", help="current pointer position X,Y in screen pixels")
    parse.set_defaults(func=_parse)


def _family_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if getattr(args, "tool_api", False):
        if args.family not in _QWEN:
            raise SystemExit(f"--tool-api applies only to {', '.join(_QWEN)}")
        options["tool_api"] = True
    if args.family in _RESIZED:
        for name in ("min_pixels", "max_pixels", "factor"):
            value = getattr(args, name, None)
            if value is not None:
                options[name] = value
    else:
        for name in ("min_pixels", "max_pixels", "factor"):
            if getattr(args, name, None) is not None:
                raise SystemExit(f"--{name.replace('_', '-')} applies only to {', '.join(_RESIZED)}")
    return options


def _parse(args: argparse.Namespace) -> int:
    from cua.observation import Size
    from cua.policy.engine import parse_output
    from cua.policy.families import get_family

    try:
        width, height = (int(v) for v in args.screen.lower().split("x"))
        frame = Size(width=width, height=height)
        pointer = tuple(float(v) for v in args.pointer.split(",")) if args.pointer else None
        if pointer is not None and len(pointer) != 2:
            raise ValueError("--pointer must be X,Y")
    except ValueError as exc:
        print(f"cua policy parse: bad --screen or --pointer: {exc}", file=sys.stderr)
        return 2
    family = get_family(args.family, **_family_options(args))
    raw = sys.stdin.read()
    parsed, error, _ = parse_output(family, raw, frame, pointer)
    model = family.model_frame(frame)
    out: dict[str, Any] = {
        "family": family.name,
        "screen": {"width": frame.width, "height": frame.height},
        "model_image": {"width": model.image.width, "height": model.image.height},
    }
    if error is not None:
        out["parse_error"] = error.model_dump()
        print(json.dumps(out, indent=2))
        return 1
    assert parsed is not None
    out["actions"] = [a.model_dump() for a in parsed.actions]
    out["thought"] = parsed.thought
    print(json.dumps(out, indent=2))
    return 0


def _serve(args: argparse.Namespace) -> int:
    import asyncio

    from cua.exposure import normalize_origins
    from cua.policy.service import build_policy, serve

    try:
        normalize_origins(args.allow_origin)
        policy, info = build_policy(
            backend=args.backend, family=args.family, model=args.model, base_url=args.base_url,
            api_key=args.api_key, script=args.script, history_images=args.history_images,
            family_options=_family_options(args) if args.family else {}, device=args.device,
            dtype=args.dtype, max_batch=args.max_batch,
        )
    except ValueError as exc:
        print(f"cua policy serve: {exc}", file=sys.stderr)
        return 2
    asyncio.run(serve(policy, host=args.host, port=args.port, token=args.token, info=info,
                      allowed_origins=args.allow_origin))
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m cua.policy.cli serve|parse ...`: the same commands without the rest of
    the `cua` CLI (useful on a machine that only serves models)."""
    parser = argparse.ArgumentParser(prog="cua")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["policy", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
