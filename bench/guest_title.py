"""What the focused window costs a guest screenshot (desktop container, xterm + mousepad).

Every guest observation carries the focused window's title, read by the agent on the same
X turn as the screenshot (`focused="title"`: two X round trips); `ObserveOptions(focused=True)`
asks for the whole window description (`focused="window"`: about ten). This times the
agent's screenshot alone, with the title and with the whole window, in 10 interleaved rounds
of 40 calls (the order rotating), best round of each; the figures are ratios to the plain screenshot measured in
the same run.

    python bench/guest_title.py

Last line: title_ratio=<x> window_ratio=<x>.
"""

from __future__ import annotations

import asyncio
import time

from cua.sandboxes.desktop import DesktopConfig, DesktopSandbox
from cua.sandboxes.guest.client import FocusedPart

ROUNDS, CALLS = 10, 40


async def main() -> None:
    sb = await DesktopSandbox.create(DesktopConfig(apps=["xterm", "mousepad"]), sandbox_id="bench-guest-title")
    try:
        agent = sb._agent()
        parts: tuple[FocusedPart | None, ...] = (None, "title", "window")
        best = {part: float("inf") for part in parts}
        for r in range(ROUNDS):
            for part in parts[r % 3:] + parts[:r % 3]:  # each goes first as often: no order effect
                t0 = time.perf_counter()
                for _ in range(CALLS):
                    await agent.screenshot("jpeg", 80, focused=part)
                best[part] = min(best[part], (time.perf_counter() - t0) / CALLS * 1000)
        plain = best[None]
        print(f"screenshot {plain:.2f} ms, with the title {best['title']:.2f} ms, "
              f"with the whole window {best['window']:.2f} ms")
        print(f"title_ratio={best['title'] / plain:.3f} window_ratio={best['window'] / plain:.3f}")
    finally:
        await sb.close()


if __name__ == "__main__":
    asyncio.run(main())
