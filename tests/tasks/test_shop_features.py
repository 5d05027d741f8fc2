"""The shop's wishlist, reviews, order cancellation and per-seed order numbers (issues 32 and 38).

The rules are checked on the page side (where a hand-made request cannot get past them): an unknown
product or order is a 404 page, stars outside 1-5 and cancelling an order that shipped are 400 pages,
and a refusal changes nothing. The flows drive the real pages in Chromium, selecting by role, label and
`data-` attributes as oracles do, in the variants an agent meets (de-DE, the dense layout, a dark theme),
and read the database as a judge does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from _app_server import open_tab, serving_bundled
from _apps_common import Control, open_app
from playwright.async_api import Browser
from starlette.testclient import TestClient

from cua.tasks.apps.shop import ShopApp
from cua.variant import Variant

Running = tuple[Any, TestClient, Control]
NEXT_NUMBER = "SELECT number FROM order_numbering WHERE n = (SELECT COUNT(*) + 1 FROM orders)"


@pytest.fixture()
def running() -> Running:
    return open_app("shop")


def _numbers(app: ShopApp) -> list[str]:
    return [r["number"] for r in app.db.all("SELECT number FROM orders ORDER BY id")]


def test_order_numbers_are_drawn_per_seed_unique_and_stable() -> None:
    app = ShopApp()
    nexts = []
    for seed in range(4):
        app.reset(seed)
        numbers = _numbers(app)
        assert len(set(numbers)) == len(numbers) and all(n.startswith("SH-") and len(n) == 9 for n in numbers)
        nexts.append(app.db.scalar(NEXT_NUMBER))
        assert nexts[-1] not in numbers
        app.reset(seed + 100)
        app.reset(seed)
        assert app.db.scalar(NEXT_NUMBER) == nexts[-1]  # stable for a seed
    assert len(set(nexts)) == 4, "the next order number is the same at two seeds"


def test_checkout_gives_the_number_a_task_reads(running: Running) -> None:
    app, web, _ = running
    expected = app.db.scalar(NEXT_NUMBER)
    resp = web.post("/checkout", data={"address": "1", "shipping": "standard", "card": "1"})
    assert resp.status_code == 200, resp.text[-300:]
    assert app.db.one("SELECT number, status FROM orders ORDER BY id DESC LIMIT 1") == {"number": expected, "status": "placed"}
    assert f'id="order-number">{expected}<' in resp.text


def test_refusals_are_typed_pages_and_change_nothing(running: Running) -> None:
    app, web, ctl = running
    shipped = app.db.scalar("SELECT id FROM orders WHERE status = 'shipped' OR status = 'delivered' LIMIT 1")
    oos = app.db.scalar("SELECT id FROM products WHERE stock = 0 LIMIT 1")
    app.db.execute("INSERT INTO wishlist (product_id, added_at) VALUES (?, '2026-03-01 10:00')", (oos,))
    before = ctl.state()
    not_wished = app.db.scalar("SELECT id FROM products WHERE id NOT IN (SELECT product_id FROM wishlist) LIMIT 1")
    cases = [
        (web.get("/p/99999"), 404, "No such product."),
        (web.get("/p/99999/review"), 404, "No such product."),
        (web.post("/p/99999/review", data={"stars": "4", "title": "t", "body": "b"}), 404, "No such product."),
        (web.post("/wishlist/add", data={"product_id": "99999"}), 404, "No such product."),
        (web.post("/wishlist/add", data={"product_id": "abc"}), 404, "No such product."),
        (web.post(f"/wishlist/move/{not_wished}"), 404, "not on your wishlist"),
        (web.post(f"/wishlist/move/{oos}"), 400, "out of stock"),
        (web.post("/p/5/review", data={"stars": "0", "title": "t", "body": "b"}), 400, "Choose 1 to 5 stars."),
        (web.post("/p/5/review", data={"stars": "9", "title": "t", "body": "b"}), 400, "Choose 1 to 5 stars."),
        (web.post("/p/5/review", data={"stars": "4", "title": " ", "body": "b"}), 400, "Give a title."),
        (web.get("/orders/999"), 404, "No such order."),
        (web.post("/orders/999/cancel"), 404, "No such order."),
        (web.post(f"/orders/{shipped}/cancel"), 400, "already shipped"),
    ]
    for resp, status, reason in cases:
        assert resp.status_code == status and reason in resp.text, (resp.request.url, resp.status_code, resp.text[-300:])
        assert 'role="alert"' in resp.text or "role='alert'" in resp.text
    assert ctl.state() == before
    unshipped = app.db.scalar("SELECT id FROM orders WHERE status = 'processing' LIMIT 1")
    assert web.post(f"/orders/{unshipped}/cancel").status_code == 200
    again = web.post(f"/orders/{unshipped}/cancel")
    assert again.status_code == 400 and "already cancelled" in again.text


def test_one_review_per_product_edited_in_place(running: Running) -> None:
    app, web, _ = running
    pid = app.db.scalar("SELECT id FROM products WHERE id NOT IN (SELECT product_id FROM reviews) LIMIT 1")
    web.post(f"/p/{pid}/review", data={"stars": "2", "title": "Meh", "body": "It broke."})
    web.post(f"/p/{pid}/review", data={"stars": "5", "title": "Fixed", "body": "Support replaced it."})
    rows = app.db.all("SELECT stars, title, body, author FROM reviews WHERE product_id = ?", (pid,))
    assert rows == [{"stars": 5, "title": "Fixed", "body": "Support replaced it.", "author": "Alex Morgan"}]


# --- in Chromium ---


@pytest_asyncio.fixture(loop_scope="module")
async def served() -> AsyncIterator[tuple[ShopApp, str]]:
    async with serving_bundled("shop", ShopApp) as pair:
        yield pair


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_wishlist_add_remove_and_move_to_cart(browser: Browser, served: tuple[ShopApp, str]) -> None:
    app, base = served
    app.reset(1)
    app.variant = Variant()
    pid = app.db.scalar("SELECT id FROM products WHERE stock >= 5 AND id NOT IN (SELECT product_id FROM wishlist) "
                        "AND id NOT IN (SELECT product_id FROM cart_items) LIMIT 1")
    name = app.db.scalar("SELECT name FROM products WHERE id = ?", (pid,))
    tab = await open_tab(browser, f"{base}/p/{pid}")
    await tab.get_by_role("button", name=f"Add to wishlist: {name}").click()
    await tab.get_by_role("button", name=f"Remove from wishlist: {name}").wait_for()
    assert app.db.scalar("SELECT COUNT(*) FROM wishlist WHERE product_id = ?", (pid,)) == 1
    await tab.get_by_role("button", name=f"Remove from wishlist: {name}").click()
    await tab.get_by_role("button", name=f"Add to wishlist: {name}").wait_for()
    assert app.db.scalar("SELECT COUNT(*) FROM wishlist WHERE product_id = ?", (pid,)) == 0
    wished = app.db.one("SELECT w.product_id AS id, p.name FROM wishlist w JOIN products p ON p.id = w.product_id LIMIT 1")
    assert wished is not None
    cart_before = app.db.all("SELECT product_id, qty FROM cart_items")
    await tab.get_by_role("link", name="Wishlist").click()
    assert await tab.get_by_role("list", name="Wishlist").locator("li[data-id]").count() == 3
    await tab.get_by_role("button", name=f"Move to cart: {wished['name']}").click()
    await tab.locator(f'li[data-id="{wished["id"]}"]').wait_for(state="detached")
    assert app.db.all("SELECT product_id, qty FROM cart_items") == [*cart_before, {"product_id": wished["id"], "qty": 1}]
    assert app.db.scalar("SELECT COUNT(*) FROM wishlist WHERE product_id = ?", (wished["id"],)) == 0


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_write_then_edit_a_review_in_german_on_a_phone(browser: Browser, served: tuple[ShopApp, str]) -> None:
    app, base = served
    app.reset(2)
    app.variant = Variant(locale="de-DE", layout="dense", theme="dark")
    p = app.db.one("SELECT id, name, rating, reviews FROM products WHERE id NOT IN (SELECT product_id FROM reviews) LIMIT 1")
    assert p is not None
    tab = await open_tab(browser, f"{base}/p/{p['id']}", width=390)
    await tab.locator("a[data-action=write-review]").click()
    await tab.get_by_label("3 Sterne").check()
    await tab.get_by_label("Titel").fill("Ganz okay")
    await tab.get_by_label("Rezension", exact=True).fill("Tut, was es soll.")
    await tab.get_by_role("button", name="Rezension senden").click()
    mine = tab.locator("article.review[data-stars]")
    await mine.wait_for()
    assert await mine.get_attribute("data-stars") == "3"
    row = app.db.one("SELECT id, stars, title, body FROM reviews WHERE product_id = ?", (p["id"],))
    assert row is not None and (row["stars"], row["title"], row["body"]) == (3, "Ganz okay", "Tut, was es soll.")
    average = round((p["rating"] * p["reviews"] + 3) / (p["reviews"] + 1), 1)
    section = tab.locator("section#reviews")
    assert await section.get_attribute("data-average") == str(average)
    assert await section.get_attribute("data-count") == str(p["reviews"] + 1)
    assert await tab.evaluate("document.body.scrollWidth <= window.innerWidth + 1")
    await tab.locator("a[data-action=edit-review]").click()
    assert await tab.get_by_label("3 Sterne").is_checked()  # the form holds the review as written
    await tab.get_by_label("5 Sterne").check()
    await tab.get_by_role("button", name="Änderungen speichern").click()
    await tab.locator('article.review[data-stars="5"]').wait_for()
    assert app.db.all("SELECT id, stars, title FROM reviews WHERE product_id = ?", (p["id"],)) == [
        {"id": row["id"], "stars": 5, "title": "Ganz okay"}]


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_stars_out_of_range_from_the_page_get_a_400(browser: Browser, served: tuple[ShopApp, str]) -> None:
    app, base = served
    app.reset(0)
    app.variant = Variant()
    tab = await open_tab(browser, f"{base}/p/7/review")
    await tab.get_by_label("4 stars").check()
    await tab.evaluate("document.querySelector('input[name=stars]:checked').value = '9'")
    await tab.get_by_label("Title").fill("Nine")
    await tab.get_by_label("Review", exact=True).fill("Off the scale.")
    async with tab.expect_response(lambda r: r.request.method == "POST") as posted:
        await tab.locator("button[data-action=submit-review]").click()
    assert (await posted.value).status == 400
    assert await tab.get_by_role("alert").inner_text() == "Choose 1 to 5 stars."
    assert app.db.scalar("SELECT COUNT(*) FROM reviews WHERE product_id = 7") == 0
    resp = await tab.goto(f"{base}/p/99999")
    assert resp is not None and resp.status == 404
    assert await tab.get_by_role("alert").inner_text() == "No such product."


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_cancel_an_unshipped_order_and_not_a_shipped_one(browser: Browser, served: tuple[ShopApp, str]) -> None:
    app, base = served
    app.reset(3)
    app.variant = Variant(locale="de-DE", layout="sidebar", theme="contrast")
    first, second = app.db.all("SELECT id, number FROM orders WHERE status = 'processing' ORDER BY id")
    tab = await open_tab(browser, f"{base}/orders")
    await tab.locator(f'a[data-order="{first["number"]}"]').click()
    await tab.get_by_role("button", name=f"Bestellung stornieren {first['number']}").click()
    await tab.get_by_role("status").wait_for()
    assert await tab.get_by_role("status").inner_text() == "Diese Bestellung wurde storniert."
    assert await tab.locator("div.order").get_attribute("data-status") == "cancelled"
    assert app.db.one("SELECT status, cancelled_at FROM orders WHERE id = ?", (first["id"],)) == {
        "status": "cancelled", "cancelled_at": "2026-03-02 09:00"}
    assert await tab.locator("button[data-action=cancel-order]").count() == 0
    # the other one ships while its page is open: the cancel is refused, and it stays shipped
    await tab.goto(f"{base}/orders/{second['id']}")
    app.db.execute("UPDATE orders SET status = 'shipped' WHERE id = ?", (second["id"],))
    async with tab.expect_response(lambda r: r.request.method == "POST") as posted:
        await tab.locator("button[data-action=cancel-order]").click()
    assert (await posted.value).status == 400
    assert "bereits versandt" in await tab.get_by_role("alert").inner_text()
    assert app.db.scalar("SELECT status FROM orders WHERE id = ?", (second["id"],)) == "shipped"
    await tab.goto(f"{base}/orders")
    assert await tab.locator(f'tr[data-number="{first["number"]}"] [data-status]').inner_text() == "storniert"
