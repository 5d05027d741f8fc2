"""Client -> server -> browser sandbox over a real websocket, with the bundled todo app."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from pydantic import BaseModel
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

import cua
from cua.actions import Click, Wait
from cua.client import Client, Event, RemoteSandbox
from cua.errors import (
    Capacity,
    InternalError,
    SandboxCrashed,
    Timeout,
    Unauthorized,
    UnknownSandbox,
    UnknownSnapshot,
)
from cua.observation import ObserveOptions, Size
from cua.sandbox import Sandbox, register_kind
from cua.server.app import RunningServer, serve_in_background
from cua.state import AppStateQuery, DomQuery, SqlQuery, TitleQuery, UrlQuery
from cua.tasks.apps import service

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]  # Chromium; the fast lane: test_fast_server.py

TODO = service("todo")
CONFIG: dict[str, Any] = {"services": [TODO], "start_url": "/"}
OPEN_TODOS = "SELECT COUNT(*) AS n FROM todos WHERE done = 0"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[RunningServer]:
    async with serve_in_background(max_sandboxes=4) as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(server: RunningServer) -> AsyncIterator[Client]:
    async with cua.connect(server.url, server.token, default_timeout=120) as c:
        yield c


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sb(client: Client) -> AsyncIterator[RemoteSandbox]:
    sandbox = await client.create("browser", config=CONFIG)
    yield sandbox
    await sandbox.close()


async def center_of(sandbox: RemoteSandbox, selector: str) -> tuple[float, float]:
    (res,) = await sandbox.query([DomQuery(selector=selector, prop="bbox")])
    assert res.ok and res.value, res
    box = res.value
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


async def open_todos(sandbox: RemoteSandbox) -> int:
    (res,) = await sandbox.query([SqlQuery(query=OPEN_TODOS)])
    assert res.ok, res
    return res.value[0]["n"]


async def toggle_first(sandbox: RemoteSandbox) -> None:
    x, y = await center_of(sandbox, "tr.todo input.toggle")
    obs = await sandbox.act(Click(x=x, y=y))
    assert obs.error is None, obs.error


async def open_list(sandbox: RemoteSandbox) -> None:
    await sandbox.reset(seed=0)
    x, y = await center_of(sandbox, 'a.list-card[href="/lists/1"]')
    obs = await sandbox.act(Click(x=x, y=y))
    assert obs.error is None and obs.url.endswith("/lists/1"), obs


# --- end to end ---

async def test_create_observe_act_query(sb: RemoteSandbox, client: Client) -> None:
    assert sb.info.kind == "browser" and {"snapshot", "fork", "query"} <= set(sb.info.capabilities)
    first = sb.observation
    assert first.screenshot is not None and first.screenshot.format == "jpeg"
    assert (first.screenshot.width, first.screenshot.height) == (1280, 720)
    assert first.screenshot.data[:2] == b"\xff\xd8"  # a real JPEG arrived as a binary frame
    await open_list(sb)
    before = await open_todos(sb)
    await toggle_first(sb)
    assert await open_todos(sb) == before - 1
    url, title, state = await sb.query([UrlQuery(), TitleQuery(), AppStateQuery()])
    assert url.value.endswith("/lists/1") and title.ok and len(state.value["todos"]) > 0
    obs = await sb.observe(ObserveOptions(format="png", frame=Size(width=640, height=360), axtree=True))
    assert obs.screenshot.data[:4] == b"\x89PNG" and (obs.screenshot.width, obs.screenshot.height) == (640, 360)
    assert obs.axtree and obs.frame == Size(width=640, height=360)
    assert [i.id for i in await client.list()] == [sb.id]


async def test_action_list_observes_once_and_reports_agent_faults(sb: RemoteSandbox) -> None:
    await open_list(sb)
    obs = await sb.act([Wait(seconds=0), Click(x=5, y=5)], frame=Size(width=1280, height=720))
    assert obs.error is None and obs.screenshot is not None
    # every action of a list is read in the frame the agent saw (here a half-size one)
    x, y = await center_of(sb, "tr.todo input.toggle")
    before = await open_todos(sb)
    await sb.observe(ObserveOptions(frame=Size(width=640, height=360)))
    obs = await sb.act([Wait(seconds=0), Click(x=x / 2, y=y / 2)])
    assert obs.error is None and await open_todos(sb) == before - 1
    assert obs.frame == Size(width=1280, height=720)  # this observation asked for no frame
    obs = await sb.act([Click(x=99_999, y=5), Click(x=5, y=5)])
    assert obs.error is not None and obs.error.reason == "out_of_bounds" and "action 0" in obs.error.message
    assert obs.screenshot is not None  # the sandbox goes on, and the agent sees the screen


async def test_snapshot_restore_fork(sb: RemoteSandbox, client: Client) -> None:
    await open_list(sb)
    base = await open_todos(sb)
    snap = await sb.snapshot()
    assert snap.sandbox_id == sb.id and snap.size_bytes > 0
    await toggle_first(sb)
    assert await open_todos(sb) == base - 1
    restored = await sb.restore(snap)
    assert restored.url.endswith("/lists/1") and await open_todos(sb) == base
    child = await sb.fork(snap.id)
    try:
        assert child.id != sb.id and child.observation.url.endswith("/lists/1")
        await toggle_first(child)
        assert await open_todos(child) == base - 1
        assert await open_todos(sb) == base  # independent
        assert {i.id for i in await client.list()} == {sb.id, child.id}
    finally:
        await child.close()
    with pytest.raises(UnknownSandbox):
        await child.observe()
    await sb.delete_snapshot(snap)
    with pytest.raises(UnknownSnapshot):
        await sb.restore(snap)


async def test_stream_pushes_frames(sb: RemoteSandbox) -> None:
    await open_list(sb)
    frames = sb.stream(ObserveOptions(format="jpeg", quality=50), max_fps=5)

    async def poke() -> None:  # screencasts send frames when the screen changes
        for _ in range(20):
            await sb.act(Click(x=5, y=5))
            await toggle_first(sb)

    poker = asyncio.create_task(poke())
    try:
        shot = await asyncio.wait_for(anext(frames), timeout=60)
        assert shot.format == "jpeg" and shot.data[:2] == b"\xff\xd8" and shot.width > 0
    finally:
        poker.cancel()
        await asyncio.gather(poker, return_exceptions=True)
        await frames.aclose()  # type: ignore[attr-defined]
    assert (await sb.observe()).screenshot is not None


async def test_same_sandbox_in_arrival_order_others_concurrently(sb: RemoteSandbox, client: Client) -> None:
    other = await client.create("browser", config={"isolation": "shared"})
    try:
        done: list[str] = []

        async def run(name: str, coro: Any) -> None:
            await coro
            done.append(name)

        await asyncio.gather(
            run("wait", sb.act(Wait(seconds=5))),
            run("same", sb.observe(ObserveOptions(screenshot=False))),    # queued behind the wait
            run("other", other.observe(ObserveOptions(screenshot=False))),  # not queued behind it
        )
        assert done.index("wait") < done.index("same")
        assert done.index("other") < done.index("wait")
    finally:
        await other.close()


async def test_events_iterator(sb: RemoteSandbox, client: Client) -> None:
    seen: list[Event] = []

    async def collect() -> None:
        async for event in client.events():
            seen.append(event)
            if event.event == "navigated" and event.sandbox_id == sb.id:
                return

    collector = asyncio.create_task(collect())
    await asyncio.sleep(0)  # let the iterator subscribe before the navigation
    await open_list(sb)
    await asyncio.wait_for(collector, timeout=60)
    assert seen[-1].data.get("url", "").startswith("http://127.0.0.1")


# --- faults: crash, timeout, cancel ---

async def test_killed_browser_gives_sandbox_crashed_and_an_event(sb: RemoteSandbox, client: Client) -> None:
    events: list[Event] = []
    unsubscribe = client.on_event(events.append)
    victim = await client.create("browser", config=CONFIG)
    try:
        os.kill(victim.info.details["browser_pid"], signal.SIGKILL)
        with pytest.raises(SandboxCrashed):
            for _ in range(100):  # until the death is noticed (the first call may already fail)
                await victim.observe()
                await asyncio.sleep(0.1)  # polling a dying process; nothing to wait on
        for _ in range(100):
            if any(e.sandbox_id == victim.id and e.event == "died" for e in events):
                break
            await asyncio.sleep(0.05)
        assert any(e.sandbox_id == victim.id and e.event == "died" for e in events), events
        assert victim.alive is False
        with pytest.raises(SandboxCrashed):
            await victim.act(Click(x=1, y=1))
        assert {i.id: i.status for i in await client.list()}[victim.id] == "crashed"
        obs = await sb.observe()  # the other sandbox is unaffected
        assert obs.screenshot is not None and sb.alive
    finally:
        unsubscribe()
        await victim.close()


async def test_request_timeout(sb: RemoteSandbox) -> None:
    with pytest.raises(Timeout):
        await sb.act(Wait(seconds=10), timeout=0.5)
    assert (await sb.observe()).screenshot is not None  # the lock was released


async def test_cancel_on_the_wire(server: RunningServer, sb: RemoteSandbox) -> None:
    async with ws_connect(server.url) as ws:
        await ws.send(json.dumps({"type": "hello", "id": 1, "token": server.token}))
        assert json.loads(await ws.recv())["type"] == "result"
        await ws.send(json.dumps({"type": "act", "id": 2, "sandbox_id": sb.id,
                                  "action": {"type": "wait", "seconds": 20}}))
        await ws.send(json.dumps({"type": "cancel", "id": 3, "target": 2}))
        replies = {}
        while len(replies) < 2:
            msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
            replies[msg["id"]] = msg
        assert replies[2]["type"] == "error" and replies[2]["code"] == "cancelled"
        assert replies[3]["result"] == {"cancelled": True}


async def test_asyncio_cancel_cancels_on_the_server(sb: RemoteSandbox, client: Client) -> None:
    task = asyncio.create_task(sb.act(Wait(seconds=30)))
    await client.ping()  # the act reached the server before the ping's answer came back
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await sb.observe(timeout=60)).screenshot is not None  # not stuck behind a 30 s wait


# --- protocol errors over a real socket ---

async def test_malformed_frames_get_bad_request_and_the_server_stays_up(server: RunningServer) -> None:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with ws_connect(server.url, additional_headers=headers, max_size=None) as ws:
        await ws.send(json.dumps({"type": "hello", "id": 1}))
        assert json.loads(await ws.recv())["type"] == "result"
        for frame, rid in [("{oops", None), ('{"type": "warp", "id": 5}', 5), ('{"type": "act", "id": 6}', 6),
                           (b"CUA\x01\x09\x00" + bytes(8), None), ("x" * (5 * 1024 * 1024), None),
                           ('{"type": "observe", "id": 7, "sandbox_id": "sb-nope"}', 7)]:
            await ws.send(frame)
            msg = json.loads(await ws.recv())
            assert msg["type"] == "error" and msg["id"] == rid, msg
            assert msg["code"] == ("unknown_sandbox" if rid == 7 else "bad_request")
        await ws.send(json.dumps({"type": "ping", "id": 8}))
        assert json.loads(await ws.recv()) == {"v": 1, "type": "result", "id": 8, "result": {}, "binary": None}
    async with cua.connect(server.url, server.token) as fresh:
        await fresh.ping()


async def test_auth(server: RunningServer) -> None:
    with pytest.raises(Unauthorized):
        await cua.connect(server.url, "wrong-token")
    with pytest.raises(Unauthorized):
        await cua.connect(server.url, None)
    async with ws_connect(server.url) as ws:  # no header: the token must come in hello
        await ws.send(json.dumps({"type": "ping", "id": 1}))
        assert json.loads(await ws.recv())["code"] == "unauthorized"
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), timeout=30)  # and the server closes
        assert ws.close_code == 1008
    async with cua.connect(server.url, server.token) as ok:  # token in the header
        await ok.ping()


async def test_rest(server: RunningServer, sb: RemoteSandbox) -> None:
    base = server.url.replace("ws://", "http://").removesuffix("/v1/ws")
    auth = {"Authorization": f"Bearer {server.token}"}
    async with httpx.AsyncClient(base_url=base) as http:
        health = (await http.get("/v1/health")).json()
        assert health["ok"] is True and health["protocol"] == 1
        assert (await http.get("/v1/sandboxes")).status_code == 401
        assert (await http.get("/v1/metrics", headers={"Authorization": "Bearer nope"})).status_code == 401
        listed = (await http.get("/v1/sandboxes", headers=auth)).json()["sandboxes"]
        assert sb.id in [s["id"] for s in listed]
        text = (await http.get("/v1/metrics", headers=auth)).text
        assert 'cua_requests_total{type="act"}' in text and "cua_sandboxes_live" in text
        data = (await http.get("/v1/metrics", params={"format": "json"}, headers=auth)).json()
        assert data["sandboxes"]["created"] >= 1 and data["requests"]["act"] >= 1
        assert data["latency_ms"]["act"]["count"] >= 1 and "p95" in data["latency_ms"]["act"]


# --- limits ---

async def test_capacity_and_idle_reaping() -> None:
    async with serve_in_background(max_sandboxes=1, idle_timeout=1.0) as running, \
            cua.connect(running.url, running.token, default_timeout=120) as c:
        events: asyncio.Queue[Event] = asyncio.Queue()
        c.on_event(events.put_nowait)
        only = await c.create("browser", config={"isolation": "shared"})
        with pytest.raises(Capacity):
            await c.create("browser", config={"isolation": "shared"})
        while True:  # left alone, it is reaped and announced
            event = await asyncio.wait_for(events.get(), timeout=60)
            if event.event == "closed":
                break
        assert event.sandbox_id == only.id and event.data["reason"] == "idle"
        assert only.closed and await c.list(all=True) == []
        with pytest.raises(UnknownSandbox):
            await only.observe()
        again = await c.create("browser", config={"isolation": "shared"})  # the slot is free again
        await again.close()


async def test_disconnect_closes_unkept_sandboxes(server: RunningServer, client: Client) -> None:
    async with cua.connect(server.url, server.token, default_timeout=120) as other:
        gone = await other.create("browser", config={"isolation": "shared"})
        kept = await other.create("browser", config={"isolation": "shared"}, keep=True)
    for _ in range(600):  # the server closes them after it sees the disconnect
        ids = {i.id for i in await client.list(all=True)}
        if gone.id not in ids:
            break
        await asyncio.sleep(0.05)
    assert kept.id in ids and gone.id not in ids
    handle = await client.attach(kept.id)
    assert handle.observation.sandbox_id == kept.id
    await handle.close()


# --- a faulty third-party kind cannot take the server down ---

class _FaultyConfig(BaseModel):
    pass


class _FaultyKind(Sandbox):
    """A plugin kind whose start fails with a plain bug (not a cua error)."""

    kind = "test-faulty"
    config_model = _FaultyConfig

    @classmethod
    async def create(cls, config: BaseModel, *, sandbox_id: str, emit: Any = None) -> Sandbox:
        raise RuntimeError("bug in a plugin")


async def test_unexpected_exception_is_internal_and_the_server_goes_on(server: RunningServer, client: Client) -> None:
    register_kind(_FaultyKind)
    with pytest.raises(InternalError) as caught:
        await client.create("test-faulty")
    assert "RuntimeError" in caught.value.message and "bug in a plugin" in caught.value.message
    await client.ping()
    assert server.token
    base = server.url.replace("ws://", "http://").removesuffix("/v1/ws")
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {server.token}"}) as http:
        data = (await http.get("/v1/metrics", params={"format": "json"})).json()
    assert {"type": "create", "code": "internal", "count": 1} in data["errors"]
    assert data["sandboxes"]["create_failed"] >= 1
