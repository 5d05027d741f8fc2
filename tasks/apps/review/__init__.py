"""Review: a code-review forge (Patchbay) for one organisation, signed in as its maintainer
Noor Haddad (`people.id` 1, `noor`).

Pages: `/` (review requests and my pull requests), `/pulls` (every pull request, with
status, repository, author, label and reviewer filters and a title search), `/repos`,
`/r/{repo}` (a file tree), `/r/{repo}/blob/{path}` (a file with line numbers),
`/r/{repo}/pull/{n}` (the conversation: description, checks, reviews and comments,
labels, reviewers, assignees, merge box, close/reopen), `/r/{repo}/pull/{n}/files` (the
diff, with line numbers, inline threads: comment on a line, reply, resolve; and the review
form: comment, approve or request changes, with a summary), `/r/{repo}/pull/{n}/merge`
(the merge confirmation: merge commit or squash), `/issues` (filters and search),
`/r/{repo}/issues/{n}`, `/u/{login}` (a profile) and `/notifications`.

The rules the server keeps whatever a page sends, each refused with a reason (400) and no
change: a pull request merges only when it is open (not a draft), every CI check passed,
someone other than its author approved it and no reviewer's latest review asks for
changes; nobody reviews their own pull request; request changes needs a summary; an inline
comment goes on a line the diff shows (its new side); a merged pull request is never
closed or reopened. Reviews are never deleted: a dismissed one stays, marked dismissed,
so what was approved stays approved in the history a judge reads. Dates are the app's
clock; the merge commit's sha is computed by the app. A merge is `merge` in the activity log.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule
from cua.tasks.apps.activity import new_value
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.review import locale
from cua.tasks.apps.review.seed import ORG, diff_lines, seed_review
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE people (id INTEGER PRIMARY KEY, login TEXT NOT NULL UNIQUE, name TEXT NOT NULL, locale TEXT NOT NULL,
                     location TEXT NOT NULL, email TEXT NOT NULL);
CREATE TABLE repos (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, name TEXT NOT NULL UNIQUE, language TEXT NOT NULL,
                    description TEXT NOT NULL, default_branch TEXT NOT NULL, stars INTEGER NOT NULL);
CREATE TABLE files (id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL REFERENCES repos(id), path TEXT NOT NULL, content TEXT NOT NULL);
CREATE TABLE labels (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, description TEXT NOT NULL, tone TEXT NOT NULL);
CREATE TABLE pulls (id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL REFERENCES repos(id), number INTEGER NOT NULL,
                    title TEXT NOT NULL, body TEXT NOT NULL, author_id INTEGER NOT NULL REFERENCES people(id),
                    base TEXT NOT NULL, head TEXT NOT NULL,
                    status TEXT NOT NULL CHECK (status IN ('open', 'draft', 'merged', 'closed')),
                    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, merged_at TEXT, merged_by INTEGER REFERENCES people(id),
                    merge_strategy TEXT NOT NULL DEFAULT '' CHECK (merge_strategy IN ('', 'merge', 'squash')),
                    merge_sha TEXT NOT NULL DEFAULT '', closed_at TEXT, UNIQUE (repo_id, number));
CREATE TABLE pull_files (id INTEGER PRIMARY KEY, pull_id INTEGER NOT NULL REFERENCES pulls(id), path TEXT NOT NULL,
                         additions INTEGER NOT NULL, deletions INTEGER NOT NULL, patch TEXT NOT NULL);
CREATE TABLE pull_lines (id INTEGER PRIMARY KEY, pull_id INTEGER NOT NULL REFERENCES pulls(id), path TEXT NOT NULL,
                         kind TEXT NOT NULL CHECK (kind IN ('add', 'del', 'ctx')), old_line INTEGER, new_line INTEGER, text TEXT NOT NULL);
CREATE TABLE pull_labels (id INTEGER PRIMARY KEY, pull_id INTEGER NOT NULL REFERENCES pulls(id),
                          label_id INTEGER NOT NULL REFERENCES labels(id), UNIQUE (pull_id, label_id));
CREATE TABLE pull_reviewers (id INTEGER PRIMARY KEY, pull_id INTEGER NOT NULL REFERENCES pulls(id),
                             person_id INTEGER NOT NULL REFERENCES people(id), UNIQUE (pull_id, person_id));
CREATE TABLE pull_assignees (id INTEGER PRIMARY KEY, pull_id INTEGER NOT NULL REFERENCES pulls(id),
                             person_id INTEGER NOT NULL REFERENCES people(id), UNIQUE (pull_id, person_id));
CREATE TABLE checks (id INTEGER PRIMARY KEY, pull_id INTEGER NOT NULL REFERENCES pulls(id), name TEXT NOT NULL,
                     status TEXT NOT NULL CHECK (status IN ('pass', 'fail', 'pending')), summary TEXT NOT NULL);
CREATE TABLE threads (id INTEGER PRIMARY KEY, pull_id INTEGER NOT NULL REFERENCES pulls(id), path TEXT NOT NULL,
                      line INTEGER NOT NULL, resolved INTEGER NOT NULL DEFAULT 0, resolved_by INTEGER REFERENCES people(id),
                      created_at TEXT NOT NULL);
CREATE TABLE comments (id INTEGER PRIMARY KEY, pull_id INTEGER NOT NULL REFERENCES pulls(id),
                       thread_id INTEGER REFERENCES threads(id), author_id INTEGER NOT NULL REFERENCES people(id),
                       body TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE reviews (id INTEGER PRIMARY KEY, pull_id INTEGER NOT NULL REFERENCES pulls(id),
                      author_id INTEGER NOT NULL REFERENCES people(id),
                      verdict TEXT NOT NULL CHECK (verdict IN ('approve', 'changes', 'comment')), body TEXT NOT NULL,
                      submitted_at TEXT NOT NULL, dismissed INTEGER NOT NULL DEFAULT 0, dismiss_reason TEXT NOT NULL DEFAULT '');
CREATE TABLE issues (id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL REFERENCES repos(id), number INTEGER NOT NULL,
                     title TEXT NOT NULL, body TEXT NOT NULL, author_id INTEGER NOT NULL REFERENCES people(id),
                     status TEXT NOT NULL CHECK (status IN ('open', 'closed')), created_at TEXT NOT NULL, closed_at TEXT);
CREATE TABLE issue_labels (id INTEGER PRIMARY KEY, issue_id INTEGER NOT NULL REFERENCES issues(id),
                           label_id INTEGER NOT NULL REFERENCES labels(id), UNIQUE (issue_id, label_id));
CREATE TABLE notifications (id INTEGER PRIMARY KEY, pull_id INTEGER NOT NULL REFERENCES pulls(id), kind TEXT NOT NULL,
                            text TEXT NOT NULL, at TEXT NOT NULL, read INTEGER NOT NULL DEFAULT 0);
"""

ME = 1
STATUSES = ("open", "draft", "merged", "closed")
VERDICTS = {"comment": "Comment", "approve": "Approve", "changes": "Request changes"}
STRATEGIES = {"merge": "Create a merge commit", "squash": "Squash and merge"}
MAX_BODY = 5000
NAV = [("Dashboard", "/"), ("Pull requests", "/pulls"), ("Issues", "/issues"), ("Repositories", "/repos"),
       ("Notifications", "/notifications"), ("Profile", "/u/noor")]
#: tables that hold no agent's change (the code and the diffs): left out of `state()`, still readable by SQL
STATIC_TABLES = ("files", "pull_files", "pull_lines")


class Refused(Exception):
    """Input the forge's rules refuse: shown with the reason, nothing changes. `message` is the
    English template (`{name}` fields filled from `fields`), so the page translates the sentence
    before filling it; the exception's text is the English one."""

    def __init__(self, message: str, status: int = 400, /, **fields: str) -> None:
        super().__init__(message.format(**fields))
        self.message, self.status, self.fields = message, status, fields


def merge_sha(repo: str, number: int, strategy: str, head: str) -> str:
    """The merge commit's sha: computed from what is merged, how, so a replay is the same."""
    return hashlib.sha1(f"{ORG}/{repo}#{number}:{strategy}:{head}".encode()).hexdigest()[:12]


def text_field(form: Any, key: str, what: str, *, required: bool = True) -> str:
    """A typed text (a comment, a summary): trimmed, at most `MAX_BODY` characters; Refused if blank and required."""
    value = str(form.get(key, "") or "").strip()
    if required and not value:
        raise Refused("{what} is empty: write something first.", what=what)
    if len(value) > MAX_BODY:
        raise Refused("{what} is at most {n} characters.", what=what, n=f"{MAX_BODY:,}")
    return value


class ReviewApp(WebApp):
    name = "review"
    title = "Patchbay"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
    #: the forge fills these itself: who did what (the signed-in maintainer), the merge commit
    assigned = {"pulls": ("merge_sha", "merged_by"), "comments": ("author_id",), "reviews": ("author_id",),
                "threads": ("resolved_by",)}
    query_params = {"q": QueryRule(strip=True), "status": QueryRule(strip=True, case="lower"), "repo": QueryRule(strip=True),
                    "author": QueryRule(strip=True), "label": QueryRule(strip=True), "reviewer": QueryRule(strip=True)}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_review(db, rng, self.now())

    def state(self) -> dict[str, Any]:
        return {k: v for k, v in self.db.dump().items() if k not in STATIC_TABLES}

    def irreversible(self, change: Change) -> str | None:
        """A merge has landed on the base branch: closing the pull request later does not unmerge it."""
        sets, value = new_value(change, "pulls", "status")
        return "merge" if sets and value == "merged" else None

    def routes(self) -> list[BaseRoute]:
        g = self._guarded
        pr = "/r/{repo}/pull/{n:int}"
        post = ["POST"]
        return [
            Route("/", g(self.dashboard)),
            Route("/pulls", g(self.pulls)),
            Route("/repos", g(self.repos)),
            Route("/r/{repo}", g(self.repo)),
            Route("/r/{repo}/blob/{path:path}", g(self.blob)),
            Route(pr, g(self.conversation)),
            Route(pr + "/files", g(self.files)),
            Route(pr + "/comment", g(self.comment), methods=post),
            Route(pr + "/line-comment", g(self.line_comment), methods=post),
            Route(pr + "/threads/{tid:int}/reply", g(self.reply), methods=post),
            Route(pr + "/threads/{tid:int}/resolve", g(self.resolve), methods=post),
            Route(pr + "/review", g(self.review), methods=post),
            Route(pr + "/reviews/{rid:int}/dismiss", g(self.dismiss), methods=post),
            Route(pr + "/labels", g(self.labels), methods=post),
            Route(pr + "/reviewers", g(self.reviewers), methods=post),
            Route(pr + "/assignees", g(self.assignees), methods=post),
            Route(pr + "/merge", g(self.merge), methods=["GET", "POST"]),
            Route(pr + "/close", g(self.close), methods=post),
            Route(pr + "/reopen", g(self.reopen), methods=post),
            Route(pr + "/ready", g(self.ready), methods=post),
            Route("/issues", g(self.issues)),
            Route("/r/{repo}/issues/{n:int}", g(self.issue)),
            Route("/r/{repo}/issues/{n:int}/state", g(self.issue_state), methods=post),
            Route("/u/{login}", g(self.profile)),
            Route("/notifications", g(self.notifications)),
            Route("/notifications/read", g(self.read_notifications), methods=post),
        ]

    # --- furniture ---

    def _guarded(self, handler: Any) -> Any:
        async def run(request: Request) -> Response:
            try:
                result: Response = await handler(request)
                return result
            except Refused as exc:
                back = request.headers.get("referer", "") if request.method == "POST" else ""
                href = back if back.startswith(str(request.base_url)) else "/"
                return self._page(self.t("Cannot do that"), f'<div class="alert" role="alert" data-error>{esc(self._refusal(exc))}</div>'
                                  f'<p><a href="{esc(href)}" data-action="back">{self.t("Go back")}</a></p>', status=exc.status)
        return run

    def t(self, text: str) -> str:
        """`text` in the variant's locale: the forge's own catalogue, then the shared one."""
        if self.variant.locale == "de-DE" and text in locale.DE:
            return locale.DE[text]
        return super().t(text)

    def _refusal(self, exc: Refused) -> str:
        """A refusal's sentence in the page's locale (its UI words -- a status, a kind, what was empty -- too)."""
        words = ("what", "status", "kind", "state", "path")
        return self.t(exc.message).format(**{k: self.t(v) if k in words else v for k, v in exc.fields.items()})

    def _html(self, template: str, **parts: str) -> str:
        """A translated sentence around markup `parts` (each already escaped), so each locale orders them."""
        return esc(self.t(template)).format(**parts)

    def _when(self, stamp: str) -> str:
        return locale.stamp(stamp, self.variant.locale)

    def _page(self, title: str, body: str, *, status: int = 200, crumbs: str = "") -> HTMLResponse:
        unread = self.db.scalar("SELECT COUNT(*) FROM notifications WHERE read = 0")
        nav = [(f"{self.t(label)} ({unread})" if href == "/notifications" and unread else label, href) for label, href in NAV]
        resp = html_page(self, title, f'<div class="page">{crumbs}<h1 class="page-title">{esc(title)}</h1>{body}</div>', nav=nav)
        resp.status_code = status
        return resp

    def _stamp(self) -> str:
        return self.now().strftime("%Y-%m-%d %H:%M")

    def _repo(self, name: str) -> dict[str, Any]:
        r = self.db.one("SELECT * FROM repos WHERE name = ?", (name,))
        if r is None:
            raise Refused("No repository {org}/{name}.", 404, org=ORG, name=name)
        return r

    def _pull(self, request: Request) -> dict[str, Any]:
        repo = self._repo(request.path_params["repo"])
        p = self.db.one("SELECT p.*, a.login AS author, a.name AS author_name FROM pulls p JOIN people a ON a.id = p.author_id "
                        "WHERE p.repo_id = ? AND p.number = ?", (repo["id"], request.path_params["n"]))
        if p is None:
            raise Refused("No pull request #{n} in {org}/{repo}.", 404, n=str(request.path_params["n"]), org=ORG, repo=repo["name"])
        p["repo"] = repo["name"]
        return p

    @staticmethod
    def _url(p: dict[str, Any], tail: str = "") -> str:
        return f"/r/{p['repo']}/pull/{p['number']}{tail}"

    def _back(self, p: dict[str, Any], tail: str = "") -> RedirectResponse:
        return RedirectResponse(self._url(p, tail), status_code=303)

    @staticmethod
    def _error(error: str) -> str:
        return f'<div class="alert" role="alert" data-error>{esc(error)}</div>' if error else ""

    def _person(self, pid: int | None) -> str:
        if pid is None:
            return ""
        p = self.db.one("SELECT login, name FROM people WHERE id = ?", (pid,))
        return f'<a href="/u/{esc(p["login"])}" class="who" data-person="{esc(p["login"])}">{esc(p["name"])}</a>' if p else ""

    def _labels_of(self, pid: int) -> list[dict[str, Any]]:
        return self.db.all("SELECT l.* FROM labels l JOIN pull_labels x ON x.label_id = l.id WHERE x.pull_id = ? ORDER BY l.name", (pid,))

    @staticmethod
    def _chip(label: dict[str, Any]) -> str:
        return f'<span class="chip tone-{esc(label["tone"])}" data-label="{esc(label["name"])}">{esc(label["name"])}</span>'

    def _status_badge(self, status: str) -> str:
        return f'<span class="state state-{status}" data-status="{status}">{self.t(status.title())}</span>'

    def _checks_summary(self, pid: int) -> tuple[str, str]:
        rows = self.db.all("SELECT status FROM checks WHERE pull_id = ?", (pid,))
        overall = ("fail" if any(r["status"] == "fail" for r in rows) else "pending" if any(r["status"] == "pending" for r in rows)
                   else "pass")
        words = {"pass": "All checks passed", "fail": "Some checks failed", "pending": "Checks are running"}
        return overall, self.t(words[overall])

    def merge_blockers(self, p: dict[str, Any]) -> list[str]:
        """Why pull request `p` cannot merge now (empty: it can)."""
        out: list[str] = []
        t_ = self.t
        if p["status"] == "draft":
            out.append(t_("It is a draft: mark it ready for review first."))
        elif p["status"] != "open":
            out.append(t_("It is {status}.").format(status=t_(p["status"])))
        checks = self.db.all("SELECT name, status FROM checks WHERE pull_id = ? ORDER BY id", (p["id"],))
        failing = [c["name"] for c in checks if c["status"] == "fail"]
        pending = [c["name"] for c in checks if c["status"] == "pending"]
        if failing:
            out.append(t_("Failing checks: {names}.").format(names=", ".join(failing)))
        if pending:
            out.append(t_("Checks still running: {names}.").format(names=", ".join(pending)))
        latest = self.latest_reviews(p["id"])
        if not any(r["verdict"] == "approve" and r["author_id"] != p["author_id"] for r in latest.values()):
            out.append(t_("It needs an approving review from someone other than its author."))
        asking = [r["name"] for r in latest.values() if r["verdict"] == "changes"]
        if asking:
            out.append(t_("Changes requested by {names}.").format(names=", ".join(asking)))
        return out

    def latest_reviews(self, pid: int) -> dict[int, dict[str, Any]]:
        """Each reviewer's latest review that still counts (not dismissed, not a plain comment)."""
        out: dict[int, dict[str, Any]] = {}
        for r in self.db.all("SELECT r.*, a.name FROM reviews r JOIN people a ON a.id = r.author_id WHERE r.pull_id = ? "
                             "AND r.dismissed = 0 AND r.verdict != 'comment' ORDER BY r.submitted_at, r.id", (pid,)):
            out[r["author_id"]] = r
        return out

    # --- lists ---

    def _pull_rows(self, pulls: list[dict[str, Any]]) -> str:
        def row(p: dict[str, Any]) -> str:
            overall, words = self._checks_summary(p["id"])
            chips = "".join(self._chip(lab) for lab in self._labels_of(p["id"]))
            n_comments = self.db.scalar("SELECT COUNT(*) FROM comments WHERE pull_id = ?", (p["id"],))
            opened = self._html("{org}/{repo} #{n} · opened {date} by {who}", org=esc(ORG), repo=esc(p["repo"]), n=str(p["number"]),
                                date=esc(self._when(p["created_at"][:10])),
                                who=f'<span data-author="{esc(p["author"])}">{esc(p["author_name"])}</span>')
            count = self.t("1 comment") if n_comments == 1 else self.t("{n} comments").format(n=n_comments)
            return (f'<li class="pr-row" data-pull-id="{p["id"]}" data-repo="{esc(p["repo"])}" data-number="{p["number"]}" '
                    f'data-status="{p["status"]}"><span class="ci ci-{overall}" role="img" aria-label="{words}" data-checks="{overall}"></span>'
                    f'<div class="pr-main"><a class="pr-title" href="/r/{esc(p["repo"])}/pull/{p["number"]}">{esc(p["title"])}</a> {chips}'
                    f'<p class="muted">{opened}</p></div>'
                    f'{self._status_badge(p["status"])}<span class="count" data-comments="{n_comments}">{count}</span></li>')
        return (f'<ul class="pr-list" aria-label="{self.t("Pull requests")}">{"".join(row(p) for p in pulls)}</ul>' if pulls
                else f'<p class="empty" role="status" data-count="0">{self.t("No pull requests match.")}</p>')

    _PULLS = ("SELECT p.*, r.name AS repo, a.login AS author, a.name AS author_name FROM pulls p JOIN repos r ON r.id = p.repo_id "
              "JOIN people a ON a.id = p.author_id")

    async def dashboard(self, _: Request) -> Response:
        asked = self.db.all(self._PULLS + " WHERE p.status = 'open' AND p.id IN (SELECT pull_id FROM pull_reviewers WHERE person_id = 1) "
                            "AND p.id NOT IN (SELECT pull_id FROM reviews WHERE author_id = 1) ORDER BY p.created_at DESC")
        mine = self.db.all(self._PULLS + " WHERE p.author_id = 1 AND p.status IN ('open', 'draft') ORDER BY p.created_at DESC")
        t_ = self.t
        body = (f'<section aria-labelledby="h-asked" data-region="asked"><h2 id="h-asked">{t_("Waiting for your review ({n})").format(n=len(asked))}</h2>'
                f'{self._pull_rows(asked)}</section><section aria-labelledby="h-mine" data-region="mine"><h2 id="h-mine">{t_("Your open pull requests")}</h2>'
                f'{self._pull_rows(mine)}</section>')
        return self._page(t_("Dashboard"), body)

    async def pulls(self, request: Request) -> Response:
        q = self.query(request)
        status = q["status"] or "open"
        where, params, error = [], [], ""
        if status != "all":
            if status not in STATUSES:
                error, status = self.t("Status is one of: {statuses}, all.").format(statuses=", ".join(map(self.t, STATUSES))), "open"
            where.append("p.status = ?")
            params.append(status)
        if q["repo"]:
            where.append("r.name = ?")
            params.append(q["repo"])
        if q["author"]:
            where.append("a.login = ?")
            params.append(q["author"])
        if q["label"]:
            where.append("p.id IN (SELECT x.pull_id FROM pull_labels x JOIN labels l ON l.id = x.label_id WHERE l.name = ?)")
            params.append(q["label"])
        if q["reviewer"]:
            where.append("p.id IN (SELECT v.pull_id FROM pull_reviewers v JOIN people w ON w.id = v.person_id WHERE w.login = ?)")
            params.append(q["reviewer"])
        if q["q"]:
            where.append("(p.title LIKE ? OR CAST(p.number AS TEXT) = ?)")
            params += [f"%{q['q']}%", q["q"].lstrip("#")]
        rows = self.db.all(self._PULLS + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY p.created_at DESC, p.id DESC",
                           params)
        body = self._filters("/pulls", q, status, with_reviewer=True) + self._error(error)
        body += (f'<p class="muted" role="status" data-count="{len(rows)}">{self.t("{n} pull requests").format(n=len(rows))}</p>'
                 + self._pull_rows(rows))
        return self._page(self.t("Pull requests"), body, status=400 if error else 200)

    def _filters(self, action: str, q: dict[str, Any], status: str, *, with_reviewer: bool) -> str:
        statuses = (*STATUSES, "all") if action == "/pulls" else ("open", "closed", "all")

        def options(values: list[tuple[str, str]], current: str | None, any_label: str) -> str:
            return f'<option value="">{any_label}</option>' + "".join(
                f'<option value="{esc(v)}"{" selected" if current == v else ""}>{esc(t)}</option>' for v, t in values)
        repos = [(r["name"], r["name"]) for r in self.db.all("SELECT name FROM repos ORDER BY name")]
        people = [(p["login"], p["name"]) for p in self.db.all("SELECT login, name FROM people ORDER BY name")]
        labels = [(lab["name"], lab["name"]) for lab in self.db.all("SELECT name FROM labels ORDER BY name")]
        t_ = self.t
        st = "".join(f'<option value="{s}"{" selected" if s == status else ""}>{t_(s.title())}</option>' for s in statuses)
        reviewer = (f'<label>{t_("Reviewer")} <select name="reviewer" data-filter="reviewer">{options(people, q.get("reviewer"), t_("Anyone"))}</select></label>'
                    if with_reviewer else "")
        return (f'<form method="get" action="{action}" class="filters" role="search" data-form="filters">'
                f'<label class="grow">{t_("Search")} <input type="search" name="q" value="{esc(q["q"] or "")}" data-filter="q"></label>'
                f'<label>{t_("Status")} <select name="status" data-filter="status">{st}</select></label>'
                f'<label>{t_("Repository")} <select name="repo" data-filter="repo">{options(repos, q["repo"], t_("All"))}</select></label>'
                f'<label>{t_("Author")} <select name="author" data-filter="author">{options(people, q["author"], t_("Anyone"))}</select></label>'
                f'<label>{t_("Label")} <select name="label" data-filter="label">{options(labels, q["label"], t_("Any"))}</select></label>'
                f'{reviewer}<button type="submit" data-action="apply-filters">{t_("Filter")}</button></form>')

    async def repos(self, _: Request) -> Response:
        items = "".join(
            f'<li class="repo-card" data-repo="{esc(r["name"])}"><a href="/r/{esc(r["name"])}" class="repo-name">{esc(ORG)}/{esc(r["name"])}</a>'
            f'<p>{esc(r["description"])}</p><p class="muted">'
            + self._html("{language} · ★ {stars} · {n} open pull requests",
                         language=f'<span class="lang lang-{esc(r["language"])}">{esc(r["language"])}</span>',
                         stars=str(r["stars"]) if self.variant.locale == "en-US" else locale.number(r["stars"], self.variant.locale),
                         n=str(r["open"])) + '</p></li>'
            for r in self.db.all("SELECT r.*, (SELECT COUNT(*) FROM pulls p WHERE p.repo_id = r.id AND p.status = 'open') AS open "
                                 "FROM repos r ORDER BY r.name"))
        return self._page(self.t("Repositories"), f'<ul class="repo-list" data-region="repos">{items}</ul>')

    async def repo(self, request: Request) -> Response:
        r = self._repo(request.path_params["repo"])
        files = self.db.all("SELECT path, length(content) AS size FROM files WHERE repo_id = ? ORDER BY path", (r["id"],))
        tree = "".join(f'<li data-path="{esc(f["path"])}"><a href="/r/{esc(r["name"])}/blob/{esc(f["path"])}">📄 {esc(f["path"])}</a>'
                       f'<span class="muted">{esc(self.t("{n} bytes").format(n=locale.number(f["size"], self.variant.locale)))}</span></li>'
                       for f in files)
        t_ = self.t
        body = (f'<p>{esc(r["description"])}</p><p class="muted">{t_("Default branch")} <code>{esc(r["default_branch"])}</code> · '
                f'<a href="/pulls?repo={esc(r["name"])}" data-action="repo-pulls">{t_("Pull requests")}</a> · '
                f'<a href="/issues?repo={esc(r["name"])}" data-action="repo-issues">{t_("Issues")}</a></p>'
                f'<ul class="tree" aria-label="{t_("Files")}">{tree}</ul>')
        return self._page(f"{ORG}/{r['name']}", body)

    async def blob(self, request: Request) -> Response:
        r = self._repo(request.path_params["repo"])
        f = self.db.one("SELECT * FROM files WHERE repo_id = ? AND path = ?", (r["id"], request.path_params["path"]))
        if f is None:
            raise Refused("No file {path} in {org}/{repo}.", 404, path=request.path_params["path"], org=ORG, repo=r["name"])
        rows = "".join(f'<tr data-line="{i}"><td class="ln">{i}</td><td class="code"><code>{esc(line)}</code></td></tr>'
                       for i, line in enumerate(f["content"].splitlines(), 1))
        crumbs = f'<p class="crumbs"><a href="/r/{esc(r["name"])}">{esc(ORG)}/{esc(r["name"])}</a></p>'
        return self._page(f["path"], f'<table class="source" aria-label="{esc(f["path"])}"><tbody>{rows}</tbody></table>', crumbs=crumbs)

    # --- a pull request ---

    def _tabs(self, p: dict[str, Any], current: str) -> str:
        n_files = self.db.scalar("SELECT COUNT(*) FROM pull_files WHERE pull_id = ?", (p["id"],))
        tabs = [(self.t("Conversation"), self._url(p), "conversation"),
                (self.t("Files changed ({n})").format(n=n_files), self._url(p, "/files"), "files")]
        return f'<nav class="tabs" aria-label="{self.t("Pull request")}">' + "".join(
            f'<a href="{href}" data-tab="{key}"{" aria-current=page" if key == current else ""}>{esc(label)}</a>'
            for label, href, key in tabs) + "</nav>"

    def _head(self, p: dict[str, Any]) -> str:
        line = self._html("{who} wants to merge {head} into {base} · opened {stamp}", who=self._person(p["author_id"]),
                          head=f'<code data-head>{esc(p["head"])}</code>', base=f'<code data-base>{esc(p["base"])}</code>',
                          stamp=esc(self._when(p["created_at"])))
        return f'<p class="pr-meta" data-pull-id="{p["id"]}" data-status="{p["status"]}">{self._status_badge(p["status"])} {line}</p>'

    def _crumbs(self, p: dict[str, Any]) -> str:
        return (f'<p class="crumbs"><a href="/r/{esc(p["repo"])}">{esc(ORG)}/{esc(p["repo"])}</a> · '
                f'<a href="/pulls?repo={esc(p["repo"])}">{self.t("Pull requests")}</a></p>')

    async def conversation(self, request: Request) -> Response:
        p = self._pull(request)
        return self._pr_page(p, self._conversation_body(p))

    def _pr_page(self, p: dict[str, Any], body: str, *, status: int = 200) -> HTMLResponse:
        return self._page(f"{p['title']} #{p['number']}", body, status=status, crumbs=self._crumbs(p))

    def _conversation_body(self, p: dict[str, Any], error: str = "") -> str:
        timeline: list[tuple[str, int, str]] = []
        t_ = self.t

        def at(stamp: str) -> str:
            return f'<time datetime="{esc(stamp)}">{esc(self._when(stamp))}</time>'
        for c in self.db.all("SELECT * FROM comments WHERE pull_id = ? AND thread_id IS NULL", (p["id"],)):
            timeline.append((c["created_at"], c["id"], f'<article class="event comment" data-comment-id="{c["id"]}">'
                             f'<header>{self._html("{who} commented {time}", who=self._person(c["author_id"]), time=at(c["created_at"]))}</header>'
                             f'<p class="body">{esc(c["body"])}</p></article>'))
        for r in self.db.all("SELECT * FROM reviews WHERE pull_id = ?", (p["id"],)):
            words = {"approve": "{who} approved these changes {time}", "changes": "{who} requested changes {time}",
                     "comment": "{who} reviewed {time}"}[r["verdict"]]
            dismissed = (f'<p class="muted" data-dismissed>{esc(t_("Dismissed: {reason}").format(reason=r["dismiss_reason"]))}</p>'
                         if r["dismissed"] else "")
            can_dismiss = not r["dismissed"] and r["verdict"] != "comment" and p["status"] in ("open", "draft")
            dismiss = (f'<details class="dismiss"><summary data-action="dismiss-review" aria-label="{t_("Dismiss review {id}").format(id=r["id"])}">'
                       f'{t_("Dismiss")}</summary>'
                       f'<form method="post" action="{self._url(p, "/reviews/" + str(r["id"]) + "/dismiss")}"><label for="dr-{r["id"]}">{t_("Reason")}</label>'
                       f'<input id="dr-{r["id"]}" name="reason" required maxlength="300" data-field="dismiss-reason">'
                       f'<button type="submit" data-action="confirm-dismiss">{t_("Dismiss review")}</button></form></details>' if can_dismiss else "")
            timeline.append((r["submitted_at"], 100000 + r["id"],
                             f'<article class="event review verdict-{r["verdict"]}{" is-dismissed" if r["dismissed"] else ""}" '
                             f'data-review-id="{r["id"]}" data-verdict="{r["verdict"]}" data-dismissed="{r["dismissed"]}">'
                             f'<header>{self._html(words, who=self._person(r["author_id"]), time=at(r["submitted_at"]))}</header>'
                             f'<p class="body">{esc(r["body"])}</p>{dismissed}{dismiss}</article>'))
        for t in self.db.all("SELECT t.*, (SELECT COUNT(*) FROM comments c WHERE c.thread_id = t.id) AS n FROM threads t WHERE t.pull_id = ?",
                             (p["id"],)):
            timeline.append((t["created_at"], 200000 + t["id"],
                             f'<article class="event thread-ref" data-thread-ref="{t["id"]}"><header>'
                             + self._html("{n} comments on {where}", n=str(t["n"]), where=(
                                 f'<a href="{self._url(p, "/files")}#thread-{t["id"]}">'
                                 f'{esc(t_("{path} line {line}").format(path=t["path"], line=t["line"]))}</a>'))
                             + f'{esc(t_(" · resolved")) if t["resolved"] else ""}</header></article>'))
        if p["merged_at"]:
            merged = self._html("{who} merged commit {sha} ({how}) {time}", who=self._person(p["merged_by"]),
                                sha=f'<code data-merge-sha>{esc(p["merge_sha"])}</code>',
                                how=esc(t_(STRATEGIES.get(p["merge_strategy"], ""))), time=at(p["merged_at"]))
            timeline.append((p["merged_at"], 300000, f'<article class="event merged" data-event="merged">{merged}</article>'))
        if p["closed_at"]:
            timeline.append((p["closed_at"], 300001, f'<article class="event closed" data-event="closed">'
                             f'{self._html("Closed {time}", time=at(p["closed_at"]))}</article>'))
        events = "".join(html for _, _, html in sorted(timeline))
        comment_form = (f'<form method="post" action="{self._url(p, "/comment")}" class="box" data-form="comment">'
                        f'<label for="c-body">{t_("Add a comment")}</label><textarea id="c-body" name="body" rows="4" required data-field="comment-body"></textarea>'
                        f'<button type="submit" class="primary" data-action="add-comment">{t_("Comment")}</button></form>')
        main = (self._error(error) + f'<article class="event description"><header>'
                f'{self._html("{who} opened this pull request", who=self._person(p["author_id"]))}</header>'
                f'<p class="body" data-description>{esc(p["body"])}</p></article>{events}{self._checks_box(p)}{self._merge_box(p)}{comment_form}'
                f'{self._state_buttons(p)}')
        return self._head(p) + self._tabs(p, "conversation") + f'<div class="pr-layout"><div class="pr-main-col">{main}</div>{self._sidebar(p)}</div>'

    def _checks_box(self, p: dict[str, Any]) -> str:
        rows = "".join(f'<li data-check="{esc(c["name"])}" data-check-status="{c["status"]}"><span class="ci ci-{c["status"]}" aria-hidden="true"></span>'
                       f'<strong>{esc(c["name"])}</strong> <span class="muted">{esc(c["summary"])}</span></li>'
                       for c in self.db.all("SELECT * FROM checks WHERE pull_id = ? ORDER BY id", (p["id"],)))
        overall, words = self._checks_summary(p["id"])
        return f'<section class="box checks" aria-label="{self.t("Checks")}" data-checks="{overall}"><h2>{words}</h2><ul>{rows}</ul></section>'

    def _merge_box(self, p: dict[str, Any]) -> str:
        if p["status"] in ("merged", "closed"):
            return ""
        blockers = self.merge_blockers(p)
        t_ = self.t
        if blockers:
            items = "".join(f"<li>{esc(b)}</li>" for b in blockers)
            return (f'<section class="box merge blocked" aria-label="{t_("Merge")}" data-mergeable="0"><h2>{t_("Merging is blocked")}</h2><ul>{items}</ul>'
                    f'<button type="button" disabled aria-disabled="true" data-action="merge">{t_("Merge pull request")}</button></section>')
        return (f'<section class="box merge" aria-label="{t_("Merge")}" data-mergeable="1"><h2>{t_("This branch can be merged")}</h2>'
                f'<a class="button primary" href="{self._url(p, "/merge")}" data-action="merge">{t_("Merge pull request")}</a></section>')

    def _state_buttons(self, p: dict[str, Any]) -> str:
        forms = []
        t_ = self.t
        if p["status"] in ("open", "draft"):
            forms.append(f'<form method="post" action="{self._url(p, "/close")}"><button type="submit" data-action="close-pull">'
                         f'{t_("Close pull request")}</button></form>')
        if p["status"] == "closed":
            forms.append(f'<form method="post" action="{self._url(p, "/reopen")}"><button type="submit" data-action="reopen-pull">'
                         f'{t_("Reopen pull request")}</button></form>')
        if p["status"] == "draft":
            forms.append(f'<form method="post" action="{self._url(p, "/ready")}"><button type="submit" data-action="ready">{t_("Ready for review")}</button></form>')
        return f'<div class="row">{"".join(forms)}</div>'

    def _sidebar(self, p: dict[str, Any]) -> str:
        people = self.db.all("SELECT id, login, name FROM people ORDER BY name")
        labels = self.db.all("SELECT * FROM labels ORDER BY name")

        t_ = self.t

        def section(kind: str, title: str, current: list[dict[str, Any]], choices: list[tuple[str, str]], key: str) -> str:
            have = {str(c[key]) for c in current}
            items = "".join(
                f'<li data-item="{esc(c[key])}">{self._chip(c) if kind == "label" else self._person(c["id"])}'
                f'<form method="post" action="{self._url(p, f"/{kind}s")}" class="inline"><input type="hidden" name="op" value="remove">'
                f'<input type="hidden" name="{kind}" value="{esc(c[key])}"><button type="submit" class="icon" data-action="remove-{kind}" '
                f'aria-label="{esc(t_("Remove {kind} {value}").format(kind=t_(kind), value=c[key]))}">×</button></form></li>' for c in current)
            opts = f'<option value="">{t_("Choose…")}</option>' + "".join(f'<option value="{esc(v)}">{esc(t)}</option>' for v, t in choices if v not in have)
            none = f'<li class=muted>{t_("None yet")}</li>'
            return (f'<section class="side" aria-labelledby="side-{kind}" data-side="{kind}s"><h2 id="side-{kind}">{t_(title)}</h2>'
                    f'<ul data-list="{kind}s">{items or none}</ul>'
                    f'<form method="post" action="{self._url(p, f"/{kind}s")}" class="add"><input type="hidden" name="op" value="add">'
                    f'<label for="add-{kind}" class="sr">{t_("Add {kind}").format(kind=t_(kind))}</label>'
                    f'<select id="add-{kind}" name="{kind}" data-field="add-{kind}">{opts}</select>'
                    f'<button type="submit" data-action="add-{kind}">{t_("Add")}</button></form></section>')
        reviewers = self.db.all("SELECT x.id, x.login, x.name FROM people x JOIN pull_reviewers r ON r.person_id = x.id WHERE r.pull_id = ? "
                                "ORDER BY x.name", (p["id"],))
        assignees = self.db.all("SELECT x.id, x.login, x.name FROM people x JOIN pull_assignees r ON r.person_id = x.id WHERE r.pull_id = ? "
                                "ORDER BY x.name", (p["id"],))
        pairs = [(x["login"], x["name"]) for x in people]
        return (f'<aside class="pr-side" aria-label="{t_("Details")}" data-region="pr-side">'
                + section("reviewer", "Reviewers", reviewers, [(x["login"], x["name"]) for x in people if x["id"] != p["author_id"]], "login")
                + section("assignee", "Assignees", assignees, pairs, "login")
                + section("label", "Labels", self._labels_of(p["id"]), [(lab["name"], lab["name"]) for lab in labels], "name")
                + "</aside>")

    async def files(self, request: Request) -> Response:
        p = self._pull(request)
        return self._pr_page(p, self._files_body(p))

    def _files_body(self, p: dict[str, Any], error: str = "") -> str:
        threads: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for t in self.db.all("SELECT * FROM threads WHERE pull_id = ? ORDER BY id", (p["id"],)):
            threads.setdefault((t["path"], t["line"]), []).append(t)
        sections = []
        t_ = self.t
        for f in self.db.all("SELECT * FROM pull_files WHERE pull_id = ? ORDER BY id", (p["id"],)):
            rows = []
            for line in diff_lines(f["patch"]):
                if line.kind == "hunk":
                    rows.append(f'<tr class="hunk"><td colspan="3"><code>{esc(line.text)}</code></td></tr>')
                    continue
                sign = {"add": "+", "del": "-", "ctx": " "}[line.kind]
                where = t_("Comment on {where}").format(where=t_("line {line} of {path}").format(line=line.new, path=f["path"]))
                add = (f'<details class="line-comment" data-line-comment="{esc(f["path"])}:{line.new}"><summary aria-label="{esc(where)}">+</summary>'
                       f'<form method="post" action="{self._url(p, "/line-comment")}"><input type="hidden" name="path" value="{esc(f["path"])}">'
                       f'<input type="hidden" name="line" value="{line.new}"><textarea name="body" rows="3" required aria-label="{esc(where)}" '
                       f'data-field="line-body"></textarea><button type="submit" class="primary" data-action="add-line-comment">{t_("Comment")}</button>'
                       '</form></details>' if line.new is not None else "")
                rows.append(f'<tr class="dl {line.kind}" data-old="{line.old or ""}" data-new="{line.new or ""}">'
                            f'<td class="ln" aria-label="{t_("old line")}">{line.old or ""}</td><td class="ln" aria-label="{t_("new line")}">{line.new or ""}</td>'
                            f'<td class="code">{add}<code><span class="sign" aria-hidden="true">{sign}</span>{esc(line.text)}</code></td></tr>')
                if line.new is not None:
                    for t in threads.get((f["path"], line.new), []):
                        rows.append(f'<tr class="thread-row"><td colspan="3">{self._thread(p, t)}</td></tr>')
            sections.append(f'<section class="diff-file" data-file="{esc(f["path"])}" aria-label="{esc(f["path"])}">'
                            f'<h2><a href="/r/{esc(p["repo"])}/blob/{esc(f["path"])}">{esc(f["path"])}</a> '
                            f'<span class="adds">+{f["additions"]}</span> <span class="dels">−{f["deletions"]}</span></h2>'
                            f'<table class="diff"><tbody>{"".join(rows)}</tbody></table></section>')
        return (self._head(p) + self._tabs(p, "files") + self._error(error) + self._review_form(p) + "".join(sections))

    def _thread(self, p: dict[str, Any], t: dict[str, Any]) -> str:
        t_ = self.t
        comments = "".join(f'<li data-comment-id="{c["id"]}">{self._person(c["author_id"])} '
                           f'<time datetime="{esc(c["created_at"])}">{esc(self._when(c["created_at"]))}</time>'
                           f'<p class="body">{esc(c["body"])}</p></li>'
                           for c in self.db.all("SELECT * FROM comments WHERE thread_id = ? ORDER BY created_at, id", (t["id"],)))
        resolved = bool(t["resolved"])
        toggle = (f'<form method="post" action="{self._url(p, "/threads/" + str(t["id"]) + "/resolve")}" class="inline">'
                  f'<input type="hidden" name="resolved" value="{0 if resolved else 1}"><button type="submit" data-action="{"unresolve" if resolved else "resolve"}">'
                  f'{t_("Unresolve" if resolved else "Resolve conversation")}</button></form>')
        reply_to = esc(t_("Reply to the thread on {path} line {line}").format(path=t["path"], line=t["line"]))
        reply = (f'<form method="post" action="{self._url(p, "/threads/" + str(t["id"]) + "/reply")}" class="reply">'
                 f'<textarea name="body" rows="2" required aria-label="{reply_to}" data-field="reply-body"></textarea>'
                 f'<button type="submit" data-action="reply">{t_("Reply")}</button></form>')
        by = self._html("Resolved by {who}", who=self._person(t["resolved_by"])) if resolved else ""
        return (f'<div class="thread{" resolved" if resolved else ""}" id="thread-{t["id"]}" data-thread-id="{t["id"]}" data-path="{esc(t["path"])}" '
                f'data-line="{t["line"]}" data-resolved="{int(resolved)}" role="group" '
                f'aria-label="{esc(t_("Thread on {path} line {line}").format(path=t["path"], line=t["line"]))}">'
                f'{"<p class=muted>" + by + "</p>" if resolved else ""}'
                f'<ul class="comments">{comments}</ul>{reply}{toggle}</div>')

    def _review_form(self, p: dict[str, Any]) -> str:
        if p["status"] in ("merged", "closed"):
            closed = self.t("This pull request is {status}: it takes no more reviews.").format(status=self.t(p["status"]))
            return f'<p class="muted box" data-review-closed>{esc(closed)}</p>'
        own = p["author_id"] == ME
        t_ = self.t
        radios = "".join(f'<label class="check"><input type="radio" name="verdict" value="{v}" data-verdict="{v}"'
                         f'{" checked" if v == "comment" else ""}{" disabled" if own and v != "comment" else ""}> {t_(label)}</label>'
                         for v, label in VERDICTS.items())
        return (f'<form method="post" action="{self._url(p, "/review")}" class="box review-form" data-form="review">'
                f'<h2>{t_("Finish your review")}</h2><label for="rv-body">{t_("Summary")}</label>'
                f'<textarea id="rv-body" name="body" rows="3" data-field="review-body"></textarea>'
                f'<fieldset><legend>{t_("Your verdict")}</legend>{radios}</fieldset>'
                f'<button type="submit" class="primary" data-action="submit-review">{t_("Submit review")}</button></form>')

    # --- actions on a pull request ---

    async def comment(self, request: Request) -> Response:
        p = self._pull(request)
        body = text_field(await request.form(), "body", "The comment")
        self.db.insert("INSERT INTO comments (pull_id, thread_id, author_id, body, created_at) VALUES (?,NULL,?,?,?)",
                       (p["id"], ME, body, self._stamp()))
        return self._back(p)

    async def line_comment(self, request: Request) -> Response:
        p = self._pull(request)
        form = await request.form()
        path = str(form.get("path", "") or "")
        try:
            line = int(str(form.get("line", "") or ""))
        except ValueError:
            raise Refused("Choose a line of the diff to comment on.") from None
        f = self.db.one("SELECT patch FROM pull_files WHERE pull_id = ? AND path = ?", (p["id"], path))
        if f is None:
            raise Refused("This pull request does not change {path}.", path=path or "that file")
        if not any(x.new == line for x in diff_lines(f["patch"])):
            raise Refused("Line {line} of {path} is not in this diff: comment on a line the diff shows.", line=str(line), path=path)
        body = text_field(form, "body", "The comment")
        tid = self.db.insert("INSERT INTO threads (pull_id, path, line, resolved, resolved_by, created_at) VALUES (?,?,?,0,NULL,?)",
                             (p["id"], path, line, self._stamp()))
        self.db.insert("INSERT INTO comments (pull_id, thread_id, author_id, body, created_at) VALUES (?,?,?,?,?)",
                       (p["id"], tid, ME, body, self._stamp()))
        return self._back(p, f"/files#thread-{tid}")

    def _thread_of(self, p: dict[str, Any], tid: int) -> dict[str, Any]:
        t = self.db.one("SELECT * FROM threads WHERE id = ? AND pull_id = ?", (tid, p["id"]))
        if t is None:
            raise Refused("No such conversation on this pull request.", 404)
        return t

    async def reply(self, request: Request) -> Response:
        p = self._pull(request)
        t = self._thread_of(p, request.path_params["tid"])
        body = text_field(await request.form(), "body", "The reply")
        self.db.insert("INSERT INTO comments (pull_id, thread_id, author_id, body, created_at) VALUES (?,?,?,?,?)",
                       (p["id"], t["id"], ME, body, self._stamp()))
        return self._back(p, f"/files#thread-{t['id']}")

    async def resolve(self, request: Request) -> Response:
        p = self._pull(request)
        t = self._thread_of(p, request.path_params["tid"])
        resolved = str((await request.form()).get("resolved", "")) == "1"
        if bool(t["resolved"]) == resolved:
            raise Refused("This conversation is already {state}.", state="resolved" if resolved else "open")
        self.db.execute("UPDATE threads SET resolved = ?, resolved_by = ? WHERE id = ?", (int(resolved), ME if resolved else None, t["id"]))
        return self._back(p, f"/files#thread-{t['id']}")

    async def review(self, request: Request) -> Response:
        p = self._pull(request)
        if p["status"] in ("merged", "closed"):
            raise Refused("This pull request is {status}: it takes no more reviews.", status=p["status"])
        form = await request.form()
        verdict = str(form.get("verdict", "") or "")
        if verdict not in VERDICTS:
            raise Refused("Choose a verdict: comment, approve or request changes.")
        if p["author_id"] == ME and verdict != "comment":
            raise Refused("You cannot approve or request changes on your own pull request.")
        body = text_field(form, "body", "The summary", required=verdict != "approve")
        self.db.insert("INSERT INTO reviews (pull_id, author_id, verdict, body, submitted_at, dismissed) VALUES (?,?,?,?,?,0)",
                       (p["id"], ME, verdict, body, self._stamp()))
        return self._back(p)

    async def dismiss(self, request: Request) -> Response:
        p = self._pull(request)
        r = self.db.one("SELECT * FROM reviews WHERE id = ? AND pull_id = ?", (request.path_params["rid"], p["id"]))
        if r is None:
            raise Refused("No such review on this pull request.", 404)
        if r["dismissed"] or r["verdict"] == "comment":
            raise Refused("Only an approval or a request for changes that still counts can be dismissed.")
        if p["status"] not in ("open", "draft"):
            raise Refused("This pull request is {status}: its reviews stay as they are.", status=p["status"])
        reason = text_field(await request.form(), "reason", "The reason for dismissing")
        self.db.execute("UPDATE reviews SET dismissed = 1, dismiss_reason = ? WHERE id = ?", (reason[:300], r["id"]))
        return self._back(p)

    async def _edit_set(self, request: Request, kind: str) -> Response:
        p = self._pull(request)
        form = await request.form()
        op, value = str(form.get("op", "") or ""), str(form.get(kind, "") or "").strip()
        if op not in ("add", "remove"):
            raise Refused("Say whether to add or remove.")
        if kind == "label":
            row = self.db.one("SELECT id FROM labels WHERE name = ?", (value,))
            table, column = "pull_labels", "label_id"
        else:
            row = self.db.one("SELECT id FROM people WHERE login = ?", (value,))
            table, column = ("pull_reviewers" if kind == "reviewer" else "pull_assignees"), "person_id"
        if row is None:
            if value:
                raise Refused("Choose a {kind} from the list, not {value!r}.", kind=kind, value=value)
            raise Refused("Choose a {kind} from the list.", kind=kind)
        if kind == "reviewer" and row["id"] == p["author_id"]:
            raise Refused("The author of a pull request cannot review it.")
        have = self.db.scalar(f"SELECT COUNT(*) FROM {table} WHERE pull_id = ? AND {column} = ?", (p["id"], row["id"]))
        if op == "add":
            if have:
                raise Refused("{value} is already a {kind} of this pull request.", value=value, kind=kind)
            self.db.insert(f"INSERT INTO {table} (pull_id, {column}) VALUES (?,?)", (p["id"], row["id"]))
        else:
            if not have:
                raise Refused("{value} is not a {kind} of this pull request.", value=value, kind=kind)
            self.db.execute(f"DELETE FROM {table} WHERE pull_id = ? AND {column} = ?", (p["id"], row["id"]))
        return self._back(p)

    async def labels(self, request: Request) -> Response:
        return await self._edit_set(request, "label")

    async def reviewers(self, request: Request) -> Response:
        return await self._edit_set(request, "reviewer")

    async def assignees(self, request: Request) -> Response:
        return await self._edit_set(request, "assignee")

    async def merge(self, request: Request) -> Response:
        p = self._pull(request)
        blockers = self.merge_blockers(p)
        if blockers:
            raise Refused("This pull request cannot be merged: {why}", why=" ".join(blockers))
        if request.method == "POST":
            strategy = str((await request.form()).get("strategy", "") or "")
            if strategy not in STRATEGIES:
                raise Refused("Choose how to merge: a merge commit or squash.")
            self.db.execute("UPDATE pulls SET status = 'merged', merged_at = ?, merged_by = ?, merge_strategy = ?, merge_sha = ? WHERE id = ?",
                            (self._stamp(), ME, strategy, merge_sha(p["repo"], p["number"], strategy, p["head"]), p["id"]))
            return self._back(p)
        t_ = self.t
        radios = "".join(f'<label class="check"><input type="radio" name="strategy" value="{s}" data-strategy="{s}"'
                         f'{" checked" if s == "merge" else ""}> {t_(label)}</label>' for s, label in STRATEGIES.items())
        question = t_("Merge #{n} “{title}” into {base}?").format(n=p["number"], title=p["title"], base=p["base"])
        body = (f'<div class="box" role="alertdialog" aria-labelledby="mg-h"><h2 id="mg-h">{esc(question)}</h2>'
                f'<p>{t_("Merging cannot be undone from here.")}</p>'
                f'<form method="post" action="{self._url(p, "/merge")}"><fieldset><legend>{t_("Merge method")}</legend>{radios}</fieldset>'
                f'<div class="row"><button type="submit" class="primary" data-action="confirm-merge">{t_("Confirm merge")}</button>'
                f'<a class="button" href="{self._url(p)}" data-action="cancel-merge">{t_("Cancel")}</a></div></form></div>')
        return self._pr_page(p, body)

    async def close(self, request: Request) -> Response:
        p = self._pull(request)
        if p["status"] not in ("open", "draft"):
            raise Refused("This pull request is already {status}.", status=p["status"])
        self.db.execute("UPDATE pulls SET status = 'closed', closed_at = ? WHERE id = ?", (self._stamp(), p["id"]))
        return self._back(p)

    async def reopen(self, request: Request) -> Response:
        p = self._pull(request)
        if p["status"] != "closed":
            raise Refused("Only a closed pull request can be reopened." + (" A merged one stays merged." if p["status"] == "merged" else ""))
        self.db.execute("UPDATE pulls SET status = 'open', closed_at = NULL WHERE id = ?", (p["id"],))
        return self._back(p)

    async def ready(self, request: Request) -> Response:
        p = self._pull(request)
        if p["status"] != "draft":
            raise Refused("Only a draft can be marked ready for review.")
        self.db.execute("UPDATE pulls SET status = 'open' WHERE id = ?", (p["id"],))
        return self._back(p)

    # --- issues, people, notifications ---

    async def issues(self, request: Request) -> Response:
        q = self.query(request)
        status = q["status"] or "open"
        where, params, error = [], [], ""
        if status != "all":
            if status not in ("open", "closed"):
                error, status = self.t("Status is one of: open, closed, all."), "open"
            where.append("i.status = ?")
            params.append(status)
        for key, sql in (("repo", "r.name = ?"), ("author", "a.login = ?"),
                         ("label", "i.id IN (SELECT x.issue_id FROM issue_labels x JOIN labels l ON l.id = x.label_id WHERE l.name = ?)")):
            if q[key]:
                where.append(sql)
                params.append(q[key])
        if q["q"]:
            where.append("(i.title LIKE ? OR i.body LIKE ?)")
            params += [f"%{q['q']}%", f"%{q['q']}%"]
        rows = self.db.all("SELECT i.*, r.name AS repo, a.name AS author_name FROM issues i JOIN repos r ON r.id = i.repo_id "
                           "JOIN people a ON a.id = i.author_id" + (f" WHERE {' AND '.join(where)}" if where else "")
                           + " ORDER BY i.created_at DESC, i.id DESC", params)

        def row(i: dict[str, Any]) -> str:
            chips = "".join(self._chip(lab) for lab in self.db.all(
                "SELECT l.* FROM labels l JOIN issue_labels x ON x.label_id = l.id WHERE x.issue_id = ? ORDER BY l.name", (i["id"],)))
            return (f'<li class="pr-row" data-issue-id="{i["id"]}" data-repo="{esc(i["repo"])}" data-number="{i["number"]}" data-status="{i["status"]}">'
                    f'<div class="pr-main"><a class="pr-title" href="/r/{esc(i["repo"])}/issues/{i["number"]}">{esc(i["title"])}</a> {chips}'
                    f'<p class="muted">{self._html("{org}/{repo} #{n} · opened {date} by {who}", org=esc(ORG), repo=esc(i["repo"]), n=str(i["number"]), date=esc(self._when(i["created_at"][:10])), who=esc(i["author_name"]))}</p></div>'
                    f'{self._status_badge(i["status"])}</li>')
        body = (self._filters("/issues", q, status, with_reviewer=False) + self._error(error)
                + f'<p class="muted" role="status" data-count="{len(rows)}">{self.t("{n} issues").format(n=len(rows))}</p>'
                + f'<ul class="pr-list" aria-label="{self.t("Issues")}">{"".join(row(i) for i in rows)}</ul>')
        return self._page(self.t("Issues"), body, status=400 if error else 200)

    def _issue(self, request: Request) -> dict[str, Any]:
        repo = self._repo(request.path_params["repo"])
        i = self.db.one("SELECT * FROM issues WHERE repo_id = ? AND number = ?", (repo["id"], request.path_params["n"]))
        if i is None:
            raise Refused("No issue #{n} in {org}/{repo}.", 404, n=str(request.path_params["n"]), org=ORG, repo=repo["name"])
        i["repo"] = repo["name"]
        return i

    async def issue(self, request: Request) -> Response:
        i = self._issue(request)
        to = "closed" if i["status"] == "open" else "open"
        t_ = self.t
        opened = self._html("{badge} {who} opened this issue {time}", badge=self._status_badge(i["status"]), who=self._person(i["author_id"]),
                            time=esc(self._when(i["created_at"])))
        body = (f'<p data-issue-id="{i["id"]}" data-status="{i["status"]}">{opened}</p>'
                f'<article class="event description"><p class="body">{esc(i["body"])}</p></article>'
                f'<form method="post" action="/r/{esc(i["repo"])}/issues/{i["number"]}/state"><input type="hidden" name="status" value="{to}">'
                f'<button type="submit" data-action="{"close-issue" if to == "closed" else "reopen-issue"}">'
                f'{t_("Close issue" if to == "closed" else "Reopen issue")}</button></form>')
        crumb = esc(t_("{org}/{repo} issues").format(org=ORG, repo=i["repo"]))
        return self._page(f"{i['title']} #{i['number']}", body,
                          crumbs=f'<p class="crumbs"><a href="/issues?repo={esc(i["repo"])}">{crumb}</a></p>')

    async def issue_state(self, request: Request) -> Response:
        i = self._issue(request)
        to = str((await request.form()).get("status", "") or "")
        if to not in ("open", "closed"):
            raise Refused("An issue is open or closed.")
        if to == i["status"]:
            raise Refused("This issue is already {status}.", status=to)
        self.db.execute("UPDATE issues SET status = ?, closed_at = ? WHERE id = ?", (to, self._stamp() if to == "closed" else None, i["id"]))
        return RedirectResponse(f"/r/{i['repo']}/issues/{i['number']}", status_code=303)

    async def profile(self, request: Request) -> Response:
        u = self.db.one("SELECT * FROM people WHERE login = ?", (request.path_params["login"],))
        if u is None:
            raise Refused("No such person.", 404)
        opened = self.db.all(self._PULLS + " WHERE p.author_id = ? AND p.status IN ('open', 'draft') ORDER BY p.created_at DESC", (u["id"],))
        n_reviews = self.db.scalar("SELECT COUNT(*) FROM reviews WHERE author_id = ?", (u["id"],))
        merged = self.db.scalar("SELECT COUNT(*) FROM pulls WHERE author_id = ? AND status = 'merged'", (u["id"],))
        t_ = self.t
        body = (f'<section class="profile" data-login="{esc(u["login"])}"><p class="avatar" aria-hidden="true">{esc(u["name"][:1])}</p>'
                f'<dl class="summary"><dt>{t_("Login")}</dt><dd>@{esc(u["login"])}</dd><dt>{t_("Location")}</dt><dd>{esc(u["location"])}</dd>'
                f'<dt>{t_("Locale")}</dt><dd>{esc(u["locale"])}</dd><dt>{t_("Email")}</dt><dd>{esc(u["email"])}</dd>'
                f'<dt>{t_("Reviews")}</dt><dd data-reviews="{n_reviews}">{n_reviews}</dd><dt>{t_("Merged")}</dt>'
                f'<dd data-merged="{merged}">{merged}</dd></dl></section>'
                f'<h2>{t_("Open pull requests ({n})").format(n=len(opened))}</h2>{self._pull_rows(opened)}')
        return self._page(u["name"], body)

    async def notifications(self, _: Request) -> Response:
        rows = self.db.all("SELECT n.*, p.number, r.name AS repo FROM notifications n JOIN pulls p ON p.id = n.pull_id "
                           "JOIN repos r ON r.id = p.repo_id ORDER BY n.at DESC, n.id DESC")
        t_ = self.t
        items = "".join(
            f'<li class="note{" unread" if not n["read"] else ""}" data-notification-id="{n["id"]}" data-read="{n["read"]}">'
            f'<a href="/r/{esc(n["repo"])}/pull/{n["number"]}">{esc(n["text"])}</a> '
            f'<span class="muted">{esc(n["repo"])} #{n["number"]} · {esc(self._when(n["at"]))}</span>'
            + ("" if n["read"] else f'<form method="post" action="/notifications/read" class="inline"><input type="hidden" name="id" value="{n["id"]}">'
               f'<button type="submit" data-action="mark-read" aria-label="{t_("Mark notification {id} read").format(id=n["id"])}">'
               f'{t_("Mark read")}</button></form>') + "</li>"
            for n in rows)
        body = ('<form method="post" action="/notifications/read"><input type="hidden" name="id" value="all">'
                f'<button type="submit" data-action="mark-all-read">{t_("Mark all as read")}</button></form>'
                f'<ul class="notes" aria-label="{t_("Notifications")}">{items}</ul>')
        return self._page(t_("Notifications"), body)

    async def read_notifications(self, request: Request) -> Response:
        which = str((await request.form()).get("id", "") or "")
        if which == "all":
            self.db.execute("UPDATE notifications SET read = 1 WHERE read = 0")
        else:
            if not which.isdigit() or self.db.one("SELECT id FROM notifications WHERE id = ?", (int(which),)) is None:
                raise Refused("No such notification.", 404)
            self.db.execute("UPDATE notifications SET read = 1 WHERE id = ?", (int(which),))
        return RedirectResponse("/notifications", status_code=303)


APP = ReviewApp
