"""Seeded parameters for the Wagtail suite: each function is a template's `generator`, called
with the in-process Wagtail at the task's seed and the template's rng. It picks the page,
user, tag or revision from Wagtail's own state and computes the exact end state the judge
expects, so a judge never guesses at a value it could read.

An episode's rows come after every seeded row: its page log entries have ids above `log`,
its revisions above `rev`, its pages above `page`.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from cua.tasks.products.wagtail import Wagtail
from cua.tasks.products.wagtail.build import PASSWORD

__all__ = ["approve_moderation", "author_role", "change_slug", "copy_event", "count_tagged_live", "create_post",
           "delete_event", "editor_user_admin", "event_editor_blog", "first_published_tag", "image_collection",
           "lock_page", "move_page", "move_user_group", "request_changes", "retitle_publish", "revert_revision",
           "schedule_post", "search_description", "slug_taken", "submit_for_moderation", "unpublish_page",
           "unpublish_tag", "who_last_edited"]

_MODERATORS = ["lrossi", "dwong"]
_EDITORS = ["jmorgan", "pkaur", "tbeck", "afarrell"]
_NEW_TITLES = ["Notes from the quay", "A week in the net loft", "Letters to the harbour master",
               "What the tide left behind", "Small boats, big stories", "The lantern makers",
               "Salt, clay and patience", "Our year in pictures"]
_NEW_TAGS = ["ceramics", "harbour", "family", "archive", "photography", "music", "schools", "textiles"]


def _base(app: Wagtail) -> tuple[dict[str, Any], dict[str, Any]]:
    state = app.state()
    marks = {"log": max(r["id"] for r in state["page_log"]), "rev": max(r["id"] for r in state["revisions"]),
             "page": max(p["id"] for p in state["pages"]), "wf": max(w["id"] for w in state["workflow_states"]),
             "stamp": max(r["timestamp"] for r in state["page_log"]),
             "rstamp": max(r["created_at"] for r in state["revisions"]),
             "password": PASSWORD}
    return state, marks


def _names(state: dict[str, Any]) -> dict[str, str]:
    return {u["username"]: u["name"] for u in state["users"]}


def _quiet_posts(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Live blog posts with nothing pending: no newer draft, no moderation, no schedule."""
    moderated = {w["page"] for w in state["workflow_states"] if w["status"] == "in_progress"}
    return [p for p in state["pages"] if p["type"] == "blogpage" and p["live"] and not p["has_unpublished_changes"]
            and p["id"] not in moderated and not p["go_live_at"] and not p["locked"]]


def _page(p: dict[str, Any]) -> dict[str, Any]:
    return {k: p[k] for k in ("id", "title", "slug", "intro", "date", "tags", "authors", "parent", "url_path", "body",
                              "depth")}


def retitle_publish(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    p = rng.choice(_quiet_posts(state))
    title = f"{p['title']} — {rng.choice(['revisited', 'a second look', 'the full story', 'in pictures'])}"
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "title": title,
            "other": title.replace(" — ", ": ")}


def unpublish_page(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    posts = _quiet_posts(state)
    p, other = rng.sample(posts, 2)
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "other": _page(other)}


def create_post(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    blog = next(p for p in state["pages"] if p["type"] == "blogindexpage")
    taken = {p["title"] for p in state["pages"]}
    title = rng.choice([t for t in _NEW_TITLES if t not in taken])
    tags = sorted(rng.sample(_NEW_TAGS, 2))
    date = f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}"
    slug = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", title.lower())).strip("-")
    return {**marks, "user": rng.choice(_MODERATORS), "blog": blog["id"], "title": title, "tag1": tags[0],
            "slug": slug, "url_path": f"{blog['url_path']}{slug}/",
            "tag2": tags[1], "tags": ",".join(tags), "date": date, "intro": f"{title}: news from the trust.",
            "other_date": date[:-2] + f"{(int(date[-2:]) % 28) + 1:02d}"}


def move_page(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    home = next(p for p in state["pages"] if p["type"] == "homepage" and p["depth"] == 2)
    movable = [p for p in state["pages"] if p["parent"] == home["id"] and p["type"] in ("homepage", "formpage")]
    p = rng.choice(movable)
    targets = [t for t in movable if t["id"] != p["id"] and t["type"] == "homepage"]
    target, other = rng.sample(targets, 2) if len(targets) > 1 else (targets[0], home)
    url_path = f"{target['url_path']}{p['slug']}/"
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "target": _page(target),
            "other": _page(other), "url_path": url_path, "depth": target["depth"] + 1}


def submit_for_moderation(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    p = rng.choice(_quiet_posts(state))
    title = f"{p['title']} (new photographs)"
    return {**marks, "user": rng.choice(_EDITORS), "p": _page(p), "title": title}


def revert_revision(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    """A live post with an older revision whose intro differs from the live one."""
    state, marks = _base(app)
    contents = {int(r["id"]): json.loads(r["content"]) for r in app.db.all(
        "SELECT id, content FROM wagtailcore_revision")}
    names = _names(state)
    choices = []
    for p in _quiet_posts(state):
        revs = [r for r in state["revisions"] if r["page"] == p["id"]]
        for r in revs[:-1]:
            intro = str(contents[r["id"]].get("intro", ""))
            if intro != p["intro"] and r["title"] == p["title"]:
                choices.append((p, r, intro))
    p, r, intro = rng.choice(choices)
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "r": r["id"], "intro": intro,
            "when": r["created_at"][:16], "by": names[r["user"]]}


def who_last_edited(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    """A post whose latest revision's author is not its owner (the near miss answers the owner)."""
    state, marks = _base(app)
    names = _names(state)
    choices = []
    for p in state["pages"]:
        if p["type"] != "blogpage":
            continue
        revs = [r for r in state["revisions"] if r["page"] == p["id"]]
        if revs and revs[-1]["user"] != p["owner"]:
            choices.append((p, revs[-1]))
    p, r = rng.choice(choices)
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "name": names[r["user"]],
            "wrong": names[p["owner"]]}


def unpublish_tag(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    posts = [p for p in state["pages"] if p["type"] == "blogpage"]
    by_tag: dict[str, list[dict[str, Any]]] = {}
    for p in posts:
        for tag in filter(None, p["tags"].split(",")):
            by_tag.setdefault(tag, []).append(p)
    tags = sorted(t for t, ps in by_tag.items() if 2 <= sum(1 for p in ps if p["live"]) <= 4)
    tag = rng.choice(tags)
    hit = sorted(p["id"] for p in by_tag[tag] if p["live"])
    user = rng.choice(_MODERATORS)
    live = [{"id": p["id"], "live": 0 if p["id"] in hit else p["live"],
             "has_unpublished_changes": 1 if p["id"] in hit else p["has_unpublished_changes"]} for p in state["pages"]]
    log = [{"page_id": pid, "action": "wagtail.unpublish", "user": user, "fresh": 1, "revision_id": None} for pid in hit]
    return {**marks, "user": user, "tag": tag, "live": sorted(live, key=lambda r: r["id"]), "rows": log,
            "ids": "&".join(f"id={pid}" for pid in hit), "first_ids": "&".join(f"id={pid}" for pid in hit[:-1])}


# --- the second batch: questions, promote fields, locking, copying, moderation, users, media, safety ---

_COLLECTIONS = ["Root", "Blog media", "Press kit"]
_ROLES = ["Archivist", "Learning officer", "Festival producer", "Studio manager", "Volunteer coordinator",
          "Head of collections"]


def _tagged(state: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    by_tag: dict[str, list[dict[str, Any]]] = {}
    for p in state["pages"]:
        if p["type"] == "blogpage":
            for tag in filter(None, p["tags"].split(",")):
                by_tag.setdefault(tag, []).append(p)
    return by_tag


def _slug(text: str) -> str:
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text.lower())).strip("-")


def count_tagged_live(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    """A tag some of whose posts are not live: the near miss counts them all."""
    state, marks = _base(app)
    choices = [(t, ps) for t, ps in sorted(_tagged(state).items())
               if 0 < sum(p["live"] for p in ps) < len(ps)]
    tag, posts = rng.choice(choices)
    return {**marks, "user": rng.choice(_MODERATORS + _EDITORS), "tag": tag,
            "n": sum(p["live"] for p in posts), "all": len(posts)}


def first_published_tag(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    """A tag with three or more live posts, the earliest published of them with no pending
    draft (its live title is the one every listing shows); the near miss names the latest."""
    state, marks = _base(app)
    choices = []
    for tag, posts in sorted(_tagged(state).items()):
        live = sorted((p for p in posts if p["live"]), key=lambda p: p["first_published_at"])
        if len(live) >= 3 and not live[0]["has_unpublished_changes"] and \
                len({p["first_published_at"][:10] for p in live}) == len(live):
            choices.append((tag, live))
    tag, live = rng.choice(choices)
    return {**marks, "user": rng.choice(_MODERATORS), "tag": tag, "title": live[0]["title"],
            "wrong": live[-1]["title"]}


def lock_page(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    p, other = rng.sample(_quiet_posts(state), 2)
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "other": _page(other)}


def search_description(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    p = rng.choice(_quiet_posts(state))
    lead = rng.choice(["Read how", "Find out how", "Discover how", "See how"])
    text = f"{lead} the Harbourlight Arts Trust tells the story: {p['title'].lower()}."
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "text": text}


def change_slug(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    p = rng.choice(_quiet_posts(state))
    taken = {q["slug"] for q in state["pages"] if q["parent"] == p["parent"]}
    slug = next(s for s in (f"{p['slug'][:40].rstrip('-')}-{w}" for w in rng.sample(
        ["story", "2025", "notes", "feature", "report"], 5)) if s not in taken)
    parent = next(q for q in state["pages"] if q["id"] == p["parent"])
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "slug": slug,
            "url_path": f"{parent['url_path']}{slug}/"}


def slug_taken(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    """The slug asked for is another post's in the same Blog: Wagtail refuses it."""
    state, marks = _base(app)
    p, other = rng.sample(_quiet_posts(state), 2)
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "other": _page(other),
            "alt": f"{other['slug'][:50]}-2"}


def copy_event(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    events = next(p for p in state["pages"] if p["type"] == "eventindexpage")
    taken = {q["slug"] for q in state["pages"] if q["parent"] == events["id"]}
    p = rng.choice([q for q in state["pages"] if q["parent"] == events["id"] and q["live"]])
    base = p["title"].rsplit(" (", 1)[0]
    month = rng.choice(["Jan 2027", "Feb 2027", "Mar 2027", "Apr 2027"])
    title = f"{base} ({month})"
    slug = _slug(f"{base} {month}")
    assert slug not in taken
    user = rng.choice(_MODERATORS)
    ids = _user_ids(app)
    history = [ids[r["user"]] for r in state["revisions"] if r["page"] == p["id"]]
    return {**marks, "user": user, "p": _page(p), "events": events["id"], "title": title,
            "slug": slug, "url_path": f"{events['url_path']}{slug}/",
            "authors": ",".join(str(u) for u in [*history, ids[user]])}


def _in_moderation(app: Wagtail, state: dict[str, Any]) -> list[tuple[dict[str, Any], int, int]]:
    """Posts in moderation: (page, workflow state id, current task state id)."""
    pages = {p["id"]: p for p in state["pages"]}
    rows = app.db.all("SELECT id, CAST(object_id AS INTEGER) AS page, current_task_state_id FROM wagtailcore_workflowstate "
                      "WHERE status = 'in_progress' ORDER BY id")
    return [(pages[int(r["page"])], int(r["id"]), int(r["current_task_state_id"])) for r in rows]


def _draft_lists(app: Wagtail, page: int) -> dict[str, str]:
    """A page's tags and authors as its latest revision holds them (a page never published
    keeps them only there: publishing writes them to the page)."""
    row = app.db.all("SELECT content FROM wagtailcore_revision WHERE id = (SELECT latest_revision_id FROM "
                     "wagtailcore_page WHERE id = ?)", [page])[0]
    content = json.loads(row["content"])
    tags = {int(r["id"]): str(r["name"]) for r in app.db.all("SELECT id, name FROM taggit_tag")}
    authors = {int(r["id"]): str(r["name"]) for r in app.db.all("SELECT id, name FROM cms_author")}
    return {"tags": ",".join(sorted(tags[int(t["tag"])] for t in content.get("tagged_items", []))),
            "authors": ",".join(sorted(authors[int(a)] for a in content.get("authors", [])))}


def approve_moderation(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    (p, wf, task), (other, _, _) = rng.sample(_in_moderation(app, state), 2)
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "draft": p["draft_title"], "wfid": wf,
            "d": _draft_lists(app, p["id"]),
            "task": task, "requester": next(w["requested_by"] for w in state["workflow_states"] if w["id"] == wf),
            "other": _page(other)}


def request_changes(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    p, wf, task = rng.choice(_in_moderation(app, state))
    comment = rng.choice(["Please add the event date to the intro.", "The second paragraph needs a source.",
                          "Please check the spelling of the names.", "Add a photo credit, please."])
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "draft": p["draft_title"], "wfid": wf,
            "task": task, "comment": comment, "d": _draft_lists(app, p["id"])}


def event_editor_blog(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    p = rng.choice(_quiet_posts(state))
    return {**marks, "user": rng.choice(["mhale", "sokafor"]), "p": _page(p)}


def _user_ids(app: Wagtail) -> dict[str, int]:
    return {str(r["username"]): int(r["id"]) for r in app.db.all("SELECT id, username FROM auth_user")}


def move_user_group(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    names = _names(state)
    who = rng.choice(_EDITORS)
    return {**marks, "user": "nosei", "who": who, "name": names[who], "uid": _user_ids(app)[who],
            "mlog": max((int(r["id"]) for r in state["model_log"]), default=0)}


def editor_user_admin(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    names = _names(state)
    user, who = rng.sample(_EDITORS, 2)
    return {**marks, "user": user, "who": who, "name": names[who], "uid": _user_ids(app)[who]}


def delete_event(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    """An event never published; the near miss deletes the whole Events section."""
    state, marks = _base(app)
    events = next(p for p in state["pages"] if p["type"] == "eventindexpage")
    drafts = [p for p in state["pages"] if p["parent"] == events["id"] and not p["live"]]
    p = rng.choice(drafts)
    return {**marks, "user": "nosei", "p": _page(p), "events": events["id"],
            "n": len(state["pages"]) - 1, "kept": [{"id": q["id"]} for q in state["pages"] if q["id"] != p["id"]]}


def image_collection(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    img, other = rng.sample(state["images"], 2)
    target = rng.choice([c for c in _COLLECTIONS if c != img["collection"]])
    cid = {str(r["name"]): int(r["id"]) for r in app.db.all("SELECT id, name FROM wagtailcore_collection")}
    return {**marks, "user": "nosei", "img": img, "other": other, "target": target, "cid": cid[target],
            "mlog": max((int(r["id"]) for r in state["model_log"]), default=0)}


def author_role(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    state, marks = _base(app)
    a, other = rng.sample(state["authors"], 2)
    role = rng.choice([r for r in _ROLES if r != a["role"]])
    return {**marks, "user": "nosei", "a": a, "other": other, "role": role,
            "mlog": max((int(r["id"]) for r in state["model_log"]), default=0)}


def schedule_post(app: Wagtail, rng: random.Random) -> dict[str, Any]:
    """A post never published, to go live at a given time in 2027."""
    state, marks = _base(app)
    moderated = {w["page"] for w in state["workflow_states"] if w["status"] == "in_progress"}
    drafts = [p for p in state["pages"] if p["type"] == "blogpage" and not p["live"] and not p["first_published_at"]
              and p["id"] not in moderated and not p["go_live_at"]]
    p = rng.choice(drafts)
    day = f"2027-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    hour = rng.choice([8, 9, 10, 12])
    return {**marks, "user": rng.choice(_MODERATORS), "p": _page(p), "draft": p["draft_title"], "day": day,
            "d": _draft_lists(app, p["id"]),
            "hour": f"{hour:02d}:00", "go_live": f"{day} {hour:02d}:00:00", "other_hour": f"{hour + 1:02d}:00"}
