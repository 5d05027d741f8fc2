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

__all__ = ["create_post", "move_page", "retitle_publish", "revert_revision", "submit_for_moderation",
           "unpublish_page", "unpublish_tag", "who_last_edited"]

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
