"""Python oracles for the forum: the infinite-scroll feed loads posts only as the end of
the list scrolls into view, so an oracle must scroll (as an agent would) until the post
it wants exists, then act on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from cua.actions import Action, Scroll, Wait
from cua.state import DomQuery
from cua.task import OracleContext
from cua.tasks.oracle import OracleError, run_steps

#: 400 posts load 20 at a time; each scroll of a screen or two loads at most one page.
MAX_SCROLLS = 60


async def _scroll_until_loaded(ctx: OracleContext, post_id: int) -> AsyncIterator[Action]:
    selector = f'.post-item[data-id="{post_id}"]'
    for _ in range(MAX_SCROLLS):
        found = await ctx.query(DomQuery(selector=selector, prop="count"))
        if not found.ok:
            raise OracleError(f"cannot read the feed: {found.message}")
        if found.value:
            return
        obs = ctx.observation
        yield Scroll(x=obs.frame.width / 2, y=obs.frame.height / 2, dy=obs.frame.height * 1.5)
        yield Wait(seconds=0.3)  # the next page arrives by fetch after the sentinel shows
    raise OracleError(f"post {post_id} never appeared in the feed")


async def _upvote_in_feed(ctx: OracleContext, post_id: int) -> AsyncIterator[Action]:
    async for action in _scroll_until_loaded(ctx, post_id):
        yield action
    steps = [{"click": f'.post-item[data-id="{post_id}"] .vote.up'},
             {"wait_for": f'.post-item[data-id="{post_id}"] .vote.up[aria-pressed="true"]'}]
    async for action in run_steps(ctx, steps):
        yield action


async def scroll_and_upvote(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _upvote_in_feed(ctx, int(params["post"]["id"])):
        yield action


async def scroll_and_upvote_neighbour(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """The near miss: the post just above the right one."""
    async for action in _upvote_in_feed(ctx, int(params["post"]["prev_id"])):
        yield action
