"""Oracle steps resolved to unified actions through state queries, on a real page in a
real browser sandbox: scrolling into view, text/date/time fields, native selects, waiting,
dragging, relative navigation."""

from __future__ import annotations

import shutil
from urllib.parse import quote

import pytest

from cua.actions import Action, Done, Drag, Scroll
from cua.episode import EpisodeContext
from cua.episode.local import open_local
from cua.state import DomQuery, UrlQuery
from cua.tasks.oracle import OracleError, run_steps

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not (shutil.which("chromium-headless-shell") or shutil.which("chromium")), reason="needs Chromium")]

PAGE = """<!doctype html><html><body style="margin:0;font:16px sans-serif">
<div style="height:1500px">top spacer</div>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('out').textContent = 'sent:' + this.q.value">
  <input name="q" id="q" value="old text">
  <input type="date" id="d"> <input type="time" id="t"> <input type="datetime-local" id="dl">
  <select id="s"><option>alpha</option><option>beta</option><option value="g">gamma</option>
    <option>delta</option><option>epsilon</option></select>
</form>
<p id="out"></p>
<button class="b">One</button><button class="b">Two</button><button class="b">Three</button>
<p id="clicked"></p>
<button id="later" onclick="setTimeout(() => { const e = document.createElement('div'); e.id = 'late';
  e.textContent = 'here'; document.body.appendChild(e); }, 400)">make later</button>
<div id="src" draggable="true" style="width:80px;height:40px;background:#9cf">drag me</div>
<div id="dst" style="width:200px;height:80px;background:#fc9;margin-top:20px">drop here</div>
<script>
document.querySelectorAll('button.b').forEach(b => b.addEventListener('click',
  () => { document.getElementById('clicked').textContent = b.textContent; }));
let down = null;
document.getElementById('src').addEventListener('mousedown', e => { down = e; e.preventDefault(); });
document.addEventListener('mouseup', e => {
  const r = document.getElementById('dst').getBoundingClientRect();
  if (down && e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom)
    document.getElementById('dst').textContent = 'dropped';
  down = null;
});
</script></body></html>"""


async def run(handle, ctx: EpisodeContext, steps: list) -> list[Action]:
    taken: list[Action] = []
    async for action in run_steps(ctx, steps):
        taken.append(action)
        if not isinstance(action, Done):
            ctx.update(await handle.act(action))
    return taken


async def value(ctx: EpisodeContext, selector: str, prop: str = "value"):
    result = await ctx.query(DomQuery(selector=selector, prop=prop))  # type: ignore[arg-type]
    assert result.ok, result
    return result.value


async def test_steps_act_like_an_agent() -> None:
    config = {"isolation": "shared", "start_url": "data:text/html," + quote(PAGE)}
    async with open_local("browser", config) as handle:
        ctx = EpisodeContext(handle, await handle.reset(seed=0))

        taken = await run(handle, ctx, [{"fill": {"selector": "#q", "text": "new words", "submit": True}}])
        assert isinstance(taken[0], Scroll)  # the form starts below the fold
        assert await value(ctx, "#q") == "new words"
        assert await value(ctx, "#out", "text") == "sent:new words"

        await run(handle, ctx, [{"fill": {"selector": "#d", "text": "2026-03-05"}},
                                {"fill": {"selector": "#t", "text": "14:30"}},
                                {"fill": {"selector": "#dl", "text": "2026-12-24T09:05"}}])
        assert await value(ctx, "#d") == "2026-03-05"
        assert await value(ctx, "#t") == "14:30"
        assert await value(ctx, "#dl") == "2026-12-24T09:05"

        await run(handle, ctx, [{"select": {"selector": "#s", "option": "delta"}}])
        assert await value(ctx, "#s") == "delta"
        await run(handle, ctx, [{"select": {"selector": "#s", "option": "g"}}])  # by value
        assert await value(ctx, "#s") == "g"
        await run(handle, ctx, [{"select": {"selector": "#s", "option": "Alpha"}}])  # text, normalised
        assert await value(ctx, "#s") == "alpha"

        await run(handle, ctx, [{"click": {"selector": "button.b", "text": "two"}}])
        assert await value(ctx, "#clicked", "text") == "Two"
        await run(handle, ctx, [{"click": {"selector": "button.b", "index": -1}}])
        assert await value(ctx, "#clicked", "text") == "Three"

        await run(handle, ctx, [{"click": "#later"}, {"wait_for": "#late"}])
        assert await value(ctx, "#late", "text") == "here"

        taken = await run(handle, ctx, [{"drag": {"from": "#src", "to": "#dst"}}])
        assert any(isinstance(a, Drag) for a in taken)
        assert await value(ctx, "#dst", "text") == "dropped"

        with pytest.raises(OracleError, match="no element matches '#nope'"):
            await run(handle, ctx, [{"click": "#nope"}])
        with pytest.raises(OracleError, match="no option 'zeta'"):
            await run(handle, ctx, [{"select": {"selector": "#s", "option": "zeta"}}])
        with pytest.raises(OracleError, match="did not appear"):
            await run(handle, ctx, [{"wait_for": "#never", "timeout": 0.5}])

        taken = await run(handle, ctx, [{"press": "ctrl+a"}, {"type_text": "x"},
                                        {"done": {"answer": "42"}}])
        assert taken[-1] == Done(answer="42")


async def test_goto_resolves_a_path_against_the_current_page() -> None:
    config = {"isolation": "shared", "services": [
        {"name": "app", "argv": [__import__("sys").executable, "-m", "cua.tasks.apps.serve", "todo"]}],
        "start_url": "/"}
    async with open_local("browser", config) as handle:
        ctx = EpisodeContext(handle, await handle.reset(seed=0))
        await run(handle, ctx, [{"goto": "/search?q=dentist"}])
        url = (await ctx.query(UrlQuery())).value
        assert url.endswith("/search?q=dentist") and url.startswith("http://127.0.0.1:")


BUSY = """<!doctype html><html><body>
<button id="go" onclick="const b = document.createElement('div'); b.className = 'loading'; b.textContent = 'Loading';
  document.body.appendChild(b); setTimeout(() => { b.remove(); document.getElementById('ready').textContent = 'ready'; },
  600)">load</button>
<p id="ready"></p><p class="note" style="display:none">hidden note</p></body></html>"""


async def test_wait_for_gone_waits_until_no_match_is_shown() -> None:
    """An app that ignores input while it loads (a webmail's preview pane) is waited on by its
    loading indicator disappearing, never by a fixed pause."""
    config = {"isolation": "shared", "start_url": "data:text/html," + quote(BUSY)}
    async with open_local("browser", config) as handle:
        ctx = EpisodeContext(handle, await handle.reset(seed=0))
        await run(handle, ctx, [{"click": "#go"}, {"wait_for": ".loading"}, {"wait_for": ".loading", "gone": True}])
        assert await value(ctx, "#ready", "text") == "ready"
        assert await value(ctx, ".loading", "count") == 0
        await run(handle, ctx, [{"wait_for": ".note", "gone": True, "timeout": 0.5}])  # present but hidden: gone
        with pytest.raises(OracleError, match="was still shown"):
            await run(handle, ctx, [{"wait_for": "#go", "gone": True, "timeout": 0.5}])


FRAMED = """<!doctype html><html><body>
<iframe id="pane"></iframe>
<button id="open" onclick="setTimeout(() => { document.getElementById('pane').srcdoc =
  '<h2 id=header>Invoice 42</h2>'; }, 500)">open</button></body></html>"""


async def test_wait_for_looks_inside_a_frame() -> None:
    """A preview pane in an iframe of its own (a webmail's message view) is waited on by what
    it shows, not by a pause."""
    config = {"isolation": "shared", "start_url": "data:text/html," + quote(FRAMED)}
    async with open_local("browser", config) as handle:
        ctx = EpisodeContext(handle, await handle.reset(seed=0))
        await run(handle, ctx, [{"click": "#open"},
                                {"wait_for": {"selector": "#header", "text_contains": "invoice 42"}, "frame": "#pane"}])
        result = await ctx.query(DomQuery(selector="#header", prop="text", frame="#pane"))
        assert result.ok and result.value == "Invoice 42"
        with pytest.raises(OracleError, match="did not appear"):
            await run(handle, ctx, [{"wait_for": "#nothing", "frame": "#pane", "timeout": 0.5}])
