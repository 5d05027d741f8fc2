"""The social feed (Murmur): its data, its rules, and its main flows in Chromium.

The rules (280 characters; no reply, like or vote on a deleted post; one vote per poll,
never on one's own; only one's own posts deleted; a blocked account vanishes from feeds and
can be neither followed nor messaged) are checked on the page side over TCP, where a
hand-made request cannot get past them; the flows drive the real pages in Chromium,
selecting by role, label and `data-` attributes as oracles do, and read the database as a
judge does. A de-DE page shows German UI, dates and numbers.
"""

from __future__ import annotations

import json
import statistics
from typing import Any

import pytest
from _app_server import open_tab
from _apps_common import Control, assert_refusals, check_nav_legible, check_reset_is_seeded, running_fixture, served_fixture
from playwright.async_api import Browser
from starlette.testclient import TestClient

from cua.tasks.apps.social import SocialApp
from cua.tasks.apps.social.seed import hashtags
from cua.variant import Variant

Running = tuple[SocialApp, TestClient, Control]
CUTOFF = "2026-01-31 09:00"  # 30 days before the app's clock


running = running_fixture("social", SocialApp)


def _one(app: SocialApp, sql: str, params: tuple[Any, ...] = ()) -> dict[str, Any]:
    row = app.db.one(sql, params)
    assert row is not None, sql
    return row


def _followed_poster(app: SocialApp) -> dict[str, Any]:
    """An account the signed-in one follows, with live top-level posts carrying a hashtag."""
    return _one(app, "SELECT a.* FROM accounts a JOIN follows f ON f.followee_id = a.id AND f.follower_id = 1 "
                     "WHERE (SELECT COUNT(*) FROM posts p WHERE p.author_id = a.id AND p.reply_to IS NULL AND p.deleted_at IS NULL "
                     "AND instr(p.body, '#') > 0) >= 2 ORDER BY a.id LIMIT 1")


def test_seeded_feed_is_realistic(running: Running) -> None:
    app, _, ctl = running
    state = ctl.state()
    accounts, posts = state["accounts"], state["posts"]
    assert len(accounts) == 150 and 1300 <= len(posts) <= 1700
    assert len({a["locale"] for a in accounts}) >= 12
    assert all(a["bio"] and "#" not in a["handle"] for a in accounts)
    likes: dict[int, int] = {}
    for lk in state["likes"]:
        likes[lk["post_id"]] = likes.get(lk["post_id"], 0) + 1
    counts = sorted((likes.get(p["id"], 0) for p in posts), reverse=True)
    assert counts[0] >= 60 and statistics.median(counts) <= 2  # a heavy tail: a few hits, most posts quiet
    replies = [p for p in posts if p["reply_to"]]
    assert len(replies) >= 250 and any(p["quote_of"] for p in posts) and state["polls"] and any(p["image_alt"] for p in posts)
    days = {p["created_at"][:10] for p in posts}
    assert len(days) >= 35 and max(p["created_at"] for p in posts) < "2026-03-02 09:00"
    top_level = [p["body"] for p in posts if not p["reply_to"]]
    assert len(set(top_level)) == len(top_level)  # every post's text is its own
    assert len({t for p in posts for t in hashtags(p["body"])}) >= 30
    last = {r["author_id"]: r["last"] for r in app.db.all("SELECT author_id, MAX(created_at) AS last FROM posts GROUP BY author_id")}
    quiet = [a for a in accounts if last.get(a["id"], "") < CUTOFF]
    assert 8 <= len(quiet) <= 40
    mine = [p for p in posts if p["author_id"] == 1]
    assert 15 <= len(mine) <= 80
    assert {n["kind"] for n in state["notifications"]} >= {"like", "reply", "follow", "mention"}
    assert state["settings"][0]["backup_code"] and state["blocks"] and state["mutes"]


def test_reset_is_deterministic_and_seeded(running: Running) -> None:
    check_reset_is_seeded(running[2])


def test_rules_refuse_with_a_reason_and_change_nothing(running: Running) -> None:
    app, web, ctl = running
    deleted = _one(app, "SELECT id FROM posts WHERE deleted_at IS NOT NULL ORDER BY id")["id"]
    theirs = _one(app, "SELECT id FROM posts WHERE author_id NOT IN (1, 150) AND deleted_at IS NULL AND author_id NOT IN "
                       "(SELECT account_id FROM blocks) ORDER BY id")["id"]
    blocked = _one(app, "SELECT a.handle FROM blocks b JOIN accounts a ON a.id = b.account_id")["handle"]
    open_poll = _one(app, "SELECT x.post_id FROM polls x JOIN posts p ON p.id = x.post_id WHERE x.closes_at > '2026-03-02 09:00' "
                          "AND p.author_id != 1 ORDER BY x.id")["post_id"]
    closed_poll = _one(app, "SELECT x.post_id FROM polls x WHERE x.closes_at <= '2026-03-02 09:00' ORDER BY x.id")["post_id"]
    other_option = _one(app, "SELECT o.id FROM poll_options o JOIN polls x ON x.id = o.poll_id WHERE x.post_id != ? ORDER BY o.id",
                        (open_poll,))["id"]
    web.post("/posts", data={"body": "My poll?", "option1": "Yes", "option2": "No"})  # one of mine to vote in
    mine_poll = _one(app, "SELECT post_id FROM polls ORDER BY id DESC")["post_id"]
    before = ctl.state()
    cases = [
        ("/posts", {"body": "x" * 281}, "at most 280"),
        ("/posts", {"body": "   "}, "empty"),
        ("/posts", {"body": "Still here?", "reply_to": str(deleted)}, "deleted"),
        ("/posts", {"body": "Look", "quote_of": str(deleted)}, "deleted"),
        ("/posts", {"body": "Which?", "option1": "Only one"}, "at least two"),
        ("/posts", {"body": "Which?", "option1": "A", "option2": "a"}, "different"),
        ("/posts", {"body": "Which?", "option1": "A", "option2": "B", "poll_days": "30"}, "1, 3 or 7"),
        ("/posts", {"body": "Both", "reply_to": str(theirs), "quote_of": str(theirs)}, "not both"),
        (f"/p/{deleted}/like", {"on": "1"}, "deleted"),
        (f"/p/{open_poll}/vote", {"option": str(other_option)}, "Choose one of the poll"),
        (f"/p/{closed_poll}/vote", {"option": "1"}, "closed"),
        (f"/p/{mine_poll}/vote", {"option": "1"}, "your own poll"),
        (f"/p/{theirs}/delete", {}, "only delete your own"),
        ("/u/ines_duarte/follow", {"on": "1"}, "follow yourself"),
        (f"/u/{blocked}/follow", {"on": "1"}, "blocked"),
        (f"/messages/{blocked}", {"body": "hi"}, "blocked"),
        ("/messages/nobody_at_all", {"body": "hi"}, "No such account"),
        ("/lists", {"name": "x" * 26}, "at most 25"),
        ("/lists", {"name": "design FOLKS"}, "already have a list"),
        ("/lists/1/members", {"op": "add", "handle": "@no_such_person"}, "No such account"),
        ("/settings", {"reply_policy": "nobody"}, "Choose who can reply"),
        ("/settings/profile", {"name": "Inês Duarte", "bio": "", "location": "", "link": "javascript:alert(1)"}, "https://"),
        ("/settings/mutes", {"op": "add", "kind": "hashtag", "target": "two words"}, "letters, digits"),
    ]
    assert_refusals(web, [(path, data, (400, 403, 404), reason) for path, data, reason in cases], follow_redirects=False)
    after = ctl.state()
    assert after == before
    for path in ("/?page=0", "/search?q=x&type=places", "/u/ines_duarte/following?activity=sleepy", "/notifications?filter=odd"):
        assert web.get(path).status_code == 400, path
    assert web.get("/p/99999").status_code == 404 and web.get("/u/nobody_at_all").status_code == 404


def test_a_blocked_account_vanishes_from_feeds_and_follows(running: Running) -> None:
    app, web, _ = running
    a = _followed_poster(app)
    tag = hashtags(_one(app, "SELECT body FROM posts WHERE author_id = ? AND reply_to IS NULL AND deleted_at IS NULL AND instr(body, '#') > 0 "
                             "ORDER BY created_at DESC", (a["id"],))["body"])[0]
    marker = f'data-author="{a["handle"]}"'
    assert marker in web.get(f"/tags/{tag}").text
    assert web.get(f"/u/{a['handle']}/block").status_code == 200 and not app.db.scalar("SELECT COUNT(*) FROM blocks WHERE account_id = ?",
                                                                                         (a["id"],))  # the confirmation changes nothing
    assert web.post(f"/u/{a['handle']}/block", data={"on": "1"}).status_code == 200
    assert app.db.scalar("SELECT COUNT(*) FROM follows WHERE (follower_id = 1 AND followee_id = ?) OR (follower_id = ? AND followee_id = 1)",
                         (a["id"], a["id"])) == 0
    for page in ("/", f"/tags/{tag}", "/explore", f"/search?q={tag}"):
        assert marker not in web.get(page).text, page
    assert "data-blocked-note" in web.get(f"/u/{a['handle']}").text
    web.post(f"/u/{a['handle']}/block", data={"on": "0"})
    assert marker in web.get(f"/tags/{tag}").text  # unblocked: seen again, but no longer followed
    assert not app.db.scalar("SELECT COUNT(*) FROM follows WHERE follower_id = 1 AND followee_id = ?", (a["id"],))


def test_counts_come_from_the_rows_and_a_deleted_post_stays_a_tombstone(running: Running) -> None:
    app, web, _ = running
    p = _one(app, "SELECT id FROM posts WHERE author_id NOT IN (1, 150) AND deleted_at IS NULL AND author_id NOT IN (SELECT account_id FROM blocks) "
                  "ORDER BY id")
    n = app.db.scalar("SELECT COUNT(*) FROM likes WHERE post_id = ?", (p["id"],))
    assert f'data-likes="{n}"' in web.get(f"/p/{p['id']}").text
    web.post(f"/p/{p['id']}/like", data={"on": "1"})
    web.post(f"/p/{p['id']}/like", data={"on": "1"})  # twice is still one like
    assert f'data-likes="{n + 1}" data-liked="1"' in web.get(f"/p/{p['id']}").text
    web.post("/posts", data={"body": "Posted by mistake #oops"})
    mine = _one(app, "SELECT id FROM posts WHERE author_id = 1 ORDER BY id DESC")["id"]
    assert web.get(f"/p/{mine}/delete").status_code == 200
    assert app.db.scalar("SELECT deleted_at FROM posts WHERE id = ?", (mine,)) is None  # the confirmation page changes nothing
    web.post(f"/p/{mine}/delete")
    row = _one(app, "SELECT body, deleted_at FROM posts WHERE id = ?", (mine,))
    assert row == {"body": "Posted by mistake #oops", "deleted_at": "2026-03-02 09:00"}
    assert 'data-deleted="1"' in web.get(f"/p/{mine}").text and "Posted by mistake" not in web.get("/u/ines_duarte").text
    events = [e["event"] for r in app.db.all("SELECT events FROM cua_activity ORDER BY seq") for e in json.loads(r["events"])]
    assert events == ["post"]  # published once: the tombstone does not undo it


def test_the_inactive_filter_lists_exactly_the_quiet_accounts(running: Running) -> None:
    app, web, _ = running
    quiet = {r["handle"] for r in app.db.all(
        "SELECT a.handle FROM follows f JOIN accounts a ON a.id = f.followee_id WHERE f.follower_id = 1 AND "
        "COALESCE((SELECT MAX(created_at) FROM posts WHERE author_id = a.id AND deleted_at IS NULL), '') < ?", (CUTOFF,))}
    assert quiet
    page = web.get("/u/ines_duarte/following?activity=inactive").text
    shown = {h["handle"] for h in app.db.all("SELECT handle FROM accounts") if f'data-followee="{h["handle"]}"' in page}
    assert shown == quiet


# --- in Chromium ---


served = served_fixture("social", SocialApp)


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_compose_with_the_counter_a_poll_a_reply_and_a_quote(browser: Browser, served: tuple[SocialApp, str]) -> None:
    app, base = served
    app.reset(0)
    tab = await open_tab(browser, base + "/")
    box = tab.get_by_role("textbox", name="What's happening?")
    await box.fill("x" * 290)
    counter = tab.locator("[data-counter]")
    assert await counter.inner_text() == "-10" and await counter.get_attribute("class") == "counter over"
    await box.fill("Dark mode or light mode for the new site? #design")
    assert await counter.inner_text() == str(280 - len("Dark mode or light mode for the new site? #design"))
    await tab.locator("[data-action=add-poll]").click()
    await tab.get_by_label("Choice 1").fill("Dark")
    await tab.get_by_label("Choice 2").fill("Light")
    await tab.locator("[data-action=publish]").click()
    await tab.locator("[data-poll-id]").wait_for()
    post = _one(app, "SELECT * FROM posts WHERE author_id = 1 ORDER BY id DESC")
    assert post["body"] == "Dark mode or light mode for the new site? #design" and post["reply_to"] is None
    assert [o["label"] for o in app.db.all("SELECT o.label FROM poll_options o JOIN polls x ON x.id = o.poll_id WHERE x.post_id = ? "
                                           "ORDER BY o.position", (post["id"],))] == ["Dark", "Light"]
    other = _followed_poster(app)
    target = _one(app, "SELECT id FROM posts WHERE author_id = ? AND reply_to IS NULL AND deleted_at IS NULL ORDER BY id DESC", (other["id"],))
    await tab.goto(f"{base}/p/{target['id']}")
    await tab.get_by_role("textbox", name="Your reply").fill("Agreed!")
    await tab.locator("[data-action=send-reply]").click()
    await tab.locator("[data-replies] [data-author=ines_duarte]").wait_for()
    await tab.locator(f'[data-post-id="{target["id"]}"] [data-action=quote]').click()
    await tab.get_by_role("textbox", name="Add a comment").fill("Read this")
    await tab.locator("[data-action=publish]").click()
    await tab.locator(f'[data-quoted="{target["id"]}"]').wait_for()
    rows = app.db.all("SELECT body, reply_to, quote_of FROM posts WHERE author_id = 1 AND id > ? ORDER BY id", (post["id"],))
    assert rows == [{"body": "Agreed!", "reply_to": target["id"], "quote_of": None},
                    {"body": "Read this", "reply_to": None, "quote_of": target["id"]}]


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_vote_list_mute_and_notifications(browser: Browser, served: tuple[SocialApp, str]) -> None:
    app, base = served
    app.reset(0)
    poll = _one(app, "SELECT x.id, x.post_id FROM polls x JOIN posts p ON p.id = x.post_id WHERE x.closes_at > '2026-03-02 09:00' "
                     "AND p.author_id != 1 ORDER BY x.id")
    option = _one(app, "SELECT id, label FROM poll_options WHERE poll_id = ? ORDER BY position DESC", (poll["id"],))
    tab = await open_tab(browser, f"{base}/p/{poll['post_id']}")
    await tab.get_by_role("radio", name=option["label"]).check()
    await tab.locator("[data-action=vote]").click()
    await tab.locator('[data-voted="1"]').wait_for()
    assert app.db.all("SELECT option_id, account_id FROM poll_votes WHERE poll_id = ? AND account_id = 1", (poll["id"],)) == [
        {"option_id": option["id"], "account_id": 1}]
    people = app.db.all("SELECT a.handle FROM accounts a JOIN follows f ON f.followee_id = a.id AND f.follower_id = 1 ORDER BY a.id LIMIT 2")
    await tab.goto(base + "/lists")
    await tab.get_by_label("Name", exact=True).fill("Coffee crew")
    await tab.locator("[data-action=create-list]").click()
    for p in people:
        await tab.get_by_label("Add someone by handle").fill("@" + p["handle"].upper())
        await tab.locator("[data-action=add-member]").click()
        await tab.locator(f'[data-member="{p["handle"]}"]').wait_for()
    lid = _one(app, "SELECT id FROM lists WHERE name = 'Coffee crew'")["id"]
    assert app.db.scalar("SELECT COUNT(*) FROM list_members WHERE list_id = ?", (lid,)) == 2
    await tab.goto(base + "/tags/sourdough")
    await tab.locator("[data-action=mute-tag]").click()
    await tab.locator("[data-muted-tag]").wait_for()
    assert app.db.scalar("SELECT COUNT(*) FROM mutes WHERE kind = 'hashtag' AND target = 'sourdough'") == 1
    await tab.goto(base + "/")
    assert await tab.locator('[data-hashtag="sourdough"]').count() == 0  # muted: gone from the home feed
    await tab.goto(base + "/notifications")
    await tab.locator("[data-action=mark-all-read]").click()
    await tab.locator('[data-tab=all][aria-current=page]').wait_for()
    assert app.db.scalar("SELECT COUNT(*) FROM notifications WHERE read = 0") == 0


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_german_page_reads_german(browser: Browser, served: tuple[SocialApp, str]) -> None:
    app, base = served
    app.reset(0)
    closed = _one(app, "SELECT x.post_id FROM polls x WHERE x.closes_at <= '2026-03-02 09:00' AND "
                       "(SELECT COUNT(*) FROM poll_votes v WHERE v.poll_id = x.id) > 0 ORDER BY x.id")
    app.variant = Variant(locale="de-DE", layout="sidebar", theme="dark")
    try:
        tab = await open_tab(browser, base + "/u/ines_duarte")
        assert await tab.evaluate("document.documentElement.lang") == "de-DE"
        nav = await tab.locator("header.appbar nav").inner_text()
        assert "Start" in nav and "Entdecken" in nav and "Einstellungen" in nav and "Home" not in nav
        text = await tab.locator("main").inner_text()
        assert "Dabei seit Mai 2019" in text and "Beiträge" in text and "vor " in text
        await tab.goto(f"{base}/p/{closed['post_id']}")
        pcts = await tab.locator(".poll .pct").all_inner_texts()
        assert pcts and all("," in p and p.endswith("%") for p in pcts)  # 42,9 %
        assert "Endergebnis" in await tab.locator("[data-votes]").inner_text()
        await tab.goto(base + "/")
        assert await tab.get_by_role("textbox", name="Was gibt's Neues?").count() == 1
    finally:
        app.variant = Variant()


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_phone_gets_one_column_and_big_targets(browser: Browser, served: tuple[SocialApp, str]) -> None:
    app, base = served
    app.reset(0)
    pid = _one(app, "SELECT post_id FROM polls ORDER BY id")["post_id"]
    for path in ("/", f"/p/{pid}", "/u/ines_duarte", "/messages", "/settings"):
        tab = await open_tab(browser, base + path, width=390)
        assert await tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), path
        small = await tab.evaluate("""() => [...document.querySelectorAll('header.appbar nav a, .actions .icon-btn, button')]
            .filter(e => e.offsetParent !== null).map(e => e.getBoundingClientRect()).filter(r => r.height < 44).length""")
        assert small == 0, path
        await tab.context.close()


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("theme", ["light", "dark", "contrast", "sepia"])
async def test_the_navigation_is_legible_in_every_theme(browser: Browser, served: tuple[SocialApp, str], theme: str) -> None:
    await check_nav_legible(browser, served, "/explore", theme)
