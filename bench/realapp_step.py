"""Real-product step speed (issue 31): the p50 of one agent step -- a click on a link that
loads a page, then the observation (a JPEG screenshot) -- on each real product, and on a
bundled app (notes) in the same run. Each step clicks the other of two links found on
both pages (`bench/_realapps.py`), so every step is a full page load of the product's own
server; the URL is checked after each step. The product's and the reference's steps
alternate one by one (a fresh pair of sandboxes per product, shared isolation), so machine
noise hits both alike. Goal: ratio <= 1.25 (issue 31).

    python bench/realapp_step.py [--steps 30] [--warmup 4] [--product NAME ...]

Prints `realapp_step_p50_ms_<product>=`, `app_step_p50_ms_notes_<product>=` (its own
reference run), `realapp_step_ratio_<product>=`, and last `realapp_step_ratio_max=`. A
product not installed here is skipped with a line saying why.

Figures, 2026-12-06, this 2-core machine shared with other engineers' runs; p50 ms product /
notes (ratio), 20-30 steps after 4 warm-up. The ratio grows with the machine's load: each
product's own server does 10-100 ms of CPU work a page, notes' ~1 ms.

    before (b4bd84e), 13:11 UTC, load 2.0-4.4:     after (all below), 14:04 UTC, load 15.3-15.7:
    mediawiki  118 / 65 (1.82)  settle 83 vs 27      271 / 95 (2.86)   settle 205 vs 39
    trac        96 / 69 (1.38)  settle 55 vs 27      144 / 86 (1.67)   settle 74 vs 37
    roundcube  343 / 65 (5.24)  settle 265, act 36   271 / 69 (3.91)   settle 209, act 43
    oscar      155 / 69 (2.26)  settle 106 vs 24     211 / 68 (3.09)   settle 137 vs 31
    wagtail     66 / 67 (0.98)  settle 32 vs 30      110 / 85 (1.29)   settle 71 vs 35

Trac's other runs after its change, load ~16: 1.13, 1.20 (before it, same load: 1.58, 2.08).

The same load for both (old tree and new run in turn, load 13-16, 20 steps): roundcube
5.50, 4.45 before -> 3.71, 4.20 after; mediawiki 2.96, 3.77 -> 3.05, 3.61 (within the
noise). At load ~4, static files cached only: roundcube 3.36, mediawiki 1.67. What changed
(products, not settle: the settle waits on nothing a page does not need, see below):
PHP static files carry Apache's validators and Roundcube's one-month expiry (each
Roundcube page re-fetched ~1.3 MB in ~20 requests through the one PHP worker); Roundcube's
Maildir mirror re-read only when the tree changed (3-25 ms -> 0.15 ms after each request);
Dovecot's standing login process (its CPU a request 7 -> 3.5 ms); MediaWiki's messages as
OPcache-compiled arrays (~10% of its CPU a page); Trac's startup heap frozen out of the full
gc.collect() Trac runs after every request (its CPU a page pair 27 -> 12 ms).

The floor is the product's own server (`python bench/realapp_render.py`: direct GETs of the
same pages, no browser). At load ~2 (curl, 13:10): mediawiki 54 (Main Page) / 109
(Special:SpecialPages), trac 45 / 37, roundcube 41 / 27 plus its mail page's list and
unread-count requests (~80, in turn through the one worker), oscar 108 (catalogue) / 10,
wagtail 29 / 24, notes 1. At load 14-16 (realapp_render, 13:34): mediawiki 225, trac 43,
roundcube 71 + 101, oscar 107, wagtail 67, notes 5; trac at 14:01 without / with its gc
change, load ~15: 75 / 7.5. With notes' whole step ~65 ms, 1.25x leaves a product ~16 ms
more than notes a page: Wagtail and now Trac come near (Wagtail met
the goal at load ~2, 0.98; Trac at load 16 in two runs of three); MediaWiki's and Oscar's
renders (no object or fragment cache may outlive a reset) and Roundcube's three serialised
requests exceed it. What the settle waits on after the load is what fills the page (Roundcube's list and counts); Roundcube's
click itself takes ~35 ms of its own script (act) before the navigation starts.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from _latency import p50, spread  # bench/ is this script's folder
from _realapps import OBSERVE, PRODUCTS, REFERENCE, Site, centre, missing, site_sandbox

from cua.actions import Click
from cua.sandboxes.browser import BrowserSandbox

#: The parts of a step the sandbox times (`Observation.timings_ms`): the click, waiting for
#: the page to settle (the load), the screenshot.
PARTS = ("act", "settle", "observe")


class Walker:
    """Clicks a site's two links in turn, timing each step and checking it loaded the page."""

    def __init__(self, site: Site, sandbox: BrowserSandbox) -> None:
        self.site, self.sandbox, self.turn = site, sandbox, 1  # links[0] is the start page
        self.samples: list[float] = []
        #: The sandbox's own timings of each kept step (act, settle, observe), by part.
        self.parts: dict[str, list[float]] = {}

    async def step(self, *, keep: bool) -> None:
        selector = self.site.links[self.turn % 2]
        self.turn += 1
        x, y = await centre(self.sandbox, selector)
        before = (await self.sandbox.observe()).url
        started = time.perf_counter()
        obs = await self.sandbox.act(Click(x=x, y=y), observe=OBSERVE)
        took = (time.perf_counter() - started) * 1000
        if obs.error is not None or obs.screenshot is None or obs.url == before:
            raise RuntimeError(f"{self.site.app}: clicking {selector!r} on {before} did not load a page "
                               f"(now {obs.url}, error {obs.error})")
        if keep:
            self.samples.append(took)
            for part in PARTS:
                self.parts.setdefault(part, []).append(obs.timings_ms.get(part, 0.0))

    def parts_line(self) -> str:
        return " ".join(f"{part}={p50(self.parts[part]):.1f}" for part in PARTS)


async def bench(site: Site, steps: int, warmup: int) -> tuple[Walker, Walker]:
    async with site_sandbox(REFERENCE, f"step-ref-{site.app}") as ref_box, \
            site_sandbox(site, f"step-{site.app}") as box:
        pair = (Walker(site, box), Walker(REFERENCE, ref_box))
        for i in range(warmup + steps):
            for walker in (pair if i % 2 else pair[::-1]):  # alternate who goes first
                await walker.step(keep=i >= warmup)
        return pair


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--product", action="append", help="products to time (default: every one)")
    args = parser.parse_args()
    worst = 0.0
    for site in PRODUCTS:
        if args.product and site.app not in args.product:
            continue
        why = missing(site.app)
        if why is not None:
            print(f"skipped {site.app}: {why}", flush=True)
            continue
        product, reference = await bench(site, args.steps, args.warmup)
        product_ms, reference_ms = product.samples, reference.samples
        ratio = p50(product_ms) / p50(reference_ms)
        worst = max(worst, ratio)
        print(f"realapp_step_p50_ms_{site.app}={p50(product_ms):.1f}  ({spread(product_ms, 1)})", flush=True)
        print(f"app_step_p50_ms_{REFERENCE.app}_{site.app}={p50(reference_ms):.1f}  ({spread(reference_ms, 1)})",
              flush=True)
        print(f"  p50 ms by part: {site.app} {product.parts_line()}; {REFERENCE.app} {reference.parts_line()}")
        print(f"realapp_step_ratio_{site.app}={ratio:.2f}", flush=True)
    print(f"realapp_step_ratio_max={worst:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
