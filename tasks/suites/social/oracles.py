"""Python oracles for social templates whose number of clicks depends on the data: follow
every liker not followed yet, unfollow every quiet account, follow an author only if needed.
They select by `data-` attributes only, so they work in every variant (`cua.variant`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from cua.actions import Action
from cua.state import DomQuery
from cua.task import OracleContext
from cua.tasks.oracle import OracleError, run_steps

#: Far more rounds than any list holds: more means a click is not taking.
MAX_ROUNDS = 60
FOLLOW_LIKER = '[data-liker][data-following="0"] [data-action=follow]'
UNFOLLOW = "[data-followee] [data-action=unfollow]"


async def _count(ctx: OracleContext, selector: str) -> int:
    result = await ctx.query(DomQuery(selector=selector, prop="count"))
    if not result.ok:
        raise OracleError(f"cannot count {selector}: {result.message}")
    return int(result.value or 0)


async def _click_until(ctx: OracleContext, selector: str, *, leave: int = 0) -> AsyncIterator[Action]:
    """Click the first `selector` (each click reloads the page) until `leave` are left."""
    for _ in range(MAX_ROUNDS):
        if await _count(ctx, selector) <= leave:
            return
        async for action in run_steps(ctx, [{"click": selector}]):
            yield action
    raise OracleError(f"{selector} keeps reappearing")


async def follow_likers(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Open who liked the latest post and follow each one not followed yet."""
    async for action in run_steps(ctx, [{"goto": f"/p/{params['p']['id']}/likes"}, {"wait_for": "[data-liker]"}]):
        yield action
    async for action in _click_until(ctx, FOLLOW_LIKER):
        yield action


async def follow_likers_but_one(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """The near miss: stops one short."""
    async for action in run_steps(ctx, [{"goto": f"/p/{params['p']['id']}/likes"}, {"wait_for": "[data-liker]"}]):
        yield action
    async for action in _click_until(ctx, FOLLOW_LIKER, leave=1):
        yield action


async def unfollow_inactive(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Filter the accounts followed to those quiet for 30 days and unfollow each."""
    async for action in run_steps(ctx, [{"goto": "/u/ines_duarte/following"},
                                        {"select": {"selector": "select[data-filter=activity]", "option": "inactive"}},
                                        {"click": "[data-action=apply-filter]"}, {"wait_for": "[data-followee]"}]):
        yield action
    async for action in _click_until(ctx, UNFOLLOW):
        yield action


async def unfollow_inactive_and_one_more(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """The near miss: also unfollows an account that posted this month."""
    async for action in unfollow_inactive(ctx, params):
        yield action
    async for action in run_steps(ctx, [{"goto": "/u/ines_duarte/following?activity=active"}, {"click": UNFOLLOW}]):
        yield action


async def mention_round(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Open the latest mention, like it, reply, follow its author if needed, add them to the list."""
    m = params["m"]
    async for action in _mention_steps(ctx, m, params["text"], like=True):
        yield action


async def mention_round_without_like(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """The near miss: everything but the like."""
    async for action in _mention_steps(ctx, params["m"], params["text"], like=False):
        yield action


async def _mention_steps(ctx: OracleContext, m: dict[str, Any], text: str, *, like: bool) -> AsyncIterator[Action]:
    steps: list[dict[str, Any]] = [
        {"click": 'a[data-nav="/notifications"]'}, {"click": "[data-tab=mentions]"},
        {"click": f'[data-notification-id="{m["nid"]}"] a[href="/p/{m["post_id"]}"]'},
        {"wait_for": f'[data-post-id="{m["post_id"]}"]'},
    ]
    if like:
        steps.append({"click": f'[data-post-id="{m["post_id"]}"] [data-action=like]'})
    steps += [{"fill": {"selector": "form[data-form=reply] textarea[data-field=compose-body]", "text": text}},
              {"click": "[data-action=send-reply]"}, {"goto": f"/u/{m['handle']}"}, {"wait_for": "[data-handle]"}]
    async for action in run_steps(ctx, steps):
        yield action
    card = f'[data-handle="{m["handle"]}"]'
    if await _count(ctx, f"{card} [data-action=follow]"):
        steps = [{"click": f"{card} [data-action=follow]"}, {"wait_for": f"{card} [data-action=unfollow]"}]
        async for action in run_steps(ctx, steps):
            yield action
    async for action in run_steps(ctx, [{"select": {"selector": "select[data-field=add-to-list]", "option": m["list"]}},
                                        {"click": "[data-action=add-to-list]"}, {"wait_for": f'[data-member="{m["handle"]}"]'}]):
        yield action
