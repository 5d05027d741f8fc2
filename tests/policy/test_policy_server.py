"""The policy server over real HTTP and websockets on loopback, with the scripted
backend, the remote client (`make_policy("http://...")`) and the CLI."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from PIL import Image
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from cua.actions import Click, Done, Type
from cua.errors import BadRequest, InternalError, Unauthorized
from cua.observation import Observation, Screenshot, Size
from cua.policy import PolicyOptions, make_policy
from cua.policy.backends.scripted import ScriptedPolicy, load_script
from cua.policy.server import create_app
from cua.policy.service import serving_app as serving
from cua.policy.wire import encode_act_header

TOKEN = "test-token"
QWEN_CLICK = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [644, 364]}}\n</tool_call>'


def screenshot(width: int = 1280, height: int = 720, fmt: str = "png") -> Screenshot:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (30, 120, 200)).save(buffer, format=fmt.upper())
    return Screenshot(format=fmt, width=width, height=height, data=buffer.getvalue())


def observation(shot: Screenshot | None = None, **kw) -> Observation:
    frame = Size(width=1280, height=720)
    return Observation(sandbox_id="sb-1", frame=frame, screen=frame, screenshot=shot, **kw)


def script() -> ScriptedPolicy:
    return ScriptedPolicy(load_script([
        {"type": "click", "x": 10, "y": 20},
        {"raw": QWEN_CLICK, "family": "qwen2.5-vl"},
        {"raw": "I am lost.", "family": "ui-tars-1.5"},
        {"actions": [{"type": "type", "text": "hi"}, {"type": "key", "keys": "Enter"}], "thought": "submit"},
    ]))


@pytest.mark.parametrize("transport", ["ws", "http"])
async def test_remote_policy_round_trip(transport):
    async with serving(create_app(script(), token=TOKEN, info={"backend": "scripted"})) as url:
        policy = make_policy(url, token=TOKEN, transport=transport)
        obs = observation(screenshot())
        first = await policy.act("ep1", "click the thing", obs)
        assert first.actions == [Click(x=10, y=20)] and first.parse_error is None
        assert {"server_total", "policy", "server_decode"} <= set(first.timings_ms)
        second = await policy.act("ep1", "click the thing", obs)
        assert second.actions == [Click(x=640, y=360)]  # 644,364 of the 1288x728 model image
        third = await policy.act("ep1", "click the thing", obs)
        assert third.actions == [] and third.parse_error is not None
        assert third.parse_error.raw == "I am lost." and third.parse_error.family == "ui-tars-1.5"
        fourth = await policy.act("ep1", "x", obs, PolicyOptions(temperature=0.0))
        assert fourth.thought == "submit" and fourth.actions[0] == Type(text="hi")
        assert (await policy.act("ep1", "x", obs)).actions == [Done(status="failure")]
        # sessions are independent, and reset starts one over
        assert (await policy.act("ep2", "x", obs)).actions == [Click(x=10, y=20)]
        await policy.reset("ep1")
        assert (await policy.act("ep1", "x", obs)).actions == [Click(x=10, y=20)]
        odd = "task/7 seed=3?#x"  # reset must reach this exact session over either transport
        await policy.act(odd, "x", obs)
        await policy.reset(odd)
        assert (await policy.act(odd, "x", obs)).actions == [Click(x=10, y=20)]
        metrics = await policy.server_metrics()
        assert metrics["parse_errors"] == {"ui-tars-1.5": 1}
        assert sum(metrics["calls"].values()) == 9 and metrics["server_overhead_p50_ms"] >= 0
        # no screenshot at all: JSON body
        assert (await policy.act("ep3", "x", observation(None, url="http://a/"))).actions == [Click(x=10, y=20)]
        await policy.aclose()


async def test_json_body_with_base64_screenshot_and_bad_requests():
    async with serving(create_app(script(), token=TOKEN)) as url:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        obs = observation(screenshot(fmt="jpeg"))
        body = encode_act_header("s", "go", obs, None)
        body["observation"]["screenshot"]["data"] = base64.b64encode(obs.screenshot.data).decode()
        async with httpx.AsyncClient(base_url=url, headers=headers) as client:
            response = await client.post("/v1/act", json=body)
            assert response.status_code == 200, response.text
            assert response.json()["actions"] == [{"type": "click", "x": 10.0, "y": 20.0, "button": "left", "count": 1}]

            async def error(payload, **kw):
                r = await client.post("/v1/act", json=payload, **kw) if payload is not None else await client.post("/v1/act", **kw)
                assert r.status_code == 400, r.text
                return r.json()["error"]

            missing = encode_act_header("s", "go", obs, None)  # metadata but no bytes
            assert "screenshot bytes missing" in (await error(missing))["message"]
            broken = dict(body, observation=dict(body["observation"], screenshot=dict(body["observation"]["screenshot"], data="@@@")))
            assert "base64" in (await error(broken))["message"]
            assert (await error(dict(body, session_id="")))["code"] == "bad_request"
            assert "options.temperature" in (await error(dict(body, options={"temperature": 9})))["message"]
            assert "observation.frame" in (await error(dict(body, observation={"sandbox_id": "x"})))["message"]
            assert "not JSON" in (await error(None, content=b"{nope", headers={"content-type": "application/json"}))["message"]
            junk = {"request": json.dumps(encode_act_header("s", "go", observation(None), None))}
            r = await client.post("/v1/act", data=junk, files={"screenshot": ("s.bin", b"not an image", "application/octet-stream")})
            assert r.status_code == 400 and "unknown screenshot format" in r.json()["error"]["message"]
            r = await client.post("/v1/act", files={"screenshot": ("s.png", obs.screenshot.data, "image/png")})
            assert r.status_code == 400 and "`request` part" in r.json()["error"]["message"]


async def test_auth_and_typed_errors_through_the_client():
    async with serving(create_app(script(), token=TOKEN, info={"family": None})) as url:
        async with httpx.AsyncClient(base_url=url) as client:
            assert (await client.get("/v1/health")).json()["ok"] is True
            r = await client.post("/v1/act", json={})
            assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
            r = await client.get("/v1/metrics", headers={"Authorization": "Bearer wrong"})
            assert r.status_code == 401
        for transport in ("ws", "http"):
            wrong = make_policy(url, token="wrong", transport=transport)
            with pytest.raises(Unauthorized):
                await wrong.act("s", "x", observation(screenshot()))
            await wrong.aclose()
            remote = make_policy(url, token=TOKEN, transport=transport)
            with pytest.raises(BadRequest, match="session_id"):
                await remote.act("s" * 300, "x", observation(screenshot()))
            assert (await remote.act("fine", "x", observation(screenshot()))).actions  # the connection survives
            await remote.aclose()
        survivor = make_policy(url, token=TOKEN)
        assert (await survivor.act("a", "x", observation(None))).actions
    # the server is gone now: the open websocket fails over to a typed error, and so do new connections
    with pytest.raises(InternalError):
        await survivor.act("a", "x", observation(None))
    await survivor.aclose()
    for transport in ("ws", "http"):
        unreachable = make_policy(url, token=TOKEN, transport=transport)
        with pytest.raises(InternalError, match="unreachable"):
            await unreachable.act("s", "x", observation(None))
        await unreachable.aclose()
    with pytest.raises(ValueError, match="token"):
        os.environ.pop("CUA_POLICY_TOKEN", None)
        make_policy(url)


async def test_websocket_binary_frames_pipelining_and_errors():
    async with serving(create_app(script(), token=TOKEN)) as url:
        ws_url = url.replace("http://", "ws://") + "/v1/ws"
        with pytest.raises(InvalidStatus):
            async with ws_connect(ws_url + "?token=wrong"):
                pass
        obs = observation(screenshot())
        async with ws_connect(ws_url, additional_headers={"Authorization": f"Bearer {TOKEN}"}, max_size=None) as ws:
            for request_id, session in ((1, "a"), (2, "b")):  # two in flight at once
                header = {"op": "act", "id": request_id, **encode_act_header(session, "go", obs, None)}
                await ws.send(json.dumps(header))
                await ws.send(obs.screenshot.data)
            replies = {}
            for _ in range(2):
                reply = json.loads(await ws.recv())
                replies[reply["id"]] = reply
            assert replies[1]["ok"] and replies[2]["ok"]
            assert replies[1]["step"]["actions"][0]["x"] == 10.0 and replies[2]["step"]["actions"][0]["x"] == 10.0
            await ws.send("{broken")
            assert json.loads(await ws.recv())["error"]["code"] == "bad_request"
            await ws.send(json.dumps({"op": "fly", "id": 7}))
            reply = json.loads(await ws.recv())
            assert reply["id"] == 7 and not reply["ok"] and "unknown op" in reply["error"]["message"]
            await ws.send(b"\x89PNG stray binary")
            assert "JSON text frame" in json.loads(await ws.recv())["error"]["message"]
            await ws.send(json.dumps({"op": "act", "id": 11, **encode_act_header("c", "go", obs, None)}))
            await ws.send("not the screenshot")
            reply = json.loads(await ws.recv())
            assert reply["id"] == 11 and "binary frame" in reply["error"]["message"]
            await ws.send(json.dumps({"op": "reset", "id": 8, "session_id": "a"}))
            assert json.loads(await ws.recv()) == {"id": 8, "ok": True}
            await ws.send(json.dumps({"op": "act", "id": 9, **encode_act_header("a", "go", obs, None)}))
            await ws.send(obs.screenshot.data)
            again = json.loads(await ws.recv())
            assert again["id"] == 9 and again["step"]["actions"][0]["x"] == 10.0  # reset took effect


def test_scripted_file_errors(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "click", "x": 1}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: invalid action"):
        make_policy(f"scripted:{bad}")
    bad.write_text("# comment\n\nnot json\n")
    with pytest.raises(ValueError, match=r":3: not JSON"):
        make_policy(f"scripted:{bad}")
    bad.write_text('{"raw": "x"}\n')
    with pytest.raises(ValueError, match="needs a family"):
        make_policy(f"scripted:{bad}")
    for spec in ("nonsense", "openai:model-without-url", "warp:drive"):
        with pytest.raises(ValueError):
            make_policy(spec)


def _cli(*args: str, stdin: str | None = None, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cua.policy.cli", *args], input=stdin, capture_output=True,
                          text=True, timeout=120, **kw)


@pytest.mark.slow  # a subprocess or thousands of frames: seconds even on an idle machine
def test_cli_parse_end_to_end():
    result = _cli("parse", "--family", "qwen2.5-vl", "--screen", "1280x720", stdin=QWEN_CLICK)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["actions"] == [{"type": "click", "x": 640.0, "y": 360.0, "button": "left", "count": 1}]
    assert out["model_image"] == {"width": 1288, "height": 728}
    # a smaller pixel budget changes the model frame and so the mapping
    result = _cli("parse", "--family", "qwen2.5-vl", "--screen", "1280x720", "--max-pixels", str(640 * 28 * 28), stdin=QWEN_CLICK)
    assert json.loads(result.stdout)["model_image"]["width"] < 1280
    result = _cli("parse", "--family", "osworld", "--screen", "1920x1080", "--pointer", "5,5",
                  stdin="```python\npyautogui.dragTo(100, 100)\n```")
    assert json.loads(result.stdout)["actions"][0]["path"] == [{"x": 5.0, "y": 5.0}, {"x": 100.0, "y": 100.0}]
    failed = _cli("parse", "--family", "ui-tars-1.5", "--screen", "1280x720", stdin="no action here")
    assert failed.returncode == 1 and json.loads(failed.stdout)["parse_error"]["raw"] == "no action here"
    assert _cli("parse", "--family", "openai", "--screen", "1280x720", "--factor", "28", stdin="{}").returncode != 0
    assert _cli("parse", "--family", "openai", "--screen", "huge", stdin="{}").returncode == 2


@pytest.mark.slow  # a subprocess or thousands of frames: seconds even on an idle machine
async def test_cli_serve_end_to_end(tmp_path: Path):
    trajectory = tmp_path / "trajectory.jsonl"
    trajectory.write_text(json.dumps({"raw": QWEN_CLICK, "family": "qwen2.5-vl"}) + "\n")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cua.policy.cli", "serve", "--backend", "scripted", "--script", str(trajectory), "--port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        token_line = (await asyncio.wait_for(process.stdout.readline(), 120)).decode().strip()
        ready_line = (await asyncio.wait_for(process.stdout.readline(), 120)).decode().strip()
        assert token_line.startswith("token=") and ready_line.startswith("ready http://127.0.0.1:")
        policy = make_policy(ready_line.split()[1], token=token_line.split("=", 1)[1])
        step = await policy.act("s", "click", observation(screenshot()))
        assert step.actions == [Click(x=640, y=360)]
        await policy.aclose()
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 60)
