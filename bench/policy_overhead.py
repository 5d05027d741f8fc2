"""The policy server's own overhead per call, without model time.

A real `cua policy serve --backend scripted` process on loopback answers `act` calls
made through `make_policy("http://...")` (a 1280x720 screenshot as a binary websocket
frame, or with ``--transport http`` as a multipart upload);
the same scripted policy is also called in-process. The difference of the two median
latencies is what the server adds: transport, multipart parsing, validation, JSON.

    .venv/bin/python bench/policy_overhead.py [--calls 300] [--format jpeg|png] [--transport ws|http]

Last line: ``policy_overhead_p50_ms=<x>`` (goal: at most 10 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image, ImageDraw

from cua.observation import Observation, Screenshot, Size
from cua.policy import make_policy
from cua.policy.backends.scripted import ScriptedPolicy

QWEN_CLICK = ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [644, 364]}}'
              '\n</tool_call>')


def realistic_screenshot(fmt: str) -> Screenshot:
    """A 1280x720 page-like image (text lines, boxes), so the encoded size is typical."""
    rng = random.Random(7)
    image = Image.new("RGB", (1280, 720), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 1280, 56), fill=(32, 33, 36))
    for row in range(70, 700, 22):
        x = 40
        while x < 1200:
            word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
            draw.text((x, row), word, fill=(rng.randint(0, 90),) * 3)
            x += 9 * len(word) + 8
    for _ in range(12):
        x, y = rng.randint(0, 1100), rng.randint(60, 620)
        draw.rectangle((x, y, x + rng.randint(60, 180), y + rng.randint(24, 90)), outline=(26, 115, 232), width=2)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG" if fmt == "jpeg" else "PNG", quality=80)
    return Screenshot(format=fmt, width=1280, height=720, data=buffer.getvalue())


async def measure(calls: int, fmt: str, transport: str) -> dict[str, float]:
    frame = Size(width=1280, height=720)
    shot = realistic_screenshot(fmt)
    obs = Observation(sandbox_id="bench", frame=frame, screen=frame, screenshot=shot, url="http://bench.local/",
                      title="Bench")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.jsonl"
        script.write_text(json.dumps({"raw": QWEN_CLICK, "family": "qwen2.5-vl"}) + "\n")
        local = ScriptedPolicy.from_file(script)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "cua.policy.cli", "serve", "--backend", "scripted", "--script", str(script),
            "--port", "0", "--token", "bench-token", stdout=asyncio.subprocess.PIPE,
        )
        try:
            assert process.stdout is not None
            ready = (await asyncio.wait_for(process.stdout.readline(), 120)).decode().split()
            if not ready or ready[0] != "ready":
                raise RuntimeError(f"policy server did not start: {ready}")
            remote = make_policy(ready[1], token="bench-token", transport=transport)
            warmup = max(20, calls // 10)
            remote_ms: list[float] = []
            local_ms: list[float] = []
            for i in range(warmup + calls):  # interleaved, so both see the same machine load
                t0 = time.perf_counter()
                step = await remote.act(f"r{i}", "Click the button", obs)
                t1 = time.perf_counter()
                local_step = await local.act(f"l{i}", "Click the button", obs)
                t2 = time.perf_counter()
                if step.actions != local_step.actions or step.parse_error is not None:
                    raise RuntimeError(f"server and in-process answers differ: {step} vs {local_step}")
                if i >= warmup:
                    remote_ms.append((t1 - t0) * 1000)
                    local_ms.append((t2 - t1) * 1000)
            await remote.aclose()
        finally:
            process.terminate()
            await process.wait()
    remote_p50, local_p50 = statistics.median(remote_ms), statistics.median(local_ms)
    return {
        "bytes": float(len(shot.data)),
        "remote_p50": remote_p50,
        "remote_p90": statistics.quantiles(remote_ms, n=10)[-1],
        "local_p50": local_p50,
        "overhead_p50": remote_p50 - local_p50,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--format", choices=("jpeg", "png"), default="jpeg")
    parser.add_argument("--transport", choices=("ws", "http"), default="ws",
                        help="how the client talks to the server (make_policy's default is ws)")
    args = parser.parse_args()
    result = asyncio.run(measure(args.calls, args.format, args.transport))
    print(f"screenshot 1280x720 {args.format}: {result['bytes'] / 1024:.0f} KiB, {args.calls} calls over {args.transport}")
    print(f"server call p50 {result['remote_p50']:.2f} ms (p90 {result['remote_p90']:.2f} ms); "
          f"in-process scripted p50 {result['local_p50']:.3f} ms")
    print(f"policy_overhead_p50_ms={result['overhead_p50']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
