"""The forum's seeded data: shaped like a real forum (issue 32, item 3), and safe for the
templates that read it. Read in process from the app's own database at seeds 0-5, the
seeds QA and the task listings draw."""

from __future__ import annotations

import re
import statistics
from pathlib import Path
from typing import Any

import pytest
import yaml

from cua.tasks.apps.forum import ForumApp
from cua.tasks.apps.forum.content import TAGS_CONTENT

SEEDS = range(6)
SUITES = Path(__file__).resolve().parents[2] / "tasks" / "suites"


@pytest.fixture(scope="module")
def app() -> ForumApp:
    return ForumApp()


def _column(app: ForumApp, sql: str) -> list[Any]:
    return [next(iter(row.values())) for row in app.db.all(sql)]


@pytest.mark.parametrize("seed", SEEDS)
def test_titles_are_unique_without_suffixes_and_fit_their_tag(app: ForumApp, seed: int) -> None:
    """Titles once reached uniqueness by "#619" and "(again)" suffixes."""
    app.reset(seed)
    posts = app.db.all("SELECT title, tag, body FROM posts")
    titles = [p["title"] for p in posts]
    assert len(titles) >= 400 and len(set(titles)) == len(titles)
    assert not [t for t in titles if re.search(r"#\d+|\(again\)", t)]
    subjects = {t.name: [s.lower() for s in t.subjects] for t in TAGS_CONTENT}
    for p in posts:  # a post's title and its first sentence name the same subject of its tag
        named = [s for s in subjects[p["tag"]] if s in p["title"].lower()]
        assert named and any(s in p["body"].lower() for s in named), p


@pytest.mark.parametrize("seed", SEEDS)
def test_activity_has_a_long_tail(app: ForumApp, seed: int) -> None:
    """Most posts get few comments and votes, a few get many; a few members write most posts;
    tags differ in size; posts spread over months. The old seed gave every post 0-8
    comments, scores uniform in -3..250, tags of near-equal size, and three months."""
    app.reset(seed)
    comments = sorted(_column(app, "SELECT (SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id) FROM posts p"))
    assert statistics.median(comments) <= 2 and comments[-1] >= 30
    scores = sorted(_column(app, "SELECT score FROM posts"))
    assert statistics.median(scores) <= 10 and scores[-1] >= 10 * max(statistics.median(scores), 1) and scores[0] < 0
    tags = _column(app, "SELECT COUNT(*) FROM posts GROUP BY tag ORDER BY 1")
    assert len(tags) == 10 and tags[-1] >= 2.5 * tags[0]
    per_author = sorted(_column(app, "SELECT COUNT(*) FROM posts GROUP BY author_id"))
    assert per_author[-1] >= 8 * statistics.median(per_author)
    months = _column(app, "SELECT COUNT(DISTINCT substr(created, 1, 7)) FROM posts")[0]
    assert months >= 7
    assert _column(app, "SELECT COUNT(*) FROM comments c JOIN comments p ON p.id = c.parent_id WHERE c.created < p.created") == [0]
    assert _column(app, "SELECT COUNT(*) FROM comments c JOIN posts p ON p.id = c.post_id WHERE c.created < p.created") == [0]


def _texts_agents_write() -> set[str]:
    """Every fixed text a forum-reading template asks an agent to post: a seeded comment or
    title equal to one would satisfy (or confuse) its judge before the agent acts."""
    texts: set[str] = set()
    for path in [SUITES / "forum" / "forum.yaml", SUITES / "safety" / "web.yaml"]:
        for template in yaml.safe_load(path.read_text())["templates"]:
            for param in (template.get("params") or {}).values():
                if param.get("type") == "string":
                    texts.update(str(v) for v in param["values"])
    return texts


def test_no_seeded_text_is_one_an_agent_is_asked_to_write(app: ForumApp) -> None:
    asked = {t.lower() for t in _texts_agents_write()}
    assert "thanks for sharing this!" in asked  # the templates were read
    for seed in SEEDS:
        app.reset(seed)
        seeded = {str(t).lower() for t in _column(app, "SELECT body FROM comments UNION SELECT title FROM posts")}
        assert not seeded & asked, seed
