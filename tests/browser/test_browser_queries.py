"""State queries of the browser sandbox (sandboxes/browser/queries.py), in real Chromium.

Each query gets its answer in the order asked; a query the sandbox cannot answer, a
malformed one, or one about a service it does not have fails on its own, and the rest
are still answered.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from _browser_rig import browser_kept, open_rig, serve  # tests/'s own helpers, as pytest puts tests/ on sys.path

from cua.errors import SandboxCrashed
from cua.sandboxes.browser.queries import QUERY_KINDS
from cua.state import (
    A11yQuery,
    AppStateQuery,
    CookiesQuery,
    DomQuery,
    FileQuery,
    LocalStorageQuery,
    SqlQuery,
    TitleQuery,
    UrlQuery,
)

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

PAGE = """<title>state</title><ul><li class=item>one</li><li class=item>two</li></ul>
<label>Name <input id=name value=Ada></label>
<script>localStorage.setItem("k", "v"); document.cookie = "flavour=plain; path=/";</script>"""


@pytest_asyncio.fixture(scope="module", loop_scope="module", autouse=True)
async def _browser() -> AsyncIterator[None]:
    async with browser_kept():
        yield


async def test_the_page_answers_its_queries_side_by_side_in_order() -> None:
    with serve({"/": PAGE}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            url, title, items, count, value, storage, one, cookies, tree = await rig.queries.answer([
                UrlQuery(), TitleQuery(), DomQuery(selector=".item", prop="text", all=True),
                DomQuery(selector=".item", prop="count"), {"kind": "dom", "selector": "#name", "prop": "value"},
                LocalStorageQuery(), LocalStorageQuery(key="k"), CookiesQuery(name="flavour"), A11yQuery()])
            assert all(r.ok for r in (url, title, items, count, value, storage, one, cookies, tree))
            assert (url.value, title.value) == (site.url("/"), "state")
            assert (items.value, count.value, value.value) == (["one", "two"], 2, "Ada")
            assert (storage.value, one.value) == ({"k": "v"}, "v")
            assert [c["value"] for c in cookies.value] == ["plain"]
            assert tree.value["nodes"] > 0 and not tree.value["truncated"]


async def test_failed_queries_fail_alone_and_say_why() -> None:
    with serve({"/": PAGE}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            no_app, no_sql, foreign, malformed, bad_selector, title = await rig.queries.answer([
                AppStateQuery(service="app"), SqlQuery(service="db", query="select 1"), FileQuery(path="/etc/hostname"),
                {"kind": "dom"}, DomQuery(selector="li[", prop="text"), TitleQuery()])
            assert (no_app.ok, no_app.error, no_sql.error) == (False, "not_found", "not_found")
            assert foreign.error == "unsupported" and foreign.message is not None
            assert all(kind in foreign.message for kind in QUERY_KINDS)
            assert malformed.error == "failed" and "malformed" in (malformed.message or "")
            assert bad_selector.error == "failed" and bad_selector.message
            assert title.ok and title.value == "state"


async def test_a_dead_sandbox_raises_instead_of_answering() -> None:
    with serve({"/": PAGE}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            rig.guard.die("browser process exited")
            with pytest.raises(SandboxCrashed):
                await rig.queries.answer([TitleQuery()])


SHADOWED = """<title>shadow</title><p class=item>outside</p><div id=host></div>
<script>document.getElementById("host").attachShadow({mode: "open"}).innerHTML = "<p class=item>inside</p>";</script>"""


async def test_dom_queries_find_what_playwright_selectors_find() -> None:
    """CSS, Playwright's own CSS extensions, XPath, and CSS through an open shadow root:
    the page's DOM API answers where it finds the same elements, a locator otherwise."""
    with serve({"/": PAGE, "/shadow": SHADOWED}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            css, extended, xpath, xpath_text, nothing = await rig.queries.answer([
                DomQuery(selector="li.item", prop="text", all=True),
                DomQuery(selector="li:has-text('two')", prop="text"),
                DomQuery(selector="//li[@class='item']", selector_type="xpath", prop="text", all=True),
                DomQuery(selector="//li/text()", selector_type="xpath", prop="count"),  # text nodes are not elements
                DomQuery(selector="#nope", prop="text")])
            assert (css.value, extended.value, xpath.value) == (["one", "two"], "two", ["one", "two"])
            assert (xpath_text.value, nothing.ok, nothing.value) == (0, True, None)
            await rig.navigator.goto(site.url("/shadow"))
            pierced, count, by_xpath = await rig.queries.answer([
                DomQuery(selector=".item", prop="text", all=True), DomQuery(selector="p", prop="count"),
                DomQuery(selector="//p", selector_type="xpath", prop="count")])  # XPath does not pierce
            assert (pierced.value, count.value, by_xpath.value) == (["outside", "inside"], 2, 1)
