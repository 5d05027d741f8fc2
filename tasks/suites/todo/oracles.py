"""Python oracles for todo templates whose number of steps depends on the data."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from cua.actions import Action
from cua.state import DomQuery
from cua.task import OracleContext
from cua.tasks.oracle import OracleError, run_steps

#: A list holds at most a few dozen todos; more rounds than this means a toggle is not taking.
MAX_ROUNDS = 60
#: Selected by data- attributes only, so the oracles work in every variant (`cua.variant`).
OVERDUE_TOGGLE = 'tr[data-done="0"]:has([data-overdue]) input[data-action=toggle]'


async def _overdue_count(ctx: OracleContext) -> int:
    result = await ctx.query(DomQuery(selector=OVERDUE_TOGGLE, prop="count"))
    if not result.ok:
        raise OracleError(f"cannot count overdue todos: {result.message}")
    return int(result.value or 0)


async def complete_overdue(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Open the list and tick overdue open todos one by one (each tick reloads the page)."""
    async for action in run_steps(ctx, [{"click": f'a[data-list="{params["list"]["name"]}"]'}]):
        yield action
    for _ in range(MAX_ROUNDS):
        if await _overdue_count(ctx) == 0:
            return
        async for action in run_steps(ctx, [{"click": OVERDUE_TOGGLE}]):
            yield action
    raise OracleError("overdue todos keep reappearing")


async def complete_overdue_and_one_more(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """The near miss: also ticks an open todo that is not overdue."""
    async for action in complete_overdue(ctx, params):
        yield action
    async for action in run_steps(ctx, [{"click": 'tr[data-done="0"]:not(:has([data-overdue])) input[data-action=toggle]'}]):
        yield action
