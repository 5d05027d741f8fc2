"""The protocol state machines, without sockets: both sides fed frames by hand."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cua import protocol as p
from cua.actions import Click, Wait
from cua.errors import BadRequest, Cancelled, ErrorCode, SandboxCrashed, Timeout, Unauthorized
from cua.info import SandboxEvent
from cua.observation import Observation, Screenshot, Size
from cua.state import SqlQuery, StateResult, UrlQuery

TOKEN = "s3cret"
SIZE = Size(width=4, height=2)


def opened(token: str | None = TOKEN, **kw: object) -> p.ServerConnection:
    server = p.ServerConnection(token=token, **kw)  # type: ignore[arg-type]
    incoming = server.receive(json.dumps({"type": "hello", "id": 1, "token": token}))
    assert incoming.request is None and not incoming.close
    assert json.loads(incoming.reply[0])["type"] == "result"
    return server


def error_of(frame: str | bytes) -> dict:
    msg = json.loads(frame)
    assert msg["type"] == "error", msg
    return msg


def observation(step: int = 0, data: bytes | None = b"\xff\xd8jpegbytes") -> Observation:
    shot = None if data is None else Screenshot(format="jpeg", width=4, height=2, data=data)
    return Observation(sandbox_id="sb-1", frame=SIZE, screen=SIZE, screenshot=shot, url="http://x/", step=step)


# --- binary frames ---

def test_frame_round_trip() -> None:
    shot = Screenshot(format="webp", width=1280, height=720, data=b"RIFF....WEBP")
    frame = p.decode_frame(p.encode_frame(4_000_000_000, shot, stream=True))
    assert (frame.id, frame.format, frame.width, frame.height, frame.data, frame.stream) == (
        4_000_000_000, "webp", 1280, 720, b"RIFF....WEBP", True)
    assert p.FRAME_HEADER.size == p.FRAME_HEADER_LAYOUT["size"] == 14


@pytest.mark.parametrize("data", [b"", b"CUA", b"XYZ" + bytes(11), b"CUA\x09" + bytes(10),
                                  b"CUA\x01\x07" + bytes(9)])
def test_bad_binary_header(data: bytes) -> None:
    with pytest.raises(BadRequest):
        p.decode_frame(data)


@given(st.binary(max_size=64))
def test_decode_frame_never_crashes(data: bytes) -> None:
    try:
        p.decode_frame(data)
    except BadRequest:
        pass


# --- server: hello, auth, malformed input ---

def test_hello_with_token_opens() -> None:
    server = p.ServerConnection(token=TOKEN, session="c-1")
    incoming = server.receive(json.dumps({"v": 1, "type": "hello", "id": 1, "token": TOKEN, "client": "t"}))
    reply = json.loads(incoming.reply[0])
    assert reply["result"]["session"] == "c-1" and reply["result"]["protocol"] == p.PROTOCOL_VERSION
    assert server.state == "open" and server.client_name == "t"


@pytest.mark.parametrize("token", [None, "wrong"])
def test_wrong_or_missing_token_is_refused_and_closes(token: str | None) -> None:
    server = p.ServerConnection(token=TOKEN)
    incoming = server.receive(json.dumps({"type": "hello", "id": 1, "token": token}))
    assert incoming.close and incoming.refused
    assert error_of(incoming.reply[0])["code"] == "unauthorized"
    assert server.state == "closed"
    assert server.receive(json.dumps({"type": "ping", "id": 2})).reply == []


def test_request_before_hello_without_auth_is_unauthorized() -> None:
    server = p.ServerConnection(token=TOKEN)
    incoming = server.receive(json.dumps({"type": "ping", "id": 1}))
    assert incoming.close and error_of(incoming.reply[0])["code"] == "unauthorized"


def test_header_auth_still_wants_hello_but_stays_open() -> None:
    server = p.ServerConnection(token=TOKEN, authorized=True)
    incoming = server.receive(json.dumps({"type": "ping", "id": 1}))
    assert not incoming.close and error_of(incoming.reply[0])["code"] == "bad_request"
    assert server.receive(json.dumps({"type": "hello", "id": 2})).reply  # no token needed now
    assert server.state == "open"
    assert isinstance(server.receive(json.dumps({"type": "ping", "id": 3})).request, p.Ping)


def test_version_mismatch_names_both_versions() -> None:
    server = p.ServerConnection(token=TOKEN)
    msg = error_of(server.receive(json.dumps({"type": "hello", "id": 1, "protocol": 9, "token": TOKEN})).reply[0])
    assert msg["code"] == "bad_request" and "9" in msg["message"] and str(p.PROTOCOL_VERSION) in msg["message"]
    server = opened()
    msg = error_of(server.receive(json.dumps({"v": 7, "type": "ping", "id": 5})).reply[0])
    assert msg["code"] == "bad_request" and msg["id"] == 5 and msg["details"] == {"peer": 7, "supported": 1}


@pytest.mark.parametrize("frame, rid", [
    ("{not json", None),
    ("[1, 2]", None),
    ('{"type": "teleport", "id": 4}', 4),
    ('{"type": "act", "id": 5}', 5),
    ('{"type": "act", "id": 6, "sandbox_id": "x", "action": {"type": "click", "x": "left"}}', 6),
    ('{"type": "ping", "id": -1}', None),
    ('{"type": "ping", "id": 7, "surprise": true}', 7),
    (b"CUA\x01\x02\x00" + bytes(20), None),
])
def test_malformed_frames_get_bad_request_and_the_connection_goes_on(frame: str | bytes, rid: int | None) -> None:
    server = opened()
    incoming = server.receive(frame)
    assert incoming.request is None and not incoming.close and incoming.refused
    msg = error_of(incoming.reply[0])
    assert msg["code"] == "bad_request" and msg["id"] == rid
    assert isinstance(server.receive(json.dumps({"type": "ping", "id": 99})).request, p.Ping)


def test_oversized_message_is_refused() -> None:
    server = opened(max_message_bytes=1000)
    msg = error_of(server.receive('{"type": "ping", "id": 1, "pad": "' + "x" * 2000 + '"}').reply[0])
    assert msg["code"] == "bad_request" and msg["details"]["limit"] == 1000


def test_duplicate_in_flight_id_is_refused_until_answered() -> None:
    server = opened()
    assert server.receive(json.dumps({"type": "ping", "id": 3})).request is not None
    assert error_of(server.receive(json.dumps({"type": "ping", "id": 3})).reply[0])["code"] == "bad_request"
    server.result(3, p.EmptyResult())
    assert server.receive(json.dumps({"type": "ping", "id": 3})).request is not None


def test_server_deadlines_from_an_injected_clock() -> None:
    server = opened()
    server.receive(json.dumps({"type": "ping", "id": 2, "timeout": 5}), now=100.0)
    server.receive(json.dumps({"type": "ping", "id": 3, "timeout": 1}), now=100.0)
    server.receive(json.dumps({"type": "ping", "id": 4}), now=100.0)
    assert server.next_deadline() == 101.0 and server.deadline_of(4) is None
    assert server.expire(100.5) == []
    assert server.expire(101.0) == [3]
    assert sorted(server.expire(200.0)) == [2, 3]
    msg = error_of(server.timeout_error(3, 1.0))
    assert msg["code"] == "timeout" and msg["id"] == 3 and server.in_flight() == [2, 4]


@given(st.dictionaries(st.sampled_from(["type", "id", "v", "sandbox_id", "action", "timeout", "queries", "token"]),
                       st.one_of(st.none(), st.integers(-5, 2**33), st.text(max_size=8), st.booleans(),
                                 st.sampled_from(list(p.REQUEST_TYPES)), st.lists(st.integers(), max_size=2),
                                 st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))))
@settings(max_examples=300, deadline=None)
def test_any_json_object_gets_a_request_or_a_bad_request(obj: dict) -> None:
    server = opened()
    incoming = server.receive(json.dumps(obj))
    if incoming.request is None:
        assert len(incoming.reply) == 1 and error_of(incoming.reply[0])["code"] in ("bad_request",)
    assert not incoming.close


# --- client state machine ---

def client_pair() -> tuple[p.ClientConnection, p.ServerConnection]:
    client = p.ClientConnection()
    server = p.ServerConnection(token=TOKEN)
    _, frame = client.hello(token=TOKEN)
    (hello_reply,) = server.receive(frame).reply
    (done,) = client.receive_text(hello_reply)
    assert isinstance(done, p.Completed) and client.opened
    return client, server


def test_binary_frame_is_attached_to_its_result_out_of_order() -> None:
    client, server = client_pair()
    ids = []
    for step in (1, 2):
        rid, frame = client.send_request(p.Act(id=client.next_id(), sandbox_id="sb-1", action=Click(x=1, y=1)))
        assert server.receive(frame).request is not None
        ids.append(rid)
    # answers in the opposite order, each screenshot frame just before its result
    out = []
    for rid, step in ((ids[1], 2), (ids[0], 1)):
        frames = server.observation_frames(rid, p.ObservationResult(observation=observation(step, bytes([step]) * 9)))
        assert isinstance(frames[0], bytes) and isinstance(frames[1], str)
        assert client.receive_bytes(frames[0]) == []
        out += client.receive_text(frames[1])
    assert [c.id for c in out] == [ids[1], ids[0]]
    for done, step in zip(out, (2, 1)):
        assert isinstance(done, p.Completed)
        obs = done.result.observation
        assert obs.step == step and obs.screenshot.data == bytes([step]) * 9 and obs.screenshot.width == 4
    assert client.pending() == []


def test_result_without_announced_frame_fails_the_request() -> None:
    client, server = client_pair()
    rid, frame = client.send_request(p.Observe(id=client.next_id(), sandbox_id="sb-1"))
    server.receive(frame)
    frames = server.observation_frames(rid, p.ObservationResult(observation=observation()))
    (failed,) = client.receive_text(frames[1])  # the binary frame got lost
    assert isinstance(failed, p.Failed) and isinstance(failed.error, p.ProtocolError)


def test_observation_without_screenshot_needs_no_frame() -> None:
    client, server = client_pair()
    rid, frame = client.send_request(p.Observe(id=client.next_id(), sandbox_id="sb-1"))
    server.receive(frame)
    (only,) = server.observation_frames(rid, p.ObservationResult(observation=observation(data=None)))
    (done,) = client.receive_text(only)
    assert isinstance(done, p.Completed) and done.result.observation.screenshot is None


def test_typed_errors_and_results() -> None:
    client, server = client_pair()
    rid, frame = client.send_request(p.Query(id=client.next_id(), sandbox_id="sb-1",
                                             queries=[UrlQuery(), SqlQuery(query="select 1")]))
    request = server.receive(frame).request
    assert isinstance(request, p.Query) and isinstance(request.queries[1], SqlQuery)
    (done,) = client.receive_text(server.result(rid, p.QueryResult(results=[StateResult(value="u"),
                                                                            StateResult(value=[{"1": 1}])])))
    assert [r.value for r in done.result.results] == ["u", [{"1": 1}]]
    rid, frame = client.send_request(p.Act(id=client.next_id(), sandbox_id="sb-1", action=Wait(seconds=1)))
    server.receive(frame)
    (failed,) = client.receive_text(server.error(rid, SandboxCrashed("gone", details={"sandbox_id": "sb-1"})))
    assert isinstance(failed.error, SandboxCrashed) and failed.error.details == {"sandbox_id": "sb-1"}
    assert failed.request is not None and failed.request.type == "act"


def test_answer_to_an_unknown_id_is_a_protocol_violation() -> None:
    client, server = client_pair()
    with pytest.raises(p.ProtocolError):
        client.receive_text(server.result(77, p.EmptyResult()))
    with pytest.raises(p.ProtocolError):
        client.receive_bytes(p.encode_frame(78, Screenshot(format="png", width=1, height=1, data=b"x")))


def test_cancel_abandons_and_late_answers_are_dropped() -> None:
    client, server = client_pair()
    rid, frame = client.send_request(p.Act(id=client.next_id(), sandbox_id="sb-1", action=Wait(seconds=5)))
    server.receive(frame)
    cancel_frame = client.abandon(rid)
    assert cancel_frame is not None and client.abandon(rid) is None
    cancel = server.receive(cancel_frame).request
    assert isinstance(cancel, p.Cancel) and cancel.target == rid
    assert client.receive_text(server.error(rid, Cancelled("cancelled"))) == []  # dropped quietly
    (done,) = client.receive_text(server.result(cancel.id, p.CancelResult(cancelled=True)))
    assert isinstance(done, p.Completed) and done.result.cancelled is True


def test_client_deadlines_expire_with_grace() -> None:
    client, server = client_pair()
    rid, frame = client.send_request(p.Ping(id=client.next_id(), timeout=2.0), now=10.0)
    assert client.next_deadline() == 10.0 + 2.0 + client.DEADLINE_GRACE
    assert client.expire(13.0) == []
    (failed,) = client.expire(10.0 + 2.0 + client.DEADLINE_GRACE)
    assert failed.id == rid and isinstance(failed.error, Timeout)
    server.receive(frame)
    assert client.receive_text(server.result(rid, p.EmptyResult())) == []  # late: dropped


def test_error_without_id_and_events() -> None:
    client, server = client_pair()
    (failed,) = client.receive_text(server.error(None, Unauthorized("wrong token")))
    assert failed.id is None and isinstance(failed.error, Unauthorized)
    died = SandboxEvent(sandbox_id="sb-1", event="died", data={"reason": "oom"})
    (event,) = client.receive_text(server.event(died))
    assert event == died  # the one event model, from the sandbox's sink to the client's callbacks


def test_stream_frames_flow_until_unstream() -> None:
    client, server = client_pair()
    rid, frame = client.send_request(p.Stream(id=client.next_id(), sandbox_id="sb-1", max_fps=5))
    server.receive(frame)
    shot = Screenshot(format="jpeg", width=2, height=2, data=b"abc")
    assert client.receive_bytes(server.stream_frame(rid, shot)) == []  # before the result: not yet a stream
    client.receive_text(server.result(rid, p.StreamResult(stream_id=rid)))
    (got,) = client.receive_bytes(server.stream_frame(rid, shot))
    assert isinstance(got, p.StreamFrame) and got.stream_id == rid and got.screenshot.data == b"abc"
    uid, frame = client.send_request(p.Unstream(id=client.next_id(), stream_id=rid))
    server.receive(frame)
    client.receive_text(server.result(uid, p.EmptyResult()))
    assert client.receive_bytes(server.stream_frame(rid, shot)) == []


def test_fail_all_when_the_connection_drops() -> None:
    client, _ = client_pair()
    for _ in range(3):
        client.send_request(p.Ping(id=client.next_id()))
    failed = client.fail_all(SandboxCrashed("connection lost"))
    assert len(failed) == 3 and client.pending() == []


# --- schema ---

def test_schema_validates_real_messages() -> None:
    schema = p.json_schema()
    assert schema["protocol_version"] == p.PROTOCOL_VERSION and schema["binary_frame"]["size"] == 14
    client_schema, server_schema = schema["client_message"], schema["server_message"]
    client, server = client_pair()
    for request in (p.Act(id=5, sandbox_id="s", action=[Click(x=1, y=2), Wait(seconds=0)], frame=SIZE),
                    p.Query(id=6, sandbox_id="s", queries=[SqlQuery(query="select 1")]),
                    p.Create(id=7, kind="browser", config={"a": 1}, keep=True), p.Cancel(id=8, target=5)):
        _, frame = client.send_request(request)
        jsonschema.validate(json.loads(frame), client_schema)
    for frame in (server.result(5, p.ObservationResult(observation=observation())),
                  server.error(6, BadRequest("no")), server.event(SandboxEvent(sandbox_id="s", event="closed", data={"reason": "idle"}))):
        jsonschema.validate(json.loads(frame), server_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"type": "act", "id": 1}, client_schema)
    assert set(schema["result_payloads"]) == set(p.REQUEST_TYPES)
    assert {c.value for c in ErrorCode} <= set(json.dumps(server_schema).replace('"', " ").split())


@given(st.integers(0, p.MAX_REQUEST_ID), st.sampled_from(["png", "jpeg", "webp"]),
       st.integers(1, 16384), st.integers(1, 16384), st.binary(max_size=256))
def test_frame_round_trip_property(rid: int, fmt: str, width: int, height: int, data: bytes) -> None:
    shot = Screenshot(format=fmt, width=width, height=height, data=data)  # type: ignore[arg-type]
    frame = p.decode_frame(p.encode_frame(rid, shot))
    assert (frame.id, frame.format, frame.width, frame.height, frame.data, frame.stream) == (
        rid, fmt, width, height, data, False)


def test_message_limit_counts_bytes_not_characters() -> None:
    server = opened(max_message_bytes=1000)
    text = json.dumps({"type": "ping", "id": 1, "pad": "é" * 600}, ensure_ascii=False)  # 600 chars, 1200 bytes
    assert len(text) < 1000 < len(text.encode())
    msg = error_of(server.receive(text).reply[0])
    assert msg["code"] == "bad_request" and msg["details"]["limit"] == 1000 and msg["details"]["size"] > 1000
