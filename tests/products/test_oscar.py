"""django-oscar as a real product (cua.tasks.products.oscar): the service speaks the app
contract through waitress, a reset restores the seed exactly and leaves no cache of
Django's behind, snapshots restore and fork, the activity log sees each request's changes
(an order placed and then cancelled stays in Oscar's status history), the page side keeps
the app host's rules, a bad configuration is a typed error, and one oracle passes judge QA
in a real browser.

Each test that starts the service runs the shop (under the Oscar venv) and is marked slow."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _product as harness
import httpx
import pytest

from cua.tasks.products.base import ProductConfigError
from cua.tasks.products.oscar import Oscar, build

pytestmark = pytest.mark.skipif(not build.oscar_python().is_file(),
                                reason="django-oscar is not installed (scripts/setup.sh makes its venv)")



class Service(harness.Service):
    """The shop's service, with a browser-like sign-in through Oscar's forms."""

    app = "oscar"
    ready_timeout_s = 240.0  # a first run migrates and seeds the images

    def login(self, email: str) -> httpx.Client:
        """A browser-like client signed in through Oscar's login form (its session cookie)."""
        client = httpx.Client(base_url=self.base, timeout=60)
        client.get("/accounts/login/")
        r = client.post("/accounts/login/", data={"csrfmiddlewaretoken": client.cookies["csrftoken"],
                                                  "login-username": email, "login-password": build.PASSWORD,
                                                  "login_submit": "Log In"})
        assert r.status_code == 302 and "sessionid" in client.cookies, r.text[:500]
        return client

    def post(self, client: httpx.Client, path: str, **data: str) -> httpx.Response:
        return client.post(path, data={"csrfmiddlewaretoken": client.cookies["csrftoken"], **data})


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    with harness.running(Service, tmp_path) as svc:
        yield svc


def _pending_order(state: dict[str, Any]) -> dict[str, Any]:
    return next(o for o in state["order_order"] if o["status"] == "Pending")


def _product(state: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in state["catalogue_product"] if p["structure"] == "standalone")


def _review(service: Service, client: httpx.Client, product: dict[str, Any], title: str) -> None:
    """Post a review of `product` through its page's form."""
    path = f"/catalogue/{product['slug']}_{product['id']}/reviews/add/"
    assert client.get(path).status_code == 200
    r = service.post(client, path, title=title, score="4", body="Warm and light.")
    assert r.status_code == 302, r.text[-2000:]


def _titles(service: Service) -> list[str]:
    return [str(r["title"]) for r in service.sql("SELECT title FROM reviews_productreview ORDER BY id")]


@pytest.mark.slow
def test_the_service_serves_real_pages_and_answers_the_contract(service: Service) -> None:
    assert service.control.get("/__cua/health").json() == {"ok": True, "app": "oscar", "seed": 0}
    page = httpx.get(f"{service.base}/catalogue/", timeout=60)
    assert page.status_code == 200 and "Fernhill Outfitters" in page.text and "product_pod" in page.text
    assert httpx.get(f"{service.base}/search/?q=tent", timeout=60).text.count("product_pod") >= 5
    assert httpx.get(f"{service.base}/static/oscar/css/styles.css", timeout=60).status_code == 200
    state = service.state()
    products = state["catalogue_product"]
    assert len(products) >= 300 and {p["structure"] for p in products} == {"standalone", "parent", "child"}
    assert len(state["catalogue_productattributevalue"]) > 500 and len(state["catalogue_category"]) >= 20
    assert len(state["order_order"]) >= 50 and len(state["reviews_productreview"]) >= 100
    assert {o["status"] for o in state["order_order"]} >= {"Pending", "Being processed", "Shipped", "Cancelled"}
    assert {v["code"] for v in state["voucher_voucher"]} >= {"TRAIL10", "WINTER20"}
    assert sum(1 for u in state["auth_user"] if u["is_staff"]) == 3


@pytest.mark.slow
def test_the_page_side_keeps_the_app_host_rules(service: Service) -> None:
    assert httpx.get(f"{service.base}/__cua/state", timeout=30).status_code == 404
    assert httpx.get(f"{service.base}/catalogue/", headers={"Host": "evil.example"}, timeout=30).status_code == 403
    client = service.login("amelia.hart@example.net")  # a customer: no dashboard
    try:
        assert client.get("/dashboard/").status_code == 403
    finally:
        client.close()
    client = service.login("jay.patel@fernhill.example")  # the catalogue manager: products, not orders
    try:
        assert client.get("/dashboard/catalogue/products/1/").status_code == 200
        assert client.get("/dashboard/orders/").status_code == 403
        order = _pending_order(service.state())
        refused = service.post(client, f"/dashboard/orders/{order['number']}/", order_action="change_order_status",
                               new_status="Cancelled")
        assert refused.status_code == 403
        assert service.sql("SELECT status FROM order_order WHERE id = ?", order["id"]) == [{"status": "Pending"}]
    finally:
        client.close()


@pytest.mark.slow
def test_reset_puts_the_seed_back_byte_for_byte(service: Service) -> None:
    before = service.state()
    image = service.snapshot()
    product = _product(before)
    client = service.login("amelia.hart@example.net")
    try:
        _review(service, client, product, "Reset me")
    finally:
        client.close()
    assert "Reset me" in _titles(service)
    log = service.sql("SELECT request, changes FROM cua_activity ORDER BY seq")
    assert any(r["request"].startswith("POST /catalogue/") and "Reset me" in r["changes"] for r in log)
    service.reset(0)
    assert harness.dump(service.state()) == harness.dump(before)
    assert harness.image_content(service.snapshot()) == harness.image_content(image)
    assert service.sql("SELECT count(*) AS n FROM cua_activity") == [{"n": 0}]
    page = httpx.get(f"{service.base}/catalogue/{product['slug']}_{product['id']}/", timeout=60).text
    assert "Reset me" not in page


@pytest.mark.slow
def test_an_order_cancelled_stays_in_the_status_history(service: Service) -> None:
    order = _pending_order(service.state())
    client = service.login("rosa.khan@fernhill.example")
    try:
        for status in ("Being processed", "Cancelled"):
            r = service.post(client, f"/dashboard/orders/{order['number']}/", order_action="change_order_status",
                             new_status=status)
            assert r.status_code == 302, r.text[-2000:]
    finally:
        client.close()
    state = service.state()
    trail = [(c["old_status"], c["new_status"]) for c in state["order_orderstatuschange"]
             if c["order_id"] == order["id"]]
    assert trail == [("Pending", "Being processed"), ("Being processed", "Cancelled")]
    events = [r["events"] for r in service.sql("SELECT events FROM cua_activity ORDER BY seq")]
    assert "order_status_being_processed" in json.dumps(events) and "order_status_cancelled" in json.dumps(events)


@pytest.mark.slow
def test_no_cache_of_django_outlives_a_restore(service: Service) -> None:
    """Django keeps the current Site in process: a site renamed and then put back by a
    restore kept its new name in the pages until the server dropped its caches."""
    image = service.snapshot()
    client = service.login("helen.walsh@fernhill.example")  # the superuser: Django's admin
    try:
        page = client.get("/admin/sites/site/1/change/").text
        assert "Fernhill Outfitters" in page
        r = service.post(client, "/admin/sites/site/1/change/", domain="127.0.0.1", name="Renamed Shop",
                         _save="Save")
        assert r.status_code == 302, r.text[-2000:]
    finally:
        client.close()
    assert service.restore(image).status_code == 200
    assert service.sql("SELECT name FROM django_site") == [{"name": "Fernhill Outfitters"}]
    client = service.login("helen.walsh@fernhill.example")
    try:
        listed = client.get("/admin/sites/site/").text
    finally:
        client.close()
    assert "Renamed Shop" not in listed and "Fernhill Outfitters" in listed


@pytest.mark.slow
def test_snapshot_restore_and_fork_keep_the_shop(service: Service, tmp_path: Path) -> None:
    product = _product(service.state())
    client = service.login("amelia.hart@example.net")
    try:
        _review(service, client, product, "Snapshot me")
    finally:
        client.close()
    image = service.snapshot()
    at_snapshot = service.state()
    service.reset(0)
    assert "Snapshot me" not in _titles(service)
    assert service.restore(image).status_code == 200
    assert harness.dump(service.state()) == harness.dump(at_snapshot)
    page = httpx.get(f"{service.base}/catalogue/{product['slug']}_{product['id']}/", timeout=60).text
    assert "Snapshot me" in page
    fork = Service(tmp_path, name="fork")
    try:
        assert fork.restore(image).status_code == 200
        assert harness.dump(fork.state()) == harness.dump(at_snapshot)
        other = fork.login("rahul.mistry@example.net")
        try:
            _review(fork, other, product, "Only in the fork")
        finally:
            other.close()
        assert "Only in the fork" in _titles(fork) and "Only in the fork" not in _titles(service)
    finally:
        fork.close()
    harness.assert_a_bad_image_changes_nothing(service)


@pytest.mark.slow
def test_an_image_from_judge_qa_copy_runs_in_the_live_shop(service: Service) -> None:
    harness.assert_takes_the_copys_image(service, Oscar())
    client = service.login("amelia.hart@example.net")
    try:
        assert client.get("/basket/").status_code == 200
    finally:
        client.close()


@pytest.mark.slow
def test_bad_configuration_is_a_typed_error(tmp_path: Path) -> None:
    missing = {"CUA_OSCAR_PYTHON": str(tmp_path / "nowhere" / "python")}
    harness.assert_refuses_bad_configuration("oscar", tmp_path, missing, "django-oscar is not installed")
    with pytest.raises(ProductConfigError):
        Oscar().reset(-1)


@pytest.mark.slow
def test_the_committed_schema_is_the_installed_one() -> None:
    harness.assert_same_schema(Oscar.schema, harness.installed_schema(build.template_image()))


@pytest.mark.slow
def test_an_oracle_passes_judge_qa_in_a_real_browser() -> None:
    harness.assert_oracle_passes_judge_qa("shop_oscar.add_to_basket@1",
                                          ("schema_mutation", "history", "forged_signal", "collateral"))
