"""The code-review app (Patchbay): its data, its rules, and its main flows in Chromium.

The rules (merge only when open, checks passed, approved by someone else and no changes
asked; no review of one's own pull request; an inline comment only on a line the diff
shows) are checked on the page side over TCP, where a hand-made request cannot get past
them; the flows drive the real pages in Chromium, selecting by role, label and `data-`
attributes as oracles do, and read the database as a judge does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _app_server import open_tab
from _apps_common import Control, assert_refusals, check_nav_legible, check_reset_is_seeded, running_fixture, served_fixture
from playwright.async_api import Browser
from starlette.testclient import TestClient

from cua.tasks.apps.review import ReviewApp, merge_sha
from cua.tasks.apps.review.seed import diff_lines

Running = tuple[ReviewApp, TestClient, Control]


running = running_fixture("review", ReviewApp)


def _pull(app: ReviewApp, where: str, params: tuple[Any, ...] = ()) -> dict[str, Any]:
    p = app.db.one("SELECT p.*, r.name AS repo FROM pulls p JOIN repos r ON r.id = p.repo_id WHERE " + where + " ORDER BY p.id LIMIT 1",
                   params)
    assert p is not None, where
    return p


def _url(p: dict[str, Any], tail: str = "") -> str:
    return f"/r/{p['repo']}/pull/{p['number']}{tail}"


def _mergeable(app: ReviewApp) -> dict[str, Any]:
    for p in app.db.all("SELECT p.*, r.name AS repo FROM pulls p JOIN repos r ON r.id = p.repo_id WHERE p.status = 'open' ORDER BY p.id"):
        if not app.merge_blockers(p):
            return p
    raise AssertionError("no mergeable pull request in this seed")


def test_seeded_forge_is_realistic(running: Running) -> None:
    app, _, ctl = running
    state = ctl.state()
    assert len(state["repos"]) == 8 and len(state["people"]) == 20 and len(state["pulls"]) == 60
    assert len({p["locale"] for p in state["people"]}) >= 12
    assert {p["status"] for p in state["pulls"]} == {"open", "draft", "merged", "closed"}
    langs = {r["language"] for r in state["repos"]}
    assert {"go", "ts", "py"} <= langs
    per_pull = sorted((sum(1 for c in state["comments"] if c["pull_id"] == p["id"]) for p in state["pulls"]), reverse=True)
    assert per_pull[0] >= 8 and per_pull.count(0) >= 10  # a long tail: a few busy threads, many quiet ones
    for f in app.db.all("SELECT * FROM pull_files"):  # every diff is a real unified diff of the repository's file
        content = app.db.scalar("SELECT content FROM files f JOIN pulls p ON p.repo_id = f.repo_id WHERE p.id = ? AND f.path = ?",
                                (f["pull_id"], f["path"]))
        old = content.splitlines()
        for line in diff_lines(f["patch"]):
            if line.kind in ("ctx", "del"):
                assert old[line.old - 1] == line.text, (f["path"], line.old)
    merged = [p for p in state["pulls"] if p["status"] == "merged"]
    assert all(p["merged_at"] and p["merge_sha"] and p["merge_strategy"] in ("merge", "squash") for p in merged)
    assert all(p["created_at"] < "2026-03-02 09:00" for p in state["pulls"])
    assert not {"files", "pull_files", "pull_lines"} & set(state)  # static code, read by SQL only


def test_reset_is_deterministic_and_seeded(running: Running) -> None:
    check_reset_is_seeded(running[2])


def test_review_then_squash_merge_through_the_confirmation(running: Running) -> None:
    app, web, ctl = running
    p = _pull(app, "p.status = 'open' AND p.author_id != 1 AND NOT EXISTS (SELECT 1 FROM checks c WHERE c.pull_id = p.id AND c.status != 'pass') "
              "AND NOT EXISTS (SELECT 1 FROM reviews v WHERE v.pull_id = p.id AND v.verdict = 'changes')")
    app.db.execute("UPDATE reviews SET dismissed = 1, dismiss_reason = 'stale' WHERE pull_id = ?", (p["id"],))
    assert "approving review" in web.get(_url(p, "/merge")).text  # not approved yet: refused
    assert web.post(_url(p, "/review"), data={"verdict": "approve", "body": ""}).status_code == 200
    page = web.get(_url(p, "/merge"))
    assert page.status_code == 200 and 'data-action="confirm-merge"' in page.text
    assert ctl.state()["pulls"][p["id"] - 1]["status"] == "open"  # the confirmation page changes nothing
    assert web.post(_url(p, "/merge"), data={"strategy": "rebase"}).status_code == 400
    assert web.post(_url(p, "/merge"), data={"strategy": "squash"}).status_code == 200
    row = app.db.one("SELECT * FROM pulls WHERE id = ?", (p["id"],))
    assert row is not None
    assert (row["status"], row["merge_strategy"], row["merged_by"], row["merged_at"]) == ("merged", "squash", 1, "2026-03-02 09:00")
    assert row["merge_sha"] == merge_sha(p["repo"], p["number"], "squash", p["head"])
    for tail in ("/merge", "/close", "/reopen", "/review"):  # a merged pull request stays merged
        assert web.post(_url(p, tail), data={"strategy": "merge", "verdict": "comment", "body": "x"}).status_code == 400
    events = [e["event"] for r in app.db.all("SELECT events FROM cua_activity ORDER BY seq") for e in json.loads(r["events"])]
    assert events == ["merge"]


def test_rules_refuse_with_a_reason_and_change_nothing(running: Running) -> None:
    app, web, ctl = running
    failing = _pull(app, "p.status = 'open' AND EXISTS (SELECT 1 FROM checks c WHERE c.pull_id = p.id AND c.status = 'fail')")
    mine = _pull(app, "p.author_id = 1 AND p.status = 'open'")
    draft = _pull(app, "p.status = 'draft'")
    other = _pull(app, "p.status = 'open' AND p.author_id != 1")
    f = app.db.one("SELECT path, patch FROM pull_files WHERE pull_id = ?", (other["id"],))
    assert f is not None
    shown = {x.new for x in diff_lines(f["patch"])}
    missing = max(n for n in shown if n is not None) + 40
    author = app.db.scalar("SELECT login FROM people WHERE id = ?", (other["author_id"],))
    before = ctl.state()
    cases = [
        (_url(failing, "/merge"), {"strategy": "merge"}, "Failing checks"),
        (_url(draft, "/merge"), {"strategy": "squash"}, "draft"),
        (_url(mine, "/review"), {"verdict": "approve", "body": "lgtm"}, "your own pull request"),
        (_url(other, "/review"), {"verdict": "changes", "body": "  "}, "summary is empty"),
        (_url(other, "/review"), {"verdict": "merge"}, "Choose a verdict"),
        (_url(other, "/line-comment"), {"path": f["path"], "line": str(missing), "body": "here"}, "not in this diff"),
        (_url(other, "/line-comment"), {"path": "nope.go", "line": "1", "body": "here"}, "does not change"),
        (_url(other, "/comment"), {"body": "x" * 5001}, "at most"),
        (_url(other, "/labels"), {"op": "add", "label": "urgent!!"}, "Choose a label"),
        (_url(other, "/reviewers"), {"op": "add", "reviewer": author}, "author of a pull request cannot review"),
        (_url(other, "/threads/99999/resolve"), {"resolved": "1"}, "No such conversation"),
        (_url(other, "/reopen"), {}, "Only a closed"),
        ("/r/nowhere/pull/1/close", {}, "No repository"),
    ]
    assert_refusals(web, [(path, data, (400, 404), reason) for path, data, reason in cases], hides="javascript:")
    assert ctl.state() == before
    assert web.get("/pulls?status=sideways").status_code == 400


def test_a_dismissed_review_stays_in_the_history(running: Running) -> None:
    app, web, _ = running
    p = _pull(app, "p.status = 'open' AND p.author_id != 1")
    web.post(_url(p, "/review"), data={"verdict": "approve", "body": "Looks fine"})
    rid = app.db.scalar("SELECT MAX(id) FROM reviews WHERE pull_id = ? AND author_id = 1", (p["id"],))
    assert web.post(_url(p, f"/reviews/{rid}/dismiss"), data={"reason": " "}).status_code == 400
    assert web.post(_url(p, f"/reviews/{rid}/dismiss"), data={"reason": "Approved the wrong branch"}).status_code == 200
    assert web.post(_url(p, f"/reviews/{rid}/dismiss"), data={"reason": "again"}).status_code == 400
    rows = app.db.all("SELECT verdict, dismissed, dismiss_reason FROM reviews WHERE pull_id = ? AND author_id = 1", (p["id"],))
    assert rows == [{"verdict": "approve", "dismissed": 1, "dismiss_reason": "Approved the wrong branch"}]
    latest = app.latest_reviews(p["id"])
    assert 1 not in latest  # a dismissed approval no longer counts towards a merge


# --- in Chromium ---


served = served_fixture("review", ReviewApp)


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_comment_on_a_line_reply_and_resolve(browser: Browser, served: tuple[ReviewApp, str]) -> None:
    app, base = served
    app.reset(0)
    p = _pull(app, "p.status = 'open' AND p.author_id != 1")
    f = app.db.one("SELECT path, patch FROM pull_files WHERE pull_id = ? ORDER BY id", (p["id"],))
    assert f is not None
    line = next(x.new for x in diff_lines(f["patch"]) if x.kind == "add")
    tab = await open_tab(browser, base + _url(p))
    await tab.locator("[data-tab=files]").click()
    await tab.locator(f'[data-line-comment="{f["path"]}:{line}"] summary').click()
    await tab.get_by_role("textbox", name=f"Comment on line {line} of {f['path']}").fill("Can this be a constant?")
    await tab.locator(f'[data-line-comment="{f["path"]}:{line}"] [data-action=add-line-comment]').click()
    thread = tab.locator(f'[data-thread-id][data-path="{f["path"]}"][data-line="{line}"]')
    await thread.wait_for()
    t = app.db.one("SELECT * FROM threads WHERE pull_id = ? AND path = ? AND line = ? ORDER BY id DESC", (p["id"], f["path"], line))
    assert t is not None and t["resolved"] == 0
    assert app.db.all("SELECT author_id, body FROM comments WHERE thread_id = ?", (t["id"],)) == [
        {"author_id": 1, "body": "Can this be a constant?"}]
    await thread.get_by_role("textbox", name=f"Reply to the thread on {f['path']} line {line}").fill("Or a config value.")
    await thread.locator("[data-action=reply]").click()
    await tab.locator(f'[data-thread-id="{t["id"]}"] [data-action=resolve]').click()
    await tab.locator(f'[data-thread-id="{t["id"]}"][data-resolved="1"]').wait_for()
    assert app.db.one("SELECT resolved, resolved_by FROM threads WHERE id = ?", (t["id"],)) == {"resolved": 1, "resolved_by": 1}
    assert app.db.scalar("SELECT COUNT(*) FROM comments WHERE thread_id = ?", (t["id"],)) == 2


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_approve_label_reviewer_and_squash_merge(browser: Browser, served: tuple[ReviewApp, str]) -> None:
    app, base = served
    app.reset(0)
    p = _mergeable(app)
    tab = await open_tab(browser, base + _url(p, "/files"))
    await tab.get_by_label("Summary").fill("Ship it")
    await tab.locator("input[data-verdict=approve]").check()
    await tab.locator("[data-action=submit-review]").click()
    await tab.locator('[data-review-id][data-verdict=approve] >> text="Ship it"').wait_for()
    label = app.db.scalar("SELECT name FROM labels WHERE id NOT IN (SELECT label_id FROM pull_labels WHERE pull_id = ?) ORDER BY name",
                          (p["id"],))
    await tab.get_by_label("Add label").select_option(label)
    await tab.locator("[data-action=add-label]").click()
    await tab.locator(f'[data-list=labels] [data-item="{label}"]').wait_for()
    await tab.locator("[data-action=merge]").click()
    await tab.locator("input[data-strategy=squash]").check()
    assert app.db.scalar("SELECT status FROM pulls WHERE id = ?", (p["id"],)) == "open"  # not before the confirmation
    await tab.locator("[data-action=confirm-merge]").click()
    await tab.locator("[data-event=merged]").wait_for()
    assert app.db.one("SELECT status, merge_strategy FROM pulls WHERE id = ?", (p["id"],)) == {"status": "merged", "merge_strategy": "squash"}
    assert app.db.scalar("SELECT COUNT(*) FROM pull_labels x JOIN labels l ON l.id = x.label_id WHERE x.pull_id = ? AND l.name = ?",
                         (p["id"], label)) == 1
    assert app.db.scalar("SELECT COUNT(*) FROM pulls WHERE status = 'merged'") == 21  # that one only


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_filters_and_phone_layout(browser: Browser, served: tuple[ReviewApp, str]) -> None:
    app, base = served
    app.reset(0)
    author = app.db.one("SELECT a.login, COUNT(*) AS n FROM pulls p JOIN people a ON a.id = p.author_id WHERE p.status = 'open' "
                        "GROUP BY a.login ORDER BY n DESC, a.login LIMIT 1")
    assert author is not None
    tab = await open_tab(browser, base + "/pulls", width=390)
    await tab.locator("[data-filter=author]").select_option(author["login"])
    await tab.locator("[data-action=apply-filters]").click()
    await tab.wait_for_url("**author=*")
    assert await tab.locator("[data-pull-id]").count() == author["n"]
    assert await tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    p = _pull(app, "p.status = 'open'")
    await tab.goto(base + _url(p, "/files"))
    assert await tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("theme", ["light", "dark", "contrast"])
async def test_the_navigation_is_legible_in_every_theme(browser: Browser, served: tuple[ReviewApp, str], theme: str) -> None:
    await check_nav_legible(browser, served, "/pulls", theme)
