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
    assert len(templates) >= 12
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
