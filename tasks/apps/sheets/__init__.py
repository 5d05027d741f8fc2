"""Sheets: a spreadsheet workbook with a keyboard-driven grid and a safe formula engine.

Pages: `/` (the workbook's sheets), `/sheets/{id}` (the grid: name box and formula
bar, arrow/Tab/Enter/F2/Escape/Delete keyboard navigation and editing, mouse
selection and double-click editing, sort a range by a column, sheet tabs with add and
rename). Cell edits go to `POST /api/sheets/{id}/cells` and are in SQLite before the
response, which carries every recomputed value. Formulas (=SUM, =AVERAGE, =MIN, =MAX,
=COUNT, =ROUND, =ABS, =IF, arithmetic, references, ranges) are parsed, never eval'd.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.tasks.apps.base import AppDB, WebApp, esc, html_page, script_json
from cua.tasks.apps.sheets.formula import (
    MAX_COLS,
    MAX_ROWS,
    CellError,
    Value,
    col_index,
    col_name,
    display,
    evaluate_sheet,
    parse_ref,
    shift_formula,
)
from cua.tasks.apps.sheets.locale import DE, shown
from cua.tasks.apps.sheets.seed import seed_workbook
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE sheets (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, position INTEGER NOT NULL);
CREATE TABLE cells (
    sheet_id INTEGER NOT NULL REFERENCES sheets(id) ON DELETE CASCADE,
    row INTEGER NOT NULL,
    col INTEGER NOT NULL,
    raw TEXT NOT NULL,
    PRIMARY KEY (sheet_id, row, col)
);
"""
GRID_COLS = 12
GRID_ROWS = 60


def _json_value(v: Value) -> Any:
    return v.code if isinstance(v, CellError) else v


class SheetsApp(WebApp):
    name = "sheets"
    title = "Sheets"
    schema = SCHEMA
    derived = {"sheets.cells": ("cells.raw",)}
    records = {"sheets.cells.*": ("raw", "value")}
    assigned = {"sheets": ("position",)}
    static_dir = Path(__file__).parent / "static"
    #: sidebar: the sheet tabs as a column left of the grid; dense: small cells, more of the sheet in view
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)

    def t(self, text: str) -> str:
        if self.variant.locale == "de-DE" and text in DE:
            return DE[text]
        return super().t(text)

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_workbook(db, rng)

    # --- model ---

    def raws(self, sheet_id: int) -> dict[tuple[int, int], str]:
        return {(r["row"], r["col"]): r["raw"] for r in
                self.db.all("SELECT row, col, raw FROM cells WHERE sheet_id = ? AND raw != ''", (sheet_id,))}

    def sheet_cells(self, sheet_id: int) -> dict[str, dict[str, Any]]:
        raws = self.raws(sheet_id)
        values = evaluate_sheet(raws)
        loc = self.variant.locale
        return {f"{col_name(c)}{r}": {"raw": raws[(r, c)], "value": _json_value(values[(r, c)]),
                                      "display": shown(display(values[(r, c)]), isinstance(values[(r, c)], float), loc)}
                for (r, c) in sorted(raws)}

    def state(self) -> dict[str, Any]:
        sheets = self.db.all("SELECT id, name, position FROM sheets ORDER BY position, id")
        return {"sheets": [{**s, "cells": {ref: {"raw": c["raw"], "value": c["value"]} for ref, c in self.sheet_cells(s["id"]).items()}}
                           for s in sheets]}

    # --- routes ---

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.index),
            Route("/sheets", self.add_sheet, methods=["POST"]),
            Route("/sheets/{sheet_id:int}", self.show_sheet),
            Route("/sheets/{sheet_id:int}/rename", self.rename_sheet, methods=["POST"]),
            Route("/sheets/{sheet_id:int}/sort", self.sort_range, methods=["POST"]),
            Route("/api/sheets/{sheet_id:int}/cells", self.api_cells, methods=["GET", "POST"]),
        ]

    def _sheet(self, sheet_id: int) -> dict[str, Any] | None:
        return self.db.one("SELECT * FROM sheets WHERE id = ?", (sheet_id,))

    async def index(self, request: Request) -> Response:
        sheets = self.db.all("SELECT s.*, (SELECT COUNT(*) FROM cells c WHERE c.sheet_id = s.id) AS n "
                             "FROM sheets s ORDER BY position, id")
        t = self.t
        cards = "".join(f'<a class="card sheet-card" href="/sheets/{s["id"]}" data-sheet="{esc(s["name"])}"><strong>{esc(s["name"])}</strong>'
                        f' <span class="muted">{s["n"]} {t("cells")}</span></a>' for s in sheets)
        return html_page(self, t("Workbook"), f"<h1>{t('Workbook')}</h1><div class='sheet-cards'>{cards}</div>",
                         nav=[("Workbook", "/")])

    async def show_sheet(self, request: Request) -> Response:
        sid = request.path_params["sheet_id"]
        sheet = self._sheet(sid)
        t = self.t
        if sheet is None:
            return html_page(self, t("Not found"), f"<div class='error'>{t('No such sheet.')}</div>", nav=[("Workbook", "/")])
        cells = self.sheet_cells(sid)
        max_row = max([GRID_ROWS] + [parse_ref(r)[0] + 5 for r in cells])
        max_col = max([GRID_COLS] + [parse_ref(r)[1] + 1 for r in cells])
        max_row, max_col = min(max_row, MAX_ROWS), min(max_col, MAX_COLS)
        head = "".join(f'<th class="colhead" scope="col">{col_name(c)}</th>' for c in range(1, max_col + 1))
        rows = []
        for r in range(1, max_row + 1):
            tds = []
            for c in range(1, max_col + 1):
                ref = f"{col_name(c)}{r}"
                cell = cells.get(ref)
                shown = cell["display"] if cell else ""
                num = " num" if cell and isinstance(cell["value"], float) else ""
                err = " err" if cell and shown.startswith("#") else ""
                tds.append(f'<td class="cell{num}{err}" data-ref="{ref}" role="gridcell" aria-label="{ref}">{esc(shown)}</td>')
            rows.append(f'<tr><th class="rowhead" scope="row">{r}</th>{"".join(tds)}</tr>')
        tabs = "".join(
            f'<a class="tab{" active" if s["id"] == sid else ""}" href="/sheets/{s["id"]}" data-sheet="{esc(s["name"])}">{esc(s["name"])}</a>'
            for s in self.db.all("SELECT id, name FROM sheets ORDER BY position, id"))
        col_options = "".join(f"<option>{col_name(c)}</option>" for c in range(1, max_col + 1))
        used_rows = [parse_ref(r)[0] for r in cells] or [1]
        used_cols = [parse_ref(r)[1] for r in cells] or [1]
        default_range = f"A2:{col_name(max(used_cols))}{max(used_rows)}"
        raw_json = script_json({k: v["raw"] for k, v in cells.items()})
        error = {"range": "The range is not a range of cells (write it as A2:F41).",
                 "column": "The sort column is not inside the range."}.get(request.query_params.get("error", ""))
        body = (
            f"<div class='sheet-head'><h1>{esc(sheet['name'])}</h1>"
            f"<form class='row sort-form' method='post' action='/sheets/{sid}/sort' data-form='sort'>"
            f"<label>{t('Sort range')} <input type='text' name='range' value='{esc(default_range)}' size='9' aria-label='{t('Sort range')}'></label>"
            f"<label>{t('by column')} <select name='column' aria-label='{t('Sort by column')}'>{col_options}</select></label>"
            f"<select name='order' aria-label='{t('Sort order')}'><option value='asc'>{t('A → Z, 0 → 9')}</option>"
            f"<option value='desc'>{t('Z → A, 9 → 0')}</option></select><button type='submit' data-action='sort'>{t('Sort')}</button></form></div>"
            + (f"<div class='error' role='alert'>{t(error)}</div>" if error else "")
            + f"<div class='tabs' role='navigation' aria-label='{t('Sheet tabs')}'>{tabs}"
            f"<form method='post' action='/sheets' class='inline'><button type='submit' class='tab add' aria-label='{t('Add sheet')}' data-action='add-sheet'>+</button></form>"
            f"<button type='button' id='rename-open' class='tab' data-action='rename'>{t('Rename…')}</button>"
            f"<form method='post' action='/sheets/{sid}/rename' class='row inline' id='rename-form' hidden>"
            f"<input type='text' name='name' id='rename-input' value='{esc(sheet['name'])}' aria-label='{t('Sheet name')}' required>"
            f"<button type='submit' class='primary' data-action='save-name'>{t('Save')}</button></form></div>"
            f"<div class='formula-bar'><input id='namebox' class='namebox' aria-label='{t('Cell name')}' value='A1'>"
            f"<span class='fx'>fx</span><input id='formula' class='formula' aria-label='{t('Formula bar')}' autocomplete='off'></div>"
            f"<div class='grid-wrap'><table class='grid' id='grid' role='grid' tabindex='0' aria-label='{esc(sheet['name'])} {t('cells')}' data-sheet='{sid}'"
            f" data-edit-label='{t('Edit')}' data-save-error='{t('Could not save')}'>"
            f"<thead><tr><th class='corner'></th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
            f"<script type='application/json' id='cells-data'>{raw_json}</script>")
        return html_page(self, sheet["name"], body, nav=[("Workbook", "/")], scripts=["/static/app/sheets.js"])

    async def add_sheet(self, request: Request) -> Response:
        names = {s["name"] for s in self.db.all("SELECT name FROM sheets")}
        n = len(names) + 1
        while f"Sheet{n}" in names:
            n += 1
        pos = (self.db.scalar("SELECT MAX(position) FROM sheets") or 0) + 1
        new_id = self.db.insert("INSERT INTO sheets (name, position) VALUES (?, ?)", (f"Sheet{n}", pos))
        return RedirectResponse(f"/sheets/{new_id}", status_code=303)

    async def rename_sheet(self, request: Request) -> Response:
        sid = request.path_params["sheet_id"]
        name = str((await request.form()).get("name", "")).strip()[:40]
        if name and self.db.one("SELECT id FROM sheets WHERE name = ? AND id != ?", (name, sid)) is None:
            self.db.execute("UPDATE sheets SET name = ? WHERE id = ?", (name, sid))
        return RedirectResponse(f"/sheets/{sid}", status_code=303)

    async def api_cells(self, request: Request) -> Response:
        sid = request.path_params["sheet_id"]
        if self._sheet(sid) is None:
            return JSONResponse({"error": "no such sheet"}, status_code=404)
        if request.method == "POST":
            try:
                payload = await request.json()
                row, col = parse_ref(str(payload["ref"]))
                raw = str(payload.get("raw", ""))[:2000]
            except (ValueError, KeyError, TypeError) as exc:
                return JSONResponse({"error": f"bad cell edit: {exc}"}, status_code=400)
            if raw.strip() == "":
                self.db.execute("DELETE FROM cells WHERE sheet_id = ? AND row = ? AND col = ?", (sid, row, col))
            else:
                self.db.execute("INSERT INTO cells (sheet_id, row, col, raw) VALUES (?, ?, ?, ?) "
                                "ON CONFLICT (sheet_id, row, col) DO UPDATE SET raw = excluded.raw", (sid, row, col, raw))
        return JSONResponse({"cells": self.sheet_cells(sid)})

    async def sort_range(self, request: Request) -> Response:
        sid = request.path_params["sheet_id"]
        form = await request.form()
        try:
            start, end = (parse_ref(p) for p in str(form.get("range", "")).split(":"))
            key_col = col_index(str(form.get("column", "A")))
        except ValueError:
            return RedirectResponse(f"/sheets/{sid}?error=range", status_code=303)
        (r1, c1), (r2, c2) = (min(start[0], end[0]), min(start[1], end[1])), (max(start[0], end[0]), max(start[1], end[1]))
        if not c1 <= key_col <= c2:
            return RedirectResponse(f"/sheets/{sid}?error=column", status_code=303)
        raws = self.raws(sid)
        values = evaluate_sheet(raws)
        desc = form.get("order") == "desc"

        def key(row: int) -> tuple[int, Any]:
            v = values.get((row, key_col))
            if v is None or isinstance(v, CellError):
                return (2, 0)  # blanks and errors stay last in both orders
            if isinstance(v, float):
                return (0, -v if desc else v)
            return (1, v.lower())

        rows = list(range(r1, r2 + 1))
        numeric = sorted((r for r in rows if key(r)[0] == 0), key=key)
        text = sorted((r for r in rows if key(r)[0] == 1), key=key, reverse=desc)
        order = numeric + text + [r for r in rows if key(r)[0] == 2] if not desc else text + numeric + [r for r in rows if key(r)[0] == 2]
        moved = {}
        for new_row, old_row in zip(rows, order):
            for c in range(c1, c2 + 1):
                raw = raws.get((old_row, c))
                if raw is not None:
                    moved[(new_row, c)] = shift_formula(raw, new_row - old_row)
        self.db.execute("DELETE FROM cells WHERE sheet_id = ? AND row BETWEEN ? AND ? AND col BETWEEN ? AND ?", (sid, r1, r2, c1, c2))
        for (r, c), raw in moved.items():
            self.db.execute("INSERT INTO cells (sheet_id, row, col, raw) VALUES (?, ?, ?, ?)", (sid, r, c, raw))
        return RedirectResponse(f"/sheets/{sid}", status_code=303)


APP = SheetsApp
