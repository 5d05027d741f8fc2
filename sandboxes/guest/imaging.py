"""Grabs as images: the screen grabber (mss when the guest has it) and the encoder
(Pillow, or else a PNG writer built on zlib)."""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

try:
    from .faults import BadRequestFault, UnsupportedFault
    from .tools import optional
except ImportError:  # run as a script from this folder (inside a VM image)
    from faults import BadRequestFault, UnsupportedFault  # type: ignore[no-redef,import-not-found]
    from tools import optional  # type: ignore[no-redef,import-not-found]

__all__ = ["encode_image", "mss_factory"]


def mss_factory() -> Any:
    """mss's screenshot class: `mss.MSS` since 10.2 (`mss.mss` before, now deprecated)."""
    try:
        from mss import MSS

        return MSS
    except ImportError:
        pass
    try:
        from mss import mss

        return mss
    except ImportError:
        return None



def _png_stdlib(rgb: bytes, width: int, height: int) -> bytes:
    """A PNG from packed RGB rows, for guests without Pillow."""
    stride = width * 3
    raw = b"".join(b"\x00" + rgb[y * stride:(y + 1) * stride] for y in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")


def _bgrx_to_rgb(bgrx: bytes) -> bytes:
    out = bytearray(len(bgrx) // 4 * 3)
    out[0::3] = bgrx[2::4]
    out[1::3] = bgrx[1::4]
    out[2::3] = bgrx[0::4]
    return bytes(out)


def encode_image(bgrx: bytes, width: int, height: int, fmt: str, quality: int,
                 out_size: tuple[int, int] | None) -> tuple[bytes, int, int]:
    """Encode a BGRX grab as png/jpeg/webp, resized to `out_size` when given."""
    pil = optional("PIL.Image")
    if pil is None:
        if fmt != "png":
            raise UnsupportedFault(f"{fmt} needs Pillow in the guest; only png is available", reason="no_pillow")
        if out_size and out_size != (width, height):
            raise UnsupportedFault("resizing needs Pillow in the guest", reason="no_pillow")
        return _png_stdlib(_bgrx_to_rgb(bgrx), width, height), width, height
    image = pil.frombuffer("RGB", (width, height), bgrx, "raw", "BGRX", 0, 1)
    if out_size and out_size != (width, height):
        fw, fh = out_size
        if width % fw == 0 and height % fh == 0 and width // fw == height // fh:
            image = image.reduce(width // fw)  # exact integer downscale: fast box filter
        else:
            image = image.resize(out_size, pil.Resampling.BILINEAR)
    buf = io.BytesIO()
    if fmt == "jpeg":
        image.save(buf, "JPEG", quality=quality)
    elif fmt == "png":
        image.save(buf, "PNG", compress_level=1)
    elif fmt == "webp":
        image.save(buf, "WEBP", quality=quality, method=0)
    else:
        raise BadRequestFault(f"unknown image format {fmt!r}")
    return buf.getvalue(), image.width, image.height
