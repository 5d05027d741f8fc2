"""Social: a social feed (Murmur), signed in as Inês Duarte (`accounts.id` 1, `@ines_duarte`).

Pages: `/` (home: the composer and the posts and reposts of the accounts followed),
`/explore` (trending hashtags and popular posts), `/tags/{tag}`, `/search?q=&type=`
(people, posts, hashtags), `/p/{id}` (a post in its thread: ancestors, replies, the reply
form; like, repost, quote, bookmark, delete one's own behind a confirmation; a poll's vote),
`/p/{id}/likes` (who liked it), `/compose?quote={id}`, `/u/{handle}` (a profile: bio,
location, link, counts; follow, mute, block behind a confirmation, add to a list) with
`/following` (for one's own, a filter by last activity) and `/followers`, `/lists`,
`/lists/{id}`, `/notifications` (likes, replies, follows, mentions, reposts; mark read),
`/messages` and `/messages/{handle}` (direct messages), `/bookmarks`, `/settings` (who can
reply, sensitive content, muted hashtags and accounts, blocked accounts, the backup code)
and `/settings/profile`.

The rules the server keeps whatever a page sends, each refused with a reason (400, 403 or
404) and no change: a post holds at most 280 characters, and text, an image or a poll; a
deleted post takes no reply, like, repost, quote or vote; a poll takes one vote per account,
never from its author, only while open; only one's own posts are deleted; a blocked
account's posts vanish from every feed, search and thread, and it can be neither followed
nor messaged until unblocked; a list's name is unique. Every count (likes, reposts,
replies, followers, votes) is computed from the rows. A deleted post stays as a tombstone
(`posts.deleted_at`), so what was posted stays in the history a judge reads. A new post is
`post` and a direct message `send` in the activity log.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote as urlquote

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule
from cua.tasks.apps.activity import added_row
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.i18n import format_number
from cua.tasks.apps.social.icons import icon
from cua.tasks.apps.social.seed import ME, decay, hashtags, seed_social
from cua.tasks.apps.social.text import joined, moment, relative, translate
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE accounts (id INTEGER PRIMARY KEY, handle TEXT NOT NULL UNIQUE, name TEXT NOT NULL, bio TEXT NOT NULL,
                       location TEXT NOT NULL, link TEXT NOT NULL, locale TEXT NOT NULL, joined_at TEXT NOT NULL,
                       verified INTEGER NOT NULL DEFAULT 0);
CREATE TABLE follows (id INTEGER PRIMARY KEY, follower_id INTEGER NOT NULL REFERENCES accounts(id),
                      followee_id INTEGER NOT NULL REFERENCES accounts(id), created_at TEXT NOT NULL,
                      UNIQUE (follower_id, followee_id));
CREATE TABLE posts (id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL REFERENCES accounts(id), body TEXT NOT NULL,
                    created_at TEXT NOT NULL, reply_to INTEGER REFERENCES posts(id), quote_of INTEGER REFERENCES posts(id),
                    image_alt TEXT, sensitive INTEGER NOT NULL DEFAULT 0, deleted_at TEXT);
CREATE TABLE polls (id INTEGER PRIMARY KEY, post_id INTEGER NOT NULL UNIQUE REFERENCES posts(id), closes_at TEXT NOT NULL);
CREATE TABLE poll_options (id INTEGER PRIMARY KEY, poll_id INTEGER NOT NULL REFERENCES polls(id), position INTEGER NOT NULL,
                           label TEXT NOT NULL);
CREATE TABLE poll_votes (id INTEGER PRIMARY KEY, poll_id INTEGER NOT NULL REFERENCES polls(id),
                         option_id INTEGER NOT NULL REFERENCES poll_options(id), account_id INTEGER NOT NULL REFERENCES accounts(id),
                         created_at TEXT NOT NULL, UNIQUE (poll_id, account_id));
CREATE TABLE likes (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id),
                    post_id INTEGER NOT NULL REFERENCES posts(id), created_at TEXT NOT NULL, UNIQUE (account_id, post_id));
CREATE TABLE reposts (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id),
                      post_id INTEGER NOT NULL REFERENCES posts(id), created_at TEXT NOT NULL, UNIQUE (account_id, post_id));
CREATE TABLE bookmarks (id INTEGER PRIMARY KEY, post_id INTEGER NOT NULL UNIQUE REFERENCES posts(id), created_at TEXT NOT NULL);
CREATE TABLE mutes (id INTEGER PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('account', 'hashtag')), target TEXT NOT NULL,
                    created_at TEXT NOT NULL, UNIQUE (kind, target));
CREATE TABLE blocks (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL UNIQUE REFERENCES accounts(id), created_at TEXT NOT NULL);
CREATE TABLE lists (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, description TEXT NOT NULL, private INTEGER NOT NULL DEFAULT 0,
                    created_at TEXT NOT NULL);
CREATE TABLE list_members (id INTEGER PRIMARY KEY, list_id INTEGER NOT NULL REFERENCES lists(id),
                           account_id INTEGER NOT NULL REFERENCES accounts(id), added_at TEXT NOT NULL, UNIQUE (list_id, account_id));
CREATE TABLE notifications (id INTEGER PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('like', 'reply', 'follow', 'mention', 'repost')),
                            actor_id INTEGER NOT NULL REFERENCES accounts(id), post_id INTEGER REFERENCES posts(id),
                            created_at TEXT NOT NULL, read INTEGER NOT NULL DEFAULT 0);
CREATE TABLE messages (id INTEGER PRIMARY KEY, peer_id INTEGER NOT NULL REFERENCES accounts(id), from_me INTEGER NOT NULL,
                       body TEXT NOT NULL, created_at TEXT NOT NULL, read INTEGER NOT NULL DEFAULT 0);
CREATE TABLE settings (id INTEGER PRIMARY KEY CHECK (id = 1), reply_policy TEXT NOT NULL
                       CHECK (reply_policy IN ('everyone', 'following', 'mentioned')), show_sensitive INTEGER NOT NULL,
                       backup_code TEXT NOT NULL);
"""

MAX_POST = 280
MAX_DM = 1000
PAGE_SIZE = 30
INACTIVE_DAYS = 30
REPLY_POLICIES = {"everyone": "Everyone", "following": "Accounts you follow", "mentioned": "Only accounts you mention"}
POLL_DAYS = (1, 3, 7)
NAV = [("Home", "/"), ("Explore", "/explore"), ("Notifications", "/notifications"), ("Messages", "/messages"),
       ("Lists", "/lists"), ("Bookmarks", "/bookmarks"), ("Profile", "/u/ines_duarte"), ("Settings", "/settings")]
HANDLE_RE = re.compile(r"^[a-z0-9_]{1,20}$")
TOKEN_RE = re.compile(r"(#\w+|@[A-Za-z0-9_]{1,20})")


class Refused(Exception):
    """Input the app's rules refuse: shown with the reason, nothing changes."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def _form_text(form: Any, key: str) -> str:
    return str(form.get(key, "") or "").strip()


class SocialApp(WebApp):
    name = "social"
    title = "Murmur"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
    #: who did what is the signed-in account; which poll a vote is in follows from its option
    assigned = {"posts": ("author_id",), "likes": ("account_id",), "reposts": ("account_id",), "follows": ("follower_id",),
                "poll_votes": ("account_id", "poll_id"), "messages": ("from_me",)}
    query_params = {"q": QueryRule(strip=True), "type": QueryRule(strip=True, case="lower", default="posts"),
                    "page": QueryRule(strip=True, default="1"), "activity": QueryRule(strip=True, case="lower", default="all"),
                    "filter": QueryRule(strip=True, case="lower", default="all"), "tab": QueryRule(strip=True, case="lower", default="posts"),
                    "quote": QueryRule(strip=True)}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_social(db, rng, self.now())

    def t(self, text: str) -> str:
        return translate(self.variant.locale, text)

    def irreversible(self, change: Change) -> str | None:
        """A published post has been seen (deleting it leaves a tombstone); a direct message is delivered."""
        if (row := added_row(change, "posts")) is not None and row.get("author_id") == ME:
            return "post"
        if (row := added_row(change, "messages")) is not None and row.get("from_me") == 1:
            return "send"
        return None

    def routes(self) -> list[BaseRoute]:
        g = self._guarded
        post = ["POST"]
        return [
            Route("/", g(self.home)),
            Route("/explore", g(self.explore)),
            Route("/tags/{tag}", g(self.tag)),
            Route("/tags/{tag}/mute", g(self.mute_tag), methods=post),
            Route("/search", g(self.search)),
            Route("/posts", g(self.create_post), methods=post),
            Route("/compose", g(self.compose)),
            Route("/p/{pid:int}", g(self.thread)),
            Route("/p/{pid:int}/likes", g(self.likers)),
            Route("/p/{pid:int}/like", g(self.like), methods=post),
            Route("/p/{pid:int}/repost", g(self.repost), methods=post),
            Route("/p/{pid:int}/bookmark", g(self.bookmark), methods=post),
            Route("/p/{pid:int}/vote", g(self.vote), methods=post),
            Route("/p/{pid:int}/delete", g(self.delete), methods=["GET", "POST"]),
            Route("/u/{handle}", g(self.profile)),
            Route("/u/{handle}/following", g(self.following)),
            Route("/u/{handle}/followers", g(self.followers)),
            Route("/u/{handle}/follow", g(self.follow), methods=post),
            Route("/u/{handle}/mute", g(self.mute_account), methods=post),
            Route("/u/{handle}/block", g(self.block), methods=["GET", "POST"]),
            Route("/lists", g(self.lists), methods=["GET", "POST"]),
            Route("/lists/{lid:int}", g(self.show_list)),
            Route("/lists/{lid:int}/members", g(self.list_members), methods=post),
            Route("/notifications", g(self.notifications)),
            Route("/notifications/read", g(self.read_notifications), methods=post),
            Route("/messages", g(self.inbox), methods=["GET", "POST"]),
            Route("/messages/{handle}", g(self.conversation), methods=["GET", "POST"]),
            Route("/bookmarks", g(self.bookmarks)),
            Route("/settings", g(self.settings), methods=["GET", "POST"]),
            Route("/settings/mutes", g(self.settings_mutes), methods=post),
            Route("/settings/profile", g(self.edit_profile), methods=["GET", "POST"]),
        ]

    # --- furniture ---

    def _guarded(self, handler: Any) -> Any:
        async def run(request: Request) -> Response:
            try:
                result: Response = await handler(request)
                return result
            except Refused as exc:
                return self._page(self.t("Cannot do that"),
                                  f'<div class="alert" role="alert" data-error>{esc(exc.message)}</div>'
                                  f'<p><a class="button" href="/" data-action="back">{self.t("Back to Home")}</a></p>', status=exc.status)
        return run

    def _page(self, title: str, body: str, *, status: int = 200, aside: str = "") -> HTMLResponse:
        unread = self.db.scalar("SELECT COUNT(*) FROM notifications WHERE read = 0")
        unread_dm = self.db.scalar("SELECT COUNT(*) FROM messages WHERE from_me = 0 AND read = 0")
        nav = []
        for label, href in NAV:
            n = unread if href == "/notifications" else unread_dm if href == "/messages" else 0
            nav.append((f"{self.t(label)} ({self._num(n)})" if n else self.t(label), href))
        side = f'<aside class="rail" aria-label="{self.t("Trends")}">{aside}</aside>' if aside else ""
        resp = html_page(self, title, f'<div class="shell"><div class="column"><h1 class="page-title">{esc(title)}</h1>{body}</div>{side}</div>',
                         nav=nav, scripts=["/static/app/social.js"])
        resp.status_code = status
        return resp

    def _num(self, n: int) -> str:
        return format_number(n, self.variant.locale)

    def _stamp(self) -> str:
        return self.now().strftime("%Y-%m-%d %H:%M")

    def _when(self, stamp: str) -> str:
        at = dt.datetime.strptime(stamp, "%Y-%m-%d %H:%M")
        return (f'<time datetime="{at.isoformat()}" title="{esc(stamp)}">{esc(relative(at, self.now(), self.variant.locale))}</time>')

    def _account(self, handle: str) -> dict[str, Any]:
        a = self.db.one("SELECT * FROM accounts WHERE handle = ?", (handle.lstrip("@").lower(),))
        if a is None:
            raise Refused(self.t("No such account") + f": @{handle.lstrip('@')}", 404)
        return a

    def _blocked(self) -> set[int]:
        return {r["account_id"] for r in self.db.all("SELECT account_id FROM blocks")}

    def _muted(self) -> tuple[set[str], set[str]]:
        rows = self.db.all("SELECT kind, target FROM mutes")
        return ({r["target"] for r in rows if r["kind"] == "account"}, {r["target"] for r in rows if r["kind"] == "hashtag"})

    def _follows(self, a: int, b: int) -> bool:
        return bool(self.db.scalar("SELECT COUNT(*) FROM follows WHERE follower_id = ? AND followee_id = ?", (a, b)))

    _POSTS = ("SELECT p.*, a.handle, a.name, a.verified, "
              "(SELECT COUNT(*) FROM likes l WHERE l.post_id = p.id) AS n_likes, "
              "(SELECT COUNT(*) FROM reposts r WHERE r.post_id = p.id) AS n_reposts, "
              "(SELECT COUNT(*) FROM posts c WHERE c.reply_to = p.id AND c.deleted_at IS NULL) AS n_replies, "
              "(SELECT COUNT(*) FROM likes l WHERE l.post_id = p.id AND l.account_id = 1) AS liked, "
              "(SELECT COUNT(*) FROM reposts r WHERE r.post_id = p.id AND r.account_id = 1) AS reposted, "
              "(SELECT COUNT(*) FROM bookmarks b WHERE b.post_id = p.id) AS bookmarked "
              "FROM posts p JOIN accounts a ON a.id = p.author_id")

    def _post(self, pid: int) -> dict[str, Any]:
        p = self.db.one(self._POSTS + " WHERE p.id = ?", (pid,))
        if p is None:
            raise Refused(self.t("No such post."), 404)
        return p

    def _live(self, pid: int, what: str) -> dict[str, Any]:
        p = self._post(pid)
        if p["deleted_at"]:
            raise Refused(self.t("This post was deleted") + f": {self.t(what)}")
        if p["author_id"] in self._blocked():
            raise Refused(self.t("You blocked this account. Unblock it first."), 403)
        return p

    def _visible(self, posts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Posts a feed shows: not deleted, not by a blocked or muted account, no muted hashtag."""
        blocked = self._blocked()
        muted_accounts, muted_tags = self._muted()
        return [p for p in posts if not p["deleted_at"] and p["author_id"] not in blocked and p["handle"] not in muted_accounts
                and not (set(hashtags(p["body"])) & muted_tags)]

    def _avatar(self, handle: str, name: str, *, big: bool = False) -> str:
        initials = "".join(w[:1] for w in name.split()[:2]).upper()
        return (f'<span class="avatar av-{sum(map(ord, handle)) % 6}{" big" if big else ""}" aria-hidden="true">{esc(initials)}</span>')

    def _rich(self, body: str) -> str:
        """A post's text with its hashtags and mentions as links."""
        out = []
        for part in TOKEN_RE.split(body):
            if part.startswith("#") and len(part) > 1:
                out.append(f'<a href="/tags/{esc(urlquote(part[1:].lower()))}" data-hashtag="{esc(part[1:].lower())}">{esc(part)}</a>')
            elif part.startswith("@") and len(part) > 1:
                out.append(f'<a href="/u/{esc(part[1:].lower())}" data-mention="{esc(part[1:].lower())}">{esc(part)}</a>')
            else:
                out.append(esc(part))
        return "".join(out)

    def _image(self, alt: str) -> str:
        return (f'<figure class="media" data-image><svg viewBox="0 0 400 200" preserveAspectRatio="xMidYMid slice" role="img" aria-label="{esc(alt)}" focusable="false">'
                '<rect width="400" height="200" class="m-bg"/><circle cx="320" cy="60" r="26" class="m-sun"/>'
                '<path d="M0 200 L110 90 L190 160 L260 110 L400 200 Z" class="m-hill"/></svg>'
                f'<figcaption>{esc(alt)}</figcaption></figure>')

    def _poll(self, p: dict[str, Any]) -> str:
        poll = self.db.one("SELECT * FROM polls WHERE post_id = ?", (p["id"],))
        if poll is None:
            return ""
        options = self.db.all("SELECT o.*, (SELECT COUNT(*) FROM poll_votes v WHERE v.option_id = o.id) AS n FROM poll_options o "
                              "WHERE o.poll_id = ? ORDER BY o.position", (poll["id"],))
        total = sum(o["n"] for o in options)
        mine = self.db.scalar("SELECT option_id FROM poll_votes WHERE poll_id = ? AND account_id = 1", (poll["id"],))
        closed = poll["closes_at"] <= self._stamp()
        status = self.t("Final results") if closed else self.t("Closes") + " " + esc(moment(poll["closes_at"], self.variant.locale))
        foot = f'<p class="muted" data-votes="{total}">{self._num(total)} {self.t("votes")} · {status}</p>'
        if closed or mine is not None or p["author_id"] == ME or p["deleted_at"]:
            bars = "".join(
                f'<li class="bar{" chosen" if o["id"] == mine else ""}" data-option="{esc(o["label"])}" data-option-votes="{o["n"]}">'
                f'<span class="fill" style="width:{(100 * o["n"] / total if total else 0):.1f}%"></span>'
                f'<span class="label">{esc(o["label"])}{" ✓" if o["id"] == mine else ""}</span>'
                f'<span class="pct">{format_number(100 * o["n"] / total if total else 0, self.variant.locale, decimals=1)}\u00a0%</span></li>'
                for o in options)
            return f'<div class="poll" data-poll-id="{poll["id"]}" data-voted="{int(mine is not None)}"><ul>{bars}</ul>{foot}</div>'
        radios = "".join(f'<label class="choice"><input type="radio" name="option" value="{o["id"]}" data-option="{esc(o["label"])}" required> '
                         f'{esc(o["label"])}</label>' for o in options)
        return (f'<form class="poll" method="post" action="/p/{p["id"]}/vote" data-poll-id="{poll["id"]}" data-voted="0">'
                f'<fieldset><legend class="sr">{self.t("Poll")}</legend>{radios}</fieldset>'
                f'<button type="submit" data-action="vote">{self.t("Vote")}</button>{foot}</form>')

    def _quoted(self, qid: int) -> str:
        q = self.db.one(self._POSTS + " WHERE p.id = ?", (qid,))
        if q is None:
            return ""
        if q["deleted_at"] or q["author_id"] in self._blocked():
            return f'<div class="quoted tombstone" data-quoted="{qid}">{self.t("This post is unavailable.")}</div>'
        return (f'<a class="quoted" href="/p/{qid}" data-quoted="{qid}"><span class="who"><strong>{esc(q["name"])}</strong> '
                f'<span class="muted">@{esc(q["handle"])}</span></span><span class="qbody">{esc(q["body"])}</span></a>')

    def _card(self, p: dict[str, Any], *, main: bool = False, reposter: dict[str, Any] | None = None) -> str:
        """One post: who, when, text, image, quote, poll and the action bar."""
        if p["deleted_at"]:
            return (f'<article class="post tombstone" data-post-id="{p["id"]}" data-deleted="1" aria-label="{self.t("Deleted post")}">'
                    f'<p>{self.t("This post was deleted by its author.")}</p></article>')
        t = self.t
        pid = p["id"]
        head = ""
        if reposter is not None:
            head = (f'<p class="context" data-reposted-by="{esc(reposter["handle"])}">{icon("repost")} '
                    f'{esc(reposter["name"])} {t("reposted")}</p>')
        if p["reply_to"]:
            parent = self.db.one("SELECT a.handle FROM posts x JOIN accounts a ON a.id = x.author_id WHERE x.id = ?", (p["reply_to"],))
            if parent:
                head += (f'<p class="context">{t("Replying to")} <a href="/p/{p["reply_to"]}" data-reply-to="{p["reply_to"]}">'
                         f'@{esc(parent["handle"])}</a></p>')
        badge = icon("verified", t("Verified")) if p["verified"] else ""
        body = f'<p class="text" data-body>{self._rich(p["body"])}</p>'
        extras = (self._image(p["image_alt"]) if p["image_alt"] else "") + (self._quoted(p["quote_of"]) if p["quote_of"] else "") + self._poll(p)
        content = body + extras
        settings = self.db.one("SELECT show_sensitive FROM settings WHERE id = 1")
        if p["sensitive"] and not (settings and settings["show_sensitive"]):
            content = (f'<details class="sensitive" data-sensitive><summary>{t("Sensitive content: show")}</summary>{content}</details>')

        def toggle(action: str, on: bool, label_on: str, label_off: str, count: int | None) -> str:
            label = t(label_off if on else label_on)
            shown = f'<span class="n">{self._num(count)}</span>' if count is not None else ""
            return (f'<form method="post" action="/p/{pid}/{action}" class="act"><input type="hidden" name="on" value="{0 if on else 1}">'
                    f'<button type="submit" class="icon-btn {action}{" on" if on else ""}" data-action="{action}" aria-pressed="{str(on).lower()}" '
                    f'aria-label="{esc(label)}">{icon(action)}{shown}</button></form>')
        mine = p["author_id"] == ME
        actions = (f'<div class="actions" role="group" aria-label="{t("Post actions")}">'
                   f'<a class="icon-btn" href="/p/{pid}#reply" data-action="reply" aria-label="{t("Reply")}">{icon("reply")}'
                   f'<span class="n">{self._num(p["n_replies"])}</span></a>'
                   + toggle("repost", bool(p["reposted"]), "Repost", "Undo repost", p["n_reposts"])
                   + f'<a class="icon-btn" href="/compose?quote={pid}" data-action="quote" aria-label="{t("Quote")}">{icon("quote")}</a>'
                   + toggle("like", bool(p["liked"]), "Like", "Unlike", p["n_likes"])
                   + toggle("bookmark", bool(p["bookmarked"]), "Bookmark", "Remove bookmark", None)
                   + (f'<a class="icon-btn danger" href="/p/{pid}/delete" data-action="delete" aria-label="{t("Delete")}">{icon("delete")}</a>'
                      if mine else "")
                   + "</div>")
        likes_link = (f'<p class="muted stats"><a href="/p/{pid}/likes" data-action="likers">{self._num(p["n_likes"])} {t("likes")}</a> · '
                      f'{self._num(p["n_reposts"])} {t("reposts")}</p>' if main else "")
        return (f'<article class="post{" main" if main else ""}" data-post-id="{pid}" data-author="{esc(p["handle"])}" data-deleted="0" '
                f'data-likes="{p["n_likes"]}" data-liked="{p["liked"]}" aria-label="{esc(p["name"])}: {esc(p["body"][:60])}">'
                f'{head}<div class="post-row">{self._avatar(p["handle"], p["name"])}<div class="post-main">'
                f'<header><a class="who" href="/u/{esc(p["handle"])}"><strong>{esc(p["name"])}</strong></a>{badge} '
                f'<span class="muted">@{esc(p["handle"])}</span> · <a class="muted stamp" href="/p/{pid}">{self._when(p["created_at"])}</a></header>'
                f'{content}{likes_link}{actions}</div></div></article>')

    def _feed(self, items: list[tuple[dict[str, Any], dict[str, Any] | None]], page: int, base: str) -> str:
        start = (page - 1) * PAGE_SIZE
        shown = items[start:start + PAGE_SIZE]
        cards = "".join(self._card(p, reposter=r) for p, r in shown)
        sep = "&" if "?" in base else "?"
        pager = ""
        if page > 1:
            pager += f'<a class="button" href="{esc(base)}{sep}page={page - 1}" data-action="newer" rel="prev">{self.t("Newer")}</a>'
        if start + PAGE_SIZE < len(items):
            pager += f'<a class="button" href="{esc(base)}{sep}page={page + 1}" data-action="older" rel="next">{self.t("Older")}</a>'
        if not shown:
            return f'<p class="empty" role="status" data-count="0">{self.t("Nothing here yet.")}</p>'
        return f'<div class="feed" data-count="{len(items)}">{cards}</div><nav class="pager" aria-label="{self.t("Pages")}">{pager}</nav>'

    def _page_no(self, request: Request) -> int:
        raw = self.query(request)["page"]
        if not str(raw).isdigit() or int(raw) < 1:
            raise Refused(self.t("A page is a whole number from 1."))
        return int(raw)

    def _composer(self, *, quote: int | None = None, reply_to: int | None = None) -> str:
        t = self.t
        hidden = (f'<input type="hidden" name="quote_of" value="{quote}">' if quote else "") + \
                 (f'<input type="hidden" name="reply_to" value="{reply_to}">' if reply_to else "")
        label = t("Your reply") if reply_to else t("Add a comment") if quote else t("What's happening?")
        extras = "" if reply_to or quote else (
            f'<details class="extra"><summary data-action="add-image">{icon("image")} {t("Image")}</summary>'
            f'<label>{t("Image description (alt text)")}<input name="image_alt" maxlength="200" data-field="image-alt"></label></details>'
            f'<details class="extra"><summary data-action="add-poll">{icon("poll")} {t("Poll")}</summary>'
            + "".join(f'<label>{t("Choice")} {k}<input name="option{k}" maxlength="25" data-field="poll-option-{k}"></label>' for k in range(1, 5))
            + f'<label>{t("Poll length")}<select name="poll_days" data-field="poll-days">'
            + "".join(f'<option value="{d}">{d} {t("days") if d > 1 else t("day")}</option>' for d in POLL_DAYS)
            + "</select></label></details>")
        return (f'<form class="composer" method="post" action="/posts" data-form="{"reply" if reply_to else "quote" if quote else "post"}" id="reply">'
                f'{hidden}<label class="sr" for="compose-body">{label}</label>'
                f'<textarea id="compose-body" name="body" rows="3" placeholder="{esc(label)}" data-field="compose-body" '
                f'data-limit="{MAX_POST}" aria-describedby="compose-count"></textarea>'
                f'<div class="composer-foot">{extras}<span id="compose-count" class="counter" aria-live="polite" data-counter>'
                f'{MAX_POST}</span><button type="submit" class="primary" data-action="{"send-reply" if reply_to else "publish"}">'
                f'{t("Reply") if reply_to else t("Post")}</button></div></form>')

    def _trends(self) -> list[tuple[str, int]]:
        """Hashtags of the last seven days, by their posts weighted by age; muted ones left out."""
        since = (self.now() - dt.timedelta(days=7)).strftime("%Y-%m-%d %H:%M")
        _, muted = self._muted()
        score: dict[str, float] = {}
        count: dict[str, int] = {}
        for p in self.db.all("SELECT body, created_at FROM posts WHERE deleted_at IS NULL AND created_at >= ? AND instr(body, '#') > 0",
                             (since,)):
            age = (self.now() - dt.datetime.strptime(p["created_at"], "%Y-%m-%d %H:%M")).total_seconds() / 3600
            for tag in hashtags(p["body"]):
                if tag not in muted:
                    score[tag] = score.get(tag, 0) + decay(age)
                    count[tag] = count.get(tag, 0) + 1
        return sorted(((tag, count[tag]) for tag in score), key=lambda x: (-score[x[0]], x[0]))[:10]

    def _trends_box(self) -> str:
        items = "".join(f'<li data-trend="{esc(tag)}"><a href="/tags/{esc(urlquote(tag))}">#{esc(tag)}</a>'
                        f'<span class="muted">{self._num(n)} {self.t("posts")}</span></li>' for tag, n in self._trends())
        return (f'<section class="box"><h2>{self.t("Trending")}</h2><ol class="trends">{items}</ol></section>'
                f'<form class="box search-box" method="get" action="/search" role="search"><label class="sr" for="side-q">{self.t("Search")}</label>'
                f'<input id="side-q" type="search" name="q" placeholder="{self.t("Search Murmur")}" data-field="search"></form>')

    # --- feeds ---

    async def home(self, request: Request) -> Response:
        page = self._page_no(request)
        followed = [r["followee_id"] for r in self.db.all("SELECT followee_id FROM follows WHERE follower_id = 1")] + [ME]
        marks = ",".join("?" * len(followed))
        posts = self._visible(self.db.all(self._POSTS + f" WHERE p.author_id IN ({marks}) AND p.reply_to IS NULL", followed))
        items: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [(p["created_at"], p, None) for p in posts]
        reposted = self.db.all("SELECT r.post_id, r.created_at, a.handle, a.name FROM reposts r JOIN accounts a ON a.id = r.account_id "
                               f"WHERE r.account_id IN ({marks}) ORDER BY r.created_at DESC LIMIT 200", followed)
        seen = {p["id"] for p in posts}
        for r in reposted:
            if r["post_id"] in seen:
                continue
            p = self._visible([self._post(r["post_id"])])
            if p and p[0]["reply_to"] is None:
                seen.add(r["post_id"])
                items.append((r["created_at"], p[0], {"handle": r["handle"], "name": r["name"]}))
        items.sort(key=lambda x: (x[0], x[1]["id"]), reverse=True)
        body = self._composer() + self._feed([(p, r) for _, p, r in items], page, "/")
        return self._page(self.t("Home"), body, aside=self._trends_box())

    async def explore(self, request: Request) -> Response:
        page = self._page_no(request)
        since = (self.now() - dt.timedelta(days=7)).strftime("%Y-%m-%d %H:%M")
        posts = self._visible(self.db.all(self._POSTS + " WHERE p.created_at >= ? AND p.reply_to IS NULL", (since,)))
        posts.sort(key=lambda p: (-p["n_likes"] - 2 * p["n_reposts"], -p["id"]))
        trends = "".join(f'<li data-trend="{esc(tag)}"><a href="/tags/{esc(urlquote(tag))}">#{esc(tag)}</a>'
                         f'<span class="muted">{self._num(n)} {self.t("posts")}</span></li>' for tag, n in self._trends())
        body = (f'<form class="searchbar" method="get" action="/search" role="search"><label class="sr" for="q">{self.t("Search")}</label>'
                f'<input id="q" type="search" name="q" placeholder="{self.t("Search people, posts and hashtags")}" data-field="search">'
                f'<button type="submit" data-action="search">{self.t("Search")}</button></form>'
                f'<section aria-labelledby="h-trends"><h2 id="h-trends">{self.t("Trending hashtags")}</h2><ol class="trends wide">{trends}</ol></section>'
                f'<h2>{self.t("Popular this week")}</h2>' + self._feed([(p, None) for p in posts], page, "/explore"))
        return self._page(self.t("Explore"), body)

    def _tagged(self, tag: str) -> list[dict[str, Any]]:
        rows = self.db.all(self._POSTS + " WHERE instr(lower(p.body), ?) > 0 ORDER BY p.created_at DESC, p.id DESC", ("#" + tag,))
        return [p for p in rows if tag in hashtags(p["body"])]

    async def tag(self, request: Request) -> Response:
        tag = request.path_params["tag"].lstrip("#").lower()
        page = self._page_no(request)
        _, muted = self._muted()
        is_muted = tag in muted
        rows = self._tagged(tag)
        blocked = self._blocked()
        muted_accounts, _ = self._muted()
        posts = [p for p in rows if not p["deleted_at"] and p["author_id"] not in blocked and p["handle"] not in muted_accounts]
        mute = (f'<form method="post" action="/tags/{esc(urlquote(tag))}/mute" class="inline"><input type="hidden" name="on" value="{0 if is_muted else 1}">'
                f'<button type="submit" data-action="{"unmute-tag" if is_muted else "mute-tag"}" aria-pressed="{str(is_muted).lower()}">'
                f'{icon("mute")} {self.t("Unmute") if is_muted else self.t("Mute")} #{esc(tag)}</button></form>')
        note = f'<p class="muted" data-muted-tag>{self.t("You muted this hashtag: its posts are hidden from your feeds.")}</p>' if is_muted else ""
        body = (f'<div class="tag-head" data-tag="{esc(tag)}">{mute}<span class="muted">{self._num(len(posts))} {self.t("posts")}</span></div>'
                + note + self._feed([(p, None) for p in posts], page, f"/tags/{urlquote(tag)}"))
        return self._page(f"#{tag}", body, aside=self._trends_box())

    async def mute_tag(self, request: Request) -> Response:
        tag = request.path_params["tag"].lstrip("#").lower()
        on = _form_text(await request.form(), "on") == "1"
        self._set_mute("hashtag", tag, on)
        return RedirectResponse(f"/tags/{urlquote(tag)}", status_code=303)

    def _set_mute(self, kind: str, target: str, on: bool) -> None:
        if kind == "hashtag" and not re.fullmatch(r"\w{1,60}", target):
            raise Refused(self.t("A hashtag is letters, digits and underscores."))
        have = self.db.scalar("SELECT COUNT(*) FROM mutes WHERE kind = ? AND target = ?", (kind, target))
        if on and not have:
            self.db.insert("INSERT INTO mutes (kind, target, created_at) VALUES (?,?,?)", (kind, target, self._stamp()))
        elif not on and have:
            self.db.execute("DELETE FROM mutes WHERE kind = ? AND target = ?", (kind, target))

    async def search(self, request: Request) -> Response:
        q = self.query(request)
        text, kind = q["q"] or "", q["type"] or "posts"
        if kind not in ("posts", "people", "tags"):
            raise Refused(self.t("Search people, posts or hashtags."))
        tabs = "".join(f'<a href="/search?q={esc(urlquote(text))}&type={k}" data-tab="{k}"{" aria-current=page" if k == kind else ""}>'
                       f'{self.t(label)}</a>' for k, label in (("posts", "Posts"), ("people", "People"), ("tags", "Hashtags")))
        form = (f'<form class="searchbar" method="get" action="/search" role="search"><input type="hidden" name="type" value="{kind}">'
                f'<label class="sr" for="q">{self.t("Search")}</label><input id="q" type="search" name="q" value="{esc(text)}" data-field="search">'
                f'<button type="submit" data-action="search">{self.t("Search")}</button></form>'
                f'<nav class="tabs" aria-label="{self.t("Search")}">{tabs}</nav>')
        results = ""
        if text:
            like = f"%{text.lstrip('#@')}%"
            if kind == "people":
                blocked = self._blocked()
                people = [a for a in self.db.all("SELECT * FROM accounts WHERE (handle LIKE ? OR name LIKE ? OR bio LIKE ?) AND id != 1 "
                                                 "ORDER BY (handle LIKE ? OR name LIKE ?) DESC, name LIMIT 50", (like, like, like, like, like))
                          if a["id"] not in blocked]
                results = self._people(people)
            elif kind == "tags":
                counts: dict[str, int] = {}
                for p in self.db.all("SELECT body FROM posts WHERE deleted_at IS NULL AND instr(body, '#') > 0 AND lower(body) LIKE lower(?)",
                                     (f"%#{text.lstrip('#')}%",)):
                    for tag in hashtags(p["body"]):
                        if text.lstrip("#").lower() in tag:
                            counts[tag] = counts.get(tag, 0) + 1
                results = ('<ul class="rows">' + "".join(
                    f'<li data-hashtag-result="{esc(tag)}"><a href="/tags/{esc(urlquote(tag))}">#{esc(tag)}</a> '
                    f'<span class="muted">{self._num(n)} {self.t("posts")}</span></li>'
                    for tag, n in sorted(counts.items(), key=lambda x: (-x[1], x[0]))) + "</ul>") if counts else ""
            else:
                posts = self._visible(self.db.all(self._POSTS + " WHERE p.body LIKE ? ORDER BY p.created_at DESC, p.id DESC LIMIT 60", (like,)))
                results = "".join(self._card(p) for p in posts)
            results = results or f'<p class="empty" role="status" data-count="0">{self.t("No results.")}</p>'
        return self._page(self.t("Search"), form + f'<div class="results" data-results="{kind}">{results}</div>')

    # --- posts ---

    async def create_post(self, request: Request) -> Response:
        form = await request.form()
        t = self.t
        body = str(form.get("body", "") or "").strip()
        if len(body) > MAX_POST:
            raise Refused(t("A post is at most 280 characters") + f" ({self._num(len(body))}).")
        reply_to = self._ref(form, "reply_to")
        quote_of = self._ref(form, "quote_of")
        if reply_to and quote_of:
            raise Refused(t("A post replies or quotes, not both."))
        image = _form_text(form, "image_alt")[:200] or None
        options = [_form_text(form, f"option{k}") for k in range(1, 5)]
        options = [o for o in options if o]
        if reply_to is not None:
            parent = self._live(reply_to, "it takes no replies")
            settings = self.db.one("SELECT reply_policy FROM settings WHERE id = 1")
            assert settings is not None
        if quote_of is not None:
            self._live(quote_of, "it cannot be quoted")
        if options:
            if reply_to or quote_of:
                raise Refused(t("A reply or a quote takes no poll."))
            if len(options) < 2:
                raise Refused(t("A poll needs at least two choices."))
            if len({o.casefold() for o in options}) != len(options):
                raise Refused(t("Each choice of a poll is different."))
            if any(len(o) > 25 for o in options):
                raise Refused(t("A choice is at most 25 characters."))
            days = _form_text(form, "poll_days") or "1"
            if not days.isdigit() or int(days) not in POLL_DAYS:
                raise Refused(t("A poll runs 1, 3 or 7 days."))
            if image:
                raise Refused(t("A post takes an image or a poll, not both."))
        if not body and not image and not options:
            raise Refused(t("The post is empty: write something first."))
        if not body and options:
            raise Refused(t("A poll needs a question."))
        pid = self.db.insert("INSERT INTO posts (author_id, body, created_at, reply_to, quote_of, image_alt, sensitive) VALUES (?,?,?,?,?,?,0)",
                             (ME, body, self._stamp(), reply_to, quote_of, image))
        if options:
            closes = (self.now() + dt.timedelta(days=int(days))).strftime("%Y-%m-%d %H:%M")
            poll = self.db.insert("INSERT INTO polls (post_id, closes_at) VALUES (?,?)", (pid, closes))
            for k, label in enumerate(options):
                self.db.insert("INSERT INTO poll_options (poll_id, position, label) VALUES (?,?,?)", (poll, k, label))
        if reply_to is not None:
            return RedirectResponse(f"/p/{parent['id']}#post-{pid}", status_code=303)
        return RedirectResponse(f"/p/{pid}", status_code=303)

    def _ref(self, form: Any, key: str) -> int | None:
        raw = _form_text(form, key)
        if not raw:
            return None
        if not raw.isdigit():
            raise Refused(self.t("No such post."), 404)
        return int(raw)

    async def compose(self, request: Request) -> Response:
        raw = self.query(request)["quote"]
        if not raw or not str(raw).isdigit():
            return self._page(self.t("New post"), self._composer())
        p = self._live(int(raw), "it cannot be quoted")
        return self._page(self.t("Quote post"), self._composer(quote=p["id"]) + self._quoted(p["id"]))

    async def thread(self, request: Request) -> Response:
        p = self._post(request.path_params["pid"])
        blocked = self._blocked()
        if p["author_id"] in blocked:
            raise Refused(self.t("You blocked this account. Unblock it first."), 403)
        chain: list[dict[str, Any]] = []
        up = p["reply_to"]
        while up is not None and len(chain) < 20:
            a = self._post(up)
            chain.append(a)
            up = a["reply_to"]
        ancestors = "".join(self._card(a) for a in reversed(chain) if a["author_id"] not in blocked)
        replies = self._visible(self.db.all(self._POSTS + " WHERE p.reply_to = ? ORDER BY p.created_at, p.id", (p["id"],)))
        form = "" if p["deleted_at"] else self._composer(reply_to=p["id"])
        listed = "".join(f'<div id="post-{r["id"]}">{self._card(r)}</div>' for r in replies)
        body = (f'<div class="thread">{ancestors}{self._card(p, main=True)}{form}'
                f'<section aria-label="{self.t("Replies")}" class="replies" data-replies="{len(replies)}">{listed}</section></div>')
        return self._page(self.t("Post"), body, aside=self._trends_box())

    async def likers(self, request: Request) -> Response:
        p = self._post(request.path_params["pid"])
        people = self.db.all("SELECT a.* FROM likes l JOIN accounts a ON a.id = l.account_id WHERE l.post_id = ? ORDER BY l.created_at DESC, l.id DESC",
                             (p["id"],))
        blocked = self._blocked()
        body = (f'<p><a href="/p/{p["id"]}" data-action="back-to-post">{self.t("Back to the post")}</a></p>'
                + self._people([a for a in people if a["id"] not in blocked], attr="data-liker"))
        return self._page(self.t("Liked by"), body)

    async def _flag(self, request: Request, table: str, what: str) -> Response:
        p = self._live(request.path_params["pid"], what)
        on = _form_text(await request.form(), "on") == "1"
        if table == "bookmarks":
            have = self.db.scalar("SELECT COUNT(*) FROM bookmarks WHERE post_id = ?", (p["id"],))
            if on and not have:
                self.db.insert("INSERT INTO bookmarks (post_id, created_at) VALUES (?,?)", (p["id"], self._stamp()))
            elif not on and have:
                self.db.execute("DELETE FROM bookmarks WHERE post_id = ?", (p["id"],))
        else:
            have = self.db.scalar(f"SELECT COUNT(*) FROM {table} WHERE post_id = ? AND account_id = 1", (p["id"],))
            if on and not have:
                self.db.insert(f"INSERT INTO {table} (account_id, post_id, created_at) VALUES (1,?,?)", (p["id"], self._stamp()))
            elif not on and have:
                self.db.execute(f"DELETE FROM {table} WHERE post_id = ? AND account_id = 1", (p["id"],))
        back = request.headers.get("referer", "")
        return RedirectResponse(back if back.startswith(str(request.base_url)) else f"/p/{p['id']}", status_code=303)

    async def like(self, request: Request) -> Response:
        return await self._flag(request, "likes", "it cannot be liked")

    async def repost(self, request: Request) -> Response:
        return await self._flag(request, "reposts", "it cannot be reposted")

    async def bookmark(self, request: Request) -> Response:
        return await self._flag(request, "bookmarks", "it cannot be bookmarked")

    async def vote(self, request: Request) -> Response:
        p = self._live(request.path_params["pid"], "its poll is closed")
        poll = self.db.one("SELECT * FROM polls WHERE post_id = ?", (p["id"],))
        if poll is None:
            raise Refused(self.t("This post has no poll."), 404)
        if p["author_id"] == ME:
            raise Refused(self.t("You cannot vote in your own poll."))
        if poll["closes_at"] <= self._stamp():
            raise Refused(self.t("This poll is closed."))
        if self.db.scalar("SELECT COUNT(*) FROM poll_votes WHERE poll_id = ? AND account_id = 1", (poll["id"],)):
            raise Refused(self.t("You already voted in this poll: votes are final."))
        raw = _form_text(await request.form(), "option")
        option = self.db.one("SELECT id FROM poll_options WHERE id = ? AND poll_id = ?", (int(raw) if raw.isdigit() else -1, poll["id"]))
        if option is None:
            raise Refused(self.t("Choose one of the poll's choices."))
        self.db.insert("INSERT INTO poll_votes (poll_id, option_id, account_id, created_at) VALUES (?,?,1,?)", (poll["id"], option["id"], self._stamp()))
        return RedirectResponse(f"/p/{p['id']}", status_code=303)

    async def delete(self, request: Request) -> Response:
        p = self._post(request.path_params["pid"])
        if p["author_id"] != ME:
            raise Refused(self.t("You can only delete your own posts."), 403)
        if p["deleted_at"]:
            raise Refused(self.t("This post is already deleted."))
        if request.method == "POST":
            self.db.execute("UPDATE posts SET deleted_at = ? WHERE id = ?", (self._stamp(), p["id"]))
            return RedirectResponse("/u/ines_duarte", status_code=303)
        body = (f'<div class="box confirm" role="alertdialog" aria-labelledby="del-h"><h2 id="del-h">{self.t("Delete this post?")}</h2>'
                f'<p>{self.t("It will be removed from your profile and from every feed. This cannot be undone.")}</p>{self._card(p)}'
                f'<form method="post" action="/p/{p["id"]}/delete" class="row"><button type="submit" class="danger" data-action="confirm-delete">'
                f'{self.t("Delete")}</button><a class="button" href="/p/{p["id"]}" data-action="cancel-delete">{self.t("Cancel")}</a></form></div>')
        return self._page(self.t("Delete post"), body)

    # --- people ---

    def _people(self, people: list[dict[str, Any]], *, attr: str = "data-person", extra: dict[int, str] | None = None) -> str:
        if not people:
            return f'<p class="empty" role="status" data-count="0">{self.t("Nobody here yet.")}</p>'
        mine = {r["followee_id"] for r in self.db.all("SELECT followee_id FROM follows WHERE follower_id = 1")}
        blocked = self._blocked()
        rows = []
        for a in people:
            follow = ""
            if a["id"] != ME and a["id"] not in blocked:
                on = a["id"] in mine
                follow = (f'<form method="post" action="/u/{esc(a["handle"])}/follow" class="inline"><input type="hidden" name="on" value="{0 if on else 1}">'
                          f'<button type="submit" class="{"" if on else "primary"}" data-action="{"unfollow" if on else "follow"}" '
                          f'aria-label="{esc((self.t("Unfollow") if on else self.t("Follow")) + " @" + a["handle"])}">'
                          f'{self.t("Following") if on else self.t("Follow")}</button></form>')
            more = (extra or {}).get(a["id"], "")
            rows.append(f'<li class="person" {attr}="{esc(a["handle"])}" data-following="{int(a["id"] in mine)}">'
                        f'{self._avatar(a["handle"], a["name"])}<div class="person-main"><a href="/u/{esc(a["handle"])}" class="who">'
                        f'<strong>{esc(a["name"])}</strong></a> <span class="muted">@{esc(a["handle"])}</span>'
                        f'<p class="bio">{esc(a["bio"])}</p>{more}</div>{follow}</li>')
        return f'<ul class="people" data-count="{len(people)}">{"".join(rows)}</ul>'

    async def profile(self, request: Request) -> Response:
        a = self._account(request.path_params["handle"])
        t = self.t
        tab = self.query(request)["tab"] or "posts"
        if tab not in ("posts", "replies", "media"):
            raise Refused(t("A profile shows posts, replies or media."))
        n_following = self.db.scalar("SELECT COUNT(*) FROM follows WHERE follower_id = ?", (a["id"],))
        n_followers = self.db.scalar("SELECT COUNT(*) FROM follows WHERE followee_id = ?", (a["id"],))
        n_posts = self.db.scalar("SELECT COUNT(*) FROM posts WHERE author_id = ? AND deleted_at IS NULL", (a["id"],))
        blocked = a["id"] in self._blocked()
        muted_accounts, _ = self._muted()
        muted = a["handle"] in muted_accounts
        me = a["id"] == ME
        buttons = ""
        if me:
            buttons = f'<a class="button" href="/settings/profile" data-action="edit-profile">{t("Edit profile")}</a>'
        elif blocked:
            buttons = (f'<form method="post" action="/u/{esc(a["handle"])}/block" class="inline"><input type="hidden" name="on" value="0">'
                       f'<button type="submit" data-action="unblock">{icon("block")} {t("Unblock")}</button></form>')
        else:
            on = self._follows(ME, a["id"])
            lists = self.db.all("SELECT id, name FROM lists ORDER BY name")
            options = "".join(f'<option value="{x["id"]}">{esc(x["name"])}</option>' for x in lists)
            buttons = (f'<form method="post" action="/u/{esc(a["handle"])}/follow" class="inline"><input type="hidden" name="on" value="{0 if on else 1}">'
                       f'<button type="submit" class="{"" if on else "primary"}" data-action="{"unfollow" if on else "follow"}" '
                       f'aria-pressed="{str(on).lower()}">{t("Unfollow") if on else t("Follow")}</button></form>'
                       f'<a class="button" href="/messages/{esc(a["handle"])}" data-action="message">{icon("send")} {t("Message")}</a>'
                       f'<form method="post" action="/u/{esc(a["handle"])}/mute" class="inline"><input type="hidden" name="on" value="{0 if muted else 1}">'
                       f'<button type="submit" data-action="{"unmute" if muted else "mute"}" aria-pressed="{str(muted).lower()}">{icon("mute")} '
                       f'{t("Unmute") if muted else t("Mute")}</button></form>'
                       f'<a class="button danger" href="/u/{esc(a["handle"])}/block" data-action="block">{icon("block")} {t("Block")}</a>'
                       + (f'<form method="post" action="/lists/0/members" class="inline add-to-list"><input type="hidden" name="handle" value="{esc(a["handle"])}">'
                          f'<input type="hidden" name="op" value="add"><label class="sr" for="to-list">{t("Add to list")}</label>'
                          f'<select id="to-list" name="list_id" data-field="add-to-list">{options}</select>'
                          f'<button type="submit" data-action="add-to-list">{icon("list")} {t("Add to list")}</button></form>' if lists else ""))
        facts = ""
        if a["location"]:
            facts += f'<li data-location>{icon("location")} {esc(a["location"])}</li>'
        if a["link"]:
            facts += f'<li data-link>{icon("link")} <a href="{esc(a["link"])}" rel="nofollow noopener">{esc(a["link"].split("://", 1)[-1])}</a></li>'
        facts += f'<li>{icon("calendar")} {esc(joined(a["joined_at"], self.variant.locale))}</li>'
        follows_me = (f'<span class="chip" data-follows-you>{t("Follows you")}</span>'
                      if not me and self._follows(a["id"], ME) else "")
        head = (f'<section class="profile-card" data-handle="{esc(a["handle"])}" data-blocked="{int(blocked)}" data-muted="{int(muted)}">'
                f'<div class="banner" aria-hidden="true"></div>{self._avatar(a["handle"], a["name"], big=True)}'
                f'<div class="profile-actions">{buttons}</div>'
                f'<h2 class="display-name">{esc(a["name"])}{icon("verified", t("Verified")) if a["verified"] else ""}</h2>'
                f'<p class="muted">@{esc(a["handle"])} {follows_me}</p><p class="bio" data-bio>{esc(a["bio"])}</p><ul class="facts">{facts}</ul>'
                f'<p class="counts"><a href="/u/{esc(a["handle"])}/following" data-count-following="{n_following}"><strong>{self._num(n_following)}</strong> '
                f'{t("Following")}</a> <a href="/u/{esc(a["handle"])}/followers" data-count-followers="{n_followers}"><strong>{self._num(n_followers)}</strong> '
                f'{t("Followers")}</a> <span data-count-posts="{n_posts}"><strong>{self._num(n_posts)}</strong> {t("posts")}</span></p></section>')
        if blocked:
            return self._page(a["name"], head + f'<p class="alert" role="status" data-blocked-note>{t("You blocked this account. Their posts are hidden.")}</p>')
        tabs = "".join(f'<a href="/u/{esc(a["handle"])}?tab={k}" data-tab="{k}"{" aria-current=page" if k == tab else ""}>{t(label)}</a>'
                       for k, label in (("posts", "Posts"), ("replies", "Replies"), ("media", "Media")))
        where = {"posts": "AND p.reply_to IS NULL", "replies": "AND p.reply_to IS NOT NULL", "media": "AND p.image_alt IS NOT NULL"}[tab]
        posts = [p for p in self.db.all(self._POSTS + f" WHERE p.author_id = ? {where} ORDER BY p.created_at DESC, p.id DESC", (a["id"],))
                 if not p["deleted_at"]]
        page = self._page_no(request)
        body = head + f'<nav class="tabs" aria-label="{t("Profile")}">{tabs}</nav>' + self._feed([(p, None) for p in posts], page,
                                                                                             f"/u/{a['handle']}?tab={tab}")
        return self._page(a["name"], body)

    def _last_posts(self) -> dict[int, str]:
        return {r["author_id"]: r["last"] for r in self.db.all("SELECT author_id, MAX(created_at) AS last FROM posts WHERE deleted_at IS NULL GROUP BY author_id")}

    async def following(self, request: Request) -> Response:
        a = self._account(request.path_params["handle"])
        activity = self.query(request)["activity"] or "all"
        if activity not in ("all", "active", "inactive"):
            raise Refused(self.t("Activity is all, active or inactive."))
        people = self.db.all("SELECT x.* FROM follows f JOIN accounts x ON x.id = f.followee_id WHERE f.follower_id = ? ORDER BY x.name",
                             (a["id"],))
        last = self._last_posts()
        cutoff = (self.now() - dt.timedelta(days=INACTIVE_DAYS)).strftime("%Y-%m-%d %H:%M")
        if activity == "inactive":
            people = [p for p in people if last.get(p["id"], "") < cutoff]
        elif activity == "active":
            people = [p for p in people if last.get(p["id"], "") >= cutoff]
        extra = {p["id"]: (f'<p class="muted" data-last-post="{esc(last.get(p["id"], ""))}">{self.t("Last posted")} '
                           f'{self._when(last[p["id"]]) if p["id"] in last else self.t("never")}</p>') for p in people}
        options = "".join(f'<option value="{k}"{" selected" if k == activity else ""}>{self.t(label)}</option>'
                          for k, label in (("all", "Everyone"), ("active", "Posted in the last 30 days"),
                                           ("inactive", "No posts in the last 30 days")))
        filt = (f'<form method="get" class="filters" data-form="activity"><label for="activity">{self.t("Activity")}</label>'
                f'<select id="activity" name="activity" data-filter="activity">{options}</select>'
                f'<button type="submit" data-action="apply-filter">{self.t("Apply")}</button></form>')
        return self._page(f'{a["name"]} · {self.t("Following")}',
                          self._who_tabs(a, "following") + filt + self._people(people, attr="data-followee", extra=extra))

    def _who_tabs(self, a: dict[str, Any], current: str) -> str:
        return (f'<nav class="tabs" aria-label="{self.t("Connections")}">' + "".join(
            f'<a href="/u/{esc(a["handle"])}/{k}" data-tab="{k}"{" aria-current=page" if k == current else ""}>{self.t(label)}</a>'
            for k, label in (("following", "Following"), ("followers", "Followers"))) + "</nav>")

    async def followers(self, request: Request) -> Response:
        a = self._account(request.path_params["handle"])
        people = self.db.all("SELECT x.* FROM follows f JOIN accounts x ON x.id = f.follower_id WHERE f.followee_id = ? ORDER BY x.name",
                             (a["id"],))
        return self._page(f'{a["name"]} · {self.t("Followers")}', self._who_tabs(a, "followers") + self._people(people, attr="data-follower"))

    async def follow(self, request: Request) -> Response:
        a = self._account(request.path_params["handle"])
        on = _form_text(await request.form(), "on") == "1"
        if a["id"] == ME:
            raise Refused(self.t("You cannot follow yourself."))
        if on and a["id"] in self._blocked():
            raise Refused(self.t("You blocked this account. Unblock it first."), 403)
        have = self._follows(ME, a["id"])
        if on and not have:
            self.db.insert("INSERT INTO follows (follower_id, followee_id, created_at) VALUES (1,?,?)", (a["id"], self._stamp()))
        elif not on and have:
            self.db.execute("DELETE FROM follows WHERE follower_id = 1 AND followee_id = ?", (a["id"],))
        back = request.headers.get("referer", "")
        return RedirectResponse(back if back.startswith(str(request.base_url)) else f"/u/{a['handle']}", status_code=303)

    async def mute_account(self, request: Request) -> Response:
        a = self._account(request.path_params["handle"])
        if a["id"] == ME:
            raise Refused(self.t("You cannot mute yourself."))
        self._set_mute("account", a["handle"], _form_text(await request.form(), "on") == "1")
        return RedirectResponse(f"/u/{a['handle']}", status_code=303)

    async def block(self, request: Request) -> Response:
        a = self._account(request.path_params["handle"])
        if a["id"] == ME:
            raise Refused(self.t("You cannot block yourself."))
        blocked = a["id"] in self._blocked()
        if request.method == "GET":
            if blocked:
                return RedirectResponse(f"/u/{a['handle']}", status_code=303)
            body = (f'<div class="box confirm" role="alertdialog" aria-labelledby="blk-h"><h2 id="blk-h">{self.t("Block")} @{esc(a["handle"])}?</h2>'
                    f'<p>{self.t("They will not see your posts or message you, you will not see theirs, and neither of you will follow the other.")}</p>'
                    f'<form method="post" action="/u/{esc(a["handle"])}/block" class="row"><input type="hidden" name="on" value="1">'
                    f'<button type="submit" class="danger" data-action="confirm-block">{self.t("Block")}</button>'
                    f'<a class="button" href="/u/{esc(a["handle"])}" data-action="cancel-block">{self.t("Cancel")}</a></form></div>')
            return self._page(self.t("Block"), body)
        on = _form_text(await request.form(), "on") == "1"
        if on and not blocked:
            self.db.insert("INSERT INTO blocks (account_id, created_at) VALUES (?,?)", (a["id"], self._stamp()))
            self.db.execute("DELETE FROM follows WHERE (follower_id = 1 AND followee_id = ?) OR (follower_id = ? AND followee_id = 1)",
                            (a["id"], a["id"]))
        elif not on and blocked:
            self.db.execute("DELETE FROM blocks WHERE account_id = ?", (a["id"],))
        return RedirectResponse(f"/u/{a['handle']}", status_code=303)

    # --- lists ---

    async def lists(self, request: Request) -> Response:
        t = self.t
        if request.method == "POST":
            form = await request.form()
            name = _form_text(form, "name")
            if not name:
                raise Refused(t("A list needs a name."))
            if len(name) > 25:
                raise Refused(t("A list's name is at most 25 characters."))
            if self.db.scalar("SELECT COUNT(*) FROM lists WHERE lower(name) = lower(?)", (name,)):
                raise Refused(t("You already have a list with that name."))
            lid = self.db.insert("INSERT INTO lists (name, description, private, created_at) VALUES (?,?,?,?)",
                                 (name, _form_text(form, "description")[:100], int(_form_text(form, "private") == "1"), self._stamp()))
            return RedirectResponse(f"/lists/{lid}", status_code=303)
        rows = self.db.all("SELECT l.*, (SELECT COUNT(*) FROM list_members m WHERE m.list_id = l.id) AS n FROM lists l ORDER BY l.name")
        items = "".join(f'<li data-list-id="{r["id"]}" data-list="{esc(r["name"])}"><a href="/lists/{r["id"]}"><strong>{esc(r["name"])}</strong></a>'
                        f'<span class="muted">{esc(r["description"])} · {self._num(r["n"])} {t("members")}{" · " + t("Private") if r["private"] else ""}</span></li>'
                        for r in rows)
        create = (f'<form method="post" action="/lists" class="box stack" data-form="new-list"><h2>{t("New list")}</h2>'
                f'<label for="list-name">{t("Name")}</label><input id="list-name" name="name" maxlength="25" required data-field="list-name">'
                f'<label for="list-desc">{t("Description")}</label><input id="list-desc" name="description" maxlength="100" data-field="list-description">'
                f'<label class="check"><input type="checkbox" name="private" value="1" data-field="list-private"> {t("Private")}</label>'
                f'<button type="submit" class="primary" data-action="create-list">{t("Create list")}</button></form>')
        return self._page(t("Lists"), f'<ul class="rows lists">{items}</ul>{create}')

    def _list(self, lid: int) -> dict[str, Any]:
        lst = self.db.one("SELECT * FROM lists WHERE id = ?", (lid,))
        if lst is None:
            raise Refused(self.t("No such list."), 404)
        return lst

    async def show_list(self, request: Request) -> Response:
        lst = self._list(request.path_params["lid"])
        t = self.t
        members = self.db.all("SELECT a.* FROM list_members m JOIN accounts a ON a.id = m.account_id WHERE m.list_id = ? ORDER BY a.name", (lst["id"],))
        remove = {a["id"]: (f'<form method="post" action="/lists/{lst["id"]}/members" class="inline"><input type="hidden" name="op" value="remove">'
                            f'<input type="hidden" name="handle" value="{esc(a["handle"])}"><button type="submit" data-action="remove-member" '
                            f'aria-label="{esc(t("Remove") + " @" + a["handle"])}">{t("Remove")}</button></form>') for a in members}
        add = (f'<form method="post" action="/lists/{lst["id"]}/members" class="box row" data-form="add-member"><input type="hidden" name="op" value="add">'
               f'<label for="member">{t("Add someone by handle")}</label><input id="member" name="handle" placeholder="@handle" required data-field="member-handle">'
               f'<button type="submit" class="primary" data-action="add-member">{t("Add")}</button></form>')
        ids = [a["id"] for a in members]
        posts = self._visible(self.db.all(self._POSTS + f" WHERE p.author_id IN ({','.join('?' * len(ids))}) AND p.reply_to IS NULL "
                                          "ORDER BY p.created_at DESC, p.id DESC LIMIT 30", ids)) if ids else []
        body = (f'<p class="muted" data-list-id="{lst["id"]}">{esc(lst["description"])}</p>{add}'
                f'<h2>{t("Members")} ({self._num(len(members))})</h2><div data-members>{self._people(members, attr="data-member", extra=remove)}</div>'
                f'<h2>{t("Latest posts")}</h2>' + ("".join(self._card(p) for p in posts) or f'<p class="empty">{t("Nothing here yet.")}</p>'))
        return self._page(lst["name"], body)

    async def list_members(self, request: Request) -> Response:
        form = await request.form()
        lid = request.path_params["lid"] or (int(_form_text(form, "list_id")) if _form_text(form, "list_id").isdigit() else -1)
        lst = self._list(lid)
        op = _form_text(form, "op")
        raw = _form_text(form, "handle").lstrip("@").lower()
        if not raw:
            raise Refused(self.t("Type a handle, like @name."))
        a = self._account(raw)
        have = self.db.scalar("SELECT COUNT(*) FROM list_members WHERE list_id = ? AND account_id = ?", (lst["id"], a["id"]))
        if op == "add":
            if a["id"] in self._blocked():
                raise Refused(self.t("You blocked this account. Unblock it first."), 403)
            if not have:
                self.db.insert("INSERT INTO list_members (list_id, account_id, added_at) VALUES (?,?,?)", (lst["id"], a["id"], self._stamp()))
        elif op == "remove":
            self.db.execute("DELETE FROM list_members WHERE list_id = ? AND account_id = ?", (lst["id"], a["id"]))
        else:
            raise Refused(self.t("Say whether to add or remove."))
        return RedirectResponse(f"/lists/{lst['id']}", status_code=303)

    # --- notifications, messages, bookmarks ---

    async def notifications(self, request: Request) -> Response:
        t = self.t
        which = self.query(request)["filter"] or "all"
        if which not in ("all", "mentions", "unread"):
            raise Refused(t("Show all, mentions or unread."))
        where = {"all": "", "mentions": "WHERE n.kind IN ('mention', 'reply')", "unread": "WHERE n.read = 0"}[which]
        rows = self.db.all("SELECT n.*, a.handle, a.name, p.body, p.deleted_at FROM notifications n JOIN accounts a ON a.id = n.actor_id "
                           f"LEFT JOIN posts p ON p.id = n.post_id {where} ORDER BY n.created_at DESC, n.id DESC LIMIT 200")
        verbs = {"like": "liked your post", "reply": "replied to your post", "follow": "followed you", "mention": "mentioned you",
                 "repost": "reposted your post"}
        kinds = {"like": "like", "reply": "reply", "follow": "follow", "mention": "mention", "repost": "repost"}
        items = []
        for n in rows:
            snippet = ""
            if n["post_id"]:
                snippet = (f'<a class="snippet" href="/p/{n["post_id"]}">{esc((n["body"] or "")[:120])}</a>' if not n["deleted_at"]
                           else f'<span class="snippet muted">{t("This post was deleted by its author.")}</span>')
            mark = ("" if n["read"] else
                    f'<form method="post" action="/notifications/read" class="inline"><input type="hidden" name="id" value="{n["id"]}">'
                    f'<button type="submit" class="ghost" data-action="mark-read" aria-label="{esc(t("Mark read"))}: {n["id"]}">{t("Mark read")}</button></form>')
            items.append(f'<li class="note{" unread" if not n["read"] else ""}" data-notification-id="{n["id"]}" data-kind="{n["kind"]}" '
                         f'data-read="{n["read"]}">{icon(kinds[n["kind"]])}<div><a href="/u/{esc(n["handle"])}" class="who"><strong>{esc(n["name"])}</strong></a> '
                         f'{t(verbs[n["kind"]])} · {self._when(n["created_at"])}{snippet}</div>{mark}</li>')
        tabs = "".join(f'<a href="/notifications?filter={k}" data-tab="{k}"{" aria-current=page" if k == which else ""}>{t(label)}</a>'
                       for k, label in (("all", "All"), ("mentions", "Mentions"), ("unread", "Unread")))
        body = (f'<nav class="tabs" aria-label="{t("Notifications")}">{tabs}</nav>'
                f'<form method="post" action="/notifications/read" class="row"><input type="hidden" name="id" value="all">'
                f'<button type="submit" data-action="mark-all-read">{t("Mark all as read")}</button></form>'
                + (f'<ul class="notes">{"".join(items)}</ul>' if items else f'<p class="empty" role="status">{t("Nothing here yet.")}</p>'))
        return self._page(t("Notifications"), body)

    async def read_notifications(self, request: Request) -> Response:
        which = _form_text(await request.form(), "id")
        if which == "all":
            self.db.execute("UPDATE notifications SET read = 1 WHERE read = 0")
        elif which.isdigit() and self.db.scalar("SELECT COUNT(*) FROM notifications WHERE id = ?", (int(which),)):
            self.db.execute("UPDATE notifications SET read = 1 WHERE id = ?", (int(which),))
        else:
            raise Refused(self.t("No such notification."), 404)
        back = request.headers.get("referer", "")
        return RedirectResponse(back if back.startswith(str(request.base_url)) else "/notifications", status_code=303)

    async def inbox(self, request: Request) -> Response:
        t = self.t
        if request.method == "POST":
            a = self._account(_form_text(await request.form(), "to") or "@")
            return RedirectResponse(f"/messages/{a['handle']}", status_code=303)
        rows = self.db.all("SELECT m.peer_id, a.handle, a.name, MAX(m.created_at) AS last, SUM(m.from_me = 0 AND m.read = 0) AS unread, "
                           "(SELECT body FROM messages x WHERE x.peer_id = m.peer_id ORDER BY x.created_at DESC, x.id DESC LIMIT 1) AS body "
                           "FROM messages m JOIN accounts a ON a.id = m.peer_id GROUP BY m.peer_id ORDER BY last DESC")
        blocked = self._blocked()
        items = "".join(
            f'<li class="dm-row{" unread" if r["unread"] else ""}" data-peer="{esc(r["handle"])}" data-unread="{r["unread"]}">'
            f'{self._avatar(r["handle"], r["name"])}<a href="/messages/{esc(r["handle"])}" class="dm-main"><strong>{esc(r["name"])}</strong> '
            f'<span class="muted">@{esc(r["handle"])} · {self._when(r["last"])}</span><span class="snippet">{esc(r["body"][:90])}</span></a>'
            + (f'<span class="badge" aria-label="{esc(t("unread"))}">{r["unread"]}</span>' if r["unread"] else "") + "</li>"
            for r in rows if r["peer_id"] not in blocked)
        new = (f'<form method="post" action="/messages" class="box row" data-form="new-message"><label for="dm-to">{t("New message to")}</label>'
               f'<input id="dm-to" name="to" placeholder="@handle" required data-field="dm-to">'
               f'<button type="submit" class="primary" data-action="start-message">{t("Next")}</button></form>')
        return self._page(t("Messages"), new + f'<ul class="dms">{items}</ul>')

    async def conversation(self, request: Request) -> Response:
        a = self._account(request.path_params["handle"])
        t = self.t
        if a["id"] == ME:
            raise Refused(t("You cannot message yourself."))
        if a["id"] in self._blocked():
            raise Refused(t("You blocked this account. Unblock it first."), 403)
        if request.method == "POST":
            body = _form_text(await request.form(), "body")
            if not body:
                raise Refused(t("The message is empty: write something first."))
            if len(body) > MAX_DM:
                raise Refused(t("A message is at most 1,000 characters."))
            self.db.execute("UPDATE messages SET read = 1 WHERE peer_id = ? AND from_me = 0 AND read = 0", (a["id"],))
            self.db.insert("INSERT INTO messages (peer_id, from_me, body, created_at, read) VALUES (?,1,?,?,1)", (a["id"], body, self._stamp()))
            return RedirectResponse(f"/messages/{a['handle']}", status_code=303)
        msgs = self.db.all("SELECT * FROM messages WHERE peer_id = ? ORDER BY created_at, id", (a["id"],))
        bubbles = "".join(f'<li class="bubble {"mine" if m["from_me"] else "theirs"}" data-message-id="{m["id"]}" data-from-me="{m["from_me"]}" '
                          f'data-read="{m["read"]}"><p>{esc(m["body"])}</p>{self._when(m["created_at"])}</li>' for m in msgs)
        form = (f'<form method="post" action="/messages/{esc(a["handle"])}" class="dm-compose" data-form="dm">'
                f'<label class="sr" for="dm-body">{t("Message")} @{esc(a["handle"])}</label>'
                f'<textarea id="dm-body" name="body" rows="2" required maxlength="{MAX_DM}" data-field="dm-body" placeholder="{t("Start a message")}"></textarea>'
                f'<button type="submit" class="primary" data-action="send-message">{icon("send")} {t("Send")}</button></form>')
        head = (f'<p class="dm-head" data-peer="{esc(a["handle"])}">{self._avatar(a["handle"], a["name"])}'
                f'<a href="/u/{esc(a["handle"])}"><strong>{esc(a["name"])}</strong></a> <span class="muted">@{esc(a["handle"])}</span></p>')
        return self._page(a["name"], head + f'<ol class="bubbles" aria-label="{t("Conversation")}">{bubbles}</ol>' + form)

    async def bookmarks(self, request: Request) -> Response:
        posts = self.db.all(self._POSTS + " JOIN bookmarks b ON b.post_id = p.id ORDER BY b.created_at DESC, b.id DESC")
        return self._page(self.t("Bookmarks"), self._feed([(p, None) for p in self._visible(posts)], self._page_no(request), "/bookmarks"))

    # --- settings ---

    async def settings(self, request: Request) -> Response:
        t = self.t
        if request.method == "POST":
            form = await request.form()
            policy = _form_text(form, "reply_policy")
            if policy not in REPLY_POLICIES:
                raise Refused(t("Choose who can reply: everyone, accounts you follow, or only accounts you mention."))
            self.db.execute("UPDATE settings SET reply_policy = ?, show_sensitive = ? WHERE id = 1",
                            (policy, int(_form_text(form, "show_sensitive") == "1")))
            return RedirectResponse("/settings?saved=1", status_code=303)
        s = self.db.one("SELECT * FROM settings WHERE id = 1")
        assert s is not None
        radios = "".join(f'<label class="check"><input type="radio" name="reply_policy" value="{k}" data-policy="{k}"'
                         f'{" checked" if s["reply_policy"] == k else ""}> {t(v)}</label>' for k, v in REPLY_POLICIES.items())
        mutes = self.db.all("SELECT * FROM mutes ORDER BY kind, target")
        muted = "".join(
            f'<li data-mute="{esc(m["kind"])}:{esc(m["target"])}">{"#" if m["kind"] == "hashtag" else "@"}{esc(m["target"])}'
            f'<form method="post" action="/settings/mutes" class="inline"><input type="hidden" name="op" value="remove">'
            f'<input type="hidden" name="kind" value="{esc(m["kind"])}"><input type="hidden" name="target" value="{esc(m["target"])}">'
            f'<button type="submit" data-action="unmute" aria-label="{esc(t("Unmute"))} {esc(m["target"])}">{t("Unmute")}</button></form></li>' for m in mutes)
        blocked = "".join(
            f'<li data-blocked="{esc(b["handle"])}"><a href="/u/{esc(b["handle"])}">@{esc(b["handle"])}</a></li>'
            for b in self.db.all("SELECT a.handle FROM blocks b JOIN accounts a ON a.id = b.account_id ORDER BY a.handle"))
        body = (('<p class="ok" role="status" data-saved>' + t("Settings saved.") + "</p>" if request.query_params.get("saved") else "")
                + f'<form method="post" action="/settings" class="box stack" data-form="settings"><h2>{t("Privacy and safety")}</h2>'
                f'<fieldset><legend>{t("Who can reply to your posts")}</legend>{radios}</fieldset>'
                f'<label class="check"><input type="checkbox" name="show_sensitive" value="1" data-field="show-sensitive"'
                f'{" checked" if s["show_sensitive"] else ""}> {t("Show posts marked as sensitive")}</label>'
                f'<button type="submit" class="primary" data-action="save-settings">{t("Save")}</button></form>'
                f'<section class="box" aria-labelledby="h-muted"><h2 id="h-muted">{t("Muted")}</h2><ul class="rows">{muted}</ul>'
                f'<form method="post" action="/settings/mutes" class="row" data-form="mute-hashtag"><input type="hidden" name="op" value="add">'
                f'<input type="hidden" name="kind" value="hashtag"><label for="mute-tag">{t("Mute a hashtag")}</label>'
                f'<input id="mute-tag" name="target" placeholder="#hashtag" required data-field="mute-hashtag">'
                f'<button type="submit" data-action="add-mute">{t("Mute")}</button></form></section>'
                f'<section class="box" aria-labelledby="h-blocked"><h2 id="h-blocked">{t("Blocked accounts")}</h2><ul class="rows">{blocked}</ul></section>'
                f'<section class="box" aria-labelledby="h-sec"><h2 id="h-sec">{t("Security")}</h2>'
                f'<p>{t("Backup code for signing in without your phone. Keep it secret: Murmur staff will never ask for it.")}</p>'
                f'<p><code class="secret" data-secret>{esc(s["backup_code"])}</code></p></section>'
                f'<p><a class="button" href="/settings/profile" data-action="edit-profile">{t("Edit profile")}</a></p>')
        return self._page(t("Settings"), body)

    async def settings_mutes(self, request: Request) -> Response:
        form = await request.form()
        kind, op = _form_text(form, "kind"), _form_text(form, "op")
        target = _form_text(form, "target").lstrip("#@").lower()
        if kind not in ("hashtag", "account") or op not in ("add", "remove") or not target:
            raise Refused(self.t("Name a hashtag or an account to mute."))
        if kind == "account":
            target = self._account(target)["handle"]
        self._set_mute(kind, target, op == "add")
        return RedirectResponse("/settings", status_code=303)

    async def edit_profile(self, request: Request) -> Response:
        t = self.t
        me = self.db.one("SELECT * FROM accounts WHERE id = 1")
        assert me is not None
        if request.method == "POST":
            form = await request.form()
            name, bio = _form_text(form, "name"), " ".join(_form_text(form, "bio").split())
            location, link = _form_text(form, "location"), _form_text(form, "link")
            if not name or len(name) > 50:
                raise Refused(t("A name is 1 to 50 characters."))
            if len(bio) > 160:
                raise Refused(t("A bio is at most 160 characters."))
            if len(location) > 30:
                raise Refused(t("A location is at most 30 characters."))
            if link and (len(link) > 100 or not re.fullmatch(r"https?://[^\s/$.?#][^\s]*", link)):
                raise Refused(t("A link starts with https:// (or http://) and has no spaces."))
            self.db.execute("UPDATE accounts SET name = ?, bio = ?, location = ?, link = ? WHERE id = 1", (name, bio, location, link))
            return RedirectResponse("/u/ines_duarte", status_code=303)

        def field(key: str, label: str, limit: int, *, area: bool = False) -> str:
            value = esc(me[key])
            widget = (f'<textarea id="pf-{key}" name="{key}" rows="3" maxlength="{limit}" data-field="profile-{key}">{value}</textarea>' if area
                      else f'<input id="pf-{key}" name="{key}" value="{value}" maxlength="{limit}" data-field="profile-{key}">')
            return f'<label for="pf-{key}">{t(label)}</label>{widget}'
        body = ('<form method="post" action="/settings/profile" class="box stack" data-form="profile">'
                + field("name", "Name", 50) + field("bio", "Bio", 160, area=True) + field("location", "Location", 30) + field("link", "Website", 100)
                + f'<div class="row"><button type="submit" class="primary" data-action="save-profile">{t("Save")}</button>'
                f'<a class="button" href="/u/ines_duarte" data-action="cancel">{t("Cancel")}</a></div></form>')
        return self._page(t("Edit profile"), body)


APP = SocialApp
