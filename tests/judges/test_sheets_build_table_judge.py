"""`sheets.build_table`'s judge on the app's real state (served in process): the table asked
for passes, and still does after a stray cell was typed and cleared (the app deletes a cleared
cell); the same table with a cell copied in beside it fails (it passed when the judge read
only the nine cells it asks for)."""

from __future__ import annotations

from _apps_common import judge_state, open_app

from cua.task import JudgeInput
from cua.tasks.registry import get_template


def _table(app: object, params: dict[str, object], extra: dict[tuple[int, int], str]) -> None:
    db = app.db  # type: ignore[attr-defined]
    position = db.scalar("SELECT COALESCE(MAX(position), 0) + 1 FROM sheets")
    db.execute("INSERT INTO sheets (name, position) VALUES (?, ?)", (params["name"], position))
    sid = db.scalar("SELECT id FROM sheets WHERE name = ?", (params["name"],))
    cells = {(1, 1): "Item", (1, 2): "Cost", (2, 1): params["i1"], (3, 1): params["i2"], (4, 1): params["i3"],
             (2, 2): str(params["c1"]), (3, 2): str(params["c2"]), (4, 2): str(params["c3"]), (5, 2): "=SUM(B2:B4)",
             **extra}
    for (row, col), raw in cells.items():
        db.execute("INSERT INTO cells (sheet_id, row, col, raw) VALUES (?, ?, ?, ?)", (sid, row, col, raw))


def test_the_new_sheet_holds_the_table_and_nothing_beside_it() -> None:
    instance = get_template("sheets.build_table@1").instantiate(0)
    verdicts = []
    for extra in ({}, {(1, 3): "Tickets"}):  # as asked; a cell copied in beside the table
        app, _, control = open_app("sheets")
        control.reset(instance.reset_seed)
        initial = judge_state(control, instance)
        _table(app, instance.params, extra)
        verdicts.append(instance.judge.evaluate(JudgeInput(initial=initial, final=judge_state(control, instance))))
    right, beside = verdicts
    assert right.passed, [(e.check, e.passed, e.observed) for e in right.evidence]
    assert not beside.passed
    assert [e.check for e in beside.evidence if not e.passed and not e.check.startswith("subgoal")] == [
        "the new sheet holds those nine cells and nothing else (a cell copied in beside them is not the table)"]
