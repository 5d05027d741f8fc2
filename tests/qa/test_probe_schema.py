"""Judge QA's `schema_mutation` probes (`cua.qa.probe_schema`): one edit anywhere in the
app's schema, judged by the template's real judge on the real bundled app.

In process (no browser): the edits cover every table and each kind of column, the targets'
parents, deletes and copies; a weak judge (no side-effect diff, or a table-wide allowance no
check reads) is reported on an edit of a table the oracle never touched, a sound one is not.
In real Chromium: `check_templates` on a todo and a shop template counts the class.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sqlite3
import textwrap

import pytest

from cua.actions import Done
from cua.qa import judge_qa
from cua.qa import probes as P
from cua.qa.check import check_templates
from cua.qa.probe_schema import KIND, MAX_PROBES, FastMirror, foreign_keys, schema_mutations
from cua.state import StateResult
from cua.task import JudgeInput
from cua.tasks.loader import load_text
from cua.tasks.selection import selected_templates

TEMPLATES = """
suite: qa
defaults:
  sandbox: {kind: browser, app: todo, start_url: /, isolation: shared}
  tags: {app: todo}
templates:
  - id: qa.blind@1
    instruction: Mark "{todo.title}" as done.
    params:
      todo: {type: rows, sql: "SELECT id, title FROM todos WHERE done = 0 ORDER BY id"}
    judge:
      side_effects: false
      checks:
        - {check: done, get: {kind: app_state, path: "todos[id={todo.id}].done"}, expect: {op: equals, value: true}}
    oracle:
      - done: {}
  - id: qa.allows_lists@1
    instruction: Mark "{todo.title}" as done.
    params:
      todo: {type: rows, sql: "SELECT id, title FROM todos WHERE done = 0 ORDER BY id"}
    judge:
      checks:
        - {check: done, get: {kind: app_state, path: "todos[id={todo.id}].done"}, expect: {op: equals, value: true}}
      expected_changes: ["todos[id={todo.id}].done", "lists"]
      # the loader refuses an allowance no check reads unless declared (cua.judges.completeness);
      # judge QA must still find it, declared or not
      unjudged: {lists: "a probe of judge QA, which must report it all the same"}
    oracle:
      - done: {}
  - id: qa.sound@1
    instruction: Mark "{todo.title}" as done.
    params:
      todo: {type: rows, sql: "SELECT id, title FROM todos WHERE done = 0 ORDER BY id"}
    judge:
      checks:
        - {check: done, get: {kind: app_state, path: "todos[id={todo.id}].done"}, expect: {op: equals, value: true}}
      expected_changes: ["todos[id={todo.id}].done"]
    oracle:
      - done: {}
"""


def _image(app: object, infos: list[P.TableInfo]) -> P.DbImage:
    db = app.db  # type: ignore[attr-defined]
    counts = [db.read_only_query(q.query, [])[0]["n"] for q in P.count_queries(infos)]
    pages = P.dump_queries(infos, counts=counts)
    results = [StateResult(value=db.read_only_query(q.query, [])) for _, q in pages]
    return P.DbImage.from_results(infos, results, [i for i, _ in pages])


def _oracle_run(template_id: str, seed: int = 0) -> tuple[object, P.DbImage, P.DbImage, JudgeInput]:
    """The template's instance and what its oracle run would read: the todo marked done in
    the in-process app, both ends read through the judge's own queries."""
    template = next(t for t in load_text(textwrap.dedent(TEMPLATES), "qa.yaml", suite="qa") if t.id == template_id)
    instance = template.instantiate(seed)
    app, infos = judge_qa._app("todo")
    app.reset(seed)
    initial_db = _image(app, infos)
    mirror = P.ProbeMirror(app, infos)
    queries = instance.judge.queries()
    initial = mirror.answer(queries, {})
    todo = instance.params["todo"]["id"]
    mirror.load(initial_db, [("UPDATE todos SET done = 1 WHERE id = ?", [todo])])
    final_db = _image(app, infos)
    final = mirror.answer(queries, {})
    data = JudgeInput(initial=initial, final=final, done=Done(), steps=2)
    assert instance.judge.evaluate(data).passed  # the oracle's end passes
    return instance, initial_db, final_db, data


def test_edits_cover_every_table_each_kind_of_column_and_the_targets_parents() -> None:
    for name, kinds in (("todo", ("(text)", "(flag)", "(foreign key)")), ("shop", ("(text)", "(number)", "(foreign key)"))):
        app, infos = judge_qa._app(name)
        app.reset(1)
        image = _image(app, infos)
        fks = foreign_keys(app.db.conn, infos)
        target_table = "todos" if name == "todo" else "order_items"
        target = next(iter(image.tables[target_table].values()))
        diff = P.DbDiff([P.RowChange(target_table, ("x",), "changed", target, target)])
        probes, why = schema_mutations(infos, image, diff, fks, seed=1)
        assert not why and all(p.kind == KIND for p in probes)
        text = "\n".join(p.description for p in probes)
        tables = [i.name for i in infos if i.name != "cua_activity" and image.tables[i.name]]
        for table in tables:  # every table with rows, touched by the oracle or not
            assert f"{table}[" in text, (table, text)
            assert any(p.description.startswith(f"{table}[") and p.description.endswith("deleted") for p in probes)
        for kind in kinds:
            assert kind in text, (kind, text)
        assert "a copy of " in text
        assert text.startswith("the parent of ")  # the parents of the target first
        # each probe the schema takes is a real, different end state of the same schema, and
        # the fast loader (one build, a copy of its bytes per probe) loads exactly what the
        # mirror does; one the schema refuses (a CHECK on the edited column) both refuse, and
        # judge QA reports it skipped
        mirror = P.ProbeMirror(app, infos)
        fast = FastMirror(mirror, image)
        loaded = 0
        for probe in probes[:MAX_PROBES]:
            try:
                mirror.load(image, probe.writes)
            except sqlite3.IntegrityError:
                with pytest.raises(sqlite3.IntegrityError):
                    fast.load(probe.writes)
                continue
            slow = _image(app, infos).tables
            fast.load(probe.writes)
            assert _image(app, infos).tables == slow != image.tables, probe.description
            loaded += 1
        assert loaded > len(probes[:MAX_PROBES]) // 2, (name, loaded)  # a CHECK refuses only its own column
        fast.load()
        assert _image(app, infos).tables == image.tables


def test_assigned_bookkeeping_and_free_columns_are_never_edited() -> None:
    app, infos = judge_qa._app("shop")
    by_name = {i.name: i for i in infos}
    free = ["addresses.city", "addresses.name", "addresses.street", "addresses.zip", "addresses.state"]
    edited: set[tuple[str, str]] = set()
    for seed in range(4):
        app.reset(seed)
        probes, _ = schema_mutations(infos, _image(app, infos), P.DbDiff([]), foreign_keys(app.db.conn, infos),
                                     seed=seed, free=free)
        for p in probes:
            m = re.match(r"^(?:the parent of \S+: )?(\w+)\[[^\]]*\]\.(\w+) \(", p.description)
            if m:
                edited.add((m[1], m[2]))
    assert edited
    for table, column in edited:
        info = by_name[table]
        assert column not in info.assigned and column not in info.pk, (table, column)  # e.g. products.stock
        assert not P._BOOKKEEPING.search(column) and not P._ORDER.match(column), (table, column)
        assert f"{table}.{column}" not in free, (table, column)


def test_a_table_the_oracle_emptied_gets_a_row_put_back() -> None:
    """A checkout empties the cart: the cart is still attacked, with a line the user never had."""
    app, infos = judge_qa._app("shop")
    app.reset(0)
    before = _image(app, infos)
    mirror = P.ProbeMirror(app, infos)
    mirror.load(before, [("DELETE FROM cart_items", [])])
    after = _image(app, infos)
    assert not after.tables["cart_items"]
    (line,) = before.tables["cart_items"].values()
    probes, _ = schema_mutations(infos, after, P.DbDiff.between(before, after), foreign_keys(app.db.conn, infos))
    put_back = [p for p in probes if p.description.startswith("a copy of cart_items[")]
    assert len(put_back) == 1 and "inserted with product_id=" in put_back[0].description
    mirror.load(after, put_back[0].writes)
    (new,) = _image(app, infos).tables["cart_items"].values()
    assert new["product_id"] != line["product_id"] and new["qty"] == line["qty"]
    mirror.load(after)


def test_a_judge_blind_to_side_effects_is_reported_on_a_table_the_oracle_never_touched() -> None:
    instance, initial_db, final_db, data = _oracle_run("qa.blind@1")
    outcome = judge_qa.run_probes(instance, "todo", initial_db, final_db, data)
    assert outcome.ran[KIND] >= 4
    wrong = [reason for stage, reason, _ in outcome.wrong if stage == f"probe:{KIND}"]
    assert any("lists[" in r and r.startswith("passes: ") for r in wrong), wrong


def test_an_allowance_no_check_reads_is_reported_as_allowed_but_never_judged() -> None:
    instance, initial_db, final_db, data = _oracle_run("qa.allows_lists@1")
    outcome = judge_qa.run_probes(instance, "todo", initial_db, final_db, data)
    wrong = [reason for stage, reason, _ in outcome.wrong if stage == f"probe:{KIND}"]
    assert wrong and all("lists" in r for r in wrong), wrong
    assert any(r.startswith("allowed but never judged: the template allows lists[") for r in wrong), wrong


def test_a_sound_judge_fails_every_edit() -> None:
    instance, initial_db, final_db, data = _oracle_run("qa.sound@1")
    outcome = judge_qa.run_probes(instance, "todo", initial_db, final_db, data)
    assert outcome.ran[KIND] >= 4 and KIND not in outcome.skipped
    assert [w for w in outcome.wrong if w[0] == f"probe:{KIND}"] == []


@pytest.mark.slow  # Chromium, the todo and shop apps
@pytest.mark.skipif(not (shutil.which("chromium-headless-shell") or shutil.which("chromium")), reason="needs Chromium")
def test_check_counts_schema_mutations_on_real_templates() -> None:
    templates = [t for t in selected_templates(["todo", "shop"]) if t.id in ("todo.mark_done@1", "shop.add_to_cart@1")]
    report = asyncio.run(check_templates(templates, seeds=[0], isolation="shared"))
    assert len(report.templates) == 2
    for t in report.templates:
        assert t.failures == [], [f.lines() for f in t.failures]
        assert t.probes_ran.get(KIND, 0) >= 5, t.probes_ran
        assert any(line.startswith("    probes ran:") and f"{KIND}=" in line for line in t.probe_lines())
        assert report.to_json()["templates"][report.templates.index(t)]["probes_ran"][KIND] == t.probes_ran[KIND]


@pytest.mark.xfail(strict=True, raises=KeyError, reason=(
    "the probe mirror applies a probe's writes with foreign keys off, so deleting a folder "
    "leaves its subfolders pointing at it (the app, foreign keys on, cascades): seen with the "
    "notes app's new data; the fix is in cua/qa/db_image.py, a judge-code root, on branch roots-next"))
def test_a_tree_is_never_edited_into_a_cycle() -> None:
    """A folder moved under itself or one of its own subfolders is a cycle no UI makes, and
    the notes app's read of a folder's path would never end on it: every probe's end state
    is still a tree the app reads."""
    app, infos = judge_qa._app("notes")
    fks = foreign_keys(app.db.conn, infos)
    mirror = P.ProbeMirror(app, infos)
    moved = 0
    for seed in range(3):
        app.reset(seed)
        image = _image(app, infos)
        for table in ("notes", "folders"):
            for row in list(image.tables[table].values())[:4]:
                diff = P.DbDiff([P.RowChange(table, ("x",), "changed", row, row)])
                probes, _ = schema_mutations(infos, image, diff, fks, seed=seed)
                for probe in probes:
                    mirror.load(image, probe.writes)
                    folders = {f["id"]: f["parent_id"] for f in app.db.all("SELECT id, parent_id FROM folders")}
                    for start in folders:
                        seen, node = set(), start
                        while node is not None:
                            assert node not in seen, (probe.description, folders)
                            seen.add(node)
                            node = folders.get(node)
                    moved += "parent_id (foreign key)" in probe.description
                    assert app.state()["folders"]
    assert moved  # folders are still moved, to another folder that is not below them
    mirror.load(image)


def test_a_table_no_route_writes_is_never_edited() -> None:
    """The travel timetable is seeded and read only: a booked flight's number or times
    edited is an end state no agent can reach, so it is no probe of the booking's judge."""
    app, infos = judge_qa._app("travel")
    app.reset(0)
    image = _image(app, infos)
    booking = {"id": 99, "flight_id": next(iter(image.tables["flights"].values()))["id"], "last_name": "Tanaka"}
    diff = P.DbDiff([P.RowChange("bookings", (99,), "added", None, booking)])
    probes, _ = schema_mutations(infos, image, diff, foreign_keys(app.db.conn, infos), seed=0)
    text = "\n".join(p.description for p in probes)
    assert not re.search(r"flights\[\d+\]\.\w+ \(", text), text  # no column of a flight edited
    assert "airports[" in text  # the other tables are still attacked
