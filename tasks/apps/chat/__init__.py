"""Chat: a team messenger (Slack/Mattermost-like) for one signed-in member, `@sam`.

Pages: `/c/{id}` (a channel or direct message: sidebar with unread counts and mention
badges, the message list with threads, reactions, edit/delete of one's own messages, pins,
and the composer), `/m/{id}` (a thread), `/c/{id}/pins`, `/c/{id}/settings` (topic, members
add/remove, leave, archive behind a confirmation page), `/channels` and `/channels/new`,
`/people` and `/people/{id}` (directory, profiles, statuses; "Message" opens a DM), `/search`.
Forms post and redirect. Opening a channel marks it read (`members.last_read_id`).

Rules the server keeps, whatever the page sends: only members read or post in a private
channel or DM; nobody posts in an archived channel; only a message's author edits or
deletes it. A refused request gets a page that says why (403/400), never a change.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.values.web import QueryRule
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.chat.seed import EMOJI, seed_chat

SCHEMA = """
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, handle TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
                    locale TEXT NOT NULL, timezone TEXT NOT NULL, status_emoji TEXT NOT NULL DEFAULT '',
                    status_text TEXT NOT NULL DEFAULT '', presence TEXT NOT NULL, is_me INTEGER NOT NULL DEFAULT 0);
CREATE TABLE channels (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
                       kind TEXT NOT NULL CHECK (kind IN ('public', 'private', 'dm')), topic TEXT NOT NULL DEFAULT '',
                       archived INTEGER NOT NULL DEFAULT 0, created_by INTEGER NOT NULL REFERENCES users(id),
                       created_at TEXT NOT NULL);
CREATE TABLE members (id INTEGER PRIMARY KEY, channel_id INTEGER NOT NULL REFERENCES channels(id),
                      user_id INTEGER NOT NULL REFERENCES users(id), last_read_id INTEGER NOT NULL DEFAULT 0,
                      UNIQUE (channel_id, user_id));
CREATE TABLE messages (id INTEGER PRIMARY KEY, channel_id INTEGER NOT NULL REFERENCES channels(id),
                       user_id INTEGER NOT NULL REFERENCES users(id),
                       parent_id INTEGER REFERENCES messages(id) ON DELETE CASCADE, body TEXT NOT NULL,
                       created_at TEXT NOT NULL, edited_at TEXT, pinned INTEGER NOT NULL DEFAULT 0);
CREATE INDEX messages_channel ON messages (channel_id, parent_id, id);
CREATE TABLE reactions (id INTEGER PRIMARY KEY, message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
                        user_id INTEGER NOT NULL REFERENCES users(id), emoji TEXT NOT NULL,
                        UNIQUE (message_id, user_id, emoji));
"""

ME = 1
MAX_BODY = 4000
PAGE = 40
CHANNEL_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{1,79}$")


class Refused(Exception):
    """A request the workspace's rules do not allow: shown to the member as a page, status `status`."""

    def __init__(self, message: str, status: int = 403) -> None:
        super().__init__(message)
        self.message, self.status = message, status


class ChatApp(WebApp):
    name = "chat"
    title = "Huddle"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    #: the app fills these itself: a post's author is always the signed-in member
    assigned = {"messages": ("user_id",), "channels": ("created_by",), "reactions": ("user_id",)}
    query_params = {"q": QueryRule(strip=True), "before": QueryRule(integer=True, minimum=1), "error": QueryRule()}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_chat(db, rng, self.now())

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/c/{cid:int}", self.channel),
            Route("/c/{cid:int}/post", self.post, methods=["POST"]),
            Route("/c/{cid:int}/join", self.join, methods=["POST"]),
            Route("/c/{cid:int}/pins", self.pins),
            Route("/c/{cid:int}/settings", self.settings),
            Route("/c/{cid:int}/topic", self.topic, methods=["POST"]),
            Route("/c/{cid:int}/members", self.add_member, methods=["POST"]),
            Route("/c/{cid:int}/members/{uid:int}/remove", self.remove_member, methods=["POST"]),
            Route("/c/{cid:int}/leave", self.leave, methods=["POST"]),
            Route("/c/{cid:int}/archive", self.archive, methods=["GET", "POST"]),
            Route("/m/{mid:int}", self.thread),
            Route("/m/{mid:int}/reply", self.reply, methods=["POST"]),
            Route("/m/{mid:int}/edit", self.edit, methods=["GET", "POST"]),
            Route("/m/{mid:int}/delete", self.delete, methods=["GET", "POST"]),
            Route("/m/{mid:int}/pin", self.pin, methods=["POST"]),
            Route("/m/{mid:int}/react", self.react, methods=["POST"]),
            Route("/channels", self.browse),
            Route("/channels/new", self.new_channel, methods=["GET", "POST"]),
            Route("/people", self.people),
            Route("/people/{uid:int}", self.profile),
            Route("/people/{uid:int}/dm", self.open_dm, methods=["POST"]),
            Route("/me/status", self.set_status, methods=["POST"]),
            Route("/search", self.search),
        ]

    # --- rules ---

    def _channel(self, cid: int) -> dict[str, Any]:
        ch = self.db.one("SELECT * FROM channels WHERE id = ?", (cid,))
        if ch is None:
            raise Refused("No such channel.", 404)
        return ch

    def _is_member(self, cid: int) -> bool:
        return self.db.one("SELECT 1 FROM members WHERE channel_id = ? AND user_id = ?", (cid, ME)) is not None

    def _readable(self, cid: int) -> dict[str, Any]:
        ch = self._channel(cid)
        if ch["kind"] != "public" and not self._is_member(cid):
            raise Refused("This channel is private: only its members can see it.")
        return ch

    def _postable(self, cid: int) -> dict[str, Any]:
        ch = self._readable(cid)
        if ch["archived"]:
            raise Refused("This channel is archived: nobody can post in it.")
        if not self._is_member(cid):
            raise Refused("Join the channel to post in it.")
        return ch

    def _message(self, mid: int) -> dict[str, Any]:
        m = self.db.one("SELECT * FROM messages WHERE id = ?", (mid,))
        if m is None:
            raise Refused("No such message.", 404)
        self._readable(m["channel_id"])
        return m

    def _own(self, mid: int) -> dict[str, Any]:
        m = self._message(mid)
        if m["user_id"] != ME:
            raise Refused("You can only edit or delete your own messages.")
        if self._channel(m["channel_id"])["archived"]:
            raise Refused("This channel is archived: its messages cannot change.")
        return m

    def _manageable(self, cid: int) -> dict[str, Any]:
        ch = self._readable(cid)
        if ch["kind"] == "dm":
            raise Refused("A direct message has no settings.", 400)
        if not self._is_member(cid):
            raise Refused("Join the channel to change its settings.")
        if ch["archived"]:
            raise Refused("This channel is archived: its settings cannot change.")
        return ch

    @staticmethod
    def _body(form: Any) -> str:
        body = str(form.get("body", "") or "").strip()
        if not body:
            raise Refused("A message cannot be empty.", 400)
        if len(body) > MAX_BODY:
            raise Refused(f"A message can be at most {MAX_BODY} characters long.", 400)
        return body

    def _stamp(self) -> str:
        return self.now().strftime("%Y-%m-%d %H:%M")

    # --- page furniture ---

    def _label(self, ch: dict[str, Any]) -> str:
        if ch["kind"] == "dm":
            other = self.db.one("SELECT u.name FROM members m JOIN users u ON u.id = m.user_id WHERE m.channel_id = ? "
                                "AND m.user_id != ?", (ch["id"], ME))
            return other["name"] if other else "Direct message"
        return f'{"🔒 " if ch["kind"] == "private" else "#"}{ch["name"]}'

    def _sidebar(self, current: int | None) -> str:
        rows = self.db.all(
            "SELECT c.*, (SELECT COUNT(*) FROM messages x WHERE x.channel_id = c.id AND x.parent_id IS NULL AND x.id > m.last_read_id "
            "AND x.user_id != ?) AS unread, (SELECT COUNT(*) FROM messages x WHERE x.channel_id = c.id AND x.id > m.last_read_id "
            "AND x.user_id != ? AND x.body LIKE '%@sam%') AS mentions FROM channels c JOIN members m ON m.channel_id = c.id "
            "AND m.user_id = ? WHERE c.archived = 0 ORDER BY c.kind = 'dm', c.name", (ME, ME, ME))

        def item(c: dict[str, Any]) -> str:
            badge = (f'<span class="badge mention" data-mentions="{c["mentions"]}" aria-label="{c["mentions"]} mentions">'
                     f'@{c["mentions"]}</span>' if c["mentions"] else "")
            unread = (f'<span class="badge" data-unread="{c["unread"]}" aria-label="{c["unread"]} unread">{c["unread"]}</span>'
                      if c["unread"] else "")
            cur = ' aria-current="page"' if c["id"] == current else ""
            cls = "chan unread" if c["unread"] else "chan"
            return (f'<li><a class="{cls}" href="/c/{c["id"]}" data-channel="{esc(c["name"])}" data-channel-id="{c["id"]}"{cur}>'
                    f'<span class="chan-name">{esc(self._label(c))}</span>{unread}{badge}</a></li>')
        chans = "".join(item(c) for c in rows if c["kind"] != "dm")
        dms = "".join(item(c) for c in rows if c["kind"] == "dm")
        return ('<nav class="sidebar" aria-label="Workspace"><div class="ws-name">Northwind Labs</div>'
                '<form method="get" action="/search" role="search" class="side-search"><input type="search" name="q" '
                'aria-label="Search messages" placeholder="Search" data-search></form>'
                f'<h2 class="side-h" id="side-ch">Channels</h2><ul aria-labelledby="side-ch">{chans}</ul>'
                '<p class="side-links"><a href="/channels" data-nav="channels">Browse channels</a> · '
                '<a href="/channels/new" data-nav="new-channel">New channel</a></p>'
                f'<h2 class="side-h" id="side-dm">Direct messages</h2><ul aria-labelledby="side-dm">{dms}</ul>'
                '<p class="side-links"><a href="/people" data-nav="people">People</a></p></nav>')

    def _page(self, title: str, body: str, *, current: int | None = None, status: int = 200) -> HTMLResponse:
        resp = html_page(self, title, f'<div class="shell">{self._sidebar(current)}<section class="pane">{body}</section></div>')
        resp.status_code = status
        return resp

    def _refusal(self, exc: Refused) -> HTMLResponse:
        return self._page("Not allowed" if exc.status == 403 else "Cannot do that",
                          f'<div class="error" role="alert" data-error>{esc(exc.message)}</div>', status=exc.status)

    async def _guard(self, request: Request, handler: Any) -> Response:
        try:
            result: Response = await handler(request)
            return result
        except Refused as exc:
            return self._refusal(exc)

    def _users(self) -> dict[int, dict[str, Any]]:
        return {u["id"]: u for u in self.db.all("SELECT * FROM users")}

    def _reactions(self, mids: list[int]) -> dict[int, list[dict[str, Any]]]:
        if not mids:
            return {}
        marks = ",".join("?" * len(mids))
        out: dict[int, list[dict[str, Any]]] = {}
        for r in self.db.all(f"SELECT message_id, emoji, COUNT(*) AS n, MAX(user_id = ?) AS mine FROM reactions "
                             f"WHERE message_id IN ({marks}) GROUP BY message_id, emoji ORDER BY MIN(id)", [ME, *mids]):
            out.setdefault(r["message_id"], []).append(r)
        return out

    def _message_html(self, m: dict[str, Any], users: dict[int, dict[str, Any]], reactions: list[dict[str, Any]],
                      *, replies: int | None, writable: bool) -> str:
        u = users[m["user_id"]]
        mid = m["id"]
        edited = ' <span class="edited" data-edited>(edited)</span>' if m["edited_at"] else ""
        pinned = ' <span class="pin-mark" data-pinned>📌 Pinned</span>' if m["pinned"] else ""
        chips = "".join(
            f'<form method="post" action="/m/{mid}/react" class="inline"><input type="hidden" name="emoji" value="{esc(r["emoji"])}">'
            f'<button type="submit" class="chip" data-reaction="{esc(r["emoji"])}" aria-pressed="{"true" if r["mine"] else "false"}" '
            f'aria-label="{esc(r["emoji"])} {r["n"]}, {"remove" if r["mine"] else "add"} your reaction">{esc(r["emoji"])} {r["n"]}</button></form>'
            for r in reactions)
        actions = ""
        if writable:
            picker = "".join(f'<button type="submit" name="emoji" value="{e}" data-react="{e}" aria-label="React {e}">{e}</button>'
                             for e in EMOJI)
            actions = (f'<details class="more"><summary aria-label="React to message {mid}" data-action="react-menu">☺</summary>'
                       f'<form method="post" action="/m/{mid}/react" class="picker">{picker}</form></details>'
                       f'<form method="post" action="/m/{mid}/pin" class="inline"><button type="submit" data-action="pin" '
                       f'aria-pressed="{"true" if m["pinned"] else "false"}">{"Unpin" if m["pinned"] else "Pin"}</button></form>')
            if m["user_id"] == ME:
                actions += (f'<a class="act" href="/m/{mid}/edit" data-action="edit">Edit</a>'
                            f'<a class="act danger" href="/m/{mid}/delete" data-action="delete">Delete</a>')
        thread = ""
        if replies is not None:
            label = f"{replies} repl{'y' if replies == 1 else 'ies'}" if replies else "Reply"
            thread = f'<a class="act" href="/m/{mid}" data-action="thread" data-replies="{replies}">{label}</a>'
        return (f'<article class="msg" data-message-id="{mid}" data-author="{esc(u["handle"])}" aria-labelledby="mh-{mid}">'
                f'<div class="avatar" aria-hidden="true">{esc(u["name"][:1])}</div><div class="msg-main">'
                f'<header class="msg-head" id="mh-{mid}"><a class="author" href="/people/{u["id"]}">{esc(u["name"])}</a> '
                f'<time datetime="{esc(m["created_at"])}">{esc(m["created_at"])}</time>{edited}{pinned}</header>'
                f'<div class="body" data-body>{esc(m["body"])}</div>'
                f'<div class="reactions">{chips}</div><div class="actions">{thread}{actions}</div></div></article>')

    # --- channels ---

    async def home(self, _: Request) -> Response:
        cid = self.db.scalar("SELECT id FROM channels WHERE name = 'general'")
        return RedirectResponse(f"/c/{cid}", status_code=302)

    async def channel(self, request: Request) -> Response:
        return await self._guard(request, self._channel_page)

    async def _channel_page(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        ch = self._readable(cid)
        before = self.query(request)["before"]
        where, params = ("AND id < ?", [cid, int(before)]) if before else ("", [cid])
        rows = self.db.all(f"SELECT * FROM (SELECT * FROM messages WHERE channel_id = ? AND parent_id IS NULL {where} "
                           f"ORDER BY id DESC LIMIT {PAGE}) ORDER BY id", params)
        member = self._is_member(cid)
        if member and not before:
            newest = self.db.scalar("SELECT MAX(id) FROM messages WHERE channel_id = ?", (cid,)) or 0
            self.db.execute("UPDATE members SET last_read_id = ? WHERE channel_id = ? AND user_id = ? AND last_read_id < ?",
                            (newest, cid, ME, newest))
        users = self._users()
        counts = {r["parent_id"]: r["n"] for r in self.db.all(
            "SELECT parent_id, COUNT(*) AS n FROM messages WHERE channel_id = ? AND parent_id IS NOT NULL GROUP BY parent_id", (cid,))}
        reactions = self._reactions([m["id"] for m in rows])
        writable = member and not ch["archived"]
        msgs = "".join(self._message_html(m, users, reactions.get(m["id"], []), replies=counts.get(m["id"], 0), writable=writable)
                       for m in rows)
        older = (f'<p class="older"><a href="/c/{cid}?before={rows[0]["id"]}" data-action="older">Older messages</a></p>'
                 if rows and self.db.one("SELECT 1 FROM messages WHERE channel_id = ? AND parent_id IS NULL AND id < ?",
                                         (cid, rows[0]["id"])) else "")
        n_members = self.db.scalar("SELECT COUNT(*) FROM members WHERE channel_id = ?", (cid,))
        if ch["archived"]:
            composer = '<p class="notice" role="status" data-archived>This channel is archived. Nobody can post in it.</p>'
        elif not member:
            composer = (f'<form method="post" action="/c/{cid}/join" class="joinbar"><span>You are viewing #{esc(ch["name"])}.</span>'
                        '<button type="submit" class="primary" data-action="join">Join channel</button></form>')
        else:
            composer = (f'<form method="post" action="/c/{cid}/post" class="composer" data-composer>'
                        f'<label class="sr" for="composer-body">Message {esc(self._label(ch))}</label>'
                        f'<textarea id="composer-body" name="body" rows="2" maxlength="{MAX_BODY}" required '
                        f'placeholder="Message {esc(self._label(ch))}"></textarea>'
                        '<button type="submit" class="primary" data-action="send">Send</button></form>')
        links = ""
        if ch["kind"] != "dm":
            links = (f'<a href="/c/{cid}/pins" data-nav="pins">Pinned</a>'
                     f'<a href="/c/{cid}/settings" data-nav="settings">Settings</a>')
        head = (f'<header class="chan-head"><div><h1 data-channel-title="{esc(ch["name"])}">{esc(self._label(ch))}</h1>'
                f'<p class="topic" data-topic>{esc(ch["topic"])}</p></div><div class="chan-links">'
                f'<span class="muted" data-member-count="{n_members}">{n_members} members</span>{links}</div></header>')
        empty = "" if rows else '<p class="muted">No messages yet.</p>'
        body = f'{head}<div class="messages" role="feed" aria-label="Messages">{older}{empty}{msgs}</div>{composer}'
        return self._page(self._label(ch), body, current=cid)

    async def post(self, request: Request) -> Response:
        return await self._guard(request, self._post)

    async def _post(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        self._postable(cid)
        body = self._body(await request.form())
        mid = self.db.insert("INSERT INTO messages (channel_id, user_id, parent_id, body, created_at) VALUES (?,?,?,?,?)",
                             (cid, ME, None, body, self._stamp()))
        self.db.execute("UPDATE members SET last_read_id = ? WHERE channel_id = ? AND user_id = ?", (mid, cid, ME))
        return RedirectResponse(f"/c/{cid}", status_code=303)

    async def join(self, request: Request) -> Response:
        return await self._guard(request, self._join)

    async def _join(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        ch = self._readable(cid)
        if ch["kind"] == "dm" or ch["archived"]:
            raise Refused("You cannot join this conversation.", 400)
        self.db.execute("INSERT OR IGNORE INTO members (channel_id, user_id, last_read_id) VALUES (?,?,0)", (cid, ME))
        return RedirectResponse(f"/c/{cid}", status_code=303)

    async def pins(self, request: Request) -> Response:
        return await self._guard(request, self._pins)

    async def _pins(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        ch = self._readable(cid)
        rows = self.db.all("SELECT * FROM messages WHERE channel_id = ? AND pinned = 1 ORDER BY id", (cid,))
        users = self._users()
        items = "".join(self._message_html(m, users, [], replies=None, writable=False) for m in rows) or \
            '<p class="muted">Nothing is pinned yet.</p>'
        body = (f'<header class="chan-head"><h1>Pinned in {esc(self._label(ch))}</h1><a href="/c/{cid}">Back to channel</a></header>'
                f'<div class="messages" data-pins>{items}</div>')
        return self._page("Pinned", body, current=cid)

    # --- settings ---

    async def settings(self, request: Request) -> Response:
        return await self._guard(request, self._settings)

    async def _settings(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        ch = self._readable(cid)
        members = self.db.all("SELECT u.* FROM members m JOIN users u ON u.id = m.user_id WHERE m.channel_id = ? ORDER BY u.name", (cid,))
        editable = self._is_member(cid) and not ch["archived"] and ch["kind"] != "dm"
        error = self.query(request)["error"] or ""
        alert = f'<div class="error" role="alert" data-error>{esc(error)}</div>' if error else ""
        def member_row(u: dict[str, Any]) -> str:
            remove = (f'<form method="post" action="/c/{cid}/members/{u["id"]}/remove" class="inline"><button type="submit" '
                      f'data-action="remove-member" data-user="{esc(u["handle"])}" aria-label="Remove {esc(u["name"])}">Remove</button></form>'
                      if editable and u["id"] != ME else "")
            return f'<li data-member="{esc(u["handle"])}"><a href="/people/{u["id"]}">{esc(u["name"])}</a> <span class="muted">@{esc(u["handle"])}</span>{remove}</li>'
        rows = "".join(member_row(u) for u in members)
        ids = {u["id"] for u in members}
        addable = "".join(f'<option value="{u["id"]}">{esc(u["name"])} (@{esc(u["handle"])})</option>'
                          for u in self.db.all("SELECT * FROM users ORDER BY name") if u["id"] not in ids)
        controls = ""
        if editable:
            controls = (f'<form method="post" action="/c/{cid}/topic" class="card" data-form="topic"><label for="topic">Topic</label>'
                        f'<input id="topic" name="topic" maxlength="250" value="{esc(ch["topic"])}">'
                        '<button type="submit" class="primary" data-action="save-topic">Save topic</button></form>'
                        f'<form method="post" action="/c/{cid}/members" class="card" data-form="add-member"><label for="add-user">Add a member</label>'
                        f'<select id="add-user" name="user_id"><option value="">Choose a person…</option>{addable}</select>'
                        '<button type="submit" data-action="add-member">Add</button></form>'
                        f'<div class="card danger-zone"><form method="post" action="/c/{cid}/leave" class="inline">'
                        '<button type="submit" data-action="leave">Leave channel</button></form>'
                        f'<a class="button danger" href="/c/{cid}/archive" data-action="archive">Archive channel</a></div>')
        status = '<p class="notice" data-archived>This channel is archived.</p>' if ch["archived"] else ""
        body = (f'<header class="chan-head"><h1>Settings of {esc(self._label(ch))}</h1><a href="/c/{cid}">Back to channel</a></header>'
                f'{alert}{status}{controls}<section class="card"><h2>Members ({len(members)})</h2><ul class="member-list">{rows}</ul></section>')
        return self._page("Channel settings", body, current=cid)

    async def topic(self, request: Request) -> Response:
        return await self._guard(request, self._topic)

    async def _topic(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        self._manageable(cid)
        topic = " ".join(str((await request.form()).get("topic", "") or "").split())
        if len(topic) > 250:
            raise Refused("A topic can be at most 250 characters long.", 400)
        self.db.execute("UPDATE channels SET topic = ? WHERE id = ?", (topic, cid))
        return RedirectResponse(f"/c/{cid}", status_code=303)

    async def add_member(self, request: Request) -> Response:
        return await self._guard(request, self._add_member)

    async def _add_member(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        self._manageable(cid)
        raw = str((await request.form()).get("user_id", "") or "")
        if not raw.isdigit() or self.db.one("SELECT 1 FROM users WHERE id = ?", (int(raw),)) is None:
            return RedirectResponse(f"/c/{cid}/settings?" + urlencode({"error": "Choose a person to add."}), status_code=303)
        self.db.execute("INSERT OR IGNORE INTO members (channel_id, user_id, last_read_id) VALUES (?,?,0)", (cid, int(raw)))
        return RedirectResponse(f"/c/{cid}/settings", status_code=303)

    async def remove_member(self, request: Request) -> Response:
        return await self._guard(request, self._remove_member)

    async def _remove_member(self, request: Request) -> Response:
        cid, uid = request.path_params["cid"], request.path_params["uid"]
        self._manageable(cid)
        if uid == ME:
            raise Refused("To leave a channel, use Leave channel.", 400)
        self.db.execute("DELETE FROM members WHERE channel_id = ? AND user_id = ?", (cid, uid))
        return RedirectResponse(f"/c/{cid}/settings", status_code=303)

    async def leave(self, request: Request) -> Response:
        return await self._guard(request, self._leave)

    async def _leave(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        ch = self._manageable(cid)
        if ch["name"] == "general":
            raise Refused("Everyone stays in #general.", 400)
        self.db.execute("DELETE FROM members WHERE channel_id = ? AND user_id = ?", (cid, ME))
        return RedirectResponse("/", status_code=303)

    async def archive(self, request: Request) -> Response:
        return await self._guard(request, self._archive)

    async def _archive(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        ch = self._manageable(cid)
        if ch["name"] == "general":
            raise Refused("#general cannot be archived.", 400)
        if request.method == "GET":
            body = (f'<div class="card confirm" role="alertdialog" aria-labelledby="arch-h" aria-describedby="arch-d">'
                    f'<h1 id="arch-h">Archive {esc(self._label(ch))}?</h1><p id="arch-d">Nobody will be able to post in it, '
                    'and it leaves everyone\'s sidebar. Its messages stay searchable.</p>'
                    f'<form method="post" action="/c/{cid}/archive" class="row"><button type="submit" class="danger" '
                    f'data-action="confirm-archive">Archive</button><a class="button" href="/c/{cid}/settings" '
                    'data-action="cancel">Cancel</a></form></div>')
            return self._page("Archive channel", body, current=cid)
        self.db.execute("UPDATE channels SET archived = 1 WHERE id = ?", (cid,))
        return RedirectResponse(f"/c/{cid}", status_code=303)

    # --- messages ---

    async def thread(self, request: Request) -> Response:
        return await self._guard(request, self._thread)

    async def _thread(self, request: Request) -> Response:
        m = self._message(request.path_params["mid"])
        if m["parent_id"] is not None:
            return RedirectResponse(f"/m/{m['parent_id']}", status_code=302)
        ch = self._channel(m["channel_id"])
        replies = self.db.all("SELECT * FROM messages WHERE parent_id = ? ORDER BY id", (m["id"],))
        users = self._users()
        writable = self._is_member(ch["id"]) and not ch["archived"]
        reactions = self._reactions([m["id"], *(r["id"] for r in replies)])
        root = self._message_html(m, users, reactions.get(m["id"], []), replies=None, writable=writable)
        items = "".join(self._message_html(r, users, reactions.get(r["id"], []), replies=None, writable=writable) for r in replies)
        composer = (f'<form method="post" action="/m/{m["id"]}/reply" class="composer" data-composer="reply">'
                    '<label class="sr" for="reply-body">Reply in thread</label>'
                    f'<textarea id="reply-body" name="body" rows="2" maxlength="{MAX_BODY}" required placeholder="Reply…"></textarea>'
                    '<button type="submit" class="primary" data-action="send-reply">Reply</button></form>') if writable else ""
        body = (f'<header class="chan-head"><h1>Thread in {esc(self._label(ch))}</h1><a href="/c/{ch["id"]}" data-nav="back">Back to channel</a></header>'
                f'<div class="messages thread" data-thread="{m["id"]}">{root}<h2 class="replies-h">{len(replies)} replies</h2>{items}</div>{composer}')
        return self._page("Thread", body, current=ch["id"])

    async def reply(self, request: Request) -> Response:
        return await self._guard(request, self._reply)

    async def _reply(self, request: Request) -> Response:
        m = self._message(request.path_params["mid"])
        root = m["parent_id"] or m["id"]
        self._postable(m["channel_id"])
        body = self._body(await request.form())
        self.db.insert("INSERT INTO messages (channel_id, user_id, parent_id, body, created_at) VALUES (?,?,?,?,?)",
                       (m["channel_id"], ME, root, body, self._stamp()))
        return RedirectResponse(f"/m/{root}", status_code=303)

    async def edit(self, request: Request) -> Response:
        return await self._guard(request, self._edit)

    async def _edit(self, request: Request) -> Response:
        m = self._own(request.path_params["mid"])
        back = f"/m/{m['parent_id']}" if m["parent_id"] else f"/c/{m['channel_id']}"
        if request.method == "POST":
            body = self._body(await request.form())
            if body != m["body"]:
                self.db.execute("UPDATE messages SET body = ?, edited_at = ? WHERE id = ?", (body, self._stamp(), m["id"]))
            return RedirectResponse(back, status_code=303)
        form = (f'<form method="post" action="/m/{m["id"]}/edit" class="card composer" data-form="edit">'
                '<label for="edit-body">Edit message</label>'
                f'<textarea id="edit-body" name="body" rows="3" maxlength="{MAX_BODY}" required>{esc(m["body"])}</textarea>'
                f'<div class="row"><button type="submit" class="primary" data-action="save-edit">Save changes</button>'
                f'<a class="button" href="{back}" data-action="cancel">Cancel</a></div></form>')
        return self._page("Edit message", f'<header class="chan-head"><h1>Edit message</h1></header>{form}', current=m["channel_id"])

    async def delete(self, request: Request) -> Response:
        return await self._guard(request, self._delete)

    async def _delete(self, request: Request) -> Response:
        m = self._own(request.path_params["mid"])
        back = f"/m/{m['parent_id']}" if m["parent_id"] else f"/c/{m['channel_id']}"
        if request.method == "POST":
            self.db.execute("DELETE FROM messages WHERE id = ?", (m["id"],))
            return RedirectResponse(back, status_code=303)
        body = (f'<div class="card confirm" role="alertdialog" aria-labelledby="del-h" aria-describedby="del-d">'
                f'<h1 id="del-h">Delete message?</h1><blockquote id="del-d">{esc(m["body"])}</blockquote>'
                f'<form method="post" action="/m/{m["id"]}/delete" class="row"><button type="submit" class="danger" '
                f'data-action="confirm-delete">Delete</button><a class="button" href="{back}" data-action="cancel">Cancel</a></form></div>')
        return self._page("Delete message", body, current=m["channel_id"])

    async def pin(self, request: Request) -> Response:
        return await self._guard(request, self._pin)

    async def _pin(self, request: Request) -> Response:
        m = self._message(request.path_params["mid"])
        self._postable(m["channel_id"])
        self.db.execute("UPDATE messages SET pinned = 1 - pinned WHERE id = ?", (m["id"],))
        back = f"/m/{m['parent_id']}" if m["parent_id"] else f"/c/{m['channel_id']}"
        return RedirectResponse(back, status_code=303)

    async def react(self, request: Request) -> Response:
        return await self._guard(request, self._react)

    async def _react(self, request: Request) -> Response:
        m = self._message(request.path_params["mid"])
        self._postable(m["channel_id"])
        emoji = str((await request.form()).get("emoji", "") or "")
        if emoji not in EMOJI:
            raise Refused(f"Choose one of the workspace's reactions: {' '.join(EMOJI)}.", 400)
        if self.db.one("SELECT 1 FROM reactions WHERE message_id = ? AND user_id = ? AND emoji = ?", (m["id"], ME, emoji)):
            self.db.execute("DELETE FROM reactions WHERE message_id = ? AND user_id = ? AND emoji = ?", (m["id"], ME, emoji))
        else:
            self.db.execute("INSERT INTO reactions (message_id, user_id, emoji) VALUES (?,?,?)", (m["id"], ME, emoji))
        back = f"/m/{m['parent_id'] or m['id']}" if m["parent_id"] else f"/c/{m['channel_id']}"
        return RedirectResponse(back, status_code=303)

    # --- directory, channels, search ---

    async def browse(self, _: Request) -> Response:
        rows = self.db.all("SELECT c.*, (SELECT COUNT(*) FROM members m WHERE m.channel_id = c.id) AS n, "
                           "EXISTS (SELECT 1 FROM members m WHERE m.channel_id = c.id AND m.user_id = ?) AS mine "
                           "FROM channels c WHERE c.kind = 'public' OR (c.kind = 'private' AND EXISTS "
                           "(SELECT 1 FROM members m WHERE m.channel_id = c.id AND m.user_id = ?)) ORDER BY c.name", (ME, ME))
        items = "".join(
            f'<li class="card" data-channel-row="{esc(c["name"])}"><a href="/c/{c["id"]}">{esc(self._label(c))}</a>'
            f'{" <span class=tag>archived</span>" if c["archived"] else ""}{" <span class=tag>joined</span>" if c["mine"] else ""}'
            f'<p class="muted">{esc(c["topic"])} · {c["n"]} members</p></li>' for c in rows)
        body = ('<header class="chan-head"><h1>Channels</h1><a class="button primary" href="/channels/new" '
                f'data-action="new-channel">New channel</a></header><ul class="cards">{items}</ul>')
        return self._page("Channels", body)

    async def new_channel(self, request: Request) -> Response:
        users = self.db.all("SELECT * FROM users WHERE id != ? ORDER BY name", (ME,))
        values: dict[str, Any] = {"name": "", "topic": "", "private": False, "members": set()}
        error = ""
        if request.method == "POST":
            form = await request.form()
            name = str(form.get("name", "") or "").strip().lower().lstrip("#")
            values = {"name": name, "topic": " ".join(str(form.get("topic", "") or "").split()),
                      "private": form.get("private") == "on",
                      "members": {int(str(v)) for v in form.getlist("members") if str(v).isdigit()}}
            known = {u["id"] for u in users}
            if not CHANNEL_NAME.match(name):
                error = "Channel names are 2-80 lowercase letters, digits, dashes or underscores, starting with a letter or digit."
            elif self.db.one("SELECT 1 FROM channels WHERE name = ?", (name,)):
                error = f"A channel named {name} already exists."
            elif len(values["topic"]) > 250:
                error = "A topic can be at most 250 characters long."
            elif not values["members"] <= known:
                error = "Choose members from the directory."
            else:
                cid = self.db.insert("INSERT INTO channels (name, kind, topic, archived, created_by, created_at) VALUES (?,?,?,?,?,?)",
                                     (name, "private" if values["private"] else "public", values["topic"], 0, ME, self._stamp()))
                for uid in sorted({ME, *values["members"]}):
                    self.db.execute("INSERT INTO members (channel_id, user_id, last_read_id) VALUES (?,?,0)", (cid, uid))
                return RedirectResponse(f"/c/{cid}", status_code=303)
        boxes = "".join(f'<label class="check"><input type="checkbox" name="members" value="{u["id"]}" data-user="{esc(u["handle"])}"'
                        f'{" checked" if u["id"] in values["members"] else ""}> {esc(u["name"])} <span class="muted">@{esc(u["handle"])}</span></label>'
                        for u in users)
        alert = f'<div class="error" role="alert" data-error>{esc(error)}</div>' if error else ""
        body = (f'<header class="chan-head"><h1>New channel</h1></header>{alert}'
                '<form method="post" action="/channels/new" class="card" data-form="new-channel">'
                f'<label for="ch-name">Name</label><input id="ch-name" name="name" required maxlength="80" value="{esc(values["name"])}"'
                f'{" aria-invalid=true" if error else ""}>'
                f'<label for="ch-topic">Topic (optional)</label><input id="ch-topic" name="topic" maxlength="250" value="{esc(values["topic"])}">'
                f'<label class="check"><input type="checkbox" name="private" id="ch-private"{" checked" if values["private"] else ""}> '
                'Make private: only invited members can see it</label>'
                f'<fieldset><legend>Members</legend><div class="member-grid">{boxes}</div></fieldset>'
                '<button type="submit" class="primary" data-action="create-channel">Create channel</button></form>')
        return self._page("New channel", body, status=400 if error else 200)

    async def people(self, request: Request) -> Response:
        q = self.query(request)["q"] or ""
        like = f"%{q}%"
        rows = self.db.all("SELECT * FROM users WHERE name LIKE ? OR handle LIKE ? OR title LIKE ? ORDER BY name", (like, like, like))
        items = "".join(
            f'<li class="card person" data-person="{esc(u["handle"])}"><span class="presence {esc(u["presence"])}" '
            f'aria-label="{esc(u["presence"])}"></span><a href="/people/{u["id"]}">{esc(u["name"])}</a> <span class="muted">@{esc(u["handle"])} · '
            f'{esc(u["title"])}</span> <span data-status>{esc(u["status_emoji"])} {esc(u["status_text"])}</span></li>' for u in rows)
        body = ('<header class="chan-head"><h1>People</h1></header><form method="get" action="/people" role="search" class="row">'
                f'<input type="search" name="q" value="{esc(q)}" aria-label="Search people" data-people-search>'
                f'<button type="submit">Search</button></form><ul class="cards">{items}</ul>')
        return self._page("People", body)

    async def profile(self, request: Request) -> Response:
        u = self.db.one("SELECT * FROM users WHERE id = ?", (request.path_params["uid"],))
        if u is None:
            return self._refusal(Refused("No such person.", 404))
        if u["id"] == ME:
            action = ('<form method="post" action="/me/status" class="card" data-form="status">'
                      f'<label for="st-emoji">Status emoji</label><input id="st-emoji" name="status_emoji" maxlength="8" value="{esc(u["status_emoji"])}">'
                      f'<label for="st-text">Status</label><input id="st-text" name="status_text" maxlength="100" value="{esc(u["status_text"])}">'
                      '<button type="submit" class="primary" data-action="save-status">Save status</button></form>')
        else:
            action = (f'<form method="post" action="/people/{u["id"]}/dm"><button type="submit" class="primary" '
                      f'data-action="message" aria-label="Message {esc(u["name"])}">Message</button></form>')
        body = (f'<div class="card profile" data-profile="{esc(u["handle"])}"><div class="avatar big" aria-hidden="true">{esc(u["name"][:1])}</div>'
                f'<h1>{esc(u["name"])}</h1><p class="muted">@{esc(u["handle"])} · {esc(u["title"])}</p>'
                f'<dl><dt>Status</dt><dd data-status>{esc(u["status_emoji"])} {esc(u["status_text"]) or "—"}</dd>'
                f'<dt>Presence</dt><dd data-presence>{esc(u["presence"])}</dd><dt>Local time zone</dt><dd>{esc(u["timezone"])}</dd>'
                f'<dt>Language</dt><dd>{esc(u["locale"])}</dd></dl></div>{action}')
        return self._page(u["name"], body)

    async def open_dm(self, request: Request) -> Response:
        uid = request.path_params["uid"]
        if uid == ME or self.db.one("SELECT 1 FROM users WHERE id = ?", (uid,)) is None:
            return self._refusal(Refused("Choose another person to message.", 400))
        cid = self.db.scalar("SELECT c.id FROM channels c WHERE c.kind = 'dm' AND c.name = ?", (f"dm-1-{uid}",))
        if cid is None:
            cid = self.db.insert("INSERT INTO channels (name, kind, topic, archived, created_by, created_at) VALUES (?,?,?,?,?,?)",
                                 (f"dm-1-{uid}", "dm", "", 0, ME, self._stamp()))
            for m in (ME, uid):
                self.db.execute("INSERT INTO members (channel_id, user_id, last_read_id) VALUES (?,?,0)", (cid, m))
        return RedirectResponse(f"/c/{cid}", status_code=303)

    async def set_status(self, request: Request) -> Response:
        form = await request.form()
        emoji = str(form.get("status_emoji", "") or "").strip()
        text = " ".join(str(form.get("status_text", "") or "").split())
        if len(emoji) > 8 or len(text) > 100:
            return self._refusal(Refused("A status is at most 100 characters, its emoji at most 8.", 400))
        self.db.execute("UPDATE users SET status_emoji = ?, status_text = ? WHERE id = ?", (emoji, text, ME))
        return RedirectResponse(f"/people/{ME}", status_code=303)

    async def search(self, request: Request) -> Response:
        q = self.query(request)["q"] or ""
        rows: list[dict[str, Any]] = []
        if q:
            rows = self.db.all(
                "SELECT m.* FROM messages m JOIN channels c ON c.id = m.channel_id WHERE m.body LIKE ? AND (c.kind = 'public' OR EXISTS "
                "(SELECT 1 FROM members x WHERE x.channel_id = c.id AND x.user_id = ?)) ORDER BY m.id DESC LIMIT 50", (f"%{q}%", ME))
        users = self._users()
        chans = {c["id"]: c for c in self.db.all("SELECT * FROM channels")}
        items = "".join(f'<div class="hit"><a class="muted" href="/m/{m["parent_id"] or m["id"]}" data-hit="{m["id"]}">in '
                        f'{esc(self._label(chans[m["channel_id"]]))}</a>'
                        f'{self._message_html(m, users, [], replies=None, writable=False)}</div>' for m in rows)
        summary = f'<p class="muted" role="status">{len(rows)} results{" (showing the newest 50)" if len(rows) == 50 else ""}</p>' if q else ""
        body = ('<header class="chan-head"><h1>Search</h1></header><form method="get" action="/search" role="search" class="row">'
                f'<input type="search" name="q" value="{esc(q)}" aria-label="Search messages" data-search-page>'
                f'<button type="submit">Search</button></form>{summary}<div class="messages">{items}</div>')
        return self._page("Search", body)


APP = ChatApp
