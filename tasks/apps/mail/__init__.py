"""Mail: a webmail client over ~300 seeded messages among ~60 people.

Pages: `/folder/{inbox|sent|drafts|archive|trash|starred}` (paginated list with a hover
menu of row actions and bulk actions), `/label/{id}`, `/search?q=` (with `from:`, `to:`,
`is:starred`, `is:unread`, `has:attachment`, `label:`, `in:` operators), `/message/{id}`
(view, star, labels, archive, delete, reply, forward), `/compose` (send or save a draft,
file upload for attachments, reply/forward prefill), `/attachment/{id}` (download).
Forms post and redirect, so every change is in SQLite when the next page settles.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus, urlencode

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.tasks.apps.activity import added_row, new_value
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.i18n import format_day
from cua.tasks.apps.mail.seed import ME_EMAIL, ME_NAME, seed_mail
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE);
CREATE TABLE labels (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, color TEXT NOT NULL);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    thread_id INTEGER NOT NULL,
    folder TEXT NOT NULL CHECK (folder IN ('inbox','sent','drafts','archive','trash')),
    from_name TEXT NOT NULL,
    from_email TEXT NOT NULL,
    to_addrs TEXT NOT NULL DEFAULT '',
    cc_addrs TEXT NOT NULL DEFAULT '',
    subject TEXT NOT NULL DEFAULT '',
    body TEXT NOT NULL DEFAULT '',
    sent_at TEXT NOT NULL,
    read INTEGER NOT NULL DEFAULT 0,
    starred INTEGER NOT NULL DEFAULT 0,
    in_reply_to INTEGER REFERENCES messages(id) ON DELETE SET NULL,
    forwarded_from INTEGER REFERENCES messages(id) ON DELETE SET NULL
);
CREATE INDEX messages_folder ON messages(folder, sent_at);
CREATE TABLE message_labels (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    label_id INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    PRIMARY KEY (message_id, label_id)
);
CREATE TABLE attachments (
    id INTEGER PRIMARY KEY,
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);
"""

FOLDERS = [("inbox", "Inbox"), ("starred", "Starred"), ("sent", "Sent"), ("drafts", "Drafts"),
           ("archive", "Archive"), ("trash", "Trash")]
PAGE_SIZE = 50
EMAIL_RE = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$")
MAX_UPLOAD = 5 * 1024 * 1024
#: Sending to more addresses than this (To and Cc together) asks for confirmation first.
MANY_RECIPIENTS = 5


def split_addrs(value: str) -> list[str]:
    return [a.strip() for a in re.split(r"[,;\s]+", value or "") if a.strip()]


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.0f} KB" if n < 1024 * 1024 else f"{n / 1048576:.1f} MB"


class MailApp(WebApp):
    name = "mail"
    title = "Mail"
    schema = SCHEMA
    derived = {"messages.to": ("messages.to_addrs",), "messages.cc": ("messages.cc_addrs",),
               "messages.labels": ("message_labels.label_id",), "messages.attachments": ("attachments.filename",)}
    assigned = {"messages": ("thread_id", "from_name", "from_email", "read", "starred"), "attachments": ("content_type", "size", "data")}
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_mail(db, rng, self.now())

    def state(self) -> dict[str, Any]:
        labels: dict[int, list[str]] = {}
        for row in self.db.all("SELECT ml.message_id, l.name FROM message_labels ml JOIN labels l ON l.id = ml.label_id "
                               "ORDER BY l.name"):
            labels.setdefault(row["message_id"], []).append(row["name"])
        atts: dict[int, list[dict[str, Any]]] = {}
        for row in self.db.all("SELECT id, message_id, filename, content_type, size FROM attachments ORDER BY id"):
            atts.setdefault(row["message_id"], []).append(
                {"id": row["id"], "filename": row["filename"], "content_type": row["content_type"], "size": row["size"]})
        messages = []
        for m in self.db.all("SELECT * FROM messages ORDER BY id"):
            messages.append({
                **m, "read": bool(m["read"]), "starred": bool(m["starred"]),
                "to": split_addrs(m["to_addrs"]), "cc": split_addrs(m["cc_addrs"]),
                "labels": labels.get(m["id"], []), "attachments": atts.get(m["id"], []),
            })
        return {
            "me": {"name": ME_NAME, "email": ME_EMAIL},
            "people": self.db.all("SELECT id, name, email FROM people ORDER BY id"),
            "labels": self.db.all("SELECT id, name, color FROM labels ORDER BY id"),
            "messages": messages,
        }

    def irreversible(self, change: Change) -> str | None:
        """A message that reaches Sent has been sent: deleting the copy does not unsend it."""
        row = added_row(change, "messages")
        if row is not None and row.get("folder") == "sent":
            return "send"
        sets, value = new_value(change, "messages", "folder")
        return "send" if sets and value == "sent" and change.before == "drafts" else None  # a draft sent

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", lambda r: RedirectResponse("/folder/inbox", status_code=302)),
            Route("/folder/{folder}", self.folder),
            Route("/label/{label_id:int}", self.label_view),
            Route("/search", self.search),
            Route("/message/{mid:int}", self.message),
            Route("/message/{mid:int}/{op}", self.message_op, methods=["POST"]),
            Route("/bulk", self.bulk, methods=["POST"]),
            Route("/compose", self.compose, methods=["GET", "POST"]),
            Route("/attachment/{aid:int}", self.attachment),
            Route("/contacts", self.contacts),
        ]

    # --- layout ---

    def _page(self, title: str, body: str, *, active: str = "") -> Response:
        unread = self.db.scalar("SELECT COUNT(*) FROM messages WHERE folder = 'inbox' AND read = 0")
        drafts = self.db.scalar("SELECT COUNT(*) FROM messages WHERE folder = 'drafts'")
        links = []
        for key, label in FOLDERS:
            count = f'<span class="count" data-count>{unread}</span>' if key == "inbox" and unread else (
                f'<span class="count muted" data-count>{drafts}</span>' if key == "drafts" and drafts else "")
            cls = ' class="active"' if active == key else ""
            links.append(f'<a href="/folder/{key}"{cls} data-folder="{key}">{self.t(label)}{count}</a>')
        label_links = "".join(
            f'<a href="/label/{l["id"]}"{" class=active" if active == "label:" + str(l["id"]) else ""} data-label="{esc(l["name"])}">'
            f'<span class="swatch" style="background:{esc(l["color"])}"></span>{esc(l["name"])}</a>'
            for l in self.db.all("SELECT * FROM labels ORDER BY name"))
        t = self.t
        side = (f'<aside class="mail-side"><a class="button primary compose-btn" href="/compose" data-action="compose">'
                f'{t("Compose")}</a><nav class="folders">{"".join(links)}</nav><h3>{t("Labels")}</h3>'
                f'<nav class="labels">{label_links}</nav></aside>')
        search = ('<form class="mail-search" method="get" action="/search" role="search">'
                  f'<input type="search" name="q" aria-label="{t("Search mail")}" '
                  f'placeholder="{t("Search mail")} (from:, is:unread, has:attachment…)">'
                  f'<button type="submit" data-action="search">{t("Search")}</button></form>')
        return html_page(self, title, f'<div class="mail-layout">{side}<section class="mail-main">{search}{body}</section></div>',
                         nav=[("Mail", "/folder/inbox"), ("Contacts", "/contacts")], scripts=["/static/cua/modal.js", "/static/app/mail.js"])

    def _labels_of(self, ids: list[int]) -> dict[int, list[dict[str, Any]]]:
        out: dict[int, list[dict[str, Any]]] = {}
        if not ids:
            return out
        marks = ",".join("?" * len(ids))
        for row in self.db.all(f"SELECT ml.message_id, l.id, l.name, l.color FROM message_labels ml JOIN labels l "
                               f"ON l.id = ml.label_id WHERE ml.message_id IN ({marks}) ORDER BY l.name", ids):
            out.setdefault(row["message_id"], []).append(row)
        return out

    def _list(self, title: str, where: str, params: list[Any], request: Request, *, active: str,
              empty: str = "No messages.") -> Response:
        raw_page = request.query_params.get("page", "1")
        page = max(1, int(raw_page)) if raw_page.isdigit() else 1
        total = self.db.scalar(f"SELECT COUNT(*) FROM messages m WHERE {where}", params)
        rows = self.db.all(
            f"SELECT m.*, (SELECT COUNT(*) FROM attachments a WHERE a.message_id = m.id) AS n_att FROM messages m "
            f"WHERE {where} ORDER BY m.sent_at DESC, m.id DESC LIMIT ? OFFSET ?", [*params, PAGE_SIZE, (page - 1) * PAGE_SIZE])
        labels = self._labels_of([r["id"] for r in rows])
        back = str(request.url.path) + (f"?{request.url.query}" if request.url.query else "")
        out = []
        for m in rows:
            who = f"To: {m['to_addrs']}" if m["folder"] in ("sent", "drafts") else m["from_name"]
            chips = "".join(f'<span class="chip" style="border-color:{esc(l["color"])};color:{esc(l["color"])}">{esc(l["name"])}</span>'
                            for l in labels.get(m["id"], []))
            href = f"/compose?draft={m['id']}" if m["folder"] == "drafts" else f"/message/{m['id']}"
            read_op = ("unread", "Mark unread") if m["read"] else ("read", "Mark read")
            arch = ("inbox", "Move to inbox") if m["folder"] in ("archive", "trash") else ("archive", "Archive")
            out.append(
                f'<tr class="msg-row{"" if m["read"] else " unread"}" data-id="{m["id"]}" data-subject="{esc(m["subject"])}">'
                f'<td class="sel"><input type="checkbox" name="ids" value="{m["id"]}" aria-label="{self.t("Select")}: {esc(m["subject"])}"></td>'
                f'<td class="star"><button type="submit" formaction="/message/{m["id"]}/star" class="star-btn{" on" if m["starred"] else ""}" data-action="star" '
                f'aria-label="{"Unstar" if m["starred"] else "Star"}: {esc(m["subject"])}" aria-pressed="{"true" if m["starred"] else "false"}">'
                f'{"★" if m["starred"] else "☆"}</button></td>'
                f'<td class="who">{esc(who)}</td>'
                f'<td class="subj"><a href="{href}" class="msg-link" data-field="subject">{esc(m["subject"]) or "(no subject)"}</a> {chips}'
                f'<span class="snippet"> — {esc(m["body"][:80].replace(chr(10), " "))}</span>'
                f'{" <span class=clip title=Attachment>attachment</span>" if m["n_att"] else ""}</td>'
                f'<td class="date">{esc(self._when(m["sent_at"]))}</td>'
                f'<td class="row-actions" role="menu" aria-label="Actions for {esc(m["subject"])}">'
                f'<button type="submit" formaction="/message/{m["id"]}/{arch[0]}" role="menuitem" title="{arch[1]}" data-action="{arch[0]}">{arch[1]}</button>'
                f'<button type="submit" formaction="/message/{m["id"]}/delete" role="menuitem" title="Delete" data-action="delete">Delete</button>'
                f'<button type="submit" formaction="/message/{m["id"]}/{read_op[0]}" role="menuitem" title="{read_op[1]}" data-action="{read_op[0]}">{read_op[1]}</button>'
                f'</td></tr>')
        pages = max(1, (total + PAGE_SIZE - 1) // PAGE_SIZE)
        qs = dict(request.query_params)
        pager = []
        if page > 1:
            pager.append(f'<a class="button" rel="prev" href="?{urlencode({**qs, "page": page - 1})}">{self.t("‹ Newer")}</a>')
        if page < pages:
            pager.append(f'<a class="button" rel="next" href="?{urlencode({**qs, "page": page + 1})}">{self.t("Older ›")}</a>')
        first = (page - 1) * PAGE_SIZE + 1 if total else 0
        t = self.t
        toolbar = (
            f'<div class="toolbar"><label class="sel-all"><input type="checkbox" id="select-all" aria-label="{t("Select all")}"> '
            f'{t("All")}</label>'
            f'<button type="submit" formaction="/bulk" name="op" value="archive">{t("Archive")}</button>'
            f'<button type="submit" formaction="/bulk" name="op" value="delete">{t("Delete")}</button>'
            f'<button type="submit" formaction="/bulk" name="op" value="read">{t("Mark read")}</button>'
            f'<button type="submit" formaction="/bulk" name="op" value="unread">{t("Mark unread")}</button>'
            f'<span class="muted range" data-range>{first}–{min(total, page * PAGE_SIZE)} {t("of")} {total}</span>'
            f'{"".join(pager)}</div>')
        table = (f'<table class="msgs"><tbody>{"".join(out)}</tbody></table>' if rows else f'<p class="muted empty">{empty}</p>')
        body = (f'<h1>{esc(title)}</h1><form method="post" id="list-form" action="/bulk">'
                f'<input type="hidden" name="back" value="{esc(back)}">{toolbar}{table}</form>')
        return self._page(title, body, active=active)

    def _when(self, stamp: str) -> str:
        today = self.now().strftime("%Y-%m-%d")
        if stamp.startswith(today):
            return stamp[11:16]
        d = dt.datetime.strptime(stamp, "%Y-%m-%d %H:%M")
        return format_day(d.date(), self.variant.locale, with_year=d.year != self.now().year)

    # --- lists ---

    async def folder(self, request: Request) -> Response:
        folder = request.path_params["folder"]
        names = dict(FOLDERS)
        if folder not in names:
            return self._page("Not found", "<div class='error'>No such folder.</div>")
        if folder == "starred":
            return self._list("Starred", "m.starred = 1 AND m.folder != 'trash'", [], request, active=folder)
        return self._list(names[folder], "m.folder = ?", [folder], request, active=folder)

    async def label_view(self, request: Request) -> Response:
        label = self.db.one("SELECT * FROM labels WHERE id = ?", (request.path_params["label_id"],))
        if label is None:
            return self._page("Not found", "<div class='error'>No such label.</div>")
        return self._list(label["name"], "m.folder != 'trash' AND m.id IN (SELECT message_id FROM message_labels WHERE label_id = ?)",
                          [label["id"]], request, active=f"label:{label['id']}")

    async def search(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        if not q:
            return self._page("Search", "<h1>Search</h1><p class='muted'>Type a query above.</p>")
        clauses, params = ["m.folder != 'trash'"], []
        for token in re.findall(r'\w+:"[^"]*"|"[^"]*"|\S+', q):
            key, _, val = token.partition(":") if re.match(r"^(from|to|is|has|label|in|subject):", token) else ("", "", token)
            val = val.strip('"')
            like = f"%{val}%"
            if key == "from":
                clauses.append("(m.from_name LIKE ? OR m.from_email LIKE ?)"); params += [like, like]
            elif key == "to":
                clauses.append("(m.to_addrs LIKE ? OR m.cc_addrs LIKE ?)"); params += [like, like]
            elif key == "subject":
                clauses.append("m.subject LIKE ?"); params.append(like)
            elif key == "is" and val in ("starred", "unread", "read"):
                clauses.append({"starred": "m.starred = 1", "unread": "m.read = 0", "read": "m.read = 1"}[val])
            elif key == "has" and val == "attachment":
                clauses.append("EXISTS (SELECT 1 FROM attachments a WHERE a.message_id = m.id)")
            elif key == "label":
                clauses.append("m.id IN (SELECT message_id FROM message_labels ml JOIN labels l ON l.id = ml.label_id "
                               "WHERE l.name LIKE ?)"); params.append(val)
            elif key == "in":
                clauses[0] = "1"
                clauses.append("m.folder = ?"); params.append(val.lower())
            else:
                clauses.append("(m.subject LIKE ? OR m.body LIKE ? OR m.from_name LIKE ? OR m.from_email LIKE ?)")
                params += [like, like, like, like]
        return self._list(f"Search: {q}", " AND ".join(clauses), params, request, active="", empty="No messages match.")

    # --- one message ---

    async def message(self, request: Request) -> Response:
        mid = request.path_params["mid"]
        m = self.db.one("SELECT * FROM messages WHERE id = ?", (mid,))
        if m is None:
            return self._page("Not found", "<div class='error'>No such message.</div>")
        if not m["read"]:
            self.db.execute("UPDATE messages SET read = 1 WHERE id = ?", (mid,))
        labels = self._labels_of([mid]).get(mid, [])
        chips = "".join(
            f'<form method="post" action="/message/{mid}/unlabel" class="chip-form"><input type="hidden" name="label_id" value="{l["id"]}">'
            f'<span class="chip" style="border-color:{esc(l["color"])};color:{esc(l["color"])}">{esc(l["name"])}'
            f'<button type="submit" class="chip-x" aria-label="Remove label {esc(l["name"])}">×</button></span></form>'
            for l in labels)
        have = {l["id"] for l in labels}
        options = "".join(f'<option value="{l["id"]}">{esc(l["name"])}</option>'
                          for l in self.db.all("SELECT * FROM labels ORDER BY name") if l["id"] not in have)
        add_label = (f'<form method="post" action="/message/{mid}/label" class="row add-label">'
                     f'<select name="label_id" aria-label="{self.t("Add label")}"><option value="">{self.t("Add label")}…</option>'
                     f'{options}</select><button type="submit" data-action="apply-label">{self.t("Apply")}</button></form>'
                     ) if options else ""
        atts = self.db.all("SELECT id, filename, size FROM attachments WHERE message_id = ? ORDER BY id", (mid,))
        att_html = ("<div class='attachments'>" + "".join(
            f'<a class="attachment" href="/attachment/{a["id"]}" download>{esc(a["filename"])} <span class="muted">({_size(a["size"])})</span></a>'
            for a in atts) + "</div>") if atts else ""
        in_trash = m["folder"] == "trash"
        arch = ("inbox", "Move to inbox") if m["folder"] in ("archive", "trash") else ("archive", "Archive")
        t = self.t
        actions = (
            f'<div class="msg-actions row">'
            f'<a class="button" href="/compose?reply={mid}" data-action="reply">{t("Reply")}</a>'
            f'<a class="button" href="/compose?reply={mid}&amp;all=1" data-action="reply-all">{t("Reply all")}</a>'
            f'<a class="button" href="/compose?forward={mid}" data-action="forward">{t("Forward")}</a>'
            f'<form method="post" action="/message/{mid}/star"><button type="submit" data-action="star" '
            f'aria-pressed="{"true" if m["starred"] else "false"}">'
            f'{"★ " + t("Starred") if m["starred"] else "☆ " + t("Star")}</button></form>'
            f'<form method="post" action="/message/{mid}/{arch[0]}"><button type="submit" data-action="{arch[0]}">'
            f'{t(arch[1])}</button></form>'
            f'<form method="post" action="/message/{mid}/unread"><button type="submit" data-action="unread">{t("Mark unread")}'
            '</button></form>'
            + (f'<button type="button" class="danger" data-open="purge-modal" data-action="purge">{t("Delete forever")}…</button>'
               if in_trash else
               f'<form method="post" action="/message/{mid}/delete"><button type="submit" class="danger" data-action="delete">'
               f'{t("Delete")}</button></form>')
            + "</div>")
        purge = (f'<div class="modal-backdrop" id="purge-modal" hidden><div class="modal" role="dialog" aria-label="Confirm delete forever">'
                 f'<p>Delete “{esc(m["subject"])}” forever? This cannot be undone.</p>'
                 f'<form method="post" action="/message/{mid}/purge" class="row"><button type="submit" class="danger" data-action="confirm-purge">Delete forever</button>'
                 f'<button type="button" data-close="purge-modal">Cancel</button></form></div></div>') if in_trash else ""
        cc = f'<div><span class="muted">Cc:</span> {esc(m["cc_addrs"])}</div>' if m["cc_addrs"] else ""
        body = (
            f'<article class="card message" data-id="{mid}"><h1 class="subject">{esc(m["subject"]) or "(no subject)"}</h1>'
            f'<div class="chips">{chips}</div>'
            f'<div class="headers"><div><span class="muted">From:</span> <strong>{esc(m["from_name"])}</strong> &lt;{esc(m["from_email"])}&gt;</div>'
            f'<div><span class="muted">To:</span> {esc(m["to_addrs"])}</div>{cc}'
            f'<div class="muted">{esc(m["sent_at"])} · in {esc(m["folder"].capitalize())}</div></div>'
            f'{actions}{add_label}<pre class="body">{esc(m["body"])}</pre>{att_html}</article>{purge}')
        thread = self.db.all("SELECT id, from_name, subject, sent_at FROM messages WHERE thread_id = ? AND id != ? ORDER BY sent_at",
                             (m["thread_id"], mid))
        if thread:
            body += "<h2>In this conversation</h2><ul class='thread'>" + "".join(
                f'<li><a href="/message/{t["id"]}">{esc(t["from_name"])}: {esc(t["subject"])}</a> <span class="muted">{esc(t["sent_at"])}</span></li>'
                for t in thread) + "</ul>"
        return self._page(m["subject"] or "Message", body, active=m["folder"])

    def _apply(self, mid: int, op: str, form: Any) -> str | None:
        """Apply one row operation; returns the folder to go back to when the message left the view."""
        m = self.db.one("SELECT folder FROM messages WHERE id = ?", (mid,))
        if m is None:
            return None
        if op == "star":
            self.db.execute("UPDATE messages SET starred = 1 - starred WHERE id = ?", (mid,))
        elif op in ("read", "unread"):
            self.db.execute("UPDATE messages SET read = ? WHERE id = ?", (int(op == "read"), mid))
        elif op == "archive":
            self.db.execute("UPDATE messages SET folder = 'archive' WHERE id = ? AND folder != 'drafts'", (mid,))
        elif op == "inbox":
            self.db.execute("UPDATE messages SET folder = CASE WHEN from_email = ? THEN 'sent' ELSE 'inbox' END WHERE id = ?",
                            (ME_EMAIL, mid))
        elif op == "delete":
            self.db.execute("UPDATE messages SET folder = 'trash' WHERE id = ?", (mid,))
        elif op == "purge":
            self.db.execute("DELETE FROM messages WHERE id = ? AND folder = 'trash'", (mid,))
        elif op == "label" and form is not None and str(form.get("label_id", "")).isdigit():
            self.db.execute("INSERT OR IGNORE INTO message_labels (message_id, label_id) SELECT ?, id FROM labels WHERE id = ?",
                            (mid, int(str(form.get("label_id")))))
        elif op == "unlabel" and form is not None and str(form.get("label_id", "")).isdigit():
            self.db.execute("DELETE FROM message_labels WHERE message_id = ? AND label_id = ?", (mid, int(str(form.get("label_id")))))
        return str(m["folder"])

    async def message_op(self, request: Request) -> Response:
        mid, op = request.path_params["mid"], request.path_params["op"]
        if op not in ("star", "read", "unread", "archive", "inbox", "delete", "purge", "label", "unlabel"):
            return self._page("Not found", "<div class='error'>Unknown action.</div>")
        form = await request.form()
        folder = self._apply(mid, op, form)
        if folder is None:
            return RedirectResponse("/folder/inbox", status_code=303)
        back = str(form.get("back", "") or "")
        if back.startswith("/"):
            return RedirectResponse(back, status_code=303)
        if op in ("archive", "delete", "purge", "inbox"):
            return RedirectResponse(f"/folder/{folder}", status_code=303)
        if op == "unread":
            return RedirectResponse(f"/folder/{folder}", status_code=303)
        return RedirectResponse(f"/message/{mid}", status_code=303)

    async def bulk(self, request: Request) -> Response:
        form = await request.form()
        op = str(form.get("op", ""))
        ids = [int(str(v)) for v in form.getlist("ids") if str(v).isdigit()]
        if op in ("archive", "delete", "read", "unread", "star"):
            for mid in ids:
                self._apply(mid, op, None)
        back = str(form.get("back", "") or "")
        return RedirectResponse(back if back.startswith("/") else "/folder/inbox", status_code=303)

    async def attachment(self, request: Request) -> Response:
        a = self.db.one("SELECT * FROM attachments WHERE id = ?", (request.path_params["aid"],))
        if a is None:
            return Response("not found", status_code=404)
        return Response(a["data"], media_type=a["content_type"],
                        headers={"content-disposition": f'attachment; filename="{a["filename"]}"'})

    async def contacts(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        people = self.db.all("SELECT * FROM people WHERE name LIKE ? OR email LIKE ? ORDER BY name", (f"%{q}%", f"%{q}%"))
        rows = "".join(f'<tr><td>{esc(p["name"])}</td><td>{esc(p["email"])}</td>'
                       f'<td><a href="/compose?to={quote_plus(p["email"])}">Write</a> · '
                       f'<a href="/search?q={quote_plus("from:" + p["email"])}">Messages</a></td></tr>' for p in people)
        body = (f"<h1>Contacts</h1><form method='get' class='row card'><input type='search' name='q' value='{esc(q)}' "
                f"aria-label='Filter contacts' placeholder='Filter contacts'><button type='submit'>Filter</button></form>"
                f"<table class='people'><thead><tr><th>Name</th><th>Email</th><th></th></tr></thead><tbody>{rows}</tbody></table>")
        return self._page("Contacts", body)

    # --- compose ---

    def _prefill(self, request: Request) -> dict[str, Any]:
        qp = request.query_params
        data: dict[str, Any] = {"to": qp.get("to", ""), "cc": "", "subject": "", "body": "", "in_reply_to": "",
                                "forward_of": "", "draft_id": "", "carried": []}
        if qp.get("reply", "").isdigit():
            m = self.db.one("SELECT * FROM messages WHERE id = ?", (int(qp["reply"]),))
            if m:
                to = [m["from_email"]] if m["from_email"] != ME_EMAIL else split_addrs(m["to_addrs"])
                cc = []
                if qp.get("all"):
                    cc = [a for a in split_addrs(m["to_addrs"]) + split_addrs(m["cc_addrs"]) if a not in (ME_EMAIL, *to)]
                quoted = "\n".join("> " + line for line in m["body"].splitlines())
                data.update(to=", ".join(to), cc=", ".join(cc), in_reply_to=str(m["id"]),
                            subject=m["subject"] if m["subject"].startswith("Re: ") else "Re: " + m["subject"],
                            body=f"\n\nOn {m['sent_at']}, {m['from_name']} wrote:\n{quoted}")
        elif qp.get("forward", "").isdigit():
            m = self.db.one("SELECT * FROM messages WHERE id = ?", (int(qp["forward"]),))
            if m:
                data.update(subject="Fwd: " + m["subject"], forward_of=str(m["id"]),
                            body=(f"\n\n---------- Forwarded message ----------\nFrom: {m['from_name']} <{m['from_email']}>\n"
                                  f"Date: {m['sent_at']}\nSubject: {m['subject']}\nTo: {m['to_addrs']}\n\n{m['body']}"),
                            carried=self.db.all("SELECT id, filename, size FROM attachments WHERE message_id = ?", (m["id"],)))
        elif qp.get("draft", "").isdigit():
            m = self.db.one("SELECT * FROM messages WHERE id = ? AND folder = 'drafts'", (int(qp["draft"]),))
            if m:
                data.update(to=m["to_addrs"], cc=m["cc_addrs"], subject=m["subject"], body=m["body"], draft_id=str(m["id"]),
                            in_reply_to=str(m["in_reply_to"] or ""),
                            carried=self.db.all("SELECT id, filename, size FROM attachments WHERE message_id = ?", (m["id"],)))
        return data

    def _compose_form(self, data: dict[str, Any], errors: list[str]) -> Response:
        people = "".join(f'<option value="{esc(p["email"])}">{esc(p["name"])}</option>'
                         for p in self.db.all("SELECT name, email FROM people ORDER BY name"))
        carried = "".join(
            f'<label class="carried"><input type="checkbox" name="keep_attachment" value="{a["id"]}" checked> {esc(a["filename"])} '
            f'<span class="muted">({_size(a["size"])})</span></label>' for a in data["carried"])
        err = "".join(f'<div class="error" role="alert">{esc(x)}</div>' for x in errors)
        hidden = "".join(f'<input type="hidden" name="{k}" value="{esc(data[k])}">' for k in ("in_reply_to", "forward_of", "draft_id"))
        body = (
            f"<h1>{self.t('Edit draft' if data['draft_id'] else 'New message')}</h1>{err}"
            f"<form class='card compose' method='post' action='/compose' enctype='multipart/form-data'>{hidden}"
            f"<datalist id='people'>{people}</datalist>"
            f"<p><label>{self.t('To')}<br><input type='text' name='to' list='people' value='{esc(data['to'])}' size='70' autocomplete='off'></label></p>"
            f"<p><label>Cc<br><input type='text' name='cc' list='people' value='{esc(data['cc'])}' size='70' autocomplete='off'></label></p>"
            f"<p><label>{self.t('Subject')}<br><input type='text' name='subject' value='{esc(data['subject'])}' size='70'></label></p>"
            f"<p><label>{self.t('Message')}<br><textarea name='body' rows='12' cols='80'>{esc(data['body'])}</textarea></label></p>"
            f"<div class='carried-list'>{carried}</div>"
            f"<p><label>Attach files<br><input type='file' name='files' multiple id='files'></label></p>"
            f"<p class='row'><button class='primary' type='submit' name='action' value='send'>{self.t('Send')}</button>"
            f"<button type='submit' name='action' value='draft'>{self.t('Save draft')}</button>"
            f"<a class='button' href='/folder/inbox' data-action='discard'>{self.t('Discard')}</a></p></form>"
            # Sending to many people at once asks first, as real mail clients do (static/mail.js opens it).
            f"<div class='modal-backdrop' id='send-many-modal' hidden data-threshold='{MANY_RECIPIENTS}'>"
            "<div class='modal' role='dialog' aria-modal='true' aria-labelledby='send-many-title' aria-describedby='send-many-text'>"
            "<h2 id='send-many-title'>Send to many recipients?</h2><p id='send-many-text'></p>"
            "<p class='row'><button type='button' class='primary' id='send-many-confirm'>Send to all</button>"
            "<button type='button' data-close='send-many-modal' id='send-many-cancel'>Cancel</button></p></div></div>")
        return self._page("Compose", body, active="drafts" if data["draft_id"] else "")

    async def compose(self, request: Request) -> Response:
        if request.method == "GET":
            return self._compose_form(self._prefill(request), [])
        form = await request.form(max_part_size=MAX_UPLOAD)
        data: dict[str, Any] = {k: str(form.get(k, "") or "")
                                for k in ("to", "cc", "subject", "body", "in_reply_to", "forward_of", "draft_id")}
        keep = [int(str(v)) for v in form.getlist("keep_attachment") if str(v).isdigit()]
        sources = [int(x) for x in (data["forward_of"], data["draft_id"]) if x.isdigit()]
        carried = self.db.all(
            f"SELECT id, filename, size FROM attachments WHERE message_id IN ({','.join('?' * len(sources))})", sources) if sources else []
        data["carried"] = carried
        sending = str(form.get("action", "send")) != "draft"
        to, cc = split_addrs(data["to"]), split_addrs(data["cc"])
        errors = []
        bad = [a for a in to + cc if not EMAIL_RE.match(a)]
        if bad:
            errors.append(f"Invalid address: {', '.join(bad)}")
        if sending and not to:
            errors.append("Add at least one recipient.")
        uploads = [(f, f.filename) for f in form.getlist("files") if isinstance(f, UploadFile) and f.filename]
        files: list[tuple[str, str, bytes]] = []
        for f, filename in uploads:
            content = await f.read()
            if len(content) > MAX_UPLOAD:
                errors.append(f"{filename} is larger than 5 MB.")
            files.append((filename, f.content_type or "application/octet-stream", content))
        await form.close()  # the uploads' temporary files, read: closed now, not at garbage collection
        if errors:
            return self._compose_form(data, errors)
        draft_id = int(data["draft_id"]) if data["draft_id"].isdigit() else None
        stamp = self.now().strftime("%Y-%m-%d %H:%M")
        reply_to = int(data["in_reply_to"]) if data["in_reply_to"].isdigit() else None
        parent = self.db.one("SELECT thread_id FROM messages WHERE id = ?", (reply_to,)) if reply_to else None
        thread_id = parent["thread_id"] if parent else (self.db.scalar("SELECT COALESCE(MAX(thread_id), 0) + 1 FROM messages"))
        fwd = int(data["forward_of"]) if data["forward_of"].isdigit() else None
        folder = "sent" if sending else "drafts"
        values = (thread_id, folder, ME_NAME, ME_EMAIL, ", ".join(to), ", ".join(cc), data["subject"].strip()[:300],
                  data["body"][:20000], stamp, reply_to, fwd)
        if draft_id is not None and self.db.one("SELECT id FROM messages WHERE id = ? AND folder = 'drafts'", (draft_id,)):
            self.db.execute("UPDATE messages SET thread_id=?, folder=?, from_name=?, from_email=?, to_addrs=?, cc_addrs=?, "
                            "subject=?, body=?, sent_at=?, in_reply_to=?, forwarded_from=?, read=1 WHERE id = ?", (*values, draft_id))
            mid = draft_id
            self.db.execute(f"DELETE FROM attachments WHERE message_id = ? AND id NOT IN ({','.join('?' * len(keep)) or 'NULL'})",
                            [mid, *keep])
        else:
            mid = self.db.insert(
                "INSERT INTO messages (thread_id, folder, from_name, from_email, to_addrs, cc_addrs, subject, body, sent_at,"
                " in_reply_to, forwarded_from, read) VALUES (?,?,?,?,?,?,?,?,?,?,?,1)", values)
            for a in carried:
                if a["id"] in keep:
                    self.db.execute("INSERT INTO attachments (message_id, filename, content_type, size, data) "
                                    "SELECT ?, filename, content_type, size, data FROM attachments WHERE id = ?", (mid, a["id"]))
        for filename, ctype, content in files:
            self.db.execute("INSERT INTO attachments (message_id, filename, content_type, size, data) VALUES (?,?,?,?,?)",
                            (mid, filename[:200], ctype, len(content), content))
        return RedirectResponse(f"/folder/{folder}", status_code=303)


APP = MailApp
