"""Trac as a real product (cua.tasks.products.trac): the service speaks the app contract
through tracd, a reset restores the seed exactly and leaves no cache of Trac's behind,
snapshots restore and fork, the activity log sees each request's changes (a ticket closed
and reopened stays in Trac's own audit trail), the page side keeps the app host's rules, a
bad configuration is a typed error, and one oracle passes judge QA in a real browser.

Each test that starts the service runs tracd (under the Trac venv) and is marked slow."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _product as harness
import httpx
import pytest

from cua.tasks.products.base import ProductConfigError
from cua.tasks.products.trac import Trac, build

pytestmark = pytest.mark.skipif(not build.trac_python().is_file(),
                                reason="Trac is not installed (scripts/setup.sh makes its venv)")



class Service(harness.Service):
    """The tracker's service, with a browser-like login and ticket form."""

    app = "trac"

    def login(self, user: str) -> httpx.Client:
        """A browser-like client logged in through the login form (Trac's trac_auth cookie)."""
        client = httpx.Client(base_url=self.base, timeout=60)
        r = client.post("/login", data={"user": user, "password": build.PASSWORD, "referer": "/"})
        assert r.status_code == 302 and "trac_auth" in client.cookies, r.text[:500]
        return client

    def change_ticket(self, client: httpx.Client, ticket: int, **fields: str) -> None:
        """Submit ticket `ticket`'s form as Trac's page does (its form token and view time)."""
        page = client.get(f"/ticket/{ticket}").text
        view = re.search(r'name="view_time"\s+value="(\d+)"', page)
        assert view is not None, page[:500]
        data = {"__FORM_TOKEN": client.cookies["trac_form_token"], "view_time": view.group(1),
                "start_time": view.group(1), "action": "leave", "submit": "Submit changes", **fields}
        r = client.post(f"/ticket/{ticket}", data=data)
        assert r.status_code == 303, r.text[:2000]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    with harness.running(Service, tmp_path) as svc:
        yield svc


def _ticket(state: dict[str, Any], tid: int) -> dict[str, Any]:
    return next(t for t in state["ticket"] if t["id"] == tid)


def _open_ticket(state: dict[str, Any]) -> int:
    return int(next(t["id"] for t in state["ticket"] if t["status"] == "new"))


@pytest.mark.slow
def test_the_service_serves_real_pages_and_answers_the_contract(service: Service) -> None:
    assert service.control.get("/__cua/health").json() == {"ok": True, "app": "trac", "seed": 0}
    page = httpx.get(f"{service.base}/ticket/1", timeout=60)
    assert page.status_code == 200 and "Powered by" in page.text and 'id="ticket"' in page.text
    roadmap = httpx.get(f"{service.base}/roadmap", timeout=60).text
    assert "2.1" in roadmap and "milestone" in roadmap
    state = service.state()
    assert len(state["ticket"]) >= 100 and len(state["ticket_change"]) > 300 and len(state["users"]) >= 10
    assert {t["status"] for t in state["ticket"]} == {"new", "assigned", "accepted", "reopened", "closed"}
    assert len({t["owner"] for t in state["ticket"]}) >= 6 and len({t["priority"] for t in state["ticket"]}) == 5
    assert {c["field"] for c in state["ticket_change"]} >= {"comment", "owner", "status", "resolution", "priority"}
    assert {p["username"] for p in state["permission"]} >= {"developers", "managers", "reporters", "mreyes"}
    assert any(p["name"] == "ReleaseProcess" and p["version"] == 2 for p in state["pages"])


@pytest.mark.slow
def test_the_page_side_keeps_the_app_host_rules(service: Service) -> None:
    assert httpx.get(f"{service.base}/__cua/state", timeout=30).status_code == 404
    assert httpx.get(f"{service.base}/ticket/1", headers={"Host": "evil.example"}, timeout=30).status_code == 403
    assert httpx.post(f"{service.base}/.cua-flush", timeout=30).status_code == 404  # the service's token only
    wrong = httpx.post(f"{service.base}/login", data={"user": "mreyes", "password": "guess"}, timeout=30)
    assert wrong.status_code == 200 and "Invalid username or password" in wrong.text
    unknown = httpx.post(f"{service.base}/login", data={"user": "nobody", "password": build.PASSWORD}, timeout=30)
    assert "Invalid username or password" in unknown.text


def _add_milestone(client: httpx.Client, name: str) -> None:
    assert "Add milestone" in client.get("/milestone?action=new").text
    r = client.post("/milestone", data={"__FORM_TOKEN": client.cookies["trac_form_token"], "action": "edit",
                                        "name": name, "add": "Add milestone"})
    assert r.status_code == 303, r.text[:1000]


@pytest.mark.slow
def test_reset_puts_the_seed_back_byte_for_byte(service: Service) -> None:
    before = service.state()
    image = service.snapshot()
    tid = _open_ticket(before)
    client = service.login("mreyes")
    try:
        service.change_ticket(client, tid, comment="Reset me", field_priority="blocker")
    finally:
        client.close()
    log = service.sql("SELECT request, changes FROM cua_activity ORDER BY seq")
    assert [r["request"] for r in log] == [f"POST /ticket/{tid}"] and "Reset me" in log[0]["changes"]
    assert _ticket(service.state(), tid)["priority"] == "blocker"
    service.reset(0)
    assert harness.dump(service.state()) == harness.dump(before)
    assert harness.image_content(service.snapshot()) == harness.image_content(image)
    assert service.sql("SELECT count(*) AS n FROM cua_activity") == [{"n": 0}]
    assert "Reset me" not in httpx.get(f"{service.base}/ticket/{tid}", timeout=60).text


@pytest.mark.slow
def test_no_cache_of_trac_outlives_a_restore(service: Service) -> None:
    """Trac caches the milestone list per process under a generation number kept in the
    database: an image restored with the generation the process holds, but other data,
    was served from the stale cache until the service told tracd to drop its caches."""
    client = service.login("mreyes")
    _add_milestone(client, "9.9")
    client.close()
    image = service.snapshot()  # the list with 9.9, generation g+1
    service.reset(0)  # (which logs everyone out: the login cookies are rows of the image)
    client = service.login("mreyes")
    _add_milestone(client, "8.8")
    client.close()
    listed = httpx.get(f"{service.base}/query?milestone=2.1", timeout=60).text  # its filter lists the milestones
    assert 'value="8.8"' in listed  # the process now caches the list with 8.8, at generation g+1
    assert service.restore(image).status_code == 200
    page = httpx.get(f"{service.base}/query?milestone=2.1", timeout=60).text
    assert 'value="9.9"' in page and 'value="8.8"' not in page


@pytest.mark.slow
def test_a_ticket_closed_and_reopened_stays_in_the_audit_trail(service: Service) -> None:
    tid = _open_ticket(service.state())
    client = service.login("tokafor")
    try:
        service.change_ticket(client, tid, action="resolve", action_resolve_resolve_resolution="fixed")
        service.change_ticket(client, tid, action="reopen")
    finally:
        client.close()
    state = service.state()
    assert _ticket(state, tid)["status"] == "reopened"  # the end state looks untouched but for the status...
    trail = [(c["field"], c["newvalue"]) for c in state["ticket_change"] if c["ticket"] == tid
             and c["author"] == "tokafor"]
    assert ("status", "closed") in trail and ("resolution", "fixed") in trail and ("status", "reopened") in trail
    changes = [json.loads(r["changes"]) for r in service.sql("SELECT changes FROM cua_activity ORDER BY seq")]
    assert len(changes) == 2 and '"closed"' in json.dumps(changes[0])  # ...and the activity log has both


@pytest.mark.slow
def test_snapshot_restore_and_fork_keep_the_tracker(service: Service, tmp_path: Path) -> None:
    tid = _open_ticket(service.state())
    client = service.login("lchen")
    try:
        service.change_ticket(client, tid, comment="Snapshot me")
    finally:
        client.close()
    image = service.snapshot()
    at_snapshot = service.state()
    service.reset(0)
    assert "Snapshot me" not in httpx.get(f"{service.base}/ticket/{tid}", timeout=60).text
    assert service.restore(image).status_code == 200
    assert harness.dump(service.state()) == harness.dump(at_snapshot)
    assert "Snapshot me" in httpx.get(f"{service.base}/ticket/{tid}", timeout=60).text
    fork = Service(tmp_path, name="fork")
    try:
        assert fork.restore(image).status_code == 200
        assert harness.dump(fork.state()) == harness.dump(at_snapshot)
        other = fork.login("lchen")
        try:
            fork.change_ticket(other, tid, comment="Only in the fork")
        finally:
            other.close()
        assert "Only in the fork" not in json.dumps(service.state())
    finally:
        fork.close()
    harness.assert_a_bad_image_changes_nothing(service)


@pytest.mark.slow
def test_an_image_from_judge_qa_copy_runs_in_the_live_tracker(service: Service) -> None:
    """Judge QA writes the in-process copy's image (no `cache` table) into the live instance."""
    harness.assert_takes_the_copys_image(service, Trac())
    client = service.login("mreyes")
    try:
        assert client.get("/query?status=!closed").status_code == 200
    finally:
        client.close()


@pytest.mark.slow
def test_bad_configuration_is_a_typed_error(tmp_path: Path) -> None:
    missing = {"CUA_TRAC_PYTHON": str(tmp_path / "nowhere" / "python")}
    harness.assert_refuses_bad_configuration("trac", tmp_path, missing, "Trac is not installed")
    with pytest.raises(ProductConfigError):
        Trac().reset(-1)


@pytest.mark.slow
def test_the_committed_schema_is_the_installed_one() -> None:
    installed = harness.installed_schema(build.template_image(), Trac.private_tables)
    assert Trac.schema[Trac.schema.index("CREATE"):] == installed


@pytest.mark.slow
def test_an_oracle_passes_judge_qa_in_a_real_browser() -> None:
    harness.assert_oracle_passes_judge_qa("tracker_trac.reassign@1",
                                          ("schema_mutation", "history", "forged_signal", "collateral"))
