"""Python oracles for settings templates that must react to what the page shows."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from cua.actions import Action
from cua.state import DomQuery
from cua.task import OracleContext
from cua.tasks.oracle import OracleError, run_steps

SWITCH = 'button[role=switch][data-key="require_2fa"]'


async def toggle_2fa(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Flip the 2FA switch; turning it off opens a confirm modal, which is confirmed."""
    async for action in run_steps(ctx, [{"click": SWITCH}], params):
        yield action
    modal = await ctx.query(DomQuery(selector="#confirm-modal:not([hidden])", prop="count"))
    if not modal.ok:
        raise OracleError(f"cannot read the page: {modal.message}")
    if modal.value:
        async for action in run_steps(ctx, [{"click": "#confirm-yes"}], params):
            yield action
    async for action in run_steps(ctx, [{"wait_for": f'{SWITCH}[aria-checked="{params["target"]}"]'}], params):
        yield action


async def toggle_public_links(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """The near miss: flips the switch next to it."""
    async for action in run_steps(ctx, [{"click": 'button[role=switch][data-key="allow_public_links"]'},
                                        {"wait_for": 'button[data-key="allow_public_links"]:not([aria-busy])'}], params):
        yield action
