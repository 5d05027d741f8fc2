"""Client -> server -> fake sandbox over a real loopback websocket: the server's and the
client's contract (requests, binary frames, snapshots, forks, streams, events, typed
errors, timeouts, cancellation, limits), in seconds and without Chromium."""

from __future__ import annotations

import asyncio
import json
import typing
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from websockets.asyncio.client import connect as ws_connect

import cua
from cua.actions import Click, Type, Wait
from cua.client import Client, Event, RemoteSandbox
from cua.errors import BadRequest, Capacity, SandboxCrashed, Timeout, Unauthorized, UnknownSandbox, UnknownSnapshot
from cua.observation import ObserveOptions, Size
from cua.server.app import RunningServer, serve_in_background
from cua.state import AppStateQuery, CommandQuery, DomQuery, TitleQuery

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[RunningServer]:
    async with serve_in_background(max_sandboxes=8) as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(server: RunningServer) -> AsyncIterator[Client]:
    async with cua.connect(server.url, server.token, default_timeout=30) as c:
        yield c


@pytest_asyncio.fixture(loop_scope="module")
async def sb(client: Client) -> AsyncIterator[RemoteSandbox]:
    sandbox = await client.create("fake")
    await sandbox.reset(seed=0)
    yield sandbox
    await sandbox.close()


async def center_of(sandbox: RemoteSandbox, selector: str) -> tuple[float, float]:
    (res,) = await sandbox.query([DomQuery(selector=selector, prop="bbox")])
    assert res.ok and res.value, res
    box = res.value
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


async def state(sandbox: RemoteSandbox) -> dict[str, Any]:
    (res,) = await sandbox.query([AppStateQuery()])
    assert res.ok, res
    value: dict[str, Any] = res.value
    return value


async def click(sandbox: RemoteSandbox, selector: str) -> None:
    x, y = await center_of(sandbox, selector)
    obs = await sandbox.act(Click(x=x, y=y))
    assert obs.error is None, obs.error


async def test_create_observe_act_query(sb: RemoteSandbox, client: Client) -> None:
    assert sb.info.kind == "fake" and {"snapshot", "fork", "query", "stream"} <= set(sb.info.capabilities)
    first = sb.observation
    assert first.screenshot is not None and first.screenshot.data[:2] == b"\xff\xd8"  # a JPEG, as a binary frame
    assert (first.screenshot.width, first.screenshot.height) == (640, 400) and first.step == 0
    count = (await state(sb))["count"]
    await click(sb, "#inc")
    assert (await state(sb))["count"] == count + 1 and sb.observation.step == 1
    title, missing, command = await sb.query([TitleQuery(), DomQuery(selector="#nope"), CommandQuery(argv=["true"])])
    assert title.value == "Fake form - 0 submitted" and missing.ok and missing.value is None
    assert not command.ok and command.error == "unsupported"
    obs = await sb.observe(ObserveOptions(format="png", frame=Size(width=320, height=200), axtree=True))
    assert obs.screenshot is not None and obs.screenshot.data[:4] == b"\x89PNG"
    assert (obs.screenshot.width, obs.screenshot.height) == (320, 200) and obs.axtree
    assert sb.id in [i.id for i in await client.list()]


async def test_action_list_and_agent_faults(sb: RemoteSandbox) -> None:
    x, y = await center_of(sb, "#name")
    obs = await sb.act([Click(x=x, y=y), Type(text="Ada")])
    assert obs.error is None and (await state(sb))["name"] == "Ada"
    # every action of a list is read in the frame the agent saw (here a half-size one)
    ix, iy = await center_of(sb, "#inc")
    count = (await state(sb))["count"]
    await sb.observe(ObserveOptions(frame=Size(width=320, height=200)))
    obs = await sb.act([Wait(seconds=0), Click(x=ix / 2, y=iy / 2)])
    assert obs.error is None and (await state(sb))["count"] == count + 1
    obs = await sb.act([Click(x=99_999, y=5), Click(x=ix, y=iy)])
    assert obs.error is not None and obs.error.reason == "out_of_bounds" and "action 0" in obs.error.message
    assert (await state(sb))["count"] == count + 1  # the list stopped at the fault
    obs = await sb.act(cua.actions.Goto(url="http://example.com/"))
    assert obs.error is not None and obs.error.reason == "unsupported_action" and obs.screenshot is not None


async def test_snapshot_restore_fork(sb: RemoteSandbox, client: Client) -> None:
    base = (await state(sb))["count"]
    snap = await sb.snapshot()
    assert snap.sandbox_id == sb.id and snap.kind == "fake"
    await click(sb, "#inc")
    restored = await sb.restore(snap)
    assert (await state(sb))["count"] == base and restored.step == 0
    child = await sb.fork(snap.id)
    try:
        assert child.id != sb.id and child.info.kind == "fake"
        await click(child, "#dec")
        assert (await state(child))["count"] == base - 1
        assert (await state(sb))["count"] == base  # independent
        assert {sb.id, child.id} <= {i.id for i in await client.list()}
    finally:
        await child.close()
    with pytest.raises(UnknownSandbox):
        await child.observe()
    await sb.delete_snapshot(snap)
    with pytest.raises(UnknownSnapshot):
        await sb.restore(snap)


async def test_stream_pushes_a_frame_per_change(sb: RemoteSandbox) -> None:
    frames = sb.stream(ObserveOptions(format="jpeg", quality=50), max_fps=50)
    try:
        first = await asyncio.wait_for(anext(frames), timeout=10)
        await click(sb, "#inc")
        second = await asyncio.wait_for(anext(frames), timeout=10)
        assert first.data[:2] == second.data[:2] == b"\xff\xd8" and first.data != second.data
    finally:
        await frames.aclose()  # type: ignore[attr-defined]
    assert (await sb.observe()).screenshot is not None


async def test_same_sandbox_in_arrival_order_others_concurrently(client: Client) -> None:
    slow = await client.create("fake", config={"act_delay_s": 0.5})
    other = await client.create("fake")
    try:
        done: list[str] = []

        async def run(name: str, coro: Any) -> None:
            await coro
            done.append(name)

        await asyncio.gather(
            run("slow", slow.act(Wait(seconds=0))),
            run("same", slow.observe(ObserveOptions(screenshot=False))),    # queued behind the slow act
            run("other", other.observe(ObserveOptions(screenshot=False))),  # not queued behind it
        )
        assert done.index("slow") < done.index("same") and done.index("other") < done.index("slow")
    finally:
        await slow.close()
        await other.close()


async def test_a_dead_sandbox_gives_sandbox_crashed_and_an_event(sb: RemoteSandbox, client: Client) -> None:
    events: list[Event] = []
    unsubscribe = client.on_event(events.append)
    victim = await client.create("fake", config={"die_at_step": 2})
    try:
        await victim.act(Wait(seconds=0))
        with pytest.raises(SandboxCrashed):
            await victim.act(Wait(seconds=0))
        for _ in range(200):  # the event travels on its own frame
            if any(e.sandbox_id == victim.id and e.event == "died" for e in events):
                break
            await asyncio.sleep(0.01)
        assert any(e.sandbox_id == victim.id and e.event == "died" for e in events), events
        with pytest.raises(SandboxCrashed):
            await victim.observe()
        assert {i.id: i.status for i in await client.list()}[victim.id] == "crashed"
        assert (await sb.observe()).screenshot is not None and sb.alive  # the other sandbox is unaffected
    finally:
        unsubscribe()
        await victim.close()


async def test_request_timeout_and_cancel(client: Client) -> None:
    slow = await client.create("fake", config={"act_delay_s": 5})
    try:
        with pytest.raises(Timeout):
            await slow.act(Wait(seconds=0), timeout=0.2)
        assert (await slow.observe(timeout=10)).screenshot is not None  # the lock was released
        task = asyncio.create_task(slow.act(Wait(seconds=0)))
        await client.ping()  # the act reached the server before the ping's answer came back
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await slow.observe(timeout=10)).screenshot is not None  # not stuck behind a 5 s act
    finally:
        await slow.close()


async def test_cancel_on_the_wire(server: RunningServer, client: Client) -> None:
    slow = await client.create("fake", config={"act_delay_s": 10})
    try:
        async with ws_connect(server.url) as ws:
            await ws.send(json.dumps({"type": "hello", "id": 1, "token": server.token}))
            assert json.loads(await ws.recv())["type"] == "result"
            await ws.send(json.dumps({"type": "act", "id": 2, "sandbox_id": slow.id, "action": {"type": "wait"}}))
            await ws.send(json.dumps({"type": "cancel", "id": 3, "target": 2}))
            replies = {}
            while len(replies) < 2:
                msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
                replies[msg["id"]] = msg
            assert replies[2]["type"] == "error" and replies[2]["code"] == "cancelled"
            assert replies[3]["result"] == {"cancelled": True}
    finally:
        await slow.close()


async def test_bad_requests_are_typed(client: Client, sb: RemoteSandbox) -> None:
    with pytest.raises(BadRequest) as caught:
        await client.create("no-such-kind")
    assert "fake" in caught.value.message  # the known kinds are named
    with pytest.raises(BadRequest) as caught:
        await client.create("fake", config={"screen": {"width": -1, "height": 10}})
    assert caught.value.details["field"] == "screen.width"
    with pytest.raises(BadRequest):
        await sb.reset(options={"start_url": "/"})
    await client.ping()


async def test_auth_and_rest(server: RunningServer, sb: RemoteSandbox) -> None:
    with pytest.raises(Unauthorized):
        await cua.connect(server.url, "wrong-token")
    base = server.url.replace("ws://", "http://").removesuffix("/v1/ws")
    auth = {"Authorization": f"Bearer {server.token}"}
    async with httpx.AsyncClient(base_url=base) as http:
        assert (await http.get("/v1/health")).json()["ok"] is True
        assert (await http.get("/v1/sandboxes")).status_code == 401
        listed = (await http.get("/v1/sandboxes", headers=auth)).json()["sandboxes"]
        assert sb.id in [s["id"] for s in listed]
        data = (await http.get("/v1/metrics", params={"format": "json"}, headers=auth)).json()
        assert data["sandboxes"]["created"] >= 1 and data["requests"]["act"] >= 1


async def test_capacity_and_idle_reaping() -> None:
    async with serve_in_background(max_sandboxes=1, idle_timeout=0.5) as running, \
            cua.connect(running.url, running.token, default_timeout=30) as c:
        events: asyncio.Queue[Event] = asyncio.Queue()
        c.on_event(events.put_nowait)
        only = await c.create("fake")
        with pytest.raises(Capacity):
            await c.create("fake")
        while True:  # left alone, it is reaped and announced
            event = await asyncio.wait_for(events.get(), timeout=30)
            if event.event == "closed":
                break
        assert event.sandbox_id == only.id and event.data["reason"] == "idle"
        with pytest.raises(UnknownSandbox):
            await only.observe()
        again = await c.create("fake")  # the slot is free again
        await again.close()


async def test_disconnect_closes_unkept_sandboxes(server: RunningServer, client: Client) -> None:
    async with cua.connect(server.url, server.token, default_timeout=30) as other:
        gone = await other.create("fake")
        kept = await other.create("fake", keep=True)
    for _ in range(500):  # the server closes them after it sees the disconnect
        ids = {i.id for i in await client.list(all=True)}
        if gone.id not in ids:
            break
        await asyncio.sleep(0.01)
    assert kept.id in ids and gone.id not in ids
    handle = await client.attach(kept.id)
    assert handle.observation.sandbox_id == kept.id
    await handle.close()


# --- the dispatch table ---

async def test_every_request_type_has_one_typed_handler() -> None:
    """`hello` is the protocol's and `cancel` the connection's; every other request model
    of the protocol has exactly one op, named as the wire names it."""
    from cua import protocol as p
    from cua.server.ops import OPS

    assert set(OPS) == set(typing.get_args(p.Request)) - {p.Hello, p.Cancel}
    for model, op in OPS.items():
        assert op.model is model and op.name == model.model_fields["type"].default
    assert {op.name for op in OPS.values()} | {"hello", "cancel"} == set(p.REQUEST_TYPES)


async def test_a_viewer_observing_at_another_size_does_not_move_the_agents_click(
        server: RunningServer, client: Client) -> None:
    """The frame an agent's coordinates refer to is the agent's own (held per principal by
    the server), never the last frame anyone observed: a live viewer watching at another
    size must not shift where the agent's click lands."""
    sandbox = await client.create("fake", observe=ObserveOptions(frame=Size(width=320, height=200)))
    try:
        await sandbox.reset(seed=0, observe=ObserveOptions(frame=Size(width=320, height=200)))
        box = (await sandbox.query([DomQuery(selector="#inc", prop="bbox")]))[0].value
        # the button's centre in the agent's half-size frame
        x, y = (box["x"] + box["width"] / 2) / 2, (box["y"] + box["height"] / 2) / 2
        before = (await state(sandbox))["count"]
        async with cua.connect(server.url, server.token, default_timeout=30) as viewer_client:
            viewer = await viewer_client.attach(sandbox.id)
            seen = await viewer.observe(ObserveOptions(frame=Size(width=640, height=400)))
            assert (seen.frame.width, seen.frame.height) == (640, 400)
            obs = await sandbox.act(Click(x=x, y=y))
        assert obs.error is None, obs.error
        assert (await state(sandbox))["count"] == before + 1, "the click landed in the viewer's frame"
    finally:
        await sandbox.close()
