"""An episode's initial reads ride on its reset: `reset_query` answers state queries about
the reset state in the same exchange (`RemoteSandbox`: one request; `LocalSandbox`), and
`Episode.reset` uses it, so an episode's start costs one round trip, not two. On the fake
kind, in process and through a real server."""

from __future__ import annotations

from typing import Any

import pytest

import cua
from cua.episode import Episode, LocalSandbox
from cua.episode.handle import ResetQueryHandle
from cua.errors import Unsupported
from cua.server.app import serve_in_background
from cua.state import AppStateQuery, TitleQuery
from cua.tasks.registry import get_template

TASK = "fake.submit_form@1"


class Counting:
    """A handle wrapper that counts the requests an episode makes."""

    def __init__(self, handle: Any) -> None:
        self.inner, self.calls = handle, []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name in ("act", "act_query", "query", "observe", "reset", "reset_query"):
            async def counted(*a: Any, **kw: Any) -> Any:
                self.calls.append(name)
                return await attr(*a, **kw)
            return counted
        return attr


class Plain(Counting):
    """A handle that offers no `reset_query`: the episode reads its initial state apart."""

    def __getattr__(self, name: str) -> Any:
        if name == "reset_query":
            raise AttributeError(name)
        return super().__getattr__(name)


async def _check(handle: Any) -> None:
    assert isinstance(handle, ResetQueryHandle)
    obs, (title, app) = await handle.reset_query([TitleQuery(), AppStateQuery()], seed=3)
    assert obs.step == 0 and title.ok and title.value == obs.title and app.ok
    assert handle.observation is obs  # the handle's latest observation, as after a reset
    (again,) = await handle.query([AppStateQuery()])
    assert again.value == app.value  # answered about the reset state

    instance = get_template(TASK).instantiate(2)
    counted = Counting(handle)
    ep = Episode(counted, instance)  # type: ignore[arg-type]
    await ep.reset()
    assert counted.calls == ["reset_query"]
    plain = Plain(handle)
    fresh = Episode(plain, instance)  # type: ignore[arg-type]
    await fresh.reset()
    assert plain.calls == ["reset", "query"]  # read in a request of their own: the same initial state
    assert ep.initial == fresh.initial and ep.initial and ep.instance.instruction == fresh.instance.instruction


async def test_reset_query_remote_and_local_and_episode_reset_in_one_request() -> None:
    async with serve_in_background(max_sandboxes=2) as server:
        async with cua.connect(server.url, server.token, default_timeout=60) as client:
            remote = await client.create("fake")
            try:
                await _check(remote)
            finally:
                await remote.close()
    local = await LocalSandbox.create("fake", {})
    try:
        await _check(local)
    finally:
        await local.close()


async def test_reset_query_on_a_kind_without_queries_is_unsupported() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_handle_conformance import BlankSandbox  # registers the capability-less kind

    handle = await LocalSandbox.create(BlankSandbox.kind, {})
    try:
        with pytest.raises(Unsupported):
            await handle.reset_query([TitleQuery()])
    finally:
        await handle.close()
    async with serve_in_background(max_sandboxes=2) as server:
        async with cua.connect(server.url, server.token, default_timeout=60) as client:
            remote = await client.create(BlankSandbox.kind)
            with pytest.raises(Unsupported):
                await remote.reset_query([TitleQuery()])
            await remote.close()
