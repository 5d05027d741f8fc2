"""The agent's page and its settling (sandboxes/browser/pages.py, settle.py), in real Chromium.

Settling must end as soon as the page's work is done (not after a fixed wait), wait for
work the page has scheduled, for navigations and for requests, but not for long polls;
a popup becomes the agent's page, and closing pages hands the agent the right one.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from _browser_rig import browser_kept, open_rig, serve  # tests/'s own helpers, as pytest puts tests/ on sys.path

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

QUIET = "<title>quiet</title><p>nothing happens here</p>"
#: A click shows "working" at once and renders its result a moment later (a timer due
#: within the quiet window), then is done.
LATER = """<title>later</title><button id=b onclick="document.title = 'working'; setTimeout(() => {
  document.body.insertAdjacentHTML('beforeend', '<p id=done>done</p>'); }, 30)">go</button>"""
#: A click that changes nothing at once and renders its result on a timer: the page has
#: been still for longer than the quiet window, which alone must not count as settled.
SILENT_LATER = """<title>silent</title><button id=b onclick="setTimeout(() => {
  document.body.insertAdjacentHTML('beforeend', '<p id=done>done</p>'); }, 25)">go</button>"""
#: A page that keeps re-arming a short one-shot timer that changes nothing (a poll loop).
REARMING = """<title>rearming</title><script>(function tick() { setTimeout(tick, 20); })();</script>"""
#: A click starts a fetch of a slow answer, then renders it.
FETCHING = """<title>fetching</title><button id=b onclick="fetch('/hang?s=0.4').then((r) => r.text())
  .then((t) => { document.body.insertAdjacentHTML('beforeend', '<p id=done>' + t + '</p>'); })">go</button>"""
#: A long poll that answers after 8 s: it must not hold the page unsettled.
POLLING = """<title>polling</title><script>fetch('/hang?s=8');</script>"""
NEXT = "<title>next</title><p>the next document</p>"


def slow_next(_path: str) -> str:
    time.sleep(0.5)  # the navigation is still on its way when the settle starts
    return NEXT
LINKS = """<title>links</title><a id=next href="/next">next</a>
<a id=pop href="/next" target="_blank">popup</a>
<button id=alert onclick="document.title = String(confirm('sure?'))">confirm</button>"""


@pytest_asyncio.fixture(scope="module", loop_scope="module", autouse=True)
async def _browser() -> AsyncIterator[None]:
    async with browser_kept():
        yield


async def test_a_quiet_page_settles_at_once_and_the_title_is_read_by_the_check() -> None:
    with serve({"/": QUIET}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            info = await rig.pages.settle()
            assert info.settled and info.reason == "quiet"
            assert info.waited_ms < 1000  # a round trip, not the 3 s budget
            assert rig.pages.activity is not None and rig.pages.activity.settled_title == "quiet"


async def test_settle_waits_for_the_pages_timer_and_its_request() -> None:
    with serve({"/later": LATER, "/silent": SILENT_LATER, "/fetching": FETCHING}) as site:
        async with open_rig(site) as rig:
            for path in ("/later", "/silent", "/fetching"):
                await rig.navigator.goto(site.url(path))
                await rig.pages.settle()
                await rig.pages.page.click("#b")
                info = await rig.pages.settle()
                assert info.settled, (path, info)
                assert await rig.pages.page.locator("#done").count() == 1, path  # settled after the work, not before


async def test_a_timer_that_keeps_re_arming_is_waited_on_once_not_for_the_budget() -> None:
    with serve({"/": REARMING}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            await rig.pages.settle()
            for _ in range(3):
                info = await rig.pages.settle()
                assert info.settled and info.reason == "quiet", info
                assert info.waited_ms < 1500, info  # a timer's wait, not the 3 s budget


async def test_a_long_poll_does_not_hold_the_page_unsettled() -> None:
    with serve({"/": POLLING}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            info = await rig.pages.settle()
            assert info.settled
            assert info.waited_ms < 6000  # the request counts for `long_request_s` (2 s), not its 8 s


async def test_a_navigation_is_waited_for_and_reported() -> None:
    with serve({"/": LINKS, "/next": slow_next}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            await rig.pages.settle()
            await rig.pages.page.evaluate("() => document.getElementById('next').click()")  # does not wait for it
            info = await rig.pages.settle()
            assert info.settled and "navigation" in info.reason
            assert await rig.pages.page.title() == "next"
            urls = [e.data["url"] for e in rig.events if e.event == "navigated"]
            assert urls[-2:] == [site.url("/"), site.url("/next")]
            assert rig.pages.origins == {f"http://127.0.0.1:{site.port}"}


async def test_a_popup_becomes_the_page_and_closing_pages_hands_back_the_right_one() -> None:
    with serve({"/": LINKS, "/next": NEXT}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            await rig.pages.settle()
            first = rig.pages.page
            await first.click("#pop")
            info = await rig.pages.settle()
            assert info.reason.startswith("popup+"), info
            popup = rig.pages.page
            assert popup is not first and await popup.title() == "next"
            await popup.close()  # the popup's opener is the agent's page again
            assert rig.pages.switching
            assert await rig.pages.switch()
            assert rig.pages.page is first and not rig.pages.switching
            assert not await rig.pages.switch()  # nothing pending: nothing to do
            await first.close()  # the last page closed: a blank one in its place
            assert await rig.pages.switch()
            assert rig.pages.page is not first and rig.pages.page.url == "about:blank"
            assert rig.pages.cdp is not None  # with a CDP session of its own
            assert (await rig.pages.cdp.send("Runtime.evaluate", {"expression": "1 + 1"}))["result"]["value"] == 2


async def test_dialogs_are_accepted_and_reported() -> None:
    with serve({"/": LINKS}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            await rig.pages.page.click("#alert")
            await rig.pages.settle()
            assert await rig.pages.page.title() == "true"  # confirm() answered yes: the page goes on
            assert [e.data for e in rig.events if e.event == "dialog"] == [{"type": "confirm", "message": "sure?"}]


async def test_a_popup_that_never_opens_ends_the_settle_with_the_reason() -> None:
    """The page asked for a window (as window.open notes it) and none came."""
    with serve({"/": QUIET}) as site:
        async with open_rig(site, settle_timeout_ms=500) as rig:
            await rig.navigator.goto(site.url("/"))
            await rig.pages.page.evaluate("() => { window.__cuaSettle.popupAt = performance.now(); }")
            info = await rig.pages.settle()
            assert info.reason.endswith("+popup_not_opened")
            assert rig.pages.activity is not None and not rig.pages.activity.popup_requested


#: A page that counts its visits in web storage and a cookie, and shows both: what a
#: reset clears, so a reset's page reads "visit 1" whatever the context had seen before.
VISITS = """<title>visits</title><script>
const n = Number(localStorage.getItem("n") || 0) + 1;
localStorage.setItem("n", String(n));
document.cookie = "seen=" + n;
addEventListener("DOMContentLoaded", () => {
  document.getElementById("n").textContent = "visit " + n + " " + document.cookie;
});
</script><p id=n></p><button id=b onclick="document.getElementById('n').textContent = 'clicked'">go</button>
<a id=next href="/next">next</a>"""


async def test_a_worn_context_is_recycled_at_reset_and_the_agent_sees_the_same_page() -> None:
    from cua.actions import Click
    from cua.info import SandboxEvent
    from cua.observation import ObserveOptions
    from cua.sandboxes.browser.sandbox import BrowserSandbox
    from cua.state import DomQuery

    events: list[SandboxEvent] = []
    with serve({"/": VISITS, "/next": NEXT}) as site:
        sb = await BrowserSandbox.create({"isolation": "shared", "start_url": site.url("/")},
                                         sandbox_id="bx-recycle", emit=events.append)
        try:
            pages = sb._pages
            pages.recycle_after_requests = 3
            png = ObserveOptions(format="png")

            async def text() -> str:
                (res,) = await sb.query([DomQuery(selector="#n", prop="text")])
                return str(res.value)

            first = await sb.reset(observe=png)
            assert first.screenshot is not None and await text() == "visit 1 seen=1"
            old_context, old_page = pages.context, pages.page
            for _ in range(3):  # requests the context keeps until it closes
                await sb.act(Click(x=10, y=10))
                await old_page.goto(site.url("/next"))
                await old_page.goto(site.url("/"))
            assert pages.requests >= 3 and pages.worn()
            again = await sb.reset(observe=png)
            assert pages.context is not old_context and old_page.is_closed()
            assert pages.requests <= 2  # the reset's own load, in the fresh context
            assert again.screenshot is not None and again.screenshot.data == first.screenshot.data
            assert (again.url, again.title) == (first.url, first.title)
            assert await text() == "visit 1 seen=1"  # cleared, as any reset clears
            # The agent goes on acting in the new page: input, settling and events follow it.
            box = (await sb.query([DomQuery(selector="#b", prop="bbox")]))[0].value
            clicked = await sb.act(Click(x=box["x"] + 2, y=box["y"] + 2))
            assert clicked.settle is not None and clicked.settle.settled and await text() == "clicked"
            before = len([e for e in events if e.event == "navigated"])
            box = (await sb.query([DomQuery(selector="#next", prop="bbox")]))[0].value
            moved = await sb.act(Click(x=box["x"] + 2, y=box["y"] + 2))
            assert moved.url == site.url("/next") and moved.title == "next"
            assert len([e for e in events if e.event == "navigated"]) > before
            # Without wear, a reset keeps the context.
            kept = pages.context
            await sb.reset()
            assert pages.context is kept
            # A live screencast holds the page: a worn context waits until it is closed.
            pages.requests = pages.recycle_after_requests
            frames = sb.frames(ObserveOptions(format="jpeg"), max_fps=5)
            await anext(aiter(frames))
            await sb.reset()
            assert pages.context is kept and not pages.worn()
            await frames.aclose()
            assert pages.worn()
            await sb.reset()
            assert pages.context is not kept
        finally:
            await sb.close()
