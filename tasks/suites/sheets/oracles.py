"""Python oracles for sheets templates whose number of steps depends on the data."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from cua.actions import Action
from cua.task import OracleContext
from cua.tasks.oracle import run_steps


def _edit_steps(rows: list[int], price: Any) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [{"click": 'a.tab[data-sheet="Sales"]'}]
    for row in rows:
        steps += [{"click": f'td[data-ref="E{row}"]'}, {"type_text": str(price)}, {"press": "Enter"},
                  {"wait_for": "#grid:not([aria-busy])"}]
    return steps


def _rows(params: dict[str, Any]) -> list[int]:
    return [int(r) for r in str(params["product"]["rows_csv"]).split(",")]


async def set_product_price(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Click each of the product's Unit price cells and type the new price."""
    async for action in run_steps(ctx, _edit_steps(_rows(params), params["price"]), params):
        yield action


async def set_product_price_but_one(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """The near miss: forgets the last of the product's rows."""
    async for action in run_steps(ctx, _edit_steps(_rows(params)[:-1], params["price"]), params):
        yield action
