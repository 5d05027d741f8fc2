"""A task on a phone (`kind: mobile`): its template loads with the app as the phone's service
`app`, and its scripted oracle, written as for a browser (`click:`, `fill:`), acts by touch
on what is in front (the app's frame), in real Chromium: taps, and swipes inside the app to
bring a row below the fold into view, never a mouse action (which a phone refuses)."""

from __future__ import annotations

import pytest

from cua.actions import TOUCH_ONLY, Action, Done
from cua.episode import EpisodeContext
from cua.episode.local import open_local
from cua.state import AppStateQuery
from cua.tasks.loader import load_file, load_text

pytestmark = [pytest.mark.slow]

TEMPLATE = """
suite: mobile
templates:
  - id: mobile.probe_done@1
    instruction: 'Mark "{todo.title}" as done.'
    sandbox: {kind: mobile, app: todo, apps: [notes], config: {device: small_phone, orientation: landscape,
              start_app: app}}
    params:
      todo:
        type: rows
        sql: >-
          SELECT t.id, t.title, l.name AS list FROM todos t JOIN lists l ON l.id = t.list_id
          WHERE t.done = 0 AND t.list_id = (SELECT list_id FROM todos WHERE done = 0 GROUP BY list_id
          ORDER BY COUNT(*) DESC, list_id LIMIT 1) ORDER BY t.id DESC LIMIT 1
    judge:
      checks:
        - {check: done, get: {kind: app_state, path: "todos[id={todo.id}].done"}, expect: {op: equals, value: true}}
      expected_changes: ["todos[id={todo.id}].done"]
    oracle:
      - click: 'a[data-list="{todo.list}"]'
      - click: 'tr[data-id="{todo.id}"] input[data-action=toggle]'
"""


async def test_a_phone_oracle_taps_and_swipes_in_the_app() -> None:
    [template] = load_text(TEMPLATE, "probe.yaml")
    instance = template.instantiate(0)
    assert instance.sandbox_kind == "mobile"
    names = [s["name"] for s in instance.sandbox_config["services"]]
    assert names == ["app", "notes"] and instance.sandbox_config["labels"] == {"app": "Todo"}
    assert instance.oracle is not None
    async with open_local("mobile", {**instance.sandbox_config, "isolation": "shared"}) as handle:
        ctx = EpisodeContext(handle, await handle.reset(seed=instance.setup.seed))
        taken: list[Action] = []
        async for action in instance.oracle(ctx):
            taken.append(action)
            if not isinstance(action, Done):
                obs = await handle.act(action)
                assert obs.error is None, (action, obs.error)  # a mouse action would be refused here
                ctx.update(obs)
        kinds = [a.type for a in taken]
        assert set(kinds) <= TOUCH_ONLY, kinds
        assert kinds.count("tap") == 2 and "swipe" in kinds, kinds  # the row starts below the fold
        [state] = await handle.query([AppStateQuery()])
        [row] = [t for t in state.value["todos"] if t["id"] == instance.params["todo"]["id"]]
        assert row["done"] is True
        [shell] = await handle.query([AppStateQuery(service="shell")])
        assert shell.value["open_app"] == "app" and shell.value["screen"] == "app"


async def test_the_keyboard_is_put_away_to_reach_what_it_hides() -> None:
    """The calendar's new-event form on a phone: with the keyboard up after typing, Save lies
    under it and the dialog cannot scroll; the oracle presses Back (the keyboard goes) and taps
    Save, as a person would (before, it gave up: "could not scroll '#save-event' into view")."""
    [template] = [t for t in load_file("tasks/suites/mobile/apps.yaml", suite="mobile")
                  if t.id == "mobile.calendar_create_event@1"]
    instance = template.instantiate(0)
    assert instance.oracle is not None
    async with open_local("mobile", {**instance.sandbox_config, "isolation": "shared"}) as handle:
        obs = await handle.reset(seed=instance.setup.seed)
        ctx = EpisodeContext(handle, obs)
        before = await handle.query([AppStateQuery()])
        taken: list[Action] = []
        async for action in instance.oracle(ctx):
            taken.append(action)
            if not isinstance(action, Done):
                obs = await handle.act(action)
                assert obs.error is None, (action, obs.error)
                ctx.update(obs)
        assert any(a.type == "nav" for a in taken), [a.type for a in taken]
        [after] = await handle.query([AppStateQuery()])
        titles = [e["title"] for e in after.value["events"]]
        assert titles.count(instance.params["title"]) == len(
            [e for e in before[0].value["events"] if e["title"] == instance.params["title"]]) + 1
