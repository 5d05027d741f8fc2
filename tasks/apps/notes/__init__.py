"""Notes: a folder tree of rich-text notes, edited in a contenteditable editor.

Pages: `/` (all notes, newest first), `/folders/{id}` (a folder's notes; rename, new
subfolder, new note), `/notes/{id}` (the editor: title, toolbar with bold/italic/
underline/headings/lists, move to folder, pin, delete with a confirm modal, and the
rendered note in an IFRAME preview pane served from `/notes/{id}/preview`),
`/search?q=` (titles and text). Forms post and redirect, so every change is in SQLite
when the next page settles. Bodies are sanitized to the toolbar's tags on save.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.i18n import format_day
from cua.tasks.apps.notes.locale_de import DE
from cua.tasks.apps.notes.sanitize import plain_text, sanitize
from cua.tasks.apps.notes.seed import seed_notes
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE folders (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    parent_id INTEGER REFERENCES folders(id) ON DELETE CASCADE
);
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    pinned INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
"""
NAV = [("All notes", "/"), ("Search", "/search")]


class NotesApp(WebApp):
    name = "notes"
    title = "Notes"
    schema = SCHEMA
    derived = {"folders.path": ("folders.name", "folders.parent_id"), "notes.folder": ("notes.folder_id",),
               "notes.text": ("notes.body",)}
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)

    def t(self, text: str) -> str:
        if self.variant.locale == "de-DE" and text in DE:
            return DE[text]
        return super().t(text)

    def _day(self, stamp: str) -> str:
        """A stored `YYYY-MM-DD[THH:MM]` as the locale writes it (en-US: as stored, `T` as a space)."""
        day, _, clock = stamp.partition("T")
        if self.variant.locale != "en-US":
            try:
                day = format_day(dt.date.fromisoformat(day), self.variant.locale, with_year=True)
            except ValueError:
                pass
        return f"{day} {clock}".strip() if clock else day

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_notes(db, rng, self.now())

    def _folder_paths(self) -> dict[int, str]:
        folders = {f["id"]: f for f in self.db.all("SELECT * FROM folders")}

        def path(fid: int) -> str:
            f = folders[fid]
            return f"{path(f['parent_id'])}/{f['name']}" if f["parent_id"] else f["name"]

        return {fid: path(fid) for fid in folders}

    def state(self) -> dict[str, Any]:
        paths = self._folder_paths()
        return {
            "folders": [{**f, "path": paths[f["id"]]} for f in self.db.all("SELECT * FROM folders ORDER BY id")],
            "notes": [
                {**n, "pinned": bool(n["pinned"]), "folder": paths.get(n["folder_id"], ""), "text": plain_text(n["body"])}
                for n in self.db.all("SELECT * FROM notes ORDER BY id")
            ],
        }

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.index),
            Route("/folders", self.create_folder, methods=["POST"]),
            Route("/folders/{folder_id:int}", self.show_folder),
            Route("/folders/{folder_id:int}/rename", self.rename_folder, methods=["POST"]),
            Route("/notes", self.create_note, methods=["POST"]),
            Route("/notes/{note_id:int}", self.note, methods=["GET", "POST"]),
            Route("/notes/{note_id:int}/preview", self.preview),
            Route("/notes/{note_id:int}/move", self.move, methods=["POST"]),
            Route("/notes/{note_id:int}/pin", self.pin, methods=["POST"]),
            Route("/notes/{note_id:int}/delete", self.delete, methods=["POST"]),
            Route("/search", self.search),
        ]

    # --- layout ---

    def _tree(self, active: int | None) -> str:
        folders = self.db.all(
            "SELECT f.*, (SELECT COUNT(*) FROM notes n WHERE n.folder_id = f.id) AS n FROM folders f ORDER BY name")
        children: dict[int | None, list[dict[str, Any]]] = {}
        for f in folders:
            children.setdefault(f["parent_id"], []).append(f)

        def render(parent: int | None) -> str:
            items = []
            for f in children.get(parent, []):
                cls = " active" if f["id"] == active else ""
                sub = render(f["id"])
                items.append(f'<li><a class="folder{cls}" href="/folders/{f["id"]}" data-folder="{esc(f["name"])}">'
                             f'<span class="ficon">▸</span>{esc(f["name"])} <span class="count">{f["n"]}</span></a>{sub}</li>')
            return f"<ul>{''.join(items)}</ul>" if items else ""

        return f'<aside class="tree" aria-label="{self.t("Folders")}" data-region="folders"><h2>{self.t("Folders")}</h2>{render(None)}</aside>'

    def _page(self, title: str, body: str, active: int | None = None) -> Response:
        return html_page(self, title, f'<div class="notes-layout">{self._tree(active)}<section class="pane">{body}</section></div>',
                         nav=NAV, scripts=["/static/app/notes.js"])

    def _note_list(self, notes: list[dict[str, Any]], paths: dict[int, str] | None = None) -> str:
        if not notes:
            return f"<p class='muted empty'>{self.t('No notes.')}</p>"
        rows = []
        for n in notes:
            snippet = plain_text(n["body"]).replace("\n", " ")[:110]
            where = f'<span class="where">{esc(paths[n["folder_id"]])}</span>' if paths else ""
            pin = f'<span class="pin" title="{self.t("Pinned")}" data-pinned="1">★</span> ' if n["pinned"] else ""
            rows.append(f'<li class="note-item" data-id="{n["id"]}"><a href="/notes/{n["id"]}">{pin}<strong class="ntitle">{esc(n["title"])}</strong></a>'
                        f'{where}<span class="date">{esc(self._day(n["updated"][:10]))}</span><div class="snippet muted">{esc(snippet)}</div></li>')
        return f'<ul class="note-list">{"".join(rows)}</ul>'

    # --- pages ---

    async def index(self, request: Request) -> Response:
        notes = self.db.all("SELECT * FROM notes ORDER BY pinned DESC, updated DESC, id LIMIT 300")
        return self._page(self.t("All notes"), f"<h1>{self.t('All notes')} <span class='muted'>({len(notes)})</span></h1>"
                          f"{self._note_list(notes, self._folder_paths())}")

    async def show_folder(self, request: Request) -> Response:
        fid = request.path_params["folder_id"]
        folder = self.db.one("SELECT * FROM folders WHERE id = ?", (fid,))
        if folder is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such folder.')}</div>")
        notes = self.db.all("SELECT * FROM notes WHERE folder_id = ? ORDER BY pinned DESC, updated DESC, id", (fid,))
        head = (f'<div class="folder-head"><h1 id="folder-name">{esc(folder["name"])}</h1>'
                f'<button type="button" id="rename-open" data-action="rename">{self.t("Rename")}</button></div>'
                f'<form class="card row" id="rename-form" method="post" action="/folders/{fid}/rename" hidden>'
                f'<label for="rename-input">{self.t("Folder name")}</label><input id="rename-input" type="text" name="name" value="{esc(folder["name"])}" required>'
                f'<button class="primary" type="submit" data-action="save-name">{self.t("Save name")}</button>'
                f'<button type="button" id="rename-cancel">{self.t("Cancel")}</button></form>')
        actions = (f'<div class="row actions"><form class="row" method="post" action="/notes" data-form="new-note">'
                   f'<input type="hidden" name="folder_id" value="{fid}">'
                   f'<input type="text" name="title" placeholder="{self.t("New note title")}" aria-label="{self.t("New note title")}" '
                   'data-field="new-note-title" required>'
                   f'<button class="primary" type="submit" data-action="new-note">{self.t("New note")}</button></form>'
                   f'<form class="row" method="post" action="/folders" data-form="new-subfolder">'
                   f'<input type="hidden" name="parent_id" value="{fid}">'
                   f'<input type="text" name="name" placeholder="{self.t("Subfolder name")}" aria-label="{self.t("New subfolder name")}" '
                   'data-field="new-subfolder-name" required>'
                   f'<button type="submit" data-action="new-subfolder">{self.t("New subfolder")}</button></form></div>')
        return self._page(folder["name"], head + actions + self._note_list(notes), active=fid)

    async def create_folder(self, request: Request) -> Response:
        form = await request.form()
        name = str(form.get("name", "")).strip()[:80]
        parent = str(form.get("parent_id", "")).strip()
        parent_id = int(parent) if parent.isdigit() and self.db.one("SELECT id FROM folders WHERE id = ?", (int(parent),)) else None
        if not name:
            return RedirectResponse(f"/folders/{parent_id}" if parent_id else "/", status_code=303)
        new_id = self.db.insert("INSERT INTO folders (name, parent_id) VALUES (?, ?)", (name, parent_id))
        return RedirectResponse(f"/folders/{new_id}", status_code=303)

    async def rename_folder(self, request: Request) -> Response:
        fid = request.path_params["folder_id"]
        name = str((await request.form()).get("name", "")).strip()[:80]
        if name:
            self.db.execute("UPDATE folders SET name = ? WHERE id = ?", (name, fid))
        return RedirectResponse(f"/folders/{fid}", status_code=303)

    def _stamp(self) -> str:
        # The apps' clock is fixed; edits are stamped with it so state stays deterministic.
        return self.now().isoformat(timespec="minutes")

    async def create_note(self, request: Request) -> Response:
        form = await request.form()
        folder = str(form.get("folder_id", ""))
        if not folder.isdigit() or self.db.one("SELECT id FROM folders WHERE id = ?", (int(folder),)) is None:
            return RedirectResponse("/", status_code=303)
        title = str(form.get("title", "")).strip()[:200] or "Untitled"
        new_id = self.db.insert("INSERT INTO notes (folder_id, title, body, created, updated) VALUES (?, ?, '', ?, ?)",
                              (int(folder), title, self._stamp(), self._stamp()))
        return RedirectResponse(f"/notes/{new_id}", status_code=303)

    async def note(self, request: Request) -> Response:
        nid = request.path_params["note_id"]
        note = self.db.one("SELECT * FROM notes WHERE id = ?", (nid,))
        if note is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such note.')}</div>")
        if request.method == "POST":
            form = await request.form()
            title = str(form.get("title", "")).strip()[:200] or note["title"]
            body = sanitize(str(form.get("body", note["body"]))[:100_000])
            self.db.execute("UPDATE notes SET title = ?, body = ?, updated = ? WHERE id = ?", (title, body, self._stamp(), nid))
            return RedirectResponse(f"/notes/{nid}?saved=1", status_code=303)
        paths = self._folder_paths()
        options = "".join(f'<option value="{fid}"{" selected" if fid == note["folder_id"] else ""}>{esc(p)}</option>'
                          for fid, p in sorted(paths.items(), key=lambda kv: kv[1]))
        flash = f"<div class='flash' role='status'>{self.t('Saved.')}</div>" if request.query_params.get("saved") else ""
        tools = [("bold", "Bold", "<b>B</b>"), ("italic", "Italic", "<i>I</i>"), ("underline", "Underline", "<u>U</u>"),
                 ("h1", "Heading 1", "H1"), ("h2", "Heading 2", "H2"), ("p", "Paragraph", "¶"),
                 ("insertUnorderedList", "Bulleted list", "• List"), ("insertOrderedList", "Numbered list", "1. List")]
        t = self.t
        toolbar = "".join(f'<button type="button" class="tool" data-cmd="{c}" aria-label="{t(a)}" title="{t(a)}" aria-pressed="false">{t(g)}</button>'
                          for c, a, g in tools)
        crumbs = f'<a href="/folders/{note["folder_id"]}">{esc(paths[note["folder_id"]])}</a>'
        body = (
            f"{flash}<div class='crumbs muted'>{crumbs}</div>"
            f"<div class='editor-grid'><div class='editor-col'>"
            f"<form id='note-form' method='post' action='/notes/{nid}'>"
            f"<input class='title-input' type='text' name='title' aria-label='{t('Note title')}' value='{esc(note['title'])}'>"
            f"<div class='toolbar' role='toolbar' aria-label='{t('Formatting')}'>{toolbar}</div>"
            f"<div id='editor' class='editor' contenteditable='true' role='textbox' aria-multiline='true' aria-label='{t('Note body')}'>{note['body']}</div>"
            "<input type='hidden' name='body' id='body-input'>"
            f"<div class='row'><button class='primary' type='submit' id='save'>{t('Save')}</button>"
            f"<span class='muted'>{esc(t('Last edited {when}').format(when=self._day(note['updated'])))}</span></div></form>"
            "<div class='row note-actions'>"
            f"<form class='row' method='post' action='/notes/{nid}/move'><label for='move-to'>{t('Move to')}</label>"
            f"<select id='move-to' name='folder_id'>{options}</select><button type='submit' data-action='move'>{t('Move')}</button></form>"
            f"<form method='post' action='/notes/{nid}/pin'><button type='submit' data-action='pin'>"
            f"{t('Unpin') if note['pinned'] else t('Pin')}</button></form>"
            f"<button type='button' class='danger' id='delete-open'>{t('Delete…')}</button></div></div>"
            f"<div class='preview-col'><h2>{t('Preview')}</h2><iframe id='preview' title='{t('Preview')}' src='/notes/{nid}/preview'></iframe></div></div>"
            f"<div class='modal-backdrop' id='delete-modal' hidden><div class='modal' role='dialog' aria-label='{t('Confirm delete')}'>"
            f"<p>{esc(t('Delete “{title}”? This cannot be undone.').format(title=note['title']))}</p>"
            f"<form method='post' action='/notes/{nid}/delete' class='row'>"
            f"<button type='submit' class='danger' id='delete-confirm'>{t('Delete note')}</button>"
            f"<button type='button' id='delete-cancel'>{t('Cancel')}</button></form></div></div>")
        return self._page(note["title"], body, active=note["folder_id"])

    async def preview(self, request: Request) -> Response:
        note = self.db.one("SELECT * FROM notes WHERE id = ?", (request.path_params["note_id"],))
        if note is None:
            return HTMLResponse("<p>No such note.</p>", status_code=404)
        return HTMLResponse(
            f"<!doctype html><html lang={esc(self.variant.locale)}><head><meta charset=utf-8><title>{self.t('Preview')}</title>"
            '<link rel="stylesheet" href="/static/app/preview.css"></head><body>'
            f'<article class="rendered"><h1 class="rendered-title">{esc(note["title"])}</h1>'
            f'<div class="rendered-body">{note["body"]}</div>'
            f'<p class="meta">{esc(self.t("Updated {when}").format(when=self._day(note["updated"])))}</p></article></body></html>')

    async def move(self, request: Request) -> Response:
        nid = request.path_params["note_id"]
        folder = str((await request.form()).get("folder_id", ""))
        if folder.isdigit() and self.db.one("SELECT id FROM folders WHERE id = ?", (int(folder),)):
            self.db.execute("UPDATE notes SET folder_id = ?, updated = ? WHERE id = ?", (int(folder), self._stamp(), nid))
        return RedirectResponse(f"/notes/{nid}", status_code=303)

    async def pin(self, request: Request) -> Response:
        nid = request.path_params["note_id"]
        self.db.execute("UPDATE notes SET pinned = 1 - pinned WHERE id = ?", (nid,))
        return RedirectResponse(f"/notes/{nid}", status_code=303)

    async def delete(self, request: Request) -> Response:
        note = self.db.one("SELECT folder_id FROM notes WHERE id = ?", (request.path_params["note_id"],))
        if note is None:
            return RedirectResponse("/", status_code=303)
        self.db.execute("DELETE FROM notes WHERE id = ?", (request.path_params["note_id"],))
        return RedirectResponse(f"/folders/{note['folder_id']}", status_code=303)

    async def search(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        results = ""
        if q:
            notes = [n for n in self.db.all("SELECT * FROM notes ORDER BY updated DESC, id")
                     if q.lower() in n["title"].lower() or q.lower() in plain_text(n["body"]).lower()]
            found = self.t("{n} result(s) for “{q}”").format(n=len(notes), q=q)
            results = f"<p class='muted'>{esc(found)}</p>{self._note_list(notes[:100], self._folder_paths())}"
        form = (f"<form class='card row' method='get' action='/search' data-form='search'><input type='search' name='q' value='{esc(q)}' "
                f"aria-label='{self.t('Search notes')}' placeholder='{self.t('Search notes')}'>"
                f"<button type='submit' class='primary' data-action='search'>{self.t('Search')}</button></form>")
        return self._page(self.t("Search"), f"<h1>{self.t('Search')}</h1>{form}{results}")


APP = NotesApp
