"""A long note on a phone on its side (issue 32: notes as long as a real notebook's): the
editor grows with the note, so a swipe over it scrolls the page and brings the note's
actions below it into view. Before, the editor was a box of at most 420 px that scrolled by
itself: the finger's swipe scrolled the box, the page stayed put, and a scripted Pin could not
be reached ("could not scroll 'button' text='Pin' into view")."""

from __future__ import annotations

import pytest

from cua.actions import Action, Done
from cua.episode import EpisodeContext
from cua.episode.local import open_local
from cua.state import AppStateQuery
from cua.tasks.loader import load_text

pytestmark = [pytest.mark.slow]

TEMPLATE = """
suite: mobile
templates:
  - id: mobile.probe_pin_long_note@1
    instruction: 'Pin the note "{note.title}".'
    sandbox: {kind: mobile, app: notes, config: {device: pixel_5, orientation: landscape, start_app: app}}
    params:
      note: {type: rows, sql: "SELECT id, title FROM notes WHERE pinned = 0 ORDER BY length(body) DESC, id LIMIT 1"}
    judge:
      checks:
        - {check: pinned, get: {kind: app_state, path: "notes[id={note.id}].pinned"}, expect: {op: equals, value: true}}
      expected_changes: ["notes[id={note.id}].pinned"]
    oracle:
      - click: {selector: header nav a, text: Search}
      - fill: {selector: 'input[name=q]', text: '{note.title}', submit: true}
      - click: '.note-item[data-id="{note.id}"] a'
      - click: 'button[data-action=pin]'
"""


async def test_a_swipe_over_a_long_note_scrolls_the_page_to_its_actions() -> None:
    [template] = load_text(TEMPLATE, "probe.yaml")
    instance = template.instantiate(0)
    assert instance.oracle is not None
    async with open_local("mobile", {**instance.sandbox_config, "isolation": "shared"}) as handle:
        ctx = EpisodeContext(handle, await handle.reset(seed=instance.setup.seed))
        taken: list[Action] = []
        async for action in instance.oracle(ctx):
            taken.append(action)
            if not isinstance(action, Done):
                obs = await handle.act(action)
                assert obs.error is None, (action, obs.error)
                ctx.update(obs)
        assert "swipe" in [a.type for a in taken]  # the actions start below the fold, under the note
        [state] = await handle.query([AppStateQuery()])
        [note] = [n for n in state.value["notes"] if n["id"] == instance.params["note"]["id"]]
        assert note["pinned"] is True
