"""Wagtail as a real product (cua.tasks.products.wagtail): the service speaks the app contract
through waitress, a reset restores the seed exactly (the database and the media folder),
snapshots restore and fork, Wagtail's own audit trail and the activity log keep a page
published and then unpublished, the page side answers loopback hosts only, a bad
configuration is a typed error, and one oracle passes judge QA in a real browser.

Each test that starts the service runs Wagtail (under the Wagtail venv) and is marked slow."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _product as harness
import httpx
import pytest

from cua.tasks.products.base import ProductConfigError
from cua.tasks.products.wagtail import Wagtail, build

pytestmark = pytest.mark.skipif(not build.wagtail_python().is_file(),
                                reason="Wagtail is not installed (scripts/setup.sh makes its venv)")



class Service(harness.Service):
    """The site's service, with a browser-like login and the admin's forms."""

    app = "wagtail"
    ready_timeout_s = 240.0  # a first run migrates and seeds the image

    def login(self, user: str) -> httpx.Client:
        """A browser-like client logged in through the Wagtail admin's login form."""
        client = httpx.Client(base_url=self.base, timeout=60)
        client.get("/admin/login/")
        r = client.post("/admin/login/", data={"username": user, "password": build.PASSWORD,
                                               "csrfmiddlewaretoken": client.cookies["csrftoken"]})
        assert r.status_code == 302 and "sessionid" in client.cookies, r.text[:500]
        return client

    @staticmethod
    def post(client: httpx.Client, path: str, **data: str) -> None:
        """Submit a form of the admin as its page does (the CSRF token); the admin redirects."""
        r = client.post(path, data={"csrfmiddlewaretoken": client.cookies["csrftoken"], **data})
        assert r.status_code == 302, r.text[:2000]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    with harness.running(Service, tmp_path) as svc:
        yield svc


def _page(state: dict[str, Any], pid: int) -> dict[str, Any]:
    return next(p for p in state["pages"] if p["id"] == pid)


def _live_post(state: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in state["pages"] if p["type"] == "blogpage" and p["live"] and not p["has_unpublished_changes"])


@pytest.mark.slow
def test_the_service_serves_real_pages_and_answers_the_contract(service: Service) -> None:
    assert service.control.get("/__cua/health").json() == {"ok": True, "app": "wagtail", "seed": 0}
    blog = httpx.get(f"{service.base}/blog/", timeout=60)
    assert blog.status_code == 200 and "Harbourlight" in blog.text
    login = httpx.get(f"{service.base}/admin/login/", timeout=60)
    assert login.status_code == 200 and 'name="username"' in login.text
    state = service.state()
    posts = [p for p in state["pages"] if p["type"] == "blogpage"]
    assert len(posts) >= 60 and len(state["revisions"]) > 150 and len(state["users"]) >= 9
    assert {p["type"] for p in state["pages"]} >= {"homepage", "blogindexpage", "blogpage", "eventindexpage",
                                                  "eventpage", "formpage"}
    assert any(p["go_live_at"] and not p["live"] for p in posts)  # scheduled
    assert any(p["live"] and p["has_unpublished_changes"] for p in posts)  # a newer draft
    assert any(not p["live"] and not p["first_published_at"] for p in posts)  # never published
    assert [w["status"] for w in state["workflow_states"]].count("in_progress") >= 3  # in moderation
    actions = {e["action"] for e in state["page_log"]}
    assert actions >= {"wagtail.create", "wagtail.edit", "wagtail.publish", "wagtail.unpublish",
                       "wagtail.workflow.start"}
    assert {u["groups"] for u in state["users"]} >= {"Editors", "Moderators", "Event editors", ""}
    assert len(state["images"]) >= 10 and len(state["documents"]) >= 5 and len(state["authors"]) >= 6
    image = httpx.get(f"{service.base}/media/{state['images'][0]['file']}", timeout=60)
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")


@pytest.mark.slow
def test_the_page_side_answers_loopback_hosts_only(service: Service) -> None:
    assert httpx.get(f"{service.base}/__cua/state", timeout=30, follow_redirects=True).status_code == 404
    assert httpx.get(f"{service.base}/blog/", headers={"Host": "evil.example"}, timeout=30).status_code == 403
    client = httpx.Client(base_url=service.base, timeout=60)
    try:
        client.get("/admin/login/")
        wrong = client.post("/admin/login/", data={"username": "lrossi", "password": "guess",
                                                   "csrfmiddlewaretoken": client.cookies["csrftoken"]})
        assert wrong.status_code == 200 and "sessionid" not in client.cookies
    finally:
        client.close()


@pytest.mark.slow
def test_reset_puts_the_seed_back_byte_for_byte(service: Service, tmp_path: Path) -> None:
    before = service.state()
    image = service.snapshot()
    post = _live_post(before)
    client = service.login("lrossi")
    try:
        service.post(client, f"/admin/pages/{post['id']}/unpublish/")
    finally:
        client.close()
    log = service.sql("SELECT request, changes FROM cua_activity ORDER BY seq")
    assert [r["request"] for r in log if "unpublish" in r["changes"]] == [f"POST /admin/pages/{post['id']}/unpublish/"]
    assert _page(service.state(), post["id"])["live"] == 0
    assert httpx.get(f"{service.base}{post['url_path'].removeprefix('/harbourlight')}", timeout=60).status_code == 404
    service.reset(0)
    assert harness.dump(service.state()) == harness.dump(before)
    assert harness.image_content(service.snapshot()) == harness.image_content(image)
    assert service.sql("SELECT count(*) AS n FROM cua_activity") == [{"n": 0}]
    assert httpx.get(f"{service.base}{post['url_path'].removeprefix('/harbourlight')}", timeout=60).status_code == 200
    media = httpx.get(f"{service.base}/media/{before['images'][0]['file']}", timeout=60)
    assert media.status_code == 200 and media.content.startswith(b"\x89PNG")  # the seed's media folder is kept


@pytest.mark.slow
def test_a_page_published_then_unpublished_stays_in_the_audit_trail(service: Service) -> None:
    """A moderator approves a post in moderation (Wagtail publishes it) and then unpublishes
    it: the end state shows the post unpublished, as it was in the seed, but Wagtail's log
    and the activity log keep the publishing."""
    before = service.state()
    waiting = next(w for w in before["workflow_states"] if w["status"] == "in_progress")
    pid = waiting["page"]
    assert _page(before, pid)["live"] == 0
    task_state = service.sql("SELECT current_task_state_id AS t FROM wagtailcore_workflowstate WHERE id = ?",
                             waiting["id"])[0]["t"]
    client = service.login("dwong")
    try:
        service.post(client, f"/admin/pages/workflow/action/{pid}/approve/{task_state}/", comment="")
        assert _page(service.state(), pid)["live"] == 1
        service.post(client, f"/admin/pages/{pid}/unpublish/")
    finally:
        client.close()
    state = service.state()
    assert _page(state, pid)["live"] == 0  # the end state alone: unpublished, as at the seed
    trail = [e["action"] for e in state["page_log"] if e["page"] == pid and e["user"] == "dwong"]
    assert "wagtail.publish" in trail and trail[-1] == "wagtail.unpublish"
    changes = [json.loads(r["changes"]) for r in service.sql("SELECT changes FROM cua_activity ORDER BY seq")]
    published = [c for c in changes if '"wagtail.publish"' in json.dumps(c)]
    assert published and '"wagtail.unpublish"' in json.dumps(changes[-1])


@pytest.mark.slow
def test_snapshot_restore_and_fork_keep_the_site(service: Service, tmp_path: Path) -> None:
    post = _live_post(service.state())
    client = service.login("lrossi")
    try:
        service.post(client, f"/admin/pages/{post['id']}/unpublish/")
    finally:
        client.close()
    image = service.snapshot()
    at_snapshot = service.state()
    service.reset(0)
    assert _page(service.state(), post["id"])["live"] == 1
    assert service.restore(image).status_code == 200
    assert harness.dump(service.state()) == harness.dump(at_snapshot)
    fork = Service(tmp_path, name="fork")
    try:
        assert fork.restore(image).status_code == 200
        assert harness.dump(fork.state()) == harness.dump(at_snapshot)
        other = _live_post(fork.state())
        client = fork.login("dwong")
        try:
            fork.post(client, f"/admin/pages/{other['id']}/unpublish/")
        finally:
            client.close()
        assert _page(service.state(), other["id"])["live"] == 1  # only in the fork
    finally:
        fork.close()
    harness.assert_a_bad_image_changes_nothing(service)


@pytest.mark.slow
def test_an_image_from_judge_qa_copy_runs_in_the_live_site(service: Service) -> None:
    """Judge QA writes the in-process copy's image (no search index) into the live instance."""
    harness.assert_takes_the_copys_image(service, Wagtail())
    client = service.login("lrossi")
    try:
        assert client.get("/admin/pages/search/?q=harbour").status_code == 200
        assert client.get("/admin/pages/").status_code == 200
    finally:
        client.close()


@pytest.mark.slow
def test_bad_configuration_is_a_typed_error(tmp_path: Path) -> None:
    missing = {"CUA_WAGTAIL_PYTHON": str(tmp_path / "nowhere" / "python")}
    harness.assert_refuses_bad_configuration("wagtail", tmp_path, missing, "Wagtail is not installed")
    with pytest.raises(ProductConfigError):
        Wagtail().reset(-1)


@pytest.mark.slow
def test_the_committed_schema_is_the_installed_one() -> None:
    conn = sqlite3.connect(":memory:")
    conn.deserialize(build.template_image().read_bytes())
    rows = conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
                        "AND tbl_name NOT LIKE 'wagtailsearch_indexentry%' ORDER BY rowid")
    installed = [str(r[0]) for r in rows]
    committed = [s.strip() for s in re.split(r";\n", Wagtail.schema[Wagtail.schema.index("CREATE"):]) if s.strip()]
    assert committed == installed


@pytest.mark.slow
def test_an_oracle_passes_judge_qa_in_a_real_browser() -> None:
    harness.assert_oracle_passes_judge_qa("cms_wagtail.unpublish_page@1",
                                          ("schema_mutation", "history", "forged_signal", "collateral"))


@pytest.mark.slow
def test_a_stopped_service_leaves_no_instance_folder(tmp_path: Path) -> None:
    """A sandbox stops its service with SIGTERM: the instance's folder (its database, media,
    server log) goes with it, as a bundled app's does; it was left behind in the temp folder."""
    with harness.running(Service, tmp_path, env={"TMPDIR": str(tmp_path)}) as svc:
        (folder,) = tmp_path.glob("cua-wagtail-*")
        assert (folder / "wagtail.db").is_file() and (folder / "media").is_dir()
        svc.stop()
        assert not folder.exists()
        assert not svc.sock.exists()
