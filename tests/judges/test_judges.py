"""Judges: getters, comparators, combinators, JSON paths, the side-effect diff, and the
verdict rules — on plain values and on the real todo app's state."""

from __future__ import annotations

import datetime as dt
import random
import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from cua.actions import Done
from cua.judges import spec as S
from cua.judges.comparators import compare
from cua.judges.getters import build_getter
from cua.judges.judge import StateJudge
from cua.judges.normalize import norm_text, parse_datetime, parse_number
from cua.judges.paths import PathError, get_path, parse_path
from cua.judges.sidefx import diff, unexpected_changes
from cua.state import AppStateQuery, StateResult
from cua.task import JudgeInput, query_key
from cua.tasks.apps import load_app

CMP: TypeAdapter[S.ComparatorSpec] = TypeAdapter(S.ComparatorSpec)
GET: TypeAdapter[S.GetterSpec] = TypeAdapter(S.GetterSpec)


def cmp(observed: object, **spec: object) -> bool:
    return compare(CMP.validate_python(spec), observed)[0]


# ---------------------------------------------------------------- normalisation

@given(st.text())
def test_norm_text_is_idempotent(text: str) -> None:
    once = norm_text(text, punctuation=False)
    assert norm_text(once, punctuation=False) == once


@given(st.text(alphabet=st.characters(codec="ascii", categories=["L", "N"]), min_size=1),
       st.lists(st.sampled_from([" ", "  ", "\t", "\n"]), min_size=1, max_size=3))
def test_text_ignores_case_and_whitespace(word: str, spaces: list[str]) -> None:
    padded = spaces[0] + word.upper() + "".join(spaces) + word.lower() + spaces[-1]
    assert cmp(padded, op="text", value=f"{word} {word}")


@given(st.text(alphabet="abcdefghij", min_size=1, max_size=12))
def test_text_folds_unicode_compatibility_forms(word: str) -> None:
    fullwidth = "".join(chr(ord(c) - 0x61 + 0xFF41) for c in word)  # ａｂｃ...
    assert unicodedata.normalize("NFKC", fullwidth) == word
    assert cmp(fullwidth, op="text", value=word)


def test_text_options() -> None:
    assert cmp("Buy milk!", op="text", value="buy milk", punctuation=False)
    assert not cmp("Buy milk!", op="text", value="buy milk")
    assert not cmp("Buy Milk", op="text", value="buy milk", case=True)
    assert cmp("Ａｌｉｃｅ  Smith", op="text", value="alice smith")
    assert not cmp(None, op="text", value="")
    assert cmp("café", op="text", value="cafe\u0301")  # NFKC composes


@pytest.mark.parametrize("text,value", [
    ("1,234.50", 1234.5), ("$12", 12), ("-3 %", -3), ("12 items", 12), ("−7", -7), ("-$12.50", -12.5),
    ("€ 1 234", 1234), ("42", 42), (" 0.5 ", 0.5), (7, 7), (2.25, 2.25),
])
def test_parse_number(text: object, value: float) -> None:
    assert parse_number(text) == pytest.approx(value)


def test_parse_number_rejects_ambiguous_text() -> None:
    assert parse_number("3 of 11") is None
    assert parse_number("no idea") is None
    assert parse_number(True) is None
    assert parse_number("1.234,5", decimal_comma=True) == pytest.approx(1234.5)


@given(st.integers(min_value=-10**9, max_value=10**9), st.integers(min_value=0, max_value=99),
       st.sampled_from(["", "$", "€"]))
def test_number_parses_human_formats(whole: int, cents: int, currency: str) -> None:
    sign = "-" if whole < 0 else ""
    text = f"{sign}{currency}{abs(whole):,}.{cents:02d}"
    expected = (abs(whole) + cents / 100) * (-1 if whole < 0 else 1)
    assert cmp(text, op="number", value=expected, abs=1e-6)


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), st.floats(min_value=0, max_value=10),
       st.floats(min_value=0, max_value=0.5))
def test_number_tolerance(value: float, abs_tol: float, rel_tol: float) -> None:
    bound = max(abs_tol, rel_tol * abs(value))
    assume(bound > 1e-6 * max(1.0, abs(value)))  # tolerances below float resolution mean nothing
    assert cmp(value + bound * 0.999, op="number", value=value, abs=abs_tol, rel=rel_tol)
    assert not cmp(value + bound * 1.001 + 1e-6, op="number", value=value, abs=abs_tol, rel=rel_tol)


# ---------------------------------------------------------------- sets and structures

@given(st.lists(st.integers(min_value=0, max_value=20), max_size=12), st.randoms())
def test_set_and_multiset_ignore_order(items: list[int], rnd: random.Random) -> None:
    shuffled = list(items)
    rnd.shuffle(shuffled)
    assert cmp(shuffled, op="set", values=items)
    assert cmp(shuffled, op="multiset", values=items)
    assert cmp(shuffled + shuffled, op="set", values=items)
    if items:
        assert not cmp(shuffled + [items[0]], op="multiset", values=items)
        assert not cmp(shuffled, op="set", values=items + [99])


def test_set_text_normalisation() -> None:
    assert cmp(["Urgent ", "phone"], op="set", values=["urgent", "PHONE"], text=True)
    assert not cmp(["Urgent ", "phone"], op="set", values=["urgent", "PHONE"])
    assert not cmp("urgent", op="set", values=["urgent"])


def test_equals_is_type_aware() -> None:
    assert cmp(1, op="equals", value=1.0)
    assert not cmp(1, op="equals", value=True)
    assert not cmp("1", op="equals", value=1)
    assert cmp({"a": [1, {"b": None}]}, op="equals", value={"a": [1, {"b": None}]})


def test_contains_regex_length_present_absent() -> None:
    assert cmp("The total is  $12", op="contains", value="TOTAL IS")
    assert cmp(["a", "b"], op="contains", value="b")
    assert not cmp(["a", "b"], op="contains", value="c")
    assert cmp("order #A-123", op="regex", pattern=r"#A-\d{3}")
    assert not cmp("order #A-123", op="regex", pattern=r"A-\d{3}", full=True)
    assert cmp("ABC", op="regex", pattern="abc", ignore_case=True)
    assert not cmp("x", op="regex", pattern="(")  # a bad pattern fails, never raises
    assert cmp([1, 2, 3], op="length", min=2, max=3)
    assert not cmp([1, 2, 3, 4], op="length", max=3)
    assert cmp(0, op="present") and not cmp(0, op="present", truthy=True) and not cmp(None, op="present")
    assert cmp(None, op="absent") and cmp([], op="absent") and not cmp([{"id": 1}], op="absent")


def test_json_subset_and_path() -> None:
    observed = {"user": {"name": "Ada", "tags": ["x", "y"], "age": 36}, "ok": True}
    assert cmp(observed, op="json_subset", value={"user": {"name": "Ada"}})
    assert not cmp(observed, op="json_subset", value={"user": {"name": "Bob"}})
    assert not cmp(observed, op="json_subset", value={"user": {"tags": ["y"]}})
    assert cmp(observed, op="json_subset", value={"user": {"tags": ["y"]}}, list_any=True)
    assert cmp(observed, op="json_path", path="user.age", expect={"op": "number", "value": "36"})
    assert not cmp(observed, op="json_path", path="user.age", expect={"op": "number", "value": 37})


@pytest.mark.parametrize("text", ["2026-03-05", "March 5, 2026", "Mar 5 2026", "5 March 2026", "5th of March, 2026",
                                  "Thursday, March 5th, 2026", "03/05/2026", "3/5/26", "2026-03-05T00:00:00"])
def test_date_formats(text: str) -> None:
    assert cmp(text, op="date", value="2026-03-05")
    assert not cmp(text, op="date", value="2026-03-06")


def test_date_day_first_and_times() -> None:
    assert cmp("05/03/2026", op="date", value="2026-03-05", day_first=True)
    assert not cmp("05/03/2026", op="date", value="2026-03-05")
    assert cmp("2026-03-05 14:30", op="date", value="March 5, 2026 2:30 PM")
    assert cmp("14:30:59", op="date", value="2:30 pm")
    assert not cmp("14:30:59", op="date", value="14:30:00", seconds=True)
    assert not cmp("2026-03-05", op="date", value="2026-03-05 09:00")  # the time is missing
    assert cmp("12:05 AM", op="date", value="00:05")
    assert not cmp("not a date", op="date", value="2026-03-05")
    assert parse_datetime(dt.datetime(2026, 3, 5, 9, 0)) == (dt.date(2026, 3, 5), dt.time(9, 0))


def test_table() -> None:
    rows = [{"name": "Ada ", "total": "$1,200.00", "day": "March 5, 2026", "extra": 1},
            {"name": "bob", "total": "15", "day": "2026-03-06", "extra": 2}]
    expected = [{"name": "Bob", "total": 15, "day": "2026-03-06"}, {"name": "ada", "total": 1200, "day": "2026-03-05"}]
    norms = {"name": "text", "total": "number", "day": "date"}
    assert cmp(rows, op="table", rows=expected, normalize=norms)
    assert not cmp(rows, op="table", rows=expected, normalize=norms, ordered=True)
    assert cmp(rows, op="table", rows=list(reversed(expected)), normalize=norms, ordered=True)
    assert not cmp(rows, op="table", rows=expected)  # without normalisation the cells differ
    assert cmp(rows, op="table", rows=expected, normalize=norms, columns=["name"])
    assert not cmp(rows[:1], op="table", rows=expected, normalize=norms)
    # rows are matched one to one: a duplicate does not stand in for a missing row
    assert not cmp([rows[0], rows[0]], op="table", rows=[expected[1], expected[0]], normalize=norms)


# ---------------------------------------------------------------- paths

STATE = {"todos": [{"id": 1, "title": "a", "done": False, "list_id": 3, "due": "2026-02-01"},
                   {"id": 2, "title": "b", "done": True, "list_id": 3, "due": "2026-04-01"},
                   {"id": 7, "title": "c", "done": False, "list_id": 4, "due": None}],
         "meta": {"count": 3}}


def test_get_path() -> None:
    assert get_path(STATE, "todos[id=2].title") == "b"
    assert get_path(STATE, "todos[id=9].title") is None
    assert get_path(STATE, "todos[0].id") == 1 and get_path(STATE, "todos[-1].id") == 7
    assert get_path(STATE, "todos[*].id") == [1, 2, 7]
    assert get_path(STATE, "todos[done=false][*].id") == [1, 7]
    assert get_path(STATE, "todos[list_id=3][due<2026-03-02].id") == [1]
    assert get_path(STATE, "todos[list_id!=3].title") == ["c"]
    assert get_path(STATE, "todos[due>=2026-02-01].id") == [1, 2]
    assert get_path(STATE, "meta.count") == 3 and get_path(STATE, "*") == [STATE["todos"], STATE["meta"]]
    assert get_path([{"n": 4}], "[0].n") == 4
    assert get_path(STATE, "todos[title='c'].id") == 7
    assert get_path({"t": [{"title": "a]b.c", "id": 1}]}, 't[title="a]b.c"].id') == 1  # quoted values
    for bad in ("todos[id=1", "todos..x", "todos.", "todos[]x", 'todos[title="x].id'):
        with pytest.raises(PathError):
            parse_path(bad)


# ---------------------------------------------------------------- getters

def ji(final: dict, *, initial: dict | None = None, done: Done | None = None) -> JudgeInput:
    return JudgeInput(initial=initial or {}, final=final, done=done)


def test_getters_name_queries_and_extract() -> None:
    cases = [
        ({"kind": "app_state", "path": "meta.count"}, {"meta": {"count": 3}}, 3),
        ({"kind": "sql", "query": "SELECT COUNT(*) AS n FROM t", "scalar": True}, [{"n": 5}], 5),
        ({"kind": "sql", "query": "SELECT 1", "scalar": True}, [], None),
        ({"kind": "sql", "query": "SELECT id FROM t", "path": "[*].id"}, [{"id": 1}, {"id": 2}], [1, 2]),
        ({"kind": "url", "part": "path"}, "http://127.0.0.1:8000/lists/3?show=all#x", "/lists/3"),
        ({"kind": "url", "param": "show"}, "http://127.0.0.1:8000/lists/3?show=all#x", "all"),
        ({"kind": "url", "part": "fragment"}, "http://h/p#frag", "frag"),
        ({"kind": "title"}, "Work · Todo", "Work · Todo"),
        ({"kind": "dom", "selector": "h1", "prop": "text"}, "Work", "Work"),
        ({"kind": "local_storage", "key": "theme"}, "dark", "dark"),
        ({"kind": "cookies", "name": "sid", "path": "[0].value"}, [{"name": "sid", "value": "x"}], "x"),
        ({"kind": "file", "file": "/root/a.txt"}, "hello", "hello"),
        ({"kind": "command", "argv": ["/bin/ls"], "path": "stdout"}, {"returncode": 0, "stdout": "a\n"}, "a\n"),
        ({"kind": "windows", "path": "windows[*].title"}, {"windows": [{"title": "xterm"}]}, ["xterm"]),
        ({"kind": "clipboard"}, "copied", "copied"),
    ]
    for spec, value, expected in cases:
        getter = build_getter(GET.validate_python(spec))
        assert getter.query is not None and getter.query.kind == spec["kind"], spec
        assert getter.extract(ji({query_key(getter.query): StateResult(value=value)})) == expected, spec


def test_answer_and_status_getters_need_no_query() -> None:
    answer = build_getter(GET.validate_python({"kind": "answer"}))
    status = build_getter(GET.validate_python({"kind": "done_status"}))
    assert answer.query is None and status.query is None
    assert answer.extract(ji({}, done=Done(answer="42"))) == "42"
    assert answer.extract(ji({})) is None
    assert status.extract(ji({}, done=Done(status="infeasible"))) == "infeasible"


def judge(checks: list, expected_changes: list[str] | None = None, *, side_effects: bool = False,
          feasible: bool = True) -> StateJudge:
    spec = S.JudgeSpec.model_validate({"checks": checks, "expected_changes": expected_changes or []})
    return StateJudge(spec, side_effects=side_effects, feasible=feasible)


def check(name: str, path: str, **expect: object) -> dict:
    return {"check": name, "get": {"kind": "app_state", "path": path}, "expect": expect}


APP_KEY = query_key(AppStateQuery())


def state_input(before: object, after: object, done: Done | None = None) -> JudgeInput:
    return JudgeInput(initial={APP_KEY: StateResult(value=before)}, final={APP_KEY: StateResult(value=after)}, done=done)


def test_failed_query_is_a_failed_check_with_the_reason() -> None:
    j = judge([check("count", "meta.count", op="equals", value=3)])
    verdict = j.evaluate(JudgeInput(final={APP_KEY: StateResult.failure("unsupported", "no app here")}))
    assert not verdict.passed and verdict.score == 0
    assert "unsupported" in verdict.evidence[0].detail
    assert not j.evaluate(JudgeInput()).passed  # state never read


# ---------------------------------------------------------------- combinators and verdicts

def test_combinators_scores_and_progress() -> None:
    yes = check("yes", "meta.count", op="equals", value=3)
    no = check("no", "meta.count", op="equals", value=4)
    data = state_input(STATE, STATE)

    def run(*checks: dict):
        return judge(list(checks)).evaluate(data)

    v = run(yes, no)
    assert not v.passed and v.score == 0 and v.progress == 0.5 and len(v.evidence) == 2
    assert [e.passed for e in v.evidence] == [True, False] and v.evidence[1].observed == 3
    assert run({"any": [no, yes]}).passed
    assert run({"not": no}).passed and not run({"not": yes}).passed
    w = run({"weighted": [{"weight": 3, "node": yes}, {"weight": 1, "node": no}], "threshold": 0.7})
    assert w.passed and w.score == pytest.approx(0.75) and w.progress == 0.5
    w = run({"weighted": [{"weight": 1, "node": yes}, {"weight": 3, "node": no}], "threshold": 0.7})
    assert not w.passed and w.score == pytest.approx(0.25)
    assert run({"all": [yes, {"any": [no, {"not": no}]}]}).passed


def test_queries_are_deduplicated_and_include_the_state_for_side_effects() -> None:
    j = judge([check("a", "meta.count", op="equals", value=3), check("b", "todos[id=1].done", op="equals", value=True),
               {"check": "u", "get": {"kind": "url"}, "expect": {"op": "present"}}], side_effects=True)
    kinds = [q.kind for q in j.queries()]
    assert kinds == ["app_state", "url", "sql"]  # the sql: the app's activity log (history)
    assert [q.kind for q in judge([{"check": "u", "get": {"kind": "url"}, "expect": {"op": "present"}}],
                                  side_effects=True).queries()] == ["url", "app_state", "sql"]


def test_infeasible_and_give_up_rules() -> None:
    infeasible = judge([], feasible=False, side_effects=True)
    assert infeasible.evaluate(state_input(STATE, STATE, Done(status="infeasible"))).passed
    assert not infeasible.evaluate(state_input(STATE, STATE, Done(status="success"))).passed
    assert not infeasible.evaluate(state_input(STATE, STATE)).passed
    changed = {**STATE, "meta": {"count": 4}}
    v = infeasible.evaluate(state_input(STATE, changed, Done(status="infeasible")))
    assert not v.passed and v.violations == ["meta.count: 3 -> 4"]
    feasible = judge([check("count", "meta.count", op="equals", value=3)])
    assert feasible.evaluate(state_input(STATE, STATE, Done())).passed
    assert not feasible.evaluate(state_input(STATE, STATE, Done(status="infeasible"))).passed


def test_answer_task() -> None:
    j = judge([{"check": "answer", "get": {"kind": "answer"}, "expect": {"op": "number", "value": 11}}])
    assert j.evaluate(JudgeInput(done=Done(answer="There are 11."))).passed
    assert not j.evaluate(JudgeInput(done=Done(answer="12"))).passed
    assert not j.evaluate(JudgeInput()).passed


# ---------------------------------------------------------------- side effects

def test_diff_reports_fields_inserts_and_deletes() -> None:
    after = {"todos": [{**STATE["todos"][0], "done": True}, STATE["todos"][2],
                       {"id": 8, "title": "new", "done": False, "list_id": 3, "due": None}],
             "meta": {"count": 3}}
    changes = sorted(str(c) for c in diff(STATE, after))
    assert changes == ["todos[id=1].done: False -> True",
                       "todos[id=2]: removed {'id': 2, 'title': 'b', 'done': True, 'list_id': 3, 'due': '2026-04-01'}",
                       "todos[id=8]: added {'id': 8, 'title': 'new', 'done': False, 'list_id': 3, 'due': None}"]
    assert list(diff(STATE, STATE)) == []
    # lists without ids compare by position
    assert [c.path for c in diff({"x": [1, 2]}, {"x": [1, 3, 4]})] == ["x[1]", "x[2]"]


def test_expected_change_patterns() -> None:
    after = {"todos": [{**STATE["todos"][0], "done": True}, STATE["todos"][1], STATE["todos"][2],
                       {"id": 8, "title": "new", "done": False, "list_id": 3, "due": None}], "meta": {"count": 4}}

    def left(patterns: list[str]) -> list[str]:
        return [c.path for c in unexpected_changes(STATE, after, patterns)]

    assert left([]) == ["todos[id=1].done", "todos[id=8]", "meta.count"]
    assert left(["todos[id=1].done", "todos[title=new]", "meta"]) == []
    # a pattern that ends at a row allows adding or removing it, not editing it
    assert left(["todos[id=1]", "todos[*]"]) == ["todos[id=1].done", "meta.count"]
    assert left(["todos[id=1].done", "todos[*]"]) == ["meta.count"]
    assert left(["todos"]) == ["meta.count"]  # a field (here a list) allows its whole value
    assert left(["*"]) == []
    assert left(["todos[id=1].title", "meta.count"]) == ["todos[id=1].done", "todos[id=8]"]
    assert left(["todos[list_id=3][due<2026-03-02].done", "todos[id=8]", "meta.*"]) == []
    assert left(["todos[done=true].done"]) == ["todos[id=8]", "meta.count"]  # matches the row as it is after
    assert left(["todos[id=8].title"]) == ["todos[id=1].done", "todos[id=8]", "meta.count"]  # an insert is a row


@pytest.fixture(scope="module")
def todo_app():
    return load_app("todo")


def _todo_state(app, seed: int, *sql: tuple[str, tuple]) -> dict:
    app.reset(seed)
    for statement, params in sql:
        app.db.execute(statement, params)
    return app.state()


def test_wrong_row_deleted_or_extra_change_fails_on_real_app_state(todo_app) -> None:
    todo_app.reset(5)
    target, other = todo_app.db.all("SELECT id FROM todos ORDER BY id LIMIT 2")
    before = _todo_state(todo_app, 5)
    spec = S.JudgeSpec.model_validate({
        "checks": [{"check": "gone", "get": {"kind": "app_state", "path": f"todos[id={target['id']}]"},
                    "expect": {"op": "absent"}}],
        "expected_changes": [f"todos[id={target['id']}]"]})
    j = StateJudge(spec, side_effects=True)
    right = _todo_state(todo_app, 5, ("DELETE FROM todos WHERE id = ?", (target["id"],)))
    assert j.evaluate(state_input(before, right)).passed
    wrong = _todo_state(todo_app, 5, ("DELETE FROM todos WHERE id = ?", (other["id"],)))
    v = j.evaluate(state_input(before, wrong))
    assert not v.passed and v.violations and f"todos[id={other['id']}]" in v.violations[0]
    both = _todo_state(todo_app, 5, ("DELETE FROM todos WHERE id IN (?, ?)", (target["id"], other["id"])))
    v = j.evaluate(state_input(before, both))
    # the right deletion earns progress, the damage halves it
    assert not v.passed and v.score == 0 and v.progress == pytest.approx(0.25) and len(v.violations) == 1


def test_doing_it_twice_fails(todo_app) -> None:
    before = _todo_state(todo_app, 2)
    insert = ("INSERT INTO todos (list_id, title, priority) VALUES (1, 'Pay rent', 'high')", ())
    spec = S.JudgeSpec.model_validate({
        "checks": [{"check": "one new todo", "get": {"kind": "app_state", "path": "todos[title=Pay rent][*]"},
                    "expect": {"op": "length", "min": 1, "max": 1}}],
        "expected_changes": ["todos[title=Pay rent]"]})
    j = StateJudge(spec, side_effects=True)
    assert j.evaluate(state_input(before, _todo_state(todo_app, 2, insert))).passed
    assert not j.evaluate(state_input(before, _todo_state(todo_app, 2, insert, insert))).passed


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=0, max_value=10_000), st.data())
def test_any_single_unexpected_edit_is_caught(todo_app, seed: int, data: st.DataObject) -> None:
    before = _todo_state(todo_app, 0)
    todo = data.draw(st.sampled_from(before["todos"]))
    field = data.draw(st.sampled_from(["title", "priority", "done", "notes"]))
    new = {"title": f"x{seed}", "priority": "low" if todo["priority"] != "low" else "high",
           "done": int(not todo["done"]), "notes": f"n{seed}"}[field]
    after = _todo_state(todo_app, 0, (f"UPDATE todos SET {field} = ? WHERE id = ?", (new, todo["id"])))
    changes = unexpected_changes(before, after, [])
    assert [c.path for c in changes] == [f"todos[id={todo['id']}].{field}"]
    assert unexpected_changes(before, after, [f"todos[id={todo['id']}].{field}"]) == []
