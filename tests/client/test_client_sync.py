"""The blocking facade, end to end: a server on its own thread, a real browser sandbox."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from cua.actions import Click, Wait
from cua.client import Event
from cua.errors import Timeout, Unauthorized, UnknownSandbox
from cua.server.app import RunningServer, serve_in_thread
from cua.state import DomQuery, SqlQuery, UrlQuery
from cua.sync_api import Client, Sandbox, connect
from cua.tasks.apps import service

pytestmark = pytest.mark.slow  # starts Chromium, Xvfb, QEMU, a server or Ray

CONFIG = {"services": [service("todo")],
          "start_url": "/"}
OPEN_TODOS = "SELECT COUNT(*) AS n FROM todos WHERE done = 0"


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_in_thread(max_sandboxes=4) as running:
        yield running


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
    return res.value[0]["n"]


def test_sync_end_to_end(client: Client) -> None:
    events: list[Event] = []
    lock = threading.Lock()

    def on_event(event: Event) -> None:
        with lock:
            events.append(event)

    client.on_event(on_event)
    sb = client.create("browser", config=CONFIG)
    try:
        assert sb.observation.screenshot is not None and sb.observation.screenshot.data[:2] == b"\xff\xd8"
        click(sb, 'a.list-card[href="/lists/1"]')
        (url,) = sb.query([UrlQuery()])
        assert url.value.endswith("/lists/1")
        base = open_todos(sb)
        snap = sb.snapshot()
        click(sb, "tr.todo input.toggle")
        assert open_todos(sb) == base - 1
        assert sb.restore(snap).url.endswith("/lists/1") and open_todos(sb) == base
        child = sb.fork(snap)
        click(child, "tr.todo input.toggle")
        assert open_todos(child) == base - 1 and open_todos(sb) == base
        assert {i.id for i in client.list()} == {sb.id, child.id}
        child.close()
        with pytest.raises(UnknownSandbox):
            child.observe()
        with pytest.raises(Timeout):
            sb.act(Wait(seconds=10), timeout=0.5)
        assert sb.observe().screenshot is not None
        obs = sb.reset(seed=0)
        assert obs.url.endswith("/") and open_todos(sb) == base
    finally:
        sb.close()
    with lock:
        assert any(e.event == "navigated" and e.sandbox_id == sb.id for e in events)


def test_sync_wrong_token(server: RunningServer) -> None:
    with pytest.raises(Unauthorized):
        connect(server.url, "not-the-token")
    before = threading.active_count()
    with connect(server.url, server.token) as c:
        c.ping()
    assert threading.active_count() == before  # the private loop thread is gone


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
