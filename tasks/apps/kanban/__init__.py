"""Kanban: boards of columns and cards, moved by drag and drop.

Pages: `/` (boards), `/b/{id}` (the board; cards are dragged between and within columns
with the mouse, pointer events, or moved from the keyboard with Alt+arrows; each move
is saved with `POST /api/cards/{id}/move` ({column_id, after_id} or {column_id, position}) before the page shows it as done),
`/b/{id}?card={cid}` (the card detail modal: title, description, due date with a
date picker, tags, assignees, move to column/position, comments, delete),
`/b/{id}?q=` (filter cards by text, tag or assignee). Forms post and redirect.

Method evidence (`cua.tasks.apps.activity.used_method`): a move that changes a card's column
or position says how it was made (`drag`: the pointer drag, `keyboard`: Alt+arrows, both over the script-only
JSON API; `dialog`: the card's Move form; `api`: a JSON move that names no gesture), and a change of its due date whether the date
picker made the value (`date_picker`) or the field was typed (`form`).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.values.web import QueryRule
from cua.tasks.apps.activity import used_method
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.i18n import format_day
from cua.tasks.apps.kanban.locale_de import DE
from cua.tasks.apps.kanban.seed import seed_kanban
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE boards (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, description TEXT NOT NULL DEFAULT '');
CREATE TABLE columns (id INTEGER PRIMARY KEY, board_id INTEGER NOT NULL REFERENCES boards(id) ON DELETE CASCADE,
                      name TEXT NOT NULL, position INTEGER NOT NULL);
CREATE TABLE cards (
    id INTEGER PRIMARY KEY,
    board_id INTEGER NOT NULL REFERENCES boards(id) ON DELETE CASCADE,
    column_id INTEGER NOT NULL REFERENCES columns(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    due TEXT,
    position INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE members (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, initials TEXT NOT NULL, color TEXT NOT NULL);
CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, color TEXT NOT NULL);
CREATE TABLE card_tags (card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
                        tag_id INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE, PRIMARY KEY (card_id, tag_id));
CREATE TABLE card_assignees (card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
                             member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE, PRIMARY KEY (card_id, member_id));
CREATE TABLE comments (id INTEGER PRIMARY KEY, card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
                       member_id INTEGER REFERENCES members(id), body TEXT NOT NULL, created_at TEXT NOT NULL);
"""

ME = 1  # members row 1 is the signed-in user


class KanbanApp(WebApp):
    name = "kanban"
    title = "Kanban"
    schema = SCHEMA
    derived = {"boards.columns.cards": ("cards.column_id", "cards.position"), "boards.columns": ("columns.name",),
               "cards.assignees": ("card_assignees.member_id",), "cards.board": ("cards.board_id",),
               "cards.column_name": ("cards.column_id",), "cards.comments": ("comments.body",),
               "cards.tags": ("card_tags.tag_id",)}
    assigned = {"cards": ("position",), "comments": ("member_id",)}
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
    query_params = {"q": QueryRule(strip=True, case="lower"), "card": QueryRule(integer=True)}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_kanban(db, rng, self.now())

    def t(self, text: str) -> str:
        if self.variant.locale == "de-DE" and text in DE:
            return DE[text]
        return super().t(text)

    def _day(self, iso: str, *, with_year: bool) -> str:
        """A stored date as the locale writes it: en-US `2026-03-05` (with the year) or `Mar 5`,
        de-DE `05.03.2026` or `05. März`; a stamp's time (`YYYY-MM-DD HH:MM`) is kept."""
        day, sep, clock = iso.partition(" ")
        try:
            date = dt.date.fromisoformat(day)
        except ValueError:
            return iso
        if self.variant.locale == "en-US":
            return iso if with_year else f"{date:%b} {date.day}"
        return format_day(date, self.variant.locale, with_year=with_year) + sep + clock

    # --- state ---

    def _card_meta(self) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
        tags: dict[int, list[str]] = {}
        for r in self.db.all("SELECT ct.card_id, t.name FROM card_tags ct JOIN tags t ON t.id = ct.tag_id ORDER BY t.name"):
            tags.setdefault(r["card_id"], []).append(r["name"])
        people: dict[int, list[str]] = {}
        for r in self.db.all("SELECT ca.card_id, m.name FROM card_assignees ca JOIN members m ON m.id = ca.member_id ORDER BY m.name"):
            people.setdefault(r["card_id"], []).append(r["name"])
        return tags, people

    def state(self) -> dict[str, Any]:
        tags, people = self._card_meta()
        comments: dict[int, list[dict[str, Any]]] = {}
        for c in self.db.all("SELECT c.card_id, COALESCE(m.name, 'unknown') AS author, c.body, c.created_at FROM comments c "
                             "LEFT JOIN members m ON m.id = c.member_id ORDER BY c.id"):
            comments.setdefault(c.pop("card_id"), []).append(c)
        cards = [{**c, "tags": tags.get(c["id"], []), "assignees": people.get(c["id"], []), "comments": comments.get(c["id"], [])}
                 for c in self.db.all("SELECT c.*, col.name AS column_name, b.name AS board FROM cards c JOIN columns col ON col.id = c.column_id "
                                      "JOIN boards b ON b.id = c.board_id ORDER BY c.id")]
        boards = []
        for b in self.db.all("SELECT * FROM boards ORDER BY id"):
            cols = []
            for col in self.db.all("SELECT * FROM columns WHERE board_id = ? ORDER BY position", (b["id"],)):
                ids = [r["id"] for r in self.db.all("SELECT id FROM cards WHERE column_id = ? ORDER BY position", (col["id"],))]
                cols.append({"id": col["id"], "name": col["name"], "cards": ids})
            boards.append({**b, "columns": cols})
        return {"boards": boards, "cards": cards, "members": self.db.all("SELECT * FROM members ORDER BY id"),
                "tags": self.db.all("SELECT * FROM tags ORDER BY id")}

    # --- the one place positions change ---

    def move_card(self, card_id: int, column_id: int, position: int) -> bool:
        card = self.db.one("SELECT * FROM cards WHERE id = ?", (card_id,))
        col = self.db.one("SELECT * FROM columns WHERE id = ?", (column_id,))
        if card is None or col is None or col["board_id"] != card["board_id"]:
            return False
        old = [r["id"] for r in self.db.all("SELECT id FROM cards WHERE column_id = ? AND id != ? ORDER BY position", (card["column_id"], card_id))]
        target = old if column_id == card["column_id"] else [
            r["id"] for r in self.db.all("SELECT id FROM cards WHERE column_id = ? ORDER BY position", (column_id,))]
        position = max(0, min(position, len(target)))
        target.insert(position, card_id)
        self.db.execute("BEGIN")
        try:
            self.db.execute("UPDATE cards SET column_id = ? WHERE id = ?", (column_id, card_id))
            if column_id != card["column_id"]:
                for i, cid in enumerate(old):
                    self.db.execute("UPDATE cards SET position = ? WHERE id = ?", (i, cid))
            for i, cid in enumerate(target):
                self.db.execute("UPDATE cards SET position = ? WHERE id = ?", (i, cid))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return True

    # --- routes ---

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.index),
            Route("/b/{bid:int}", self.board),
            Route("/b/{bid:int}/cards", self.add_card, methods=["POST"]),
            Route("/cards/{cid:int}", self.save_card, methods=["POST"]),
            Route("/cards/{cid:int}/move", self.move_form, methods=["POST"]),
            Route("/cards/{cid:int}/delete", self.delete_card, methods=["POST"]),
            Route("/cards/{cid:int}/comments", self.add_comment, methods=["POST"]),
            Route("/api/cards/{cid:int}/move", self.move_api, methods=["POST"]),
        ]

    def _page(self, title: str, body: str) -> Response:
        boards = [(b["name"], f"/b/{b['id']}") for b in self.db.all("SELECT id, name FROM boards ORDER BY id")]
        return html_page(self, title, body, nav=[("Boards", "/"), *boards],
                         scripts=["/static/cua/datepicker.js", "/static/app/kanban.js"],
                         head=f'<meta name="today" content="{self.now().date().isoformat()}">')

    async def index(self, request: Request) -> Response:
        rows = self.db.all("SELECT b.*, COUNT(c.id) AS n FROM boards b LEFT JOIN cards c ON c.board_id = b.id GROUP BY b.id ORDER BY b.id")
        t = self.t
        cards = "".join(f'<a class="card board-tile" href="/b/{b["id"]}" data-board-id="{b["id"]}"><strong>{esc(b["name"])}</strong>'
                        f'<span class="muted">{esc(b["description"])}</span><span>{t("{n} cards").format(n=b["n"])}</span></a>' for b in rows)
        mine = self.db.all("SELECT c.id, c.title, c.due, c.board_id, col.name AS col FROM cards c JOIN card_assignees ca ON ca.card_id = c.id "
                           "JOIN columns col ON col.id = c.column_id WHERE ca.member_id = ? ORDER BY c.due IS NULL, c.due, c.id", (ME,))
        trs = "".join(f'<tr data-id="{c["id"]}"><td><a href="/b/{c["board_id"]}?card={c["id"]}">{esc(c["title"])}</a></td><td>{esc(c["col"])}</td>'
                      f'<td>{esc(self._day(c["due"], with_year=True) if c["due"] else "")}</td></tr>' for c in mine)
        return self._page(t("Boards"), f"<h1>{t('Boards')}</h1><div class='boards'>{cards}</div><h2>{t('Assigned to me')}</h2>"
                                       f"<table class='mine'><thead><tr><th>{t('Card')}</th><th>{t('Column')}</th><th>{t('Due')}</th></tr></thead>"
                                       f"<tbody>{trs}</tbody></table>")

    def _card_html(self, c: dict[str, Any], tags: list[dict[str, Any]], people: list[dict[str, Any]], bid: int, qs: str) -> str:
        today = self.now().date().isoformat()
        due = ""
        if c["due"]:
            cls = "overdue" if c["due"] < today else "soon" if c["due"] <= (self.now().date() + dt.timedelta(days=3)).isoformat() else ""
            due = (f'<span class="due {cls}" data-due="{c["due"]}" title="{esc(self.t("Due {day}").format(day=self._day(c["due"], with_year=True)))}">'
                   f'{esc(self.t("Due {day}").format(day=self._day(c["due"], with_year=False)))}</span>')
        chips = "".join(f'<span class="tag" style="--c:{t["color"]}">{esc(t["name"])}</span>' for t in tags)
        avatars = "".join(f'<span class="avatar" style="background:{m["color"]}" title="{esc(m["name"])}">{esc(m["initials"])}</span>' for m in people)
        return (f'<a class="kcard" href="/b/{bid}?{qs}card={c["id"]}" data-id="{c["id"]}" data-title="{esc(c["title"])}" '
                f'aria-roledescription="{self.t("draggable card")}" aria-describedby="drag-help">'
                f'<div class="ktags">{chips}</div><div class="ktitle">{esc(c["title"])}</div>'
                f'<div class="kfoot">{due}<span class="avatars">{avatars}</span></div></a>')

    async def board(self, request: Request) -> Response:
        bid = request.path_params["bid"]
        b = self.db.one("SELECT * FROM boards WHERE id = ?", (bid,))
        if b is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such board.')}</div>")
        read = self.query(request)
        q = read["q"] or ""
        tag_rows: dict[int, list[dict[str, Any]]] = {}
        for r in self.db.all("SELECT ct.card_id, t.* FROM card_tags ct JOIN tags t ON t.id = ct.tag_id JOIN cards c ON c.id = ct.card_id "
                             "WHERE c.board_id = ? ORDER BY t.name", (bid,)):
            tag_rows.setdefault(r["card_id"], []).append(r)
        people: dict[int, list[dict[str, Any]]] = {}
        for r in self.db.all("SELECT ca.card_id, m.* FROM card_assignees ca JOIN members m ON m.id = ca.member_id JOIN cards c ON c.id = ca.card_id "
                             "WHERE c.board_id = ? ORDER BY m.name", (bid,)):
            people.setdefault(r["card_id"], []).append(r)
        qs = urlencode({"q": q}) + "&" if q else ""
        t = self.t
        cols_html = []
        for col in self.db.all("SELECT * FROM columns WHERE board_id = ? ORDER BY position", (bid,)):
            cards = self.db.all("SELECT * FROM cards WHERE column_id = ? ORDER BY position", (col["id"],))
            shown = []
            for c in cards:
                hay = " ".join([c["title"].lower(), *(t["name"] for t in tag_rows.get(c["id"], [])),
                                *(m["name"].lower() for m in people.get(c["id"], []))])
                if q and q not in hay:
                    continue
                shown.append(self._card_html(c, tag_rows.get(c["id"], []), people.get(c["id"], []), bid, qs))
            cols_html.append(
                f'<section class="kcol" data-column-id="{col["id"]}" data-column="{esc(col["name"])}" aria-label="{esc(col["name"])}">'
                f'<h2>{esc(col["name"])} <span class="muted">{len(cards)}</span></h2>'
                f'<div class="klist" data-column-id="{col["id"]}">{"".join(shown)}</div>'
                f'<details class="addcard"><summary>{t("+ Add a card")}</summary><form method="post" action="/b/{bid}/cards">'
                f'<input type="hidden" name="column_id" value="{col["id"]}"><textarea name="title" rows="2" '
                f'aria-label="{esc(t("Title of new card in {column}").format(column=col["name"]))}" placeholder="{t("Card title")}"></textarea>'
                f'<button type="submit" class="primary" data-action="add-card">{t("Add card")}</button></form></details></section>')
        modal = ""
        if read["card"] is not None:
            modal = self._modal(int(read["card"]), bid, qs)
        filt = (f'<form method="get" class="kfilter row" role="search"><input type="search" name="q" value="{esc(q)}" '
                f'placeholder="{t("Filter by title, tag or person")}" aria-label="{t("Filter cards")}">'
                f'<button type="submit" data-action="filter">{t("Filter")}</button>'
                + (f'<a href="/b/{bid}" data-action="clear">{t("Clear")}</a>' if q else "") + "</form>")
        body = (f'<div class="kbar"><h1>{esc(b["name"])}</h1>{filt}</div>'
                f'<p id="drag-help" class="sr-only">{t("Drag with the mouse, or focus a card and press Alt+Arrow keys to move it.")}</p>'
                f'<div class="kboard" data-board-id="{bid}">{"".join(cols_html)}</div><div id="kstatus" role="status" aria-live="polite"'
                f' data-moved="{esc(t("Moved “{title}” to {column}, position {position}."))}"'
                f' data-failed="{esc(t("Could not move the card; reloading."))}"></div>{modal}')
        return self._page(b["name"], body)

    def _modal(self, cid: int, bid: int, qs: str) -> str:
        c = self.db.one("SELECT * FROM cards WHERE id = ? AND board_id = ?", (cid, bid))
        if c is None:
            return ""
        have_tags = {r["tag_id"] for r in self.db.all("SELECT tag_id FROM card_tags WHERE card_id = ?", (cid,))}
        have_people = {r["member_id"] for r in self.db.all("SELECT member_id FROM card_assignees WHERE card_id = ?", (cid,))}
        tags = "".join(f'<label class="tagpick"><input type="checkbox" name="tags" value="{t["id"]}"{" checked" if t["id"] in have_tags else ""}>'
                       f' <span class="tag" style="--c:{t["color"]}">{esc(t["name"])}</span></label>' for t in self.db.all("SELECT * FROM tags ORDER BY name"))
        members = "".join(f'<label><input type="checkbox" name="assignees" value="{m["id"]}"{" checked" if m["id"] in have_people else ""}> {esc(m["name"])}</label>'
                          for m in self.db.all("SELECT * FROM members ORDER BY name"))
        cols = self.db.all("SELECT * FROM columns WHERE board_id = ? ORDER BY position", (bid,))
        col_opts = "".join(f'<option value="{col["id"]}"{" selected" if col["id"] == c["column_id"] else ""}>{esc(col["name"])}</option>' for col in cols)
        counts = {col["id"]: self.db.scalar("SELECT COUNT(*) FROM cards WHERE column_id = ?", (col["id"],)) for col in cols}
        t = self.t
        comments = "".join(f'<li><strong>{esc(m["author"] or t("unknown"))}</strong> <span class="muted">{esc(self._day(m["created_at"], with_year=True))}</span>'
                           f'<br>{esc(m["body"])}</li>'
                           for m in self.db.all("SELECT c.*, m.name AS author FROM comments c LEFT JOIN members m ON m.id = c.member_id "
                                                "WHERE c.card_id = ? ORDER BY c.id", (cid,)))
        close = f"/b/{bid}" + (f"?{qs.rstrip('&')}" if qs else "")
        return (
            f'<div class="modal-backdrop" id="card-modal" data-close-href="{esc(close)}"><div class="modal kmodal" role="dialog" aria-modal="true" aria-labelledby="card-title">'
            f'<a class="close" href="{esc(close)}" aria-label="{t("Close")}" data-action="close">×</a>'
            f'<form method="post" action="/cards/{cid}" class="kform" id="card-form"><input type="hidden" name="back" value="{esc(close)}">'
            f'<label class="field">{t("Title")} <input type="text" name="title" id="card-title" value="{esc(c["title"])}"></label>'
            f'<label class="field">{t("Description")} <textarea name="description" rows="3">{esc(c["description"])}</textarea></label>'
            f'<label class="field">{t("Due date")} <span class="datepicker"><input type="text" name="due" id="due" value="{esc(c["due"] or "")}" '
            f'placeholder="YYYY-MM-DD" autocomplete="off" size="11"><button type="button" class="dp-toggle" aria-label="{t("Choose due date")}">▦</button>'
            '<input type="hidden" name="due_via" class="dp-via" value=""></span></label>'
            f'<fieldset><legend>{t("Tags")}</legend><div class="picks">{tags}</div></fieldset>'
            f'<fieldset><legend>{t("Assignees")}</legend><div class="picks">{members}</div></fieldset>'
            f'<p class="row"><button type="submit" class="primary" id="save-card">{t("Save")}</button>'
            f'<a class="button" href="{esc(close)}" data-action="cancel">{t("Cancel")}</a></p></form>'
            f'<form method="post" action="/cards/{cid}/move" class="row kmove" id="move-form"><input type="hidden" name="back" value="{esc(close)}">'
            f'<label>{t("Move to")} <select name="column_id" id="move-column" data-counts="{esc(json.dumps(counts))}" '
            f'data-current="{c["column_id"]}">{col_opts}</select></label>'
            f'<label>{t("Position")} <input type="number" name="position" id="move-position" min="1" value="{c["position"] + 1}" size="3"></label>'
            f'<button type="submit" id="move-card">{t("Move")}</button></form>'
            f'<h3>{t("Comments")}</h3><ul class="comments">{comments}</ul>'
            f'<form method="post" action="/cards/{cid}/comments" class="row"><input type="hidden" name="back" value="{esc(close)}&card={cid}">'
            f'<input type="text" name="body" aria-label="{t("Comment")}" placeholder="{t("Write a comment")}" size="40">'
            f'<button type="submit" data-action="comment">{t("Comment")}</button></form>'
            f'<p class="row danger-zone"><button type="button" class="danger" data-open="delete-modal" data-action="delete-card">{t("Delete card…")}</button></p>'
            '</div></div>'
            f'<div class="modal-backdrop" id="delete-modal" hidden><div class="modal" role="dialog" aria-label="{t("Confirm delete")}">'
            f'<p>{esc(t("Delete “{title}”? This cannot be undone.").format(title=c["title"]))}</p>'
            f'<form method="post" action="/cards/{cid}/delete" class="row">'
            f'<input type="hidden" name="back" value="{esc(close)}"><button type="submit" class="danger" id="delete-confirm">{t("Delete")}</button>'
            f'<button type="button" data-close="delete-modal" data-action="keep">{t("Cancel")}</button></form></div></div>')

    @staticmethod
    def _back(form: Any, default: str) -> str:
        back = str(form.get("back", "") or "")
        if back.startswith("/b/") and "&card=" in back and "?" not in back:
            back = back.replace("&card=", "?card=", 1)
        return back if back.startswith("/") else default

    async def add_card(self, request: Request) -> Response:
        bid = request.path_params["bid"]
        form = await request.form()
        title = " ".join(str(form.get("title", "")).split())[:200]
        col_raw = str(form.get("column_id", ""))
        col = self.db.one("SELECT * FROM columns WHERE id = ? AND board_id = ?", (int(col_raw), bid)) if col_raw.isdigit() else None
        if title and col is not None:
            pos = self.db.scalar("SELECT COUNT(*) FROM cards WHERE column_id = ?", (col["id"],))
            self.db.execute("INSERT INTO cards (board_id, column_id, title, position, created_at) VALUES (?,?,?,?,?)",
                            (bid, col["id"], title, pos, self.now().strftime("%Y-%m-%d %H:%M")))
        return RedirectResponse(f"/b/{bid}", status_code=303)

    async def save_card(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        c = self.db.one("SELECT * FROM cards WHERE id = ?", (cid,))
        form = await request.form()
        if c is None:
            return RedirectResponse("/", status_code=303)
        due = str(form.get("due", "")).strip()
        try:
            due_value = dt.date.fromisoformat(due).isoformat() if due else None
        except ValueError:
            due_value = c["due"]
        title = " ".join(str(form.get("title", "")).split())[:200] or c["title"]
        if due_value != c["due"]:
            used_method(request.scope, "date_picker" if form.get("due_via") == "date_picker" else "form", f"cards[id={cid}].due")
        self.db.execute("UPDATE cards SET title = ?, description = ?, due = ? WHERE id = ?",
                        (title, str(form.get("description", ""))[:4000], due_value, cid))
        self.db.execute("DELETE FROM card_tags WHERE card_id = ?", (cid,))
        for t in {int(str(x)) for x in form.getlist("tags") if str(x).isdigit()}:
            self.db.execute("INSERT INTO card_tags (card_id, tag_id) SELECT ?, id FROM tags WHERE id = ?", (cid, t))
        self.db.execute("DELETE FROM card_assignees WHERE card_id = ?", (cid,))
        for m in {int(str(x)) for x in form.getlist("assignees") if str(x).isdigit()}:
            self.db.execute("INSERT INTO card_assignees (card_id, member_id) SELECT ?, id FROM members WHERE id = ?", (cid, m))
        return RedirectResponse(self._back(form, f"/b/{c['board_id']}"), status_code=303)

    async def move_form(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        form = await request.form()
        col, pos = str(form.get("column_id", "")), str(form.get("position", "1"))
        c = self.db.one("SELECT board_id FROM cards WHERE id = ?", (cid,))
        if c is None:
            return RedirectResponse("/", status_code=303)
        if col.isdigit():
            self._moved(request, cid, "dialog", int(col), int(pos) - 1 if pos.isdigit() and int(pos) > 0 else 0)
        return RedirectResponse(self._back(form, f"/b/{c['board_id']}"), status_code=303)

    def _moved(self, request: Request, cid: int, method: str, column_id: int, position: int) -> bool:
        """`move_card`, with the method recorded for the card's column and position, each if it changed."""
        before = self.db.one("SELECT column_id, position FROM cards WHERE id = ?", (cid,))
        if not self.move_card(cid, column_id, position):
            return False
        after = self.db.one("SELECT column_id, position FROM cards WHERE id = ?", (cid,))
        for key in ("column_id", "position"):
            if before is not None and after is not None and before[key] != after[key]:
                used_method(request.scope, method, f"cards[id={cid}].{key}")
        return True

    async def move_api(self, request: Request) -> Response:
        """The board script's moves: JSON only (no form of any page can send it), `via` the
        gesture that made it (`drag` or `keyboard`; a client that names none: `api`)."""
        cid = request.path_params["cid"]
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return JSONResponse({"error": "a move is JSON"}, status_code=415)
        try:
            payload = await request.json()
            via = payload.get("via", "api")
            if via not in ("drag", "keyboard", "api"):
                return JSONResponse({"error": "via must be drag or keyboard"}, status_code=400)
            column_id = int(payload["column_id"])
            if "after_id" in payload:
                after = payload["after_id"]
                if after is None:
                    position = 0
                else:
                    row = self.db.one("SELECT column_id, position FROM cards WHERE id = ? AND id != ?", (int(after), cid))
                    if row is None or row["column_id"] != column_id:
                        return JSONResponse({"error": "after_id is not a card in that column"}, status_code=400)
                    me = self.db.one("SELECT column_id, position FROM cards WHERE id = ?", (cid,))
                    # Positions are counted without the moved card, so a card further down its own column shifts by one.
                    shift = 1 if me and me["column_id"] == column_id and me["position"] < row["position"] else 0
                    position = row["position"] + 1 - shift
            else:
                position = int(payload["position"])
        except (ValueError, KeyError, TypeError) as exc:
            return JSONResponse({"error": f"bad move: {exc}"}, status_code=400)
        if not self._moved(request, cid, via, column_id, position):
            return JSONResponse({"error": "no such card or column on this board"}, status_code=404)
        card = self.db.one("SELECT id, column_id, position FROM cards WHERE id = ?", (cid,))
        return JSONResponse({"ok": True, "card": card})

    async def delete_card(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        form = await request.form()
        c = self.db.one("SELECT * FROM cards WHERE id = ?", (cid,))
        if c is None:
            return RedirectResponse("/", status_code=303)
        self.db.execute("DELETE FROM cards WHERE id = ?", (cid,))
        for i, r in enumerate(self.db.all("SELECT id FROM cards WHERE column_id = ? ORDER BY position", (c["column_id"],))):
            self.db.execute("UPDATE cards SET position = ? WHERE id = ?", (i, r["id"]))
        return RedirectResponse(self._back(form, f"/b/{c['board_id']}"), status_code=303)

    async def add_comment(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        form = await request.form()
        c = self.db.one("SELECT board_id FROM cards WHERE id = ?", (cid,))
        if c is None:
            return RedirectResponse("/", status_code=303)
        body = str(form.get("body", "")).strip()[:2000]
        if body:
            self.db.execute("INSERT INTO comments (card_id, member_id, body, created_at) VALUES (?,?,?,?)",
                            (cid, ME, body, self.now().strftime("%Y-%m-%d %H:%M")))
        return RedirectResponse(self._back(form, f"/b/{c['board_id']}?card={cid}"), status_code=303)


APP = KanbanApp
