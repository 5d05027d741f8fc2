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
from cua.tasks.apps.chat import locale
from cua.tasks.apps.chat.seed import EMOJI, seed_chat
from cua.variant import LAYOUTS, LOCALES, VariantAxes

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
ARCHIVE_NOTE = "Nobody will be able to post in it, and it leaves everyone's sidebar. Its messages stay searchable."
CHANNEL_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{1,79}$")


class Refused(Exception):
    """A request the workspace's rules do not allow: shown to the member as a page, status `status`.
    `message` is the English template (`{name}` fields filled from `fields`), so the page
    translates the sentence before filling it; the exception's text is the English one."""

    def __init__(self, message: str, status: int = 403, /, **fields: str) -> None:
        super().__init__(message.format(**fields))
        self.message, self.status, self.fields = message, status, fields


class ChatApp(WebApp):
    name = "chat"
    title = "Huddle"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
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

    def t(self, text: str) -> str:
        """`text` in the variant's locale: the messenger's own catalogue, then the shared one."""
        if self.variant.locale == "de-DE" and text in locale.DE:
            return locale.DE[text]
        return super().t(text)

    def _when(self, stamp: str) -> str:
        return locale.stamp(stamp, self.variant.locale)

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
            raise Refused("A message can be at most {n} characters long.", 400, n=str(MAX_BODY))
        return body

    def _stamp(self) -> str:
        return self.now().strftime("%Y-%m-%d %H:%M")

    # --- page furniture ---

    def _label(self, ch: dict[str, Any]) -> str:
        if ch["kind"] == "dm":
            other = self.db.one("SELECT u.name FROM members m JOIN users u ON u.id = m.user_id WHERE m.channel_id = ? "
                                "AND m.user_id != ?", (ch["id"], ME))
            return other["name"] if other else self.t("Direct message")
        return f'{"🔒 " if ch["kind"] == "private" else "#"}{ch["name"]}'

    def _sidebar(self, current: int | None) -> str:
        t_ = self.t
        rows = self.db.all(
            "SELECT c.*, (SELECT COUNT(*) FROM messages x WHERE x.channel_id = c.id AND x.parent_id IS NULL AND x.id > m.last_read_id "
            "AND x.user_id != ?) AS unread, (SELECT COUNT(*) FROM messages x WHERE x.channel_id = c.id AND x.id > m.last_read_id "
            "AND x.user_id != ? AND x.body LIKE '%@sam%') AS mentions FROM channels c JOIN members m ON m.channel_id = c.id "
            "AND m.user_id = ? WHERE c.archived = 0 ORDER BY c.kind = 'dm', c.name", (ME, ME, ME))

        def item(c: dict[str, Any]) -> str:
            badge = (f'<span class="badge mention" data-mentions="{c["mentions"]}" aria-label="{t_("{n} mentions").format(n=c["mentions"])}">'
                     f'@{c["mentions"]}</span>' if c["mentions"] else "")
            unread = (f'<span class="badge" data-unread="{c["unread"]}" aria-label="{t_("{n} unread").format(n=c["unread"])}">{c["unread"]}</span>'
                      if c["unread"] else "")
            cur = ' aria-current="page"' if c["id"] == current else ""
            cls = "chan unread" if c["unread"] else "chan"
            return (f'<li><a class="{cls}" href="/c/{c["id"]}" data-channel="{esc(c["name"])}" data-channel-id="{c["id"]}"{cur}>'
                    f'<span class="chan-name">{esc(self._label(c))}</span>{unread}{badge}</a></li>')
        chans = "".join(item(c) for c in rows if c["kind"] != "dm")
        dms = "".join(item(c) for c in rows if c["kind"] == "dm")
        return (f'<nav class="sidebar" aria-label="{t_("Workspace")}" data-region="sidebar"><div class="ws-name">Northwind Labs</div>'
                '<form method="get" action="/search" role="search" class="side-search"><input type="search" name="q" '
                f'aria-label="{t_("Search messages")}" placeholder="{t_("Search")}" data-search></form>'
                f'<h2 class="side-h" id="side-ch">{t_("Channels")}</h2><ul aria-labelledby="side-ch" data-list="channels">{chans}</ul>'
                f'<p class="side-links"><a href="/channels" data-nav="channels">{t_("Browse channels")}</a> · '
                f'<a href="/channels/new" data-nav="new-channel">{t_("New channel")}</a></p>'
                f'<h2 class="side-h" id="side-dm">{t_("Direct messages")}</h2><ul aria-labelledby="side-dm" data-list="dms">{dms}</ul>'
                f'<p class="side-links"><a href="/people" data-nav="people">{t_("People")}</a></p></nav>')

    def _page(self, title: str, body: str, *, current: int | None = None, status: int = 200) -> HTMLResponse:
        resp = html_page(self, title, f'<div class="shell">{self._sidebar(current)}<section class="pane">{body}</section></div>')
        resp.status_code = status
        return resp

    def _refusal(self, exc: Refused) -> HTMLResponse:
        text = self.t(exc.message).format(**exc.fields)
        return self._page(self.t("Not allowed" if exc.status == 403 else "Cannot do that"),
                          f'<div class="error" role="alert" data-error>{esc(text)}</div>', status=exc.status)

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
        t_ = self.t
        edited = f' <span class="edited" data-edited>{t_("(edited)")}</span>' if m["edited_at"] else ""
        pinned = f' <span class="pin-mark" data-pinned>{t_("📌 Pinned")}</span>' if m["pinned"] else ""
        chips = "".join(
            f'<form method="post" action="/m/{mid}/react" class="inline"><input type="hidden" name="emoji" value="{esc(r["emoji"])}">'
            f'<button type="submit" class="chip" data-reaction="{esc(r["emoji"])}" aria-pressed="{"true" if r["mine"] else "false"}" '
            f'aria-label="{esc(t_("{emoji} {n}, {verb} your reaction").format(emoji=r["emoji"], n=r["n"], verb=t_("remove" if r["mine"] else "add")))}">'
            f'{esc(r["emoji"])} {r["n"]}</button></form>'
            for r in reactions)
        actions = ""
        if writable:
            picker = "".join(f'<button type="submit" name="emoji" value="{e}" data-react="{e}" '
                             f'aria-label="{esc(t_("React {emoji}").format(emoji=e))}">{e}</button>' for e in EMOJI)
            actions = (f'<details class="more"><summary aria-label="{esc(t_("React to message {id}").format(id=mid))}" '
                       f'data-action="react-menu">☺</summary>'
                       f'<form method="post" action="/m/{mid}/react" class="picker">{picker}</form></details>'
                       f'<form method="post" action="/m/{mid}/pin" class="inline"><button type="submit" data-action="pin" '
                       f'aria-pressed="{"true" if m["pinned"] else "false"}">{t_("Unpin" if m["pinned"] else "Pin")}</button></form>')
            if m["user_id"] == ME:
                actions += (f'<a class="act" href="/m/{mid}/edit" data-action="edit">{t_("Edit")}</a>'
                            f'<a class="act danger" href="/m/{mid}/delete" data-action="delete">{t_("Delete")}</a>')
        thread = ""
        if replies is not None:
            label = (t_("1 reply") if replies == 1 else t_("{n} replies").format(n=replies)) if replies else t_("Reply")
            thread = f'<a class="act" href="/m/{mid}" data-action="thread" data-replies="{replies}">{label}</a>'
        return (f'<article class="msg" data-message-id="{mid}" data-author="{esc(u["handle"])}" aria-labelledby="mh-{mid}">'
                f'<div class="avatar" aria-hidden="true">{esc(u["name"][:1])}</div><div class="msg-main">'
                f'<header class="msg-head" id="mh-{mid}"><a class="author" href="/people/{u["id"]}">{esc(u["name"])}</a> '
                f'<time datetime="{esc(m["created_at"])}">{esc(self._when(m["created_at"]))}</time>{edited}{pinned}</header>'
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
        t_ = self.t
        older = (f'<p class="older"><a href="/c/{cid}?before={rows[0]["id"]}" data-action="older">{t_("Older messages")}</a></p>'
                 if rows and self.db.one("SELECT 1 FROM messages WHERE channel_id = ? AND parent_id IS NULL AND id < ?",
                                         (cid, rows[0]["id"])) else "")
        n_members = self.db.scalar("SELECT COUNT(*) FROM members WHERE channel_id = ?", (cid,))
        if ch["archived"]:
            composer = f'<p class="notice" role="status" data-archived>{t_("This channel is archived. Nobody can post in it.")}</p>'
        elif not member:
            composer = (f'<form method="post" action="/c/{cid}/join" class="joinbar">'
                        f'<span>{esc(t_("You are viewing {channel}.").format(channel="#" + ch["name"]))}</span>'
                        f'<button type="submit" class="primary" data-action="join">{t_("Join channel")}</button></form>')
        else:
            to = esc(t_("Message {channel}").format(channel=self._label(ch)))
            composer = (f'<form method="post" action="/c/{cid}/post" class="composer" data-composer>'
                        f'<label class="sr" for="composer-body">{to}</label>'
                        f'<textarea id="composer-body" name="body" rows="2" maxlength="{MAX_BODY}" required '
                        f'placeholder="{to}"></textarea>'
                        f'<button type="submit" class="primary" data-action="send">{t_("Send")}</button></form>')
        links = ""
        if ch["kind"] != "dm":
            links = (f'<a href="/c/{cid}/pins" data-nav="pins">{t_("Pinned")}</a>'
                     f'<a href="/c/{cid}/settings" data-nav="settings">{t_("Settings")}</a>')
        head = (f'<header class="chan-head"><div><h1 data-channel-title="{esc(ch["name"])}">{esc(self._label(ch))}</h1>'
                f'<p class="topic" data-topic>{esc(ch["topic"])}</p></div><div class="chan-links">'
                f'<span class="muted" data-member-count="{n_members}">{t_("{n} members").format(n=n_members)}</span>{links}</div></header>')
        empty = "" if rows else f'<p class="muted">{t_("No messages yet.")}</p>'
        body = f'{head}<div class="messages" role="feed" aria-label="{t_("Messages")}">{older}{empty}{msgs}</div>{composer}'
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
        t_ = self.t
        items = "".join(self._message_html(m, users, [], replies=None, writable=False) for m in rows) or \
            f'<p class="muted">{t_("Nothing is pinned yet.")}</p>'
        body = (f'<header class="chan-head"><h1>{esc(t_("Pinned in {channel}").format(channel=self._label(ch)))}</h1>'
                f'<a href="/c/{cid}">{t_("Back to channel")}</a></header>'
                f'<div class="messages" data-pins>{items}</div>')
        return self._page(t_("Pinned"), body, current=cid)

    # --- settings ---

    async def settings(self, request: Request) -> Response:
        return await self._guard(request, self._settings)

    async def _settings(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        ch = self._readable(cid)
        members = self.db.all("SELECT u.* FROM members m JOIN users u ON u.id = m.user_id WHERE m.channel_id = ? ORDER BY u.name", (cid,))
        editable = self._is_member(cid) and not ch["archived"] and ch["kind"] != "dm"
        error = self.query(request)["error"] or ""
        t_ = self.t
        alert = f'<div class="error" role="alert" data-error>{esc(t_(error))}</div>' if error else ""

        def member_row(u: dict[str, Any]) -> str:
            remove = (f'<form method="post" action="/c/{cid}/members/{u["id"]}/remove" class="inline"><button type="submit" '
                      f'data-action="remove-member" data-user="{esc(u["handle"])}" aria-label="{esc(t_("Remove {name}").format(name=u["name"]))}">'
                      f'{t_("Remove")}</button></form>'
                      if editable and u["id"] != ME else "")
            return f'<li data-member="{esc(u["handle"])}"><a href="/people/{u["id"]}">{esc(u["name"])}</a> <span class="muted">@{esc(u["handle"])}</span>{remove}</li>'
        rows = "".join(member_row(u) for u in members)
        ids = {u["id"] for u in members}
        addable = "".join(f'<option value="{u["id"]}">{esc(u["name"])} (@{esc(u["handle"])})</option>'
                          for u in self.db.all("SELECT * FROM users ORDER BY name") if u["id"] not in ids)
        controls = ""
        if editable:
            controls = (f'<form method="post" action="/c/{cid}/topic" class="card" data-form="topic"><label for="topic">{t_("Topic")}</label>'
                        f'<input id="topic" name="topic" maxlength="250" value="{esc(ch["topic"])}">'
                        f'<button type="submit" class="primary" data-action="save-topic">{t_("Save topic")}</button></form>'
                        f'<form method="post" action="/c/{cid}/members" class="card" data-form="add-member"><label for="add-user">{t_("Add a member")}</label>'
                        f'<select id="add-user" name="user_id"><option value="">{t_("Choose a person…")}</option>{addable}</select>'
                        f'<button type="submit" data-action="add-member">{t_("Add")}</button></form>'
                        f'<div class="card danger-zone"><form method="post" action="/c/{cid}/leave" class="inline">'
                        f'<button type="submit" data-action="leave">{t_("Leave channel")}</button></form>'
                        f'<a class="button danger" href="/c/{cid}/archive" data-action="archive">{t_("Archive channel")}</a></div>')
        status = f'<p class="notice" data-archived>{t_("This channel is archived.")}</p>' if ch["archived"] else ""
        body = (f'<header class="chan-head"><h1>{esc(t_("Settings of {channel}").format(channel=self._label(ch)))}</h1>'
                f'<a href="/c/{cid}">{t_("Back to channel")}</a></header>'
                f'{alert}{status}{controls}<section class="card"><h2>{t_("Members ({n})").format(n=len(members))}</h2>'
                f'<ul class="member-list">{rows}</ul></section>')
        return self._page(t_("Channel settings"), body, current=cid)

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
            t_ = self.t
            body = (f'<div class="card confirm" role="alertdialog" aria-labelledby="arch-h" aria-describedby="arch-d">'
                    f'<h1 id="arch-h">{esc(t_("Archive {channel}?").format(channel=self._label(ch)))}</h1><p id="arch-d">'
                    f'{esc(t_(ARCHIVE_NOTE))}</p>'
                    f'<form method="post" action="/c/{cid}/archive" class="row"><button type="submit" class="danger" '
                    f'data-action="confirm-archive">{t_("Archive")}</button><a class="button" href="/c/{cid}/settings" '
                    f'data-action="cancel">{t_("Cancel")}</a></form></div>')
            return self._page(t_("Archive channel"), body, current=cid)
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
        t_ = self.t
        composer = (f'<form method="post" action="/m/{m["id"]}/reply" class="composer" data-composer="reply">'
                    f'<label class="sr" for="reply-body">{t_("Reply in thread")}</label>'
                    f'<textarea id="reply-body" name="body" rows="2" maxlength="{MAX_BODY}" required placeholder="{t_("Reply…")}"></textarea>'
                    f'<button type="submit" class="primary" data-action="send-reply">{t_("Reply")}</button></form>') if writable else ""
        body = (f'<header class="chan-head"><h1>{esc(t_("Thread in {channel}").format(channel=self._label(ch)))}</h1>'
                f'<a href="/c/{ch["id"]}" data-nav="back">{t_("Back to channel")}</a></header>'
                f'<div class="messages thread" data-thread="{m["id"]}">{root}<h2 class="replies-h">{t_("{n} replies").format(n=len(replies))}</h2>'
                f'{items}</div>{composer}')
        return self._page(t_("Thread"), body, current=ch["id"])

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
        t_ = self.t
        form = (f'<form method="post" action="/m/{m["id"]}/edit" class="card composer" data-form="edit">'
                f'<label for="edit-body">{t_("Edit message")}</label>'
                f'<textarea id="edit-body" name="body" rows="3" maxlength="{MAX_BODY}" required>{esc(m["body"])}</textarea>'
                f'<div class="row"><button type="submit" class="primary" data-action="save-edit">{t_("Save changes")}</button>'
                f'<a class="button" href="{back}" data-action="cancel">{t_("Cancel")}</a></div></form>')
        return self._page(t_("Edit message"), f'<header class="chan-head"><h1>{t_("Edit message")}</h1></header>{form}', current=m["channel_id"])

    async def delete(self, request: Request) -> Response:
        return await self._guard(request, self._delete)

    async def _delete(self, request: Request) -> Response:
        m = self._own(request.path_params["mid"])
        back = f"/m/{m['parent_id']}" if m["parent_id"] else f"/c/{m['channel_id']}"
        if request.method == "POST":
            self.db.execute("DELETE FROM messages WHERE id = ?", (m["id"],))
            return RedirectResponse(back, status_code=303)
        t_ = self.t
        body = (f'<div class="card confirm" role="alertdialog" aria-labelledby="del-h" aria-describedby="del-d">'
                f'<h1 id="del-h">{t_("Delete message?")}</h1><blockquote id="del-d">{esc(m["body"])}</blockquote>'
                f'<form method="post" action="/m/{m["id"]}/delete" class="row"><button type="submit" class="danger" '
                f'data-action="confirm-delete">{t_("Delete")}</button><a class="button" href="{back}" data-action="cancel">{t_("Cancel")}</a></form></div>')
        return self._page(t_("Delete message"), body, current=m["channel_id"])

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
            raise Refused("Choose one of the workspace's reactions: {emoji}.", 400, emoji=" ".join(EMOJI))
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
        t_ = self.t
        items = "".join(
            f'<li class="card" data-channel-row="{esc(c["name"])}"><a href="/c/{c["id"]}">{esc(self._label(c))}</a>'
            f'{" <span class=tag data-tag=archived>" + t_("archived") + "</span>" if c["archived"] else ""}'
            f'{" <span class=tag data-tag=joined>" + t_("joined") + "</span>" if c["mine"] else ""}'
            f'<p class="muted">{esc(t_("{topic} · {n} members").format(topic=c["topic"], n=c["n"]))}</p></li>' for c in rows)
        body = (f'<header class="chan-head"><h1>{t_("Channels")}</h1><a class="button primary" href="/channels/new" '
                f'data-action="new-channel">{t_("New channel")}</a></header><ul class="cards" data-list="browse">{items}</ul>')
        return self._page(t_("Channels"), body)

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
                error = self.t("Channel names are 2-80 lowercase letters, digits, dashes or underscores, starting with a letter or digit.")
            elif self.db.one("SELECT 1 FROM channels WHERE name = ?", (name,)):
                error = self.t("A channel named {name} already exists.").format(name=name)
            elif len(values["topic"]) > 250:
                error = self.t("A topic can be at most 250 characters long.")
            elif not values["members"] <= known:
                error = self.t("Choose members from the directory.")
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
        t_ = self.t
        body = (f'<header class="chan-head"><h1>{t_("New channel")}</h1></header>{alert}'
                '<form method="post" action="/channels/new" class="card" data-form="new-channel">'
                f'<label for="ch-name">{t_("Name")}</label><input id="ch-name" name="name" required maxlength="80" value="{esc(values["name"])}"'
                f'{" aria-invalid=true" if error else ""}>'
                f'<label for="ch-topic">{t_("Topic (optional)")}</label><input id="ch-topic" name="topic" maxlength="250" value="{esc(values["topic"])}">'
                f'<label class="check"><input type="checkbox" name="private" id="ch-private"{" checked" if values["private"] else ""}> '
                f'{t_("Make private: only invited members can see it")}</label>'
                f'<fieldset><legend>{t_("Members")}</legend><div class="member-grid">{boxes}</div></fieldset>'
                f'<button type="submit" class="primary" data-action="create-channel">{t_("Create channel")}</button></form>')
        return self._page(t_("New channel"), body, status=400 if error else 200)

    async def people(self, request: Request) -> Response:
        q = self.query(request)["q"] or ""
        like = f"%{q}%"
        rows = self.db.all("SELECT * FROM users WHERE name LIKE ? OR handle LIKE ? OR title LIKE ? ORDER BY name", (like, like, like))
        t_ = self.t
        items = "".join(
            f'<li class="card person" data-person="{esc(u["handle"])}"><span class="presence {esc(u["presence"])}" '
            f'aria-label="{esc(t_(u["presence"]))}" data-presence="{esc(u["presence"])}"></span><a href="/people/{u["id"]}">{esc(u["name"])}</a> <span class="muted">@{esc(u["handle"])} · '
            f'{esc(u["title"])}</span> <span data-status>{esc(u["status_emoji"])} {esc(u["status_text"])}</span></li>' for u in rows)
        body = (f'<header class="chan-head"><h1>{t_("People")}</h1></header><form method="get" action="/people" role="search" class="row">'
                f'<input type="search" name="q" value="{esc(q)}" aria-label="{t_("Search people")}" data-people-search>'
                f'<button type="submit">{t_("Search")}</button></form><ul class="cards" data-list="people">{items}</ul>')
        return self._page(t_("People"), body)

    async def profile(self, request: Request) -> Response:
        u = self.db.one("SELECT * FROM users WHERE id = ?", (request.path_params["uid"],))
        if u is None:
            return self._refusal(Refused("No such person.", 404))
        t_ = self.t
        if u["id"] == ME:
            action = ('<form method="post" action="/me/status" class="card" data-form="status">'
                      f'<label for="st-emoji">{t_("Status emoji")}</label><input id="st-emoji" name="status_emoji" maxlength="8" value="{esc(u["status_emoji"])}">'
                      f'<label for="st-text">{t_("Status")}</label><input id="st-text" name="status_text" maxlength="100" value="{esc(u["status_text"])}">'
                      f'<button type="submit" class="primary" data-action="save-status">{t_("Save status")}</button></form>')
        else:
            action = (f'<form method="post" action="/people/{u["id"]}/dm"><button type="submit" class="primary" '
                      f'data-action="message" aria-label="{esc(t_("Message {name}").format(name=u["name"]))}">{t_("Message")}</button></form>')
        body = (f'<div class="card profile" data-profile="{esc(u["handle"])}"><div class="avatar big" aria-hidden="true">{esc(u["name"][:1])}</div>'
                f'<h1>{esc(u["name"])}</h1><p class="muted">@{esc(u["handle"])} · {esc(u["title"])}</p>'
                f'<dl><dt>{t_("Status")}</dt><dd data-status>{esc(u["status_emoji"])} {esc(u["status_text"]) or "—"}</dd>'
                f'<dt>{t_("Presence")}</dt><dd data-presence>{esc(t_(u["presence"]))}</dd><dt>{t_("Local time zone")}</dt><dd>{esc(u["timezone"])}</dd>'
                f'<dt>{t_("Language")}</dt><dd>{esc(u["locale"])}</dd></dl></div>{action}')
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
        t_ = self.t
        items = "".join(f'<div class="hit"><a class="muted" href="/m/{m["parent_id"] or m["id"]}" data-hit="{m["id"]}">'
                        f'{esc(t_("in {channel}").format(channel=self._label(chans[m["channel_id"]])))}</a>'
                        f'{self._message_html(m, users, [], replies=None, writable=False)}</div>' for m in rows)
        summary = (f'<p class="muted" role="status" data-count="{len(rows)}">{t_("{n} results").format(n=len(rows))}'
                   f'{t_(" (showing the newest 50)") if len(rows) == 50 else ""}</p>' if q else "")
        body = (f'<header class="chan-head"><h1>{t_("Search")}</h1></header><form method="get" action="/search" role="search" class="row">'
                f'<input type="search" name="q" value="{esc(q)}" aria-label="{t_("Search messages")}" data-search-page>'
                f'<button type="submit">{t_("Search")}</button></form>{summary}<div class="messages">{items}</div>')
        return self._page(t_("Search"), body)


APP = ChatApp
