"""pretix as a real product (cua.tasks.products.pretix): the service speaks the app contract
through waitress (pretix's shop, its control panel and its compiled static files), a reset
restores the seed exactly, snapshots restore and fork, the activity log sees each request's
changes (an order cancelled is kept as pretix's own audit entry), staff rights are pretix's
own teams, a bad configuration is a typed error, and one oracle passes judge QA in a real
browser.

Each test that starts the service runs pretix (under the pretix venv) and is marked slow."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _product as harness
import httpx
import pytest

from cua.tasks.products.base import ProductConfigError
from cua.tasks.products.pretix import Pretix, build

pytestmark = pytest.mark.skipif(not build.pretix_python().is_file(),
                                reason="pretix is not installed (scripts/setup.sh makes its venv)")

CTL = "/control/event/lakeside/jazz27"
ADMIN = "maren.holt@lakeside-live.example"


class Service(harness.Service):
    """pretix's service, with a browser-like sign-in through its control panel's form."""

    app = "pretix"
    ready_timeout_s = 400.0  # a first run migrates (~90 s) and seeds the image (~60 s)

    def login(self, email: str) -> httpx.Client:
        client = httpx.Client(base_url=self.base, timeout=60)
        client.get("/control/login")
        r = client.post("/control/login", data={"csrfmiddlewaretoken": client.cookies["pretix_csrftoken"],
                                                "email": email, "password": build.PASSWORD})
        assert r.status_code == 302 and r.headers["location"] == "/control/", r.text[-1500:]
        return client

    def post(self, client: httpx.Client, path: str, **data: str) -> httpx.Response:
        return client.post(path, data={"csrfmiddlewaretoken": client.cookies["pretix_csrftoken"], **data})


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    with harness.running(Service, tmp_path) as svc:
        yield svc


def _pending_order(state: dict[str, Any]) -> dict[str, Any]:
    return next(o for o in state["pretixbase_order"] if o["status"] == "n" and o["event_id"] == 1)


def _comment(service: Service, client: httpx.Client, code: str, text: str) -> None:
    """Set an order's internal comment through its page's form."""
    r = service.post(client, f"{CTL}/orders/{code}/comment", comment=text, checkin_text="")
    assert r.status_code == 302, r.text[-2000:]


def _comments(service: Service) -> list[str]:
    return [str(r["comment"]) for r in service.sql("SELECT comment FROM pretixbase_order WHERE comment != '' "
                                                   "ORDER BY id")]


@pytest.mark.slow
def test_the_service_serves_real_pages_and_answers_the_contract(service: Service) -> None:
    assert service.control.get("/__cua/health").json() == {"ok": True, "app": "pretix", "seed": 0}
    page = httpx.get(f"{service.base}/lakeside/jazz27/", timeout=60)
    assert page.status_code == 200 and "Harbour Jazz Festival 2027" in page.text and "VIP weekend pass" in page.text
    css = next(part.split('"')[0] for part in page.text.split('href="/static/')[1:] if part.split('"')[0].endswith(".css"))
    styles = httpx.get(f"{service.base}/static/{css}", timeout=60)
    assert styles.status_code == 200 and styles.headers["content-type"].startswith("text/css")
    assert httpx.get(f"{service.base}/static/%2e%2e/settings.py", timeout=60).status_code == 404
    state = service.state()
    assert len(state["pretixbase_event"]) == 5 and len(state["pretixbase_item"]) >= 25
    assert len(state["pretixbase_order"]) >= 400 and len(state["pretixbase_orderposition"]) >= 800
    assert {o["status"] for o in state["pretixbase_order"]} == {"n", "p", "e", "c"}
    assert len(state["pretixbase_orderrefund"]) >= 10 and len(state["pretixbase_checkin"]) >= 100
    assert {v["code"] for v in state["pretixbase_voucher"]} >= {"CREW2027", "EARLYJAZZ", "PARTNER10"}
    assert len(state["pretixbase_team"]) == 6
    assert "admin@localhost" not in {u["email"] for u in state["pretixbase_user"]}


@pytest.mark.slow
def test_the_page_side_keeps_the_app_host_rules_and_pretix_rights(service: Service) -> None:
    assert httpx.get(f"{service.base}/__cua/state", timeout=30).status_code == 404
    assert httpx.get(f"{service.base}/lakeside/jazz27/", headers={"Host": "evil.example"}, timeout=30).status_code \
        in (400, 403)
    order = _pending_order(service.state())
    client = service.login("luca.moretti@lakeside-live.example")  # marketing: vouchers, no orders
    try:
        assert client.get(f"{CTL}/vouchers/").status_code == 200
        assert client.get(f"{CTL}/orders/{order['code']}/").status_code == 403
        refused = service.post(client, f"{CTL}/orders/{order['code']}/transition", status="c", cancellation_fee="0")
        assert refused.status_code == 403
    finally:
        client.close()
    assert service.sql("SELECT status FROM pretixbase_order WHERE id = ?", order["id"]) == [{"status": "n"}]


@pytest.mark.slow
def test_reset_puts_the_seed_back_byte_for_byte(service: Service) -> None:
    before = service.state()
    image = service.snapshot()
    order = _pending_order(before)
    client = service.login(ADMIN)
    try:
        _comment(service, client, order["code"], "Reset me")
    finally:
        client.close()
    assert "Reset me" in _comments(service)
    log = service.sql("SELECT request, changes FROM cua_activity ORDER BY seq")
    assert any(r["request"].endswith("/comment") and "Reset me" in r["changes"] for r in log)
    service.reset(0)
    assert harness.dump(service.state()) == harness.dump(before)
    assert harness.image_content(service.snapshot()) == harness.image_content(image)
    assert service.sql("SELECT count(*) AS n FROM cua_activity") == [{"n": 0}]
    client = service.login(ADMIN)
    try:
        assert "Reset me" not in client.get(f"{CTL}/orders/{order['code']}/").text
    finally:
        client.close()


@pytest.mark.slow
def test_an_order_cancelled_stays_in_the_activity_log(service: Service) -> None:
    order = _pending_order(service.state())
    client = service.login(ADMIN)
    try:
        r = service.post(client, f"{CTL}/orders/{order['code']}/transition", status="c", cancellation_fee="0.00")
        assert r.status_code == 302, r.text[-2000:]
    finally:
        client.close()
    assert service.sql("SELECT status FROM pretixbase_order WHERE id = ?", order["id"]) == [{"status": "c"}]
    last = service.sql("SELECT action_type, object_id FROM pretixbase_logentry ORDER BY id DESC LIMIT 1")
    assert last == [{"action_type": "pretix.event.order.canceled", "object_id": order["id"]}]
    events = json.dumps([r["events"] for r in service.sql("SELECT events FROM cua_activity ORDER BY seq")])
    assert "event_order_canceled" in events


@pytest.mark.slow
def test_snapshot_restore_and_fork_keep_the_orders(service: Service, tmp_path: Path) -> None:
    order = _pending_order(service.state())
    client = service.login(ADMIN)
    try:
        _comment(service, client, order["code"], "Snapshot me")
    finally:
        client.close()
    image = service.snapshot()
    at_snapshot = service.state()
    service.reset(0)
    assert "Snapshot me" not in _comments(service)
    assert service.restore(image).status_code == 200
    assert harness.dump(service.state()) == harness.dump(at_snapshot)
    with harness.running(Service, tmp_path, name="fork") as fork:
        assert fork.restore(image).status_code == 200
        assert harness.dump(fork.state()) == harness.dump(at_snapshot)
        other = fork.login(ADMIN)
        try:
            _comment(fork, other, order["code"], "Only in the fork")
        finally:
            other.close()
        assert "Only in the fork" in _comments(fork) and "Only in the fork" not in _comments(service)
    harness.assert_a_bad_image_changes_nothing(service)


@pytest.mark.slow
def test_an_image_from_judge_qa_copy_runs_in_the_live_shop(service: Service) -> None:
    harness.assert_takes_the_copys_image(service, Pretix())
    client = service.login(ADMIN)
    try:
        assert client.get(f"{CTL}/orders/").status_code == 200
    finally:
        client.close()


@pytest.mark.slow
def test_bad_configuration_is_a_typed_error(tmp_path: Path) -> None:
    harness.assert_refuses_bad_configuration("pretix", tmp_path,
                                             {"CUA_PRETIX_PYTHON": str(tmp_path / "nowhere" / "python")},
                                             "pretix is not installed")
    with pytest.raises(ProductConfigError):
        Pretix().reset(-1)


@pytest.mark.slow
def test_the_committed_schema_is_the_installed_one() -> None:
    harness.assert_same_schema(Pretix.schema, harness.installed_schema(build.template_image()))


@pytest.mark.slow
def test_an_oracle_passes_judge_qa_in_a_real_browser() -> None:
    harness.assert_oracle_passes_judge_qa("events_pretix.change_quota@1", ("schema_mutation", "history", "collateral"))
