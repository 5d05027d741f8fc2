"""Trac as a real product (cua.tasks.products.trac): the service speaks the app contract
through tracd, a reset restores the seed exactly and leaves no cache of Trac's behind,
snapshots restore and fork, the activity log sees each request's changes (a ticket closed
and reopened stays in Trac's own audit trail), the page side keeps the app host's rules, a
bad configuration is a typed error, and one oracle passes judge QA in a real browser.

Each test that starts the service runs tracd (under the Trac venv) and is marked slow."""

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
from cua.tasks.products.trac import Trac, build

pytestmark = pytest.mark.skipif(not build.trac_python().is_file(),
                                reason="Trac is not installed (scripts/setup.sh makes its venv)")

READY_TIMEOUT_S = 180.0  # a first run builds the seed image


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Service:
    """One `python -m cua.tasks.apps.serve trac` process, its page URL and control client."""

    def __init__(self, tmp: Path, seed: int = 0, name: str = "trac") -> None:
        self.port = _free_port()
        self.sock = tmp / f"{name}.sock"
        self.proc = subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", "trac", "--port",
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


def _ticket(state: dict[str, Any], tid: int) -> dict[str, Any]:
    return next(t for t in state["ticket"] if t["id"] == tid)


def _open_ticket(state: dict[str, Any]) -> int:
    return int(next(t["id"] for t in state["ticket"] if t["status"] == "new"))


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
    image = service.control.get("/__cua/snapshot").content
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
    assert _dump(service.state()) == _dump(before)
    assert _content(service.control.get("/__cua/snapshot").content) == _content(image)
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
    image = service.control.get("/__cua/snapshot").content  # the list with 9.9, generation g+1
    service.reset(0)  # (which logs everyone out: the login cookies are rows of the image)
    client = service.login("mreyes")
    _add_milestone(client, "8.8")
    client.close()
    listed = httpx.get(f"{service.base}/query?milestone=2.1", timeout=60).text  # its filter lists the milestones
    assert 'value="8.8"' in listed  # the process now caches the list with 8.8, at generation g+1
    assert service.control.post("/__cua/restore", content=image).status_code == 200
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
    image = service.control.get("/__cua/snapshot").content
    at_snapshot = service.state()
    service.reset(0)
    assert "Snapshot me" not in httpx.get(f"{service.base}/ticket/{tid}", timeout=60).text
    assert service.control.post("/__cua/restore", content=image).status_code == 200
    assert _dump(service.state()) == _dump(at_snapshot)
    assert "Snapshot me" in httpx.get(f"{service.base}/ticket/{tid}", timeout=60).text
    fork = Service(tmp_path, name="fork")
    try:
        assert fork.control.post("/__cua/restore", content=image).status_code == 200
        assert _dump(fork.state()) == _dump(at_snapshot)
        other = fork.login("lchen")
        try:
            fork.change_ticket(other, tid, comment="Only in the fork")
        finally:
            other.close()
        assert "Only in the fork" not in json.dumps(service.state())
    finally:
        fork.close()
    bad = service.control.post("/__cua/restore", content=b"not a database")
    assert bad.status_code == 400 and "not a database image" in bad.json()["error"]
    assert _dump(service.state()) == _dump(at_snapshot)


@pytest.mark.slow
def test_an_image_from_judge_qa_copy_runs_in_the_live_tracker(service: Service) -> None:
    """Judge QA writes the in-process copy's image (no `cache` table) into the live instance."""
    app = Trac()
    app.reset(0)
    assert service.control.post("/__cua/restore", content=app.db.snapshot()).status_code == 200
    assert _dump(service.state()) == _dump(app.state())
    client = service.login("mreyes")
    try:
        assert client.get("/query?status=!closed").status_code == 200
    finally:
        client.close()


@pytest.mark.slow
def test_bad_configuration_is_a_typed_error(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "cua.tasks.apps.serve", "trac", "--socket", str(tmp_path / "s.sock")]
    bad_port = subprocess.run([*cmd, "--port", "70000"], capture_output=True, text=True, timeout=120)
    assert bad_port.returncode == os.EX_USAGE and "port 70000" in bad_port.stderr
    missing = subprocess.run([*cmd, "--port", "0"], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "CUA_TRAC_PYTHON": str(tmp_path / "nowhere" / "python")})
    assert missing.returncode == 1 and "Trac is not installed" in missing.stderr
    assert "Traceback" not in bad_port.stderr + missing.stderr
    with pytest.raises(ProductConfigError):
        Trac().reset(-1)


@pytest.mark.slow
def test_the_committed_schema_is_the_installed_one() -> None:
    conn = sqlite3.connect(":memory:")
    conn.deserialize(build.template_image().read_bytes())
    for table in Trac.private_tables:
        conn.execute(f'DROP TABLE IF EXISTS "{table}"')
    rows = conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
                        "AND tbl_name != 'cua_activity' ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END, rowid")
    installed = ";\n".join(str(r[0]) for r in rows) + ";\n"
    assert Trac.schema[Trac.schema.index("CREATE"):] == installed


@pytest.mark.slow
def test_an_oracle_passes_judge_qa_in_a_real_browser() -> None:
    from cua.qa.check import check_templates
    from cua.tasks.registry import get_template

    template = get_template("tracker_trac.reassign@1")
    report = asyncio.run(check_templates([template], seeds=[0], isolation="shared"))
    (result,) = report.templates
    assert result.failures == [], result.failures
    for kind in ("schema_mutation", "history", "forged_signal", "collateral"):
        assert result.probes_ran.get(kind, 0) > 0, (kind, result.probes_ran)
