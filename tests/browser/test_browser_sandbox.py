"""The browser sandbox against real Chromium, bubblewrap and the bundled todo app."""

from __future__ import annotations

import asyncio
import http.server
import io
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import quote, urljoin

import pytest
import pytest_asyncio
from PIL import Image, ImageChops

from cua.actions import Back, Click, Done, Drag, Goto, Key, Move, Point, Scroll, Type, Wait
from cua.errors import BadRequest, SandboxCrashed, UnknownSnapshot
from cua.observation import ObserveOptions, Size
from cua.sandbox import AppHostRef, SandboxEvent, ServiceSpec, capabilities_of, create_sandbox
from cua.sandboxes.browser import BrowserConfig, BrowserSandbox
from cua.sandboxes.browser.services import HostedApp
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

TODO = ServiceSpec(name="app", argv=[sys.executable, "-m", "cua.tasks.apps.serve", "todo"],
                   app_host=AppHostRef(host="bundled", app="todo"))


def todo_config(**kw: Any) -> BrowserConfig:
    return BrowserConfig(services=[TODO], start_url="/", **kw)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def box() -> AsyncIterator[tuple[BrowserSandbox, list[SandboxEvent]]]:
    events: list[SandboxEvent] = []
    # its tests also load pages of their own (data:): navigation open (the task's own-origins
    # policy is tested in test_browser_navigation.py)
    sb = await BrowserSandbox.create(todo_config(navigation="open"), sandbox_id="bx-main", emit=events.append)
    try:
        yield sb, events
    finally:
        await sb.close()


async def bbox(sb: BrowserSandbox, selector: str) -> dict[str, float]:
    (res,) = await sb.query([DomQuery(selector=selector, prop="bbox")])
    assert res.ok and res.value, f"{selector!r} not found: {res}"
    return res.value


def center(b: dict[str, float], scale: float = 1.0) -> tuple[float, float]:
    return (b["x"] + b["width"] / 2) * scale, (b["y"] + b["height"] / 2) * scale


async def open_list(sb: BrowserSandbox, list_id: int = 1) -> None:
    await sb.reset(seed=0)
    x, y = center(await bbox(sb, f'a.list-card[href="/lists/{list_id}"]'))
    obs = await sb.act(Click(x=x, y=y))
    assert obs.error is None and obs.url.endswith(f"/lists/{list_id}"), obs


async def first_open_todo(sb: BrowserSandbox) -> int:
    (res,) = await sb.query([DomQuery(selector="tr.todo:not(.done)", prop="attr", attr="data-id")])
    return int(res.value)


async def done_of(sb: BrowserSandbox, todo_id: int) -> int:
    (res,) = await sb.query([SqlQuery(query="SELECT done FROM todos WHERE id = ?", params=[todo_id])])
    return int(res.value[0]["done"])


def pixels(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


async def test_container_observe(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, events = box
    obs = await sb.reset(seed=0)
    assert obs.screenshot is not None and obs.screenshot.format == "jpeg"
    assert obs.screenshot.data[:3] == b"\xff\xd8\xff"
    assert pixels(obs.screenshot.data).size == (1280, 720) == (obs.screenshot.width, obs.screenshot.height)
    assert obs.url == "http://127.0.0.1:8000/" and obs.title == "Lists · Todo"
    assert obs.frame == obs.screen == Size(width=1280, height=720)
    info = sb.info()
    assert info.details["isolation"] == "container" and info.details["executable"]
    assert isinstance(info.details["browser_pid"], int)
    assert set(capabilities_of(sb)) == {"snapshot", "fork", "query", "stream"} == set(info.capabilities)
    assert "create" in info.timings_ms
    assert any(e.event == "navigated" and e.data["url"] == "http://127.0.0.1:8000/" for e in events)
    rich = await sb.observe(ObserveOptions(format="png", axtree=True, focused=True))
    assert rich.screenshot is not None and rich.screenshot.data[:4] == b"\x89PNG"
    assert rich.axtree and any(n["role"] == "link" and "Work" in n["name"] and "bbox" in n for n in rich.axtree)
    assert rich.focused is None  # nothing focused on a fresh page


async def test_click_and_toggle_changes_app(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    await open_list(sb, 2)
    todo_id = await first_open_todo(sb)
    assert await done_of(sb, todo_id) == 0
    x, y = center(await bbox(sb, f'tr[data-id="{todo_id}"] input.toggle'))
    obs = await sb.act(Click(x=x, y=y))
    assert obs.error is None and obs.settle is not None and obs.settle.settled
    assert await done_of(sb, todo_id) == 1
    (state,) = await sb.query([AppStateQuery()])
    assert next(t for t in state.value["todos"] if t["id"] == todo_id)["done"] is True
    # the list shows open todos only: the toggled one is gone from the screen's DOM
    (count,) = await sb.query([DomQuery(selector=f'tr[data-id="{todo_id}"]', prop="count")])
    assert count.value == 0


async def test_type_key_and_queries(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    await open_list(sb, 1)
    x, y = center(await bbox(sb, 'form.add-todo input[name="title"]'))
    await sb.act(Click(x=x, y=y))
    obs = await sb.act(Type(text="Grüße an Zoë"), observe=ObserveOptions(focused=True))
    assert obs.focused is not None and obs.focused["tag"] == "input" and obs.focused["value"] == "Grüße an Zoë"
    obs = await sb.act(Key(keys=["Enter"]))
    assert obs.error is None
    (rows,) = await sb.query([SqlQuery(query="SELECT list_id FROM todos WHERE title = ?", params=["Grüße an Zoë"])])
    assert rows.value == [{"list_id": 1}]
    await sb.page.evaluate("() => { localStorage.setItem('k', 'v'); document.cookie = 'c=1; path=/'; }")
    results = await sb.query([
        UrlQuery(), TitleQuery(), LocalStorageQuery(key="k"), LocalStorageQuery(), CookiesQuery(name="c"),
        A11yQuery(max_nodes=50), DomQuery(selector="//h1", selector_type="xpath", prop="inner_text"),
        DomQuery(selector="tr.todo a.title", prop="text", all=True), SqlQuery(query="DELETE FROM todos"),
        AppStateQuery(service="nope"), FileQuery(path="/etc/hostname"), {"kind": "dom"},
    ])
    url, title, item, items, cookies, a11y, h1, titles, write, no_svc, file_q, malformed = results
    assert url.value == "http://127.0.0.1:8000/lists/1" and title.value.startswith("Inbox")
    assert item.value == "v" and items.value == {"k": "v"}
    assert [c["value"] for c in cookies.value] == ["1"]
    tree = a11y.value
    assert tree["role"] == "RootWebArea" and 0 < tree["nodes"] <= 50 and tree["truncated"] is True

    def walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
        yield node
        for child in node.get("children", ()):
            yield from walk(child)

    assert sum(1 for _ in walk(tree)) == tree["nodes"]
    assert any(n["role"] == "heading" and n["name"] == "Inbox" for n in walk(tree))
    full, = await sb.query([A11yQuery()])
    assert full.value["truncated"] is False
    assert any(n["role"] == "checkbox" and "bbox" in n for n in walk(full.value))
    assert h1.value == "Inbox" and "Grüße an Zoë" in titles.value
    assert not write.ok and write.error == "failed"
    assert not no_svc.ok and no_svc.error == "not_found"
    assert not file_q.ok and file_q.error == "unsupported"
    assert not malformed.ok
    # reset clears cookies and storage
    await sb.reset(seed=0)
    await sb.act(Goto(url="http://127.0.0.1:8000/lists/1"))
    item, cookies = await sb.query([LocalStorageQuery(key="k"), CookiesQuery()])
    assert item.value is None and cookies.value == []


async def test_back_after_a_reset_or_restore_stays_on_the_episodes_first_page(
        box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    start = (await sb.reset(seed=0)).url
    ref = await sb.snapshot()
    try:
        for put_back in (lambda: sb.reset(seed=0), lambda: sb.restore(ref)):
            moved = await sb.act(Goto(url=urljoin(start, "/lists/1")))
            assert moved.url.endswith("/lists/1")
            assert (await put_back()).url == start
            back = await sb.act(Back())
            assert back.url == start, "Back reached the page the sandbox showed before"
    finally:
        await sb.delete_snapshot(ref)


async def test_axtree_reused_only_while_the_page_is_unchanged(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    await sb.act(Goto(url="http://127.0.0.1:8000/search"))
    await sb.page.evaluate("""() => {
      document.body.innerHTML = `<input id=q aria-label='query' style='position:absolute;left:10px;top:10px'>
        <button style='position:absolute;left:10px;top:2000px'>far</button>`;
    }""")
    ax = ObserveOptions(axtree=True)
    first = await sb.act(Move(x=600, y=600), observe=ax)
    again = await sb.act(Move(x=610, y=600), observe=ax)  # nothing changed: the same tree
    assert first.axtree == again.axtree
    box_of = lambda obs, role: next(n for n in obs.axtree if n["role"] == role)  # noqa: E731
    # Typing changes a value without any DOM mutation; the tree must show it.
    await sb.act(Click(x=20, y=20))
    typed = await sb.act(Type(text="hello"), observe=ax)
    assert box_of(typed, "textbox").get("value") == "hello"
    # Scrolling moves every box without any DOM mutation; the tree must show it.
    scrolled = await sb.act(Scroll(x=600, y=300, dy=500), observe=ax)
    assert box_of(scrolled, "button")["bbox"]["y"] < box_of(typed, "button")["bbox"]["y"] - 400


async def test_shadow_dom_and_iframe_queries(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    html = ("<div id=host></div><iframe id=f srcdoc=\"<p class=inner style='margin:0'>in frame</p>\" "
            "style='position:absolute;left:100px;top:50px;border:0'></iframe><script>"
            "document.getElementById('host').attachShadow({mode:'open'}).innerHTML='<b class=deep>shadow</b>';"
            "</script>")
    await sb.act(Goto(url="data:text/html," + quote(html)))
    deep, inner, box_in_frame = await sb.query([
        DomQuery(selector="b.deep", prop="text"), DomQuery(selector="p.inner", frame="#f"),
        DomQuery(selector="p.inner", frame="#f", prop="bbox")])
    assert deep.value == "shadow" and inner.value == "in frame"
    assert box_in_frame.value["x"] >= 100 and box_in_frame.value["y"] >= 50


async def test_agent_faults_are_observations(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    await sb.reset(seed=0)
    for action, reason in [
        (Click(x=1280, y=10), "out_of_bounds"),
        (Click(x=-1, y=10), "out_of_bounds"),
        ({"type": "teleport", "x": 1}, "malformed"),
        ({"type": "click", "x": "left"}, "malformed"),
        (Goto(url="file:///etc/passwd"), "bad_url"),
        (Goto(url="javascript:alert(1)"), "bad_url"),
        (Goto(url="http://127.0.0.1:9/"), "navigation_failed"),
    ]:
        obs = await sb.act(action)  # type: ignore[arg-type]
        assert obs.error is not None and obs.error.reason == reason, (action, obs.error)
        assert obs.screenshot is not None
    assert sb.alive
    obs = await sb.reset(seed=0)
    assert obs.error is None and obs.title == "Lists · Todo"
    for action in (Wait(seconds=0), Done(), Move(x=10, y=10), Scroll(x=100, y=100, dy=200)):
        assert (await sb.act(action)).error is None


async def test_frame_scaling(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    await open_list(sb, 3)
    obs = await sb.observe(ObserveOptions(frame=Size(width=640, height=360)))
    assert obs.frame == Size(width=640, height=360) and pixels(obs.screenshot.data).size == (640, 360)
    todo_id = await first_open_todo(sb)
    x, y = center(await bbox(sb, f'tr[data-id="{todo_id}"] input.toggle'), scale=0.5)
    obs = await sb.act(Click(x=x, y=y), observe=ObserveOptions(frame=Size(width=640, height=360)))
    assert obs.error is None
    assert await done_of(sb, todo_id) == 1
    # out of bounds is judged in the frame too
    obs = await sb.act(Click(x=700, y=10))
    assert obs.error is not None and obs.error.reason == "out_of_bounds"
    # an explicit frame wins; a non-proportional frame is resized
    obs = await sb.observe(ObserveOptions(frame=Size(width=500, height=500)))
    assert pixels(obs.screenshot.data).size == (500, 500)
    await sb.observe()  # back to full resolution for the next tests
    assert (await sb.act(Click(x=1000, y=600))).error is None


async def test_snapshot_restore_round_trip(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    await open_list(sb, 4)
    await sb.page.evaluate("() => { localStorage.setItem('draft', 'x'); sessionStorage.setItem('s', 'y'); "
                           "document.cookie = 'pref=dark; path=/'; }")
    x, y = center(await bbox(sb, 'form.add-todo input[name="title"]'))
    assert (await sb.act(Click(x=x, y=y))).error is None
    await sb.act(Type(text="half-typed"))
    await sb.act(Key(keys="Shift+ArrowLeft"))
    await sb.act(Scroll(x=600, y=400, dy=150))
    before = await sb.observe(ObserveOptions(format="png"))
    (state_before,) = await sb.query([AppStateQuery()])
    ref = await sb.snapshot()
    assert ref.size_bytes > 0 and ref.kind == "browser"
    # change the app, the screen and the browser state
    todo_id = await first_open_todo(sb)
    x, y = center(await bbox(sb, f'tr[data-id="{todo_id}"] input.toggle'))
    await sb.act(Click(x=x, y=y))
    await sb.page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); document.cookie = 'pref=; max-age=0; path=/'; }")
    await sb.act(Goto(url="http://127.0.0.1:8000/search?q=tax"))
    changed = await sb.observe(ObserveOptions(format="png"))
    assert changed.screenshot.data != before.screenshot.data
    restored = await sb.restore(ref, observe=ObserveOptions(format="png"))
    assert restored.url == before.url
    diff = ImageChops.difference(pixels(restored.screenshot.data), pixels(before.screenshot.data)).getbbox()
    assert diff is None, f"restored screen differs from the saved one in {diff}"
    (state_after,) = await sb.query([AppStateQuery()])
    assert state_after.value == state_before.value
    local, cookie = await sb.query([LocalStorageQuery(key="draft"), CookiesQuery(name="pref")])
    assert local.value == "x" and [c["value"] for c in cookie.value] == ["dark"]
    assert await sb.page.evaluate("() => sessionStorage.getItem('s')") == "y"
    focused = (await sb.observe(ObserveOptions(focused=True))).focused
    assert focused is not None and focused["value"] == "half-typed"
    assert await sb.page.evaluate("() => [document.activeElement.selectionStart, document.activeElement.selectionEnd]") == [9, 10]
    assert "restore_last" in sb.info().timings_ms
    await sb.delete_snapshot(ref)
    with pytest.raises(UnknownSnapshot):
        await sb.restore(ref)


_PANES = """<!doctype html><style>body{margin:0;height:2000px} .pane{height:150px;width:300px;overflow:auto}
.pane p{height:40px;margin:0;border-bottom:1px solid #888} textarea{height:60px;width:300px}</style>
<div id=list class=pane>""" + "".join(f"<p>row {i}</p>" for i in range(60)) + """</div>
<div id=host></div><textarea id=notes>""" + "\n".join(f"line {i}" for i in range(40)) + """</textarea>
<script>const r = document.getElementById("host").attachShadow({mode: "open"});
r.innerHTML = '<style>.pane{height:100px;width:300px;overflow:auto}</style><div class=pane>' +
  Array.from({length: 30}, (_, i) => "<p>shadow " + i + "</p>").join("") + "</div>";</script>"""

_OFFSETS = """() => [document.getElementById("list").scrollTop, document.getElementById("notes").scrollTop,
                     document.getElementById("host").shadowRoot.querySelector(".pane").scrollTop, window.scrollY]"""


async def test_restore_puts_back_scrolled_panes(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    """Lists, editors and panes in shadow roots scroll on their own; a restore shows them where they were."""
    sb, _ = box
    await sb.act(Goto(url="data:text/html," + quote(_PANES)))
    await sb.act(Scroll(x=100, y=60, dy=400))  # the list pane
    x, y = center(await bbox(sb, "#notes"))
    await sb.act(Scroll(x=x, y=y, dy=200))  # the textarea
    _, y = center(await bbox(sb, "#host"))
    await sb.act(Scroll(x=100, y=y, dy=120))  # the pane inside the shadow root (300 px wide)
    saved = await sb.page.evaluate(_OFFSETS)
    assert saved[0] > 0 and saved[1] > 0 and saved[2] > 0 and saved[3] == 0, saved
    before = await sb.observe(ObserveOptions(format="png"))
    ref = await sb.snapshot()
    await sb.page.evaluate("""() => { document.getElementById("list").scrollTop = 0;
                                      document.getElementById("notes").scrollTop = 0; }""")
    await sb.act(Scroll(x=600, y=600, dy=300))  # and the page itself
    assert await sb.page.evaluate(_OFFSETS) != saved
    restored = await sb.restore(ref, observe=ObserveOptions(format="png"))
    assert await sb.page.evaluate(_OFFSETS) == saved
    diff = ImageChops.difference(pixels(restored.screenshot.data), pixels(before.screenshot.data)).getbbox()
    assert diff is None, f"restored screen differs from the saved one in {diff}"
    await sb.delete_snapshot(ref)


async def test_fork_is_independent(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    await open_list(sb, 5)
    ref = await sb.snapshot()
    child = await sb.fork(ref, sandbox_id="bx-fork")
    try:
        assert child.info().details["browser_pid"] != sb.info().details["browser_pid"]
        assert (await child.observe()).url == (await sb.observe()).url
        todo_id = await first_open_todo(child)
        x, y = center(await bbox(child, f'tr[data-id="{todo_id}"] input.toggle'))
        await child.act(Click(x=x, y=y))
        assert await done_of(child, todo_id) == 1
        assert await done_of(sb, todo_id) == 0
        # a snapshot of the fork restores into the parent
        child_ref = await child.snapshot()
        await sb.restore(child_ref)
        assert await done_of(sb, todo_id) == 1
    finally:
        await child.close()
    await child.close()  # idempotent
    assert not child.alive


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        body = b"host secret"
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def host_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


_FETCH = """async (url) => { try { const r = await fetch(url); return await r.text(); }
                             catch (e) { return 'ERR ' + e.message; } }"""


async def test_container_cannot_reach_host(box: tuple[BrowserSandbox, list[SandboxEvent]], host_server: int) -> None:
    sb, _ = box
    await sb.reset(seed=0)
    own = await sb.page.evaluate(_FETCH, "http://127.0.0.1:8000/static/app/todo.js")
    assert "addEventListener" in own
    host = await sb.page.evaluate(_FETCH, f"http://127.0.0.1:{host_server}/")
    assert host.startswith("ERR"), host
    # the control endpoints are not reachable from the page either
    assert (await sb.page.evaluate(_FETCH, "http://127.0.0.1:8000/__cua/state")).startswith('{"error"')


async def test_drag_html5_and_pointer(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    html = """<div id=src draggable=true style='position:absolute;left:50px;top:50px;width:80px;height:80px;background:red'></div>
<div id=dst style='position:absolute;left:400px;top:50px;width:120px;height:120px;background:#ccc'></div>
<div id=knob style='position:absolute;left:50px;top:300px;width:40px;height:40px;background:blue;touch-action:none'></div>
<script>
const dst = document.getElementById('dst');
document.getElementById('src').addEventListener('dragstart', e => e.dataTransfer.setData('text/plain', 'src'));
dst.addEventListener('dragover', e => e.preventDefault());
dst.addEventListener('drop', e => { e.preventDefault(); dst.dataset.got = e.dataTransfer.getData('text/plain'); });
const knob = document.getElementById('knob'); let moves = 0;
knob.addEventListener('pointerdown', e => { knob.setPointerCapture(e.pointerId); knob.dataset.down = 1; });
knob.addEventListener('pointermove', e => { if (knob.dataset.down) { moves++; knob.style.left = (e.clientX - 20) + 'px'; } });
knob.addEventListener('pointerup', e => { delete knob.dataset.down; knob.dataset.moves = moves; });
</script>"""
    await sb.act(Goto(url="data:text/html," + quote(html)))
    obs = await sb.act(Drag(path=[Point(x=90, y=90), Point(x=460, y=110)]))
    assert obs.error is None
    got, = await sb.query([DomQuery(selector="#dst", prop="attr", attr="data-got")])
    assert got.value == "src"
    await sb.act(Drag(path=[Point(x=70, y=320), Point(x=200, y=320), Point(x=300, y=320)]))
    left, moves = await sb.query([DomQuery(selector="#knob", prop="bbox"),
                                  DomQuery(selector="#knob", prop="attr", attr="data-moves")])
    assert abs(left.value["x"] - 280) <= 2 and int(moves.value) >= 5


async def test_screencast_frames(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    await sb.reset(seed=0)
    stream = sb.frames(ObserveOptions(format="jpeg", frame=Size(width=640, height=360)), max_fps=30)
    first = await asyncio.wait_for(stream.__anext__(), 30)
    assert first.format == "jpeg" and first.data[:3] == b"\xff\xd8\xff" and first.width <= 640
    # a change on screen brings a new frame
    await sb.page.evaluate("() => { document.body.style.background = 'rgb(200, 30, 30)'; }")
    second = await asyncio.wait_for(stream.__anext__(), 30)
    assert pixels(second.data).getpixel((second.width - 2, second.height - 2))[0] > 150
    await stream.aclose()
    assert (await sb.observe()).screenshot is not None


async def test_browser_death_is_reported(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    other, _ = box
    died = asyncio.Event()
    events: list[SandboxEvent] = []

    def sink(event: SandboxEvent) -> None:
        events.append(event)
        if event.event == "died":
            died.set()

    sb = await create_sandbox("browser", {"services": [TODO.model_dump()], "start_url": "/"},
                              sandbox_id="bx-victim", emit=sink)
    try:
        pid = sb.info().details["browser_pid"]
        assert isinstance(pid, int) and pid != other.info().details["browser_pid"]
        os.kill(pid, signal.SIGKILL)
        await asyncio.wait_for(died.wait(), 60)
        assert not sb.alive and sb.info().status == "crashed"
        with pytest.raises(SandboxCrashed):
            await sb.observe()
        with pytest.raises(SandboxCrashed):
            await sb.act(Click(x=1, y=1))
        assert (await other.reset(seed=0)).title == "Lists · Todo"
    finally:
        await sb.close()
    assert [e.event for e in events].count("died") == 1


async def test_shared_mode_sandboxes_are_independent() -> None:
    a = await BrowserSandbox.create(todo_config(isolation="shared"), sandbox_id="bx-shared-a")
    try:
        b = await BrowserSandbox.create(todo_config(isolation="shared"), sandbox_id="bx-shared-b")
        try:
            assert a.info().details["browser_pid"] == b.info().details["browser_pid"]
            assert a.info().details["isolation"] == "shared"
            await open_list(a, 1)
            await open_list(b, 1)
            todo_id = await first_open_todo(a)
            x, y = center(await bbox(a, f'tr[data-id="{todo_id}"] input.toggle'))
            await a.act(Click(x=x, y=y))
            await a.page.evaluate("() => localStorage.setItem('who', 'a')")
            assert await done_of(a, todo_id) == 1 and await done_of(b, todo_id) == 0
            (ls,) = await b.query([LocalStorageQuery(key="who")])
            assert ls.value is None  # contexts do not share storage
            ref = await a.snapshot()
            restored = await b.restore(ref)
            assert restored.url.startswith(b.config.resolve_start_url(b._ports)[:-1]) or restored.url
            assert await done_of(b, todo_id) == 1
        finally:
            await b.close()
        assert a.alive and (await a.observe()).screenshot is not None
    finally:
        await a.close()


async def test_reset_seeds_and_key_combos(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    titles_query = SqlQuery(query="SELECT title FROM todos ORDER BY id LIMIT 5")
    await sb.reset(seed=1)
    (seed1,) = await sb.query([titles_query])
    await sb.reset(seed=0)
    (seed0,) = await sb.query([titles_query])
    assert seed0.value != seed1.value
    await sb.reset(seed=1)
    assert (await sb.query([titles_query]))[0].value == seed1.value
    x, y = center(await bbox(sb, "#new-list"))
    await sb.act(Click(x=x, y=y))
    await sb.act(Type(text="first"))
    await sb.act(Key(keys="ctrl+a"))
    obs = await sb.act(Type(text="second"), observe=ObserveOptions(focused=True))
    assert obs.focused["value"] == "second"
    await sb.act(Key(keys=["Backspace"]))
    await sb.act(Key(keys="space"))
    obs = await sb.observe(ObserveOptions(focused=True))
    assert obs.focused["value"] == "secon "
    with pytest.raises(BadRequest):
        await sb.reset(options={"bogus": 1})


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry.name))
            except OSError:
                continue
    return out


async def test_service_death_is_reported() -> None:
    died = asyncio.Event()
    reasons: list[str] = []

    def sink(event: SandboxEvent) -> None:
        if event.event == "died":
            reasons.append(event.data["reason"])
            died.set()

    sb = await BrowserSandbox.create(todo_config(), sandbox_id="bx-svc-victim", emit=sink)
    try:
        browser_pid = sb.info().details["browser_pid"]
        with open(f"/proc/{browser_pid}/stat") as f:
            supervisor = int(f.read().rsplit(")", 1)[1].split()[1])
        services = [p for p in _children(supervisor) if p != browser_pid]
        assert len(services) == 1
        os.kill(services[0], signal.SIGKILL)
        await asyncio.wait_for(died.wait(), 60)
        assert "service 'app' died" in reasons[0]
        with pytest.raises(SandboxCrashed):
            await sb.query([UrlQuery()])
    finally:
        await sb.close()


async def test_settle_waits_for_page_work_and_popups(box: tuple[BrowserSandbox, list[SandboxEvent]]) -> None:
    sb, _ = box
    # A page of the app's origin, so that its script can fetch from the app.
    await sb.act(Goto(url="http://127.0.0.1:8000/search"))
    await sb.page.evaluate("""() => {
      document.body.innerHTML = `<button id=b style='position:fixed;left:10px;top:10px;width:100px;height:40px'>go</button>
        <a id=pop href='about:blank#popup' target=_blank style='position:fixed;left:10px;top:100px'>popup</a>
        <ul id=list style='position:fixed;left:300px;top:10px'></ul>`;
      document.getElementById('b').addEventListener('click', () => {
        // renders in steps: each response adds an item and starts the next fetch, 8 times
        let n = 0;
        const step = () => fetch('/static/app/todo.js?' + n).then((r) => r.text()).then(() => {
          const li = document.createElement('li'); li.textContent = 'item ' + n;
          document.getElementById('list').append(li); if (++n < 8) step(); });
        setTimeout(step, 0);
      });
    }""")
    png = ObserveOptions(format="png")
    obs = await sb.act(Click(x=60, y=30), observe=png)
    assert obs.settle is not None and obs.settle.settled
    (count,) = await sb.query([DomQuery(selector="#list li", prop="count")])
    assert count.value == 8, obs.settle
    # the observation returned by the action shows the settled screen
    later = await sb.observe(png)
    assert ImageChops.difference(pixels(obs.screenshot.data), pixels(later.screenshot.data)).getbbox() is None
    # also when the action changed nothing, or changed the page synchronously
    for x, y in ((600, 600), (60, 30)):
        obs = await sb.act(Click(x=x, y=y), observe=png)
        later = await sb.observe(png)
        assert ImageChops.difference(pixels(obs.screenshot.data), pixels(later.screenshot.data)).getbbox() is None
    before_url = obs.url
    x, y = center(await bbox(sb, "#pop"))
    obs = await sb.act(Click(x=x, y=y))
    assert obs.url == "about:blank#popup" and obs.url != before_url
    await sb.page.close()  # closing the popup hands the agent its previous page
    obs = await sb.observe()
    assert obs.url == before_url
    # when the last page closes, the agent gets a blank page, not a dead sandbox
    assert len(sb.page.context.pages) == 1
    await sb.page.close()
    assert sb.alive
    obs = await sb.observe()
    assert obs.url == "about:blank" and obs.screenshot is not None
    assert (await sb.act(Goto(url="http://127.0.0.1:8000/"))).title == "Lists · Todo"


async def test_shared_app_host_death_is_reported() -> None:
    died = asyncio.Event()
    sb = await BrowserSandbox.create(todo_config(isolation="shared"), sandbox_id="bx-shared-victim",
                                     emit=lambda e: died.set() if e.event == "died" else None)
    try:
        (svc,) = sb._processes.host_services
        assert isinstance(svc, HostedApp)  # bundled apps are served by the shared app host
        os.kill(svc.host.proc.pid, signal.SIGKILL)
        await asyncio.wait_for(died.wait(), 60)
        assert not sb.alive
        with pytest.raises(SandboxCrashed):
            await sb.observe()
    finally:
        await sb.close()
    # a new shared sandbox gets a fresh app host
    sb2 = await BrowserSandbox.create(todo_config(isolation="shared"), sandbox_id="bx-shared-after")
    try:
        assert (await sb2.observe()).title == "Lists · Todo"
    finally:
        await sb2.close()


async def test_container_runs_a_user_service_from_outside_the_project(tmp_path: Any) -> None:
    script = tmp_path / "my_app.py"
    script.write_text("import sys\nfrom cua.tasks.apps.serve import main\nsys.exit(main(['todo']))\n")
    spec = ServiceSpec(name="mine", argv=[sys.executable, str(script)], port=9100)
    sb = await BrowserSandbox.create(BrowserConfig(services=[spec], start_url="/lists/2"), sandbox_id="bx-user-app")
    try:
        obs = await sb.observe()
        assert obs.url == "http://127.0.0.1:9100/lists/2" and obs.title.startswith("Work")
        (health,) = await sb.query([AppStateQuery(service="mine")])
        assert health.ok and [row["name"] for row in health.value["lists"]][:2] == ["Inbox", "Work"]
    finally:
        await sb.close()
