"""In-page reset: a page that offers `window.__cuaRestart` (MiniWoB's tasks, through the
shim) starts its next episode without a reload, and what the agent and the judge then see
is what a fresh load of the same start URL shows."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from cua.actions import Click
from cua.episode import OracleAgent, gather_state, open_local, run_episode
from cua.state import DomQuery
from cua.tasks.registry import get_template

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("chromium-headless-shell") is None,
                                 reason="needs bubblewrap and chromium-headless-shell")]

#: What identifies a document: it changes on a load, never on an in-page restart.
_DOCUMENT = "() => performance.timeOrigin"
#: The task's drawn problem, the HUD and the shim's report, as the agent and judge read them.
_SCREEN = """() => [document.getElementById('query').textContent, document.getElementById('area').innerHTML,
  document.getElementById('reward-display').innerText, document.getElementById('timer-countdown').textContent,
  document.getElementById('sync-task-cover').style.display, document.activeElement === document.body,
  Array.from(document.getElementById('cua-wob').attributes).map((a) => a.name + '=' + a.value).sort().join(' ')]"""


def _start(instance: Any) -> dict[str, Any]:
    return {"start_url": instance.sandbox_config["start_url"]}


async def test_miniwob_restarts_in_page_as_a_fresh_load_shows() -> None:
    template = get_template("miniwob.click_button@1")
    a, b = template.instantiate(0), template.instantiate(1)
    async with open_local(a.sandbox_kind, a.sandbox_config) as handle:
        sb = handle.sandbox
        await handle.reset(seed=a.reset_seed, options={**_start(a), "reload": True})
        fresh_doc = await sb.page.evaluate(_DOCUMENT)
        fresh = await sb.page.evaluate(_SCREEN)
        # an episode played to its end (MiniWoB then shows its end screen)
        record = await run_episode(handle, b, OracleAgent("oracle"))
        assert record.verdict is not None and record.verdict.passed
        assert await sb.page.evaluate(_DOCUMENT) == fresh_doc  # b's reset restarted in the page too
        obs = await handle.reset(seed=a.reset_seed, options=_start(a))
        assert await sb.page.evaluate(_DOCUMENT) == fresh_doc  # no load
        assert obs.url.endswith(a.sandbox_config["start_url"]) and obs.settle is not None and obs.settle.settled
        assert await sb.page.evaluate(_SCREEN) == fresh
        # the service opened a new episode: the judge sees it, and it ends only once
        (row,) = (await gather_state(handle, list(a.judge.queries()))).values()
        assert row.ok and row.value and row.value[0]["done"] == 0 and row.value[0]["loads"] == 1
        record = await run_episode(handle, a, OracleAgent("oracle"))
        assert record.verdict is not None and record.verdict.passed and record.ended


async def test_a_wrong_answer_still_ends_the_restarted_episode_and_a_reload_gets_no_second_try() -> None:
    template = get_template("miniwob.click_button@1")
    a = template.instantiate(2)
    async with open_local(a.sandbox_kind, a.sandbox_config) as handle:
        sb = handle.sandbox
        await handle.reset(seed=a.reset_seed, options=_start(a))
        await handle.reset(seed=a.reset_seed, options=_start(a))  # in page
        box = await sb.page.evaluate("() => { const r = document.getElementById('query').getBoundingClientRect();"
                                     " return [r.x + r.width / 2, r.y + r.height / 2]; }")
        await handle.act(Click(x=box[0], y=box[1]))  # the request text: not a button, no end
        buttons = await sb.page.evaluate("() => Array.from(document.querySelectorAll('#area button')).map((b) => {"
                                         " const r = b.getBoundingClientRect(); return [b.textContent,"
                                         " r.x + r.width / 2, r.y + r.height / 2]; })")
        utterance = await sb.page.evaluate("() => document.getElementById('query').textContent")
        wrong = next(b for b in buttons if b[0] not in utterance)
        await handle.act(Click(x=wrong[1], y=wrong[2]))
        (row,) = (await gather_state(handle, list(a.judge.queries()))).values()
        assert row.value[0]["done"] == 1 and row.value[0]["raw_reward"] == -1
        # the old episode's timers are gone: the end screen stays, the first end stands
        (cover,) = await handle.query([DomQuery(selector="#sync-task-cover", prop="attr", attr="data-cua")])
        assert cover.value == "episode-over"
        await handle.reset(seed=a.reset_seed, options={**_start(a), "reload": True})
        (row,) = (await gather_state(handle, list(a.judge.queries()))).values()
        assert row.value[0]["done"] == 0  # a reset opens a new episode, reloaded or not
