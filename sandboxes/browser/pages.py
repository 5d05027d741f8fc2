"""`Pages`: which page of the sandbox's browser context the agent sees, and its settling.

The agent sees one page at a time. A popup the page opens becomes the page; closing it
hands the agent the page before it, and closing the last one gives it a blank page, as
a browser window would. Native dialogs (alert, confirm, prompt) block a page and cannot
be clicked on a headless screen: they are accepted and reported as `dialog` events.
Navigations of the page's main frame are reported as `navigated` events, and the origins
they reached are kept so that a reset or restore clears their storage.

Playwright keeps an object per request a context made (its Request and Response, in the
driver and in this process) until the context closes: a sandbox that lives for days of
episodes would grow without bound. So the context is recycled: once it has made
`recycle_after_requests` requests, the next reset (which loads its page afresh, with
cookies and storage cleared) runs in a new context of the same browser, and the old one
is closed. The agent sees the same page: a reset's load of a cleared context.
"""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext, Dialog, Frame, Page, Request
from playwright.async_api import Error as PlaywrightError

from cua.errors import SandboxCrashed, Timeout
from cua.observation import SettleInfo
from cua.sandboxes.browser.cdp import Cdp
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.history import NavHistory
from cua.sandboxes.browser.settle import PageActivity

__all__ = ["Pages", "RECYCLE_AFTER_REQUESTS", "origin_of"]

log = logging.getLogger(__name__)

#: Requests a context makes before the next reset moves the sandbox to a fresh one. Each
#: costs about 10 KiB in this process (its Request and Response) and more in Playwright's
#: driver until its context closes; a recycle costs a context and a page (tens of
#: milliseconds), once per this many requests. Small, so that memory reaches its plateau
#: within minutes (a soak's first window), not hours.
RECYCLE_AFTER_REQUESTS = 200


class Pages:
    """The page the agent sees in one browser context, and the sandbox's CDP session on it."""

    def __init__(self, guard: Guard, *, settle_timeout_ms: int, settle_quiet_ms: int) -> None:
        self._guard = guard
        self.settle_timeout_ms = settle_timeout_ms
        self.settle_quiet_ms = settle_quiet_ms
        self.context: BrowserContext | None = None
        self.current: Page | None = None
        self.cdp: Cdp | None = None
        self.activity: PageActivity | None = None
        #: http(s) origins the pages navigated to (what a reset must clear storage of).
        self.origins: set[str] = set()
        #: The episode's main-frame navigations (history.py).
        self.history = NavHistory()
        #: Main-frame navigations committed so far: a page read that spans one read a document
        #: that was being replaced (queries.py reads the new one).
        self.commits = 0
        self._adopting: asyncio.Future[None] | None = None
        self._new_page = asyncio.Event()
        self._replacing = False
        #: Requests the current context has made (what Playwright keeps until it closes).
        self.requests = 0
        self.recycle_after_requests = RECYCLE_AFTER_REQUESTS
        #: Live screencasts of the agent's page (stream.py): they hold the page, so the
        #: context is not recycled under them.
        self.watchers = 0
        #: The page activity of the context before the last recycle, held so that its id,
        #: which the observer's accessibility-tree cache keys on, is not reused meanwhile.
        self._retired: PageActivity | None = None

    async def open(self) -> None:
        """Open the first page of `context` and watch the context for the pages it opens."""
        context = self.context
        assert context is not None
        context.on("page", self._on_new_page)
        context.on("request", self._on_request)
        page = await self._guard.call(context.new_page(), "new_page")
        if self.current is not page:  # the "page" event may already have adopted it
            await self._adopt(page)

    def worn(self) -> bool:
        """Whether the context has made enough requests to be recycled at the next reset
        (and no screencast holds its page)."""
        return self.requests >= self.recycle_after_requests and not self.watchers and not self.switching

    async def recycle(self, context: BrowserContext) -> None:
        """Move the agent to the first page of `context`, a fresh context of the same browser
        with the same options, and close the old one (the caller then loads the page).
        Cookies, storage and history stay with the old context: a reset clears them anyway."""
        old, activity = self.context, self.activity
        if old is not None:
            old.remove_listener("page", self._on_new_page)
            old.remove_listener("request", self._on_request)
        if activity is not None:
            activity.inflight.clear()
        self._retired = activity
        self.context, self.current, self.cdp, self.activity = context, None, None, None
        self.origins = set()
        self.requests = 0
        try:
            await self.open()
        finally:
            if old is not None:
                try:
                    await self._guard.call(old.close(), "close the recycled context")
                except (PlaywrightError, SandboxCrashed, Timeout) as exc:
                    log.warning("sandbox %s could not close its recycled context: %s", self._guard.sandbox_id, exc)

    def _on_request(self, _request: Request) -> None:
        self.requests += 1

    @property
    def page(self) -> Page:
        self._guard.check_alive()
        assert self.current is not None
        return self.current

    @property
    def switching(self) -> bool:
        """Whether the agent's page is being replaced (a popup opened, or the page closed)."""
        return self._adopting is not None

    async def switch(self) -> bool:
        """Finish a pending switch of page, if any (True when there was one)."""
        if self._adopting is None:
            return False
        adopting, self._adopting = self._adopting, None
        self._new_page.clear()
        await self._guard.call(adopting, "switch page")
        return True

    async def settle(self) -> SettleInfo:
        """Wait until the page is settled (settle.py). When it opened a window meanwhile, wait
        (event-driven, bounded) for that page, switch the agent to it and settle it instead."""
        activity = self.activity
        assert activity is not None
        info = await self._guard.call(
            activity.settle(timeout_ms=self.settle_timeout_ms, quiet_ms=self.settle_quiet_ms),
            "settle", timeout=self.settle_timeout_ms / 1000 + self._guard.call_timeout_s)
        if not activity.popup_requested:
            return info
        activity.popup_requested = False
        try:
            await asyncio.wait_for(self._new_page.wait(), self.settle_timeout_ms / 1000)
        except asyncio.TimeoutError:
            return info.model_copy(update={"reason": info.reason + "+popup_not_opened"})
        self._new_page.clear()
        await self.switch()
        popup = await self.settle()
        return popup.model_copy(update={"waited_ms": round(info.waited_ms + popup.waited_ms, 2),
                                        "reason": "popup+" + popup.reason})

    async def _adopt(self, page: Page) -> None:
        """Make `page` the one the agent sees (the first page, or a popup it opened)."""
        assert self.context is not None
        activity = PageActivity(page)
        activity.attach()
        page.on("framenavigated", self._on_navigated)
        page.on("request", self._on_navigation_request)
        page.on("crash", self._guard.on_crash)
        page.on("dialog", self._on_dialog)
        page.on("close", self._on_page_close)
        cdp = Cdp(await self._guard.call(self.context.new_cdp_session(page), "cdp session"))
        # Scripts added through this session (storage seeding) only run while its Page domain is on.
        await self._guard.call(cdp.send("Page.enable"), "page domain")
        self.current, self.cdp, self.activity = page, cdp, activity

    def _on_new_page(self, page: Page) -> None:
        if self.current is None or page is self.current or self._replacing:
            return
        self._adopting = asyncio.ensure_future(self._adopt_popup(page))
        self._new_page.set()

    async def _adopt_popup(self, page: Page) -> None:
        try:
            await self._adopt(page)
        except (PlaywrightError, SandboxCrashed, Timeout) as exc:
            log.warning("could not switch sandbox %s to its new page: %s", self._guard.sandbox_id, exc)

    def _on_page_close(self, page: Page) -> None:
        if page is not self.current or self.context is None or not self._guard.alive:
            return
        others = [p for p in self.context.pages if not p.is_closed()]
        self._adopting = asyncio.ensure_future(self._adopt_popup(others[-1]) if others else self._replace_page())

    async def _replace_page(self) -> None:
        """The page closed and no other is open: give the agent a blank one. (When the whole
        browser went away, this fails and the death is reported by the disconnect.)"""
        assert self.context is not None
        self._replacing = True
        try:
            page = await self._guard.call(self.context.new_page(), "new_page")
            await self._adopt(page)
        except (PlaywrightError, SandboxCrashed, Timeout) as exc:
            log.info("sandbox %s could not open a page in place of the closed one: %s", self._guard.sandbox_id, exc)
        finally:
            self._replacing = False

    def _on_navigated(self, frame: Frame) -> None:
        if self.current is None or frame is not self.current.main_frame:
            return
        url = frame.url
        self.commits += 1
        self.history.on_commit(url)
        origin = origin_of(url)
        if origin:
            self.origins.add(origin)
        self._guard.emit("navigated", {"url": url})

    def _on_navigation_request(self, request: Request) -> None:
        if self.current is not None and request.is_navigation_request() and \
                request.frame is self.current.main_frame:
            self.history.on_request(request)

    def _on_dialog(self, dialog: Dialog) -> None:
        self._guard.emit("dialog", {"type": dialog.type, "message": dialog.message})
        asyncio.ensure_future(_accept(dialog))


async def _accept(dialog: Dialog) -> None:
    try:
        await dialog.accept()
    except PlaywrightError as exc:
        log.debug("dialog already handled: %s", exc)


def origin_of(url: str) -> str | None:
    """`scheme://host:port` of an http(s) URL; None for other schemes (about:, data:)."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"
    return None
