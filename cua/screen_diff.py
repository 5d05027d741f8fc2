"""How a frame of a screen is compared with another frame of the same screen.

Both frames are shrunk to `COMPARE_WIDTH` pixels wide (box filter: each cell is the mean
of the pixels under it, so JPEG noise and a blinking caret average out), grayscale, and a
cell counts as changed when its brightness differs by more than `CELL_DELTA` (of 255).
The screens differ when more than `SCREEN_THRESHOLD` of the cells changed: 0.04%, about 6
cells of 8x8 px on a 1280x720 screen, so a 16x16 px checkbox being ticked (8 cells), a new
row or a toast exceeds it, while a blinking caret (2-3 cells), JPEG re-encoding and
anti-aliasing stay below.

Plain data: the drivers that set a recorded episode up again and must say whether they
reached the recorded screen (`cua export --execute`, `cua replay`, forks at a step) share it here, below them all.
"""

from __future__ import annotations

import io

from PIL import Image, ImageChops

__all__ = ["CELL_DELTA", "COMPARE_WIDTH", "SCREEN_THRESHOLD", "screen_difference"]

COMPARE_WIDTH = 160
CELL_DELTA = 24
SCREEN_THRESHOLD = 0.0004


def _small(data: bytes, size: tuple[int, int]) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("L").resize(size, Image.Resampling.BOX)


def screen_difference(recorded: bytes, replayed: bytes) -> float:
    """The fraction of shrunk cells whose brightness differs by more than `CELL_DELTA`
    (1.0 when the frames have different aspect ratios: a different screen)."""
    a = Image.open(io.BytesIO(recorded))
    b = Image.open(io.BytesIO(replayed))
    if abs(a.width / a.height - b.width / b.height) > 0.01:
        return 1.0
    size = (COMPARE_WIDTH, max(1, round(COMPARE_WIDTH * a.height / a.width)))
    diff = ImageChops.difference(_small(recorded, size), _small(replayed, size))
    histogram = diff.histogram()
    changed = sum(histogram[CELL_DELTA + 1:])
    return changed / (size[0] * size[1])
