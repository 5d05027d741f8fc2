"""Image geometry for VLM families: smart_resize and the model frame.

A VLM does not see the screenshot at the size the sandbox sent it. Qwen-VL style
models resize each image to multiples of their patch factor within a pixel budget
(``smart_resize``), and then speak coordinates either in pixels of that resized image
or on a relative grid (0..1000). `ModelFrame` holds that relation for one observation,
so that every family maps model coordinates back to the observation's frame the same
exact way.
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import io
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cua.observation import Size

if TYPE_CHECKING:  # pragma: no cover
    from PIL.Image import Image

__all__ = [
    "MAX_RATIO",
    "ModelFrame",
    "decode_image",
    "data_url",
    "encode_image",
    "qwen_pixel_budget",
    "smart_resize",
    "smart_resize_local",
]

#: qwen-vl-utils refuses images more elongated than this.
MAX_RATIO = 200


def qwen_pixel_budget(factor: int) -> tuple[int, int]:
    """qwen-vl-utils' default (min_pixels, max_pixels): 4 and 16384 tokens of factor²."""
    return 4 * factor * factor, 16384 * factor * factor


def smart_resize_local(
    height: int,
    width: int,
    factor: int = 28,
    min_pixels: int | None = None,
    max_pixels: int | None = None,
) -> tuple[int, int]:
    """(height, width) that a Qwen-VL image processor resizes an image to (our own code).

    Both sides become multiples of `factor`, the area lands within
    [min_pixels, max_pixels], and the aspect ratio is kept as closely as the rounding
    allows. Same semantics as ``qwen_vl_utils.vision_process.smart_resize`` (factor 28
    for Qwen2/2.5-VL and UI-TARS, 32 for Qwen3-VL); defaults are qwen-vl-utils' budget
    of 4..16384 tokens. Raises ValueError for empty or too elongated images.
    """
    default_min, default_max = qwen_pixel_budget(factor)
    min_pixels = default_min if min_pixels is None else min_pixels
    max_pixels = default_max if max_pixels is None else max_pixels
    if height <= 0 or width <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    if factor <= 0 or min_pixels < 0 or max_pixels <= 0 or min_pixels > max_pixels:
        raise ValueError(f"bad resize budget: factor={factor} min_pixels={min_pixels} max_pixels={max_pixels}")
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise ValueError(f"aspect ratio must be at most {MAX_RATIO}, got {max(height, width) / min(height, width)}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


@functools.cache
def _upstream() -> Any:
    """qwen-vl-utils' smart_resize, when it imports here (it needs torchvision)."""
    if importlib.util.find_spec("torchvision") is None:
        return None  # its import would fail, after importing torch (seconds) first
    try:
        from qwen_vl_utils.vision_process import smart_resize as upstream
    except Exception:  # noqa: BLE001 - any import failure means "not available here"
        return None
    return upstream


def smart_resize(
    height: int, width: int, factor: int = 28, min_pixels: int | None = None, max_pixels: int | None = None
) -> tuple[int, int]:
    """`smart_resize_local`'s result, computed by qwen-vl-utils itself wherever that
    imports (so the reference implementation decides), and by our copy elsewhere."""
    upstream = _upstream()
    if upstream is None:
        return smart_resize_local(height, width, factor, min_pixels, max_pixels)
    default_min, default_max = qwen_pixel_budget(factor)
    min_pixels = default_min if min_pixels is None else min_pixels
    max_pixels = default_max if max_pixels is None else max_pixels
    smart_resize_local(height, width, factor, min_pixels, max_pixels)  # same validation and errors
    h, w = upstream(height, width, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels)
    return int(h), int(w)


@dataclass(frozen=True)
class ModelFrame:
    """The relation between the observation frame and the coordinates a model speaks.

    `image` is the size the screenshot is sent at; `grid` is the extent of the model's
    coordinate space: the image size for absolute-pixel families, (1000, 1000) for
    relative ones. Points map linearly and independently per axis.
    """

    frame: Size
    image: Size
    grid: tuple[float, float]

    @classmethod
    def identity(cls, frame: Size) -> ModelFrame:
        return cls(frame=frame, image=frame, grid=(float(frame.width), float(frame.height)))

    @classmethod
    def pixels(cls, frame: Size, image: Size) -> ModelFrame:
        """Absolute pixels of the image the model sees."""
        return cls(frame=frame, image=image, grid=(float(image.width), float(image.height)))

    @classmethod
    def relative(cls, frame: Size, image: Size, extent: float = 1000.0) -> ModelFrame:
        return cls(frame=frame, image=image, grid=(extent, extent))

    @property
    def scale(self) -> tuple[float, float]:
        """Observation pixels per model unit, per axis."""
        return self.frame.width / self.grid[0], self.frame.height / self.grid[1]

    def to_frame(self, x: float, y: float) -> tuple[float, float]:
        """Model coordinates -> observation frame pixels.

        A point within one grid unit of the grid (e.g. x=1000 on a 0..999 grid) is
        pulled onto the frame's edge pixel; a point farther out is passed through as it
        is, so that the sandbox reports the agent's out-of-bounds action as such.
        """
        sx, sy = self.scale
        return self._edge(x, self.grid[0], sx, self.frame.width), self._edge(y, self.grid[1], sy, self.frame.height)

    @staticmethod
    def _edge(value: float, extent: float, scale: float, size: int) -> float:
        pixel = value * scale
        if -1.0 <= value <= extent + 1.0:
            pixel = min(max(pixel, 0.0), size - 1.0)
        return round(pixel, 2)

    def from_frame(self, x: float, y: float) -> tuple[int, int]:
        """Observation frame pixels -> the integer coordinates the model would write."""
        sx, sy = self.scale
        return round(x / sx), round(y / sy)


def decode_image(data: bytes) -> Image:
    """Decode a screenshot (PNG/JPEG/WebP) into an RGB PIL image."""
    from PIL import Image as PILImage

    image = PILImage.open(io.BytesIO(data))
    image.load()
    return image if image.mode == "RGB" else image.convert("RGB")


def encode_image(image: Image, fmt: str = "png", quality: int = 90) -> bytes:
    buffer = io.BytesIO()
    if fmt == "png":
        image.save(buffer, format="PNG", compress_level=1)
    elif fmt == "jpeg":
        image.save(buffer, format="JPEG", quality=quality)
    elif fmt == "webp":
        image.save(buffer, format="WEBP", quality=quality)
    else:
        raise ValueError(f"unknown image format {fmt!r}")
    return buffer.getvalue()


def data_url(data: bytes, fmt: str) -> str:
    return f"data:image/{fmt};base64,{base64.b64encode(data).decode('ascii')}"
