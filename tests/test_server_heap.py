"""The server's frozen heap (cua/server/heap.py): long-lived objects out of the cycle
collector's walks, cyclic garbage still collected after a sandbox comes or goes."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
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


def is_frozen(obj: object) -> bool:
    """Tracked by the collector, yet in none of its three generations: in the permanent one."""
    unfrozen = {id(o) for generation in range(3) for o in gc.get_objects(generation)}
    return gc.is_tracked(obj) and id(obj) not in unfrozen


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    """Each test starts and ends with nothing frozen (the test process's collector is shared)."""
    gc.unfreeze()
    yield
    gc.unfreeze()


async def test_frozen_objects_are_out_of_the_collectors_walks_until_a_refresh() -> None:
    metrics = Metrics()
    keeper = HeapKeeper(metrics, interval_s=0.05, period_s=0.6)
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
    await asyncio.sleep(0.2)
    assert all(is_frozen(c) for c in newcomers[::50]), "a new sandbox's objects were not frozen"
    assert metrics.heap_refreshes == 1, "a create ran a full collection"
    assert alive() is not None

    del newcomers
    keeper.shrunk()
    keeper.shrunk()  # a burst of closes: one refresh
    await asyncio.sleep(0.2)
    assert alive() is None, "the refresh after a close left frozen cyclic garbage"
    assert metrics.heap_refreshes == 2 and gc.get_freeze_count() > 1000
    # The metric reads the live count: a frozen object that dies in between leaves it, so
    # the reading lies between the counts just before and just after.
    before = gc.get_freeze_count()
    reported = metrics.as_dict(live=0)["heap"]["frozen_objects"]
    assert before >= reported >= gc.get_freeze_count()

    late = Cycle()
    alive = weakref.ref(late)
    keeper.grown()
    await asyncio.sleep(0.2)
    del late
    await asyncio.sleep(0.6)  # no close: the periodic refresh collects it
    assert alive() is None and metrics.heap_refreshes == 3

    keeper.shrunk()
    keeper.stop()  # what was scheduled is dropped, and nothing stays frozen
    await asyncio.sleep(0.3)
    assert metrics.heap_refreshes == 3 and gc.get_freeze_count() == 0


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
