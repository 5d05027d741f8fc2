"""The warm pool of `create` (`CUA_BROWSER_POOL`, `cua serve --pool N`): spares of a config
started and loaded in the background, taken by later creates, refilled, kept past the last
sandbox for the creates to come, and closed when the server stops (`close_pools`)."""

from __future__ import annotations

import asyncio

import pytest

from cua.actions import Click
from cua.sandbox import SandboxEvent, ServiceSpec, close_pools, create_sandbox
from cua.sandboxes.browser import BrowserConfig, BrowserSandbox
from cua.state import TitleQuery
from cua.tasks.apps import service

pytestmark = [pytest.mark.slow]

TODO = ServiceSpec.model_validate(service("todo"))


async def _until(predicate, timeout: float = 120.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "the pool did not fill"
        await asyncio.sleep(0.1)




async def test_creates_take_warm_spares_that_refill_and_outlive_sandboxes_until_the_pools_close(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUA_BROWSER_POOL", "2")
    config = BrowserConfig(isolation="shared", services=[TODO], start_url="/")
    first = await BrowserSandbox.create(config, sandbox_id="pool-first")  # cold: names the config
    made = [first]
    try:
        await _until(lambda: first.info().details["create_spares"] == 2)
        events: list[SandboxEvent] = []
        warm = await BrowserSandbox.create(config, sandbox_id="pool-warm", emit=events.append)
        made.append(warm)
        assert warm.id == "pool-warm" and warm.info().id == "pool-warm"
        obs = await warm.observe()  # the screen taken when the spare started: the page has not changed
        assert obs.sandbox_id == "pool-warm" and obs.title == "Lists · Todo" and obs.screenshot is not None
        later = await warm.observe()
        assert later.screenshot is not None and later.sandbox_id == "pool-warm"
        assert (await warm.act(Click(x=5, y=5))).error is None
        (title,) = await warm.query([TitleQuery()])
        assert title.value == "Lists · Todo"
        obs = await warm.reset(seed=3)
        assert obs.settle is not None and obs.settle.settled
        # the spare taken is replaced in the background
        await _until(lambda: first.info().details["create_spares"] == 2)
    finally:
        for sandbox in made:
            await sandbox.close()
    # the spares serve the creates still to come, past the last sandbox, until the pools close
    from cua.sandboxes.browser.sandbox import _spares
    loop = asyncio.get_running_loop()
    assert _spares[loop].warm(config) == 2
    # a warm one, after none was live; created as the server creates (by kind, so its stop closes the pool)
    again = await create_sandbox("browser", config, sandbox_id="pool-again")
    try:
        assert (await again.observe()).title == "Lists · Todo"
    finally:
        await again.close()
    await _until(lambda: _spares[loop].warm(config) == 2)
    kept = [spare for pool in _spares[loop]._warm.values() for spare in pool]
    await close_pools()
    assert _spares[loop].warm(config) == 0
    assert kept and not any(spare.alive for spare in kept), "the server's stop left warm spares running"


async def test_no_pool_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUA_BROWSER_POOL", raising=False)
    config = BrowserConfig(isolation="shared", services=[TODO], start_url="/")
    sb = await BrowserSandbox.create(config, sandbox_id="nopool")
    try:
        await asyncio.sleep(0.5)
        assert sb.info().details["create_spares"] == 0
    finally:
        await sb.close()
