"""Observations of the browser sandbox (sandboxes/browser/observe.py), in real Chromium.

What the options ask for is there, in the frame asked for; an observation kept from the
sandbox's making (a fork's restore, a warm spare's start) is handed out once, and only
while the page is unchanged; the accessibility tree follows the page's changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import warnings
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from _browser_rig import browser_kept, open_rig, serve  # tests/'s own helpers, as pytest puts tests/ on sys.path
from PIL import Image

from cua.observation import Observation, ObserveOptions, Size
from cua.sandboxes.browser.observe import accessibility_tree_nested

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

PAGE = """<title>observed</title><button id=b onclick="this.textContent = 'pressed'">press</button>
<input id=t value=typed>"""
OTHER = "<title>other</title>"


@pytest_asyncio.fixture(scope="module", loop_scope="module", autouse=True)
async def _browser() -> AsyncIterator[None]:
    async with browser_kept():
        yield


async def test_an_observation_holds_what_was_asked_in_the_frame_asked() -> None:
    with serve({"/": PAGE}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            await rig.pages.page.focus("#t")
            timings: dict[str, float] = {}
            frame = Size(width=320, height=200)
            obs = await rig.observer.observe(ObserveOptions(frame=frame, format="png", axtree=True, focused=True),
                                             timings, step=5)
            assert (obs.url, obs.title, obs.step, obs.sandbox_id) == (site.url("/"), "observed", 5, "rig")
            assert obs.frame == frame and obs.screen == rig.screen and rig.observer.frame == frame
            assert obs.screenshot is not None
            with Image.open(io.BytesIO(obs.screenshot.data)) as img:
                assert img.size == (320, 200)
            assert obs.focused is not None and obs.focused["id"] == "t" and obs.focused["value"] == "typed"
            assert any(item["role"] == "button" and item["name"] == "press" for item in obs.axtree or ())
            assert "observe" in timings
            bare = await rig.observer.observe(ObserveOptions(screenshot=False), {}, step=5)
            assert bare.screenshot is None and bare.axtree is None and bare.focused is None


async def test_the_tree_follows_the_page_after_a_settle() -> None:
    with serve({"/": PAGE}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            opts = ObserveOptions(axtree=True, screenshot=False)
            before = await rig.observer.observe(opts, {}, step=0, settle=await rig.pages.settle())
            again = await rig.observer.observe(opts, {}, step=0, settle=await rig.pages.settle())
            assert again.axtree == before.axtree  # unchanged page: the same tree (reused, not re-read)
            await rig.pages.page.click("#b")
            after = await rig.observer.observe(opts, {}, step=1, settle=await rig.pages.settle())
            names = [item["name"] for item in after.axtree or () if item["role"] == "button"]
            assert names == ["pressed"]


async def test_a_kept_observation_is_handed_out_once_while_the_page_is_unchanged() -> None:
    with serve({"/": PAGE, "/other": OTHER}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            first = await rig.observer.observe(None, {}, step=0)
            rig.observer.keep_forked(first)
            assert await rig.observer.kept(ObserveOptions(axtree=True)) is None  # other options: a fresh read
            rig.observer.keep_forked(first)
            assert await rig.observer.kept(None) is first
            assert await rig.observer.kept(None) is None  # once
            rig.observer.keep_forked(first)
            await rig.navigator.goto(site.url("/other"))
            assert await rig.observer.kept(None) is None  # the page loaded since

            await rig.navigator.goto(site.url("/"))
            warm = await rig.observer.observe(None, {}, step=0)
            await rig.observer.keep_warm(warm)
            rig.observer.renamed("taken")  # a create took the spare under its own id
            kept = await rig.observer.kept(None)
            assert kept is not None and kept.sandbox_id == "taken" and kept.screenshot == warm.screenshot
            await rig.observer.keep_warm(warm)
            await rig.pages.page.click("#b")  # the DOM changed without a load
            assert await rig.observer.kept(None) is None
            await rig.observer.keep_warm(warm)
            rig.observer.forget_kept()  # an action or a reset is coming
            assert await rig.observer.kept(None) is None



FORM = PAGE + """<input id=c type=checkbox aria-label=done><select id=s aria-label=pick><option>one<option>two</select>
<style>#menu ul { display: none } #menu:hover ul { display: block } a:hover { color: red }</style>
<h2 id=plain>plain heading</h2><nav id=menu>Menu<ul><li>Shown on hover</ul></nav>"""


def _states(obs: Observation, role: str) -> list[list[str]]:
    return [item.get("states", []) for item in obs.axtree or () if item["role"] == role]


async def test_the_tree_follows_what_changes_without_a_mutation() -> None:
    """Focus moving, form state a script sets, and a `:hover` rule that shows a menu change
    no DOM node and fire no input event; the tree shows them all the same (no stale reuse)."""
    with serve({"/": FORM}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            page = rig.pages.page
            opts = ObserveOptions(axtree=True, screenshot=False)

            async def tree(step: int) -> Observation:
                return await rig.observer.observe(opts, {}, step=step, settle=await rig.pages.settle())

            assert _states(await tree(0), "textbox") == [[]]
            await page.focus("#t")
            assert _states(await tree(1), "textbox") == [["focused"]]
            await page.focus("#b")
            moved = await tree(2)
            assert _states(moved, "textbox") == [[]] and _states(moved, "button") == [["focused"]]

            await page.evaluate("() => { document.getElementById('c').checked = true;"
                                " document.getElementById('s').selectedIndex = 1; }")
            scripted = await tree(3)
            assert _states(scripted, "checkbox") == [["checked"]]
            assert [i.get("value") for i in scripted.axtree or () if i["role"] == "combobox"] == ["two"]

            def shown(obs: Observation) -> bool:
                return any(i["name"] == "Shown on hover" for i in obs.axtree or ())
            assert not shown(await tree(4))
            await page.hover("#menu")
            assert shown(await tree(5))


async def test_a_pointer_move_no_hover_rule_can_see_keeps_the_version() -> None:
    """Moving onto an element no `:hover` rule of the page can match leaves the content
    version as it was (so the tree is reused); onto one that a rule can match, it bumps."""
    with serve({"/": FORM}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            page = rig.pages.page
            version = "() => window.__cuaSettle.version"
            await page.mouse.move(1, 390)
            before = await page.evaluate(version)
            await page.hover("#plain")
            assert await page.evaluate(version) == before
            await page.hover("#menu")
            assert await page.evaluate(version) > before


TEXTS = """<title>texts</title><p style="width: 80px">one two three four five six</p><p>left<br>right</p>
<button>go</button>"""


async def test_the_tree_names_each_text_once() -> None:
    """Chromium puts an InlineTextBox with its text's words under every text, one per line
    box, and a LineBreak for each `<br>`: layout, not content. The tree the agent gets, and
    the nested one the `a11y` query returns, name each text once."""
    with serve({"/": TEXTS}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            raw = (await rig.pages.cdp.send("Accessibility.getFullAXTree"))["nodes"]  # type: ignore[union-attr]
            raw_roles = [(n.get("role") or {}).get("value") for n in raw if not n.get("ignored")]
            assert raw_roles.count("InlineTextBox") >= 4 and "LineBreak" in raw_roles  # what there is to drop

            obs = await rig.observer.observe(ObserveOptions(axtree=True, screenshot=False), {}, step=0,
                                             settle=await rig.pages.settle())
            items = obs.axtree or []
            assert not {"InlineTextBox", "LineBreak"} & {i["role"] for i in items}
            texts = [i["name"] for i in items if i["role"] == "StaticText"]
            assert texts == ["one two three four five six", "left", "right", "go"]
            assert all("bbox" in i for i in items if i["role"] == "StaticText")

            nested = await accessibility_tree_nested(rig.pages.cdp)  # type: ignore[arg-type]

            def roles(node: dict[str, Any]) -> list[str]:
                return [node["role"], *(r for child in node.get("children", ()) for r in roles(child))]
            assert not {"InlineTextBox", "LineBreak"} & set(roles(nested))
            assert roles(nested).count("StaticText") == 4


async def test_an_observation_cancelled_at_any_point_leaves_no_coroutine_unawaited() -> None:
    """A client's `cancel` can land after the observation has made its reads and before they
    start. Each read is made only once it runs, so none is left for the collector to warn of
    ("coroutine ... was never awaited"), at whatever turn of the loop the cancel comes."""
    with serve({"/": PAGE}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            opts = ObserveOptions(axtree=True, focused=True)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                for turns in range(12):
                    observing = asyncio.create_task(rig.observer.observe(opts, {}, step=0))
                    for _ in range(turns):
                        await asyncio.sleep(0)  # let the observation run this many turns of the loop
                    observing.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await observing
                    gc.collect()
            unawaited = [str(w.message) for w in caught if "never awaited" in str(w.message)]
            assert unawaited == []
            obs = await rig.observer.observe(opts, {}, step=1)  # the observer still works
            assert obs.screenshot is not None and obs.axtree and obs.title == "observed"
