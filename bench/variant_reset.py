"""What a reset into a new appearance variant costs over a reset into the same one (issue 32).

One browser sandbox (shared isolation) runs the todo app on a list page. Rounds alternate,
in one run on one warm sandbox: a reset into the variant the page already shows, then a
reset into another (theme, layout and locale all change; the viewport is the sandbox's,
fixed at create), each timed from the call to its settled, observed first frame. The
overhead is the relative difference of the two medians:
(p50 new variant - p50 same variant) / p50 same variant. Goal: <= 0.10.

    python bench/variant_reset.py [--rounds 30]

Last line: `variant_reset_overhead=<x>`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from cua.sandbox import ServiceSpec
from cua.sandboxes.browser import BrowserConfig, BrowserSandbox
from cua.tasks.apps import service as app_service
from cua.variant import THEMES, Variant

WARMUP = 3


def looks(n: int) -> list[Variant]:
    """`n` looks that differ on theme, layout and locale from their neighbours."""
    layouts, locales = ("top", "sidebar", "dense"), ("en-US", "de-DE")
    return [Variant(theme=THEMES[i % len(THEMES)], layout=layouts[i % len(layouts)], locale=locales[i % len(locales)])
            for i in range(n)]


async def timed_reset(sb: BrowserSandbox, variant: Variant) -> float:
    started = time.perf_counter()
    obs = await sb.reset(seed=0, options={"variant": variant.model_dump(mode="json")})
    assert obs.screenshot is not None
    return (time.perf_counter() - started) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    app = ServiceSpec.model_validate(app_service("todo"))
    sb = await BrowserSandbox.create(BrowserConfig(isolation="shared", services=[app], start_url="/lists/1?show=all"),
                                     sandbox_id="bench-variant-reset")
    same: list[float] = []
    new: list[float] = []
    try:
        shown = looks(args.rounds + WARMUP + 1)
        current = shown[0]
        await timed_reset(sb, current)
        for i, nxt in enumerate(shown[1:]):
            same_ms = await timed_reset(sb, current)  # the look the page already shows
            new_ms = await timed_reset(sb, nxt)  # another theme, layout and locale
            current = nxt
            if i >= WARMUP:  # the first rounds warm caches (fonts, stylesheets, the seed image)
                same.append(same_ms)
                new.append(new_ms)
    finally:
        await sb.close()
    p_same, p_new = statistics.median(same), statistics.median(new)
    print(f"same variant p50 {p_same:7.1f} ms   new variant p50 {p_new:7.1f} ms   (n={len(same)} each)", flush=True)
    print(f"variant_reset_overhead={(p_new - p_same) / p_same:.3f}")


if __name__ == "__main__":
    asyncio.run(main())
