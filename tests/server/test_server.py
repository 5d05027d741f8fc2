"""Client -> server -> sandbox over a real loopback websocket: the server's and the client's
contract (requests, binary frames, snapshots, forks, streams, events, typed errors, timeouts,
cancellation, limits), held over the `fake` kind (in seconds, in the fast lane) and the
`browser` kind (real Chromium and the bundled todo app, in the slow lane) alike.

What one kind alone does (the fake form's typing, the browser's navigation events) and what
is the server's whatever the kind (auth, REST, malformed frames, the dispatch table) are
tests of their own, on the fake kind where no browser is needed."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import typing
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import pytest_asyncio
from pydantic import BaseModel
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

import cua
from cua.actions import Action, Click, Goto, Type, Wait
from cua.client import Client, Event, RemoteSandbox
from cua.errors import (
    BadRequest,
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
from cua.state import AppStateQuery, CommandQuery, DomQuery, SqlQuery, TitleQuery, UrlQuery
from cua.tasks.apps import service

pytestmark = pytest.mark.asyncio(loop_scope="module")

TODO = service("todo")
OPEN_TODOS = "SELECT COUNT(*) AS n FROM todos WHERE done = 0"


async def center_of(sandbox: RemoteSandbox, selector: str) -> tuple[float, float]:
    (res,) = await sandbox.query([DomQuery(selector=selector, prop="bbox")])
    assert res.ok and res.value, res
    box = res.value
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


async def click(sandbox: RemoteSandbox, selector: str) -> None:
    x, y = await center_of(sandbox, selector)
    obs = await sandbox.act(Click(x=x, y=y))
    assert obs.error is None, obs.error


async def fake_count(sandbox: RemoteSandbox) -> int:
    (res,) = await sandbox.query([AppStateQuery()])
    assert res.ok, res
    return int(res.value["count"])


async def open_todos(sandbox: RemoteSandbox) -> int:
    (res,) = await sandbox.query([SqlQuery(query=OPEN_TODOS)])
    assert res.ok, res
    return int(res.value[0]["n"])


async def open_list(sandbox: RemoteSandbox) -> None:
    await sandbox.reset(seed=0)
    x, y = await center_of(sandbox, 'a.list-card[href="/lists/1"]')
    obs = await sandbox.act(Click(x=x, y=y))
    assert obs.error is None and obs.url.endswith("/lists/1"), obs


async def _die_at_its_second_step(victim: RemoteSandbox) -> None:
    await victim.act(Wait(seconds=0))
    with pytest.raises(SandboxCrashed):
        await victim.act(Wait(seconds=0))


async def _kill_its_browser(victim: RemoteSandbox) -> None:
    os.kill(victim.info.details["browser_pid"], signal.SIGKILL)
    with pytest.raises(SandboxCrashed):
        for _ in range(100):  # until the death is noticed (the first call may already fail)
            await victim.observe()
            await asyncio.sleep(0.1)  # polling a dying process; nothing to wait on


@dataclass(frozen=True)
class World:
    """What the contract needs of a kind: its sandbox, a known starting state, one step that
    changes a number the app keeps (`level`, by `delta`), a slow action, and a death."""

    kind: str
    config: dict[str, Any]  # the contract's sandbox
    light: dict[str, Any]  # a second sandbox, as cheap as the kind allows
    screen: tuple[int, int]
    capabilities: set[str]
    start: Callable[[RemoteSandbox], Awaitable[None]]
    target: str  # the element whose click changes `level`
    level: Callable[[RemoteSandbox], Awaitable[int]]
    delta: int
    holds: Callable[[Any], bool]  # what the app's state holds
    victim: dict[str, Any]  # the config of a sandbox `kill` kills
    kill: Callable[[RemoteSandbox], Awaitable[None]]
    slow_s: float  # an act this long is slow beside the kind's quick requests
    delays: bool  # a slow act is the sandbox's (`act_delay_s`), not the action's (`wait`)

    async def change(self, sandbox: RemoteSandbox) -> None:
        await click(sandbox, self.target)

    async def slow(self, client: Client, seconds: float, *, keep: bool = False) -> tuple[RemoteSandbox, Action]:
        """A sandbox and an action of it that takes `seconds` (`keep`: other connections of the
        same principal may drive it)."""
        config = {**self.light, "act_delay_s": seconds} if self.delays else self.light
        sandbox = await client.create(self.kind, config=config, keep=keep)
        return sandbox, Wait(seconds=0 if self.delays else seconds)


async def _reset(sandbox: RemoteSandbox) -> None:
    await sandbox.reset(seed=0)


WORLDS = {
    "fake": World(kind="fake", config={}, light={}, screen=(640, 400),
                  capabilities={"snapshot", "fork", "query", "stream"}, start=_reset, target="#inc",
                  level=fake_count, delta=+1, holds=lambda state: "count" in state, victim={"die_at_step": 2},
                  kill=_die_at_its_second_step, slow_s=0.5, delays=True),
    "browser": World(kind="browser", config={"services": [TODO], "start_url": "/"}, light={"isolation": "shared"},
                     screen=(1280, 720), capabilities={"snapshot", "fork", "query"}, start=open_list,
                     target="tr.todo input.toggle", level=open_todos, delta=-1,
                     holds=lambda state: len(state["todos"]) > 0, victim={"services": [TODO], "start_url": "/"},
                     kill=_kill_its_browser, slow_s=5, delays=False),
}


@pytest.fixture(scope="module")
def server_options() -> dict[str, Any]:
    return {"max_sandboxes": 8}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(server: RunningServer) -> AsyncIterator[Client]:
    async with cua.connect(server.url, server.token, default_timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def world(kind: str) -> World:
    return WORLDS[kind]


@pytest_asyncio.fixture(loop_scope="module")
async def sb(world: World, client: Client) -> AsyncIterator[RemoteSandbox]:
    sandbox = await client.create(world.kind, config=world.config)
    yield sandbox
    await sandbox.close()


@pytest_asyncio.fixture(loop_scope="module")
async def fake(client: Client) -> AsyncIterator[RemoteSandbox]:
    """A fake sandbox, reset with seed 0, for what is the server's whatever the kind."""
    sandbox = await client.create("fake")
    await sandbox.reset(seed=0)
    yield sandbox
    await sandbox.close()


# --- the contract, over both kinds ---

async def test_create_observe_act_query(world: World, sb: RemoteSandbox, client: Client) -> None:
    assert sb.info.kind == world.kind and world.capabilities <= set(sb.info.capabilities)
    first = sb.observation
    assert first.screenshot is not None and first.screenshot.format == "jpeg"
    assert first.screenshot.data[:2] == b"\xff\xd8"  # a real JPEG arrived as a binary frame
    assert (first.screenshot.width, first.screenshot.height) == world.screen and first.step == 0
    await world.start(sb)
    before, steps = await world.level(sb), sb.observation.step
    await world.change(sb)
    assert await world.level(sb) == before + world.delta and sb.observation.step == steps + 1
    url, title, state = await sb.query([UrlQuery(), TitleQuery(), AppStateQuery()])
    assert url.value == sb.observation.url and title.ok and state.ok and world.holds(state.value)
    half = Size(width=world.screen[0] // 2, height=world.screen[1] // 2)
    obs = await sb.observe(ObserveOptions(format="png", frame=half, axtree=True))
    assert obs.screenshot is not None and obs.screenshot.data[:4] == b"\x89PNG"
    assert (obs.screenshot.width, obs.screenshot.height) == (half.width, half.height)
    assert obs.axtree and obs.frame == half
    assert [i.id for i in await client.list()] == [sb.id]


async def test_action_list_observes_once_and_reports_agent_faults(world: World, sb: RemoteSandbox) -> None:
    await world.start(sb)
    full = Size(width=world.screen[0], height=world.screen[1])
    obs = await sb.act([Wait(seconds=0), Click(x=5, y=5)], frame=full)
    assert obs.error is None and obs.screenshot is not None
    # every action of a list is read in the frame the agent saw (here a half-size one)
    x, y = await center_of(sb, world.target)
    before = await world.level(sb)
    await sb.observe(ObserveOptions(frame=Size(width=full.width // 2, height=full.height // 2)))
    obs = await sb.act([Wait(seconds=0), Click(x=x / 2, y=y / 2)])
    assert obs.error is None and await world.level(sb) == before + world.delta
    assert obs.frame == full  # this observation asked for no frame
    obs = await sb.act([Click(x=99_999, y=5), Click(x=x, y=y)])
    assert obs.error is not None and obs.error.reason == "out_of_bounds" and "action 0" in obs.error.message
    assert await world.level(sb) == before + world.delta  # the list stopped at the fault
    assert obs.screenshot is not None  # the sandbox goes on, and the agent sees the screen


async def test_snapshot_restore_fork(world: World, sb: RemoteSandbox, client: Client) -> None:
    await world.start(sb)
    started = sb.observation
    base = await world.level(sb)
    snap = await sb.snapshot()
    assert snap.sandbox_id == sb.id and snap.kind == world.kind
    assert snap.size_bytes > 0 or world.kind == "fake"  # the fake keeps its snapshots in memory, unsized
    await world.change(sb)
    assert await world.level(sb) == base + world.delta
    restored = await sb.restore(snap)
    assert restored.url == started.url and restored.step == started.step and await world.level(sb) == base
    child = await sb.fork(snap.id)
    try:
        assert child.id != sb.id and child.info.kind == world.kind and child.observation.url == started.url
        await world.change(child)
        assert await world.level(child) == base + world.delta
        assert await world.level(sb) == base  # independent
        assert {i.id for i in await client.list()} == {sb.id, child.id}
    finally:
        await child.close()
    with pytest.raises(UnknownSandbox):
        await child.observe()
    await sb.delete_snapshot(snap)
    with pytest.raises(UnknownSnapshot):
        await sb.restore(snap)


async def test_stream_pushes_frames(world: World, sb: RemoteSandbox) -> None:
    await world.start(sb)
    frames = sb.stream(ObserveOptions(format="jpeg", quality=50), max_fps=5)

    async def poke() -> None:  # screencasts send frames when the screen changes
        for _ in range(20):
            await sb.act(Click(x=5, y=5))
            await world.change(sb)

    poker = asyncio.create_task(poke())
    try:
        shot = await asyncio.wait_for(anext(frames), timeout=60)
        assert shot.format == "jpeg" and shot.data[:2] == b"\xff\xd8" and shot.width > 0
    finally:
        poker.cancel()
        await asyncio.gather(poker, return_exceptions=True)
        await frames.aclose()  # type: ignore[attr-defined]
    assert (await sb.observe()).screenshot is not None


async def test_same_sandbox_in_arrival_order_others_concurrently(world: World, client: Client) -> None:
    slow, wait = await world.slow(client, world.slow_s)
    other = await client.create(world.kind, config=world.light)
    try:
        done: list[str] = []

        async def run(name: str, coro: Any) -> None:
            await coro
            done.append(name)

        await asyncio.gather(
            run("slow", slow.act(wait)),
            run("same", slow.observe(ObserveOptions(screenshot=False))),    # queued behind the slow act
            run("other", other.observe(ObserveOptions(screenshot=False))),  # not queued behind it
        )
        assert done.index("slow") < done.index("same") and done.index("other") < done.index("slow")
    finally:
        await slow.close()
        await other.close()


async def test_a_dead_sandbox_gives_sandbox_crashed_and_an_event(world: World, sb: RemoteSandbox,
                                                                 client: Client) -> None:
    events: list[Event] = []
    unsubscribe = client.on_event(events.append)
    victim = await client.create(world.kind, config=world.victim)
    try:
        await world.kill(victim)
        for _ in range(200):  # the event travels on its own frame
            if any(e.sandbox_id == victim.id and e.event == "died" for e in events):
                break
            await asyncio.sleep(0.05)
        assert any(e.sandbox_id == victim.id and e.event == "died" for e in events), events
        assert victim.alive is False
        with pytest.raises(SandboxCrashed):
            await victim.observe()
        with pytest.raises(SandboxCrashed):
            await victim.act(Click(x=1, y=1))
        assert {i.id: i.status for i in await client.list()}[victim.id] == "crashed"
        obs = await sb.observe()  # the other sandbox is unaffected
        assert obs.screenshot is not None and sb.alive
    finally:
        unsubscribe()
        await victim.close()


async def test_request_timeout_and_cancel(world: World, client: Client) -> None:
    slow, wait = await world.slow(client, 5)
    try:
        with pytest.raises(Timeout):
            await slow.act(wait, timeout=0.5)
        assert (await slow.observe(timeout=10)).screenshot is not None  # the lock was released
        task = asyncio.create_task(slow.act(wait))
        await client.ping()  # the act reached the server before the ping's answer came back
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await slow.observe(timeout=10)).screenshot is not None  # not stuck behind a 5 s act
    finally:
        await slow.close()


async def test_cancel_on_the_wire(world: World, server: RunningServer, client: Client) -> None:
    # kept, so that the raw connection below (same token) may drive it: without it the act is
    # refused as unknown_sandbox whenever its lookup runs before the cancel lands
    slow, wait = await world.slow(client, 10, keep=True)
    try:
        async with ws_connect(server.url) as ws:
            await ws.send(json.dumps({"type": "hello", "id": 1, "token": server.token}))
            assert json.loads(await ws.recv())["type"] == "result"
            await ws.send(json.dumps({"type": "act", "id": 2, "sandbox_id": slow.id, "action": wait.model_dump(mode="json")}))
            await ws.send(json.dumps({"type": "cancel", "id": 3, "target": 2}))
            replies = {}
            while len(replies) < 2:
                msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
                replies[msg["id"]] = msg
            assert replies[2]["type"] == "error" and replies[2]["code"] == "cancelled"
            assert replies[3]["result"] == {"cancelled": True}
    finally:
        await slow.close()


async def test_capacity_and_idle_reaping(world: World) -> None:
    async with serve_in_background(max_sandboxes=1, idle_timeout=1.0) as running, \
            cua.connect(running.url, running.token, default_timeout=120) as c:
        events: asyncio.Queue[Event] = asyncio.Queue()
        c.on_event(events.put_nowait)
        only = await c.create(world.kind, config=world.light)
        with pytest.raises(Capacity):
            await c.create(world.kind, config=world.light)
        while True:  # left alone, it is reaped and announced
            event = await asyncio.wait_for(events.get(), timeout=60)
            if event.event == "closed":
                break
        assert event.sandbox_id == only.id and event.data["reason"] == "idle"
        assert only.closed and await c.list(all=True) == []
        with pytest.raises(UnknownSandbox):
            await only.observe()
        again = await c.create(world.kind, config=world.light)  # the slot is free again
        await again.close()


async def test_disconnect_closes_unkept_sandboxes(world: World, server: RunningServer, client: Client) -> None:
    async with cua.connect(server.url, server.token, default_timeout=120) as other:
        gone = await other.create(world.kind, config=world.light)
        kept = await other.create(world.kind, config=world.light, keep=True)
    for _ in range(600):  # the server closes them after it sees the disconnect
        ids = {i.id for i in await client.list(all=True)}
        if gone.id not in ids:
            break
        await asyncio.sleep(0.05)
    assert kept.id in ids and gone.id not in ids
    handle = await client.attach(kept.id)
    assert handle.observation.sandbox_id == kept.id
    await handle.close()


# --- what one kind alone does ---

async def test_fake_queries_typing_and_browser_only_actions(fake: RemoteSandbox) -> None:
    title, missing, command = await fake.query([TitleQuery(), DomQuery(selector="#nope"), CommandQuery(argv=["true"])])
    assert title.value == "Fake form - 0 submitted" and missing.ok and missing.value is None
    assert not command.ok and command.error == "unsupported"
    x, y = await center_of(fake, "#name")
    obs = await fake.act([Click(x=x, y=y), Type(text="Ada")])
    assert obs.error is None
    (state,) = await fake.query([AppStateQuery()])
    assert state.value["name"] == "Ada"
    obs = await fake.act(Goto(url="http://example.com/"))
    assert obs.error is not None and obs.error.reason == "unsupported_action" and obs.screenshot is not None


async def test_fake_stream_pushes_a_frame_per_change(fake: RemoteSandbox) -> None:
    frames = fake.stream(ObserveOptions(format="jpeg", quality=50), max_fps=50)
    try:
        first = await asyncio.wait_for(anext(frames), timeout=10)
        await click(fake, "#inc")
        second = await asyncio.wait_for(anext(frames), timeout=10)
        assert first.data[:2] == second.data[:2] == b"\xff\xd8" and first.data != second.data
    finally:
        await frames.aclose()  # type: ignore[attr-defined]
    assert (await fake.observe()).screenshot is not None


@pytest.mark.slow
async def test_browser_events_iterator(client: Client) -> None:
    sb = await client.create("browser", config=WORLDS["browser"].config)
    try:
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
    finally:
        await sb.close()


# --- the server's, whatever the kind ---

async def test_bad_requests_are_typed(client: Client, fake: RemoteSandbox) -> None:
    with pytest.raises(BadRequest) as caught:
        await client.create("no-such-kind")
    assert "fake" in caught.value.message  # the known kinds are named
    with pytest.raises(BadRequest) as caught:
        await client.create("fake", config={"screen": {"width": -1, "height": 10}})
    assert caught.value.details["field"] == "screen.width"
    with pytest.raises(BadRequest):
        await fake.reset(options={"start_url": "/"})
    await client.ping()


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


async def test_rest(server: RunningServer, fake: RemoteSandbox) -> None:
    await click(fake, "#inc")
    base = server.url.replace("ws://", "http://").removesuffix("/v1/ws")
    auth = {"Authorization": f"Bearer {server.token}"}
    async with httpx.AsyncClient(base_url=base) as http:
        health = (await http.get("/v1/health")).json()
        assert health["ok"] is True and health["protocol"] == 1
        assert (await http.get("/v1/sandboxes")).status_code == 401
        assert (await http.get("/v1/metrics", headers={"Authorization": "Bearer nope"})).status_code == 401
        listed = (await http.get("/v1/sandboxes", headers=auth)).json()["sandboxes"]
        assert fake.id in [s["id"] for s in listed]
        text = (await http.get("/v1/metrics", headers=auth)).text
        assert 'cua_requests_total{type="act"}' in text and "cua_sandboxes_live" in text
        data = (await http.get("/v1/metrics", params={"format": "json"}, headers=auth)).json()
        assert data["sandboxes"]["created"] >= 1 and data["requests"]["act"] >= 1
        assert data["latency_ms"]["act"]["count"] >= 1 and "p95" in data["latency_ms"]["act"]


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
        before = await fake_count(sandbox)
        async with cua.connect(server.url, server.token, default_timeout=30) as viewer_client:
            viewer = await viewer_client.attach(sandbox.id)
            seen = await viewer.observe(ObserveOptions(frame=Size(width=640, height=400)))
            assert (seen.frame.width, seen.frame.height) == (640, 400)
            obs = await sandbox.act(Click(x=x, y=y))
        assert obs.error is None, obs.error
        assert await fake_count(sandbox) == before + 1, "the click landed in the viewer's frame"
    finally:
        await sandbox.close()


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
