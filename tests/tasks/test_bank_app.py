"""The bank app (Meridian Bank): its data, its rules, and its main flows in Chromium.

Money is exact integer cents: a transfer moves exactly what was typed and every running
balance follows from the one before. The rules (funds, the daily limit for payees, IBAN
check digits, the current password) are checked on the page side over TCP, where a
hand-made request cannot get past them; the flows drive the real pages in Chromium,
selecting by role, label and `data-` attributes as oracles do, and read `state()` as a judge.
"""

from __future__ import annotations

import json

import pytest
from _app_server import open_tab
from _apps_common import Running, assert_refusals, check_nav_legible, check_reset_is_seeded, running_fixture, served_fixture
from playwright.async_api import Browser

from cua.tasks.apps.bank import BankApp, parse_amount
from cua.tasks.apps.bank.seed import iban_check_ok

running = running_fixture("bank")


def test_seeded_accounts_are_realistic_and_balances_run(running: Running) -> None:
    _, _, ctl = running
    state = ctl.state()
    assert [a["kind"] for a in state["accounts"]] == ["checking", "savings", "credit"]
    txs = state["transactions"]
    assert len([t for t in txs if t["account_id"] == 1]) >= 200 and len([t for t in txs if t["account_id"] == 3]) >= 100
    for acct in state["accounts"]:  # each running balance is the one before plus the amount, ending at the balance
        mine = [t for t in txs if t["account_id"] == acct["id"]]
        for prev, cur in zip(mine, mine[1:]):
            assert cur["balance_cents"] == prev["balance_cents"] + cur["amount_cents"]
        assert mine[-1]["balance_cents"] == acct["balance_cents"]
    groceries = [-t["amount_cents"] for t in txs if t["category"] == "groceries"]
    rent = [-t["amount_cents"] for t in txs if t["category"] == "rent"]
    assert 1000 <= min(groceries) and max(groceries) < 15000 and min(rent) >= 90000  # tens vs hundreds
    assert len({t["description"] for t in txs}) >= 40  # a long tail of merchants
    assert all(iban_check_ok(p["iban"]) for p in state["payees"]) and len({p["iban"][:2] for p in state["payees"]}) >= 4
    assert all(t["posted_at"] <= "2026-03-02 23:59" for t in txs)


def test_reset_is_deterministic_and_seeded(running: Running) -> None:
    check_reset_is_seeded(running[2])


def test_amounts_are_read_exactly() -> None:
    assert parse_amount("1,234.5") == 123450 and parse_amount("0.07") == 7 and parse_amount("€ 20") == 2000
    for bad in ("1.234", "-5", "0", "0.00", "1e3", "12,34", "", "abc"):
        with pytest.raises(Exception, match="Amount"):
            parse_amount(bad)


def test_transfer_waits_for_confirmation_then_moves_exact_cents(running: Running) -> None:
    _, web, ctl = running
    before = {a["id"]: a["balance_cents"] for a in ctl.state()["accounts"]}
    resp = web.post("/transfer", data={"from": "1", "to": "account:2", "amount": "123.45", "reference": "Holiday fund"})
    assert resp.status_code == 200 and "Confirm and send €123.45" in resp.text
    state = ctl.state()
    assert [(t["status"], t["amount_cents"]) for t in state["transfers"]] == [("pending", 12345)]
    assert {a["id"]: a["balance_cents"] for a in state["accounts"]} == before  # nothing moved yet
    tid = state["transfers"][0]["id"]
    assert web.post(f"/transfer/{tid}/confirm").status_code == 200
    state = ctl.state()
    after = {a["id"]: a["balance_cents"] for a in state["accounts"]}
    assert after[1] == before[1] - 12345 and after[2] == before[2] + 12345
    t = state["transfers"][0]
    assert t["status"] == "completed" and t["confirmation_no"] and t["confirmed_at"] == "2026-03-02 09:00"
    posted = [x for x in state["transactions"] if x["transfer_id"] == tid]
    assert sorted(x["amount_cents"] for x in posted) == [-12345, 12345]
    assert web.post(f"/transfer/{tid}/confirm").status_code == 400  # never twice
    assert web.post(f"/transfer/{tid}/cancel").status_code == 400


def test_rules_refuse_with_a_reason_and_change_nothing(running: Running) -> None:
    _, web, ctl = running
    state = ctl.state()
    before = state
    balance = state["accounts"][0]["balance_cents"]
    limit = state["profile"][0]["daily_limit_cents"]
    cases = [
        ({"from": "1", "to": "account:2", "amount": f"{(balance + 1) / 100:.2f}"}, "Insufficient funds"),
        ({"from": "1", "to": "payee:2", "amount": f"{(limit + 1) / 100:.2f}"}, "daily limit"),
        ({"from": "3", "to": "account:1", "amount": "10"}, "credit card"),
        ({"from": "1", "to": "account:1", "amount": "10"}, "different account"),
        ({"from": "1", "to": "payee:999", "amount": "10"}, "Choose who to pay"),
        ({"from": "1", "to": "account:2", "amount": "10.005"}, "at most two decimals"),
        ({"from": "1", "to": "account:2", "amount": "-10"}, "at most two decimals"),
    ]
    assert_refusals(web, [("/transfer", data, 400, reason) for data, reason in cases] + [
        ("/payees/new", {"name": "Mallory", "iban": "DE00123456780000000000"}, 400, "check digits"),
        ("/payees/new", {"name": "Mallory", "iban": "not an iban"}, 400, "Enter an IBAN"),
        ("/security/password", {"current": "wrong", "new": "newpass12345", "again": "newpass12345"}, 400,
         "current password is not right"),
        ("/cards/1/settings", {"daily_limit": "999999"}, 400, "at most"),
        ("/tx/1/category", {"category": "bribes"}, 400, ""),
        ("/scheduled/new", {"payee": "1", "amount": "10", "frequency": "monthly", "next_date": "2026-03-01"}, 400, "after today"),
    ])
    assert ctl.state() == before
    # a refusal page leads back by a plain link: the sandbox refuses javascript: navigation
    page = web.post("/transfer/999/confirm").text
    assert "javascript:" not in page and 'href="/" data-action="back"' in page


def test_daily_limit_counts_what_was_already_paid_today(running: Running) -> None:
    _, web, ctl = running
    limit = ctl.state()["profile"][0]["daily_limit_cents"]
    half = limit // 2 + 100
    web.post("/transfer", data={"from": "1", "to": "payee:2", "amount": f"{half / 100:.2f}"})
    web.post("/transfer/1/confirm")
    resp = web.post("/transfer", data={"from": "1", "to": "payee:3", "amount": f"{half / 100:.2f}"})
    assert resp.status_code == 400 and "daily limit" in resp.text
    web.post("/transfer", data={"from": "1", "to": "account:2", "amount": f"{half / 100:.2f}"})  # own accounts: no limit
    assert [t["status"] for t in ctl.state()["transfers"]] == ["completed", "pending"]


def test_a_confirmed_payment_is_irreversible_in_the_activity_log(running: Running) -> None:
    app, web, _ = running
    web.post("/transfer", data={"from": "1", "to": "payee:1", "amount": "50"})
    web.post("/transfer/1/confirm")
    events = [json.loads(r["events"]) for r in app.db.all("SELECT events FROM cua_activity ORDER BY seq")]
    assert [e["event"] for batch in events for e in batch] == ["pay"]


# --- in Chromium ---


served = served_fixture("bank", BankApp)


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_add_payee_then_pay_them_with_confirmation(browser: Browser, served: tuple[BankApp, str]) -> None:
    app, base = served
    tab = await open_tab(browser, base + "/")
    await tab.locator("[data-action=add-payee]").first.click()
    await tab.get_by_label("Name").fill("Camille Laurent")
    await tab.get_by_label("IBAN").fill("fr14 2004 1010 0505 0001 3m02 606")
    await tab.locator("[data-action=save-payee]").click()
    payee = app.db.one("SELECT * FROM payees WHERE name = 'Camille Laurent'")
    assert payee is not None and payee["iban"] == "FR1420041010050500013M02606"
    balance = app.db.scalar("SELECT balance_cents FROM accounts WHERE id = 1")
    await tab.goto(base + "/transfer")
    await tab.get_by_label("To").select_option(f"payee:{payee['id']}")
    await tab.get_by_label("Amount (€)").fill("89.90")
    await tab.get_by_label("Reference").fill("Concert tickets")
    await tab.locator("[data-action=review-transfer]").click()
    assert await tab.locator("[data-recipient]").inner_text() == "Camille Laurent (FR1420041010050500013M02606)"
    assert app.db.scalar("SELECT balance_cents FROM accounts WHERE id = 1") == balance  # not yet
    await tab.locator("[data-action=confirm-transfer]").click()
    await tab.locator("[data-confirmation]").wait_for()
    t = app.db.one("SELECT * FROM transfers")
    assert t is not None and (t["payee_id"], t["amount_cents"], t["reference"], t["status"]) == (payee["id"], 8990, "Concert tickets", "completed")
    assert app.db.scalar("SELECT balance_cents FROM accounts WHERE id = 1") == balance - 8990


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_cards_scheduled_and_categories(browser: Browser, served: tuple[BankApp, str]) -> None:
    app, base = served
    tab = await open_tab(browser, base + "/cards")
    await tab.get_by_role("switch", name="Freeze Debit card").click()
    assert app.db.scalar("SELECT frozen FROM cards WHERE id = 1") == 1
    assert await tab.get_by_role("switch", name="Freeze Debit card").get_attribute("aria-checked") == "true"
    await tab.locator('[data-card-id="2"] [data-action=report-lost]').click()
    await tab.locator("[data-action=keep]").click()
    assert app.db.scalar("SELECT status FROM cards WHERE id = 2") == "active"
    await tab.goto(base + "/scheduled/new")
    await tab.get_by_label("Payee").select_option("1")
    await tab.get_by_label("Amount (€)").fill("45")
    await tab.get_by_label("Reference").fill("Garage")
    await tab.locator("[data-frequency=monthly]").check()
    await tab.get_by_label("First payment date").fill("2026-04-05")
    await tab.locator("[data-action=save-scheduled]").click()
    s = app.db.one("SELECT * FROM scheduled WHERE reference = 'Garage'")
    assert s is not None and (s["amount_cents"], s["frequency"], s["next_date"], s["status"]) == (4500, "monthly", "2026-04-05", "active")
    await tab.locator(f'[data-scheduled-id="{s["id"]}"] [data-action=cancel]').click()
    await tab.locator("[data-action=confirm-cancel]").click()
    assert app.db.scalar("SELECT status FROM scheduled WHERE id = ?", (s["id"],)) == "cancelled"
    tx = app.db.one("SELECT id, description, posted_at FROM transactions WHERE account_id = 1 AND category = 'groceries' "
                    "ORDER BY posted_at DESC LIMIT 1")
    assert tx is not None
    await tab.goto(base + "/accounts/1?category=groceries")
    await tab.get_by_label(f"Category of {tx['description']} on {tx['posted_at'][:10]}").first.select_option("dining")
    await tab.locator(f'[data-tx-id="{tx["id"]}"] [data-action=save-category]').click()
    assert app.db.scalar("SELECT category FROM transactions WHERE id = ?", (tx["id"],)) == "dining"


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_filters_and_phone_layout(browser: Browser, served: tuple[BankApp, str]) -> None:
    app, base = served
    tab = await open_tab(browser, base + "/accounts/1", width=390)
    await tab.locator("[data-filter=category]").select_option("rent")
    await tab.locator("[data-filter=min]").fill("500")
    await tab.locator("[data-action=apply-filters]").click()
    n = app.db.scalar("SELECT COUNT(*) FROM transactions WHERE account_id = 1 AND category = 'rent' AND abs(amount_cents) >= 50000")
    assert await tab.locator("tbody tr[data-tx-id]").count() == n > 0
    assert await tab.evaluate("document.body.scrollWidth <= window.innerWidth + 1")


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("theme", ["light", "dark", "contrast"])
async def test_the_navigation_is_legible_in_every_theme(browser: Browser, served: tuple[BankApp, str], theme: str) -> None:
    await check_nav_legible(browser, served, "/", theme)
