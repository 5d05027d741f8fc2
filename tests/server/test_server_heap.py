"""The server's frozen heap (cua/server/heap.py): long-lived objects out of the cycle
collector's walks, cyclic garbage still collected after a sandbox comes or goes."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref
from collections.abc import Callable, Iterator
from functools import partial
from urllib.parse import urlparse

import httpx
import pytest

import cua
from cua.server.app import serve_in_background, serve_in_subprocess
from cua.server.heap import HeapKeeper
from cua.server.metrics import Metrics


class Cycle:
    def __init__(self) -> None:
        self.me = self


def is_frozen(*objs: object) -> bool:
    """Tracked by the collector, yet in none of its three generations: in the permanent one."""
    unfrozen = {id(o) for generation in range(3) for o in gc.get_objects(generation)}
    return all(gc.is_tracked(obj) and id(obj) not in unfrozen for obj in objs)


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    """Each test starts and ends with nothing frozen (the test process's collector is shared)."""
    gc.unfreeze()
    yield
    gc.unfreeze()


async def until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Waits for what the keeper's timers will make true: a timer that runs late on a loaded
    machine (CI's full suite holds about a million objects, so one collection can take a
    good part of a second) may delay it, never fail it."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        await asyncio.sleep(0.02)  # the keeper's timers run on this loop


@pytest.fixture
def keepers() -> Iterator[list[HeapKeeper]]:
    """Every keeper a test makes is stopped, whatever the test's outcome."""
    made: list[HeapKeeper] = []
    yield made
    for keeper in made:
        keeper.stop()


async def test_frozen_objects_are_out_of_the_collectors_walks_until_a_close_refreshes(
    keepers: list[HeapKeeper],
) -> None:
    metrics = Metrics()
    # No periodic refresh in this test's lifetime: every refresh counted is a close's.
    keeper = HeapKeeper(metrics, interval_s=0.05, period_s=3600)
    keepers.append(keeper)
    cycle = Cycle()
    alive = weakref.ref(cycle)
    keeper.start()
    assert gc.get_freeze_count() > 1000 and metrics.heap_refreshes == 1
    del cycle
    gc.collect()
    assert alive() is not None, "a frozen cycle was walked by a full collection"

    newcomers = [Cycle() for _ in range(500)]
    assert not is_frozen(newcomers[0])
    keeper.grown()
    keeper.grown()
    await until(partial(is_frozen, *newcomers[::50]), "a new sandbox's objects frozen")
    assert metrics.heap_refreshes == 1, "a create ran a full collection"
    assert alive() is not None

    del newcomers
    keeper.shrunk()
    keeper.shrunk()  # a burst of closes: one refresh
    await until(lambda: alive() is None, "the refresh after a close collects frozen cyclic garbage")
    assert metrics.heap_refreshes == 2 and gc.get_freeze_count() > 1000
    await asyncio.sleep(10 * keeper.interval_s)  # room for a second refresh, which must not come
    assert metrics.heap_refreshes == 2, "a burst of closes ran more than one refresh"
    # The metric reads the live count: a frozen object that dies in between leaves it, so
    # the reading lies between the counts just before and just after.
    before = gc.get_freeze_count()
    reported = metrics.as_dict(live=0)["heap"]["frozen_objects"]
    assert before >= reported >= gc.get_freeze_count()


async def test_the_periodic_refresh_collects_what_a_living_sandbox_dropped(keepers: list[HeapKeeper]) -> None:
    metrics = Metrics()
    keeper = HeapKeeper(metrics, interval_s=0.01, period_s=0.3)
    keepers.append(keeper)
    keeper.start()
    late = Cycle()
    alive = weakref.ref(late)
    keeper.grown()
    await until(partial(is_frozen, late), "a new sandbox's objects frozen")
    del late
    gc.collect()
    assert alive() is not None, "a frozen cycle was walked by a full collection"
    # No close: only the periodic refresh can collect it.
    await until(lambda: alive() is None, "the periodic refresh collects frozen cyclic garbage")
    assert metrics.heap_refreshes >= 2


async def test_stop_drops_what_was_scheduled_and_leaves_nothing_frozen(keepers: list[HeapKeeper]) -> None:
    metrics = Metrics()
    keeper = HeapKeeper(metrics, interval_s=0.05, period_s=0.1)
    keepers.append(keeper)
    keeper.start()
    keeper.grown()
    keeper.shrunk()
    keeper.stop()
    assert gc.get_freeze_count() == 0
    await asyncio.sleep(0.5)  # past every timer the keeper had set
    assert metrics.heap_refreshes == 1 and gc.get_freeze_count() == 0


@pytest.mark.slow
async def test_an_embedded_server_leaves_the_callers_collector_alone() -> None:
    async with serve_in_background(max_sandboxes=2) as (url, token), cua.connect(url, token) as client:
        sandbox = await client.create("browser")
        await sandbox.close()
        await asyncio.sleep(2.5)  # longer than the keeper's interval: a refresh would have run
        assert gc.get_freeze_count() == 0


@pytest.mark.slow
async def test_cua_serve_freezes_its_heap_and_refreshes_after_a_close() -> None:
    async with serve_in_subprocess(max_sandboxes=2) as (url, token):
        base = f"http://{urlparse(url).netloc}"
        auth = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=base, headers=auth) as http:
            async def heap() -> dict[str, float]:
                data: dict[str, float] = (await http.get("/v1/metrics", params={"format": "json"})).json()["heap"]
                return data

            at_start = await heap()
            assert at_start["frozen_objects"] > 10_000 and at_start["refreshes"] == 1
            async with cua.connect(url, token) as client:
                sandbox = await client.create("browser")
                await sandbox.close()
            for _ in range(100):  # the refresh runs 2 s after the close
                now = await heap()
                if now["refreshes"] >= 2:
                    break
                await asyncio.sleep(0.1)  # polling another process's metrics
            assert now["refreshes"] >= 2 and now["frozen_objects"] > 10_000
            assert "cua_heap_frozen_objects" in (await http.get("/v1/metrics")).text
