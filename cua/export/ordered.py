"""Work done a few items at once, its results taken in the items' order.

An executed export (`--execute --parallel N`) runs N trajectories at once, each in its own
sandbox, but writes the rows one at a time would have written, in the same order: a file is
the same whatever N was. At most N items are in flight, and a result waits only for those
before it, so memory holds N trajectories' rows, not the whole export's.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TypeVar

__all__ = ["in_order"]

Item = TypeVar("Item")
Result = TypeVar("Result")


async def in_order(items: Iterable[Item], parallel: int, work: Callable[[Item], Awaitable[Result]]
                   ) -> AsyncIterator[Result]:
    """`work(item)` for each item, `parallel` (at least 1) at a time, yielding the results in
    the order of `items`. The first failure is raised where its result would have been
    yielded, and what is still in flight then (or when the caller stops early) is cancelled
    and awaited: nothing is left running."""
    if parallel < 1:
        raise ValueError(f"parallel must be at least 1, not {parallel}")
    pending: deque[asyncio.Future[Result]] = deque()
    try:
        for item in items:
            pending.append(asyncio.ensure_future(work(item)))
            if len(pending) >= parallel:
                yield await pending.popleft()
        while pending:
            yield await pending.popleft()
    finally:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
