"""App reset latency: p50 of `POST /__cua/reset` over each bundled app's unix control
socket, as a sandbox host does it (httpx over the socket, the app served by
`python -m cua.tasks.apps.serve`). Seeds cycle through a small set, as an eval with a
few seeds per template does; every seed's first reset (which builds the seed image) is
excluded as warm-up. Goal: p50 <= 50 ms.

    python bench/app_reset.py [--app NAME ...] [--resets 100] [--seeds 3]

Last line: `app_reset_p50_ms=<x>`.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _latency import p50, spread  # bench/ is this script's folder

from cua.tasks.apps import app_names

READY_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(app: str, sock: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", app, "--port", str(free_port()),
                             "--socket", str(sock)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip() == "ready":
            return proc
        if not line and proc.poll() is not None:
            raise RuntimeError(f"{app} exited: {proc.stderr.read() if proc.stderr else ''}")
    proc.kill()
    raise RuntimeError(f"{app} did not print ready within {READY_TIMEOUT_S:g} s")


def bench_app(app: str, resets: int, seeds: int, tmp: Path) -> list[float]:
    sock = tmp / f"{app}.sock"
    proc = start(app, sock)
    try:
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://app", timeout=30) as client:
            for seed in range(seeds):  # warm-up: build each seed image once
                client.post("/__cua/reset", json={"seed": seed}).raise_for_status()
            samples = []
            for i in range(resets):
                started = time.perf_counter()
                client.post("/__cua/reset", json={"seed": i % seeds}).raise_for_status()
                samples.append((time.perf_counter() - started) * 1000)
            return samples
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", action="append", help="apps to time (default: every bundled app)")
    parser.add_argument("--resets", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    samples: list[float] = []
    with tempfile.TemporaryDirectory(prefix="cua-bench-") as tmp:
        for app in args.app or app_names():
            app_samples = bench_app(app, args.resets, args.seeds, Path(tmp))
            print(f"{app}: {spread(app_samples)} max={max(app_samples):.2f} ms")
            samples += app_samples
    print(f"app_reset_p50_ms={p50(samples):.2f}")


if __name__ == "__main__":
    main()
