"""HR: Tally People, an HR-and-expenses portal, signed in as Morgan Ellis, an engineering
manager in Boston with eight direct reports.

Pages: `/` (home: balances, my reports, what waits for approval), `/expenses` (my reports;
a new one), `/expenses/{id}` (lines with date, merchant, category, amount and currency and
its value in dollars at the company's fixed rates, receipt attached or missing, project;
policy warnings -- a line over its category's limit, a receipt missing over $75 -- that
block submitting; submit, recall, reopen; the report's history), `/lines/{id}` (edit a
line), `/receipts` (receipts not yet matched), `/time-off` (balances per type; request a
range, counted in working days less the company's holidays; cancel a pending one),
`/approvals` (expense reports and time off of my direct reports only: approve, or reject
with a comment), `/people` and `/people/{id}` (the directory: team, manager, office), `/org`
(the org chart), `/pay` and `/pay/{month}` (payslips), `/profile` (address, emergency
contact, the bank account masked).

Money is integer cents; a line's dollars (`home_cents`) are the app's own conversion.
Dates are the app's clock (`FIXED_NOW`, a Monday). A refused request gets a page that says
why (400, 403 or 404) and changes nothing. A report's `report_events` are never deleted, so
a recall or a decision stays in its history.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule
from cua.tasks.apps.activity import new_value
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.hr.seed import (
    CATEGORIES,
    HOME_CURRENCY,
    ME,
    POLICY,
    RATES,
    RECEIPT_THRESHOLD,
    TIME_OFF_TYPES,
    convert,
    seed_hr,
    working_days,
)
from cua.tasks.apps.hr.text import CATEGORY_LABELS, KIND_LABELS, STATUS_LABELS, long_date, money, short_date, tr
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, lead_id INTEGER);
CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
                        team_id INTEGER NOT NULL REFERENCES teams(id), manager_id INTEGER REFERENCES employees(id),
                        office TEXT NOT NULL, country TEXT NOT NULL, locale TEXT NOT NULL, start_date TEXT NOT NULL, phone TEXT NOT NULL);
CREATE TABLE holidays (day TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE rates (currency TEXT PRIMARY KEY, to_home TEXT NOT NULL);
CREATE TABLE policy (category TEXT PRIMARY KEY, limit_cents INTEGER NOT NULL, covers TEXT NOT NULL);
CREATE TABLE projects (code TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE reports (id INTEGER PRIMARY KEY, employee_id INTEGER NOT NULL REFERENCES employees(id), title TEXT NOT NULL,
                      status TEXT NOT NULL CHECK (status IN ('draft', 'submitted', 'approved', 'rejected', 'paid')),
                      created_at TEXT NOT NULL, submitted_at TEXT, decided_at TEXT, decided_by INTEGER REFERENCES employees(id),
                      decision_comment TEXT NOT NULL DEFAULT '', paid_at TEXT);
CREATE TABLE lines (id INTEGER PRIMARY KEY, report_id INTEGER NOT NULL REFERENCES reports(id), day TEXT NOT NULL,
                    merchant TEXT NOT NULL, category TEXT NOT NULL REFERENCES policy(category),
                    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0), currency TEXT NOT NULL REFERENCES rates(currency),
                    home_cents INTEGER NOT NULL, project TEXT NOT NULL REFERENCES projects(code), note TEXT NOT NULL DEFAULT '');
CREATE INDEX lines_report ON lines (report_id, day, id);
CREATE TABLE receipts (id INTEGER PRIMARY KEY, employee_id INTEGER NOT NULL REFERENCES employees(id), merchant TEXT NOT NULL,
                       day TEXT NOT NULL, amount_cents INTEGER NOT NULL, currency TEXT NOT NULL, filename TEXT NOT NULL,
                       line_id INTEGER UNIQUE REFERENCES lines(id) ON DELETE SET NULL);
CREATE TABLE report_events (id INTEGER PRIMARY KEY, report_id INTEGER NOT NULL REFERENCES reports(id), actor_id INTEGER,
                            action TEXT NOT NULL, comment TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
CREATE TABLE balances (employee_id INTEGER NOT NULL REFERENCES employees(id), kind TEXT NOT NULL, year INTEGER NOT NULL,
                       allowance_days INTEGER NOT NULL, PRIMARY KEY (employee_id, kind, year));
CREATE TABLE time_off (id INTEGER PRIMARY KEY, employee_id INTEGER NOT NULL REFERENCES employees(id), kind TEXT NOT NULL,
                       start_day TEXT NOT NULL, end_day TEXT NOT NULL, days INTEGER NOT NULL, note TEXT NOT NULL DEFAULT '',
                       status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled')),
                       created_at TEXT NOT NULL, decided_at TEXT, decided_by INTEGER, decision_comment TEXT NOT NULL DEFAULT '');
CREATE TABLE payslips (month TEXT PRIMARY KEY, pay_day TEXT NOT NULL, gross_cents INTEGER NOT NULL, federal_tax_cents INTEGER NOT NULL,
                       state_tax_cents INTEGER NOT NULL, social_security_cents INTEGER NOT NULL, medicare_cents INTEGER NOT NULL,
                       retirement_cents INTEGER NOT NULL, health_cents INTEGER NOT NULL, net_cents INTEGER NOT NULL);
CREATE TABLE profile (id INTEGER PRIMARY KEY CHECK (id = 1), employee_id INTEGER NOT NULL, street TEXT NOT NULL, city TEXT NOT NULL,
                      postal_code TEXT NOT NULL, country TEXT NOT NULL, emergency_name TEXT NOT NULL,
                      emergency_relation TEXT NOT NULL, emergency_phone TEXT NOT NULL, bank_name TEXT NOT NULL,
                      bank_account TEXT NOT NULL);
"""
#: Tables no page changes: left out of `state()` (judges read them by SQL).
STATIC_TABLES = ("teams", "employees", "holidays", "rates", "policy", "projects", "balances", "payslips")
AMOUNT = re.compile(r"^\d{1,3}(?:(?P<g>[.,\u00a0 ])\d{3}(?:(?P=g)\d{3})*)?(?P<d>[.,]\d{1,2})?$|^\d+(?:[.,]\d{1,2})?$")
MONTH = re.compile(r"^\d{4}-\d{2}$")
NAV = [("Home", "/"), ("Expenses", "/expenses"), ("Time off", "/time-off"), ("Approvals", "/approvals"), ("People", "/people"),
       ("Org chart", "/org"), ("Pay", "/pay"), ("Profile", "/profile")]
MAX_RANGE_DAYS = 60
#: The largest id SQLite stores (a signed 64-bit integer): a larger one in a URL or a form is no record.
MAX_ID = 2**63 - 1

#: Inline SVG icons (24 px grid, stroked in the current colour).
ICONS = {
    "receipt": "M6 3h12v18l-3-2-3 2-3-2-3 2zM9 8h6M9 12h6M9 16h4",
    "warn": "M12 3l10 18H2zM12 10v5M12 18v.01",
    "check": "M4 12l5 5L20 6",
    "plane": "M2 16l20-6-20-6 4 6zM6 10h8",
    "sun": "M12 7a5 5 0 1 0 .01 0M12 1v2M12 21v2M1 12h2M21 12h2M4.2 4.2l1.4 1.4M18.4 18.4l1.4 1.4",
    "inbox": "M3 13l3-9h12l3 9v7H3zM3 13h5l1 3h6l1-3h5",
    "people": "M9 11a4 4 0 1 0 .01 0M2 21c0-4 3-6 7-6s7 2 7 6M17 11a3 3 0 1 0 .01 0M22 20c0-3-2-5-5-5",
    "clip": "M21 11l-9 9a5 5 0 0 1-7-7l9-9a3.5 3.5 0 0 1 5 5l-9 9a2 2 0 0 1-3-3l8-8",
}


def icon(name: str, label: str = "") -> str:
    """An inline SVG icon; decorative unless it carries a `label`."""
    a11y = f'role="img" aria-label="{esc(label)}"' if label else 'aria-hidden="true"'
    return (f'<svg class="icon" viewBox="0 0 24 24" width="18" height="18" {a11y} fill="none" stroke="currentColor" '
            f'stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="{ICONS[name]}"/></svg>')


class Refused(Exception):
    """Input the app's rules refuse: shown with the reason, nothing changes."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def parse_amount(raw: str) -> int:
    """A positive amount as typed, in cents: `1,234.56`, `1.234,56`, `12,50`, `80` (the last
    separator followed by one or two digits is the decimal one); Refused otherwise."""
    text = raw.strip().lstrip("$€£").strip()
    m = AMOUNT.match(text)
    if not m or (m.group("g") and m.group("d") and m.group("d")[0] == m.group("g")):
        raise Refused("Amount: enter a number such as 42.50 (at most two decimals).")
    whole, frac = text, ""
    decimal = re.search(r"[.,](\d{1,2})$", text)
    if decimal:
        whole, frac = text[: decimal.start()], decimal.group(1)
    digits = re.sub(r"[.,\u00a0 ]", "", whole)
    cents = int(digits or "0") * 100 + int((frac + "00")[:2])
    if cents <= 0:
        raise Refused("Amount: it must be more than zero.")
    if cents > 10_000_000:
        raise Refused("Amount: one line can be at most 100,000.00.")
    return cents


def parse_day(raw: str, field: str) -> dt.date:
    try:
        return dt.date.fromisoformat(raw.strip())
    except ValueError:
        raise Refused(f"{field}: enter a date as YYYY-MM-DD.") from None


def line_warnings(line: dict[str, Any], has_receipt: bool) -> list[str]:
    """The policy's objections to one line: `over_limit`, `receipt_missing`."""
    out = []
    if line["home_cents"] > POLICY[line["category"]][0]:
        out.append("over_limit")
    if line["home_cents"] > RECEIPT_THRESHOLD and not has_receipt:
        out.append("receipt_missing")
    return out


Handler = Callable[[Request], Awaitable[Response]]


class HrApp(WebApp):
    name = "hr"
    title = "Tally People"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
    #: what the app fills itself: a line's dollars, a request's working days, who did what
    assigned = {"lines": ("home_cents",), "time_off": ("days", "employee_id", "decided_by"),
                "reports": ("employee_id", "decided_by"), "report_events": ("actor_id", "action", "report_id"),
                "receipts": ("employee_id", "merchant", "day", "amount_cents", "currency", "filename"),
                "profile": ("employee_id", "bank_name", "bank_account")}
    query_params = {"q": QueryRule(strip=True), "team": QueryRule(strip=True), "office": QueryRule(strip=True),
                    "status": QueryRule(strip=True, case="lower")}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        db.execute("BEGIN")  # one transaction: two thousand inserts, each its own, took most of a new seed's time
        seed_hr(db, rng, self.now())
        db.execute("COMMIT")

    def state(self) -> dict[str, Any]:
        return {k: v for k, v in self.db.dump().items() if k not in STATIC_TABLES}

    def irreversible(self, change: Change) -> str | None:
        """A manager's decision is final: no later edit takes an approval back."""
        for table in ("reports", "time_off"):
            sets, value = new_value(change, table, "status")
            if sets and value in ("approved", "rejected") and change.before in ("submitted", "pending"):
                return "approve" if value == "approved" else "reject"
        return None

    def t(self, text: str) -> str:
        return tr(self.variant.locale, text)

    def routes(self) -> list[BaseRoute]:
        g = self._guarded
        return [
            Route("/", g(self.home)),
            Route("/expenses", g(self.expenses), methods=["GET", "POST"]),
            Route("/expenses/{rid:int}", g(self.report)),
            Route("/expenses/{rid:int}/lines", g(self.add_line), methods=["POST"]),
            Route("/expenses/{rid:int}/submit", g(self.submit), methods=["POST"]),
            Route("/expenses/{rid:int}/recall", g(self.recall), methods=["POST"]),
            Route("/expenses/{rid:int}/reopen", g(self.reopen), methods=["POST"]),
            Route("/lines/{lid:int}", g(self.edit_line), methods=["GET", "POST"]),
            Route("/lines/{lid:int}/delete", g(self.delete_line), methods=["POST"]),
            Route("/lines/{lid:int}/receipt", g(self.attach_receipt), methods=["POST"]),
            Route("/receipts", g(self.receipts)),
            Route("/time-off", g(self.time_off), methods=["GET", "POST"]),
            Route("/time-off/{tid:int}/cancel", g(self.cancel_time_off), methods=["POST"]),
            Route("/approvals", g(self.approvals)),
            Route("/approvals/expenses/{rid:int}", g(self.review_report), methods=["GET", "POST"]),
            Route("/approvals/time-off/{tid:int}", g(self.review_time_off), methods=["GET", "POST"]),
            Route("/people", g(self.people)),
            Route("/people/{pid:int}", g(self.person)),
            Route("/org", g(self.org)),
            Route("/pay", g(self.pay)),
            Route("/pay/{month}", g(self.payslip)),
            Route("/profile", g(self.profile), methods=["GET", "POST"]),
        ]

    # --- furniture ---

    def _guarded(self, handler: Handler) -> Handler:
        async def run(request: Request) -> Response:
            try:
                if any(isinstance(v, int) and v > MAX_ID for v in request.path_params.values()):
                    raise Refused("Not found.", 404)  # no row has it, and SQLite cannot even take it as an integer
                return await handler(request)
            except Refused as exc:
                body = (f'<div class="alert" role="alert" data-error>{icon("warn")}<span>{esc(self.t(exc.message))}</span></div>'
                        f'<p><a href="/" data-action="back">{self.t("Back")}</a></p>')
                return self._page(self.t("Cannot do that"), body, status=exc.status)
        return run

    def _page(self, title: str, body: str, *, status: int = 200, heading: str | None = None) -> HTMLResponse:
        h = f'<h1 class="page-title">{esc(title if heading is None else heading)}</h1>'
        resp = html_page(self, title, f'<div class="page">{h}{body}</div>', nav=NAV)
        resp.status_code = status
        return resp

    def _stamp(self) -> str:
        return self.now().strftime("%Y-%m-%d %H:%M")

    def _money(self, cents: int, currency: str = HOME_CURRENCY) -> str:
        return money(cents, currency, self.variant.locale)

    def _day(self, iso: str | None) -> str:
        return short_date(iso, self.variant.locale) if iso else ""

    def _status(self, status: str) -> str:
        return f'<span class="badge st-{esc(status)}" data-status-badge="{esc(status)}">{esc(self.t(STATUS_LABELS[status]))}</span>'

    def _error(self, error: str) -> str:
        return f'<div class="alert" role="alert" data-error>{icon("warn")}<span>{esc(self.t(error))}</span></div>' if error else ""

    def _person_name(self, pid: int | None) -> str:
        if pid is None:
            return "Payroll"
        return str(self.db.scalar("SELECT name FROM employees WHERE id = ?", (pid,)) or "")

    def _total(self, rid: int) -> int:
        return int(self.db.scalar("SELECT COALESCE(SUM(home_cents), 0) FROM lines WHERE report_id = ?", (rid,)))

    def _event(self, rid: int, action: str, comment: str = "") -> None:
        self.db.execute("INSERT INTO report_events (report_id, actor_id, action, comment, created_at) VALUES (?,?,?,?,?)",
                        (rid, ME, action, comment, self._stamp()))

    def _direct_reports(self) -> list[int]:
        return [r["id"] for r in self.db.all("SELECT id FROM employees WHERE manager_id = ? ORDER BY id", (ME,))]

    # --- home ---

    async def home(self, _: Request) -> Response:
        me = self.db.one("SELECT * FROM employees WHERE id = ?", (ME,))
        assert me is not None
        balances = self._balances(ME)
        cards = "".join(
            f'<li class="tile" data-balance="{k}" data-available="{b["available"]}">{icon("sun")}'
            f'<span class="tile-label">{esc(self.t(KIND_LABELS[k]))}</span>'
            f'<strong class="tile-figure">{b["available"]}</strong><span class="muted">{self.t("available")}</span></li>'
            for k, b in balances.items())
        waiting = self._waiting()
        mine = self.db.all("SELECT * FROM reports WHERE employee_id = ? AND status IN ('draft', 'submitted') ORDER BY id", (ME,))
        rows = "".join(f'<li data-report-id="{r["id"]}"><a href="/expenses/{r["id"]}">{esc(r["title"])}</a> '
                       f'{self._status(r["status"])} <span class="num">{esc(self._money(self._total(r["id"])))}</span></li>'
                       for r in mine)
        first = me["name"].split()[0]
        body = (f'<p class="greeting">{self.t("Good morning")}, {esc(first)} · {esc(long_date(self.now().date().isoformat(), self.variant.locale))}</p>'
                f'<ul class="tiles" aria-label="{self.t("Balances")}">{cards}'
                f'<li class="tile" data-waiting="{waiting}">{icon("inbox")}<span class="tile-label">{self.t("Approvals")}</span>'
                f'<strong class="tile-figure">{waiting}</strong><a href="/approvals" class="muted">{self.t("waiting for you")}</a></li></ul>'
                f'<section class="panel"><h2>{icon("receipt")} {self.t("Expense reports")}</h2><ul class="plain">{rows}</ul>'
                f'<p><a class="button" href="/expenses" data-action="all-reports">{self.t("Expense reports")}</a></p></section>')
        return self._page(self.t("Home"), body, heading="Tally People")

    def _waiting(self) -> int:
        ids = self._direct_reports()
        marks = ",".join("?" * len(ids))
        return int(self.db.scalar(f"SELECT (SELECT COUNT(*) FROM reports WHERE status = 'submitted' AND employee_id IN ({marks})) + "
                                  f"(SELECT COUNT(*) FROM time_off WHERE status = 'pending' AND employee_id IN ({marks}))",
                                  ids + ids))

    # --- expenses ---

    async def expenses(self, request: Request) -> Response:
        error = ""
        if request.method == "POST":
            title = " ".join(str((await request.form()).get("title", "") or "").split())
            if not title:
                error = self.t("Report title") + ": required."
            elif len(title) > 120:
                error = self.t("Report title") + ": at most 120 characters."
            else:
                rid = self.db.insert("INSERT INTO reports (employee_id, title, status, created_at) VALUES (?, ?, 'draft', ?)",
                                     (ME, title, self._stamp()))
                self._event(rid, "created")
                return RedirectResponse(f"/expenses/{rid}", status_code=303)
        status = self.query(request)["status"] or ""
        where, params = "employee_id = ?", list[Any]([ME])
        if status in STATUS_LABELS:
            where += " AND status = ?"
            params.append(status)
        reports = self.db.all(f"SELECT * FROM reports WHERE {where} ORDER BY created_at DESC, id DESC", params)
        filters = " ".join(
            f'<a class="chip" href="/expenses{"?status=" + s if s else ""}" data-filter-status="{s or "all"}"'
            f'{" aria-current=page" if status == s else ""}>{esc(self.t(STATUS_LABELS.get(s, "All")))}</a>'
            for s in ("", "draft", "submitted", "approved", "rejected", "paid"))
        rows = "".join(
            f'<tr data-report-id="{r["id"]}" data-status="{r["status"]}"><td><a href="/expenses/{r["id"]}" data-report-title>'
            f'{esc(r["title"])}</a></td><td>{self._day(r["created_at"])}</td><td>{self._status(r["status"])}</td>'
            f'<td class="num" data-total-cents="{self._total(r["id"])}">{esc(self._money(self._total(r["id"])))}</td></tr>'
            for r in reports)
        form = (f'<form method="post" action="/expenses" class="inline-form" data-form="new-report">'
                f'<label for="new-title">{self.t("Report title")}</label>'
                f'<input id="new-title" name="title" maxlength="120" required data-field="title"'
                f'{" aria-invalid=true" if error else ""}>'
                f'<button class="primary" type="submit" data-action="create-report">{self.t("Create report")}</button></form>')
        table = (f'<div class="scroll"><table class="grid"><thead><tr><th scope="col">{self.t("Title")}</th><th scope="col">{self.t("Created")}</th>'
                 f'<th scope="col">{self.t("Status")}</th><th scope="col" class="num">{self.t("Total")}</th></tr></thead>'
                 f'<tbody>{rows}</tbody></table></div>' if reports else f'<p class="muted">{self.t("Nothing here.")}</p>')
        links = (f'<p class="sublinks"><a href="/receipts" data-action="receipts">{icon("clip")} {self.t("Receipts inbox")}</a></p>')
        return self._page(self.t("Expense reports"), self._error(error) + form + links +
                          f'<nav class="chips" aria-label="{self.t("Status")}">{filters}</nav>' + table,
                          status=400 if error else 200)

    def _report(self, rid: int, *, mine: bool = True) -> dict[str, Any]:
        r = self.db.one("SELECT * FROM reports WHERE id = ?", (rid,))
        if r is None or (mine and r["employee_id"] != ME):
            raise Refused("No such expense report.", 404)
        return r

    def _lines(self, rid: int) -> list[dict[str, Any]]:
        return self.db.all("SELECT l.*, r.id AS receipt_id, r.filename AS receipt_file FROM lines l "
                           "LEFT JOIN receipts r ON r.line_id = l.id WHERE l.report_id = ? ORDER BY l.day, l.id", (rid,))

    def _warnings(self, rid: int) -> list[tuple[dict[str, Any], str]]:
        return [(line, w) for line in self._lines(rid) for w in line_warnings(line, line["receipt_id"] is not None)]

    def _lines_table(self, lines: list[dict[str, Any]], *, editable: bool) -> str:
        receipts = self.db.all("SELECT * FROM receipts WHERE employee_id = ? AND line_id IS NULL ORDER BY day, id", (ME,)) \
            if editable else []
        opts = "".join(f'<option value="{r["id"]}">{esc(r["filename"])} · {esc(r["merchant"])} · {self._day(r["day"])} · '
                       f'{esc(self._money(r["amount_cents"], r["currency"]))}</option>' for r in receipts)
        rows = []
        for line in lines:
            warnings = line_warnings(line, line["receipt_id"] is not None)
            label = f'{line["merchant"]} {line["day"]}'
            if line["receipt_id"] is not None:
                receipt = f'<span class="ok" data-receipt="attached">{icon("check")} {esc(line["receipt_file"])}</span>'
            elif editable and receipts:
                receipt = (f'<form method="post" action="/lines/{line["id"]}/receipt" class="attach">'
                           f'<select name="receipt" data-receipt-for="{line["id"]}" aria-label="{self.t("Attach receipt")}: {esc(label)}">'
                           f'<option value="">{self.t("Choose a receipt…")}</option>{opts}</select>'
                           f'<button type="submit" data-action="attach-receipt">{self.t("Attach")}</button></form>')
            else:
                receipt = f'<span class="muted" data-receipt="missing">{self.t("missing")}</span>'
            flags = "".join(f'<span class="flag" data-warning="{w}">{icon("warn")} '
                            f'{self.t("Over the limit" if w == "over_limit" else "Receipt missing")}</span>' for w in warnings)
            foreign = (f'<span class="num">{esc(self._money(line["amount_cents"], line["currency"]))}</span>'
                       if line["currency"] != HOME_CURRENCY else "")
            actions = (f'<td class="actions"><a href="/lines/{line["id"]}" data-action="edit-line" aria-label="{self.t("Edit")}: '
                       f'{esc(label)}">{self.t("Edit")}</a>'
                       f'<form method="post" action="/lines/{line["id"]}/delete"><button type="submit" class="link danger" '
                       f'data-action="delete-line" aria-label="{self.t("Delete")}: {esc(label)}">{self.t("Delete")}</button></form></td>'
                       if editable else "")
            rows.append(
                f'<tr data-line-id="{line["id"]}" data-category="{line["category"]}" data-currency="{line["currency"]}" '
                f'data-amount-cents="{line["amount_cents"]}" data-home-cents="{line["home_cents"]}" '
                f'data-warnings="{" ".join(warnings)}"><td>{self._day(line["day"])}</td>'
                f'<td data-merchant>{esc(line["merchant"])}{flags}</td><td>{esc(self.t(CATEGORY_LABELS[line["category"]]))}</td>'
                f'<td class="num">{foreign}</td><td class="num">{esc(self._money(line["home_cents"]))}</td>'
                f'<td>{esc(line["project"])}</td><td>{receipt}</td>{actions}</tr>')
        head = "".join(f'<th scope="col"{" class=num" if h in ("Amount", "In USD") else ""}>{self.t(h)}</th>'
                       for h in ("Date", "Merchant", "Category", "Amount", "In USD", "Project", "Receipt"))
        head += f'<th scope="col"><span class="sr-only">{self.t("Edit")}</span></th>' if editable else ""
        if not lines:
            return f'<p class="muted" data-empty>{self.t("No lines yet.")}</p>'
        return f'<div class="scroll"><table class="grid lines"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'

    def _line_form(self, action: str, values: dict[str, str], button: str, data_action: str) -> str:
        def sel(name: str, options: list[tuple[str, str]]) -> str:
            return "".join(f'<option value="{esc(v)}"{" selected" if values.get(name) == v else ""}>{esc(t)}</option>'
                           for v, t in options)
        cats = [(c, self.t(CATEGORY_LABELS[c])) for c in CATEGORIES]
        curs = [(c, c) for c in RATES]
        projects = [(p["code"], f'{p["code"]} · {p["name"]}') for p in self.db.all("SELECT * FROM projects ORDER BY code")]
        t = self.t
        return (f'<form method="post" action="{action}" class="card line-form" data-form="line">'
                f'<label>{t("Date")}<input type="date" name="day" required value="{esc(values.get("day", ""))}" data-field="day"></label>'
                f'<label>{t("Merchant")}<input name="merchant" required maxlength="80" value="{esc(values.get("merchant", ""))}" data-field="merchant"></label>'
                f'<label>{t("Category")}<select name="category" data-field="category">{sel("category", cats)}</select></label>'
                f'<label>{t("Amount")}<input name="amount" inputmode="decimal" required value="{esc(values.get("amount", ""))}" data-field="amount"></label>'
                f'<label>{t("Currency")}<select name="currency" data-field="currency">{sel("currency", curs)}</select></label>'
                f'<label>{t("Project")}<select name="project" data-field="project">{sel("project", projects)}</select></label>'
                f'<label class="wide">{t("Note")}<input name="note" maxlength="200" value="{esc(values.get("note", ""))}" data-field="note"></label>'
                f'<button class="primary" type="submit" data-action="{data_action}">{t(button)}</button></form>')

    async def report(self, request: Request) -> Response:
        r = self._report(request.path_params["rid"])
        return self._report_page(r, "")

    def _report_page(self, r: dict[str, Any], error: str, values: dict[str, str] | None = None) -> HTMLResponse:
        rid = r["id"]
        lines = self._lines(rid)
        draft = r["status"] == "draft"
        warnings = self._warnings(rid)
        total = self._total(rid)
        t = self.t
        summary = (f'<dl class="facts" data-report-id="{rid}" data-status="{r["status"]}" data-total-cents="{total}">'
                   f'<dt>{t("Status")}</dt><dd>{self._status(r["status"])}</dd>'
                   f'<dt>{t("Total")}</dt><dd class="num big">{esc(self._money(total))}</dd>'
                   f'<dt>{t("Lines")}</dt><dd>{len(lines)}</dd></dl>')
        if r["status"] == "rejected" and r["decision_comment"]:
            summary += f'<p class="note-box" data-decision-comment>{esc(r["decision_comment"])}</p>'
        block = ""
        if draft and warnings:
            items = "".join(f'<li data-warning-line="{line["id"]}" data-warning="{w}">{esc(line["merchant"])} '
                            f'({self._day(line["day"])}): {t("Over the limit" if w == "over_limit" else "Receipt missing")}</li>'
                            for line, w in warnings)
            block = (f'<div class="alert warn" role="status" data-policy-warnings="{len(warnings)}">{icon("warn")}'
                     f'<div><strong>{t("Fix these before you submit:")}</strong><ul>{items}</ul></div></div>')
        actions = ""
        if draft:
            blocked = bool(warnings) or not lines
            actions = (f'<form method="post" action="/expenses/{rid}/submit"><button class="primary" type="submit" '
                       f'data-action="submit-report"{" disabled aria-disabled=true" if blocked else ""}>'
                       f'{t("Submit for approval")}</button></form>')
        elif r["status"] == "submitted":
            actions = (f'<p class="muted">{t("Waiting for your manager")}</p><form method="post" action="/expenses/{rid}/recall">'
                       f'<button type="submit" data-action="recall-report">{t("Recall")}</button></form>')
        elif r["status"] == "rejected":
            actions = (f'<form method="post" action="/expenses/{rid}/reopen"><button type="submit" data-action="reopen-report">'
                       f'{t("Reopen as draft")}</button></form>')
        add = (f'<h2>{t("Add a line")}</h2>' + self._line_form(f"/expenses/{rid}/lines", values or {
            "day": self.now().date().isoformat(), "currency": HOME_CURRENCY, "project": "INT-001", "category": "meals"},
            "Add line", "add-line") if draft else "")
        events = self.db.all("SELECT * FROM report_events WHERE report_id = ? ORDER BY id", (rid,))
        history = "".join(f'<li data-event="{e["action"]}"><time>{self._day(e["created_at"])} {esc(e["created_at"][11:16])}</time> '
                          f'{esc(t(e["action"]))} {t("by")} {esc(self._person_name(e["actor_id"]))}'
                          f'{" — " + esc(e["comment"]) if e["comment"] else ""}</li>' for e in events)
        body = (self._error(error) + summary + block + f'<div class="row">{actions}</div>' +
                self._lines_table(lines, editable=draft) + add +
                f'<h2>{t("History")}</h2><ol class="history">{history}</ol>')
        return self._page(r["title"], body, status=400 if error else 200)

    def _line_values(self, form: Any) -> tuple[dict[str, str], dict[str, Any]]:
        """The typed line and the row it makes; Refused with the field's problem."""
        values = {k: str(form.get(k, "") or "").strip() for k in ("day", "merchant", "category", "amount", "currency", "project",
                                                                   "note")}
        day = parse_day(values["day"], "Date")
        if day > self.now().date():
            raise Refused("Date: an expense cannot be in the future.")
        if day < self.now().date() - dt.timedelta(days=365):
            raise Refused("Date: expenses older than a year cannot be claimed.")
        merchant = " ".join(values["merchant"].split())
        if not merchant:
            raise Refused("Merchant: required.")
        if values["category"] not in CATEGORIES:
            raise Refused("Category: choose one from the list.")
        if values["currency"] not in RATES:
            raise Refused(f"Currency: choose one of {', '.join(RATES)}.")
        if not self.db.one("SELECT code FROM projects WHERE code = ?", (values["project"],)):
            raise Refused("Project: choose a project code from the list.")
        amount = parse_amount(values["amount"])
        row = {"day": day.isoformat(), "merchant": merchant[:80], "category": values["category"], "amount_cents": amount,
               "currency": values["currency"], "home_cents": convert(amount, values["currency"]), "project": values["project"],
               "note": " ".join(values["note"].split())[:200]}
        return values, row

    async def add_line(self, request: Request) -> Response:
        r = self._report(request.path_params["rid"])
        if r["status"] != "draft":
            raise Refused("Only a draft report can be changed. Recall it first.")
        form = await request.form()
        try:
            _, row = self._line_values(form)
        except Refused as exc:
            values = {k: str(form.get(k, "") or "") for k in ("day", "merchant", "category", "amount", "currency", "project", "note")}
            return self._report_page(r, exc.message, values)
        self.db.execute("INSERT INTO lines (report_id, day, merchant, category, amount_cents, currency, home_cents, project, note) "
                        "VALUES (:rid, :day, :merchant, :category, :amount_cents, :currency, :home_cents, :project, :note)",
                        {"rid": r["id"], **row})
        return RedirectResponse(f"/expenses/{r['id']}", status_code=303)

    def _line(self, lid: int) -> tuple[dict[str, Any], dict[str, Any]]:
        line = self.db.one("SELECT * FROM lines WHERE id = ?", (lid,))
        if line is None:
            raise Refused("No such line.", 404)
        r = self._report(line["report_id"])
        return line, r

    async def edit_line(self, request: Request) -> Response:
        line, r = self._line(request.path_params["lid"])
        values = {"day": line["day"], "merchant": line["merchant"], "category": line["category"], "currency": line["currency"],
                  "amount": f'{line["amount_cents"] // 100}.{line["amount_cents"] % 100:02d}', "project": line["project"],
                  "note": line["note"]}
        error = ""
        if r["status"] != "draft":
            raise Refused("Only a draft report can be changed. Recall it first.")
        if request.method == "POST":
            form = await request.form()
            try:
                _, row = self._line_values(form)
                self.db.execute("UPDATE lines SET day = :day, merchant = :merchant, category = :category, amount_cents = :amount_cents, "
                                "currency = :currency, home_cents = :home_cents, project = :project, note = :note WHERE id = :id",
                                {**row, "id": line["id"]})
                return RedirectResponse(f"/expenses/{r['id']}", status_code=303)
            except Refused as exc:
                error = exc.message
                values = {k: str(form.get(k, "") or "") for k in values}
        rates = "".join(f'<li data-rate="{c}">1 {c} = {esc(v)} USD</li>' for c, v in RATES.items() if c != HOME_CURRENCY)
        body = (self._error(error) + f'<p><a href="/expenses/{r["id"]}" data-action="back-to-report">← {esc(r["title"])}</a></p>' +
                self._line_form(f"/lines/{line['id']}", values, "Save", "save-line") +
                f'<aside class="panel"><h2>{self.t("Company rates to USD")}</h2><ul class="plain">{rates}</ul></aside>')
        return self._page(self.t("Edit line"), body, status=400 if error else 200)

    async def delete_line(self, request: Request) -> Response:
        line, r = self._line(request.path_params["lid"])
        if r["status"] != "draft":
            raise Refused("Only a draft report can be changed. Recall it first.")
        self.db.execute("DELETE FROM lines WHERE id = ?", (line["id"],))
        return RedirectResponse(f"/expenses/{r['id']}", status_code=303)

    async def attach_receipt(self, request: Request) -> Response:
        line, r = self._line(request.path_params["lid"])
        if r["status"] != "draft":
            raise Refused("Only a draft report can be changed. Recall it first.")
        raw = str((await request.form()).get("receipt", "") or "")
        receipt = (self.db.one("SELECT * FROM receipts WHERE id = ? AND employee_id = ?", (int(raw), ME))
                   if raw.isdigit() and int(raw) <= MAX_ID else None)
        if receipt is None:
            raise Refused("Receipt: choose one of your receipts.")
        if receipt["line_id"] is not None:
            raise Refused("That receipt is already attached to another line.")
        if self.db.one("SELECT id FROM receipts WHERE line_id = ?", (line["id"],)):
            raise Refused("This line already has a receipt.")
        self.db.execute("UPDATE receipts SET line_id = ? WHERE id = ?", (line["id"], receipt["id"]))
        return RedirectResponse(f"/expenses/{r['id']}", status_code=303)

    async def submit(self, request: Request) -> Response:
        r = self._report(request.path_params["rid"])
        if r["status"] != "draft":
            raise Refused("Only a draft report can be submitted.")
        if not self._lines(r["id"]):
            raise Refused("Add at least one line before you submit.")
        warnings = self._warnings(r["id"])
        if warnings:
            raise Refused(f"The report has {len(warnings)} policy warning(s): fix them before you submit.")
        self.db.execute("UPDATE reports SET status = 'submitted', submitted_at = ? WHERE id = ?", (self._stamp(), r["id"]))
        self._event(r["id"], "submitted")
        return RedirectResponse(f"/expenses/{r['id']}", status_code=303)

    async def recall(self, request: Request) -> Response:
        r = self._report(request.path_params["rid"])
        if r["status"] != "submitted":
            raise Refused("Only a submitted report can be recalled.")
        self.db.execute("UPDATE reports SET status = 'draft', submitted_at = NULL WHERE id = ?", (r["id"],))
        self._event(r["id"], "recalled")
        return RedirectResponse(f"/expenses/{r['id']}", status_code=303)

    async def reopen(self, request: Request) -> Response:
        r = self._report(request.path_params["rid"])
        if r["status"] != "rejected":
            raise Refused("Only a rejected report can be reopened.")
        self.db.execute("UPDATE reports SET status = 'draft', submitted_at = NULL WHERE id = ?", (r["id"],))
        self._event(r["id"], "reopened")
        return RedirectResponse(f"/expenses/{r['id']}", status_code=303)

    async def receipts(self, _: Request) -> Response:
        rows = self.db.all("SELECT * FROM receipts WHERE employee_id = ? AND line_id IS NULL ORDER BY day DESC, id", (ME,))
        items = "".join(f'<tr data-receipt-id="{r["id"]}"><td>{icon("receipt")} {esc(r["filename"])}</td><td>{esc(r["merchant"])}</td>'
                        f'<td>{self._day(r["day"])}</td><td class="num">{esc(self._money(r["amount_cents"], r["currency"]))}</td></tr>'
                        for r in rows)
        t = self.t
        table = (f'<div class="scroll"><table class="grid"><thead><tr><th scope="col">{t("File")}</th><th scope="col">{t("Merchant")}</th>'
                 f'<th scope="col">{t("Date")}</th><th scope="col" class="num">{t("Amount")}</th></tr></thead><tbody>{items}</tbody></table></div>'
                 if rows else f'<p class="muted">{t("Nothing here.")}</p>')
        policy = "".join(f'<tr data-policy="{c}"><td>{esc(t(CATEGORY_LABELS[c]))}</td><td class="num">{esc(self._money(lim))}</td></tr>'
                         for c, (lim, _) in POLICY.items())
        rates = "".join(f'<li data-rate="{c}">1 {c} = {esc(v)} USD</li>' for c, v in RATES.items() if c != HOME_CURRENCY)
        body = (f'<h2>{t("Unmatched receipts")}</h2>{table}<div class="two"><section class="panel"><h2>{t("Policy")}</h2>'
                f'<table class="grid"><thead><tr><th scope="col">{t("Category")}</th><th scope="col" class="num">{t("Limit per line")}</th>'
                f'</tr></thead><tbody>{policy}</tbody></table><p class="muted">{t("Receipt needed over")} '
                f'{esc(self._money(RECEIPT_THRESHOLD))}</p></section>'
                f'<section class="panel"><h2>{t("Company rates to USD")}</h2><ul class="plain">{rates}</ul></section></div>')
        return self._page(t("Receipts inbox"), body)

    # --- time off ---

    def _holidays(self) -> set[str]:
        return {r["day"] for r in self.db.all("SELECT day FROM holidays")}

    def _balances(self, pid: int) -> dict[str, dict[str, int]]:
        year = self.now().year
        out = {}
        for kind in TIME_OFF_TYPES:
            allowance = int(self.db.scalar("SELECT allowance_days FROM balances WHERE employee_id = ? AND kind = ? AND year = ?",
                                           (pid, kind, year)) or 0)
            used = int(self.db.scalar("SELECT COALESCE(SUM(days), 0) FROM time_off WHERE employee_id = ? AND kind = ? AND "
                                      "status = 'approved' AND substr(start_day, 1, 4) = ?", (pid, kind, str(year))))
            pending = int(self.db.scalar("SELECT COALESCE(SUM(days), 0) FROM time_off WHERE employee_id = ? AND kind = ? AND "
                                         "status = 'pending' AND substr(start_day, 1, 4) = ?", (pid, kind, str(year))))
            out[kind] = {"allowance": allowance, "used": used, "pending": pending, "available": allowance - used - pending}
        return out

    async def time_off(self, request: Request) -> Response:
        t = self.t
        error = ""
        values = {"kind": "vacation", "start": "", "end": "", "note": ""}
        if request.method == "POST":
            form = await request.form()
            values = {k: str(form.get(k, "") or "").strip() for k in values}
            try:
                self._request_time_off(values)
                return RedirectResponse("/time-off", status_code=303)
            except Refused as exc:
                error = exc.message
        balances = self._balances(ME)
        tiles = "".join(
            f'<li class="tile" data-balance="{k}" data-available="{b["available"]}" data-allowance="{b["allowance"]}">'
            f'<span class="tile-label">{esc(t(KIND_LABELS[k]))}</span><strong class="tile-figure">{b["available"]}</strong>'
            f'<span class="muted">{t("available")}</span><span class="tile-foot">{b["allowance"]} {t("allowance")} · '
            f'{b["used"]} {t("taken or booked")} · {b["pending"]} {t("pending")}</span></li>' for k, b in balances.items())
        kinds = "".join(f'<option value="{k}"{" selected" if values["kind"] == k else ""}>{esc(t(KIND_LABELS[k]))}</option>'
                        for k in TIME_OFF_TYPES)
        form_html = (f'<form method="post" action="/time-off" class="card line-form" data-form="request-time-off">'
                     f'<label>{t("Type")}<select name="kind" data-field="kind">{kinds}</select></label>'
                     f'<label>{t("First day")}<input type="date" name="start" required value="{esc(values["start"])}" data-field="start"></label>'
                     f'<label>{t("Last day")}<input type="date" name="end" required value="{esc(values["end"])}" data-field="end"></label>'
                     f'<label class="wide">{t("Note")}<input name="note" maxlength="200" value="{esc(values["note"])}" data-field="note"></label>'
                     f'<p class="muted wide">{t("Weekends and company holidays are not counted.")}</p>'
                     f'<button class="primary" type="submit" data-action="request-time-off">{t("Send request")}</button></form>')
        mine = self.db.all("SELECT * FROM time_off WHERE employee_id = ? ORDER BY start_day DESC", (ME,))
        rows = "".join(
            f'<tr data-request-id="{r["id"]}" data-status="{r["status"]}" data-kind="{r["kind"]}" data-start="{r["start_day"]}" '
            f'data-end="{r["end_day"]}" data-days="{r["days"]}"><td>{esc(t(KIND_LABELS[r["kind"]]))}</td>'
            f'<td>{self._day(r["start_day"])} – {self._day(r["end_day"])}</td><td class="num">{r["days"]}</td>'
            f'<td>{self._status(r["status"])}</td><td>'
            + (f'<form method="post" action="/time-off/{r["id"]}/cancel"><button type="submit" class="link danger" '
               f'data-action="cancel-request" aria-label="{t("Cancel request")}: {esc(r["start_day"])}">{t("Cancel request")}</button></form>'
               if r["status"] == "pending" else "") + "</td></tr>" for r in mine)
        holidays = "".join(f'<li data-holiday="{h["day"]}"><time>{self._day(h["day"])}</time> {esc(h["name"])}</li>'
                           for h in self.db.all("SELECT * FROM holidays WHERE day >= ? ORDER BY day",
                                                (f"{self.now().year}-01-01",)))
        body = (self._error(error) + f'<ul class="tiles" aria-label="{t("Balances")}">{tiles}</ul>'
                f'<div class="two"><section><h2>{t("Request time off")}</h2>{form_html}</section>'
                f'<section class="panel"><h2>{t("Company holidays")}</h2><ul class="plain holidays">{holidays}</ul></section></div>'
                f'<h2>{t("Your requests")}</h2><div class="scroll"><table class="grid"><thead><tr><th scope="col">{t("Type")}</th>'
                f'<th scope="col">{t("Dates")}</th><th scope="col" class="num">{t("Days")}</th><th scope="col">{t("Status")}</th>'
                f'<th scope="col"><span class="sr-only">{t("Cancel")}</span></th></tr></thead><tbody>{rows}</tbody></table></div>')
        return self._page(t("Time off"), body, status=400 if error else 200)

    def _request_time_off(self, values: dict[str, str]) -> None:
        kind = values["kind"]
        if kind not in TIME_OFF_TYPES:
            raise Refused("Type: choose vacation, sick leave or a personal day.")
        start = parse_day(values["start"], "First day")
        end = parse_day(values["end"], "Last day")
        today = self.now().date()
        if end < start:
            raise Refused("Last day: it comes before the first day.")
        if start < today:
            raise Refused("First day: time off can be requested from today on.")
        if start.year != today.year or end.year != today.year:
            raise Refused(f"Dates: requests for {today.year} only; next year's allowance opens in December.")
        if (end - start).days + 1 > MAX_RANGE_DAYS:
            raise Refused(f"Dates: one request covers at most {MAX_RANGE_DAYS} calendar days.")
        days = working_days(start, end, self._holidays())
        if days == 0:
            raise Refused("Dates: there is no working day in that range (weekends and company holidays do not count).")
        clash = self.db.one("SELECT * FROM time_off WHERE employee_id = ? AND status IN ('pending', 'approved') AND "
                            "NOT (end_day < ? OR start_day > ?)", (ME, start.isoformat(), end.isoformat()))
        if clash:
            raise Refused(f"Dates: they overlap your request of {clash['start_day']} – {clash['end_day']}.")
        available = self._balances(ME)[kind]["available"]
        if days > available:
            raise Refused(f"Not enough balance: the request is {days} working days, and you have {available} "
                          f"{KIND_LABELS[kind].lower()} days available.")
        self.db.execute("INSERT INTO time_off (employee_id, kind, start_day, end_day, days, note, status, created_at) "
                        "VALUES (?,?,?,?,?,?, 'pending', ?)",
                        (ME, kind, start.isoformat(), end.isoformat(), days, " ".join(values["note"].split())[:200], self._stamp()))

    async def cancel_time_off(self, request: Request) -> Response:
        r = self.db.one("SELECT * FROM time_off WHERE id = ? AND employee_id = ?", (request.path_params["tid"], ME))
        if r is None:
            raise Refused("No such request.", 404)
        if r["status"] != "pending":
            raise Refused("Only a pending request can be cancelled here; ask your manager about an approved one.")
        self.db.execute("UPDATE time_off SET status = 'cancelled', decided_at = ? WHERE id = ?", (self._stamp(), r["id"]))
        return RedirectResponse("/time-off", status_code=303)

    # --- approvals ---

    async def approvals(self, _: Request) -> Response:
        ids = self._direct_reports()
        marks = ",".join("?" * len(ids))
        t = self.t
        reports = self.db.all(f"SELECT r.*, e.name AS who FROM reports r JOIN employees e ON e.id = r.employee_id "
                              f"WHERE r.status = 'submitted' AND r.employee_id IN ({marks}) ORDER BY r.submitted_at, r.id", ids)
        leave = self.db.all(f"SELECT t.*, e.name AS who FROM time_off t JOIN employees e ON e.id = t.employee_id "
                            f"WHERE t.status = 'pending' AND t.employee_id IN ({marks}) ORDER BY t.start_day, t.id", ids)
        rrows = "".join(
            f'<tr data-approval="expense:{r["id"]}" data-report-id="{r["id"]}" data-employee-id="{r["employee_id"]}" '
            f'data-total-cents="{self._total(r["id"])}"><td>{esc(r["who"])}</td><td>{esc(r["title"])}</td>'
            f'<td>{self._day(r["submitted_at"])}</td><td class="num">{esc(self._money(self._total(r["id"])))}</td>'
            f'<td><a class="button" href="/approvals/expenses/{r["id"]}" data-action="review" aria-label="{t("Review")}: '
            f'{esc(r["title"])}">{t("Review")}</a></td></tr>' for r in reports)
        lrows = "".join(
            f'<tr data-approval="time-off:{r["id"]}" data-request-id="{r["id"]}" data-employee-id="{r["employee_id"]}" '
            f'data-days="{r["days"]}"><td>{esc(r["who"])}</td><td>{esc(t(KIND_LABELS[r["kind"]]))}</td>'
            f'<td>{self._day(r["start_day"])} – {self._day(r["end_day"])}</td><td class="num">{r["days"]}</td>'
            f'<td><a class="button" href="/approvals/time-off/{r["id"]}" data-action="review" aria-label="{t("Review")}: '
            f'{esc(r["who"])} {esc(r["start_day"])}">{t("Review")}</a></td></tr>' for r in leave)
        empty = f'<p class="muted">{t("Inbox zero: nothing waits for you.")}</p>'
        body = (f'<h2>{icon("receipt")} {t("Expense reports to approve")}</h2>' +
                (f'<div class="scroll"><table class="grid"><thead><tr><th scope="col">{t("Employee")}</th><th scope="col">{t("Report")}</th>'
                 f'<th scope="col">{t("Submitted")}</th><th scope="col" class="num">{t("Total")}</th><th scope="col">'
                 f'<span class="sr-only">{t("Review")}</span></th></tr></thead><tbody>{rrows}</tbody></table></div>' if reports else empty) +
                f'<h2>{icon("sun")} {t("Time off to approve")}</h2>' +
                (f'<div class="scroll"><table class="grid"><thead><tr><th scope="col">{t("Employee")}</th><th scope="col">{t("Type")}</th>'
                 f'<th scope="col">{t("Dates")}</th><th scope="col" class="num">{t("Days")}</th><th scope="col">'
                 f'<span class="sr-only">{t("Review")}</span></th></tr></thead><tbody>{lrows}</tbody></table></div>' if leave else empty))
        return self._page(t("Approvals"), body)

    def _check_approver(self, employee_id: int) -> None:
        if employee_id == ME:
            raise Refused("You cannot approve or reject your own request: it goes to your manager.", 403)
        if employee_id not in self._direct_reports():
            raise Refused("Only the employee's own manager can approve or reject this.", 403)

    async def _decision(self, request: Request) -> tuple[str, str]:
        form = await request.form()
        decision = str(form.get("decision", "") or "")
        comment = " ".join(str(form.get("comment", "") or "").split())
        if decision not in ("approve", "reject"):
            raise Refused("Decision: approve or reject.")
        if decision == "reject" and not comment:
            raise Refused("Comment: say why you reject it; the employee sees your comment.")
        if len(comment) > 500:
            raise Refused("Comment: at most 500 characters.")
        return decision, comment

    def _decision_form(self, action: str, label: str) -> str:
        t = self.t
        return (f'<form method="post" action="{action}" class="card decide" data-form="decision">'
                f'<label for="comment">{t("Comment (required to reject)")}</label>'
                f'<textarea id="comment" name="comment" rows="3" maxlength="500" data-field="comment"></textarea>'
                f'<div class="row"><button class="primary" type="submit" name="decision" value="approve" data-action="approve" '
                f'aria-label="{t("Approve")}: {esc(label)}">{icon("check")} {t("Approve")}</button>'
                f'<button class="danger" type="submit" name="decision" value="reject" data-action="reject" '
                f'aria-label="{t("Reject")}: {esc(label)}">{t("Reject")}</button></div></form>')

    async def review_report(self, request: Request) -> Response:
        r = self._report(request.path_params["rid"], mine=False)
        self._check_approver(r["employee_id"])
        if request.method == "POST":
            if r["status"] != "submitted":
                raise Refused("This report is not waiting for a decision.")
            decision, comment = await self._decision(request)
            status = "approved" if decision == "approve" else "rejected"
            self.db.execute("UPDATE reports SET status = ?, decided_at = ?, decided_by = ?, decision_comment = ? WHERE id = ?",
                            (status, self._stamp(), ME, comment, r["id"]))
            self._event(r["id"], status, comment)
            return RedirectResponse("/approvals", status_code=303)
        who = self._person_name(r["employee_id"])
        total = self._total(r["id"])
        lines = self._lines(r["id"])
        warnings = sum(len(line_warnings(line, line["receipt_id"] is not None)) for line in lines)
        body = (f'<dl class="facts" data-report-id="{r["id"]}" data-status="{r["status"]}" data-total-cents="{total}">'
                f'<dt>{self.t("Employee")}</dt><dd><a href="/people/{r["employee_id"]}">{esc(who)}</a></dd>'
                f'<dt>{self.t("Status")}</dt><dd>{self._status(r["status"])}</dd>'
                f'<dt>{self.t("Total")}</dt><dd class="num big">{esc(self._money(total))}</dd></dl>'
                + (f'<p class="alert warn" role="status" data-policy-warnings="{warnings}">{icon("warn")} {warnings}</p>' if warnings else "")
                + self._lines_table(lines, editable=False)
                + (self._decision_form(f"/approvals/expenses/{r['id']}", r["title"]) if r["status"] == "submitted" else ""))
        return self._page(r["title"], body)

    async def review_time_off(self, request: Request) -> Response:
        r = self.db.one("SELECT * FROM time_off WHERE id = ?", (request.path_params["tid"],))
        if r is None:
            raise Refused("No such request.", 404)
        self._check_approver(r["employee_id"])
        if request.method == "POST":
            if r["status"] != "pending":
                raise Refused("This request is not waiting for a decision.")
            decision, comment = await self._decision(request)
            self.db.execute("UPDATE time_off SET status = ?, decided_at = ?, decided_by = ?, decision_comment = ? WHERE id = ?",
                            ("approved" if decision == "approve" else "rejected", self._stamp(), ME, comment, r["id"]))
            return RedirectResponse("/approvals", status_code=303)
        who = self._person_name(r["employee_id"])
        b = self._balances(r["employee_id"])[r["kind"]]
        t = self.t
        body = (f'<dl class="facts" data-request-id="{r["id"]}" data-status="{r["status"]}" data-days="{r["days"]}">'
                f'<dt>{t("Employee")}</dt><dd><a href="/people/{r["employee_id"]}">{esc(who)}</a></dd>'
                f'<dt>{t("Type")}</dt><dd>{esc(t(KIND_LABELS[r["kind"]]))}</dd>'
                f'<dt>{t("Dates")}</dt><dd>{self._day(r["start_day"])} – {self._day(r["end_day"])}</dd>'
                f'<dt>{t("Days")}</dt><dd>{r["days"]} {t("working days")}</dd>'
                f'<dt>{t("Note")}</dt><dd>{esc(r["note"])}</dd>'
                f'<dt>{t("available")}</dt><dd data-available="{b["available"]}">{b["available"]}</dd>'
                f'<dt>{t("Status")}</dt><dd>{self._status(r["status"])}</dd></dl>'
                + (self._decision_form(f"/approvals/time-off/{r['id']}", f"{who} {r['start_day']}") if r["status"] == "pending" else ""))
        return self._page(f"{self.t('Time off')} · {who}", body)

    # --- people ---

    async def people(self, request: Request) -> Response:
        q = self.query(request)
        where, params = ["1"], []
        if q["q"]:
            where.append("(e.name LIKE ? OR e.title LIKE ? OR e.email LIKE ?)")
            params += [f"%{q['q']}%"] * 3
        if q["team"]:
            where.append("t.name = ?")
            params.append(q["team"])
        if q["office"]:
            where.append("e.office = ?")
            params.append(q["office"])
        rows = self.db.all(f"SELECT e.*, t.name AS team, m.name AS manager FROM employees e JOIN teams t ON t.id = e.team_id "
                           f"LEFT JOIN employees m ON m.id = e.manager_id WHERE {' AND '.join(where)} ORDER BY e.name", params)
        teams = [r["name"] for r in self.db.all("SELECT name FROM teams ORDER BY name")]
        offices = [r["office"] for r in self.db.all("SELECT DISTINCT office FROM employees ORDER BY office")]
        t = self.t

        def opts(values: list[str], chosen: str | None, blank: str) -> str:
            return f'<option value="">{t(blank)}</option>' + "".join(
                f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>{esc(v)}</option>' for v in values)
        form = (f'<form method="get" action="/people" class="filters" role="search" data-form="people-search">'
                f'<label>{t("Search people")}<input type="search" name="q" value="{esc(q["q"] or "")}" data-filter="q"></label>'
                f'<label>{t("Team")}<select name="team" data-filter="team">{opts(teams, q["team"], "Any team")}</select></label>'
                f'<label>{t("Office")}<select name="office" data-filter="office">{opts(offices, q["office"], "Any office")}</select></label>'
                f'<button type="submit" data-action="search-people">{t("Search")}</button></form>')
        cards = "".join(
            f'<li class="person" data-person-id="{p["id"]}"><span class="avatar" aria-hidden="true">{esc(_initials(p["name"]))}</span>'
            f'<div><a href="/people/{p["id"]}" data-person-name>{esc(p["name"])}</a><span class="muted">{esc(p["title"])}</span>'
            f'<span class="muted">{esc(p["team"])} · {esc(p["office"])}</span></div></li>' for p in rows)
        body = (form + f'<p class="muted" role="status" data-count="{len(rows)}">{len(rows)} {t("people")}</p>'
                f'<ul class="people">{cards}</ul>')
        return self._page(t("Directory"), body)

    async def person(self, request: Request) -> Response:
        p = self.db.one("SELECT e.*, t.name AS team FROM employees e JOIN teams t ON t.id = e.team_id WHERE e.id = ?",
                        (request.path_params["pid"],))
        if p is None:
            raise Refused("No such person.", 404)
        t = self.t
        manager = self.db.one("SELECT id, name, title FROM employees WHERE id = ?", (p["manager_id"],)) if p["manager_id"] else None
        reports = self.db.all("SELECT id, name, title FROM employees WHERE manager_id = ? ORDER BY name", (p["id"],))
        mgr = (f'<a href="/people/{manager["id"]}" data-field="manager" data-person-link="{manager["id"]}">{esc(manager["name"])}</a>'
               f' <span class="muted">{esc(manager["title"])}</span>' if manager else "—")
        reps = "".join(f'<li><a href="/people/{r["id"]}" data-person-link="{r["id"]}">{esc(r["name"])}</a> '
                       f'<span class="muted">{esc(r["title"])}</span></li>' for r in reports)
        body = (f'<div class="profile-head" data-person-id="{p["id"]}"><span class="avatar big" aria-hidden="true">{esc(_initials(p["name"]))}</span>'
                f'<p class="muted">{esc(p["title"])}</p></div>'
                f'<dl class="facts"><dt>{t("Team")}</dt><dd data-field="team">{esc(p["team"])}</dd>'
                f'<dt>{t("Reports to")}</dt><dd>{mgr}</dd>'
                f'<dt>{t("Office")}</dt><dd data-field="office">{esc(p["office"])}, {esc(p["country"])}</dd>'
                f'<dt>{t("Email")}</dt><dd><a href="mailto:{esc(p["email"])}" data-field="email">{esc(p["email"])}</a></dd>'
                f'<dt>{t("Phone")}</dt><dd data-field="phone">{esc(p["phone"])}</dd>'
                f'<dt>{t("Started")}</dt><dd data-field="start">{esc(long_date(p["start_date"], self.variant.locale))}</dd></dl>'
                + (f'<h2>{t("Direct reports")}</h2><ul class="plain" data-reports="{len(reports)}">{reps}</ul>' if reports else ""))
        return self._page(p["name"], body)

    async def org(self, _: Request) -> Response:
        everyone = self.db.all("SELECT e.id, e.name, e.title, e.manager_id, t.name AS team FROM employees e "
                               "JOIN teams t ON t.id = e.team_id ORDER BY e.name")
        under: dict[int | None, list[dict[str, Any]]] = {}
        for p in everyone:
            under.setdefault(p["manager_id"], []).append(p)

        def branch(pid: int | None, depth: int) -> str:
            items = []
            for p in under.get(pid, []):
                kids = under.get(p["id"], [])
                node = (f'<a href="/people/{p["id"]}" data-person-link="{p["id"]}">{esc(p["name"])}</a>'
                        f'<span class="muted"> {esc(p["title"])} · {esc(p["team"])}</span>')
                if kids:
                    items.append(f'<li role="treeitem" aria-expanded="{"true" if depth < 2 else "false"}" data-org-node="{p["id"]}">'
                                 f'<details{" open" if depth < 2 else ""}><summary>{node} <span class="count">{len(kids)}</span></summary>'
                                 f'<ul role="group">{branch(p["id"], depth + 1)}</ul></details></li>')
                else:
                    items.append(f'<li role="treeitem" data-org-node="{p["id"]}">{node}</li>')
            return "".join(items)
        return self._page(self.t("Org chart"), f'<ul class="org" role="tree" aria-label="{self.t("Org chart")}">{branch(None, 0)}</ul>')

    # --- pay ---

    async def pay(self, _: Request) -> Response:
        t = self.t
        slips = self.db.all("SELECT * FROM payslips ORDER BY month DESC")
        rows = "".join(
            f'<tr data-month="{s["month"]}" data-net-cents="{s["net_cents"]}" data-gross-cents="{s["gross_cents"]}">'
            f'<td><a href="/pay/{s["month"]}" data-action="open-payslip">{esc(self._month(s["month"]))}</a></td>'
            f'<td>{self._day(s["pay_day"])}</td><td class="num">{esc(self._money(s["gross_cents"]))}</td>'
            f'<td class="num">{esc(self._money(s["gross_cents"] - s["net_cents"]))}</td>'
            f'<td class="num strong">{esc(self._money(s["net_cents"]))}</td></tr>' for s in slips)
        body = (f'<div class="scroll"><table class="grid"><thead><tr><th scope="col">{t("Month")}</th><th scope="col">{t("Pay day")}</th>'
                f'<th scope="col" class="num">{t("Gross")}</th><th scope="col" class="num">{t("Deductions")}</th>'
                f'<th scope="col" class="num">{t("Net")}</th></tr></thead><tbody>{rows}</tbody></table></div>')
        return self._page(t("Payslips"), body)

    def _month(self, month: str) -> str:
        text = long_date(month + "-01", self.variant.locale)
        return re.sub(r"^1\. |\s1,", "", text).replace("  ", " ")

    async def payslip(self, request: Request) -> Response:
        month = request.path_params["month"]
        if not MONTH.match(month):
            raise Refused("A payslip month is written YYYY-MM.")
        s = self.db.one("SELECT * FROM payslips WHERE month = ?", (month,))
        if s is None:
            raise Refused(f"There is no payslip for {month}.", 404)
        t = self.t
        parts = [("Federal income tax", "federal_tax_cents"), ("State income tax", "state_tax_cents"),
                 ("Social Security", "social_security_cents"), ("Medicare", "medicare_cents"), ("401(k)", "retirement_cents"),
                 ("Health insurance", "health_cents")]
        rows = "".join(f'<tr data-deduction="{col}"><td>{t(label)}</td><td class="num" data-cents="{s[col]}">'
                       f'{esc(self._money(-s[col]))}</td></tr>' for label, col in parts)
        body = (f'<table class="grid slip" data-month="{month}"><tbody><tr><th scope="row">{t("Gross")}</th>'
                f'<td class="num" data-gross-cents="{s["gross_cents"]}">{esc(self._money(s["gross_cents"]))}</td></tr>{rows}'
                f'<tr class="total"><th scope="row">{t("Net pay")}</th><td class="num" data-net-cents="{s["net_cents"]}">'
                f'{esc(self._money(s["net_cents"]))}</td></tr></tbody></table>'
                f'<p class="muted">{t("Pay day")}: {esc(long_date(s["pay_day"], self.variant.locale))}</p>'
                f'<p><a href="/pay" data-action="back-to-pay">← {t("Payslips")}</a></p>')
        return self._page(f"{t('Payslips')} · {self._month(month)}", body)

    # --- profile ---

    async def profile(self, request: Request) -> Response:
        t = self.t
        error, saved = "", ""
        if request.method == "POST":
            form = await request.form()
            which = str(form.get("form", "") or "")
            fields = {"address": ("street", "city", "postal_code", "country"),
                      "emergency": ("emergency_name", "emergency_relation", "emergency_phone")}.get(which)
            if fields is None:
                raise Refused("Unknown form.")
            values = {f: " ".join(str(form.get(f, "") or "").split()) for f in fields}
            missing = [f for f, v in values.items() if not v]
            if missing:
                error = f"{t('Save')}: {', '.join(missing)} required."
            elif any(len(v) > 120 for v in values.values()):
                error = "At most 120 characters per field."
            elif which == "emergency" and not re.fullmatch(r"\+?[\d ()./-]{6,24}", values["emergency_phone"]):
                error = "Phone: digits, spaces and + ( ) - only."
            else:
                self.db.execute(f"UPDATE profile SET {', '.join(f + ' = ?' for f in fields)} WHERE id = 1", list(values.values()))
                saved = t("Saved.")
        p = self.db.one("SELECT * FROM profile WHERE id = 1")
        me = self.db.one("SELECT e.*, t.name AS team FROM employees e JOIN teams t ON t.id = e.team_id WHERE e.id = ?", (ME,))
        assert p is not None and me is not None
        masked = "•••• " + p["bank_account"][-4:]

        def field(name: str, label: str, auto: str = "") -> str:
            return (f'<label>{t(label)}<input name="{name}" value="{esc(p[name])}" data-field="{name}" maxlength="120" required'
                    f'{f" autocomplete={auto}" if auto else ""}></label>')
        body = (self._error(error) + (f'<p class="ok-box" role="status" data-saved>{saved}</p>' if saved else "") +
                f'<dl class="facts"><dt>{t("Name")}</dt><dd>{esc(me["name"])}</dd><dt>{t("Team")}</dt><dd>{esc(me["team"])}</dd>'
                f'<dt>{t("Email")}</dt><dd>{esc(me["email"])}</dd>'
                f'<dt>{t("Bank account")}</dt><dd data-bank-masked>{esc(p["bank_name"])} · {esc(masked)}</dd></dl>'
                f'<p class="muted">{t("To change your bank account, contact Payroll.")}</p><div class="two">'
                f'<form method="post" action="/profile" class="card line-form" data-form="address"><h2>{t("Address")}</h2>'
                '<input type="hidden" name="form" value="address">'
                + field("street", "Street", "street-address") + field("city", "City") + field("postal_code", "Postal code", "postal-code")
                + field("country", "Country", "country-name") +
                f'<button class="primary" type="submit" data-action="save-address">{t("Save address")}</button></form>'
                f'<form method="post" action="/profile" class="card line-form" data-form="emergency"><h2>{t("Emergency contact")}</h2>'
                '<input type="hidden" name="form" value="emergency">'
                + field("emergency_name", "Name") + field("emergency_relation", "Relationship") + field("emergency_phone", "Phone", "tel") +
                f'<button class="primary" type="submit" data-action="save-emergency">{t("Save contact")}</button></form></div>')
        return self._page(t("My profile"), body, status=400 if error else 200)


def _initials(name: str) -> str:
    parts = name.split()
    return (parts[0][0] + (parts[-1][0] if len(parts) > 1 else "")).upper()


APP = HrApp
