"""Create-to-ready time of a desktop sandbox in the xfce session against the openbox
session, in the same run: each creates a desktop with one terminal (`apps: [xterm]`),
alternating openbox and xfce so load on the machine falls on both alike, and times
`create_sandbox` (container, Xvfb, the session up and proven to manage a window, the
terminal's window mapped). The medians are compared.

    python bench/desktop_session.py [--rounds 5]

Last line: xfce_create_ratio=<xfce median / openbox median>.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from cua.sandbox import create_sandbox


async def timed_create(session: str, n: int) -> float:
    t0 = time.perf_counter()
    sb = await create_sandbox("desktop", {"apps": ["xterm"], "session": session}, sandbox_id=f"bench-{session}-{n}")
    elapsed = time.perf_counter() - t0
    await sb.close()
    return elapsed


async def main(rounds: int) -> None:
    times: dict[str, list[float]] = {"openbox": [], "xfce": []}
    await timed_create("xfce", -1)  # warm the page cache for both sessions' programs
    await timed_create("openbox", -1)
    for n in range(rounds):
        for session in ("openbox", "xfce"):
            times[session].append(await timed_create(session, n))
    medians = {k: statistics.median(v) for k, v in times.items()}
    for session, values in times.items():
        print(f"{session}_create_s={medians[session]:.2f} (runs: {', '.join(f'{v:.2f}' for v in values)})")
    print(f"xfce_create_ratio={medians['xfce'] / medians['openbox']:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args().rounds))
