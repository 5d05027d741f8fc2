"""The episode's navigation history: every main-frame URL committed since reset, in order.

A judge that reads only the end (the URL, the page) cannot see a page the agent visited
and left: a forbidden page opened, then navigated away from. The sandbox records each
commit of the agent's page's main frame (`framenavigated`), with the server redirects
that led to it (navigation requests chained by `redirected_from`) and how it was reached
where the sandbox knows: `reset` (the episode's start page), `goto`, `back`, `forward`
(the agent's actions), else `page` (a link, a form, a script, a same-document change).
The page cannot write here: only the browser's own events do. A snapshot keeps the
history and a restore or fork puts it back (`snapshot.py`).
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Request

__all__ = ["NavHistory"]

#: An episode that navigates more than this keeps its first entries and counts the rest.
MAX_ENTRIES = 5_000


class NavHistory:
    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.dropped = 0
        self._redirects: list[str] = []
        self._how: str | None = None

    def start(self, url: str) -> None:
        """A new episode begins on `url` (after reset's load)."""
        self.entries, self.dropped, self._redirects, self._how = [], 0, [], None
        self.entries.append({"url": url, "how": "reset", "redirects": []})

    def load(self, entries: list[dict[str, Any]], dropped: int = 0) -> None:
        """Put back a snapshot's history (a restore's own load is not the agent's)."""
        self.entries, self.dropped, self._redirects, self._how = [dict(e) for e in entries], dropped, [], None

    def export(self) -> tuple[list[dict[str, Any]], int]:
        return [dict(e) for e in self.entries], self.dropped

    def expect(self, how: str | None) -> None:
        """The sandbox is about to navigate for the agent (`goto`, `back`, `forward`);
        None once that action is over."""
        self._how = how

    def on_request(self, request: Request) -> None:
        """A main-frame navigation request (the caller filters): a new chain, or one more
        hop of a redirect chain."""
        previous = request.redirected_from
        if previous is None:
            self._redirects = []
        else:
            self._redirects.append(previous.url)

    def on_commit(self, url: str) -> None:
        redirects, self._redirects = self._redirects, []
        if len(self.entries) >= MAX_ENTRIES:
            self.dropped += 1
            return
        self.entries.append({"url": url, "how": self._how or "page", "redirects": redirects})

    def value(self) -> dict[str, Any]:
        """What a `navigation` query answers."""
        return {"entries": [dict(e) for e in self.entries], "dropped": self.dropped}
