"""Snapshots of the browser sandbox (sandboxes/browser/snapshot.py).

A snapshot taken in one sandbox restores into another (a fork, or a sandbox whose
services listen on other ports): storage, unsubmitted form state, scroll offsets, the
pointer and the element ids come back; a snapshot of other services is refused.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from _browser_rig import browser_kept, open_rig, serve  # tests/'s own helpers, as pytest puts tests/ on sys.path

from cua.errors import BadRequest, UnknownSnapshot
from cua.observation import ObserveOptions
from cua.sandbox import SnapshotRef
from cua.sandboxes.browser.snapshot import STORE, BrowserSnapshot, rebase_url

FORM = """<title>form</title><div style="height:3000px">
<input id=name value=""><textarea id=notes>as written</textarea>
<label><input id=agree type=checkbox> agree</label><button id=send>send</button></div>
<script>document.title = "form " + (localStorage.getItem("draft") || "-");</script>"""


def test_rebase_url_points_a_loopback_url_at_the_same_service_elsewhere() -> None:
    assert rebase_url("http://127.0.0.1:8001/a?b=1", {"app": 8001}, {"app": 9001}) == "http://127.0.0.1:9001/a?b=1"
    assert rebase_url("http://localhost:8001/", {"app": 8001}, {"app": 9001}) == "http://localhost:9001/"
    assert rebase_url("http://127.0.0.1:8001/", {"app": 8001}, {"other": 9001}) == "http://127.0.0.1:8001/"
    assert rebase_url("https://example.com:8001/", {"app": 8001}, {"app": 9001}) == "https://example.com:8001/"
    assert rebase_url("about:blank", {"app": 8001}, {"app": 9001}) == "about:blank"


def test_an_unknown_snapshot_is_a_typed_error() -> None:
    ref = SnapshotRef(id="bsnap-none", sandbox_id="x", kind="browser", size_bytes=0)
    with pytest.raises(UnknownSnapshot):
        STORE.get(ref)
    STORE.delete(ref)  # deleting what is not there is no error


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def _browser() -> AsyncIterator[None]:
    async with browser_kept():
        yield


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.usefixtures("_browser")
async def test_a_snapshot_restores_into_another_sandbox_on_other_ports() -> None:
    with serve({"/": FORM}) as a, serve({"/": FORM}) as b:
        async with open_rig(a) as one, open_rig(b) as two:
            await one.navigator.goto(a.url("/"))
            page = one.pages.page
            await page.evaluate("() => { localStorage.setItem('draft', 'x'); sessionStorage.setItem('s', 'y'); }")
            await page.fill("#name", "Ada")
            await page.check("#agree")
            await page.evaluate("() => window.scrollTo(0, 400)")
            await one.input.move_pointer(33, 44)
            obs = await one.observer.observe(ObserveOptions(element_ids=True, screenshot=False), {}, step=3)
            ids = {item["name"]: item["id"] for item in obs.axtree or () if "id" in item}
            ref = await one.snapshots.take(step=3)
            assert ref.meta["step"] == 3 and ref.meta["url"] == a.url("/") and ref.size_bytes > 0
            try:
                step = await two.snapshots.restore(ref)
                assert step == 3
                page2 = two.pages.page
                assert page2.url == b.url("/")  # rebased onto the other sandbox's port
                assert await page2.title() == "form x"  # storage was there for the page's first script
                assert await page2.evaluate("() => sessionStorage.getItem('s')") == "y"
                assert await page2.input_value("#name") == "Ada" and await page2.is_checked("#agree")
                assert await page2.input_value("#notes") == "as written"
                assert await page2.evaluate("() => window.scrollY") == 400
                assert (two.input.pointer.x, two.input.pointer.y) == (33, 44)
                obs2 = await two.observer.observe(ObserveOptions(element_ids=True, screenshot=False), {}, step=step)
                assert {item["name"]: item["id"] for item in obs2.axtree or () if "id" in item} == ids
            finally:
                await one.observer.observe(None, {}, step=0)  # the first sandbox is untouched by the restore
                assert await one.pages.page.input_value("#name") == "Ada"
                STORE.delete(ref)


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.usefixtures("_browser")
async def test_a_snapshot_of_other_services_is_refused_before_anything_changes() -> None:
    with serve({"/": FORM}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            await rig.pages.page.fill("#name", "kept")
            blob = BrowserSnapshot(url=site.url("/"), scroll=(0, 0), pointer=(0, 0), cookies=[], storage={},
                                   services={"db": b"image"})
            ref = SnapshotRef(id="bsnap-other-services", sandbox_id="x", kind="browser", size_bytes=blob.size_bytes)
            STORE.put(ref.id, blob)
            try:
                with pytest.raises(BadRequest, match="services"):
                    await rig.snapshots.restore(ref)
                assert await rig.pages.page.input_value("#name") == "kept"
            finally:
                STORE.delete(ref)


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.usefixtures("_browser")
async def test_a_snapshot_cancelled_at_any_point_leaves_no_coroutine_unawaited() -> None:
    """A client's `cancel` can land after the snapshot has made its reads (cookies, page
    storage) and before they start. Each read is made only once it runs, so none is left for
    the collector to warn of ("coroutine ... was never awaited"), whenever the cancel comes."""
    with serve({"/": FORM}) as site:
        async with open_rig(site) as rig:
            await rig.navigator.goto(site.url("/"))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                for turns in range(12):
                    taking = asyncio.create_task(rig.snapshots.take(step=0))
                    for _ in range(turns):
                        await asyncio.sleep(0)  # let the snapshot run this many turns of the loop
                    taking.cancel()
                    try:
                        STORE.delete(await taking)  # it finished before the cancel
                    except asyncio.CancelledError:
                        pass
                    gc.collect()
            unawaited = [str(w.message) for w in caught if "never awaited" in str(w.message)]
            assert unawaited == []
            ref = await rig.snapshots.take(step=1)  # the sandbox still snapshots
            assert ref.size_bytes > 0
            STORE.delete(ref)
