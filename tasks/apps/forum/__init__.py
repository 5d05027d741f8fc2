"""Forum: posts with tags, nested comment threads, votes and infinite scroll.

Pages: `/` (posts, newest or top, loading 20 more via fetch whenever the end of the
list scrolls into view: INFINITE SCROLL, no pager), `/t/{tag}` (the same for a tag),
`/posts/{id}` (the post, up/down votes, nested comments with reply forms, delete of
your own comments behind a confirm modal), `/submit` (new post), `/search?q=`,
`/u/{name}` (a member's posts). Votes post to `/api/vote` and are stored before the
response; a second click on the same arrow takes the vote back, as users expect.
The signed-in member is `morgan_k`.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.forum.content import ME
from cua.tasks.apps.forum.locale import DE, count, when
from cua.tasks.apps.forum.seed import TAGS, seed_forum
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, joined TEXT NOT NULL);
CREATE TABLE tags (name TEXT PRIMARY KEY);
CREATE TABLE posts (
    id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL REFERENCES users(id), title TEXT NOT NULL, body TEXT NOT NULL,
    tag TEXT NOT NULL REFERENCES tags(name), created TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE comments (
    id INTEGER PRIMARY KEY, post_id INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    parent_id INTEGER REFERENCES comments(id) ON DELETE CASCADE, author_id INTEGER NOT NULL REFERENCES users(id),
    body TEXT NOT NULL, created TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX comments_post ON comments (post_id);
CREATE TABLE votes (
    kind TEXT NOT NULL CHECK (kind IN ('post', 'comment')), target_id INTEGER NOT NULL,
    value INTEGER NOT NULL CHECK (value IN (-1, 1)), PRIMARY KEY (kind, target_id)
);
"""
PAGE = 20
NAV = [("Latest", "/"), ("Top", "/?sort=top"), ("New post", "/submit"), ("Search", "/search")]


class ForumApp(WebApp):
    name = "forum"
    title = "DevTalk"
    schema = SCHEMA
    derived = {"posts.author": ("posts.author_id",), "posts.comment_count": ("comments.post_id",),
               "posts.my_vote": ("votes.value",), "posts.score": ("votes.value",),
               "comments.author": ("comments.author_id",), "comments.my_vote": ("votes.value",),
               "comments.score": ("votes.value",)}  # a score moves only with my vote
    assigned = {"comments": ("author_id", "score"), "posts": ("author_id", "score")}
    static_dir = Path(__file__).parent / "static"
    #: sidebar: the communities' column on the left of the feed; dense: one-line rows, tags in a strip above
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)

    def t(self, text: str) -> str:
        if self.variant.locale == "de-DE" and text in DE:
            return DE[text]
        return super().t(text)

    def _when(self, iso: str) -> str:
        return when(iso, self.variant.locale)

    def _comments(self, n: int) -> str:
        """`3 comments` / `3 Kommentare`."""
        return f'{count(n, self.variant.locale)} {self.t("comment" if n == 1 else "comments")}'

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_forum(db, rng, self.now())

    def state(self) -> dict[str, Any]:
        posts = self.db.all(
            "SELECT p.id, u.name AS author, p.title, p.body, p.tag, p.created, p.score, COALESCE(v.value, 0) AS my_vote, "
            "(SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id) AS comment_count FROM posts p "
            "JOIN users u ON u.id = p.author_id LEFT JOIN votes v ON v.kind = 'post' AND v.target_id = p.id ORDER BY p.id")
        comments = self.db.all(
            "SELECT c.id, c.post_id, c.parent_id, u.name AS author, c.body, c.created, c.score, COALESCE(v.value, 0) AS my_vote "
            "FROM comments c JOIN users u ON u.id = c.author_id LEFT JOIN votes v ON v.kind = 'comment' AND v.target_id = c.id ORDER BY c.id")
        return {"me": ME, "posts": posts, "comments": comments}

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.index),
            Route("/t/{tag}", self.index),
            Route("/api/posts", self.api_posts),
            Route("/api/vote", self.api_vote, methods=["POST"]),
            Route("/posts/{post_id:int}", self.post),
            Route("/posts/{post_id:int}/comments", self.add_comment, methods=["POST"]),
            Route("/comments/{comment_id:int}/delete", self.delete_comment, methods=["POST"]),
            Route("/submit", self.submit, methods=["GET", "POST"]),
            Route("/search", self.search),
            Route("/u/{name}", self.profile),
        ]

    def _me_id(self) -> int:
        return int(self.db.scalar("SELECT id FROM users WHERE name = ?", (ME,)))

    def _page(self, title: str, body: str) -> Response:
        tags = "".join(f'<a class="tag-link" href="/t/{t}" data-tag="{t}">#{t}</a>' for t in TAGS)
        layout = (f'<div class="forum"><section class="feed" aria-label="{self.t("Feed")}">{body}</section>'
                  f'<aside class="sidebar" aria-label="{self.t("Community")}"><div class="card"><strong>{self.t("Signed in as")}</strong> <a href="/u/{ME}">{ME}</a></div>'
                  f'<div class="card"><h2>{self.t("Tags")}</h2><div class="tags">{tags}</div></div></aside></div>')
        return html_page(self, title, layout, nav=NAV, scripts=["/static/app/forum.js"])

    def _votes(self, kind: str, target: int, score: int, mine: int) -> str:
        return (f'<div class="votes" data-kind="{kind}" data-id="{target}">'
                f'<button type="button" class="vote up" data-value="1" aria-label="{self.t("Upvote")}" aria-pressed="{"true" if mine == 1 else "false"}">▲</button>'
                f'<span class="score" aria-label="{self.t("Score")}">{count(score, self.variant.locale)}</span>'
                f'<button type="button" class="vote down" data-value="-1" aria-label="{self.t("Downvote")}" aria-pressed="{"true" if mine == -1 else "false"}">▼</button></div>')

    def _post_query(self, where: str = "1=1", order: str = "p.created DESC, p.id DESC") -> str:
        return ("SELECT p.*, u.name AS author, COALESCE(v.value, 0) AS my_vote, "
                "(SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id) AS n_comments FROM posts p "
                "JOIN users u ON u.id = p.author_id LEFT JOIN votes v ON v.kind = 'post' AND v.target_id = p.id "
                f"WHERE {where} ORDER BY {order}")

    def _post_items(self, posts: list[dict[str, Any]]) -> str:
        return "".join(
            f'<article class="card post-item" data-id="{p["id"]}">{self._votes("post", p["id"], p["score"], p["my_vote"])}'
            f'<div class="post-main"><a class="post-title" href="/posts/{p["id"]}">{esc(p["title"])}</a>'
            f'<div class="meta muted"><a class="tag" href="/t/{esc(p["tag"])}">#{esc(p["tag"])}</a> · {self.t("by")} <a href="/u/{esc(p["author"])}">{esc(p["author"])}</a>'
            f' · <time datetime="{esc(p["created"])}">{esc(self._when(p["created"]))}</time> · <a href="/posts/{p["id"]}#comments" data-comments="{p["n_comments"]}">{self._comments(p["n_comments"])}</a></div></div></article>'
            for p in posts)

    def _listing(self, tag: str | None, sort: str, offset: int) -> tuple[list[dict[str, Any]], bool]:
        order = "p.score DESC, p.id DESC" if sort == "top" else "p.created DESC, p.id DESC"
        where, params = ("p.tag = ?", [tag]) if tag else ("1=1", [])
        rows = self.db.all(self._post_query(where, order) + " LIMIT ? OFFSET ?", [*params, PAGE + 1, offset])
        return rows[:PAGE], len(rows) > PAGE

    async def index(self, request: Request) -> Response:
        tag = request.path_params.get("tag")
        if tag is not None and tag not in TAGS:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such tag.')}</div>")
        sort = "top" if request.query_params.get("sort") == "top" else "new"
        posts, more = self._listing(tag, sort, 0)
        heading = f"#{tag}" if tag else self.t("Top posts" if sort == "top" else "Latest posts")
        base = f"/t/{tag}" if tag else "/"
        sorter = (f'<div class="sorter"><a class="{"active" if sort == "new" else ""}" href="{base}" data-sort="new">{self.t("Newest")}</a>'
                  f'<a class="{"active" if sort == "top" else ""}" href="{base}?sort=top" data-sort="top">{self.t("Top")}</a></div>')
        loading, end = self.t("Loading more…"), self.t("You have reached the end.")
        feed = (f'<div id="post-list" data-sort="{sort}" data-tag="{esc(tag or "")}" data-offset="{len(posts)}" data-more="{"1" if more else "0"}">'
                f'{self._post_items(posts)}</div>'
                f'<div id="feed-end" class="muted feed-end" aria-live="polite" data-loading-text="{loading}" data-end-text="{end}">'
                f'{loading if more else end}</div>')
        return self._page(heading, f'<div class="row head"><h1>{esc(heading)}</h1>{sorter}</div>{feed}')

    async def api_posts(self, request: Request) -> Response:
        q = request.query_params
        tag = q.get("tag") or None
        if tag is not None and tag not in TAGS:
            return JSONResponse({"error": "no such tag"}, status_code=400)
        offset = int(q.get("offset", "0")) if q.get("offset", "0").isdigit() else 0
        posts, more = self._listing(tag, "top" if q.get("sort") == "top" else "new", offset)
        return JSONResponse({"html": self._post_items(posts), "count": len(posts), "more": more})

    async def api_vote(self, request: Request) -> Response:
        try:
            payload = await request.json()
            kind, target, value = str(payload["kind"]), int(payload["id"]), int(payload["value"])
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "expected {kind, id, value}"}, status_code=400)
        table = {"post": "posts", "comment": "comments"}.get(kind)
        if table is None or value not in (-1, 1) or self.db.one(f"SELECT id FROM {table} WHERE id = ?", (target,)) is None:
            return JSONResponse({"error": "no such post or comment, or a bad vote"}, status_code=400)
        old = int(self.db.scalar("SELECT value FROM votes WHERE kind = ? AND target_id = ?", (kind, target)) or 0)
        new = 0 if old == value else value
        if new:
            self.db.execute("INSERT INTO votes (kind, target_id, value) VALUES (?, ?, ?) "
                            "ON CONFLICT (kind, target_id) DO UPDATE SET value = excluded.value", (kind, target, new))
        else:
            self.db.execute("DELETE FROM votes WHERE kind = ? AND target_id = ?", (kind, target))
        self.db.execute(f"UPDATE {table} SET score = score + ? WHERE id = ?", (new - old, target))
        score = self.db.scalar(f"SELECT score FROM {table} WHERE id = ?", (target,))
        return JSONResponse({"score": score, "my_vote": new})

    async def post(self, request: Request) -> Response:
        pid = request.path_params["post_id"]
        posts = self.db.all(self._post_query("p.id = ?"), (pid,))
        if not posts:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such post.')}</div>")
        p = posts[0]
        comments = self.db.all(
            "SELECT c.*, u.name AS author, COALESCE(v.value, 0) AS my_vote FROM comments c JOIN users u ON u.id = c.author_id "
            "LEFT JOIN votes v ON v.kind = 'comment' AND v.target_id = c.id WHERE c.post_id = ? ORDER BY c.created, c.id", (pid,))
        children: dict[int | None, list[dict[str, Any]]] = {}
        for c in comments:
            children.setdefault(c["parent_id"], []).append(c)

        t = self.t

        def thread(parent: int | None, depth: int) -> str:
            out = []
            for c in children.get(parent, []):
                mine = c["author"] == ME
                delete = (f'<button type="button" class="link delete-open" data-id="{c["id"]}" data-action="delete">{t("Delete")}</button>' if mine else "")
                out.append(
                    f'<li class="comment" id="c{c["id"]}" data-id="{c["id"]}" data-author="{esc(c["author"])}">'
                    f'<div class="comment-box">{self._votes("comment", c["id"], c["score"], c["my_vote"])}'
                    f'<div class="comment-main"><div class="meta muted"><a href="/u/{esc(c["author"])}">{esc(c["author"])}</a> · '
                    f'<time datetime="{esc(c["created"])}">{esc(self._when(c["created"]))}</time></div>'
                    f'<div class="comment-body">{esc(c["body"])}</div>'
                    f'<div class="comment-actions"><button type="button" class="link reply-open" data-action="reply" aria-expanded="false" aria-controls="reply-{c["id"]}">{t("Reply")}</button>{delete}</div>'
                    f'<form class="reply-form" id="reply-{c["id"]}" method="post" action="/posts/{pid}/comments" hidden>'
                    f'<input type="hidden" name="parent_id" value="{c["id"]}"><textarea name="body" rows="3" required aria-label="{t("Reply to")} {esc(c["author"])}"></textarea>'
                    f'<div class="row"><button type="submit" class="primary" data-action="send-reply">{t("Reply")}</button><button type="button" class="reply-cancel" data-action="cancel">{t("Cancel")}</button></div></form>'
                    f'</div></div>{thread(c["id"], depth + 1)}</li>')
            return f'<ul class="thread depth-{min(depth, 6)}">{"".join(out)}</ul>' if out else ""

        paragraphs = "".join(f"<p>{esc(par)}</p>" for par in p["body"].split("\n\n"))
        body = (f'<article class="card post-full" data-id="{pid}">{self._votes("post", pid, p["score"], p["my_vote"])}'
                f'<div class="post-main"><h1>{esc(p["title"])}</h1><div class="meta muted"><a class="tag" href="/t/{esc(p["tag"])}">#{esc(p["tag"])}</a>'
                f' · {t("by")} <a href="/u/{esc(p["author"])}">{esc(p["author"])}</a> · <time datetime="{esc(p["created"])}">{esc(self._when(p["created"]))}</time></div>'
                f'<div class="post-body">{paragraphs}</div></div></article>'
                f'<section id="comments"><h2>{self._comments(len(comments))}</h2>'
                f'<form class="card comment-form" method="post" action="/posts/{pid}/comments"><label for="new-comment">{t("Add a comment")}</label>'
                f'<textarea id="new-comment" name="body" rows="3" required></textarea><button type="submit" class="primary" data-action="comment">{t("Comment")}</button></form>'
                f'{thread(None, 0)}</section>'
                f'<div class="modal-backdrop" id="delete-modal" hidden><div class="modal" role="dialog" aria-modal="true" aria-label="{t("Delete comment")}">'
                f'<p>{t("Delete your comment? Replies to it are deleted too.")}</p><form method="post" id="delete-form" class="row">'
                f'<button type="submit" class="danger" id="delete-confirm" data-action="confirm-delete">{t("Delete")}</button><button type="button" id="delete-cancel" data-action="keep">{t("Cancel")}</button></form></div></div>')
        return self._page(p["title"], body)

    async def add_comment(self, request: Request) -> Response:
        pid = request.path_params["post_id"]
        if self.db.one("SELECT id FROM posts WHERE id = ?", (pid,)) is None:
            return RedirectResponse("/", status_code=303)
        form = await request.form()
        text = str(form.get("body", "")).strip()[:5000]
        parent = str(form.get("parent_id", "")).strip()
        parent_id = int(parent) if parent.isdigit() and self.db.one(
            "SELECT id FROM comments WHERE id = ? AND post_id = ?", (int(parent), pid)) else None
        if not text:
            return RedirectResponse(f"/posts/{pid}", status_code=303)
        new_id = self.db.insert("INSERT INTO comments (post_id, parent_id, author_id, body, created, score) VALUES (?, ?, ?, ?, ?, 1)",
                              (pid, parent_id, self._me_id(), text, self.now().isoformat(timespec="minutes")))
        return RedirectResponse(f"/posts/{pid}#c{new_id}", status_code=303)

    async def delete_comment(self, request: Request) -> Response:
        c = self.db.one("SELECT * FROM comments WHERE id = ?", (request.path_params["comment_id"],))
        if c is None:
            return RedirectResponse("/", status_code=303)
        if c["author_id"] == self._me_id():
            self.db.execute("DELETE FROM comments WHERE id = ?", (c["id"],))
        return RedirectResponse(f"/posts/{c['post_id']}#comments", status_code=303)

    async def submit(self, request: Request) -> Response:
        error, values = "", {"title": "", "body": "", "tag": ""}
        if request.method == "POST":
            form = await request.form()
            values = {k: str(form.get(k, "")).strip() for k in values}
            if len(values["title"]) < 5:
                error = self.t("Give your post a title of at least 5 characters.")
            elif values["tag"] not in TAGS:
                error = self.t("Choose a tag.")
            elif not values["body"]:
                error = self.t("Write something in the body.")
            else:
                new_id = self.db.insert("INSERT INTO posts (author_id, title, body, tag, created, score) VALUES (?, ?, ?, ?, ?, 1)",
                                      (self._me_id(), values["title"][:200], values["body"][:20000], values["tag"],
                                       self.now().isoformat(timespec="minutes")))
                return RedirectResponse(f"/posts/{new_id}", status_code=303)
        tags = "".join(f"<option value='{t}'{' selected' if t == values['tag'] else ''}>{t}</option>" for t in TAGS)
        t = self.t
        body = (f"<h1>{t('New post')}</h1>{'<div class=error>' + esc(error) + '</div>' if error else ''}"
                "<form class='card submit-form' method='post' action='/submit' data-form='submit'>"
                f"<label>{t('Title')}<input type='text' name='title' value='{esc(values['title'])}' required minlength='5'></label>"
                f"<label>{t('Tag')}<select name='tag' required><option value=''>{t('Choose a tag…')}</option>{tags}</select></label>"
                f"<label>{t('Body')}<textarea name='body' rows='8' required>{esc(values['body'])}</textarea></label>"
                f"<button type='submit' class='primary' data-action='publish'>{t('Publish')}</button></form>")
        return self._page(t("New post"), body)

    async def search(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        results = ""
        if q:
            posts = self.db.all(self._post_query("(p.title LIKE ? OR p.body LIKE ?)", "p.score DESC, p.id DESC") + " LIMIT 50",
                                (f"%{q}%", f"%{q}%"))
            results = f"<p class='muted'>{len(posts)} {self.t('result(s) for')} “{esc(q)}”</p>{self._post_items(posts)}"
        label = self.t("Search posts")
        form = (f"<form class='card row' method='get' action='/search' data-form='search'><input type='search' name='q' value='{esc(q)}' "
                f"aria-label='{label}' placeholder='{label}'><button type='submit' class='primary' data-action='search'>{self.t('Search')}</button></form>")
        return self._page(self.t("Search"), f"<h1>{self.t('Search')}</h1>{form}{results}")

    async def profile(self, request: Request) -> Response:
        u = self.db.one("SELECT * FROM users WHERE name = ?", (request.path_params["name"],))
        if u is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such member.')}</div>")
        posts = self.db.all(self._post_query("p.author_id = ?"), (u["id"],))
        karma = self.db.scalar("SELECT COALESCE(SUM(score), 0) FROM posts WHERE author_id = ?", (u["id"],))
        n_comments = self.db.scalar("SELECT COUNT(*) FROM comments WHERE author_id = ?", (u["id"],))
        t, loc = self.t, self.variant.locale
        body = (f"<div class='card profile'><h1>{esc(u['name'])}</h1><p class='muted'>{t('Joined')} "
                f"<time datetime='{esc(u['joined'])}'>{esc(self._when(u['joined']))}</time> · "
                f"<span id='karma' data-karma='{karma}'>{count(karma, loc)}</span> {t('post karma')} · "
                f"{count(len(posts), loc)} {t('posts')} · {count(n_comments, loc)} {t('comments')}</p></div>"
                f"<h2>{t('Posts')}</h2>{self._post_items(posts) or '<p class=muted>' + t('No posts yet.') + '</p>'}")
        return self._page(u["name"], body)


APP = ForumApp
