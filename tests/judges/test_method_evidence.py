"""Method-named instructions (issue 29, defect class 8): an instruction that names how to do
something ("drag the card", "pick the date in the date picker", "in one bulk edit") is
judged on that method, from evidence only the UI produces -- the app's activity log says
which of its ways made the value (`cua.tasks.apps.activity.used_method`) -- or it names no
method at all. Here:

- every template of every suite is scanned: one whose instruction names a method must have
  a required check over the activity log's `methods` (the rule tasks/README.md states);
- the log's evidence cannot be forged by what an agent can do in a browser: a URL (GET), a
  form of an app page (no field names a method), a page of another origin (refused);
- in a real browser, each template that judges its method passes its oracle, and fails the
  same end state reached another way (its near miss, and more), with the method check the
  only one that fails.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from cua.actions import Action, Key
from cua.episode import OracleAgent, open_local, run_episode
from cua.episode.agent import AgentTurn, EpisodeContext
from cua.judges import spec as S
from cua.observation import Observation
from cua.state import DomQuery
from cua.task import TaskInstance
from cua.tasks.apps.base import build_asgi
from cua.tasks.apps.calendar import CalendarApp
from cua.tasks.apps.contacts import ContactsApp
from cua.tasks.apps.kanban import KanbanApp
from cua.tasks.loader import YamlTemplate
from cua.tasks.oracle import run_steps
from cua.tasks.registry import get_template, suites

#: Phrasings that name a way of doing something rather than what to achieve. Kept in one
#: place; tasks/README.md ("Method-named instructions") points here.
METHOD_PHRASES: tuple[str, ...] = (
    r"\busing\b", r"\bvia\b", r"\bdrag(?:s|ging|ged)?\b", r"\b(?:date|time|colou?r) picker\b", r"\bkeyboard\b",
    r"\bshortcut", r"\bhover", r"\bbulk\b", r"\bselect all\b", r"\bright[- ]click", r"\bdouble[- ]click",
    r"\bfrom the [\w ]{0,20}menu\b", r"\bcontext menu\b", r"\bby (?:clicking|pressing|typing|dragging|scrolling|using)\b",
    r"\bwithout (?:dragging|typing|clicking|using|scrolling)\b", r"\bscroll(?:ing)? (?:down )?to\b",
    r"\bin (?:a single|one) (?:\w+ )?(?:edit|step|action|go|request)\b",
    r"\bwith the (?:mouse|keyboard|slider|picker|spinner|search|filter)\b", r"\bcopy and paste\b", r"\bpaste it\b",
    r"\bsearch (?:box|bar)\b", r"\bthrough the\b",
)
_METHOD = re.compile("|".join(METHOD_PHRASES), re.IGNORECASE)

#: The templates that judge the method their instruction names.
JUDGED = ("kanban.drag_to_column@1", "kanban.move_from_dialog@1", "kanban.set_due_with_picker@1",
          "calendar.create_with_date_picker@1", "contacts.bulk_owner@1")


def method_named(text: str) -> str | None:
    """The first method phrasing in `text`, or None."""
    m = _METHOD.search(text)
    return m.group(0) if m else None


def _required_leaves(nodes: list[Any]) -> Iterator[S.CheckNode]:
    """The leaf checks a task must pass: under `all` only (not `any`, `not` or `weighted`)."""
    for node in nodes:
        if isinstance(node, S.CheckNode):
            yield node
        elif isinstance(node, S.AllNode):
            yield from _required_leaves(node.all)


def judges_method(spec: S.JudgeSpec) -> bool:
    """Whether a required check reads the activity log's method evidence."""
    return any(isinstance(leaf.get, S.SqlGetter) and "cua_activity" in leaf.get.query and "methods" in leaf.get.query
               for leaf in _required_leaves(spec.checks))


def test_the_method_phrasings_find_methods_and_leave_goals_alone() -> None:
    named = ["Using the file manager, create a folder.", "drag the card into Review", "Pick May 3 in its date picker",
             "give all three the owner in one bulk edit", "Without dragging, move it", "It is further down; scroll to it.",
             "Archive it via the hover button", "Open it from the File menu", "Set it with the slider and submit"]
    goals = ["Move the card into Review.", "Set the due date to May 3.", "Archive the email from Zane.",
             "Turn on the weekly report.", "Show only Trailhead products in the Outdoor category.",
             "How many posts mention burnout?", "Create a new folder named birch-drafts in your home folder."]
    assert [t for t in named if method_named(t) is None] == []
    assert {t: method_named(t) for t in goals if method_named(t) is not None} == {}


def test_every_instruction_that_names_a_method_is_judged_on_it() -> None:
    """The rule: a template whose instruction names a method has a required check over the
    activity log's method evidence. A template whose instruction is its page's own words
    (`setup.instruction_query`: MiniWoB's utterance, judged by MiniWoB's own reward) is the
    benchmark's task as published, and not ours to reword (tasks/miniwob/README.md)."""
    offenders, judged = [], []
    for suite in suites().values():
        for template in suite.templates.values():
            assert isinstance(template, YamlTemplate), f"{template.id}: not a task file's template"
            spec = template.spec
            if spec.setup.instruction_query is not None:
                continue
            phrase = method_named(spec.instruction)
            if phrase is None:
                continue
            if judges_method(spec.judge):
                judged.append(template.id)
            else:
                offenders.append(f"{template.id}: names a method ({phrase!r}) that no check judges: {spec.instruction!r}")
    assert offenders == [], "\n".join(offenders)
    assert sorted(judged) == sorted(JUDGED)


def test_a_template_with_method_evidence_names_its_method() -> None:
    """The converse: a check over the method evidence belongs to an instruction that asks for the method."""
    for template_id in JUDGED:
        spec = get_template(template_id).spec
        assert judges_method(spec.judge) and method_named(spec.instruction), template_id


# --- what an agent can and cannot make the log say (in process, through the app host's guard) ---

PAGE = "http://127.0.0.1:8000"


def _methods(client: TestClient, app: Any) -> list[str]:
    return [m for row in app.db.read_only_query("SELECT methods FROM cua_activity ORDER BY seq", [])
            for m in json.loads(row["methods"])]


def test_kanban_moves_say_how_they_were_made_and_no_form_or_url_can_claim_a_drag() -> None:
    app = KanbanApp()
    client = TestClient(build_asgi(app), base_url=PAGE)
    card = app.db.one("SELECT id, column_id FROM cards ORDER BY id")
    assert card is not None
    other = app.db.scalar("SELECT id FROM columns WHERE board_id = (SELECT board_id FROM cards WHERE id = ?) AND id != ? "
                          "ORDER BY position", (card["id"], card["column_id"]))
    cid = card["id"]
    own = {"origin": PAGE}
    # a form post to the script's route (what a form of any page could send) is refused, and so is a GET
    assert client.post(f"/api/cards/{cid}/move", data={"column_id": other, "position": 0, "via": "drag"},
                       headers=own).status_code == 415
    assert client.get(f"/api/cards/{cid}/move?column_id={other}&via=drag").status_code == 405
    # another origin's page may not send it either (the app host's guard)
    assert client.post(f"/api/cards/{cid}/move", json={"column_id": other, "position": 0, "via": "drag"},
                       headers={"origin": "null"}).status_code == 403
    assert client.post(f"/api/cards/{cid}/move", json={"column_id": other, "position": 0, "via": "teleport"},
                       headers=own).status_code == 400
    assert _methods(client, app) == []
    # the card's Move form says dialog, however its fields are filled
    assert client.post(f"/cards/{cid}/move", data={"column_id": other, "position": "1", "via": "drag"},
                       headers=own, follow_redirects=False).status_code == 303
    said = _methods(client, app)
    assert f"dialog cards[id={cid}].column_id" in said and all(m.startswith("dialog ") for m in said), said
    # the board's script says which gesture; a move that changes nothing records nothing
    before = len(_methods(client, app))
    assert client.post(f"/api/cards/{cid}/move", json={"column_id": card["column_id"], "position": 0, "via": "keyboard"},
                       headers=own).status_code == 200
    assert f"keyboard cards[id={cid}].column_id" in _methods(client, app)[before:]
    assert client.post(f"/api/cards/{cid}/move", json={"column_id": card["column_id"], "position": 0, "via": "drag"},
                       headers=own).status_code == 200
    assert not any(m.startswith("drag") for m in _methods(client, app))


def test_a_date_is_the_date_pickers_only_when_its_field_says_so_and_only_when_it_changes() -> None:
    app = KanbanApp()
    client = TestClient(build_asgi(app), base_url=PAGE)
    cid = app.db.scalar("SELECT id FROM cards WHERE due IS NULL ORDER BY id")
    own = {"origin": PAGE}
    save = {"title": "T", "due": "2026-03-07"}
    assert client.post(f"/cards/{cid}", data=save, headers=own, follow_redirects=False).status_code == 303
    assert client.post(f"/cards/{cid}", data={**save, "due_via": "date_picker"}, headers=own,
                       follow_redirects=False).status_code == 303  # the same date again: nothing set, nothing said
    assert client.post(f"/cards/{cid}", data={**save, "due": "2026-03-09", "due_via": "picked!"}, headers=own,
                       follow_redirects=False).status_code == 303
    assert client.post(f"/cards/{cid}", data={**save, "due": "2026-03-10", "due_via": "date_picker"},
                       headers={"origin": "http://127.0.0.1:9999"}).status_code == 403
    assert _methods(client, app) == [f"form cards[id={cid}].due", f"form cards[id={cid}].due"]
    assert client.post(f"/cards/{cid}", data={**save, "due": "2026-03-10", "due_via": "date_picker"}, headers=own,
                       follow_redirects=False).status_code == 303
    assert _methods(client, app)[-1] == f"date_picker cards[id={cid}].due"


def test_calendar_and_contacts_record_their_methods() -> None:
    cal = CalendarApp()
    client = TestClient(build_asgi(cal), base_url=PAGE)
    own = {"origin": PAGE}
    event = {"title": "Method test", "date": "2026-03-08", "start": "11:00", "end": "12:00", "calendar": "Work", "recur": "none"}
    assert client.post("/event/new", data={**event, "date_via": "date_picker"}, headers=own,
                       follow_redirects=False).status_code == 303
    eid = cal.db.scalar("SELECT id FROM events WHERE title = 'Method test'")
    assert client.post(f"/event/{eid}/edit", data={**event, "date": "2026-03-09"}, headers=own,
                       follow_redirects=False).status_code == 303
    assert _methods(client, cal) == [f"date_picker events[id={eid}].date", f"form events[id={eid}].date"]
    # the form shown again after an error keeps what the picker did (the value came from a real pick)
    page = client.post("/event/new", data={**event, "title": "", "date_via": "date_picker"}, headers=own).text
    assert 'name="date_via" class="dp-via" value="date_picker"' in page
    page = client.post("/event/new", data={**event, "title": "", "date_via": "forged"}, headers=own).text
    assert 'name="date_via" class="dp-via" value=""' in page

    crm = ContactsApp()
    client = TestClient(build_asgi(crm), base_url=PAGE)
    ids = [r["id"] for r in crm.db.all("SELECT id FROM contacts ORDER BY id LIMIT 2")]
    owner = crm.db.scalar("SELECT id FROM owners WHERE id NOT IN (SELECT owner_id FROM contacts WHERE id IN (?, ?)) "
                          "ORDER BY id", ids)
    assert client.post("/contacts/bulk", data={"ids": [str(i) for i in ids], "op": "owner", "owner_id": str(owner)},
                       headers=own, follow_redirects=False).status_code == 303
    assert _methods(client, crm) == [f"bulk_edit contacts[id={i}].owner_id" for i in ids]


# --- in a real browser: the method's evidence comes from the UI, and only from it ---

class StepsAgent:
    """Plays steps in the task-file vocabulary (as an oracle does), filled from the task's params."""

    name = "steps"

    def __init__(self, steps: list[Any]) -> None:
        self.steps = steps
        self._actions: AsyncIterator[Action] | None = None

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        self._actions = run_steps(ctx, self.steps, instance.params)

    async def turn(self, observation: Observation) -> AgentTurn:
        assert self._actions is not None
        try:
            return AgentTurn(actions=[await anext(self._actions)])
        except StopAsyncIteration:
            return AgentTurn()


#: Other ways to the oracle's end state that skip (or undo) the named method, per template.
OTHER_WAYS: dict[str, dict[str, list[Any]]] = {
    "kanban.drag_to_column@1": {  # and the keyboard's Alt+arrows (KeyboardMoveAgent)
        # dragged into the wrong column, then moved by the form to the right one
        "drag then form": [
            {"click": 'a.board-tile[href="/b/{c.board_id}"]'},
            {"drag": {"from": '.kcard[data-id="{c.id}"]', "to": '.kcol[data-column-id="{wrong.id}"] h2'}},
            {"wait_for": '.kboard:not([aria-busy])'},
            {"click": '.kcard[data-id="{c.id}"]'},
            {"select": {"selector": "#move-column", "option": "{dst.name}"}},
            {"fill": {"selector": "#move-position", "text": "1"}},
            {"click": "#move-card"}],
    },
    "kanban.move_from_dialog@1": {
        # dragged into the column, then put second with the form
        "drag then form": [
            {"click": 'a.board-tile[href="/b/{c.board_id}"]'},
            {"drag": {"from": '.kcard[data-id="{c.id}"]', "to": '.kcol[data-column-id="{dst.id}"] h2'}},
            {"wait_for": '.kboard:not([aria-busy])'},
            {"click": '.kcard[data-id="{c.id}"]'},
            {"select": {"selector": "#move-column", "option": "{dst.name}"}},
            {"fill": {"selector": "#move-position", "text": "2"}},
            {"click": "#move-card"}],
    },
    "kanban.set_due_with_picker@1": {
        # a day picked, then the date typed over it
        "pick then type": [
            {"click": 'a.board-tile[href="/b/{c.board_id}"]'},
            {"click": '.kcard[data-id="{c.id}"]'},
            {"click": "#due ~ .dp-toggle"},
            {"click": ".dp-pop .dp-day.today"},
            {"fill": {"selector": "#due", "text": "{due.iso}"}},
            {"click": "#save-card"}],
    },
    "calendar.create_with_date_picker@1": {
        # the day's own "+" link: the date comes prefilled, never picked
        "day link": [
            {"goto": "/month/2026-03"},
            {"click": '.day[data-date="{day.iso}"] a.add'},
            {"fill": {"selector": "input[name=title]", "text": "{title}"}},
            {"fill": {"selector": "#start", "text": "{start}"}},
            {"fill": {"selector": "#end", "text": "{end}"}},
            {"select": {"selector": "select[name=calendar]", "option": "{cal}"}},
            {"click": "#save-event"}],
    },
    "contacts.bulk_owner@1": {},
}


class KeyboardMoveAgent:
    """Moves the task's card `c` into column `dst` with Alt+arrows on the focused card, as a
    keyboard user does: the board filtered to the card, Tab until the card has focus."""

    name = "keyboard"

    def __init__(self) -> None:
        self._actions: AsyncIterator[Action] | None = None

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        self._actions = self._play(instance, ctx)

    async def _play(self, instance: TaskInstance, ctx: EpisodeContext) -> AsyncIterator[Action]:
        p = instance.params
        app = KanbanApp()
        app.reset(instance.reset_seed)
        cols = [r["id"] for r in app.db.all("SELECT id FROM columns WHERE board_id = ? ORDER BY position",
                                            (p["c"]["board_id"],))]
        shift = cols.index(int(p["dst"]["id"])) - cols.index(int(p["c"]["column_id"]))
        async for action in run_steps(ctx, [{"goto": f"/b/{p['c']['board_id']}?q={quote(str(p['c']['title']))}"}]):
            yield action
        card = f'.kcard[data-id="{p["c"]["id"]}"]:focus'
        for _ in range(40):
            result = await ctx.query(DomQuery(selector=card, prop="count"))
            if result.ok and result.value:
                break
            yield Key(keys=["Tab"])
        else:
            raise AssertionError("the card never took the focus")
        for _ in range(abs(shift)):
            yield Key(keys=["alt", "ArrowRight" if shift > 0 else "ArrowLeft"])
            async for action in run_steps(ctx, [{"wait_for": ".kboard:not([aria-busy])"}]):
                yield action

    async def turn(self, observation: Observation) -> AgentTurn:
        assert self._actions is not None
        try:
            return AgentTurn(actions=[await anext(self._actions)])
        except StopAsyncIteration:
            return AgentTurn()


async def _verdicts(template_id: str) -> dict[str, Any]:
    instance = get_template(template_id).instantiate(1)
    out: dict[str, Any] = {}
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        out["oracle"] = (await run_episode(handle, instance, OracleAgent())).verdict
        out["near_miss"] = (await run_episode(handle, instance, OracleAgent("near_miss"))).verdict
        # a detour takes more steps than the task's budget: the budget is not what fails it
        for name, steps in OTHER_WAYS[template_id].items():
            out[name] = (await run_episode(handle, instance, StepsAgent(steps), max_steps=100)).verdict
        if template_id == "kanban.drag_to_column@1":
            out["keyboard"] = (await run_episode(handle, instance, KeyboardMoveAgent(), max_steps=100)).verdict
    return out


#: Templates whose near miss is their method's: the oracle's end state, reached another way.
METHOD_NEAR_MISS = {"kanban.drag_to_column@1", "kanban.set_due_with_picker@1", "calendar.create_with_date_picker@1",
                    "contacts.bulk_owner@1"}


@pytest.mark.slow
@pytest.mark.parametrize("template_id", JUDGED)
def test_the_method_passes_and_the_same_end_state_another_way_fails(template_id: str) -> None:
    verdicts = asyncio.run(_verdicts(template_id))
    oracle = verdicts.pop("oracle")
    assert oracle is not None and oracle.passed, oracle
    near_miss = verdicts.pop("near_miss")
    assert near_miss is not None and not near_miss.passed, near_miss
    if template_id in METHOD_NEAR_MISS:
        verdicts["near_miss"] = near_miss
    assert verdicts, "every judged method is attacked by at least one other way"
    for name, verdict in verdicts.items():
        assert verdict is not None and not verdict.passed, (name, verdict)
        failed = [e.check for e in verdict.evidence if not e.passed and not e.check.startswith("subgoal")]
        assert len(failed) == 1 and "method evidence" in failed[0], (name, failed, verdict.violations)
        assert verdict.violations == [], (name, verdict.violations)
