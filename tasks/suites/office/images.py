"""Seeded parameters of the office suite's GIMP tasks: a picture of coloured blocks made
with Pillow (sent as the sandbox's binary file), and what the reader of the exported
file must print. Blocks of flat colour make every transform's result predictable to the
pixel (flip, rotate) or, where the app resamples (scale), at each block's centre."""

from __future__ import annotations

import base64
import hashlib
import io
import random
from typing import Any

#: Reads an exported picture in the sandbox with Pillow (the guest agent's own dependency):
#: "FORMAT<TAB>WIDTHxHEIGHT<TAB>sha256 of its RGB pixels", then "PROBE<TAB>x,y<TAB>r,g,b"
#: for each point of the optional second argument, "x,y;x,y;...".
READER = r"""
import sys, hashlib
from PIL import Image
im = Image.open(sys.argv[1])
rgb = im.convert('RGB')
print(im.format, '%dx%d' % im.size, hashlib.sha256(rgb.tobytes()).hexdigest(), sep='\t')
for point in (sys.argv[2].split(';') if len(sys.argv) > 2 else []):
    x, y = (int(v) for v in point.split(','))
    print('PROBE', point, '%d,%d,%d' % rgb.getpixel((x, y)), sep='\t')
"""

COLOURS = ((200, 30, 30), (30, 30, 200), (30, 160, 60), (230, 200, 40), (120, 40, 160), (240, 240, 240))
#: GIMP's search-action queries, unique to one action each.
#: (Their tooltips: "Rotate 90° clockwise" is also the view's and the layer's label.)
ACTIONS = {"flip": "flip image horizontally", "rotate": "rotate the image 90 degrees to the right",
           "rotate_ccw": "rotate the image 90 degrees to the left", "view_flip": "flip the view horizontally"}
#: GIMP's profile for a sandbox: one maximized-size single window on the screen.
SESSIONRC = """(session-info "toplevel"
    (factory-entry "gimp-single-image-window")
    (position 0 0)
    (size 1280 700))
(single-window-mode yes)
"""


def _picture(rng: random.Random) -> Any:
    """A 2x2 grid of distinct flat colours, each block a few dozen pixels."""
    from PIL import Image

    bw, bh = rng.choice((40, 50, 60)), rng.choice((30, 35))  # never square: the near miss swaps the sides
    picture = Image.new("RGB", (2 * bw, 2 * bh))
    for i, colour in enumerate(rng.sample(COLOURS, 4)):
        picture.paste(colour, (bw * (i % 2), bh * (i // 2), bw * (i % 2 + 1), bh * (i // 2 + 1)))
    return picture


def _png(picture: Any) -> bytes:
    buf = io.BytesIO()
    picture.save(buf, "PNG")
    return buf.getvalue()


def _line(picture: Any, fmt: str = "PNG") -> str:
    return f"{fmt}\t{picture.width}x{picture.height}\t{hashlib.sha256(picture.convert('RGB').tobytes()).hexdigest()}\n"


def _common(rng: random.Random) -> tuple[Any, dict[str, Any]]:
    picture = _picture(rng)
    data = _png(picture)
    name = rng.choice(("photo", "logo", "banner", "tiles"))
    return picture, {"binary_files": {f"{name}.png": base64.b64encode(data).decode()},
                     "files": {".config/GIMP/2.10/sessionrc": SESSIONRC}, "reader": READER, "name": name,
                     "source": f"{name}.png", "source_sha": hashlib.sha256(data).hexdigest()}


def gimp_flip(_: Any, rng: random.Random) -> dict[str, Any]:
    from PIL import Image

    picture, params = _common(rng)
    out = f"{params['name']}-flipped.png"
    # the near miss flips the view only: the exported pixels are the original's
    return {**params, "out": out, "expected": _line(picture.transpose(Image.Transpose.FLIP_LEFT_RIGHT)),
            "action": ACTIONS["flip"], "near_action": ACTIONS["view_flip"]}


def gimp_rotate(_: Any, rng: random.Random) -> dict[str, Any]:
    from PIL import Image

    picture, params = _common(rng)
    out = f"{params['name']}-rotated.png"
    return {**params, "out": out, "expected": _line(picture.transpose(Image.Transpose.ROTATE_270)),
            "action": ACTIONS["rotate"], "near_action": ACTIONS["rotate_ccw"]}


def gimp_scale(_: Any, rng: random.Random) -> dict[str, Any]:
    """Scale to a width, keeping the aspect ratio. Resampling blurs the blocks' edges, so
    the judge reads the size and each block's centre, not a checksum."""
    picture, params = _common(rng)
    width = picture.width // 2
    height = picture.height // 2
    out = f"{params['name']}-small.png"
    points = [(width // 4, height // 4), (3 * width // 4, height // 4), (width // 4, 3 * height // 4),
              (3 * width // 4, 3 * height // 4)]
    probes = [f"{x},{y}" for x, y in points]
    source_points = [(x * 2, y * 2) for x, y in points]
    colours = [picture.getpixel(p) for p in source_points]
    size_re = f"\\APNG\t{width}x{height}\t[0-9a-f]{{64}}\n"
    probes_re = "".join(f"PROBE\t{p}\t{_near_re(c)}\n" for p, c in zip(probes, colours))
    return {**params, "out": out, "width": width, "height": height, "probes": ";".join(probes),
            "expected_re": size_re + probes_re + "\\Z", "near_width": height}


def _near_re(colour: tuple[int, int, int]) -> str:
    """A regex for an r,g,b within 3 of each channel (resampling may move a flat block's
    centre by a unit or two)."""
    parts = []
    for c in colour:
        parts.append("(" + "|".join(str(v) for v in range(max(0, c - 3), min(255, c + 3) + 1)) + ")")
    return ",".join(parts)

