"""The guest agent's wire codec, without sockets: framing, blob ordering, and bad input."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cua.sandboxes.guest import wire


def decode_all(data: bytes, *, chunk: int | None = None) -> list[wire.Frame]:
    dec = wire.Decoder()
    if chunk is None:
        frames = dec.feed(data)
    else:
        frames = [f for i in range(0, len(data), chunk) for f in dec.feed(data[i:i + chunk])]
    assert dec.buffered == 0
    return frames


def test_message_roundtrip() -> None:
    body = {"id": 7, "op": "act", "action": {"type": "type", "text": "a<b>c é 漢"}}
    assert decode_all(wire.encode_message(body)) == [wire.Message(body)]


def test_reply_carries_its_blobs_before_the_message() -> None:
    png, jpg = b"\x89PNG" + bytes(range(256)) * 10, b"\xff\xd8" + b"\x00" * 5000
    data = wire.encode_reply(wire.ok_reply(3, {"format": "png"}), [png, jpg])
    frames = decode_all(data)
    assert frames[:2] == [wire.Blob(3, png), wire.Blob(3, jpg)]
    assert isinstance(frames[2], wire.Message)
    assert frames[2].body == {"id": 3, "ok": True, "result": {"format": "png"}, "blobs": 2}


def test_byte_at_a_time_feeding_gives_the_same_frames() -> None:
    data = (wire.encode_message({"hello": {"agent": "cua-guest"}})
            + wire.encode_reply(wire.ok_reply(1, {}), [b"x" * 1000])
            + wire.encode_message(wire.error_reply(2, "action_failed", "no", "out_of_bounds")))
    assert decode_all(data, chunk=1) == decode_all(data)
    assert decode_all(data)[-1].body["error"] == {"code": "action_failed", "message": "no", "reason": "out_of_bounds"}


def test_partial_frame_is_held_back() -> None:
    data = wire.encode_message({"id": 1, "op": "ping"})
    dec = wire.Decoder()
    assert dec.feed(data[:-1]) == []
    assert dec.buffered == len(data) - 1
    assert dec.feed(data[-1:]) == [wire.Message({"id": 1, "op": "ping"})]


def test_unknown_frame_type_is_a_protocol_error() -> None:
    with pytest.raises(wire.ProtocolError, match="unknown frame type"):
        wire.Decoder().feed(b"X\x00\x00\x00\x01a")


def test_oversized_frame_is_refused_before_it_is_buffered() -> None:
    dec = wire.Decoder(max_frame=1024)
    with pytest.raises(wire.ProtocolError, match="exceeds"):
        dec.feed(b"J" + struct.pack(">I", 4096))
    with pytest.raises(wire.ProtocolError, match="exceeds"):
        wire.Decoder(max_frame=10).feed(b"B" + struct.pack(">II", 1, 11))


@pytest.mark.parametrize("payload", [b"[1, 2]", b"not json", b"\xff\xfe"])
def test_bad_message_payloads(payload: bytes) -> None:
    with pytest.raises(wire.ProtocolError):
        wire.Decoder().feed(b"J" + struct.pack(">I", len(payload)) + payload)


def test_encoding_refuses_nan_and_bad_blob_ids() -> None:
    with pytest.raises(ValueError):
        wire.encode_message({"x": float("nan")})
    with pytest.raises(wire.ProtocolError):
        wire.encode_blob(-1, b"")


@settings(max_examples=60, deadline=None)
@given(messages=st.lists(st.tuples(st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=20),
                                                   max_size=4),
                                   st.lists(st.binary(max_size=300), max_size=3)), max_size=6),
       chunk=st.integers(min_value=1, max_value=97))
def test_any_sequence_survives_any_chunking(messages: list[tuple[dict, list[bytes]]], chunk: int) -> None:
    data = b"".join(wire.encode_reply({**body, "id": i}, blobs) for i, (body, blobs) in enumerate(messages))
    frames = decode_all(data, chunk=chunk)
    blobs_seen: dict[int, list[bytes]] = {}
    bodies = []
    for frame in frames:
        if isinstance(frame, wire.Blob):
            blobs_seen.setdefault(frame.id, []).append(frame.data)
        else:
            bodies.append(frame.body)
            # every blob of a message arrived before it
            assert blobs_seen.get(frame.body["id"], []) == messages[frame.body["id"]][1]
    assert [json.dumps(b, sort_keys=True) for b in bodies] == [
        json.dumps({**body, "id": i, **({"blobs": len(blobs)} if blobs else {})}, sort_keys=True)
        for i, (body, blobs) in enumerate(messages)]
