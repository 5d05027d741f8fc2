"""Set-of-marks: draw each identified element's box and id onto a copy of a screenshot.

For agents that ground by element ids (`ObserveOptions.element_ids`): the model sees the
marks, names an id, and acts with `click_element` / `hover_element`. Drawn here, on the
client side, rather than in the sandbox, so the observation the sandbox returns (and a
trajectory keeps) is the screen as it was, and a caller who wants no marks pays nothing.
"""

from __future__ import annotations

import io
from typing import Any

from cua.observation import Observation

__all__ = ["draw_marks"]

_COLOURS = ((230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 240, 240))


def draw_marks(obs: Observation, *, quality: int = 85) -> bytes:
    """The observation's screenshot with a box and a label per element that has an id and
    a box; JPEG bytes in the screenshot's frame. The screenshot itself is left as it is."""
    from PIL import Image, ImageDraw

    if obs.screenshot is None:
        raise ValueError("the observation has no screenshot to mark")
    nodes: list[dict[str, Any]] = [n for n in obs.axtree or () if n.get("id") and n.get("bbox")]
    image = Image.open(io.BytesIO(obs.screenshot.data)).convert("RGB")
    sx, sy = image.width / obs.screen.width, image.height / obs.screen.height
    draw = ImageDraw.Draw(image)
    for i, node in enumerate(nodes):
        box = node["bbox"]
        colour = _COLOURS[i % len(_COLOURS)]
        x0, y0 = box["x"] * sx, box["y"] * sy
        x1, y1 = (box["x"] + box["width"]) * sx, (box["y"] + box["height"]) * sy
        draw.rectangle((x0 - 1, y0 - 1, x1 + 1, y1 + 1), outline=colour, width=2)
        label = str(node["id"])
        left, top, right, bottom = draw.textbbox((0, 0), label)
        tx, ty = max(0.0, x0 - 1), max(0.0, y0 - (bottom - top) - 4)
        draw.rectangle((tx, ty, tx + right - left + 4, ty + bottom - top + 3), fill=colour)
        draw.text((tx + 2, ty + 1 - top), label, fill=(255, 255, 255))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality)
    return out.getvalue()
