"""Loads with prepared web state (sandboxes/browser/navigation.py), in real Chromium.

The storage a reset or restore seeds must be there before the page's first script runs,
and only for that load; clearing must reach every origin the pages visited; a failed
load is the client's fault only for a start URL it chose outside the sandbox's services.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from _browser_rig import browser_kept, open_rig, serve  # tests/'s own helpers, as pytest puts tests/ on sys.path

from cua.errors import ActionFailed, BadRequest, InfraError

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

#: Reads its storage while the document is parsed: what a page's own first script sees.
READS = """<title>-</title><script>
document.title = (localStorage.getItem("k") || "none") + " " + (sessionStorage.getItem("s") || "none");
</script>"""
WRITES = """<title>writes</title><script>
localStorage.setItem("k", "mine"); document.cookie = "c=1; path=/";
</script>"""
RESTARTS = """<title>first</title><script>
window.__cuaRestart = (url) => { document.title = "restarted " + new URL(url).search; return true; };
</script>"""


@pytest_asyncio.fixture(scope="module", loop_scope="module", autouse=True)
async def _browser() -> AsyncIterator[None]:
    async with browser_kept():
        yield


async def test_seeded_storage_is_there_for_the_first_script_and_only_for_that_load() -> None:
    with serve({"/": READS, "/writes": WRITES}) as site:
        async with open_rig(site) as rig:
            origin = f"http://127.0.0.1:{site.port}"
            seeded = await rig.navigator.prepare({origin: {"local": {"k": "v"}, "session": {"s": "w"}}})
            await rig.navigator.goto(site.url("/"), seeded=seeded)
            assert await rig.pages.page.title() == "v w"
            await rig.navigator.goto(site.url("/writes"))
            await rig.navigator.goto(site.url("/"))  # the seeding script was withdrawn after its load
            assert await rig.pages.page.title() == "mine w"


async def test_a_failed_preparation_withdraws_the_seeding_script() -> None:
    with serve({"/": READS}) as site:
        async with open_rig(site) as rig:
            origin = f"http://127.0.0.1:{site.port}"

            async def app_reset_fails() -> None:
                raise InfraError("the app did not reset")

            with pytest.raises(InfraError, match="did not reset"):
                await rig.navigator.prepare({origin: {"local": {"k": "stale"}, "session": {}}}, app_reset_fails())
            await rig.navigator.goto(site.url("/"))
            assert await rig.pages.page.title() == "none none"  # no later page is touched


async def test_clearing_reaches_every_origin_the_pages_visited() -> None:
    with serve({"/": READS, "/writes": WRITES}) as a, serve({"/": READS, "/writes": WRITES}) as b:
        async with open_rig(a) as rig:
            for site in (a, b):
                await rig.navigator.goto(site.url("/writes"))
            assert await rig.pages.context.cookies() != []  # type: ignore[union-attr]  # (cookies ignore ports)
            await rig.navigator.clear_state()  # from b's page: a's origin is cleared too
            assert await rig.pages.context.cookies() == []  # type: ignore[union-attr]
            for site in (a, b):
                await rig.navigator.goto(site.url("/"))
                assert await rig.pages.page.title() == "none none", site.url()


async def test_whose_fault_a_failed_load_is() -> None:
    with serve({"/": READS}) as site:
        async with open_rig(site) as rig:
            refused = "http://127.0.0.1:9/"  # nothing listens on the discard port
            with pytest.raises(BadRequest, match="start_url"):
                await rig.navigator.goto(refused, chosen_by_client=True)
            with pytest.raises(InfraError):  # a page the sandbox itself loads (a restore's)
                await rig.navigator.goto(refused)
            own = site.url("/")
            assert rig.navigator.serves(own) and rig.navigator.serves(f"http://localhost:{site.port}")
            assert not rig.navigator.serves(refused)
            site.close()  # the sandbox's own service is down: infra's fault, even for the client's URL
            with pytest.raises(InfraError) as caught:
                await rig.navigator.goto(own, chosen_by_client=True)
            assert not isinstance(caught.value, BadRequest)
            with pytest.raises(ActionFailed) as bad:
                await rig.navigator.goto("file:///etc/passwd")
            assert bad.value.reason == "bad_url"


async def test_an_in_page_restart_resets_without_a_load_where_the_page_offers_one() -> None:
    with serve({"/": RESTARTS, "/plain": READS}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            assert rig.pages.activity is not None
            loads = rig.pages.activity.loads
            assert rig.navigator.same_page(site.url("/?seed=2"))
            assert not rig.navigator.same_page(site.url("/plain"))
            assert not rig.navigator.same_page("http://127.0.0.1:9/")  # not a page of the sandbox's services
            assert await rig.navigator.restart_in_page(site.url("/?seed=2"))
            assert await rig.pages.page.title() == "restarted ?seed=2"
            assert rig.pages.activity.loads == loads  # no page load
            await rig.navigator.goto(site.url("/plain"))
            assert not await rig.navigator.restart_in_page(site.url("/plain"))  # offers none: the caller loads


async def test_a_load_or_restart_by_the_sandbox_leaves_no_page_behind_it() -> None:
    """An episode starts with no history: Back must not reach what the tab showed before."""
    with serve({"/": RESTARTS, "/plain": READS}) as site:
        async with open_rig(site) as rig:
            page = rig.pages.page
            await rig.navigator.goto(site.url("/plain"))
            await rig.navigator.goto(site.url("/"))
            assert await page.go_back() is None and page.url == site.url("/")
            await page.evaluate("history.pushState({}, '', '/pushed')")  # the agent's own entry
            assert await rig.navigator.restart_in_page(site.url("/?seed=3"))
            assert await page.go_back() is None and page.url.endswith("/pushed")
