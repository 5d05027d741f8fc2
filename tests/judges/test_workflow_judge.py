"""A workflow's judge (suite workflows): ordered checkpoints give partial credit in order
only, and never the full credit a pass gets; each other app the task runs is diffed apart,
so damage there fails the task; completeness holds each app's allowances to the checks that
read that app; the loader refuses apps it cannot run."""

from __future__ import annotations

from typing import Any

import pytest

from cua.judges.judge import HISTORY_SQL, StateJudge
from cua.judges.spec import JudgeSpec
from cua.launcher import origins, page_url
from cua.state import AppStateQuery, SqlQuery, StateResult
from cua.task import JudgeInput, query_key
from cua.tasks.format import TaskFormatError
from cua.tasks.loader import load_text


def _check(name: str, service: str, path: str, value: Any) -> dict[str, Any]:
    return {"check": name, "get": {"kind": "app_state", "service": service, "path": path},
            "expect": {"op": "equals", "value": value}}


SPEC = JudgeSpec.model_validate({
    "checkpoints": True,
    "subgoals": [_check("a", "app", "a", 1), _check("b", "cal", "b", 1), _check("c", "app", "c", 1)],
    "checks": [_check("a", "app", "a", 1), _check("b", "cal", "b", 1), _check("c", "app", "c", 1)],
    "expected_changes": ["a", "c"],
    "apps": {"cal": {"expected_changes": ["b"]}},
})
START = {"app": {"a": 0, "c": 0}, "cal": {"b": 0, "x": 0}}


def _judge_input(judge: StateJudge, end: dict[str, dict[str, Any]]) -> JudgeInput:
    def read(state: dict[str, dict[str, Any]]) -> dict[str, StateResult]:
        out = {}
        for q in judge.queries():
            if isinstance(q, AppStateQuery):
                out[query_key(q)] = StateResult(value=state[q.service])
            elif isinstance(q, SqlQuery) and q.query == HISTORY_SQL:
                out[query_key(q)] = StateResult(value=[])
        return out
    return JudgeInput(initial=read(START), final=read(end))


@pytest.mark.parametrize(("app", "cal", "passed", "credit"), [
    ({"a": 1, "c": 1}, {"b": 1, "x": 0}, True, 1.0),
    ({"a": 1, "c": 0}, {"b": 1, "x": 0}, False, 2 / 3),
    ({"a": 0, "c": 1}, {"b": 1, "x": 0}, False, 0.0),  # later checkpoints without the first: none in order
    ({"a": 1, "c": 1}, {"b": 0, "x": 0}, False, 1 / 3),
    ({"a": 1, "c": 1}, {"b": 1, "x": 1}, False, 2 / 3),  # every checkpoint, damage in the other app: short of 1
])
def test_credit_counts_checkpoints_in_order_and_the_other_app_is_diffed(
        app: dict[str, Any], cal: dict[str, Any], passed: bool, credit: float) -> None:
    judge = StateJudge(SPEC, side_effects=True)
    verdict = judge.evaluate(_judge_input(judge, {"app": app, "cal": cal}))
    assert verdict.passed is passed and verdict.credit == pytest.approx(credit), verdict
    if cal["x"]:
        assert [v for v in verdict.violations if v.startswith("cal: ")], verdict.violations


def test_a_judge_without_checkpoints_reports_no_credit() -> None:
    judge = StateJudge(JudgeSpec.model_validate({"checks": [_check("a", "app", "a", 1)]}))
    assert judge.evaluate(_judge_input(judge, {"app": {"a": 1, "c": 0}, "cal": {}})).credit is None


def test_the_apps_page_names_each_app_and_gives_its_origin_back() -> None:
    url = page_url({"mail": "http://127.0.0.1:4001", "phone_settings": "http://127.0.0.1:4002"})
    assert origins(url) == {"mail": "http://127.0.0.1:4001", "phone_settings": "http://127.0.0.1:4002"}
    assert origins("data:text/html,<a href=\"http://evil:1/\" data-app=\"mail\">") == {}


WORKFLOW = """
suite: workflows
templates:
  - id: workflows.probe@1
    instruction: Star a message, then add an event.
    sandbox: {SANDBOX}
    judge:
      checks:
        - {check: starred, get: {kind: app_state, path: "messages[id=1].starred"}, expect: {op: equals, value: true}}
        - {check: added, get: {kind: sql, service: calendar, query: "SELECT date, start FROM events WHERE title = 'X'"},
           expect: {op: table, rows: [{date: "2026-03-03", start: null}]}}
      expected_changes: ["messages[id=1].starred"]
      apps: {APPS}
    oracle: [{goto: "app:calendar/"}]
"""


def _load(sandbox: str, apps: str) -> list[Any]:
    return load_text(WORKFLOW.replace("{SANDBOX}", sandbox).replace("{APPS}", apps), "probe.yaml")


def test_each_apps_allowances_are_read_by_checks_of_that_app() -> None:
    [template] = _load("{kind: browser, app: mail, apps: [calendar]}",
                       "{calendar: {expected_changes: [\"events[title=X].start\"]}}")
    instance = template.instantiate(0)
    assert instance.sandbox_config["start_url"] == "about:apps"
    assert instance.sandbox_config["launcher_names"] == {"app": "mail"}
    with pytest.raises(TaskFormatError) as caught:  # the check reads the event's date and start, not its end
        _load("{kind: browser, app: mail, apps: [calendar]}",
              "{calendar: {expected_changes: [\"events[title=X].start\", \"events[title=X].end\"]}}")
    assert any("judge.apps.calendar" in p.field for p in caught.value.problems), caught.value.problems


def test_an_app_left_out_of_judge_apps_may_change_nothing() -> None:
    [template] = _load("{kind: browser, app: mail, apps: [calendar, todo]}",
                       "{calendar: {expected_changes: [\"events[title=X].start\"]}}")
    spec = template.instantiate(0).judge.spec
    assert set(spec.apps) == {"calendar", "todo"} and spec.apps["todo"].expected_changes == []


@pytest.mark.parametrize(("sandbox", "apps", "field"), [
    ("{kind: browser, app: mail, apps: [calendar]}", "{todo: {}}", "judge.apps.todo"),
    ("{kind: browser, app: mail, apps: [mail]}", "{}", "sandbox.apps"),
    ("{kind: desktop, apps: [calendar]}", "{}", "sandbox.apps"),
])
def test_a_workflow_that_cannot_run_is_refused_by_field(sandbox: str, apps: str, field: str) -> None:
    with pytest.raises(TaskFormatError) as caught:
        _load(sandbox, apps)
    assert any(p.field.endswith(field) for p in caught.value.problems), caught.value.problems


def test_every_workflow_spans_apps_reads_each_and_scores_five_ordered_checkpoints() -> None:
    from cua.tasks.registry import suites

    templates = list(suites()["workflows"].templates.values())
    assert len(templates) >= 30
    test_split = 0
    for template in templates:
        spec, instance = template.spec, template.instantiate(0)
        apps = [spec.sandbox.app, *spec.sandbox.apps]
        assert len(apps) >= 2 and set(instance.tags.apps) == set(apps), template.id
        assert spec.judge.checkpoints and len(spec.judge.subgoals) >= 5, template.id
        assert instance.tags.tier in (3, 4) and instance.tags.app == "workflow", template.id
        read = {q.service for q in instance.judge.queries() if isinstance(q, (AppStateQuery, SqlQuery))}
        assert read == {"app", *spec.sandbox.apps}, (template.id, read)
        assert spec.near_miss is not None, template.id
        test_split += instance.tags.split == "test"
    assert 0.2 <= test_split / len(templates) <= 0.34


# ---- a workflow's other app, edited: judge QA's database probes edit only the first app's
# database, so these cases prove the strict diffs of the second app on real app state (each
# app served in process, its writes logged by its own activity log as a route's would be).

Writes = list[tuple[str, tuple[Any, ...]]]


def _apps_of(instance: Any) -> dict[str, Any]:
    """Each service of the workflow's sandbox: its bundled app, reset to the instance's seed."""
    from cua.tasks.apps import load_app

    apps = {}
    for service in instance.sandbox_config["services"]:
        app = load_app(service["app_host"]["app"])
        app.reset(instance.seed)
        apps[service["name"]] = app
    return apps


def _read(judge: StateJudge, apps: dict[str, Any]) -> dict[str, StateResult]:
    """What the sandbox answers each of the judge's reads with (state JSON, read-only SQL)."""
    out = {}
    for q in judge.queries():
        if isinstance(q, AppStateQuery):
            out[query_key(q)] = StateResult(value=apps[q.service].state())
        elif isinstance(q, SqlQuery):
            out[query_key(q)] = StateResult(value=apps[q.service].db.read_only_query(q.query, q.params))
    return out


def _write(app: Any, *requests: Writes) -> None:
    """Each request's statements as one logged write, as the app's routes make them."""
    for statements in requests:
        app.activity.begin()
        for sql, params in statements:
            app.db.execute(sql, params)
        app.activity.end("POST /test")


def _verdict(template_id: str, seed: int, writes: dict[str, list[Writes]]) -> Any:
    instance = get_template(template_id).instantiate(seed)
    apps = _apps_of(instance)
    judge = instance.judge
    assert isinstance(judge, StateJudge)
    initial = _read(judge, apps)
    for service, requests in writes.items():
        _write(apps[service], *requests)
    return judge.evaluate(JudgeInput(initial=initial, final=_read(judge, apps)))


def get_template(template_id: str) -> Any:
    from cua.tasks.registry import get_template as get

    return get(template_id)


def _params(template_id: str, seed: int) -> dict[str, Any]:
    return get_template(template_id).instantiate(seed).params


def _suspend_done(seed: int) -> dict[str, list[Writes]]:
    """suspend_user_and_announce's end state, written as its oracle's requests would."""
    p = _params("workflows.suspend_user_and_announce@1", seed)
    u, ch = p["u"], p["ch"]
    return {
        "app": [[("UPDATE users SET status = 'suspended', role = 'viewer' WHERE id = ?", (u["id"],))]],
        "chat": [[("INSERT INTO messages (id, channel_id, user_id, body, created_at) VALUES (?, ?, 1, ?, '2026-03-02 09:00')",
                   (ch["next"], ch["id"], f"{u['name']} is suspended until further notice."))],
                 [("UPDATE messages SET pinned = 1 WHERE id = ?", (ch["next"],))]],
    }


def _my_old_message(seed: int) -> int:
    p = _params("workflows.suspend_user_and_announce@1", seed)
    app = _apps_of(get_template("workflows.suspend_user_and_announce@1").instantiate(seed))["chat"]
    mid: int = app.db.scalar("SELECT MAX(id) FROM messages WHERE user_id = 1 AND id <= ?", (p["ch"]["top"],))
    return mid


@pytest.mark.parametrize("seed", [0, 3])
def test_suspend_and_announce_fails_an_old_chat_message_edited_or_a_post_made_then_deleted(seed: int) -> None:
    template = "workflows.suspend_user_and_announce@1"
    done = _suspend_done(seed)
    verdict = _verdict(template, seed, done)
    assert verdict.passed and verdict.credit == 1.0, verdict
    old = _my_old_message(seed)
    edited = {**done, "chat": [*done["chat"], [("UPDATE messages SET body = 'oops', edited_at = '2026-03-02 09:00' WHERE id = ?", (old,))]]}
    verdict = _verdict(template, seed, edited)
    assert not verdict.passed and any(v.startswith("chat: ") for v in verdict.violations), verdict
    nxt = _params(template, seed)["ch"]["next"]
    extra = [("INSERT INTO messages (id, channel_id, user_id, body, created_at) VALUES (?, 13, 1, 'all hands now', '2026-03-02 09:00')", (nxt + 1,))]
    undone = {**done, "chat": [*done["chat"], extra, [("DELETE FROM messages WHERE id = ?", (nxt + 1,))]]}
    verdict = _verdict(template, seed, undone)  # the end state is the oracle's: only history shows the post
    assert not verdict.passed and any(v.startswith("chat: ") for v in verdict.violations), verdict


def _todo_done(seed: int) -> dict[str, list[Writes]]:
    """chat_help_to_todo's end state, written as its oracle's requests would."""
    p = _params("workflows.chat_help_to_todo@1", seed)
    m, lst, due = p["m"], p["list"], p["due"]
    return {
        "todo": [[("INSERT INTO todos (list_id, title, due, priority) VALUES (?, ?, ?, 'high')",
                   (lst["id"], f"Help {m['first']} with {m['topic']}", due["iso"]))]],
        "app": [[("INSERT INTO messages (channel_id, user_id, parent_id, body, created_at) VALUES (?, 1, ?, ?, '2026-03-02 09:00')",
                  (m["channel_id"], m["id"], f"On my list for {due['iso']}."))],
                [("UPDATE messages SET pinned = 1 WHERE id = ?", (m["id"],))]],
    }


@pytest.mark.parametrize("seed", [1, 4])
def test_chat_help_to_todo_fails_another_todo_ticked_or_one_added_then_deleted(seed: int) -> None:
    template = "workflows.chat_help_to_todo@1"
    done = _todo_done(seed)
    verdict = _verdict(template, seed, done)
    assert verdict.passed and verdict.credit == 1.0, verdict
    ticked = {**done, "todo": [*done["todo"], [("UPDATE todos SET done = 1 - done WHERE id = (SELECT MIN(id) FROM todos)", ())]]}
    verdict = _verdict(template, seed, ticked)
    assert not verdict.passed and any(v.startswith("todo: ") for v in verdict.violations), verdict
    assert verdict.credit == 0.8, verdict  # every checkpoint met, the damage elsewhere keeps it short of a pass
    undone = {**done, "todo": [*done["todo"], [("INSERT INTO todos (id, list_id, title) VALUES (9999, 1, 'Buy a boat')", ())],
                               [("DELETE FROM todos WHERE id = 9999", ())]]}
    verdict = _verdict(template, seed, undone)
    assert not verdict.passed and any(v.startswith("todo: ") for v in verdict.violations), verdict


def _expense_done(seed: int) -> dict[str, list[Writes]]:
    """expense_row_from_bank's end state, written as its oracle's requests would."""
    p = _params("workflows.expense_row_from_bank@1", seed)
    t = p["t"]
    cells = [(1, 1, "Date"), (1, 2, "Merchant"), (1, 3, "Amount"), (2, 1, t["day"]), (2, 2, t["description"]), (2, 3, t["amount"])]
    return {
        "sheets": [[("INSERT INTO sheets (id, name, position) VALUES (4, 'Expenses', 4)", ()),
                    *[("INSERT INTO cells (sheet_id, row, col, raw) VALUES (4, ?, ?, ?)", c) for c in cells]]],
        "app": [[("INSERT INTO transfers (id, from_account_id, to_account_id, amount_cents, reference, status, created_at, confirmed_at, confirmation_no)"
                  " VALUES (1, 2, 1, ?, ?, 'completed', '2026-03-02 09:00', '2026-03-02 09:00', 'MB26030200001')", (t["cents"], f"Expense {t['day']}")),
                 ("UPDATE accounts SET balance_cents = balance_cents + ? WHERE id = 1", (t["cents"],)),
                 ("UPDATE accounts SET balance_cents = balance_cents - ? WHERE id = 2", (t["cents"],)),
                 ("INSERT INTO transactions (account_id, posted_at, description, category, amount_cents, balance_cents, kind, reference, transfer_id)"
                  " VALUES (1, '2026-03-02 09:00', 'Transfer', 'transfers', ?, 0, 'transfer', '', 1)", (t["cents"],)),
                 ("INSERT INTO transactions (account_id, posted_at, description, category, amount_cents, balance_cents, kind, reference, transfer_id)"
                  " VALUES (2, '2026-03-02 09:00', 'Transfer', 'transfers', ?, 0, 'transfer', '', 1)", (-t["cents"],))]],
    }


@pytest.mark.parametrize("seed", [0, 2])
def test_expense_row_fails_a_budget_cell_changed_or_a_stray_cell_in_the_new_sheet(seed: int) -> None:
    template = "workflows.expense_row_from_bank@1"
    done = _expense_done(seed)
    verdict = _verdict(template, seed, done)
    assert verdict.passed and verdict.credit == 1.0, verdict
    budget = {**done, "sheets": [*done["sheets"], [("UPDATE cells SET raw = '1' WHERE sheet_id = 2 AND row = 2 AND col = 2", ())]]}
    verdict = _verdict(template, seed, budget)
    assert not verdict.passed and any(v.startswith("sheets: ") for v in verdict.violations), verdict
    stray = {**done, "sheets": [*done["sheets"], [("INSERT INTO cells (sheet_id, row, col, raw) VALUES (4, 9, 9, 'x')", ())]]}
    verdict = _verdict(template, seed, stray)  # inside the sheet the task adds: the exact-cells check catches it
    assert not verdict.passed, verdict
