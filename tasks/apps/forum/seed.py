"""Deterministic forum: ~70 members from several locales, 400-460 posts over ten tags of
varied size, nested comment threads.

The shapes follow a real forum: a few members write most posts, most posts get a handful
of votes and comments while a few get hundreds of votes and dozens of comments, and posts
spread over eight months, denser towards now. Votes are left empty (they are mine).
"""

from __future__ import annotations

import datetime as dt
import math
import random

from cua.tasks.apps.base import AppDB
from cua.tasks.apps.forum.content import CLOSERS, GENERIC_REPLIES, HANDLES, ME, TAGS_CONTENT, Tag

TAGS = [t.name for t in TAGS_CONTENT]
SPAN_DAYS = 240  # how far back the posts go


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _titles(tag: Tag, rng: random.Random) -> list[tuple[str, str]]:
    """Every (title, subject) of `tag`, in a seeded order: drawn from the front, unique by construction."""
    pool = [(t.format(s=s, S=_cap(s)), s) for t in tag.titles for s in tag.subjects]
    rng.shuffle(pool)
    return pool


def _tag_sizes(rng: random.Random, pools: dict[str, int]) -> dict[str, int]:
    """Posts per tag: popularity with seeded jitter, 400-460 in all, none past its pool."""
    total = rng.randint(400, 460)
    weights = {t.name: t.popularity * rng.lognormvariate(0, 0.25) for t in TAGS_CONTENT}
    scale = total / sum(weights.values())
    sizes = {name: min(pools[name], max(6, round(w * scale))) for name, w in weights.items()}
    while sum(sizes.values()) < 400:  # a capped tag's share goes to the others
        name = max((n for n in sizes if sizes[n] < pools[n]), key=lambda n: weights[n] / (sizes[n] + 1))
        sizes[name] += 1
    return sizes


def _body(tag: Tag, subject: str, rng: random.Random) -> str:
    first = rng.choice(tag.openers).format(s=subject, S=_cap(subject))
    paragraphs = [" ".join([first, *rng.sample(tag.details, rng.randint(1, 3))])]
    if rng.random() < 0.45:
        paragraphs.append(" ".join(rng.sample(tag.details, rng.randint(1, 2))))
    if rng.random() < 0.6:
        paragraphs.append(rng.choice(CLOSERS))
    return "\n\n".join(paragraphs)


def _post_time(rng: random.Random, now: dt.datetime) -> dt.datetime:
    """Denser towards now, mostly in waking hours."""
    day = now - dt.timedelta(days=int(SPAN_DAYS * rng.random() ** 1.4))
    hour = min(23, max(0, round(rng.gauss(15, 4.5))))
    when = day.replace(hour=hour, minute=rng.randint(0, 59), second=0, microsecond=0)
    return min(when, now - dt.timedelta(minutes=rng.randint(30, 240)))


def _score(rng: random.Random) -> int:
    """Log-normal: median about 6, a few in the hundreds, some below zero."""
    return min(2500, int(rng.lognormvariate(1.8, 1.25))) - rng.randint(0, 4)


def _comment_count(rng: random.Random, score: int) -> int:
    """Heavy-tailed, and busier on popular posts."""
    pull = 1 + math.log1p(max(score, 0)) / 2.5
    return min(70, int(rng.paretovariate(1.3) * pull) - 1)


def seed_forum(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    members = [ME, *HANDLES]
    for name in members:
        joined = (now - dt.timedelta(days=rng.randint(SPAN_DAYS + 10, 3200))).date().isoformat()
        db.execute("INSERT INTO users (name, joined) VALUES (?, ?)", (name, joined))
    for name in TAGS:
        db.execute("INSERT INTO tags (name) VALUES (?)", (name,))
    # A few members write most of the posts (Zipf over a seeded order); I write a few.
    order = list(range(2, len(members) + 1))
    rng.shuffle(order)
    activity = [1 / (rank + 1) ** 0.7 for rank in range(len(order))]
    pools = {t.name: _titles(t, rng) for t in TAGS_CONTENT}
    sizes = _tag_sizes(rng, {name: len(pool) for name, pool in pools.items()})
    drafts: list[tuple[dt.datetime, Tag, str, str]] = []
    for tag in TAGS_CONTENT:
        drafts += [(_post_time(rng, now), tag, title, subject) for title, subject in pools[tag.name][:sizes[tag.name]]]
    drafts.sort(key=lambda d: d[0])  # ids grow with time, as in a real database
    for created, tag, title, subject in drafts:
        author = 1 if rng.random() < 0.03 else rng.choices(order, activity)[0]
        score = _score(rng)
        pid = db.insert("INSERT INTO posts (author_id, title, body, tag, created, score) VALUES (?, ?, ?, ?, ?, ?)",
                        (author, title, _body(tag, subject, rng), tag.name, created.isoformat(timespec="minutes"), score))
        _thread(db, rng, now, pid, tag, author, created, _comment_count(rng, score), order, activity)


def _thread(db: AppDB, rng: random.Random, now: dt.datetime, pid: int, tag: Tag, op: int, created: dt.datetime,
            count: int, order: list[int], activity: list[float]) -> None:
    """`count` comments under post `pid`: about a third are replies; each comes after what it answers."""
    comments: list[tuple[int, dt.datetime, int]] = []  # id, time, author
    for _ in range(count):
        parent = rng.choice(comments) if comments and rng.random() < 0.35 else None
        after = parent[1] if parent else created
        when = after + dt.timedelta(minutes=max(2, int(rng.lognormvariate(4.5, 1.4))))
        if when >= now:
            when = now - dt.timedelta(minutes=rng.randint(1, 9))
            when = max(when, after)
        roll = rng.random()
        author = 1 if roll < 0.04 else op if roll < 0.12 else rng.choices(order, activity)[0]
        text = rng.choice(tag.replies if rng.random() < 0.45 else GENERIC_REPLIES)
        if rng.random() < 0.25:
            text = f"{text} {rng.choice(tag.replies)}" if not text.endswith("?") else text
        score = int(rng.lognormvariate(0.9, 1.1)) - rng.randint(0, 2)
        cid = db.insert(
            "INSERT INTO comments (post_id, parent_id, author_id, body, created, score) VALUES (?, ?, ?, ?, ?, ?)",
            (pid, parent[0] if parent else None, author, text, when.isoformat(timespec="minutes"), score))
        comments.append((cid, when, author))
