"""`Navigator`: loading a page with the web state it must start from.

A reset or a restore loads a page whose storage must already be what the episode starts
from when the page's first script runs: a one-shot script, registered through CDP before
the load and withdrawn after it, replaces the tab's web storage. Cookies and the storage
of every origin the pages reached are cleared beforehand. A page that offers an in-page
restart (`window.__cuaRestart`, as MiniWoB's tasks do) is reset without a load.

Either way the tab's history is cleared once its page is loaded or restarted: an episode
starts with no page behind it, so Back cannot take the agent to the page the previous
episode (or, after a restore, the sandbox before it) left open.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError

from cua.errors import BadRequest, InfraError
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.input import check_url
from cua.sandboxes.browser.pages import Pages, origin_of

__all__ = ["Navigator", "SEED_STORAGE_JS", "Storage"]

log = logging.getLogger(__name__)

#: origin -> {"local": {key: value}, "session": {key: value}}
Storage = dict[str, dict[str, dict[str, str]]]

SEED_STORAGE_JS = r"""
(() => {
  if (window !== window.top) return;
  const saved = (__DATA__)[location.origin] || { local: {}, session: {} };
  try {
    window.localStorage.clear();
    for (const [k, v] of Object.entries(saved.local)) window.localStorage.setItem(k, v);
    window.sessionStorage.clear();
    for (const [k, v] of Object.entries(saved.session)) window.sessionStorage.setItem(k, v);
  } catch (e) { /* opaque origins (data:, about:) have no web storage */ }
})();
"""

#: A page's in-page restart, where it offers one. sessionStorage lives with the tab, so it
#: is cleared here (a load clears it with the storage-seeding script).
_RESTART_IN_PAGE_JS = """(url) => {
  const restart = window.__cuaRestart;
  if (typeof restart !== "function") return false;
  try { window.sessionStorage.clear(); } catch (e) { /* no storage for this origin */ }
  return restart(url) === true;
}"""
_STORAGE_TYPES = "local_storage,session_storage,indexeddb,websql,cache_storage,service_workers,file_systems"


class Navigator:
    """Loads of the agent's page that the sandbox makes (start page, reset, restore)."""

    def __init__(self, guard: Guard, pages: Pages, ports: dict[str, int], *, navigation_timeout_ms: int) -> None:
        self._guard = guard
        self._pages = pages
        #: service name -> port its pages are served on (filled in when the services start).
        self._ports = ports
        self.navigation_timeout_ms = navigation_timeout_ms

    def serves(self, url: str) -> bool:
        """Whether `url` is a page of one of this sandbox's services."""
        return any(url.startswith((f"http://127.0.0.1:{port}/", f"http://localhost:{port}/"))
                   or url in (f"http://127.0.0.1:{port}", f"http://localhost:{port}") for port in self._ports.values())

    async def goto(self, url: str, *, seeded: str | None = None,
                   then: Sequence[Callable[[], Awaitable[Any]]] = (), chosen_by_client: bool = False) -> None:
        """Load `url` and wait for its load event; then drop the storage-seeding script
        `seeded` while running `then` (pointer, view) alongside. A start URL the client
        chose outside the sandbox's own services that does not load is its mistake
        (`bad_request`); one of the sandbox's own pages that does not load is infra's."""
        check_url(url)
        page = self._pages.page
        timeout_ms = self.navigation_timeout_ms
        try:
            await self._guard.call(page.goto(url, wait_until="load", timeout=timeout_ms), f"goto {url}",
                                   timeout=timeout_ms / 1000 + 5)
        except PlaywrightError as exc:
            if seeded is not None:
                await self.unseed(seeded)
            why = f"sandbox {self._guard.sandbox_id} could not load {url}: {str(exc).splitlines()[0]}"
            if chosen_by_client and not self.serves(url):
                raise BadRequest(f"start_url: {why}", details={"field": "start_url", "url": url}) from exc
            raise InfraError(why) from exc
        await asyncio.gather(*([self.unseed(seeded)] if seeded is not None else []), self.forget_history(),
                             *(step() for step in then))

    async def forget_history(self) -> None:
        """Drop the tab's back and forward entries: the page now shown is its only one."""
        assert self._pages.cdp is not None
        await self._guard.call(self._pages.cdp.send("Page.resetNavigationHistory"), "reset history")

    async def prepare(self, storage: Storage, *work: Awaitable[Any]) -> str:
        """Run `work` (app and cookie state) alongside seeding `storage` for the next load;
        the seeding script's id, for `goto`. If anything fails, the script is withdrawn so
        no later page is touched."""
        *results, seeded = await asyncio.gather(*work, self._seed_storage(storage), return_exceptions=True)
        failures = [r for r in (*results, seeded) if isinstance(r, BaseException)]
        if failures:
            if isinstance(seeded, str):
                await self.unseed(seeded)
            raise failures[0]
        return str(seeded)

    async def unseed(self, seeded: str) -> None:
        if self._guard.alive:
            assert self._pages.cdp is not None
            await self._guard.call(self._pages.cdp.send("Page.removeScriptToEvaluateOnNewDocument",
                                                        {"identifier": seeded}), "unseed storage")

    async def _seed_storage(self, storage: Storage) -> str:
        """Register a one-shot script that replaces the tab's web storage before any script
        of the next document runs; `goto` removes it."""
        assert self._pages.cdp is not None
        source = SEED_STORAGE_JS.replace("__DATA__", json.dumps(storage))
        added = await self._guard.call(
            self._pages.cdp.send("Page.addScriptToEvaluateOnNewDocument", {"source": source}), "seed storage")
        return str(added["identifier"])

    async def clear_state(self) -> None:
        """Clear cookies, and the storage of every origin the pages reached. (sessionStorage
        lives with the tab, not the origin: the seeding script and the restart clear it.)"""
        pages = self._pages
        assert pages.context is not None and pages.cdp is not None
        here = origin_of(pages.page.url)
        origins = pages.origins | ({here} if here else set())
        cdp = pages.cdp
        await asyncio.gather(self._guard.call(pages.context.clear_cookies(), "clear cookies"),
                             *(self._guard.call(cdp.send("Storage.clearDataForOrigin",
                                                         {"origin": o, "storageTypes": _STORAGE_TYPES}), "clear storage")
                               for o in origins))

    def same_page(self, url: str) -> bool:
        """Whether the page shows `url`'s document (origin and path), served by a service of
        this sandbox: only then may the page restart its task in place."""
        if self._pages.current is None or self._pages.switching or not self.serves(url):
            return False
        here, there = urlsplit(self._pages.current.url), urlsplit(url)
        return (here.scheme, here.netloc, here.path) == (there.scheme, there.netloc, there.path)

    async def restart_in_page(self, url: str, *work: Awaitable[Any], alongside: Sequence[Awaitable[Any]] = ()) -> bool:
        """Reset by the page's own in-page restart, where it offers one (`window.__cuaRestart`,
        as MiniWoB's tasks start a new episode in the loaded page: tasks/miniwob/shim.js).

        `work` (the services' resets) runs alongside clearing cookies and storage, then the
        page starts its task afresh from `url` (its seed in the query) without a reload: a
        script call instead of a page load. `alongside` (the pointer's move home) runs from
        the start to the end of all that, in no order with it: a pointer move waits for the
        page's next frame (about 16 ms), which it now spends beside the restart's work, not
        ahead of it. False when the page offers none or the restart failed; the caller then
        resets everything again and loads `url` (so nothing a failed restart stored survives)."""

        async def restart() -> bool:
            await asyncio.gather(*work, self.clear_state())
            try:
                done = await self._guard.call(self._pages.page.evaluate(_RESTART_IN_PAGE_JS, url), "restart in page")
            except PlaywrightError as exc:
                log.warning("in-page restart of %s failed (%s); loading the page", self._guard.sandbox_id,
                            str(exc).splitlines()[0])
                return False
            if done is not True:
                return False
            await self.forget_history()
            return True

        restarted, *_ = await asyncio.gather(restart(), *alongside)
        return bool(restarted)
