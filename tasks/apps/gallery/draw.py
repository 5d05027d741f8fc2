"""The gallery's pictures: PNGs drawn with Pillow from a photo's `art_seed`, its caption and
its orientation (a gradient sky, shapes in a palette, the caption in the corner), so the
same photo is the same picture in every process. Drawn when first shown and kept (a few
dozen kilobytes each): seeding and resetting the app stay fast, and a snapshot stays small.
"""

from __future__ import annotations

import io
import random
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

__all__ = ["draw_photo"]

#: Preview sizes per orientation (the original's size is the photo's metadata).
SIZES = {"landscape": (320, 240), "portrait": (240, 320), "square": (280, 280)}
PALETTES = [((255, 183, 77), (41, 98, 255)), ((129, 212, 250), (255, 241, 118)), ((38, 50, 56), (255, 112, 67)),
            ((165, 214, 167), (27, 94, 32)), ((244, 143, 177), (74, 20, 140)), ((255, 224, 178), (0, 121, 107)),
            ((207, 216, 220), (84, 110, 122)), ((255, 205, 210), (183, 28, 28))]


@lru_cache(maxsize=512)
def draw_photo(art_seed: int, caption: str, orientation: str) -> bytes:
    """The PNG of one photo."""
    rng = random.Random(art_seed)
    w, h = SIZES.get(orientation, SIZES["square"])
    top, bottom = rng.choice(PALETTES)
    img = Image.composite(Image.new("RGB", (w, h), bottom), Image.new("RGB", (w, h), top),
                          Image.linear_gradient("L").resize((w, h)))
    pen = ImageDraw.Draw(img)
    if rng.random() < 0.5:  # a sun or a moon
        r = rng.randint(18, 36)
        x, y = rng.randint(r, w - r), rng.randint(r, h // 3)
        pen.ellipse([x - r, y - r, x + r, y + r], fill=(255, 245, 200))
    horizon = rng.randint(h // 2, h * 3 // 4)
    pen.polygon([(0, h), (0, horizon), *[(x, horizon - rng.randint(0, 60)) for x in range(0, w + 40, 40)], (w, h)],
                fill=tuple(max(0, c - 60) for c in bottom))
    for _ in range(rng.randint(2, 5)):
        s = rng.randint(20, 70)
        x, y = rng.randint(0, w - s), rng.randint(horizon - s, h - s)
        colour = tuple(rng.randint(40, 255) for _ in range(3))
        rng.choice([pen.ellipse, pen.rectangle])([x, y, x + s, y + s], fill=colour)
    pen.text((10, h - 30), caption[:28], font=ImageFont.load_default(size=18), fill="white", stroke_width=2, stroke_fill="black")
    out = io.BytesIO()
    img.save(out, "PNG", compress_level=1)
    return out.getvalue()
