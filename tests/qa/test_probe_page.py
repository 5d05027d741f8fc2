"""Judge QA's `page` probes (`cua.qa.probe_page`) in real Chromium on the real bundled
apps: state probes written into the live app and the page reloaded, so that a judge which
reads only the page is attacked too.

A judge that reads only the page is out of the in-process probes' reach (they cannot
re-render a page); the page probes must catch the one that reads too little of it (any
row of the list showing the new title passes, so the title moved to a sibling passes),
and not the one that reads the target's own row there. Real templates whose checks read the
page count the class; the sandbox is left showing the oracle's end for what runs next.
"""

from __future__ import annotations

import asyncio
import shutil
import textwrap

import pytest

from cua.episode.local import open_local
from cua.errors import BadRequest
from cua.qa.check import check_templates
from cua.qa.probe_page import KIND, MAX_PAGE_PROBES, reads_page
from cua.tasks.loader import load_text
from cua.tasks.selection import selected_templates

pytestmark = [pytest.mark.slow,  # Chromium and the todo and shop apps
              pytest.mark.skipif(not (shutil.which("chromium-headless-shell") or shutil.which("chromium")),
                                 reason="needs Chromium")]

_RENAME = """
    instruction: Rename the todo "{todo.title}" to "{new}".
    params:
      todo:  # a done todo (shown only under the list's "All") whose title no other todo has: the nearest
        # sibling to move the change to is then in the same list, which the oracle's end page shows whole
        type: rows
        sql: SELECT id, title, list_id FROM todos t WHERE done = 1
          AND (SELECT COUNT(*) FROM todos u WHERE u.title = t.title) = 1 ORDER BY id
      new: {type: string, values: [Call the dentist back]}
    oracle:
      - click: {selector: 'header nav a', text: Search}
      - fill: {selector: 'input[name=q]', text: "{todo.title}", submit: true}
      - click: {selector: 'a.title', text: "{todo.title}"}
      - fill: {selector: 'input[name=title]', text: "{new}"}
      - click: {selector: 'button.primary', text: Save}
      - click: {selector: 'a.filter', text: All}
    near_miss:
      - done: {}
"""

PAGE_ONLY = f"""
suite: qa
defaults:
  sandbox: {{kind: browser, app: todo, start_url: /, isolation: shared}}
  tags: {{app: todo}}
templates:
  - id: qa.page_weak@1{_RENAME}
    judge:
      side_effects: false
      checks:  # any row of the list page showing the new title passes
        - {{check: the list shows the new title, get: {{kind: dom, selector: table}}, expect: {{op: contains, value: "{{new}}"}}}}
  - id: qa.page_row@1{_RENAME}
    judge:
      side_effects: false
      checks:  # the target's own row
        - {{check: the row shows the new title, get: {{kind: dom, selector: 'tr[data-id="{{todo.id}}"] a.title'}},
           expect: {{op: text, value: "{{new}}"}}}}
"""


def test_a_page_only_judge_is_attacked_where_the_in_process_probes_cannot_reach() -> None:
    templates = load_text(textwrap.dedent(PAGE_ONLY), "qa.yaml", suite="qa")
    assert all(reads_page(t.instantiate(0)) for t in templates)
    report = asyncio.run(check_templates(templates, seeds=[0]))
    by_id = {t.template_id: t for t in report.templates}
    weak, row = by_id["qa.page_weak@1"], by_id["qa.page_row@1"]
    for t in (weak, row):  # the in-process probes cannot judge a page: they say so and do not run
        assert "wrong_target" not in t.probes_ran and "reads no state of service 'app'" in t.probes_skipped["wrong_target"]
        assert t.probes_ran[KIND] == 1 + MAX_PAGE_PROBES  # the oracle's end replayed, then the probes
        assert {f.stage for f in t.failures} <= {f"probe:{KIND}"}, [f.lines() for f in t.failures]
    page = [f for f in weak.failures if f.stage == f"probe:{KIND}"]
    assert any(f.reason.startswith("passes with the page reloaded on it: wrong_target: ") for f in page), page
    assert any(e["check"] == "the list shows the new title" and e["passed"] for f in page for e in f.evidence)
    # the row's own title is read: the change moved to a sibling, or the title miswritten, fails
    assert not [f for f in row.failures if "wrong_target" in f.reason or "partial" in f.reason]
    lines = weak.probe_lines()
    assert lines[0].startswith("    probes ran: ") and f"{KIND}=" in lines[0]
    assert report.to_json()["templates"][0]["probes_ran"][KIND] >= 2


def test_real_templates_that_read_the_page_count_page_probes() -> None:
    wanted = ("todo.open_list@1", "shop.sort_by_price_desc@1", "todo.mark_done@1")
    templates = [t for t in selected_templates(["todo", "shop"]) if t.id in wanted]
    report = asyncio.run(check_templates(templates, seeds=[0], isolation="shared", parallel=2))
    by_id = {t.template_id: t for t in report.templates}
    assert set(by_id) == set(wanted)
    for tid in wanted:
        assert by_id[tid].failures == [], [f.lines() for f in by_id[tid].failures]
    for tid in ("todo.open_list@1", "shop.sort_by_price_desc@1"):
        assert by_id[tid].probes_ran[KIND] == 1 + MAX_PAGE_PROBES, by_id[tid].probes_ran
        # the forged signals ran after the page probes, from the oracle's own end (restored)
        assert by_id[tid].probes_ran.get("forged_signal", 0) > 0
    # a judge whose checks read no page: the class says why it did not run
    mark = by_id["todo.mark_done@1"]
    assert KIND not in mark.probes_ran and "no check reads the page" in mark.probes_skipped[KIND]


def test_put_service_image_refuses_a_service_the_sandbox_does_not_run() -> None:
    instance = load_text(textwrap.dedent(PAGE_ONLY), "qa.yaml", suite="qa")[0].instantiate(0)

    async def go() -> None:
        async with open_local("browser", instance.sandbox_config) as handle:
            with pytest.raises(BadRequest, match="no service 'nope'"):
                await handle.put_service_image("nope", b"not a database")
            assert handle.alive

    asyncio.run(go())
