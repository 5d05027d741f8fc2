"""Wagtail as a real product (cua.tasks.products.wagtail): the service speaks the app contract
through waitress, a reset restores the seed exactly (the database and the media folder),
snapshots restore and fork, Wagtail's own audit trail and the activity log keep a page
published and then unpublished, the page side answers loopback hosts only, a bad
configuration is a typed error, and one oracle passes judge QA in a real browser.

Each test that starts the service runs Wagtail (under the Wagtail venv) and is marked slow."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cua.tasks.products.base import ProductConfigError
from cua.tasks.products.wagtail import Wagtail, build

pytestmark = pytest.mark.skipif(not build.wagtail_python().is_file(),
                                reason="Wagtail is not installed (scripts/setup.sh makes its venv)")

READY_TIMEOUT_S = 240.0  # a first run migrates and seeds the image


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Service:
    """One `python -m cua.tasks.apps.serve wagtail` process, its page URL and control client."""

    def __init__(self, tmp: Path, seed: int = 0, name: str = "wagtail") -> None:
        self.port = _free_port()
        self.sock = tmp / f"{name}.sock"
        self.proc = subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", "wagtail", "--port",
                                      str(self.port), "--socket", str(self.sock), "--seed", str(seed)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            line = self.proc.stdout.readline()
            if line.strip() == "ready":
                break
            if (not line and self.proc.poll() is not None) or time.monotonic() > deadline:
                error = self.proc.stderr.read() if self.proc.stderr else ""
                self.close()
                raise AssertionError(f"the service did not start: {error}")
        self.control = httpx.Client(transport=httpx.HTTPTransport(uds=str(self.sock)), base_url="http://app", timeout=60)
        self.base = f"http://127.0.0.1:{self.port}"

    def state(self) -> dict[str, Any]:
        r = self.control.get("/__cua/state")
        r.raise_for_status()
        result: dict[str, Any] = r.json()
        return result

    def sql(self, query: str, *params: Any) -> list[dict[str, Any]]:
        r = self.control.post("/__cua/sql", json={"query": query, "params": list(params)})
        r.raise_for_status()
        rows: list[dict[str, Any]] = r.json()["rows"]
        return rows

    def reset(self, seed: int = 0) -> None:
        self.control.post("/__cua/reset", json={"seed": seed}).raise_for_status()

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

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        control = self.__dict__.get("control")
        if isinstance(control, httpx.Client):
            control.close()


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = Service(tmp_path)
    try:
        yield svc
    finally:
        svc.close()


def _page(state: dict[str, Any], pid: int) -> dict[str, Any]:
    return next(p for p in state["pages"] if p["id"] == pid)


def _live_post(state: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in state["pages"] if p["type"] == "blogpage" and p["live"] and not p["has_unpublished_changes"])


def _content(image: bytes) -> list[str]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(image)
        return list(conn.iterdump())
    finally:
        conn.close()


def _dump(state: dict[str, Any]) -> str:
    return json.dumps(state, sort_keys=True)


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
    assert httpx.get(f"{service.base}/blog/", headers={"Host": "evil.example"}, timeout=30).status_code == 400
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
    image = service.control.get("/__cua/snapshot").content
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
    assert _dump(service.state()) == _dump(before)
    assert _content(service.control.get("/__cua/snapshot").content) == _content(image)
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
    image = service.control.get("/__cua/snapshot").content
    at_snapshot = service.state()
    service.reset(0)
    assert _page(service.state(), post["id"])["live"] == 1
    assert service.control.post("/__cua/restore", content=image).status_code == 200
    assert _dump(service.state()) == _dump(at_snapshot)
    fork = Service(tmp_path, name="fork")
    try:
        assert fork.control.post("/__cua/restore", content=image).status_code == 200
        assert _dump(fork.state()) == _dump(at_snapshot)
        other = _live_post(fork.state())
        client = fork.login("dwong")
        try:
            fork.post(client, f"/admin/pages/{other['id']}/unpublish/")
        finally:
            client.close()
        assert _page(service.state(), other["id"])["live"] == 1  # only in the fork
    finally:
        fork.close()
    bad = service.control.post("/__cua/restore", content=b"not a database")
    assert bad.status_code == 400 and "not a database image" in bad.json()["error"]
    assert _dump(service.state()) == _dump(at_snapshot)


@pytest.mark.slow
def test_an_image_from_judge_qa_copy_runs_in_the_live_site(service: Service) -> None:
    """Judge QA writes the in-process copy's image (no search index) into the live instance."""
    app = Wagtail()
    app.reset(0)
    assert service.control.post("/__cua/restore", content=app.db.snapshot()).status_code == 200
    assert _dump(service.state()) == _dump(app.state())
    client = service.login("lrossi")
    try:
        assert client.get("/admin/pages/search/?q=harbour").status_code == 200
        assert client.get("/admin/pages/").status_code == 200
    finally:
        client.close()


@pytest.mark.slow
def test_bad_configuration_is_a_typed_error(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "cua.tasks.apps.serve", "wagtail", "--socket", str(tmp_path / "s.sock")]
    bad_port = subprocess.run([*cmd, "--port", "70000"], capture_output=True, text=True, timeout=120)
    assert bad_port.returncode == os.EX_USAGE and "port 70000" in bad_port.stderr
    missing = subprocess.run([*cmd, "--port", "0"], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "CUA_WAGTAIL_PYTHON": str(tmp_path / "nowhere" / "python")})
    assert missing.returncode == 1 and "Wagtail is not installed" in missing.stderr
    assert "Traceback" not in bad_port.stderr + missing.stderr
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
    from cua.qa.check import check_templates
    from cua.tasks.registry import get_template

    template = get_template("cms_wagtail.unpublish_page@1")
    report = asyncio.run(check_templates([template], seeds=[0], isolation="shared"))
    (result,) = report.templates
    assert result.failures == [], result.failures
    for kind in ("schema_mutation", "history", "forged_signal", "collateral"):
        assert result.probes_ran.get(kind, 0) > 0, (kind, result.probes_ran)


@pytest.mark.slow
def test_a_stopped_service_leaves_no_instance_folder(tmp_path: Path) -> None:
    """A sandbox stops its service with SIGTERM: the instance's folder (its database, media,
    server log) goes with it, as a bundled app's does; it was left behind in the temp folder."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", "wagtail", "--port", str(port),
                             "--socket", str(tmp_path / "s.sock")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        (folder,) = tmp_path.glob("cua-wagtail-*")
        assert (folder / "wagtail.db").is_file() and (folder / "media").is_dir()
        proc.terminate()
        proc.wait(30)
        assert not folder.exists()
        assert not (tmp_path / "s.sock").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
