"""Real-product reset latency (issue 31): p50 of `POST /__cua/reset` over each real
product's unix control socket, as a sandbox host does it, beside the bundled notes app's
reset measured in the same run (the reference). A product's reset puts the seed's database
image back into the live instance's file (SQLite's backup API); its server keeps running.
Each seed's first reset (which may build the seed image) is warm-up and not counted.
Goal: <= 150 ms (issue 31), "well under 100 ms" for MediaWiki.

    python bench/realapp_reset.py [--resets 60] [--seeds 2]

Prints `realapp_reset_p50_ms_<product>=`, `realapp_reset_ratio_<product>=` (to notes'
p50), `app_reset_p50_ms_notes=`, and last `realapp_reset_p50_ms_max=`.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _latency import p50, spread  # bench/ is this script's folder
from app_reset import bench_app

#: The real products (`cua.tasks.products`), by their app names.
PRODUCTS = ("mediawiki", "trac", "oscar", "roundcube", "wagtail", "pretix")
REFERENCE = "notes"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resets", type=int, default=60)
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cua-bench-") as tmp:
        reference = p50(bench_app(REFERENCE, args.resets, args.seeds, Path(tmp)))
        print(f"app_reset_p50_ms_{REFERENCE}={reference:.3f}", flush=True)
        worst = 0.0
        for product in PRODUCTS:
            samples = bench_app(product, args.resets, args.seeds, Path(tmp))
            mid = p50(samples)
            worst = max(worst, mid)
            print(f"realapp_reset_p50_ms_{product}={mid:.3f}  ({spread(samples)})", flush=True)
            print(f"realapp_reset_ratio_{product}={mid / reference:.2f}", flush=True)
    print(f"realapp_reset_p50_ms_max={worst:.3f}")


if __name__ == "__main__":
    main()
