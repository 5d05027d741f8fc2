"""The rules that keep judges from being fooled: semantic comparators (rich text, numbers,
phones, addresses, formulas), exact expected changes, unique lookups, dense progress,
and the probe generator of judge QA — on plain values and on real app databases."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from cua.judges import spec as S
from cua.judges.comparators import compare
from cua.judges.judge import StateJudge
from cua.judges.normalize import formula_refs, norm_address, norm_phone, rich_text
from cua.judges.paths import PathError, get_path
from cua.judges.sidefx import unexpected_changes
from cua.qa import probes as P
from cua.state import AppStateQuery, StateResult
from cua.task import JudgeInput, query_key
from cua.tasks.apps import load_app

CMP: TypeAdapter[S.ComparatorSpec] = TypeAdapter(S.ComparatorSpec)


def cmp(observed: object, **spec: object) -> bool:
    return compare(CMP.validate_python(spec), observed)[0]


# ---------------------------------------------------------------- comparators

@pytest.mark.parametrize("observed", [
    "<p><b>Agenda</b> for Monday</p><ul><li>budget</li><li>hiring</li></ul>",
    "<div><strong>Agenda</strong> for Monday</div>\n<ul>\n  <li>budget</li>\n  <li>hiring</li>\n</ul>",
    "<p><b>Agenda</b><b> </b>for   Monday</p><ul><li>budget</li><li>hiring</li></ul><p></p>",
    '<p class="x"><b style="color:red">Agenda</b> for Monday</p><ul><li>budget</li><li>hiring</li></ul>',
])
def test_rich_text_is_judged_by_what_it_shows(observed: str) -> None:
    expected = "<p><b>Agenda</b> for Monday</p><ul><li>budget</li><li>hiring</li></ul>"
    assert cmp(observed, op="rich_text", value=expected)


@pytest.mark.parametrize("observed", [
    "<p>Agenda for Monday</p><ul><li>budget</li><li>hiring</li></ul>",          # bold lost
    "<p><b>Agenda for Monday</b></p><ul><li>budget</li><li>hiring</li></ul>",   # too much bold
    "<p><b>Agenda</b> for Monday</p><ol><li>budget</li><li>hiring</li></ol>",   # another list kind
    "<p><b>Agenda</b> for Monday</p><ul><li>budget hiring</li></ul>",          # items merged
    "<p><b>Agenda</b> for Monday</p>",
])
def test_rich_text_differences_that_show_fail(observed: str) -> None:
    expected = "<p><b>Agenda</b> for Monday</p><ul><li>budget</li><li>hiring</li></ul>"
    assert not cmp(observed, op="rich_text", value=expected)


def test_rich_text_options() -> None:
    assert cmp("<p>Agenda for <i>Monday</i></p>", op="rich_text", value="Agenda for Monday", formatting=False)
    assert not cmp("<p>agenda</p>", op="rich_text", value="Agenda")
    assert cmp("<p>agenda</p>", op="rich_text", value="<div>Agenda</div>", case=False)
    assert rich_text("<p>a<br>b</p>") == (("p", (("a", frozenset()),)), ("p", (("b", frozenset()),)))


@pytest.mark.parametrize("observed", [971, 971.0, "971", "971.00", " 971.0 ", "$971.00", "971.000"])
def test_numbers_by_value(observed: object) -> None:
    assert cmp(observed, op="number", value=971)
    assert cmp(observed, op="table", rows=[{"n": "971.00"}], normalize={"n": "number"}) is False  # not a row list
    assert compare(CMP.validate_python({"op": "table", "rows": [{"n": "971.00"}], "normalize": {"n": "number"}}),
                   [{"n": observed}])[0]


@pytest.mark.parametrize("observed", ["+1 (555) 010-2000", "555-010-2000", "555.010.2000", "(555) 0102000",
                                      "+15550102000", "1 555 010 2000"[2:], "+1 555 010 2000 "])
def test_phone_numbers_however_grouped(observed: str) -> None:
    assert cmp(observed, op="phone", value="+1 555 010 2000")
    assert norm_phone(observed) == "15550102000"


def test_phone_numbers_that_differ() -> None:
    assert not cmp("+44 555 010 2000", op="phone", value="+1 555 010 2000")
    assert not cmp("555 010 2001", op="phone", value="555 010 2000")
    assert not cmp("call me", op="phone", value="555 010 2000")
    assert cmp("+44 20 7946 0958", op="phone", value="+44 (0)20 7946 0958".replace("(0)", ""))
    assert norm_phone("555-0100") is not None and norm_phone("12") is None


def test_addresses_through_stated_abbreviations() -> None:
    assert cmp("12 Main St., Apt 4, Springfield", op="address", value="12 main street apartment 4 springfield")
    assert cmp("400 N. Elm Ave\nBoston", op="address", value="400 North Elm Avenue, Boston")
    assert not cmp("12 Main St., Apt 5", op="address", value="12 Main Street, Apt 4")
    assert norm_address("Suite 3, 9 Oak Rd") == "suite 3 9 oak road"


def test_formulas_by_what_they_compute() -> None:
    want = {"op": "formula", "computes": "=SUM(B2:B5)"}
    for written in ("=SUM(B2:B5)", "=sum(b2:b5)", "= SUM( $B$2 : B5 )", "=SUM(B2,B3,B4,B5)", "=SUM(B2:B3)+SUM(B4:B5)",
                    "=B2+B3+B4+B5"):
        assert cmp(written, **want), written
    assert not cmp("971", **want)                         # the answer instead of the method
    assert not cmp("=971", **want)                        # a formula that references nothing
    assert not cmp("=SUM(B2:B4)", **want)                 # one cell short
    assert not cmp("=AVERAGE(B2:B5)", **want)             # another function
    assert not cmp("=SUM(B2:B5)*0+971", **want)           # the right shape, a constant value
    assert not cmp('=SUM(B2:B5)&"B6"', op="formula", computes="=SUM(B2:B6)")  # text in a string is no reference
    assert formula_refs("=AA1+$c$3") == (frozenset({"AA1", "C3"}), frozenset())


# ---------------------------------------------------------------- exact expected changes

def test_collection_wide_patterns_are_refused() -> None:
    for bad in ("todos[*]", "*", "orders[*]", "todos[*].done", "settings.*"):
        with pytest.raises(ValidationError, match="name the rows"):
            S.JudgeSpec.model_validate({"expected_changes": [bad]})
    for good in ("todos[id=4].done", "todos[title=Buy milk]", "todos[list_id=3][*].done", "cart", "settings.theme",
                 "boards[id=2].columns[*].cards"):
        S.JudgeSpec.model_validate({"expected_changes": [good]})
    with pytest.raises(ValidationError, match="field name"):
        S.JudgeSpec.model_validate({"incidental_changes": ["messages[*]"]})
    S.JudgeSpec.model_validate({"incidental_changes": ["messages[*].read"]})


STATE = {"todos": [{"id": 1, "title": "a", "done": False, "tags": ""}, {"id": 2, "title": "b", "done": False, "tags": ""}]}


def _edit(**changes: object) -> dict:
    rows = [dict(r) for r in STATE["todos"]]
    for key, value in changes.items():
        rid, field = key.split("__")
        next(r for r in rows if r["id"] == int(rid[1:]))[field] = value
    return {"todos": rows}


def test_a_row_pattern_allows_adding_and_removing_it_not_editing_it() -> None:
    edited = _edit(r1__title="A", r1__tags="x")
    assert [c.path for c in unexpected_changes(STATE, edited, ["todos[id=1]"])] == ["todos[id=1].title", "todos[id=1].tags"]
    assert [c.path for c in unexpected_changes(STATE, edited, ["todos[id=1].title"])] == ["todos[id=1].tags"]
    removed = {"todos": STATE["todos"][1:]}
    assert unexpected_changes(STATE, removed, ["todos[id=1]"]) == []
    added = {"todos": [*STATE["todos"], {"id": 3, "title": "c", "done": False, "tags": ""}]}
    assert unexpected_changes(STATE, added, ["todos[title=c]"]) == []


def test_incidental_changes_are_allowed_anywhere() -> None:
    spec = S.JudgeSpec.model_validate({
        "checks": [{"check": "renamed", "get": {"kind": "app_state", "path": "todos[id=1].title"},
                    "expect": {"op": "equals", "value": "A"}}],
        "expected_changes": ["todos[id=1].title"], "incidental_changes": ["todos[*].done"]})
    j = StateJudge(spec, side_effects=True)
    assert j.evaluate(_input(STATE, _edit(r1__title="A", r2__done=True))).passed
    assert not j.evaluate(_input(STATE, _edit(r1__title="A", r2__tags="x"))).passed


def test_a_lookup_that_matches_two_rows_fails_the_check() -> None:
    twice = {"todos": [*STATE["todos"], {"id": 3, "title": "a", "done": True, "tags": ""}]}
    with pytest.raises(PathError, match="matches 2"):
        get_path(twice, "todos[title=a].done", unique=True)
    assert get_path(twice, "todos[title=a].done") is False
    assert get_path(twice, "todos[title=a][0].id", unique=True) == 1
    assert get_path(twice, "todos[title=a][*].id", unique=True) == [1, 3]
    spec = S.JudgeSpec.model_validate({"checks": [{"check": "done", "get": {"kind": "app_state",
                                                                            "path": "todos[title=a].done"},
                                                   "expect": {"op": "equals", "value": True}}]})
    v = StateJudge(spec).evaluate(_input(STATE, twice))
    assert not v.passed and "matches 2" in (v.evidence[0].detail or "")


# ---------------------------------------------------------------- progress

def _input(before: dict, after: dict, done: object = None) -> JudgeInput:
    key = query_key(AppStateQuery())
    return JudgeInput(initial={key: StateResult(value=before)}, final={key: StateResult(value=after)}, done=done)


def _check(name: str, path: str, value: object) -> dict:
    return {"check": name, "get": {"kind": "app_state", "path": path}, "expect": {"op": "equals", "value": value}}


def test_subgoals_make_progress_dense_and_never_decide() -> None:
    spec = S.JudgeSpec.model_validate({
        "checks": [_check("b done", "todos[id=2].done", True)],
        "subgoals": [_check("a tagged", "todos[id=1].tags", "x"), _check("a done", "todos[id=1].done", True)]})
    j = StateJudge(spec)
    steps = [STATE, _edit(r1__tags="x"), _edit(r1__tags="x", r1__done=True),
             _edit(r1__tags="x", r1__done=True, r2__done=True)]
    verdicts = [j.evaluate(_input(STATE, s)) for s in steps]
    progress = [v.progress for v in verdicts]
    assert progress == sorted(progress) and len(set(progress)) == 4 and progress[-1] == 1.0
    assert [v.passed for v in verdicts] == [False, False, False, True]
    assert j.evaluate(_input(STATE, _edit(r2__done=True))).passed  # subgoals never decide
    assert any(e.check == "subgoal 1: a tagged" for e in verdicts[1].evidence)


def test_progress_never_pays_for_ending() -> None:
    from cua.actions import Done

    spec = S.JudgeSpec.model_validate({"checks": [
        _check("b done", "todos[id=2].done", True),
        {"check": "ended", "get": {"kind": "done_status"}, "expect": {"op": "equals", "value": "success"}}]})
    j = StateJudge(spec)
    assert j.evaluate(_input(STATE, STATE, Done(status="success"))).progress == 0.0
    half = j.evaluate(_input(STATE, _edit(r2__done=True)))
    assert not half.passed and 0 < half.progress < 1


def test_damage_halves_progress() -> None:
    spec = S.JudgeSpec.model_validate({"checks": [_check("a", "todos[id=1].done", True), _check("b", "todos[id=2].done", True)],
                                       "expected_changes": ["todos[id=1].done", "todos[id=2].done"]})
    j = StateJudge(spec, side_effects=True)
    clean = j.evaluate(_input(STATE, _edit(r1__done=True)))
    dirty = j.evaluate(_input(STATE, _edit(r1__done=True, r2__title="oops")))
    assert clean.progress == 0.5 and dirty.progress == 0.25 and not dirty.passed


# ---------------------------------------------------------------- probe generation on a real app

@pytest.fixture(scope="module")
def todo():
    app = load_app("todo")
    return app, P.table_infos(app.db.conn)


def _image(app, infos) -> P.DbImage:
    counts = [app.db.read_only_query(q.query, [])[0]["n"] for q in P.count_queries(infos)]
    pages = P.dump_queries(infos, counts=counts)
    results = [StateResult(value=app.db.read_only_query(q.query, [])) for _, q in pages]
    return P.DbImage.from_results(infos, results, [i for i, _ in pages])


def test_big_tables_are_read_in_pages(todo) -> None:
    app, infos = todo
    app.reset(2)
    counts = [app.db.read_only_query(q.query, [])[0]["n"] for q in P.count_queries(infos)]
    pages = P.dump_queries(infos, counts=counts)
    assert any("OFFSET" in q.query for _, q in P.dump_queries(infos, counts=[P.DUMP_PAGE * 2 + 1] * len(infos)))
    whole = P.DbImage.from_results(infos, [StateResult(value=app.db.read_only_query(q.query, [])) for _, q in pages],
                                   [i for i, _ in pages])
    assert sum(len(rows) for rows in whole.tables.values()) == sum(counts)


def test_probes_from_an_edit(todo) -> None:
    app, infos = todo
    app.reset(3)
    before = _image(app, infos)
    target = app.db.one("SELECT id, title FROM todos ORDER BY id LIMIT 1")
    app.db.execute("UPDATE todos SET title = ?, priority = 'high' WHERE id = ?", ("Renamed", target["id"]))
    after = _image(app, infos)
    diff = P.DbDiff.between(before, after)
    assert [(c.table, c.kind) for c in diff.changes] == [("todos", "changed")]
    assert {"priority", "title"} <= set(diff.changes[0].columns)
    probes, why = P.generate_probes(infos, before, after, diff, seed=1)
    kinds = {p.kind for p in probes}
    assert {"over_reach", "wrong_target", "collateral", "partial"} <= kinds
    assert "duplicate" in why and "adds no row" in why["duplicate"]
    mirror = P.ProbeMirror(app, infos)
    for probe in probes:  # each probe is a real, different end state of the same schema
        mirror.load(after, probe.writes)
        assert _image(app, infos).tables != after.tables, probe
    mirror.load(after)
    assert _image(app, infos).tables == after.tables


def test_probes_from_an_addition(todo) -> None:
    app, infos = todo
    app.reset(4)
    before = _image(app, infos)
    app.db.execute("INSERT INTO todos (list_id, title, priority) VALUES (1, 'Pay rent', 'high')")
    after = _image(app, infos)
    probes, why = P.generate_probes(infos, before, after, P.DbDiff.between(before, after), seed=0)
    kinds = {p.kind for p in probes}
    assert {"duplicate", "wrong_target", "collateral", "over_reach"} <= kinds
    mirror = P.ProbeMirror(app, infos)
    dup = next(p for p in probes if p.kind == "duplicate")
    mirror.load(after, dup.writes)
    assert app.db.scalar("SELECT count(*) FROM todos WHERE title = 'Pay rent'") == 2


@pytest.mark.parametrize("column,value,expected", [
    ("amount", "971", "971.00"), ("amount", "12.50", "12.5"), ("zip", "02139", None),
    ("phone", "+1 555-010-2000", "+1555.010.2000"), ("raw", "=SUM(B2:B5)", "=sum ( b2:b5 )"),
    ("body", "<p><b>x</b></p>", "<p><strong>x</strong></p>\n"), ("title", "Buy milk", "Buy  milk"),
    ("title", "buy", None), ("n", 3, None), ("priority", "High", None), ("status", "open", None),
    ("ship_street", "12 Oak Street", "12 Oak St."), ("street", "9 N Elm Ave Apt 4", "9 North Elm Avenue Apartment 4"),
    ("to_addrs", "a@x.io, b@y.io", "b@y.io, a@x.io"), ("body", "Plain words", None),
    ("body", "<p>Plain words</p>", "<p>Plain words</p>\n"),
])
def test_equivalent_spellings(column: str, value: object, expected: str | None) -> None:
    got = P.equivalent_spellings(column, value)
    assert (got[0][1] if got else None) == expected
    for _, other in got:  # every spelling means the same under the comparator a judge of it uses
        if column == "raw":
            assert formula_refs(other) == formula_refs(value)
        elif column == "body":
            assert rich_text(other) == rich_text(value)
        elif "street" in column:
            assert norm_address(other) == norm_address(value)
        elif column == "to_addrs":
            assert cmp(other.split(", "), op="set", values=str(value).split(", "))
        elif column == "title":
            assert cmp(other, op="text", value=value)


def test_free_text_is_respelled_in_inner_spaces_only() -> None:
    # not in other letter case: stored text keeps its case, as every user sees it
    got = dict(P.equivalent_spellings("title", "Call the bank"))
    assert got == {"the free text with doubled inner spaces": "Call  the  bank"}
    # a rich-text paragraph is also plain text, both ways, where the column holds rich text
    assert ("the same paragraph as plain text", "x y") in P.equivalent_spellings("body", "<p>x y</p>")
    assert P.equivalent_spellings("body", "x y", rich=True) == [("the same text as a rich-text paragraph", "<p>x y</p>")]
    assert P.equivalent_spellings("body", "x y") == []  # a plain-text body: "<p>" would show as typed


def test_same_text_lookups_in_paths_and_sql(todo) -> None:
    # runs of whitespace and the ends aside; case and character forms kept, as stored text is shown
    rows = {"todos": [{"id": 1, "title": "Pay  the Rent "}, {"id": 2, "title": "pay the rent"}]}
    assert get_path(rows, "todos[title~=Pay the Rent].id", unique=True) == 1
    assert get_path(rows, "todos[title=Pay the Rent].id", unique=True) is None  # `=` stays exact
    twice = {"todos": [*rows["todos"], {"id": 3, "title": "Pay the  Rent"}]}
    with pytest.raises(PathError):  # a same-text lookup names one row too: a duplicate fails
        get_path(twice, "todos[title~=Pay the Rent].id", unique=True)
    wide = {"todos": [{"id": 4, "title": "\uff30ay the Rent"}]}  # a full-width P shows another title
    assert get_path(wide, "todos[title~=Pay the Rent].id", unique=True) is None
    # an email address is one whatever its case (a contact looked up by the address typed)
    mail = {"contacts": [{"id": 5, "email": "Ana.Diaz@Example.org"}]}
    assert get_path(mail, "contacts[email~=ana.diaz@example.org].id", unique=True) == 5
    # a pattern allows the row added under another spacing, and nothing else
    assert not unexpected_changes({"todos": []}, {"todos": [rows["todos"][0]]}, ["todos[title~=Pay the Rent]"])
    assert unexpected_changes({"todos": []}, {"todos": [rows["todos"][1]]}, ["todos[title~=Pay the Rent]"])
    app, _ = todo
    app.reset(0)
    title = app.db.scalar("SELECT title FROM todos ORDER BY id LIMIT 1")
    spelled = "  ".join(title.split()) + " "
    assert app.db.read_only_query("SELECT title FROM todos WHERE same_text(title, ?)", [spelled]) == [{"title": title}]
    assert app.db.read_only_query("SELECT title FROM todos WHERE same_text(title, ?)", [title.upper()]) == []
    assert app.db.read_only_query("SELECT same_text(NULL, 'x') AS s, same_text('a b', 'ab') AS t", []) == [
        {"s": 0, "t": 0}]


def test_formulas_typed_as_their_values_are_probes() -> None:
    app = load_app("sheets")
    app.reset(0)
    infos = P.table_infos(app.db.conn, type(app).assigned)
    before = _image(app, infos)
    app.db.execute("INSERT OR REPLACE INTO cells (sheet_id, row, col, raw) VALUES (1, 50, 4, '=SUM(D2:D41)')")
    app.db.execute("INSERT OR REPLACE INTO cells (sheet_id, row, col, raw) VALUES (1, 51, 4, '=MAX(D2:D41)')")
    after = _image(app, infos)
    computed = P.computed_values(app.state())
    total = app.db.scalar("SELECT SUM(CAST(raw AS REAL)) FROM cells WHERE sheet_id = 1 AND col = 4 AND row BETWEEN 2 AND 41")
    assert computed["=SUM(D2:D41)"] == total
    probes = P.answer_for_method(infos, P.DbDiff.between(before, after), computed)
    assert [p.kind for p in probes] == ["answer_for_method"] * 3  # both at once, then each alone
    values = {w[1][0] for p in probes for w in p.writes}
    assert str(int(total)) in values and all(not v.startswith("=") for v in values)
    assert P.answer_for_method(infos, P.DbDiff.between(before, before), computed) == []
    app.reset(0)


def test_free_and_assigned_fields_are_never_damaged(todo) -> None:
    app, infos = todo
    app.reset(4)
    before = _image(app, infos)
    app.db.execute("INSERT INTO todos (list_id, title, priority) VALUES (1, 'Pay rent', 'high')")
    after = _image(app, infos)
    diff = P.DbDiff.between(before, after)
    probes, _ = P.generate_probes(infos, before, after, diff, seed=0, free=["todos.notes", "todos.tags"])
    damaged = {p.description.split(".")[-1].split(":")[0] for p in probes if p.kind == "collateral"}
    assert damaged and not damaged & {"notes", "tags"}
    assert any(p.kind == "over_reach" and p.description.startswith("also delete") for p in probes)  # a relation half kept
    app.reset(0)


def test_ordered_subgoals_count_the_milestones_before_the_one_reached() -> None:
    spec = S.JudgeSpec.model_validate({
        "checks": [_check("b done", "todos[id=2].done", True)],
        "subgoals": [_check("page open", "todos[id=1].title", "never"), _check("a tagged", "todos[id=1].tags", "x")]})
    v = StateJudge(spec).evaluate(_input(STATE, _edit(r1__tags="x")))
    assert v.progress == pytest.approx(2 / 3) and not v.passed  # the second milestone counts the first


def test_link_rows_added_in_another_order_are_an_equivalent_probe() -> None:
    app = load_app("contacts")
    app.reset(0)
    infos = P.table_infos(app.db.conn, type(app).assigned)
    before = _image(app, infos)
    contact = app.db.scalar("SELECT id FROM contacts ORDER BY id LIMIT 1")
    tags = [r["id"] for r in app.db.all("SELECT id FROM tags WHERE id NOT IN (SELECT tag_id FROM contact_tags "
                                        "WHERE contact_id = ?) ORDER BY id LIMIT 2", (contact,))]
    for tag in tags:
        app.db.execute("INSERT INTO contact_tags (contact_id, tag_id) VALUES (?, ?)", (contact, tag))
    after = _image(app, infos)
    probes, _ = P.generate_probes(infos, before, after, P.DbDiff.between(before, after), seed=0)
    reordered = [p for p in probes if p.kind == "equivalent" and "opposite order" in p.description]
    assert len(reordered) == 1
    mirror = P.ProbeMirror(app, infos)
    mirror.load(after, reordered[0].writes)
    rows = app.db.all("SELECT tag_id FROM contact_tags WHERE contact_id = ? ORDER BY rowid", (contact,))
    assert [r["tag_id"] for r in rows][-2:] == tags[::-1]  # the same rows, the other way round
    app.reset(0)
