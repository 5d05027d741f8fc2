"""`cua.export.ordered.in_order`: an executed export's trajectories run N at once, and their
rows come out in the order one at a time gives, with nothing left running on a failure."""

from __future__ import annotations

import asyncio

import pytest

from cua.export.ordered import in_order


def test_results_come_in_the_items_order_with_at_most_n_in_flight() -> None:
    in_flight, most = 0, 0

    async def work(item: int) -> int:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.001 * (7 - item))  # the later items finish first
        in_flight -= 1
        return item * 10

    async def collect(parallel: int) -> list[int]:
        return [r async for r in in_order(range(7), parallel, work)]

    assert asyncio.run(collect(3)) == [0, 10, 20, 30, 40, 50, 60] and most == 3
    most = 0
    assert asyncio.run(collect(1)) == [0, 10, 20, 30, 40, 50, 60] and most == 1


def test_a_failure_is_raised_in_its_place_and_cancels_what_is_in_flight() -> None:
    started: list[int] = []
    cancelled: list[int] = []

    async def work(item: int) -> int:
        started.append(item)
        if item == 0:
            return item
        if item == 1:
            await asyncio.sleep(0.01)
            raise RuntimeError("the sandbox failed")
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(item)
            raise
        return item

    got: list[int] = []

    async def collect() -> None:
        async for r in in_order(range(6), 3, work):
            got.append(r)

    with pytest.raises(RuntimeError, match="the sandbox failed"):
        asyncio.run(asyncio.wait_for(collect(), 5))
    assert got == [0] and started == [0, 1, 2, 3] and sorted(cancelled) == [2, 3]


def test_parallel_below_one_is_refused() -> None:
    async def collect() -> list[int]:
        return [r async for r in in_order(range(2), 0, asyncio.sleep)]

    with pytest.raises(ValueError, match="at least 1"):
        asyncio.run(collect())
