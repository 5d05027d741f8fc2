"""The guest agent's wire format, as a sans-I/O codec shared by the agent and the host.

A stream (unix socket, TCP, virtio-serial character device, pipes) carries frames:

    b"J" + u32 length + JSON (utf-8)          a message
    b"B" + u32 id + u32 length + bytes         a binary payload for message `id`

Integers are big-endian. Requests are JSON objects `{"id": N, "op": NAME, ...args}`;
the answer is `{"id": N, "ok": true, "result": {...}}` or `{"id": N, "ok": false,
"error": {"code", "message", "reason"?}}`. Binary payloads (screenshots, file bytes)
never go inside JSON: the sender writes a message's blobs BEFORE the message itself, so
that when a reader decodes the message every blob it refers to is already there, in
order. `"blobs": k` in a message says how many blobs with its id precede it.

On connect the agent sends one unsolicited `{"hello": {...}}` message (no id).

This module does no I/O and imports only the standard library: the agent runs inside
a VM on the guest's system Python, and the host client feeds it bytes from asyncio.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Union

__all__ = [
    "Blob",
    "Decoder",
    "MAX_FRAME",
    "Message",
    "ProtocolError",
    "WIRE_VERSION",
    "encode_blob",
    "encode_message",
    "encode_reply",
    "error_reply",
    "ok_reply",
]

WIRE_VERSION = 1
#: Largest frame either side accepts (a 4K PNG is ~25 MB; a file read is bounded by 50 MB).
MAX_FRAME = 128 * 1024 * 1024

_U32 = struct.Struct(">I")
_BLOB_HEAD = struct.Struct(">II")
_MSG = b"J"[0]
_BLOB = b"B"[0]


class ProtocolError(Exception):
    """The peer sent bytes that are not a valid frame; the stream cannot be trusted after it."""


@dataclass(frozen=True)
class Message:
    body: dict[str, Any]


@dataclass(frozen=True)
class Blob:
    id: int
    data: bytes = field(repr=False)


Frame = Union[Message, Blob]


def encode_message(body: dict[str, Any]) -> bytes:
    payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    if len(payload) > MAX_FRAME:
        raise ProtocolError(f"message of {len(payload)} bytes exceeds the {MAX_FRAME}-byte frame limit")
    return b"J" + _U32.pack(len(payload)) + payload


def encode_blob(msg_id: int, data: bytes | bytearray | memoryview) -> bytes:
    if len(data) > MAX_FRAME:
        raise ProtocolError(f"blob of {len(data)} bytes exceeds the {MAX_FRAME}-byte frame limit")
    if not 0 <= msg_id < 2**32:
        raise ProtocolError(f"blob id {msg_id} out of range")
    return b"B" + _BLOB_HEAD.pack(msg_id, len(data)) + bytes(data)


def encode_reply(body: dict[str, Any], blobs: list[bytes] | tuple[bytes, ...] = ()) -> bytes:
    """A message preceded by its blobs, as one buffer (so one write keeps them together)."""
    if blobs:
        body = {**body, "blobs": len(blobs)}
        return b"".join([*(encode_blob(int(body["id"]), b) for b in blobs), encode_message(body)])
    return encode_message(body)


def ok_reply(msg_id: int, result: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": msg_id, "ok": True, "result": result or {}}


def error_reply(msg_id: int | None, code: str, message: str, reason: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if reason is not None:
        error["reason"] = reason
    return {"id": msg_id, "ok": False, "error": error}


class Decoder:
    """Turns bytes into frames. Feed it whatever the stream gave; iterate the frames out."""

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self._buf = bytearray()
        self._max = max_frame

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]:
        self._buf += data
        return list(self._frames())

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete frame held back; non-zero at end of stream means truncation."""
        return len(self._buf)

    def _frames(self) -> Iterator[Frame]:
        buf = self._buf
        while buf:
            kind = buf[0]
            if kind == _MSG:
                if len(buf) < 5:
                    return
                (size,) = _U32.unpack_from(buf, 1)
                self._check(size)
                if len(buf) < 5 + size:
                    return
                raw = bytes(buf[5:5 + size])
                del buf[:5 + size]
                try:
                    body = json.loads(raw)
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise ProtocolError(f"message is not valid JSON: {exc}") from exc
                if not isinstance(body, dict):
                    raise ProtocolError(f"message must be a JSON object, got {type(body).__name__}")
                yield Message(body)
            elif kind == _BLOB:
                if len(buf) < 9:
                    return
                msg_id, size = _BLOB_HEAD.unpack_from(buf, 1)
                self._check(size)
                if len(buf) < 9 + size:
                    return
                data = bytes(buf[9:9 + size])
                del buf[:9 + size]
                yield Blob(msg_id, data)
            else:
                raise ProtocolError(f"unknown frame type byte 0x{kind:02x}")

    def _check(self, size: int) -> None:
        if size > self._max:
            raise ProtocolError(f"frame of {size} bytes exceeds the {self._max}-byte limit")
