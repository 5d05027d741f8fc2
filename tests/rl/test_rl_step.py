"""Dense reward in one round trip: `act_query` (an act whose answer carries state queries
answered after the action), local and remote alike, and `Episode.step(progress=True)` riding on it."""

from __future__ import annotations

import pytest

import cua
from cua.actions import Click, Scroll
from cua.episode.episode import Episode
from cua.episode.handle import ActQueryHandle
from cua.episode.local import LocalSandbox
from cua.errors import Unsupported
from cua.server.app import serve_in_background
from cua.state import DomQuery, UrlQuery
from cua.tasks.registry import get_template

pytestmark = pytest.mark.slow
TASK = "todo.mark_done@1"


class Counting:
    """A handle wrapper that counts the requests an episode makes."""

    def __init__(self, handle) -> None:
        self.inner, self.calls = handle, []

    def __getattr__(self, name):
        attr = getattr(self.inner, name)
        if name in ("act", "act_query", "query", "observe", "reset"):
            async def counted(*a, **kw):
                self.calls.append(name)
                return await attr(*a, **kw)
            return counted
        return attr


async def _check(handle) -> None:
    assert isinstance(handle, ActQueryHandle)
    obs, results = await handle.act_query(Scroll(x=640, y=360, dy=100), [UrlQuery(), DomQuery(selector="h1")])
    assert obs.screenshot is not None and len(results) == 2 and results[0].ok and results[0].value == obs.url
    instance = get_template(TASK).instantiate(2)
    counted = Counting(handle)
    ep = Episode(counted, instance, producer="rl")  # type: ignore[arg-type]
    await ep.reset()
    counted.calls.clear()
    result = await ep.step(Click(x=5, y=5), progress=True)
    assert counted.calls == ["act_query"] and result.progress == await ep.progress()


async def test_act_query_remote_and_local_and_episode_progress_in_one_request():
    instance = get_template(TASK).instantiate(2)
    config = {**instance.sandbox_config, "isolation": "shared"}
    async with serve_in_background(max_sandboxes=2) as server:
        async with cua.connect(server.url, server.token, default_timeout=120) as client:
            remote = await client.create("browser", config=config)
            try:
                await _check(remote)
            finally:
                await remote.close()
    local = await LocalSandbox.create("browser", config)
    try:
        await _check(local)
    finally:
        await local.close()


async def test_act_query_on_a_kind_without_queries_is_unsupported():
    from _blank_kind import BlankSandbox  # registers the capability-less kind

    handle = await LocalSandbox.create(BlankSandbox.kind, {})
    try:
        with pytest.raises(Unsupported):
            await handle.act_query(Click(x=1, y=1), [UrlQuery()])
    finally:
        await handle.close()
    async with serve_in_background(max_sandboxes=2) as server:
        async with cua.connect(server.url, server.token, default_timeout=60) as client:
            remote = await client.create(BlankSandbox.kind)
            with pytest.raises(Unsupported):
                await remote.act_query(Click(x=1, y=1), [UrlQuery()])
            await remote.close()


async def test_browser_reads_ride_beside_the_capture_and_see_the_settled_action():
    """The browser answers an act's queries while it captures the screen (`ActQueryable`):
    the reads still see what the action did, as a query after it does."""
    from cua.sandbox import ActQueryable
    from cua.state import AppStateQuery

    instance = get_template(TASK).instantiate(0)
    local = await LocalSandbox.create("browser", {**instance.sandbox_config, "isolation": "shared"})
    try:
        assert isinstance(local.sandbox, ActQueryable)
        await local.reset(seed=instance.seed)
        (card,) = await local.query([DomQuery(selector="a.list-card", prop="bbox")])
        b = card.value
        await local.act(Click(x=b["x"] + b["width"] / 2, y=b["y"] + b["height"] / 2))
        open_todos = DomQuery(selector="tr.todo input.toggle", prop="count")  # a ticked todo leaves the open list
        (box,) = await local.query([DomQuery(selector="tr.todo input.toggle", prop="bbox")])
        (before,) = await local.query([open_todos])
        b = box.value
        reads = [open_todos, AppStateQuery(), UrlQuery()]
        obs, results = await local.act_query(Click(x=b["x"] + b["width"] / 2, y=b["y"] + b["height"] / 2), reads)
        assert obs.error is None and obs.screenshot is not None
        assert results[0].ok and results[0].value == before.value - 1
        after = await local.query(reads)
        assert [(r.ok, r.value) for r in results] == [(r.ok, r.value) for r in after]
        assert results[2].value == obs.url
    finally:
        await local.close()


async def test_browser_reset_reads_ride_beside_the_capture_and_see_the_start_state():
    """The browser answers a reset's queries while it captures the first screen
    (`ResetQueryable`): they read the state the reset made, not the one before it."""
    from cua.sandbox import ResetQueryable
    from cua.state import AppStateQuery

    instance = get_template(TASK).instantiate(0)
    local = await LocalSandbox.create("browser", {**instance.sandbox_config, "isolation": "shared"})
    try:
        assert isinstance(local.sandbox, ResetQueryable)
        reads = [AppStateQuery(), UrlQuery()]
        _, start = await local.reset_query(reads, seed=instance.seed)
        (card,) = await local.query([DomQuery(selector="a.list-card", prop="bbox")])
        b = card.value
        await local.act(Click(x=b["x"] + b["width"] / 2, y=b["y"] + b["height"] / 2))
        (box,) = await local.query([DomQuery(selector="tr.todo input.toggle", prop="bbox")])
        b = box.value
        await local.act(Click(x=b["x"] + b["width"] / 2, y=b["y"] + b["height"] / 2))
        (changed,) = await local.query([AppStateQuery()])
        assert changed.value != start[0].value  # a todo was ticked
        obs, again = await local.reset_query(reads, seed=instance.seed)
        assert [(r.ok, r.value) for r in again] == [(r.ok, r.value) for r in start]
        assert again[1].value == obs.url and obs.screenshot is not None
    finally:
        await local.close()
