"""Loads with prepared web state (sandboxes/browser/navigation.py), and the navigation
policy of the task's own origins (origins.py), in real Chromium.

The storage a reset or restore seeds must be there before the page's first script runs,
and only for that load; clearing must reach every origin the pages visited; a failed
load is the client's fault only for a start URL it chose outside the sandbox's services.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from _browser_rig import Rig, browser_kept, open_rig, serve  # tests/'s own helpers, as pytest puts tests/ on sys.path

from cua.actions import Click, Goto
from cua.errors import ActionFailed, BadRequest, InfraError
from cua.sandboxes.browser.input import Input
from cua.sandboxes.browser.origins import FOREIGN_PAGE, OwnOrigins
from cua.sandboxes.browser.queries import Queries
from cua.state import A11yQuery, DomQuery, LocalStorageQuery, TitleQuery, UrlQuery

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


# --- the task's own origins (origins.py): where the agent may go, which pages the reads trust

OWN = """<title>own</title><h1>Groceries</h1><a id="out" href="__FOREIGN__">out</a>"""
#: A foreign page that looks exactly like the task's (a copy of its heading and title).
FOREIGN = """<title>own</title><h1>Groceries</h1>"""


def _own_parts(rig: Rig, *, enforced: bool = True) -> tuple[Input, Queries, OwnOrigins]:
    """The rig's input and queries as `BrowserSandbox` wires them, bound to its own origins."""
    own = OwnOrigins(rig.ports, enforced=enforced)
    return (Input(rig.guard, rig.pages, rig.elements, rig.screen, navigation_timeout_ms=10_000, own=own),
            Queries(rig.guard, rig.pages, rig.controls, own), own)


PAGE_READS = [UrlQuery(), TitleQuery(), DomQuery(selector="h1"), LocalStorageQuery(), A11yQuery()]


async def test_the_agent_goes_only_to_the_task_s_own_origins() -> None:
    """No page the agent makes (data:, javascript:, blob:, file:) and no foreign origin:
    each goto is refused and the task's page stays; its own pages and about:blank are fine."""
    with serve({"/": FOREIGN}) as foreign, serve({"/": OWN.replace("__FOREIGN__", foreign.url("/"))}) as site:
        async with open_rig(site) as rig:
            agent, _, _ = _own_parts(rig)
            await rig.navigator.goto(site.url("/"))
            forged = "<script>document.title = 'forged'</script><h1>Groceries</h1>"
            for url in ["data:text/html," + forged, "javascript:document.title='forged'", "javascript:void 0",
                        f"blob:{site.url('/')[:-1]}/6e0b6b43-0000-4000-8000-000000000000", "file:///etc/hostname",
                        foreign.url("/"), f"http://localhost:{foreign.port}/", "chrome://version", "view-source:"
                        + site.url("/"), "DATA:text/html,x", " data:text/html,x"]:
                error, _ = await agent.act(Goto(url=url), rig.screen)
                assert error is not None and error.reason == "bad_url", (url, error)
                assert rig.pages.page.url == site.url("/") and await rig.pages.page.title() == "own", url
            for url in [f"http://localhost:{site.port}/", "about:blank", site.url("/")]:
                error, _ = await agent.act(Goto(url=url), rig.screen)
                assert error is None, (url, error)


async def test_page_reads_answer_only_on_the_task_s_own_pages() -> None:
    """A foreign page the agent reached some other way (a link the page shows), however
    like the task's it looks, is never read as the task's: every page read fails."""
    with serve({"/": FOREIGN}) as foreign, serve({"/": OWN.replace("__FOREIGN__", foreign.url("/"))}) as site:
        async with open_rig(site) as rig:
            agent, queries, _ = _own_parts(rig)
            await rig.navigator.goto(site.url("/"))
            own = await queries.answer(PAGE_READS)
            assert all(r.ok for r in own) and own[2].value == "Groceries"
            error, _ = await agent.act(Click(x=1, y=1), rig.screen)  # misses the link: nothing happens
            box = await rig.pages.page.locator("#out").bounding_box()
            assert box is not None and error is None
            await agent.act(Click(x=box["x"] + 2, y=box["y"] + 2), rig.screen)
            await rig.pages.settle()
            assert rig.pages.page.url == foreign.url("/")
            read = await queries.answer(PAGE_READS)
            assert [r.error for r in read] == [FOREIGN_PAGE] * len(PAGE_READS), read
            assert all(r.value is None for r in read)


async def test_a_sandbox_with_no_own_origin_or_open_navigation_keeps_every_page() -> None:
    with serve({"/": FOREIGN}) as foreign:
        async with open_rig(None) as rig:  # no service, no start origin: nothing to bind to
            agent, queries, own = _own_parts(rig)
            assert not own.active
            assert (await agent.act(Goto(url="data:text/html,<h1>mine</h1>"), rig.screen))[0] is None
            (h1,) = await queries.answer([DomQuery(selector="h1")])
            assert h1.value == "mine"
            error, _ = await agent.act(Goto(url="javascript:void 0"), rig.screen)  # never a scheme of any page
            assert error is not None and error.reason == "bad_url"
        async with open_rig(foreign) as rig:
            agent, queries, own = _own_parts(rig, enforced=False)  # navigation: open
            assert (await agent.act(Goto(url="data:text/html,<h1>mine</h1>"), rig.screen))[0] is None
            assert (await queries.answer([DomQuery(selector="h1")]))[0].value == "mine"
            own.enforced = True  # the same page, the policy on: the read is refused
            assert (await queries.answer([DomQuery(selector="h1")]))[0].error == FOREIGN_PAGE


async def test_the_start_url_s_origin_is_the_task_s_own() -> None:
    with serve({"/": FOREIGN}) as start, serve({"/": FOREIGN}) as other:
        async with open_rig(None) as rig:
            agent, queries, own = _own_parts(rig)
            own.started_at(start.url("/"))
            await rig.navigator.goto(start.url("/"))
            assert (await queries.answer([DomQuery(selector="h1")]))[0].value == "Groceries"
            assert (await agent.act(Goto(url=other.url("/")), rig.screen))[0] is not None
            own.started_at("about:blank")  # a later episode started on no origin: open again
            assert (await agent.act(Goto(url=other.url("/")), rig.screen))[0] is None


async def test_a_client_s_own_start_page_and_the_page_s_own_frames_are_the_task_s() -> None:
    """A start page the client chose without an origin (data:) is the task's; a frame is
    read where it shares its page's own origin (srcdoc), not where it is foreign."""
    with serve({"/": FOREIGN}) as foreign:
        framed = (f"<h1>framed</h1><iframe id=mine srcdoc='<p>inside</p>'></iframe>"
                  f"<iframe id=theirs src='{foreign.url('/')}'></iframe>")
        with serve({"/": framed}) as site:
            async with open_rig(site) as rig:
                agent, queries, own = _own_parts(rig)
                start = "data:text/html,<h1>client</h1>"
                own.started_at(start)
                await rig.navigator.goto(start)
                assert (await queries.answer([DomQuery(selector="h1")]))[0].value == "client"
                error, _ = await agent.act(Goto(url="data:text/html,<h1>agent</h1>"), rig.screen)
                assert error is not None and error.reason == "bad_url"
                own.started_at(site.url("/"))
                await rig.navigator.goto(site.url("/"))
                await rig.pages.page.frame_locator("#theirs").locator("h1").wait_for()
                mine, theirs = await queries.answer([DomQuery(selector="p", frame="#mine"),
                                                     DomQuery(selector="h1", frame="#theirs")])
                assert mine.value == "inside"
                assert theirs.error == FOREIGN_PAGE and theirs.value is None
