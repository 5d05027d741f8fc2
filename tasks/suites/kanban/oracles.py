"""Python oracles for kanban templates that drop a card at a precise spot (above or below
another card), which a centre-to-centre drag cannot express."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from cua.actions import Action, Drag, Point
from cua.task import OracleContext
from cua.tasks.oracle import locate, run_steps


def _frame_point(ctx: OracleContext, x: float, y: float) -> Point:
    obs = ctx.observation
    return Point(x=x * obs.frame.width / obs.screen.width, y=y * obs.frame.height / obs.screen.height)


async def _drag_relative(ctx: OracleContext, card_id: int, target_id: int, fraction: float) -> AsyncIterator[Action]:
    """Drag card `card_id` onto card `target_id`, releasing at `fraction` of the target's
    height: above its middle drops before it, below drops after it."""
    async for action in run_steps(ctx, [{"scroll_to": f'.kcard[data-id="{card_id}"]'}]):
        yield action
    _, a = await locate(ctx, f'.kcard[data-id="{card_id}"]')
    _, b = await locate(ctx, f'.kcard[data-id="{target_id}"]')
    ax, ay = a["x"] + a["width"] / 2, a["y"] + a["height"] / 2
    bx, by = b["x"] + b["width"] / 2, b["y"] + b["height"] * fraction
    # several intermediate points: the board starts a drag only past a small threshold
    yield Drag(path=[_frame_point(ctx, ax + (bx - ax) * t / 10, ay + (by - ay) * t / 10) for t in range(11)])


async def drop_above(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _drag_relative(ctx, params["a"]["id"], params["b"]["id"], 0.2):
        yield action


async def drop_below(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """The near miss of drop_above: lands just after the target instead."""
    async for action in _drag_relative(ctx, params["a"]["id"], params["b"]["id"], 0.8):
        yield action
