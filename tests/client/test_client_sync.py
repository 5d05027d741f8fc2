"""`cua.sync_api`, the blocking facade, end to end: the same calls as the async client, from
plain code, on the shared server (its own thread). One contract over the `fake` kind (fast
lane) and a real browser sandbox with the bundled todo app (slow lane)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from cua.actions import Click, Wait
from cua.client import Event
from cua.errors import Timeout, Unauthorized, UnknownSandbox
from cua.observation import ObserveOptions
from cua.server.app import RunningServer
from cua.state import AppStateQuery, DomQuery, SqlQuery, UrlQuery
from cua.sync_api import Client, Sandbox, connect
from cua.tasks.apps import service

CONFIG: dict[str, Any] = {"services": [service("todo")], "start_url": "/"}
OPEN_TODOS = "SELECT COUNT(*) AS n FROM todos WHERE done = 0"


@pytest.fixture(scope="module")
def client(server: RunningServer) -> Iterator[Client]:
    with connect(server.url, server.token, default_timeout=120) as c:
        yield c


def click(sb: Sandbox, selector: str) -> None:
    (res,) = sb.query([DomQuery(selector=selector, prop="bbox")])
    assert res.ok and res.value, res
    box = res.value
    obs = sb.act(Click(x=box["x"] + box["width"] / 2, y=box["y"] + box["height"] / 2))
    assert obs.error is None, obs.error


def open_todos(sb: Sandbox) -> int:
    (res,) = sb.query([SqlQuery(query=OPEN_TODOS)])
    return int(res.value[0]["n"])


def count(sb: Sandbox) -> int:
    (res,) = sb.query([AppStateQuery()])
    return int(res.value["count"])


def open_list(sb: Sandbox) -> None:
    click(sb, 'a.list-card[href="/lists/1"]')
    (url,) = sb.query([UrlQuery()])
    assert url.value.endswith("/lists/1")


@dataclass(frozen=True)
class World:
    """What the contract needs of a kind: its sandbox, where an episode starts (`start`, after
    a reset with `seed`), one click (`target`) that changes a number the app keeps (`level`,
    by `delta`), a sandbox whose `Wait(seconds=10)` outlasts a short timeout, and the event
    the start announces, if any."""

    kind: str
    config: dict[str, Any]
    seed: int
    start: Callable[[Sandbox], None]
    target: str
    level: Callable[[Sandbox], int]
    delta: int
    slow: dict[str, Any]
    event: str | None


WORLDS = {
    "fake": World(kind="fake", config={}, seed=4, start=lambda sb: None, target="#inc", level=count, delta=+1,
                  slow={"act_delay_s": 2}, event=None),
    "browser": World(kind="browser", config=CONFIG, seed=0, start=open_list, target="tr.todo input.toggle",
                     level=open_todos, delta=-1, slow={"isolation": "shared"}, event="navigated"),
}


def test_sync_end_to_end(kind: str, client: Client) -> None:
    world = WORLDS[kind]
    events: list[Event] = []
    lock = threading.Lock()

    def on_event(event: Event) -> None:
        with lock:
            events.append(event)

    client.on_event(on_event)
    sb = client.create(kind, config=world.config)
    try:
        first = sb.observation
        assert first.screenshot is not None and first.screenshot.data[:2] == b"\xff\xd8"
        sb.reset(seed=world.seed)
        world.start(sb)
        base, at = world.level(sb), sb.observation.url
        snap = sb.snapshot()
        click(sb, world.target)
        assert world.level(sb) == base + world.delta
        assert sb.restore(snap).url == at and world.level(sb) == base
        child = sb.fork(snap)
        assert child.observation.url == at and world.level(child) == base  # the snapshot's state
        click(child, world.target)
        assert world.level(child) == base + world.delta and world.level(sb) == base
        assert {i.id for i in client.list()} == {sb.id, child.id}
        child.close()
        with pytest.raises(UnknownSandbox):
            child.observe()
        if kind == "fake":  # a screencast (the browser's) sends frames only when the screen changes
            frames = sb.stream(ObserveOptions(format="png"), max_fps=20)
            assert next(frames).data[:4] == b"\x89PNG"
            frames.close()  # type: ignore[attr-defined]
        obs = sb.reset(seed=world.seed)
        assert obs.url == first.url and world.level(sb) == base
        assert [i.id for i in client.list()] == [sb.id]
    finally:
        sb.close()
    if world.event is not None:
        with lock:
            assert any(e.event == world.event and e.sandbox_id == sb.id for e in events)


def test_sync_timeout_releases_the_sandbox(kind: str, client: Client) -> None:
    slow = client.create(kind, config=WORLDS[kind].slow)
    try:
        with pytest.raises(Timeout):
            slow.act(Wait(seconds=10), timeout=0.5)
        assert slow.observe().screenshot is not None
    finally:
        slow.close()


def test_sync_wrong_token(server: RunningServer) -> None:
    with pytest.raises(Unauthorized):
        connect(server.url, "not-the-token")
    before = threading.active_count()
    with connect(server.url, server.token) as c:
        c.ping()
    assert threading.active_count() == before  # the private loop thread is gone


@pytest.mark.slow
def test_sync_refresh_sandbox_events_and_the_event_stream(client: Client) -> None:
    stream = client.events(timeout=30)  # subscribed here, before anything happens
    seen: list[Event] = []
    sb = client.create("browser", config=CONFIG)
    sb.on_event(seen.append)
    try:
        info = sb.refresh()
        assert info.id == sb.id and info.kind == "browser" and info.status == "ready"
        click(sb, 'a.list-card[href="/lists/1"]')
        went = next(e for e in stream if e.event == "navigated" and e.sandbox_id == sb.id
                    and e.data["url"].endswith("/lists/1"))
        assert went.sandbox_id == sb.id
        assert any(e.event == "navigated" and e.data["url"].endswith("/lists/1") for e in list(seen))
    finally:
        sb.close()
        stream.close()  # type: ignore[attr-defined]
