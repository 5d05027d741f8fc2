"""Messages: SMS conversations, as a phone's messaging app has them.

Pages: `/` (conversations, newest first, unread ones bold with a count badge; Mark all as
read; a thread's Mark as read), `/threads/{id}` (the conversation as bubbles, opening it
marks it read; a composer that sends; Delete conversation asks first), `/new?q=&to=`
(start a chat: search the address book or type a number, pick the recipient, write,
send: the message joins that number's thread, or starts one; `body=` prefills the message,
which is how text shared from another app arrives: the phone shell's share sheet opens
`/new?body={text}`), `/search?q=` (messages and people). Incoming messages not yet read are the app's notifications.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule
from cua.tasks.apps.activity import added_row
from cua.tasks.apps.base import AppDB, WebApp, esc
from cua.tasks.apps.messages.seed import seed_messages
from cua.tasks.apps.phone import Notification, app_bar, confirm_dialog, icon, icon_button, phone_page
from cua.tasks.apps.phone_people import digits, same_number

SCHEMA = """
CREATE TABLE contacts (id INTEGER PRIMARY KEY, name TEXT NOT NULL, number TEXT NOT NULL);
CREATE TABLE threads (
    id INTEGER PRIMARY KEY,
    number TEXT NOT NULL,
    contact_id INTEGER REFERENCES contacts(id) ON DELETE SET NULL
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    direction TEXT NOT NULL CHECK (direction IN ('in','out')),
    body TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    read INTEGER NOT NULL DEFAULT 1 CHECK (read IN (0, 1))
);
"""

COLOURS = ["#0b57d0", "#b3261e", "#146c2e", "#7d5260", "#6750a4", "#006a6a", "#8c5000", "#3f4a5a"]
MAX_BODY = 1600  # ten SMS segments, as phones cap a message


def avatar(name: str, ident: int) -> str:
    initial = next((ch for ch in name if ch.isalpha()), "#").upper()
    return f'<span class="avatar" style="background:{COLOURS[ident % len(COLOURS)]}" aria-hidden="true">{esc(initial)}</span>'


class MessagesApp(WebApp):
    name = "messages"
    title = "Messages"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    assigned = {"threads": ("contact_id",), "messages": ("direction",)}
    derived = {"threads.name": ("threads.contact_id",), "threads.unread": ("messages.read", "messages.direction"),
               "messages.name": ("threads.contact_id",)}
    query_params = {"q": QueryRule(strip=True), "to": QueryRule(strip=True), "body": QueryRule()}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_messages(db, rng, seed, self.now())

    def state(self) -> dict[str, Any]:
        threads = self.db.all(
            "SELECT t.*, c.name, (SELECT COUNT(*) FROM messages m WHERE m.thread_id = t.id AND m.direction = 'in' AND m.read = 0)"
            " AS unread FROM threads t LEFT JOIN contacts c ON c.id = t.contact_id ORDER BY t.id")
        messages = self.db.all("SELECT m.*, COALESCE(c.name, t.number) AS name FROM messages m JOIN threads t ON t.id = m.thread_id "
                               "LEFT JOIN contacts c ON c.id = t.contact_id ORDER BY m.id")
        notes: list[Notification] = [
            {"id": f"sms-{m['id']}", "app": self.name, "title": m["name"], "text": m["body"], "time": m["sent_at"],
             "link": f"/threads/{m['thread_id']}"} for m in messages if m["direction"] == "in" and not m["read"]]
        return {"contacts": self.db.all("SELECT * FROM contacts ORDER BY id"), "threads": threads, "messages": messages,
                "notifications": notes}

    def irreversible(self, change: Change) -> str | None:
        """A text sent has reached its recipient: deleting the conversation does not unsend it."""
        row = added_row(change, "messages")
        return "send" if row is not None and row.get("direction") == "out" else None

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.inbox),
            Route("/read-all", self.read_all, methods=["POST"]),
            Route("/new", self.new),
            Route("/send", self.send, methods=["POST"]),
            Route("/search", self.search),
            Route("/threads/{tid:int}", self.thread),
            Route("/threads/{tid:int}/read", self.mark_read, methods=["POST"]),
            Route("/threads/{tid:int}/delete", self.delete, methods=["POST"]),
        ]

    def _page(self, title: str, body: str, cls: str = "") -> Response:
        return phone_page(self, title, body, body_class=cls, theme="#ffffff", scripts=("/static/app/messages.js",))

    def _threads(self, where: str = "", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        return self.db.all(
            "SELECT t.id, t.number, t.contact_id, COALESCE(c.name, t.number) AS name, m.body AS last, m.sent_at AS last_at, "
            "m.direction AS last_dir, (SELECT COUNT(*) FROM messages u WHERE u.thread_id = t.id AND u.direction = 'in' "
            "AND u.read = 0) AS unread FROM threads t LEFT JOIN contacts c ON c.id = t.contact_id "
            "JOIN messages m ON m.id = (SELECT MAX(id) FROM messages WHERE thread_id = t.id) "
            f"{where} ORDER BY m.sent_at DESC, t.id DESC", params)

    def _when(self, stamp: str) -> str:
        d = dt.datetime.fromisoformat(stamp)
        if d.date() == self.now().date():
            return d.strftime("%H:%M")
        if (self.now().date() - d.date()).days < 7:
            return d.strftime("%a")
        return d.strftime("%-d %b")

    def _rows(self, threads: list[dict[str, Any]]) -> str:
        out = []
        for t in threads:
            badge = (f'<span class="badge" aria-label="{t["unread"]} unread">{t["unread"]}</span>' if t["unread"] else "")
            mark = (f'<form method="post" action="/threads/{t["id"]}/read" class="inline"><button type="submit" class="icon-btn" '
                    f'aria-label="Mark conversation with {esc(t["name"])} as read">{icon("done_all")}</button></form>'
                    if t["unread"] else "")
            prefix = "You: " if t["last_dir"] == "out" else ""
            out.append(
                f'<li class="conv{" unread" if t["unread"] else ""}" data-id="{t["id"]}">'
                f'<a class="conv-link" href="/threads/{t["id"]}">{avatar(t["name"], t["contact_id"] or t["id"])}'
                f'<span class="conv-text"><span class="conv-top"><strong>{esc(t["name"])}</strong>'
                f'<time datetime="{esc(t["last_at"])}">{esc(self._when(t["last_at"]))}</time></span>'
                f'<span class="preview">{esc(prefix)}{esc(t["last"])}</span></span>{badge}</a>{mark}</li>')
        return "".join(out)

    # --- conversations ---

    async def inbox(self, request: Request) -> Response:
        threads = self._threads()
        total = sum(t["unread"] for t in threads)
        actions = (icon_button("search", "Search messages", href="/search")
                   + (f'<form method="post" action="/read-all" class="inline"><button type="submit" class="icon-btn" '
                      f'aria-label="Mark all as read">{icon("done_all")}</button></form>' if total else ""))
        title = f"Messages ({total} unread)" if total else "Messages"
        body = (app_bar("Messages", actions=actions) + f'<p class="sr-only" role="status">{esc(title)}</p>'
                + (f'<ul class="convs" aria-label="Conversations">{self._rows(threads)}</ul>' if threads
                   else '<p class="empty">No conversations yet</p>')
                + f'<a class="fab" href="/new">{icon("message")}<span>Start chat</span></a>')
        return self._page(title, body)

    async def read_all(self, request: Request) -> Response:
        self.db.execute("UPDATE messages SET read = 1 WHERE direction = 'in' AND read = 0")
        return RedirectResponse("/", status_code=303)

    async def mark_read(self, request: Request) -> Response:
        self.db.execute("UPDATE messages SET read = 1 WHERE thread_id = ? AND direction = 'in'", (request.path_params["tid"],))
        return RedirectResponse("/", status_code=303)

    async def thread(self, request: Request) -> Response:
        tid = request.path_params["tid"]
        t = self.db.one("SELECT t.*, c.name FROM threads t LEFT JOIN contacts c ON c.id = t.contact_id WHERE t.id = ?", (tid,))
        if t is None:
            return RedirectResponse("/", status_code=303)
        self.db.execute("UPDATE messages SET read = 1 WHERE thread_id = ? AND direction = 'in' AND read = 0", (tid,))
        name = t["name"] or t["number"]
        msgs = self.db.all("SELECT * FROM messages WHERE thread_id = ? ORDER BY sent_at, id", (tid,))
        out, day = [], ""
        for m in msgs:
            d = m["sent_at"][:10]
            if d != day:
                out.append(f'<li class="day" role="presentation">{esc(dt.date.fromisoformat(d).strftime("%A %-d %B"))}</li>')
                day = d
            who = "You" if m["direction"] == "out" else name
            out.append(f'<li class="bubble {m["direction"]}" data-id="{m["id"]}" aria-label="{esc(who)} at {m["sent_at"][11:]}">'
                       f'<span class="text">{esc(m["body"])}</span><time>{m["sent_at"][11:]}</time></li>')
        delete = icon_button("delete", "Delete conversation", attrs='data-dialog="delete-dialog"')
        body = (app_bar(name, back="/", actions=delete, cls="thread-bar")
                + f'<p class="thread-number">{esc(t["number"])}</p><ol class="bubbles" aria-label="Messages">{"".join(out)}</ol>'
                + self._composer(t["number"])
                + confirm_dialog("delete-dialog", "Delete this conversation?", f"All messages with {name} will be deleted.",
                                 f"/threads/{tid}/delete", "Delete"))
        return self._page(name, body, "thread")

    @staticmethod
    def _composer(to: str, body: str = "") -> str:
        return (f'<form method="post" action="/send" class="composer" id="composer"><input type="hidden" name="to" value="{esc(to)}">'
                f'<textarea name="body" rows="1" maxlength="{MAX_BODY}" placeholder="Text message" aria-label="Text message" '
                f'required>{esc(body[:MAX_BODY])}</textarea><button type="submit" class="send" aria-label="Send">{icon("send")}</button>'
                '</form>')

    async def delete(self, request: Request) -> Response:
        self.db.execute("DELETE FROM threads WHERE id = ?", (request.path_params["tid"],))
        return RedirectResponse("/", status_code=303)

    # --- new messages ---

    async def new(self, request: Request) -> Response:
        qp = self.query(request)
        q, to, text = str(qp["q"] or ""), str(qp["to"] or ""), str(qp["body"] or "")
        keep = {"body": text} if text else {}
        if to:
            person = next((c for c in self.db.all("SELECT * FROM contacts ORDER BY id") if same_number(c["number"], to)), None)
            label = f'{person["name"]} · {person["number"]}' if person else to
            chip = (f'<div class="to-row"><span class="to">To</span><span class="chip">{esc(label)}'
                    f'{icon_button("close", "Remove recipient", href="/new" + ("?" + urlencode(keep) if keep else ""))}</span></div>')
            return self._page("New conversation", app_bar("New conversation", back="/") + chip + self._composer(to, text), "thread")
        people = self.db.all("SELECT * FROM contacts ORDER BY name COLLATE NOCASE")
        if q:
            low, want = q.casefold(), digits(q).lstrip("+")
            people = [c for c in people if low in c["name"].casefold() or (want and want in digits(c["number"]))]
        picks = "".join(
            f'<li><a class="pick" href="/new?{urlencode({"to": c["number"], **keep})}">{avatar(c["name"], c["id"])}'
            f'<span class="conv-text"><strong>{esc(c["name"])}</strong><span class="preview">{esc(c["number"])}</span></span></a></li>'
            for c in people[:60])
        typed = ""
        if q and len(digits(q).lstrip("+")) >= 3 and set(q) <= set("0123456789+ ()-."):
            typed = (f'<li><a class="pick" href="/new?{urlencode({"to": q, **keep})}">{avatar("#", 0)}<span class="conv-text">'
                     f'<strong>Send to {esc(q)}</strong></span></a></li>')
        body = (app_bar("New conversation", back="/")
                + f'<form method="get" action="/new" class="to-row" role="search"><label for="to-q" class="to">To</label>'
                  f'<input type="search" id="to-q" name="q" value="{esc(q)}" placeholder="Type a name or phone number" '
                  f'autocomplete="off">' + "".join(f'<input type="hidden" name="body" value="{esc(v)}">' for v in keep.values())
                + "</form>"
                + (f'<p class="shared"><span class="sr-only">Message to send: </span>{esc(text)}</p>' if text else "")
                + f'<h2 class="section">Contacts</h2><ul class="picks" aria-label="Pick a recipient">{typed}{picks}</ul>')
        return self._page("New conversation", body)

    async def send(self, request: Request) -> Response:
        form = await request.form()
        to = " ".join(str(form.get("to", "")).split())[:32]
        text = str(form.get("body", "")).strip()[:MAX_BODY]
        if not digits(to).lstrip("+") or not set(to) <= set("0123456789+ ()-."):
            return RedirectResponse("/new", status_code=303)
        thread = next((t for t in self.db.all("SELECT * FROM threads ORDER BY id") if same_number(t["number"], to)), None)
        if not text:
            return RedirectResponse(f"/threads/{thread['id']}" if thread else "/new?" + urlencode({"to": to}), status_code=303)
        if thread is None:
            person = next((c for c in self.db.all("SELECT * FROM contacts ORDER BY id") if same_number(c["number"], to)), None)
            tid = self.db.insert("INSERT INTO threads (number, contact_id) VALUES (?, ?)",
                                 (person["number"] if person else to, person["id"] if person else None))
        else:
            tid = thread["id"]
        self.db.execute("INSERT INTO messages (thread_id, direction, body, sent_at, read) VALUES (?, 'out', ?, ?, 1)",
                        (tid, text, self.now().strftime("%Y-%m-%d %H:%M")))
        return RedirectResponse(f"/threads/{tid}", status_code=303)

    async def search(self, request: Request) -> Response:
        q = str(self.query(request)["q"] or "")
        results = ""
        if q:
            like = f"%{q}%"
            hits = self.db.all(
                "SELECT m.*, COALESCE(c.name, t.number) AS name, t.contact_id FROM messages m JOIN threads t ON t.id = m.thread_id "
                "LEFT JOIN contacts c ON c.id = t.contact_id WHERE m.body LIKE ? OR c.name LIKE ? OR t.number LIKE ? "
                "ORDER BY m.sent_at DESC LIMIT 100", (like, like, like))
            rows = "".join(
                f'<li class="conv"><a class="conv-link" href="/threads/{m["thread_id"]}">{avatar(m["name"], m["contact_id"] or 0)}'
                f'<span class="conv-text"><span class="conv-top"><strong>{esc(m["name"])}</strong><time>{esc(self._when(m["sent_at"]))}'
                f'</time></span><span class="preview">{esc(m["body"])}</span></span></a></li>' for m in hits)
            results = (f'<p class="count" role="status">{len(hits)} result{"" if len(hits) == 1 else "s"}</p>'
                       f'<ul class="convs" aria-label="Search results">{rows}</ul>')
        body = (app_bar("Search", back="/")
                + f'<form method="get" action="/search" class="search-row" role="search">{icon("search")}'
                  f'<input type="search" name="q" value="{esc(q)}" placeholder="Search messages" aria-label="Search messages"></form>'
                + results)
        return self._page("Search", body)


APP = MessagesApp
