"""One sandbox-handle contract, held against every way of driving a sandbox.

The same checks run on the in-process handle (`cua.episode.LocalSandbox`), the remote one
(`cua.client.RemoteSandbox`, through a real `cua serve` on loopback) and the blocking facade
(`cua.sync_api.Sandbox`, on the same server): on a real browser sandbox, and on a minimal
sandbox kind that can neither answer queries nor snapshot (tests/_blank_kind.py, registered
in this process, so the in-thread server knows it too).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

import _blank_kind  # noqa: F401  (registers the capability-less kind `test-blank`: tests/_blank_kind.py)
import pytest

import cua
from cua import sync_api
from cua.actions import Action, Click, Goto, Type, Wait
from cua.client import Event
from cua.episode import LocalSandbox, SandboxHandle
from cua.errors import BadRequest, Unsupported
from cua.info import SandboxInfo, SnapshotRef
from cua.observation import Observation, ObserveOptions, Size
from cua.server.app import RunningServer
from cua.state import DomQuery, FileQuery, StateQuery, StateResult

pytestmark = pytest.mark.slow

PAGE = """<!doctype html><title>handle</title>
<style>body{margin:0} button{position:absolute;left:20px;top:20px;width:200px;height:60px}
input{position:absolute;left:20px;top:120px;width:300px;height:40px}</style>
<button id=b onclick="this.dataset.n=(+(this.dataset.n||0))+1">press</button><input id=t>"""
START = "data:text/html," + quote(PAGE)
OTHER = "data:text/html," + quote("<!doctype html><title>other</title><p>another page</p>")
BROWSER = {"isolation": "shared", "start_url": START, "viewport": {"width": 800, "height": 600}}
BUTTON = (120.0, 50.0)
FIELD = (170.0, 140.0)


class SyncHandle:
    """The blocking facade seen through the async handle interface (each call on a worker thread),
    so that the same checks run on it."""

    def __init__(self, sandbox: sync_api.Sandbox) -> None:
        self.sandbox = sandbox

    @property
    def id(self) -> str:
        return self.sandbox.id

    @property
    def info(self) -> SandboxInfo:
        return self.sandbox.info

    @property
    def observation(self) -> Observation:
        return self.sandbox.observation

    @property
    def alive(self) -> bool:
        return self.sandbox.alive

    async def _call(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        return await asyncio.to_thread(fn, *args, **kw)

    async def reset(self, **kw: Any) -> Observation:
        return await self._call(self.sandbox.reset, **kw)

    async def act(self, action: Action | Sequence[Action], **kw: Any) -> Observation:
        return await self._call(self.sandbox.act, action, **kw)

    async def observe(self, options: ObserveOptions | None = None) -> Observation:
        return await self._call(self.sandbox.observe, options)

    async def query(self, queries: Sequence[StateQuery]) -> list[StateResult]:
        return await self._call(self.sandbox.query, queries)

    async def snapshot(self) -> SnapshotRef:
        return await self._call(self.sandbox.snapshot)

    async def restore(self, ref: SnapshotRef, **kw: Any) -> Observation:
        return await self._call(self.sandbox.restore, ref, **kw)

    async def delete_snapshot(self, ref: SnapshotRef) -> None:
        await self._call(self.sandbox.delete_snapshot, ref)

    async def refresh(self) -> SandboxInfo:
        return await self._call(self.sandbox.refresh)

    def on_event(self, callback: Callable[[Event], None]) -> None:
        self.sandbox.on_event(callback)

    async def close(self) -> None:
        await self._call(self.sandbox.close)


@pytest.fixture(scope="module")
def server_options() -> dict[str, Any]:
    return {"max_sandboxes": 6}


@asynccontextmanager
async def opened(how: str, server: RunningServer, kind: str, config: dict[str, Any]) -> AsyncIterator[SandboxHandle]:
    if how == "local":
        handle = await LocalSandbox.create(kind, config)
        try:
            yield handle
        finally:
            await handle.close()
    elif how == "remote":
        async with cua.connect(server.url, server.token, default_timeout=120) as client:
            sandbox = await client.create(kind, config=config)
            try:
                yield sandbox
            finally:
                await sandbox.close()
    else:
        client = await asyncio.to_thread(sync_api.connect, server.url, server.token, default_timeout=120)
        try:
            sandbox = await asyncio.to_thread(client.create, kind, config)
            try:
                yield SyncHandle(sandbox)  # type: ignore[misc]
            finally:
                await asyncio.to_thread(sandbox.close)
        finally:
            await asyncio.to_thread(client.close)


HOW = ["local", "remote", "sync"]


async def _presses(handle: SandboxHandle) -> int:
    (res,) = await handle.query([DomQuery(selector="#b", prop="attr", attr="data-n")])
    assert res.ok, res
    return int(res.value or 0)


@pytest.mark.parametrize("how", HOW)
async def test_reset_act_observe_and_action_lists(how: str, server: RunningServer) -> None:
    async with opened(how, server, "browser", BROWSER) as handle:
        assert isinstance(handle, SandboxHandle)
        obs = await handle.reset(seed=0, options={"start_url": START})
        assert obs.frame == Size(width=800, height=600) and obs.screenshot is not None and obs.step == 0
        assert handle.observation.step == obs.step and handle.info.kind == "browser"
        obs = await handle.act(Click(x=BUTTON[0], y=BUTTON[1]))
        assert obs.error is None and obs.step == 1 and await _presses(handle) == 1

        # several actions, one observation at the end (the one rule, wherever it runs)
        obs = await handle.act([Click(x=BUTTON[0], y=BUTTON[1]), Click(x=FIELD[0], y=FIELD[1]), Type(text="abc")])
        assert obs.error is None and obs.step == 4 and obs.screenshot is not None
        assert await _presses(handle) == 2
        (typed,) = await handle.query([DomQuery(selector="#t", prop="value")])
        assert typed.value == "abc"
        # the first agent fault stops the list and is reported with its index; the rest is not done
        obs = await handle.act([Click(x=BUTTON[0], y=BUTTON[1]), Click(x=5000, y=5), Click(x=BUTTON[0], y=BUTTON[1])])
        assert obs.error is not None and obs.error.reason == "out_of_bounds" and obs.error.message.startswith("action 1")
        assert obs.screenshot is not None and await _presses(handle) == 3
        with pytest.raises(BadRequest):
            await handle.act([])
        # every action of a list is read in the frame the agent saw (here a half-size one)
        half = Size(width=400, height=300)
        obs = await handle.observe(ObserveOptions(frame=half))
        assert obs.frame == half
        obs = await handle.act([Click(x=BUTTON[0] / 2, y=BUTTON[1] / 2), Wait(seconds=0)],
                               observe=ObserveOptions(frame=half))
        assert obs.error is None and await _presses(handle) == 4
        obs = await handle.reset(seed=0)
        assert obs.step == 0 and await _presses(handle) == 0


@pytest.mark.parametrize("how", HOW)
async def test_queries_snapshots_info_and_events(how: str, server: RunningServer) -> None:
    events: list[Event] = []
    lock = threading.Lock()

    def on_event(event: Event) -> None:
        with lock:
            events.append(event)

    async with opened(how, server, "browser", BROWSER) as handle:
        handle.on_event(on_event)
        await handle.reset(seed=0)
        ok, unsupported = await handle.query([DomQuery(selector="title"), FileQuery(path="/etc/hostname")])
        assert ok.ok and ok.value == "handle"
        assert not unsupported.ok and unsupported.error == "unsupported"  # a kind it does not answer: soft
        ref = await handle.snapshot()
        obs = await handle.act(Goto(url=OTHER))
        assert obs.title == "other"
        obs = await handle.restore(ref)
        (title,) = await handle.query([DomQuery(selector="title")])
        assert title.value == "handle" and obs.url == START
        await handle.delete_snapshot(ref)
        info = await handle.refresh()
        assert info.id == handle.id and info.kind == "browser" and "snapshot" in info.capabilities
        await handle.act(Goto(url=OTHER))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        while not any(e.event == "navigated" for e in events):
            assert loop.time() < deadline, f"no navigated event; got {events}"
            await asyncio.sleep(0.05)  # the event arrives on another task (or thread)
        assert all(e.sandbox_id == handle.id for e in events)
        assert handle.alive
        await handle.close()
        await handle.close()  # twice: nothing happens
        assert not handle.alive


@pytest.mark.parametrize("how", HOW)
async def test_missing_capabilities_raise_unsupported(how: str, server: RunningServer) -> None:
    async with opened(how, server, "test-blank", {"width": 320, "height": 200}) as handle:
        obs = await handle.reset(seed=1)
        assert obs.frame == Size(width=320, height=200)
        with pytest.raises(Unsupported):
            await handle.query([DomQuery(selector="body")])
        with pytest.raises(Unsupported):
            await handle.snapshot()
        obs = await handle.act([Click(x=1, y=1), Goto(url="http://127.0.0.1/"), Click(x=2, y=2)])
        assert obs.error is not None and obs.error.reason == "unsupported_action" and obs.step == 1
        obs = await handle.act(Click(x=400, y=5))
        assert obs.error is not None and obs.error.reason == "out_of_bounds"
