"""Playwright's failures, told apart by type.

A call on a page, context or browser that has closed raises Playwright's `TargetClosedError`
(not re-exported by its public API, hence the private import, kept to this one place). The
sandbox tells an infrastructure fault (the browser went away) from an agent's or a page's
(the page refused a click, a selector matched nothing) by that type, never by message text.
"""

from __future__ import annotations

from playwright._impl._errors import TargetClosedError

__all__ = ["TargetClosedError", "target_closed"]


def target_closed(exc: BaseException) -> bool:
    """Whether `exc` says the page, its context or the browser has closed."""
    return isinstance(exc, TargetClosedError)
