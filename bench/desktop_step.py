"""Act -> observation latency of the desktop container over the websocket, against raw
xdotool + mss + JPEG on a plain Xvfb, in one run.

cua: a desktop sandbox (bubblewrap container: Xvfb, openbox, xterm) created through a real
server (in this process, `cua.server.app.serve_in_background`) and driven with the client
(`cua.connect`): `act(Click)` with settle detection on and a 1280x720 JPEG q80
screenshot, received as a binary websocket frame.

Reference, measured in the same run on the same machine: a plain Xvfb with openbox and an
xterm on the host, and per step `xdotool mousemove X Y click --delay 0 1` + an mss grab +
a Pillow JPEG q80 encode (no settle detection at all). Both click the same spot of the
desktop background, and they alternate step by step so machine noise hits both alike.

    python bench/desktop_step.py [--steps 150] [--warmup 15]

Last line: desktop_step_p50_ratio=<cua p50 / reference p50>.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import shutil
import statistics
import subprocess
import sys
import time

import cua
from cua.actions import Click, Type
from cua.observation import ObserveOptions
from cua.server.app import serve_in_background

OBSERVE = ObserveOptions(format="jpeg", quality=80)
SCREEN = (1280, 720)
#: A spot of the desktop background (the xterm opens centred, away from this corner).
SPOT = (40, 690)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Reference:
    """Xvfb + openbox + xterm on the host, driven the direct way."""

    def __init__(self) -> None:
        try:
            from mss import MSS
        except ImportError:  # mss < 10.2
            from mss import mss as MSS

        r, w = os.pipe()
        self.xvfb = subprocess.Popen(["Xvfb", "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24", "-nolisten", "tcp",
                                      "-displayfd", str(w)], pass_fds=(w,), stderr=subprocess.DEVNULL)
        os.close(w)
        number = b""
        while not number.endswith(b"\n"):
            chunk = os.read(r, 16)
            if not chunk:
                raise RuntimeError("Xvfb failed to start")
            number += chunk
        os.close(r)
        self.display = f":{int(number)}"
        self.env = {**os.environ, "DISPLAY": self.display}
        self.apps = [subprocess.Popen(argv, env=self.env, stderr=subprocess.DEVNULL)
                     for argv in (["openbox"], ["xterm", "-geometry", "100x30"])]
        self.sct = MSS(display=self.display)
        deadline = time.monotonic() + 30
        while subprocess.run(["xdotool", "search", "--class", "xterm"], env=self.env,
                             capture_output=True).returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError("the reference xterm did not start")
            time.sleep(0.05)  # waiting for an app to map its window; bounded above

    def step(self) -> float:
        from PIL import Image

        t0 = time.perf_counter()
        subprocess.run(["xdotool", "mousemove", str(SPOT[0]), str(SPOT[1]), "click", "--delay", "0", "1"],
                       env=self.env, check=True)
        shot = self.sct.grab({"left": 0, "top": 0, "width": SCREEN[0], "height": SCREEN[1]})
        image = Image.frombuffer("RGB", shot.size, shot.bgra, "raw", "BGRX", 0, 1)
        buf = io.BytesIO()
        image.save(buf, "JPEG", quality=80)
        assert buf.tell() > 1000
        return (time.perf_counter() - t0) * 1000

    def close(self) -> None:
        self.sct.close()
        for proc in [*self.apps, self.xvfb]:
            proc.terminate()
            proc.wait()


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--warmup", type=int, default=15)
    args = parser.parse_args()
    for tool in ("bwrap", "Xvfb", "openbox", "xterm", "xdotool"):
        if shutil.which(tool) is None:
            print(f"missing {tool}", file=sys.stderr)
            return 2

    ref = Reference()
    cua_ms: list[float] = []
    ref_ms: list[float] = []
    settle_ms: list[float] = []
    type_ms: list[float] = []
    try:
        async with serve_in_background(auth=False) as server, cua.connect(server.url, server.token) as client:
            sandbox = await client.create("desktop", {"apps": ["xterm"], "screen": {"width": SCREEN[0],
                                                                                     "height": SCREEN[1]}})
            try:
                for i in range(args.warmup + args.steps):
                    t0 = time.perf_counter()
                    obs = await sandbox.act(Click(x=SPOT[0], y=SPOT[1]), observe=OBSERVE)
                    elapsed = (time.perf_counter() - t0) * 1000
                    assert obs.screenshot is not None and obs.screenshot.format == "jpeg" and obs.error is None
                    r = ref.step()
                    if i >= args.warmup:
                        cua_ms.append(elapsed)
                        ref_ms.append(r)
                        settle_ms.append(obs.settle.waited_ms if obs.settle else 0.0)
                for i in range(20):  # a step that draws: one character typed into the terminal
                    t0 = time.perf_counter()
                    await sandbox.act(Type(text="x"), observe=OBSERVE)
                    type_ms.append((time.perf_counter() - t0) * 1000)
            finally:
                await sandbox.close()
    finally:
        ref.close()

    p50_cua, p50_ref = statistics.median(cua_ms), statistics.median(ref_ms)
    print(f"steps={len(cua_ms)} screen={SCREEN[0]}x{SCREEN[1]} jpeg q80")
    print(f"cua desktop over websocket: p50={p50_cua:.1f} ms p90={pct(cua_ms, 0.9):.1f} ms "
          f"(settle p50={statistics.median(settle_ms):.1f} ms)")
    print(f"reference xdotool click --delay 0 + mss + jpeg: p50={p50_ref:.1f} ms p90={pct(ref_ms, 0.9):.1f} ms")
    print(f"cua typing one character into xterm (the screen changes): p50={statistics.median(type_ms):.1f} ms")
    print(f"desktop_step_p50_ratio={p50_cua / p50_ref:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
