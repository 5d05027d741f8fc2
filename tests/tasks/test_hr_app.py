"""The HR app (Tally People): its data, its rules, and its main flows in Chromium.

Money is exact integer cents and a line's dollars are the company's fixed rate applied half
up; a time-off request counts working days less the company's holidays. The rules (policy
warnings block a submit, a balance caps a request, a manager decides only for their direct
reports and never for themselves) are checked on the page side over TCP, where a hand-made
request cannot get past them; the flows drive the real pages in Chromium, selecting by
role, label and `data-` attributes as oracles do, and read `state()` as a judge.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

import pytest
from _app_server import open_tab
from _apps_common import Running, assert_legible, assert_refusals, nav_colours, running_fixture, served_fixture
from playwright.async_api import Browser

from cua.tasks.apps.hr import HrApp, Refused, parse_amount
from cua.tasks.apps.hr.seed import HOLIDAYS, convert, working_days
from cua.variant import Variant

running = running_fixture("hr")


def _sql(app: HrApp, query: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    return app.db.all(query, params)


def test_seeded_company_is_realistic(running: Running) -> None:
    app, _, _ = running
    people = _sql(app, "SELECT * FROM employees")
    assert len(people) == 120
    assert len(_sql(app, "SELECT id FROM teams")) >= 10
    assert len({p["country"] for p in people}) >= 7 and len({p["locale"] for p in people}) >= 7
    assert len({p["name"] for p in people}) == 120 and len({p["email"] for p in people}) == 120
    assert sum(p["manager_id"] is None for p in people) == 1  # one CEO; everyone else reports to someone
    assert len([p for p in people if p["manager_id"] == 1]) == 8
    lines = _sql(app, "SELECT * FROM lines")
    usd = {c: [x["amount_cents"] for x in lines if x["category"] == c and x["currency"] == "USD"] for c in ("taxi", "hotel", "airfare")}
    assert 1200 <= min(usd["taxi"]) and max(usd["taxi"]) <= 6000
    assert 11000 <= min(usd["hotel"]) and max(usd["hotel"]) <= 32000
    assert min(usd["airfare"]) >= 18000 and max(usd["airfare"]) > 40000
    assert len({x["merchant"] for x in lines}) >= 40 and len({x["currency"] for x in lines}) >= 4
    assert all(x["home_cents"] == convert(x["amount_cents"], x["currency"]) for x in lines)
    for slip in _sql(app, "SELECT * FROM payslips"):
        deductions = sum(v for k, v in slip.items() if k.endswith("_cents") and k not in ("gross_cents", "net_cents"))
        assert slip["net_cents"] == slip["gross_cents"] - deductions > 0
    holidays = {d for d, _ in HOLIDAYS}
    for r in _sql(app, "SELECT * FROM time_off"):
        assert r["days"] == working_days(dt.date.fromisoformat(r["start_day"]), dt.date.fromisoformat(r["end_day"]), holidays) > 0
    assert len(_sql(app, "SELECT id FROM time_off WHERE substr(start_day, 1, 4) = '2025'")) >= 30  # a year of history


def test_reset_is_deterministic_fast_and_seeded(running: Running) -> None:
    app, _, ctl = running
    ctl.reset(3)
    first = ctl.state()
    ctl.reset(4)
    assert ctl.state() != first
    started = time.perf_counter()
    ctl.reset(3)
    assert (time.perf_counter() - started) < 0.05
    assert ctl.state() == first
    assert set(first) == {"lines", "profile", "receipts", "report_events", "reports", "time_off"}  # what a page can change


def test_amounts_conversion_and_working_days() -> None:
    assert parse_amount("1,234.5") == 123450 and parse_amount("12,50") == 1250 and parse_amount("1.234,56") == 123456
    assert parse_amount("80") == 8000 and parse_amount("€ 42.10") == 4210 and parse_amount("1 234,00") == 123400
    assert parse_amount("12.999") == 1299900  # a group of thousands, as de-DE writes it
    for bad in ("", "abc", "-5", "0", "0,00", "12.345.6", "1e3", "1.234.5", "1,234,56", "12.3456"):
        with pytest.raises(Refused):
            parse_amount(bad)
    assert convert(10000, "EUR") == 10850 and convert(1, "EUR") == 1 and convert(4215, "GBP") == 5353  # 5353.05
    assert convert(999, "CAD") == 734  # 734.265 -> half up to the cent
    holidays = {d for d, _ in HOLIDAYS}
    # Thursday 2 April to Tuesday 7 April 2026: Good Friday and a weekend inside, 3 working days
    assert working_days(dt.date(2026, 4, 2), dt.date(2026, 4, 7), holidays) == 3
    assert working_days(dt.date(2026, 3, 7), dt.date(2026, 3, 8), holidays) == 0


def _my_draft(app: HrApp, *, warned: bool) -> int:
    for r in _sql(app, "SELECT id FROM reports WHERE employee_id = 1 AND status = 'draft' ORDER BY id"):
        has = bool(app._warnings(r["id"]))
        if has == warned:
            return int(r["id"])
    raise AssertionError("no such draft in the seed")


def _line_of(app: HrApp, rid: int) -> int:
    return int(app.db.scalar("SELECT MIN(id) FROM lines WHERE report_id = ?", (rid,)))


def test_rules_refuse_with_a_reason_and_change_nothing(running: Running) -> None:
    app, web, ctl = running
    before = ctl.state()
    draft, warned = _my_draft(app, warned=False), _my_draft(app, warned=True)
    mine_submitted = app.db.scalar("SELECT id FROM reports WHERE employee_id = 1 AND status = 'submitted'")
    theirs = app.db.scalar("SELECT id FROM reports WHERE status = 'submitted' AND employee_id IN "
                           "(SELECT id FROM employees WHERE manager_id != 1 AND id != 1)")  # another team's, waiting
    line = {"day": "2026-02-20", "merchant": "Uber", "category": "taxi", "amount": "23.40", "currency": "USD", "project": "PLT-100"}
    cases: list[tuple[str, dict[str, str], int, str]] = [
        (f"/expenses/{draft}/lines", {**line, "amount": "12.3456"}, 400, "at most two decimals"),
        (f"/expenses/{draft}/lines", {**line, "amount": "-3"}, 400, "at most two decimals"),
        (f"/expenses/{draft}/lines", {**line, "day": "2026-03-09"}, 400, "in the future"),
        (f"/expenses/{draft}/lines", {**line, "day": "soon"}, 400, "YYYY-MM-DD"),
        (f"/expenses/{draft}/lines", {**line, "category": "bribes"}, 400, "Category"),
        (f"/expenses/{draft}/lines", {**line, "currency": "XBT"}, 400, "Currency"),
        (f"/expenses/{draft}/lines", {**line, "project": "NOPE-1"}, 400, "Project"),
        (f"/expenses/{draft}/lines", {**line, "merchant": "  "}, 400, "Merchant"),
        (f"/expenses/{mine_submitted}/lines", line, 400, "Only a draft"),
        (f"/expenses/{warned}/submit", {}, 400, "policy warning"),
        ("/time-off", {"kind": "personal", "start": "2026-03-10", "end": "2026-03-13"}, 400, "Not enough balance"),
        ("/time-off", {"kind": "vacation", "start": "2026-03-13", "end": "2026-03-10"}, 400, "before the first day"),
        ("/time-off", {"kind": "vacation", "start": "2026-03-07", "end": "2026-03-08"}, 400, "no working day"),
        ("/time-off", {"kind": "vacation", "start": "2026-02-20", "end": "2026-02-20"}, 400, "from today on"),
        ("/time-off", {"kind": "holiday", "start": "2026-03-10", "end": "2026-03-10"}, 400, "Type"),
        (f"/approvals/expenses/{mine_submitted}", {"decision": "approve"}, 403, "your own"),
        (f"/approvals/expenses/{theirs}", {"decision": "approve"}, 403, "own manager"),
        ("/expenses", {"title": "   "}, 400, "required"),
        ("/profile", {"form": "emergency", "emergency_name": "Kim", "emergency_relation": "Friend",
                      "emergency_phone": "call me maybe"}, 400, "Phone"),
        ("/lines/99999", line, 404, "No such line"),
    ]
    assert_refusals(web, cases, shows='role="alert"')
    waiting = app.db.scalar("SELECT id FROM reports WHERE status = 'submitted' AND employee_id IN "
                            "(SELECT id FROM employees WHERE manager_id = 1) ORDER BY id")
    resp = web.post(f"/approvals/expenses/{waiting}", data={"decision": "reject", "comment": "  "})
    assert resp.status_code == 400 and "say why" in resp.text
    assert web.get("/pay/2026-13x").status_code == 400 and web.get("/pay/2019-01").status_code == 404
    assert web.get("/people/9999").status_code == 404 and web.get("/expenses/9999").status_code == 404
    huge = "9" * 30  # past SQLite's integers: a 404 and a 400, never a crash
    assert web.get(f"/expenses/{huge}").status_code == 404 and web.post(f"/lines/{huge}/delete").status_code == 404
    assert web.post(f"/lines/{_line_of(app, draft)}/receipt", data={"receipt": huge}).status_code == 400
    assert ctl.state() == before
    page = web.get("/expenses/9999").text  # a refusal leads back by a plain link
    assert "javascript:" not in page and 'href="/" data-action="back"' in page


def test_a_line_in_euros_is_converted_and_a_receipt_clears_the_warning(running: Running) -> None:
    app, web, ctl = running
    warned = _my_draft(app, warned=True)
    resp = web.post(f"/expenses/{warned}/lines", data={"day": "2026-02-27", "merchant": "Motel One", "category": "hotel",
                                                       "amount": "142,80", "currency": "EUR", "project": "PLT-100"})
    assert resp.status_code == 200
    new = app.db.one("SELECT * FROM lines WHERE merchant = 'Motel One' AND report_id = ?", (warned,))
    assert new is not None and (new["amount_cents"], new["currency"], new["home_cents"]) == (14280, "EUR", 15494)  # 154.938
    flagged = app._warnings(warned)
    assert {w for _, w in flagged} == {"receipt_missing"}
    for line, _ in flagged:
        receipt = app.db.one("SELECT id FROM receipts WHERE line_id IS NULL AND employee_id = 1 AND merchant = ? AND day = ? "
                             "AND amount_cents = ?", (line["merchant"], line["day"], line["amount_cents"]))
        if receipt is None:  # the line just added has no receipt: delete it
            assert web.post(f"/lines/{line['id']}/delete").status_code == 200
            continue
        assert web.post(f"/lines/{line['id']}/receipt", data={"receipt": str(receipt["id"])}).status_code == 200
        assert web.post(f"/lines/{line['id']}/receipt", data={"receipt": str(receipt["id"])}).status_code == 400  # once
    assert app._warnings(warned) == []
    assert web.post(f"/expenses/{warned}/submit").status_code == 200
    assert web.post(f"/expenses/{warned}/recall").status_code == 200
    assert web.post(f"/expenses/{warned}/submit").status_code == 200
    events = [e["action"] for e in ctl.state()["report_events"] if e["report_id"] == warned]
    assert events[-3:] == ["submitted", "recalled", "submitted"]  # the recall stays in the history


def test_decisions_are_final_and_named_in_the_activity_log(running: Running) -> None:
    app, web, _ = running
    a, b = (r["id"] for r in _sql(app, "SELECT id FROM reports WHERE status = 'submitted' AND employee_id IN "
                                       "(SELECT id FROM employees WHERE manager_id = 1) ORDER BY id LIMIT 2"))
    assert web.post(f"/approvals/expenses/{a}", data={"decision": "approve", "comment": ""}).status_code == 200
    assert web.post(f"/approvals/expenses/{b}", data={"decision": "reject", "comment": "Hotel  over the\ncity rate"}).status_code == 200
    assert web.post(f"/approvals/expenses/{a}", data={"decision": "reject", "comment": "changed my mind"}).status_code == 400
    rows = {r["id"]: r for r in _sql(app, "SELECT * FROM reports WHERE id IN (?, ?)", (a, b))}
    assert (rows[a]["status"], rows[a]["decided_by"]) == ("approved", 1)
    assert (rows[b]["status"], rows[b]["decision_comment"]) == ("rejected", "Hotel over the city rate")
    leave = app.db.scalar("SELECT id FROM time_off WHERE status = 'pending' AND employee_id IN "
                          "(SELECT id FROM employees WHERE manager_id = 1) ORDER BY id")
    assert web.post(f"/approvals/time-off/{leave}", data={"decision": "approve"}).status_code == 200
    events = [json.loads(r["events"]) for r in app.db.all("SELECT events FROM cua_activity ORDER BY seq")]
    assert [e["event"] for batch in events for e in batch] == ["approve", "reject", "approve"]


def test_a_variant_is_refused_when_unknown(running: Running) -> None:
    _, _, ctl = running
    resp = ctl.post("/__cua/reset", json={"seed": 0, "variant": {"locale": "fr-FR"}})
    assert resp.status_code == 400 and resp.json()["field"] == "variant.locale"


# --- in Chromium ---


served = served_fixture("hr", HrApp)


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_create_a_report_with_lines_and_submit_it(browser: Browser, served: tuple[HrApp, str]) -> None:
    app, base = served
    app.reset(0)
    tab = await open_tab(browser, base + "/")
    await tab.locator('a[data-nav="/expenses"]').click()
    await tab.get_by_label("Report title").fill("Denver SRE meetup")
    await tab.locator("[data-action=create-report]").click()
    rid = app.db.scalar("SELECT id FROM reports WHERE title = 'Denver SRE meetup'")
    assert rid and app.db.scalar("SELECT status FROM reports WHERE id = ?", (rid,)) == "draft"
    for day, merchant, category, amount, currency in (("2026-02-24", "Lyft", "taxi", "31.20", "USD"),
                                                      ("2026-02-24", "Hilton Garden Inn", "hotel", "189.00", "USD"),
                                                      ("2026-02-25", "Vapiano", "meals", "24,90", "EUR")):
        await tab.get_by_label("Date").fill(day)
        await tab.get_by_label("Merchant").fill(merchant)
        await tab.get_by_label("Category").select_option(category)
        await tab.get_by_label("Amount").fill(amount)
        await tab.get_by_label("Currency").select_option(currency)
        await tab.locator("[data-action=add-line]").click()
    # the hotel is over $75 and has no receipt: the submit is blocked until the line goes
    assert await tab.locator("[data-action=submit-report]").is_disabled()
    assert await tab.locator("[data-warning=receipt_missing]").count() == 2  # the flag on the line and the summary
    await tab.get_by_role("button", name="Delete: Hilton Garden Inn 2026-02-24").click()
    await tab.locator("[data-action=submit-report]").click()
    lines = app.db.all("SELECT merchant, category, amount_cents, currency, home_cents FROM lines WHERE report_id = ? ORDER BY id", (rid,))
    assert lines == [{"merchant": "Lyft", "category": "taxi", "amount_cents": 3120, "currency": "USD", "home_cents": 3120},
                     {"merchant": "Vapiano", "category": "meals", "amount_cents": 2490, "currency": "EUR", "home_cents": 2702}]
    assert app.db.scalar("SELECT status FROM reports WHERE id = ?", (rid,)) == "submitted"
    assert await tab.locator(f'[data-report-id="{rid}"][data-status=submitted]').count() == 1


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_time_off_skips_a_holiday_and_a_pending_request_can_be_cancelled(browser: Browser,
                                                                                served: tuple[HrApp, str]) -> None:
    app, base = served
    app.reset(0)
    available = app._balances(1)["vacation"]["available"]
    tab = await open_tab(browser, base + "/time-off")
    await tab.get_by_label("Type").select_option("vacation")
    await tab.get_by_label("First day").fill("2026-04-02")
    await tab.get_by_label("Last day").fill("2026-04-07")
    await tab.locator("[data-action=request-time-off]").click()
    row = app.db.one("SELECT * FROM time_off WHERE start_day = '2026-04-02'")
    assert row is not None and (row["end_day"], row["days"], row["status"], row["kind"]) == ("2026-04-07", 3, "pending", "vacation")
    assert await tab.locator("[data-balance=vacation]").get_attribute("data-available") == str(available - 3)
    await tab.get_by_role("button", name="Cancel request: 2026-04-02").click()
    assert app.db.scalar("SELECT status FROM time_off WHERE id = ?", (row["id"],)) == "cancelled"
    assert await tab.locator("[data-balance=vacation]").get_attribute("data-available") == str(available)


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_manager_rejects_with_a_comment_and_finds_a_colleagues_manager(browser: Browser,
                                                                                served: tuple[HrApp, str]) -> None:
    app, base = served
    app.reset(0)
    waiting = app.db.one("SELECT r.id, r.title FROM reports r JOIN employees e ON e.id = r.employee_id "
                         "WHERE r.status = 'submitted' AND e.manager_id = 1 ORDER BY r.id")
    assert waiting is not None
    tab = await open_tab(browser, base + "/approvals")
    await tab.locator(f'[data-approval="expense:{waiting["id"]}"] [data-action=review]').click()
    await tab.get_by_label("Comment (required to reject)").fill("Please itemise the hotel bill.")
    await tab.get_by_role("button", name=f"Reject: {waiting['title']}").click()
    row = app.db.one("SELECT status, decision_comment, decided_by FROM reports WHERE id = ?", (waiting["id"],))
    assert row == {"status": "rejected", "decision_comment": "Please itemise the hotel bill.", "decided_by": 1}
    assert await tab.locator(f'[data-approval="expense:{waiting["id"]}"]').count() == 0
    someone = app.db.one("SELECT e.name, m.name AS manager FROM employees e JOIN employees m ON m.id = e.manager_id "
                         "WHERE e.team_id = 5 ORDER BY e.id DESC")
    assert someone is not None
    await tab.goto(base + "/people")
    await tab.locator("[data-filter=q]").fill(someone["name"])
    await tab.locator("[data-action=search-people]").click()
    await tab.locator("[data-person-name]").first.click()
    assert await tab.locator("[data-field=manager]").inner_text() == someone["manager"]


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_german_pages_read_german_with_local_numbers_and_dates(browser: Browser, served: tuple[HrApp, str]) -> None:
    app, base = served
    app.reset(0)
    app.variant = Variant(locale="de-DE", layout="sidebar")
    try:
        tab = await open_tab(browser, base + "/pay")
        assert await tab.evaluate("document.documentElement.lang") == "de-DE"
        assert await tab.locator('a[data-nav="/time-off"]').inner_text() == "Abwesenheit"
        assert await tab.get_by_role("heading", name="Gehaltsabrechnungen").count() == 1
        slip = app.db.one("SELECT month, pay_day, net_cents FROM payslips WHERE month = '2026-01'")
        assert slip is not None
        net = f"{slip['net_cents'] // 100:,}".replace(",", ".") + f",{slip['net_cents'] % 100:02d}\u00a0$"
        row = tab.locator('tr[data-month="2026-01"]')
        assert net in await row.inner_text()
        assert dt.date.fromisoformat(slip["pay_day"]).strftime("%d.%m.%Y") in await row.inner_text()
        await tab.goto(base + "/time-off")
        assert await tab.locator("[data-action=request-time-off]").inner_text() == "Antrag senden"
        await tab.get_by_label("Erster Tag").fill("2026-03-13")
        await tab.get_by_label("Letzter Tag").fill("2026-03-10")
        await tab.locator("[data-action=request-time-off]").click()
        assert await tab.get_by_role("alert").inner_text() == "Letzter Tag: er liegt vor dem ersten Tag."
    finally:
        app.variant = Variant()


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_phone_layout_keeps_to_the_width_with_touch_targets(browser: Browser, served: tuple[HrApp, str]) -> None:
    app, base = served
    app.reset(0)
    draft = _my_draft(app, warned=True)
    for path in ("/", f"/expenses/{draft}", "/time-off", "/approvals", "/people", "/profile"):
        tab = await open_tab(browser, base + path, width=390)
        assert await tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), path
        small = await tab.evaluate("""() => [...document.querySelectorAll('main button, main select, main input:not([type=hidden])')]
            .filter(e => e.offsetParent && e.getBoundingClientRect().height < 43.5).length""")
        assert small == 0, path
        await tab.context.close()


CONTRAST_JS = """() => {
  const rgb = (s) => {  // rgb(...) in 0-255; color(srgb ...) (what color-mix() computes to) in 0-1
    const v = s.match(/[\\d.]+/g).slice(0, 3).map(Number);
    return s.startsWith('color(') ? v.map((x) => x * 255) : v;
  };
  const bar = document.querySelector('header.appbar');
  const link = bar.querySelector('nav a');
  const badge = document.querySelector('[data-status-badge]');
  const tile = badge.closest('.panel');
  return {fg: rgb(getComputedStyle(link).color), bg: rgb(getComputedStyle(bar).backgroundColor),
          badge: rgb(getComputedStyle(badge).color), under: rgb(getComputedStyle(badge).backgroundColor),
          panel: rgb(getComputedStyle(tile).backgroundColor)};
}"""


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("theme", ["light", "dark", "contrast", "sepia"])
async def test_navigation_and_statuses_are_legible_in_every_theme(browser: Browser, served: tuple[HrApp, str], theme: str) -> None:
    app, base = served
    app.reset(0)
    c = await nav_colours(browser, app, base + "/", theme, CONTRAST_JS)
    for fg, bg in ((c["fg"], c["bg"]), (c["badge"], c["under"] if sum(c["under"]) else c["panel"])):
        assert_legible(fg, bg, (theme, c))
