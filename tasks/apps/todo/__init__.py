"""Todo: lists of tasks with due dates, priorities and tags; a multi-page app.

Pages: `/` (lists), `/lists/{id}` (a list's todos, add form, done toggles, filters),
`/todos/{id}` (edit form: title, due date, priority, tags, notes; delete with a confirm
modal), `/search?q=` (search across lists). Forms post and redirect, as classic web
apps do, so every change is in SQLite the moment the page settles.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.i18n import format_day
from cua.tasks.apps.todo.seed import seed_todos
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE lists (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, color TEXT NOT NULL);
CREATE TABLE todos (
    id INTEGER PRIMARY KEY,
    list_id INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    due TEXT,
    priority TEXT NOT NULL DEFAULT 'normal' CHECK (priority IN ('low','normal','high')),
    tags TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT ''
);
"""

NAV = [("Lists", "/"), ("Search", "/search")]


class TodoApp(WebApp):
    name = "todo"
    title = "Todo"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_todos(db, rng, self.now())

    def state(self) -> dict[str, Any]:
        return {
            "lists": self.db.all("SELECT id, name, color FROM lists ORDER BY id"),
            "todos": [
                {**t, "done": bool(t["done"]), "tags": [x for x in t["tags"].split(",") if x]}
                for t in self.db.all("SELECT * FROM todos ORDER BY id")
            ],
        }

    # --- pages ---

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.index),
            Route("/lists", self.create_list, methods=["POST"]),
            Route("/lists/{list_id:int}", self.show_list),
            Route("/lists/{list_id:int}/todos", self.add_todo, methods=["POST"]),
            Route("/todos/{todo_id:int}", self.edit_todo, methods=["GET", "POST"]),
            Route("/todos/{todo_id:int}/toggle", self.toggle, methods=["POST"]),
            Route("/todos/{todo_id:int}/delete", self.delete, methods=["POST"]),
            Route("/search", self.search),
        ]

    def _page(self, title: str, body: str) -> Response:
        return html_page(self, title, body, nav=NAV, scripts=["/static/app/todo.js"])

    async def index(self, request: Request) -> Response:
        rows = self.db.all(
            "SELECT l.id, l.name, l.color, COUNT(t.id) AS total, COALESCE(SUM(t.done = 0), 0) AS open "
            "FROM lists l LEFT JOIN todos t ON t.list_id = l.id GROUP BY l.id ORDER BY l.id")
        cards = "".join(
            f'<a class="card list-card" href="/lists/{r["id"]}" data-list="{esc(r["name"])}">'
            f'<span class="swatch" style="background:{esc(r["color"])}"></span>'
            f'<strong>{esc(r["name"])}</strong> <span class="muted">{r["open"]} {self.t("open")} · '
            f'{r["total"]} {self.t("total")}</span></a>'
            for r in rows)
        form = ('<form class="card row" method="post" action="/lists" data-form="new-list">'
                f'<label for="new-list">{self.t("New list")}</label><input id="new-list" type="text" name="name" required>'
                f'<button class="primary" type="submit" data-action="create-list">{self.t("Create list")}</button></form>')
        return self._page(self.t("Lists"), f"<h1>{self.t('Lists')}</h1><div class='lists'>{cards}</div>{form}")

    async def create_list(self, request: Request) -> Response:
        form = await request.form()
        name = str(form.get("name", "")).strip()[:60]
        if not name:
            return RedirectResponse("/", status_code=303)
        existing = self.db.one("SELECT id FROM lists WHERE name = ?", (name,))
        if existing is None:
            new_id = self.db.insert("INSERT INTO lists (name, color) VALUES (?, ?)", (name, "#57606a"))
            return RedirectResponse(f"/lists/{new_id}", status_code=303)
        return RedirectResponse(f"/lists/{existing['id']}", status_code=303)

    def _todo_rows(self, todos: list[dict[str, Any]], *, show_list: bool = False) -> str:
        out = []
        for t in todos:
            tags = "".join(f'<span class="tag">{esc(x)}</span>' for x in t["tags"].split(",") if x)
            overdue = bool(t["due"] and t["due"] < self.now().date().isoformat() and not t["done"])
            due = (f'<time class="due{" overdue" if overdue else ""}" datetime="{esc(t["due"])}"'
                   f'{" data-overdue" if overdue else ""}>{esc(self._day(t["due"]))}</time>' if t["due"] else "")
            list_cell = f'<td class="muted">{esc(t["list_name"])}</td>' if show_list else ""
            out.append(
                f'<tr class="todo{" done" if t["done"] else ""} prio-{t["priority"]}" data-id="{t["id"]}" '
                f'data-done="{int(bool(t["done"]))}" data-priority="{t["priority"]}">'
                f'<td><form method="post" action="/todos/{t["id"]}/toggle">'
                f'<input type="checkbox" class="toggle" data-action="toggle" '
                f'aria-label="{self.t("Done")}: {esc(t["title"])}" {"checked" if t["done"] else ""}>'
                f'</form></td>'
                f'<td><a class="title" data-field="title" href="/todos/{t["id"]}">{esc(t["title"])}</a> {tags}</td>'
                f'{list_cell}<td>{due}</td><td class="prio">{self.t(t["priority"])}</td></tr>')
        return "".join(out)

    async def show_list(self, request: Request) -> Response:
        list_id = request.path_params["list_id"]
        lst = self.db.one("SELECT * FROM lists WHERE id = ?", (list_id,))
        if lst is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such list.')}</div>")
        show = request.query_params.get("show", "open")
        where = {"open": "AND done = 0", "done": "AND done = 1"}.get(show, "")
        todos = self.db.all(
            f"SELECT * FROM todos WHERE list_id = ? {where} ORDER BY done, due IS NULL, due, id", (list_id,))
        filters = " ".join(
            f'<a class="filter{" active" if show == key else ""}" href="?show={key}" data-filter="{key}"'
            f'{" aria-current=page" if show == key else ""}>{self.t(label)}</a>'
            for key, label in (("open", "Open"), ("done", "Done"), ("all", "All")))
        add = (f'<form class="card row add-todo" method="post" action="/lists/{list_id}/todos" data-form="add-todo">'
               f'<input type="text" name="title" placeholder="{self.t("New todo")}" aria-label="{self.t("New todo")}" required>'
               f'<input type="date" name="due" aria-label="{self.t("Due date")}">'
               f'<select name="priority" aria-label="{self.t("Priority")}">{self._priority_options("normal")}</select>'
               f'<button class="primary" type="submit" data-action="add">{self.t("Add")}</button></form>')
        table = (f"<table class='todos'><thead><tr><th></th><th>{self.t('Title')}</th><th>{self.t('Due')}</th>"
                 f"<th>{self.t('Priority')}</th></tr></thead>"
                 f"<tbody>{self._todo_rows(todos)}</tbody></table>" if todos
                 else f"<p class='muted empty'>{self.t('Nothing here.')}</p>")
        return self._page(lst["name"], f"<h1>{esc(lst['name'])}</h1>{add}<div class='filters'>{filters}</div>{table}")

    async def add_todo(self, request: Request) -> Response:
        list_id = request.path_params["list_id"]
        form = await request.form()
        title = str(form.get("title", "")).strip()[:200]
        if title and self.db.one("SELECT id FROM lists WHERE id = ?", (list_id,)):
            priority = str(form.get("priority", "normal"))
            due = str(form.get("due", "")).strip() or None
            self.db.execute("INSERT INTO todos (list_id, title, due, priority) VALUES (?, ?, ?, ?)",
                            (list_id, title, due, priority if priority in ("low", "normal", "high") else "normal"))
        return RedirectResponse(f"/lists/{list_id}", status_code=303)

    async def toggle(self, request: Request) -> Response:
        todo_id = request.path_params["todo_id"]
        self.db.execute("UPDATE todos SET done = 1 - done WHERE id = ?", (todo_id,))
        return RedirectResponse(request.headers.get("referer") or "/", status_code=303)

    async def delete(self, request: Request) -> Response:
        todo = self.db.one("SELECT list_id FROM todos WHERE id = ?", (request.path_params["todo_id"],))
        if todo is None:
            return RedirectResponse("/", status_code=303)
        self.db.execute("DELETE FROM todos WHERE id = ?", (request.path_params["todo_id"],))
        return RedirectResponse(f"/lists/{todo['list_id']}", status_code=303)

    async def edit_todo(self, request: Request) -> Response:
        todo_id = request.path_params["todo_id"]
        todo = self.db.one("SELECT * FROM todos WHERE id = ?", (todo_id,))
        if todo is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such todo.')}</div>")
        if request.method == "POST":
            form = await request.form()
            title = str(form.get("title", "")).strip()[:200] or todo["title"]
            priority = str(form.get("priority", todo["priority"]))
            tags = ",".join(sorted({t.strip().lower() for t in str(form.get("tags", "")).split(",") if t.strip()}))
            self.db.execute(
                "UPDATE todos SET title = ?, due = ?, priority = ?, tags = ?, notes = ?, list_id = ? WHERE id = ?",
                (title, str(form.get("due", "")).strip() or None,
                 priority if priority in ("low", "normal", "high") else todo["priority"], tags,
                 str(form.get("notes", ""))[:2000], int(str(form.get("list_id", todo["list_id"]))), todo_id))
            return RedirectResponse(f"/lists/{todo['list_id']}", status_code=303)
        lists = self.db.all("SELECT id, name FROM lists ORDER BY id")
        options = "".join(f'<option value="{l["id"]}"{" selected" if l["id"] == todo["list_id"] else ""}>{esc(l["name"])}</option>' for l in lists)
        t = self.t
        body = (
            f"<h1>{t('Edit todo')}</h1><form class='card edit' method='post' action='/todos/{todo_id}' data-form='edit-todo'>"
            f"<p><label>{t('Title')}<br><input type='text' name='title' value='{esc(todo['title'])}' size='50'></label></p>"
            f"<p><label>{t('List')}<br><select name='list_id'>{options}</select></label></p>"
            f"<p><label>{t('Due date')}<br><input type='date' name='due' value='{esc(todo['due'] or '')}'></label></p>"
            f"<p><label>{t('Priority')}<br><select name='priority'>{self._priority_options(todo['priority'])}</select></label></p>"
            f"<p><label>{t('Tags (comma separated)')}<br><input type='text' name='tags' value='{esc(todo['tags'])}'></label></p>"
            f"<p><label>{t('Notes')}<br><textarea name='notes' rows='4' cols='50'>{esc(todo['notes'])}</textarea></label></p>"
            f"<p class='row'><button class='primary' type='submit' data-action='save'>{t('Save')}</button>"
            f"<a class='button' href='/lists/{todo['list_id']}' data-action='cancel'>{t('Cancel')}</a>"
            f"<button type='button' class='danger' id='delete-open' data-action='delete'>{t('Delete…')}</button></p></form>"
            f"<div class='modal-backdrop' id='delete-modal' hidden><div class='modal' role='dialog' aria-label='{t('Confirm delete')}'>"
            f"<p>{t('Delete')} “{esc(todo['title'])}”?</p><form method='post' action='/todos/{todo_id}/delete' class='row'>"
            f"<button type='submit' class='danger' id='delete-confirm' data-action='confirm-delete'>{t('Delete')}</button>"
            f"<button type='button' id='delete-cancel' data-action='keep'>{t('Keep it')}</button></form></div></div>")
        return self._page(t("Edit todo"), body)

    def _priority_options(self, chosen: str) -> str:
        return "".join(f'<option value="{p}"{" selected" if p == chosen else ""}>{self.t(p)}</option>'
                       for p in ("low", "normal", "high"))

    def _day(self, iso: str) -> str:
        """A due date as the locale writes it (en-US keeps the ISO date its tasks were written against)."""
        if self.variant.locale == "en-US":
            return iso
        try:
            return format_day(dt.date.fromisoformat(iso), self.variant.locale, with_year=True)
        except ValueError:  # a date typed into the edit form that is no date shows as typed
            return iso

    async def search(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        results = ""
        if q:
            todos = self.db.all(
                "SELECT t.*, l.name AS list_name FROM todos t JOIN lists l ON l.id = t.list_id "
                "WHERE t.title LIKE ? OR t.tags LIKE ? ORDER BY t.id LIMIT 100", (f"%{q}%", f"%{q}%"))
            results = (f"<p class='muted'>{len(todos)} {self.t('result(s) for')} “{esc(q)}”</p>"
                       f"<table class='todos'><tbody>{self._todo_rows(todos, show_list=True)}</tbody></table>")
        form = (f"<form class='card row' method='get' action='/search' data-form='search'><input type='search' name='q' "
                f"value='{esc(q)}' aria-label='{self.t('Search todos')}' placeholder='{self.t('Search todos')}'>"
                f"<button type='submit' class='primary' data-action='search'>{self.t('Search')}</button></form>")
        return self._page(self.t("Search"), f"<h1>{self.t('Search')}</h1>{form}{results}")


def search_url(q: str) -> str:
    return f"/search?q={quote_plus(q)}"


APP = TodoApp
