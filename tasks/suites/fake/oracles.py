"""Python oracles for the fake suite: how many clicks the counter needs depends on where
the reset seed started it, which the oracle reads, as an agent would see it on screen."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from cua.actions import Action
from cua.state import AppStateQuery
from cua.task import OracleContext
from cua.tasks.oracle import OracleError, run_steps


async def _count(ctx: OracleContext) -> int:
    result = await ctx.query(AppStateQuery())
    if not result.ok or not isinstance(result.value, dict):
        raise OracleError(f"cannot read the counter: {result.error}: {result.message}")
    return int(result.value["count"])


async def _click_to(ctx: OracleContext, target: int) -> AsyncIterator[Action]:
    delta = target - await _count(ctx)
    steps = [{"click": "#inc" if delta > 0 else "#dec"}] * abs(delta)
    async for action in run_steps(ctx, steps):
        yield action


async def set_counter(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _click_to(ctx, int(params["goal"]["target"])):
        yield action


async def set_counter_one_short(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """The near miss: stops one click before the target."""
    async for action in _click_to(ctx, int(params["goal"]["before"])):
        yield action
