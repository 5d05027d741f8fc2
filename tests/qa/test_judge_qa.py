"""Judge QA's adversarial half: the probes run on real suites in real Chromium, find
nothing wrong with sound judges, and catch each class of weak judge; the prefix and
progress rules along an oracle."""

from __future__ import annotations

import asyncio

import pytest

from cua.qa.check import check_templates
from cua.qa.judge_qa import ProgressTrace, trace_problems
from cua.state import StateResult
from cua.task import Verdict
from cua.tasks.loader import load_text
from cua.tasks.registry import select_templates


def _verdict(progress: float, passed: bool = False) -> Verdict:
    return Verdict(score=1.0 if passed else 0.0, passed=passed, progress=progress)


def test_a_passing_prefix_and_falling_progress_are_reported() -> None:
    end = {"k": StateResult(value=3)}
    trace = ProgressTrace(verdicts=[_verdict(0), _verdict(0.5), _verdict(0.25), _verdict(0.75, passed=True)],
                          fingerprints=["a", "b", "c", "d"])
    stages = [(s, r) for s, r, _ in trace_problems(trace, _verdict(1.0, True), end, tier=3)]
    assert ("prefix" in {s for s, _ in stages}) and any("falls from 0.5 to 0.25" in r for _, r in stages)
    # a prefix whose judged state is already the end state may pass: nothing left to do
    from cua.qa.judge_qa import _fingerprint

    same = ProgressTrace(verdicts=[_verdict(0), _verdict(0.5), _verdict(1.0, True)],
                         fingerprints=["a", "b", _fingerprint(end)])
    assert trace_problems(same, _verdict(1.0, True), end, tier=3) == []
    flat = ProgressTrace(verdicts=[_verdict(0), _verdict(0)], fingerprints=["a", "b"])
    assert [s for s, _, _ in trace_problems(flat, _verdict(1.0, True), end, tier=3)] == ["progress"]
    assert trace_problems(flat, _verdict(1.0, True), end, tier=2) == []


def _check(templates: list, seeds: tuple[int, ...] = (0,)):
    return asyncio.run(check_templates(templates, seeds=list(seeds), parallel=2, isolation="shared"))


@pytest.mark.slow
def test_probes_find_nothing_wrong_with_sound_judges() -> None:
    report = _check(select_templates(["todo.rename", "contacts.change_status", "mail.star_message"]))
    for t in report.templates:
        assert not t.failures, "\n".join(line for f in t.failures for line in f.lines())
    ran = {k for t in report.templates for k in t.probes_ran}
    assert {"over_reach", "wrong_target", "collateral", "prefix", "determinism", "other_path", "typed_answer"} <= ran
    rename = next(t for t in report.templates if t.template_id.startswith("todo.rename"))
    assert rename.probes_ran.get("equivalent", 0) >= 1  # the new title in other spacing passes (not in other case: stored text keeps it)
    assert "adds no row" in rename.probes_skipped["duplicate"]  # and the report says why


WEAK = '''
suite: todo
defaults:
  sandbox: {kind: browser, app: todo, start_url: /}
  tags: {app: todo, tier: 2}
templates:
  - id: todo.weak_rename@1
    instruction: 'Rename the todo "{todo.title}" to "{new}".'
    params:
      todo: {type: rows, sql: "SELECT id, title FROM todos ORDER BY id"}
      new: {type: string, values: [Call the dentist back]}
    judge:
      checks:
        - check: the title is the new one
          get: {kind: app_state, path: "todos[id={todo.id}].title"}
          expect: {op: text, value: "{new}"}
      # too permissive: the target's other fields may change (declared unjudged so the template
      # loads past the completeness rule, as a careless author could: judge QA must still catch it)
      expected_changes: ["todos[id={todo.id}].title", "todos[id={todo.id}].notes", "todos[id={todo.id}].priority"]
      unjudged: {"todos[id={todo.id}].notes": "a careless author's reason for leaving it", "todos[id={todo.id}].priority": "a careless author's reason for leaving it"}
    oracle:
      - goto: "/todos/{todo.id}"
      - fill: {selector: 'input[name=title]', text: "{new}"}
      - click: {selector: 'button.primary', text: Save}
    near_miss:
      - goto: "/todos/{todo.id}"
  - id: todo.weak_add@1
    instruction: 'Add a todo "{title}" to the first list.'
    params:
      title: {type: string, values: [Pay rent]}
    judge:
      checks:
        - check: such a todo exists
          get: {kind: sql, query: "SELECT COUNT(*) FROM todos WHERE title = ?", params: ["{title}"], scalar: true}
          expect: {op: equals, value: 1}
      expected_changes: ["todos[title={title}]"]
      unjudged: {"todos[title={title}]": "a careless author's reason for leaving it"}
    oracle:
      - goto: "/lists/1"
      - fill: {selector: 'form.add-todo input[name=title]', text: "{title}"}
      - click: {selector: 'form.add-todo button', text: Add}
    near_miss:
      - goto: "/lists/1"
  - id: todo.weak_answer@1
    instruction: 'Add a todo "{title}" to the first list, then reply with the title you added.'
    params:
      title: {type: string, values: [Pay rent]}
    judge:
      checks:  # reads only the reply: an agent that parrots the request and adds nothing passes
        - check: the reply names the todo
          get: {kind: answer}
          expect: {op: contains, value: "{title}"}
      expected_changes: ["todos[title~={title}]"]
      unjudged: {"todos[title~={title}]": "a careless author's reason for leaving it"}
    oracle:
      - goto: "/lists/1"
      - fill: {selector: 'form.add-todo input[name=title]', text: "{title}"}
      - click: {selector: 'form.add-todo button', text: Add}
      - done: {answer: "{title}"}
    near_miss:
      - goto: "/lists/1"
'''


@pytest.mark.slow
def test_probes_catch_weak_judges() -> None:
    report = _check(load_text(WEAK, "<weak>", suite="todo"))
    stages = {t.template_id: {f.stage for f in t.failures} for t in report.templates}
    # the rename judge lets the target's notes and priority be damaged
    assert "probe:collateral" in stages["todo.weak_rename@1"]
    # the add judge reads no field of the new row but its title: a new todo due tomorrow, high, tagged, passes
    assert "probe:collateral" in stages["todo.weak_add@1"]
    assert "probe:wrong_target" in stages["todo.weak_add@1"]  # in another list
    # ... and reads the title exactly: "pay rent" or "Pay  rent", typed by an agent, fails
    assert "probe:equivalent" in stages["todo.weak_add@1"]
    # the answer typed where an action was asked: the request parroted back passes
    assert "probe:typed_answer" in stages["todo.weak_answer@1"]
    assert all(not s.startswith(("oracle", "initial", "near_miss")) for ss in stages.values() for s in ss), stages


WEAK_SECOND_APP = '''
suite: twoapps
templates:
  - id: twoapps.weak_rename_in_second_app@1
    instruction: 'In the todo app, rename the todo "{todo.title}" to "{new}".'
    sandbox: {kind: browser, app: mail, apps: [todo]}
    params:
      todo: {type: rows, app: todo, sql: "SELECT id, title FROM todos ORDER BY id"}
      new: {type: string, values: [Call the dentist back]}
    judge:
      checks:
        - check: the title is the new one
          get: {kind: app_state, service: todo, path: "todos[id={todo.id}].title"}
          expect: {op: text, value: "{new}"}
      apps:
        todo:  # too permissive, on the second app only: the target's notes and priority may change
          expected_changes: ["todos[id={todo.id}].title", "todos[id={todo.id}].notes", "todos[id={todo.id}].priority"]
          unjudged: {"todos[id={todo.id}].notes": "a careless author's reason", "todos[id={todo.id}].priority": "a careless author's reason"}
    oracle:
      - goto: "app:todo/todos/{todo.id}"
      - fill: {selector: 'input[name=title]', text: "{new}"}
      - click: 'button[data-action=save]'
    near_miss:
      - goto: "app:todo/todos/{todo.id}"
    tags: {app: mail, apps: [mail, todo], tier: 2}
'''


@pytest.mark.slow
def test_the_state_probes_attack_every_app_of_a_workflow() -> None:
    """A workflow's judge is as weak as its weakest app: the probes attack the second app's
    database too (before, only the first app's, so this judge passed QA)."""
    report = _check(load_text(WEAK_SECOND_APP, "<weak-second-app>", suite="twoapps"))
    (template,) = report.templates
    wrong = [f for f in template.failures if f.stage == "probe:collateral"]
    assert wrong and all("[todo: todo]" in f.reason for f in wrong), [f.lines() for f in template.failures]
    assert all(not f.stage.startswith(("oracle", "initial", "near_miss")) for f in template.failures)
