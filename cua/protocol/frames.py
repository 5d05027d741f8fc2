"""The binary screenshot frame: a 14-byte header, then the image bytes."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from cua.errors import BadRequest
from cua.observation import ImageFormat, Screenshot

#: magic "CUA" | header version u8 | image format u8 | flags u8 | request/stream id u32
#: | width u16 | height u16 -- all big-endian (network order), 14 bytes, then the image.
FRAME_HEADER = struct.Struct("!3sBBBIHH")
FRAME_MAGIC = b"CUA"
FRAME_HEADER_VERSION = 1
FLAG_STREAM = 0x01
FORMAT_CODES: dict[str, int] = {"png": 1, "jpeg": 2, "webp": 3}
_FORMATS_BY_CODE = {code: name for name, code in FORMAT_CODES.items()}

FRAME_HEADER_LAYOUT: dict[str, Any] = {
    "byte_order": "big-endian",
    "size": FRAME_HEADER.size,
    "fields": [
        {"name": "magic", "offset": 0, "type": "bytes[3]", "value": "CUA"},
        {"name": "header_version", "offset": 3, "type": "u8", "value": FRAME_HEADER_VERSION},
        {"name": "format", "offset": 4, "type": "u8", "values": FORMAT_CODES},
        {"name": "flags", "offset": 5, "type": "u8",
         "values": {"stream": FLAG_STREAM},
         "doc": "bit 0 set: a stream frame; clear: the screenshot of the response with this id"},
        {"name": "id", "offset": 6, "type": "u32", "doc": "the request id (response) or the stream request's id"},
        {"name": "width", "offset": 10, "type": "u16"},
        {"name": "height", "offset": 12, "type": "u16"},
    ],
    "payload": "the encoded image bytes follow the header to the end of the frame",
}


@dataclass(frozen=True, slots=True)
class BinaryFrame:
    id: int
    format: ImageFormat
    width: int
    height: int
    data: bytes
    stream: bool = False

    def screenshot(self) -> Screenshot:
        return Screenshot(format=self.format, width=self.width, height=self.height, data=self.data)


def encode_frame(request_id: int, shot: Screenshot, *, stream: bool = False) -> bytes:
    header = FRAME_HEADER.pack(FRAME_MAGIC, FRAME_HEADER_VERSION, FORMAT_CODES[shot.format],
                               FLAG_STREAM if stream else 0, request_id, shot.width, shot.height)
    return header + shot.data


def decode_frame(data: bytes | bytearray | memoryview) -> BinaryFrame:
    """Parse a binary frame; raises BadRequest for anything that is not one."""
    if len(data) < FRAME_HEADER.size:
        raise BadRequest(f"binary frame of {len(data)} bytes is shorter than the {FRAME_HEADER.size}-byte header")
    magic, version, fmt, flags, rid, width, height = FRAME_HEADER.unpack_from(data)
    if magic != FRAME_MAGIC:
        raise BadRequest(f"binary frame has magic {magic!r}, expected {FRAME_MAGIC!r}")
    if version != FRAME_HEADER_VERSION:
        raise BadRequest(f"binary frame header version {version}, this side speaks {FRAME_HEADER_VERSION}")
    if fmt not in _FORMATS_BY_CODE:
        raise BadRequest(f"binary frame has unknown image format code {fmt}")
    return BinaryFrame(id=rid, format=_FORMATS_BY_CODE[fmt], width=width, height=height,  # type: ignore[arg-type]
                       data=bytes(data[FRAME_HEADER.size:]), stream=bool(flags & FLAG_STREAM))
