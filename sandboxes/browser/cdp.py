"""`Cdp`: a page's Chrome DevTools Protocol session, as the browser sandbox uses it.

Playwright's public `CDPSession.send` walks every result it returns, key by key, looking
for Playwright objects to wrap. CDP results never hold any, and the walk is pure Python:
for the accessibility tree of a 40-row page (about 330 KB of JSON) it took about 8 ms of
CPU, half of what Chromium spent producing the tree, on every changed page. `Cdp` sends
through the implementation object beneath the public one, which returns the decoded JSON
as it came.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import CDPSession

__all__ = ["Cdp"]


class Cdp:
    """Send CDP commands and subscribe to CDP events on one Playwright `CDPSession`."""

    def __init__(self, session: CDPSession) -> None:
        self.session = session
        self._send = _unwrapped_send(session)

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = await self._send(method, params)
        return result

    def on(self, event: str, handler: Callable[[dict[str, Any]], Any]) -> None:
        self.session.on(event, handler)

    async def detach(self) -> None:
        await self.session.detach()


def _unwrapped_send(session: CDPSession) -> Callable[[str, dict[str, Any] | None], Awaitable[Any]]:
    """The implementation's `send`, called with the arguments this Playwright version takes
    (newer ones added a per-call timeout, where None means none); the public method when the
    implementation is not where Playwright keeps it."""
    try:
        send: Callable[..., Awaitable[Any]] = session._impl_obj.send
    except AttributeError:
        return session.send
    if "timeout" in inspect.signature(send).parameters:
        return lambda method, params: send(method, params, None)
    return lambda method, params: send(method, params)
