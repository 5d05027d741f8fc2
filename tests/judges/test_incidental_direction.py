"""An incidental change states the change it allows, not only the field: opening a message
marks it read, so `{path: "messages[*].read", to: true}` allows read and refuses unread.

The allowance used to be the field in either direction, so an agent could star the right
message and also mark a message the user had read as unread (a record the task never
names) and pass. The rule is checked on the diff and the history functions, on the spec as
a task file writes it, and on the real mail app (its routes in process, its activity log)
judged by the real `mail.star_message@1` template.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from _apps_common import Control, open_app
from pydantic import ValidationError

from cua.judges.sidefx import Change, ChangeTo, Step, allowed_by, unexpected_changes, unexpected_history
from cua.judges.spec import JudgeSpec
from cua.state import AppStateQuery, SqlQuery, StateResult
from cua.task import JudgeInput, TaskInstance, query_key
from cua.tasks.registry import suites

READ = ChangeTo("messages[*].read", True)


def _state(read: dict[int, bool], starred: frozenset[int] = frozenset()) -> dict[str, Any]:
    return {"messages": [{"id": i, "read": r, "starred": i in starred} for i, r in sorted(read.items())]}


def _paths(changes: list[Change]) -> list[str]:
    return [str(c) for c in changes]


def test_a_directed_field_may_change_only_to_its_value() -> None:
    before = _state({1: False, 2: True})
    assert unexpected_changes(before, _state({1: True, 2: True}), [READ]) == [], "opened: unread -> read"
    assert _paths(unexpected_changes(before, _state({1: False, 2: False}), [READ])) == \
        ["messages[id=2].read: True -> False"], "read -> unread is the agent's doing"
    # SQLite keeps a flag as 0/1: a target written as 1 is the same as true
    assert unexpected_changes(before, _state({1: True, 2: True}), [ChangeTo("messages[*].read", 1)]) == []
    assert _paths(unexpected_changes(before, _state({1: False, 2: True}, frozenset({2})), [READ])) == \
        ["messages[id=2].starred: False -> True"], "another field of the same rows is not allowed"


def test_a_plain_path_still_allows_any_value() -> None:
    before = _state({1: False, 2: True})
    after = _state({1: True, 2: False})
    assert unexpected_changes(before, after, ["messages[*].read"]) == []
    opened, unread = unexpected_changes(before, after, [])
    assert allowed_by(opened, ["messages[*].read"]) and allowed_by(opened, [READ])
    assert allowed_by(unread, ["messages[*].read"]) and not allowed_by(unread, [READ])


def test_history_sees_read_then_unread_then_read_again() -> None:
    """The end state of read -> unread -> read is the start's; the log shows the unread."""
    row = {"id": 2, "read": True}
    unread = Change((Step(key="messages"), Step(rows=(row, {**row, "read": False}), label="[id=2]"),
                     Step(key="read")), "changed", before=True, after=False)
    read = Change(unread.steps, "changed", before=False, after=True)
    states = (_state({2: True}), _state({2: True}))
    assert _paths(unexpected_history([unread, read], [READ], states)) == ["messages[id=2].read: True -> False"]
    assert unexpected_history([unread, read], ["messages[*].read"], states) == []


def test_the_spec_reads_both_forms_and_refuses_a_half_written_one() -> None:
    spec = JudgeSpec.model_validate({"incidental_changes": ["notes[*].folder", {"path": "messages[*].read", "to": True}],
                                     "unjudged": {"messages[*].read": "the app marks a message read whenever shown"}})
    plain, directed = spec.incidental_changes
    assert type(plain) is str and isinstance(directed, ChangeTo) and directed.to is True
    assert directed == "messages[*].read" and directed in spec.unjudged, "its key in unjudged is the path"
    dumped = spec.model_dump(mode="json")["incidental_changes"]
    assert dumped == ["notes[*].folder", {"path": "messages[*].read", "to": True}]
    again = JudgeSpec.model_validate(spec.model_dump(mode="json"))
    assert isinstance(again.incidental_changes[1], ChangeTo) and again.incidental_changes[1].to is True
    kept = pickle.loads(pickle.dumps(spec)).incidental_changes[1]  # parallel task checks pickle specs
    assert isinstance(kept, ChangeTo) and kept.to is True
    for bad, says in (({"path": "messages[*].read"}, "path, or"), ({"path": "messages[*].read", "to": [1]}, "one value"),
                      ({"path": "messages[*]", "to": True}, "must end with a field name"), (3, "path, or")):
        with pytest.raises(ValidationError, match=says):
            JudgeSpec.model_validate({"incidental_changes": [bad]})


def test_no_mail_template_allows_read_flags_both_ways() -> None:
    """Every mail template that lets opening mark messages read says which way."""
    templates = suites()["mail"].templates
    found = 0
    for tid, template in templates.items():
        for pattern in template.spec.judge.incidental_changes:
            if pattern == "messages[*].read":
                found += 1
                assert isinstance(pattern, ChangeTo) and pattern.to is True, tid
    assert found >= 10


# ------------------------------------------------------------- the real mail app

def _read(control: Control, instance: TaskInstance) -> dict[str, StateResult]:
    out: dict[str, StateResult] = {}
    for q in instance.judge.queries():
        if isinstance(q, AppStateQuery):
            out[query_key(q)] = StateResult(value=control.state())
        elif isinstance(q, SqlQuery):
            reply = control.sql(q.query, list(q.params))
            assert reply.status_code == 200, reply.text
            out[query_key(q)] = StateResult(value=reply.json()["rows"])
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_star_message_refuses_another_message_marked_unread(seed: int) -> None:
    instance = suites()["mail"].templates["mail.star_message@1"].instantiate(seed)
    target = instance.params["m"]["id"]
    _, page, control = open_app("mail")
    control.reset(instance.reset_seed)
    initial = _read(control, instance)
    messages = control.state()["messages"]
    was_unread = next(m["id"] for m in messages if not m["read"] and m["id"] != target)
    was_read = next(m["id"] for m in messages if m["read"] and m["id"] != target)

    assert page.post(f"/message/{target}/star", follow_redirects=False).status_code == 303
    assert page.get(f"/message/{was_unread}").status_code == 200  # opening it marks it read
    clean = instance.judge.evaluate(JudgeInput(initial=initial, final=_read(control, instance)))
    assert clean.passed and not clean.violations, clean.violations

    # read -> unread -> read: the end state is the clean one's, the log is not
    assert page.post(f"/message/{was_read}/unread", follow_redirects=False).status_code == 303
    marked = instance.judge.evaluate(JudgeInput(initial=initial, final=_read(control, instance)))
    assert not marked.passed
    assert any(v.startswith(f"messages[id={was_read}].read: True -> False") for v in marked.violations), \
        marked.violations
    assert page.get(f"/message/{was_read}").status_code == 200
    undone = instance.judge.evaluate(JudgeInput(initial=initial, final=_read(control, instance)))
    assert not undone.passed
    assert any(f"messages[id={was_read}].read: True -> False" in v and "whatever the end state shows" in v
               for v in undone.violations), undone.violations
