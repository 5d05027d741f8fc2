"""The policy server refuses web pages (issue 15): a browser Origin not on the allow-list
gets 403 with or without the token, over HTTP and the websocket handshake, and a loopback
bind refuses a non-loopback Host (DNS rebinding). Real HTTP and websockets on loopback."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from cua.actions import Click
from cua.exposure import OriginPolicy, check_bind, host_name, is_loopback, normalize_origins
from cua.observation import Observation, Size
from cua.policy import make_policy
from cua.policy.backends.scripted import ScriptedPolicy
from cua.policy.server import create_app
from cua.policy.service import serving_app as serving
from cua.policy.wire import encode_act_header

TOKEN = "exposure-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
EVIL = "http://evil.example"
FRONTEND = "http://localhost:5173"


def observation() -> Observation:
    frame = Size(width=1280, height=720)
    return Observation(sandbox_id="sb-1", frame=frame, screen=frame)


def policy() -> ScriptedPolicy:
    return ScriptedPolicy.from_actions([Click(x=1, y=2)], loop=True)


def act_body() -> str:
    return json.dumps(encode_act_header("s", "click", observation(), None))


def ws_url(url: str) -> str:
    return url.replace("http://", "ws://", 1) + "/v1/ws"


async def raw_handshake(url: str, host: str, *, origin: str | None = None) -> int:
    """The HTTP status of a websocket handshake written by hand, so the Host header can lie
    as a DNS-rebound page's does (clients derive Host from the URL)."""
    address = httpx.URL(url)
    reader, writer = await asyncio.open_connection(address.host, address.port)
    try:
        lines = ["GET /v1/ws HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
                 f"Authorization: Bearer {TOKEN}"]
        if origin is not None:
            lines.append(f"Origin: {origin}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 30)
        return int(status_line.split()[1])
    finally:
        writer.close()


async def test_a_foreign_origin_is_refused_with_or_without_the_token():
    scripted = policy()
    async with serving(create_app(scripted, token=TOKEN, allowed_origins=[FRONTEND])) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            for headers in ({}, AUTH, {"Authorization": "Bearer wrong"}):
                for method, path in (("GET", "/v1/health"), ("GET", "/v1/metrics"), ("POST", "/v1/act")):
                    response = await http.request(method, path, headers={**headers, "Origin": EVIL},
                                                  content=act_body() if method == "POST" else None)
                    assert response.status_code == 403, (method, path, headers)
                    error = response.json()["error"]
                    assert error["code"] == "forbidden" and EVIL in error["message"]
            # a sandboxed iframe or a file:// page sends the opaque origin "null": not on the list either
            assert (await http.get("/v1/health", headers={"Origin": "null"})).status_code == 403
            # the refused act never reached the policy
            assert (await http.get("/v1/metrics", headers=AUTH)).json()["calls"] == {}
            # no Origin (every non-browser client) and an allowed Origin pass, spelled either way
            assert (await http.get("/v1/health")).status_code == 200
            for allowed in (FRONTEND, "HTTP://LOCALHOST:5173/"):
                response = await http.post("/v1/act", headers={**AUTH, "Origin": allowed,
                                                              "content-type": "application/json"}, content=act_body())
                assert response.status_code == 200 and response.json()["actions"][0]["type"] == "click"
            # the token still counts for an allowed origin
            response = await http.get("/v1/metrics", headers={"Origin": FRONTEND})
            assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized"

        for token_header in (AUTH, {}):
            with pytest.raises(InvalidStatus) as refused:
                async with ws_connect(ws_url(url), origin=EVIL, additional_headers=token_header):
                    pass
            assert refused.value.response.status_code == 403
        async with ws_connect(ws_url(url), origin=FRONTEND, additional_headers=AUTH) as ws:
            await ws.send(json.dumps({"op": "act", "id": 1, **json.loads(act_body())}))
            reply = json.loads(await asyncio.wait_for(ws.recv(), 30))
            assert reply["ok"] and reply["step"]["actions"][0]["type"] == "click"
        # the remote client sends no Origin and is unaffected
        remote = make_policy(url, token=TOKEN, transport="ws")
        try:
            assert (await remote.act("c", "x", observation())).actions == [Click(x=1, y=2)]
        finally:
            await remote.aclose()


async def test_a_loopback_bind_refuses_a_rebound_host():
    async with serving(create_app(policy(), token=TOKEN, host="127.0.0.1")) as url:
        port = httpx.URL(url).port
        async with httpx.AsyncClient(base_url=url) as http:
            for host in (f"evil.example:{port}", "evil.example", f"192.0.2.7:{port}"):
                response = await http.get("/v1/health", headers={"Host": host})
                assert response.status_code == 403 and "not loopback" in response.json()["error"]["message"]
                response = await http.get("/v1/metrics", headers={**AUTH, "Host": host})
                assert response.status_code == 403
            for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost"):
                assert (await http.get("/v1/health", headers={"Host": host})).status_code == 200, host
        assert await raw_handshake(url, f"evil.example:{port}") == 403
        assert await raw_handshake(url, f"localhost:{port}", origin=EVIL) == 403
        assert await raw_handshake(url, f"localhost:{port}") == 101


async def test_a_public_bind_takes_any_host_but_still_refuses_origins():
    # bound for the network (served here on loopback): clients name the machine as they
    # reach it, so the Host is not checked; the token is required and Origins still are
    async with serving(create_app(policy(), token=TOKEN, host="0.0.0.0")) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            assert (await http.get("/v1/metrics", headers={**AUTH, "Host": "gpu-box.lan:8765"})).status_code == 200
            assert (await http.get("/v1/metrics", headers={"Host": "gpu-box.lan:8765"})).status_code == 401
            response = await http.get("/v1/metrics", headers={**AUTH, "Host": "gpu-box.lan", "Origin": EVIL})
            assert response.status_code == 403


def test_bad_origins_and_an_empty_token_are_refused_at_creation():
    for origins in (["*"], ["localhost:5173"], [FRONTEND, "evil.example"]):
        with pytest.raises(ValueError, match="origin"):
            create_app(policy(), token=TOKEN, allowed_origins=origins)
    with pytest.raises(ValueError, match="token"):
        create_app(policy(), token="")


def test_exposure_rules():
    for host in ("127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost", "LOCALHOST", "localhost."):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "192.168.1.2", "evil.example", "localhost.evil.example", "", "127.0.0.1.nip.io"):
        assert not is_loopback(host), host
    assert [host_name(h) for h in ("a:80", "[::1]:80", "[::1]", "::1", "a")] == ["a", "::1", "::1", "::1", "a"]
    check_bind("127.0.0.1", auth=False)
    check_bind("0.0.0.0", auth=True)
    check_bind("0.0.0.0", auth=False, unsafe_public_no_auth=True)
    with pytest.raises(ValueError, match="without auth"):
        check_bind("0.0.0.0", auth=False)
    assert normalize_origins(["HTTP://A.example/", "http://a.example"]) == frozenset({"http://a.example"})
    rules = OriginPolicy.for_bind("::1", [FRONTEND])
    assert rules.loopback_only and not OriginPolicy.for_bind("0.0.0.0").loopback_only
    assert rules.refusal(None, None) is None and rules.refusal(FRONTEND + "/", "[::1]:9") is None
    assert "origin" in (rules.refusal(EVIL, "localhost") or "")
    assert "host" in (rules.refusal(None, "evil.example") or "")
    assert rules.refusal_for_headers([(b"host", b"localhost:1"), (b"origin", EVIL.encode())]) is not None
    assert rules.refusal_for_headers([(b"host", b"localhost:1"), (b"user-agent", b"x")]) is None


@pytest.mark.slow  # a subprocess: seconds even on an idle machine
async def test_cli_serve_refuses_foreign_origins(tmp_path: Path):
    trajectory = tmp_path / "trajectory.jsonl"
    trajectory.write_text(json.dumps({"type": "click", "x": 1, "y": 2}) + "\n")
    base = [sys.executable, "-m", "cua.policy.cli", "serve", "--backend", "scripted", "--script", str(trajectory),
            "--port", "0", "--token", TOKEN]
    bad = await asyncio.create_subprocess_exec(*base, "--allow-origin", "*", stdout=asyncio.subprocess.PIPE,
                                               stderr=asyncio.subprocess.PIPE)
    _, stderr = await asyncio.wait_for(bad.communicate(), 120)
    assert bad.returncode == 2 and b"no wildcards" in stderr
    process = await asyncio.create_subprocess_exec(*base, "--allow-origin", FRONTEND, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE)
    try:
        ready = (await asyncio.wait_for(process.stdout.readline(), 120)).decode().split()
        assert ready[0] == "ready"
        async with httpx.AsyncClient(base_url=ready[1], headers=AUTH) as http:
            assert (await http.get("/v1/metrics", headers={"Origin": EVIL})).status_code == 403
            assert (await http.get("/v1/metrics", headers={"Origin": FRONTEND})).status_code == 200
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 60)


async def test_a_non_ascii_token_in_the_websocket_url_is_refused_not_crashed_on(capfd: pytest.CaptureFixture[str]):
    """`?token=` is any text a URL can carry: compared as text (hmac.compare_digest raised
    TypeError on a non-ASCII str: the handshake died with a traceback in the server's log)."""
    async with serving(create_app(policy(), token=TOKEN)) as url:
        with pytest.raises(InvalidStatus) as refused:
            async with ws_connect(ws_url(url) + "?token=t%C3%B6ken"):
                pass
        assert refused.value.response.status_code == 403  # refused before accepting
        assert "Traceback" not in capfd.readouterr().err, "the server raised on the token"
        async with ws_connect(ws_url(url) + f"?token={TOKEN}") as ws:  # the right one still opens it
            await ws.send(json.dumps({"op": "act", "id": 1, **json.loads(act_body())}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 30))["ok"]
