"""Memory (PSS) of one desktop container with its window manager, a terminal and a
visible browser window.

Creates a desktop sandbox with xterm and chromium (the `chromium` app preset: one
renderer, no GPU process, background services off) showing a local page, waits until the
browser window is mapped and the page drawn, lets start-up work finish, then sums the
proportional set size (/proc/PID/smaps_rollup) of every process of the container: bwrap,
the guest agent, Xvfb, openbox, xterm and its shell, and every chromium process.

    python bench/desktop_memory.py

Last line: desktop_mb_with_browser=<MiB>.
"""

from __future__ import annotations

import asyncio
import collections
import sys
import time
from pathlib import Path

from cua.sandboxes.desktop import DesktopConfig, DesktopSandbox
from cua.state import WindowsQuery

PAGE = ("<!doctype html><title>Memory test</title><h1>Hello</h1>"
        "<p>A small page, so the figure measures the browser, not the page.</p>")


def tree(root: int) -> list[int]:
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue  # exited while we walked
    return out


def pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        return 0  # exited while we read
    return 0


def name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


async def main() -> int:
    config = DesktopConfig(apps=["xterm", {"name": "chromium", "args": ["file:///home/user/page.html"]}],
                           files={"page.html": PAGE})
    sandbox = await DesktopSandbox.create(config, sandbox_id="bench-memory")
    try:
        [listing] = await sandbox.query([WindowsQuery()])
        classes = sorted(w["class"] for w in listing.value["windows"] if w["mapped"])
        assert any("chromium" in c.lower() for c in classes), classes
        # Start-up work (profile creation, first paint) settles within seconds; measure the
        # steady state an agent works in, not the start-up peak.
        await asyncio.sleep(5)
        root = sandbox.info().details["container_pid"]
        per_name: dict[str, int] = collections.Counter()
        total = 0
        for pid in tree(root):
            kib = pss_kib(pid)
            per_name[name(pid)] += kib
            total += kib
        obs = await sandbox.observe()
        assert obs.screenshot is not None
        print(f"windows: {', '.join(classes)}; screen {obs.screen.width}x{obs.screen.height}")
        for proc_name, kib in sorted(per_name.items(), key=lambda kv: -kv[1]):
            print(f"  {proc_name:<20} {kib / 1024:7.1f} MiB")
        print(f"desktop_mb_with_browser={total / 1024:.1f}")
    finally:
        await sandbox.close()
    return 0


if __name__ == "__main__":
    t0 = time.perf_counter()
    code = asyncio.run(main())
    sys.exit(code)
