"""Bank: a retail online bank (Meridian Bank) for one customer, Alex Morgan.

Pages: `/` (accounts overview: checking, savings, a credit card, with balances),
`/accounts/{id}` (transaction history with search, date, amount and category filters, a
running balance, and a category per transaction), `/accounts/{id}/statements[/{YYYY-MM}]`,
`/transfer` (a form, then a confirmation page showing the amount and the payee; nothing moves
until it is confirmed), `/payees` and `/payees/new` (IBAN checked by mod-97),
`/scheduled` (create, edit, cancel behind a confirmation), `/cards` (freeze/unfreeze, daily
limit, online payments, report lost behind a confirmation), `/security` (change password
with the current one, 2-step verification), `/messages` (write to support).

Money is integer cents everywhere; dates are the app's clock (`FIXED_NOW`). The rules the
server keeps whatever a page sends: an amount is positive with at most two decimals; a
transfer may not exceed the source's balance, nor (to a payee) the daily limit of payments
to payees; a credit card account cannot send transfers; a frozen or lost card is shown as
such. A refused request gets a page that says why (400), never a change.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule
from cua.tasks.apps.activity import new_value
from cua.tasks.apps.bank import locale
from cua.tasks.apps.bank.seed import CATEGORIES, iban_check_ok, seed_bank
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE profile (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL, email TEXT NOT NULL, password TEXT NOT NULL,
                      two_factor INTEGER NOT NULL DEFAULT 0, password_changed_at TEXT NOT NULL, daily_limit_cents INTEGER NOT NULL);
CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('checking', 'savings', 'credit')),
                       iban TEXT NOT NULL, balance_cents INTEGER NOT NULL, credit_limit_cents INTEGER NOT NULL DEFAULT 0);
CREATE TABLE transactions (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id), posted_at TEXT NOT NULL,
                           description TEXT NOT NULL, category TEXT NOT NULL, amount_cents INTEGER NOT NULL,
                           balance_cents INTEGER NOT NULL, kind TEXT NOT NULL, reference TEXT NOT NULL,
                           transfer_id INTEGER REFERENCES transfers(id));
CREATE INDEX tx_account ON transactions (account_id, posted_at, id);
CREATE TABLE payees (id INTEGER PRIMARY KEY, name TEXT NOT NULL, iban TEXT NOT NULL UNIQUE, bank TEXT NOT NULL DEFAULT '',
                     created_at TEXT NOT NULL);
CREATE TABLE transfers (id INTEGER PRIMARY KEY, from_account_id INTEGER NOT NULL REFERENCES accounts(id),
                        to_account_id INTEGER REFERENCES accounts(id), payee_id INTEGER REFERENCES payees(id),
                        amount_cents INTEGER NOT NULL CHECK (amount_cents > 0), reference TEXT NOT NULL DEFAULT '',
                        status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'cancelled')),
                        created_at TEXT NOT NULL, confirmed_at TEXT, confirmation_no TEXT);
CREATE TABLE scheduled (id INTEGER PRIMARY KEY, from_account_id INTEGER NOT NULL REFERENCES accounts(id),
                        payee_id INTEGER NOT NULL REFERENCES payees(id), amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
                        reference TEXT NOT NULL DEFAULT '', frequency TEXT NOT NULL CHECK (frequency IN ('once', 'weekly', 'monthly')),
                        next_date TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('active', 'cancelled')), created_at TEXT NOT NULL);
CREATE TABLE cards (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id), name TEXT NOT NULL, last4 TEXT NOT NULL,
                    daily_limit_cents INTEGER NOT NULL, expires TEXT NOT NULL, frozen INTEGER NOT NULL DEFAULT 0,
                    online_payments INTEGER NOT NULL DEFAULT 1, status TEXT NOT NULL CHECK (status IN ('active', 'lost')));
CREATE TABLE messages (id INTEGER PRIMARY KEY, subject TEXT NOT NULL, body TEXT NOT NULL, sent_at TEXT NOT NULL,
                       from_bank INTEGER NOT NULL DEFAULT 0);
"""

AMOUNT = re.compile(r"^(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?$")
#: de-DE writes `1.234,56`; a plain `125.50` (as an English instruction writes it) is read too
AMOUNT_DE = re.compile(r"^(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d{1,2})?$|^\d+\.\d{1,2}$")
MONTH = re.compile(r"^\d{4}-\d{2}$")
MAX_CARD_LIMIT = 500000
FREQUENCIES = ("once", "weekly", "monthly")
NAV = [("Accounts", "/"), ("Transfer", "/transfer"), ("Payees", "/payees"), ("Scheduled", "/scheduled"), ("Cards", "/cards"),
       ("Security", "/security"), ("Messages", "/messages")]


class Refused(Exception):
    """Input the bank's rules refuse: shown to the customer with the reason, nothing changes.
    `message` is the English template (`{name}` fields filled from `fields`), so the page
    translates the sentence before filling it; the exception's text is the English one."""

    def __init__(self, message: str, status: int = 400, /, **fields: str) -> None:
        super().__init__(message.format(**fields))
        self.message, self.status, self.fields = message, status, fields


def money(cents: int) -> str:
    """Cents as the bank shows them in en-US: `€1,234.56`, `-€12.00` (`BankApp._money` for the page's locale)."""
    return locale.money(cents, "en-US")


def parse_amount(raw: str, field: str = "Amount", lang: str = "en-US") -> int:
    """A positive amount typed by the customer, in cents (`1,234.5` -> 123450; in de-DE
    `1.234,5`, or `125.50`); Refused otherwise."""
    text = raw.strip().lstrip("€").rstrip("€").strip()
    if lang == "de-DE" and AMOUNT_DE.match(text):
        text = text if "," not in text and text.count(".") == 1 and len(text.rpartition(".")[2]) < 3 \
            else text.replace(".", "").replace(",", ".")
    elif lang == "de-DE" or not AMOUNT.match(text):  # de-DE never reads `12,345` the English way
        raise Refused("{field}: enter an amount such as 125.50 (digits, at most two decimals).", field=field)
    whole, _, frac = text.replace(",", "").partition(".")
    cents = int(whole) * 100 + int((frac + "00")[:2])
    if cents <= 0:
        raise Refused("{field} must be more than €0.00.", field=field)
    return cents


def parse_date(raw: str, field: str) -> str:
    try:
        return dt.date.fromisoformat(raw.strip()).isoformat()
    except ValueError:
        raise Refused("{field}: enter a date as YYYY-MM-DD.", field=field) from None


def normalize_iban(raw: str) -> str:
    return re.sub(r"\s+", "", raw).upper()


class BankApp(WebApp):
    name = "bank"
    title = "Meridian Bank"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
    #: the bank fills these itself: balances and confirmation numbers, never typed by the customer
    assigned = {"transactions": ("balance_cents", "reference", "kind", "transfer_id", "amount_cents", "description", "account_id"),
                "transfers": ("confirmation_no",), "accounts": ("balance_cents",)}
    query_params = {"q": QueryRule(strip=True), "from": QueryRule(strip=True), "to": QueryRule(strip=True),
                    "min": QueryRule(strip=True), "max": QueryRule(strip=True), "category": QueryRule(strip=True)}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_bank(db, rng, self.now())

    def irreversible(self, change: Change) -> str | None:
        """A confirmed transfer has left the account: no later edit unsends it."""
        sets, value = new_value(change, "transfers", "status")
        return "pay" if sets and value == "completed" else None

    def routes(self) -> list[BaseRoute]:
        g = self._guarded
        return [
            Route("/", g(self.overview)),
            Route("/accounts/{aid:int}", g(self.account)),
            Route("/accounts/{aid:int}/statements", g(self.statements)),
            Route("/accounts/{aid:int}/statements/{month}", g(self.statement)),
            Route("/tx/{tid:int}/category", g(self.set_category), methods=["POST"]),
            Route("/transfer", g(self.transfer), methods=["GET", "POST"]),
            Route("/transfer/{tid:int}", g(self.confirm_page)),
            Route("/transfer/{tid:int}/confirm", g(self.confirm), methods=["POST"]),
            Route("/transfer/{tid:int}/cancel", g(self.cancel_transfer), methods=["POST"]),
            Route("/payees", g(self.payees)),
            Route("/payees/new", g(self.new_payee), methods=["GET", "POST"]),
            Route("/scheduled", g(self.scheduled)),
            Route("/scheduled/new", g(self.edit_scheduled), methods=["GET", "POST"]),
            Route("/scheduled/{sid:int}/edit", g(self.edit_scheduled), methods=["GET", "POST"]),
            Route("/scheduled/{sid:int}/cancel", g(self.cancel_scheduled), methods=["GET", "POST"]),
            Route("/cards", g(self.cards)),
            Route("/cards/{cid:int}/freeze", g(self.freeze), methods=["POST"]),
            Route("/cards/{cid:int}/settings", g(self.card_settings), methods=["POST"]),
            Route("/cards/{cid:int}/lost", g(self.report_lost), methods=["GET", "POST"]),
            Route("/security", g(self.security)),
            Route("/security/password", g(self.change_password), methods=["POST"]),
            Route("/security/two-factor", g(self.two_factor), methods=["POST"]),
            Route("/messages", g(self.messages), methods=["GET", "POST"]),
        ]

    # --- furniture ---

    def _guarded(self, handler: Any) -> Any:
        async def run(request: Request) -> Response:
            try:
                result: Response = await handler(request)
                return result
            except Refused as exc:
                return self._page(self.t("Cannot do that"), f'<div class="alert" role="alert" data-error>{esc(self._refusal(exc))}</div>'
                                  f'<p><a href="/" data-action="back">{self.t("Back to your accounts")}</a></p>', status=exc.status)
        return run

    def t(self, text: str) -> str:
        """`text` in the variant's locale: the bank's own catalogue, then the shared one."""
        if self.variant.locale == "de-DE" and text in locale.DE:
            return locale.DE[text]
        return super().t(text)

    def _refusal(self, exc: Refused) -> str:
        """A refusal's sentence in the page's locale (the fields that are UI words -- a form field's label, a
        transfer's state -- translated too; names and amounts are data)."""
        return self.t(exc.message).format(**{k: self.t(v) if k in ("field", "state") else v for k, v in exc.fields.items()})

    def _money(self, cents: int) -> str:
        return locale.money(cents, self.variant.locale)

    def _day(self, iso: str) -> str:
        return locale.day(iso, self.variant.locale)

    def _when(self, stamp: str) -> str:
        return locale.stamp(stamp, self.variant.locale)

    def _amount(self, raw: str, field: str = "Amount") -> int:
        return parse_amount(raw, field, self.variant.locale)

    def _cents_text(self, cents: int) -> str:
        """An amount to prefill an input with, as the locale types it (`125.50` / `125,50`)."""
        text = f"{cents / 100:.2f}"
        return text.replace(".", ",") if self.variant.locale == "de-DE" else text

    def _expiry(self, month: str) -> str:
        """A card's `YYYY-MM` expiry: as stored in en-US, `MM/YYYY` (as printed on the card) in de-DE."""
        return month if self.variant.locale == "en-US" else f"{month[5:7]}/{month[:4]}"

    def _category(self, key: str) -> str:
        return self.t(key.title())

    def _page(self, title: str, body: str, *, status: int = 200) -> HTMLResponse:
        resp = html_page(self, title, f'<div class="page"><h1 class="page-title">{esc(title)}</h1>{body}</div>', nav=NAV)
        resp.status_code = status
        return resp

    def _stamp(self) -> str:
        return self.now().strftime("%Y-%m-%d %H:%M")

    def _account(self, aid: int) -> dict[str, Any]:
        a = self.db.one("SELECT * FROM accounts WHERE id = ?", (aid,))
        if a is None:
            raise Refused("No such account.", 404)
        return a

    def _accounts(self) -> list[dict[str, Any]]:
        return self.db.all("SELECT * FROM accounts ORDER BY id")

    def _amount_cell(self, cents: int) -> str:
        cls = "amt in" if cents > 0 else "amt"
        return f'<td class="{cls}" data-amount-cents="{cents}">{esc(self._money(cents))}</td>'

    def _error(self, error: str) -> str:
        return f'<div class="alert" role="alert" data-error>{esc(error)}</div>' if error else ""

    # --- accounts ---

    async def overview(self, _: Request) -> Response:
        cards = []
        for a in self._accounts():
            extra = (f'<p class="muted">{esc(self.t("Limit {limit} · available {available}").format(limit=self._money(a["credit_limit_cents"]), available=self._money(a["credit_limit_cents"] + a["balance_cents"])))}</p>' if a["kind"] == "credit"
                     else f'<p class="muted iban">{esc(a["iban"])}</p>')
            cards.append(f'<li class="acct" data-account="{a["kind"]}" data-account-id="{a["id"]}">'
                         f'<a href="/accounts/{a["id"]}" class="acct-name">{esc(a["name"])}</a>{extra}'
                         f'<p class="balance" data-balance-cents="{a["balance_cents"]}" aria-label="{esc(self.t("Balance of {name}").format(name=a["name"]))}">'
                         f'{esc(self._money(a["balance_cents"]))}</p></li>')
        recent = self.db.all("SELECT t.*, a.name AS account FROM transactions t JOIN accounts a ON a.id = t.account_id "
                             "ORDER BY t.posted_at DESC, t.id DESC LIMIT 8")
        t_ = self.t
        rows = "".join(f'<tr data-tx-id="{t["id"]}"><td>{esc(self._day(t["posted_at"]))}</td><td>{esc(t["description"])}</td>'
                       f'<td>{esc(t["account"])}</td>{self._amount_cell(t["amount_cents"])}</tr>' for t in recent)
        body = (f'<ul class="accounts" aria-label="{t_("Your accounts")}" data-region="accounts">{"".join(cards)}</ul>'
                f'<div class="quick"><a class="button primary" href="/transfer" data-action="new-transfer">{t_("Make a transfer")}</a>'
                f'<a class="button" href="/payees/new" data-action="add-payee">{t_("Add a payee")}</a></div>'
                f'<h2>{t_("Recent activity")}</h2><table class="tx" data-region="recent"><thead><tr><th scope="col">{t_("Date")}</th>'
                f'<th scope="col">{t_("Description")}</th>'
                f'<th scope="col">{t_("Account")}</th><th scope="col">{t_("Amount")}</th></tr></thead><tbody>{rows}</tbody></table>')
        return self._page(t_("Accounts"), body)

    async def account(self, request: Request) -> Response:
        a = self._account(request.path_params["aid"])
        q = self.query(request)
        where, params = ["t.account_id = ?"], [a["id"]]
        error = ""
        try:
            if q["q"]:
                where.append("t.description LIKE ?")
                params.append(f"%{q['q']}%")
            if q["from"]:
                where.append("substr(t.posted_at, 1, 10) >= ?")
                params.append(parse_date(q["from"], "From"))
            if q["to"]:
                where.append("substr(t.posted_at, 1, 10) <= ?")
                params.append(parse_date(q["to"], "To"))
            if q["min"]:
                where.append("abs(t.amount_cents) >= ?")
                params.append(self._amount(q["min"], "Minimum amount"))
            if q["max"]:
                where.append("abs(t.amount_cents) <= ?")
                params.append(self._amount(q["max"], "Maximum amount"))
            if q["category"]:
                if q["category"] not in CATEGORIES:
                    raise Refused("Choose a category from the list, not {category!r}.", category=q["category"])
                where.append("t.category = ?")
                params.append(q["category"])
        except Refused as exc:
            error, where, params = self._refusal(exc), ["t.account_id = ?"], [a["id"]]
        txs = self.db.all(f"SELECT t.* FROM transactions t WHERE {' AND '.join(where)} ORDER BY t.posted_at DESC, t.id DESC", params)
        opts = "".join(f'<option value="{c}">{esc(self._category(c))}</option>' for c in CATEGORIES)
        t_ = self.t

        def row(t: dict[str, Any]) -> str:
            sel = opts.replace(f'value="{t["category"]}"', f'value="{t["category"]}" selected')
            label = t_("Category of {description} on {day}").format(description=t["description"], day=self._day(t["posted_at"]))
            return (f'<tr data-tx-id="{t["id"]}" data-category="{esc(t["category"])}"><td>{esc(self._day(t["posted_at"]))}</td>'
                    f'<td data-description>{esc(t["description"])}<span class="ref">{esc(t["reference"])}</span></td>'
                    f'<td><form method="post" action="/tx/{t["id"]}/category" class="cat-form"><select name="category" '
                    f'aria-label="{esc(label)}" data-tx-category="{t["id"]}">{sel}</select>'
                    f'<button type="submit" data-action="save-category" aria-label="{esc(t_("Save category of transaction {id}").format(id=t["id"]))}">{t_("Save")}</button>'
                    f'</form></td>{self._amount_cell(t["amount_cents"])}'
                    f'<td class="amt" data-balance-cents="{t["balance_cents"]}">{esc(self._money(t["balance_cents"]))}</td></tr>')
        cat_opts = f'<option value="">{t_("All categories")}</option>' + "".join(
            f'<option value="{c}"{" selected" if q["category"] == c else ""}>{esc(self._category(c))}</option>' for c in CATEGORIES)
        total = sum(t["amount_cents"] for t in txs)
        filters = (f'<form method="get" action="/accounts/{a["id"]}" class="filters" role="search" data-form="filters">'
                   f'<label>{t_("Search")} <input type="search" name="q" value="{esc(q["q"] or "")}" data-filter="q"></label>'
                   f'<label>{t_("From")} <input type="date" name="from" value="{esc(q["from"] or "")}" data-filter="from"></label>'
                   f'<label>{t_("To")} <input type="date" name="to" value="{esc(q["to"] or "")}" data-filter="to"></label>'
                   f'<label>{t_("Min amount")} <input name="min" inputmode="decimal" value="{esc(q["min"] or "")}" data-filter="min"></label>'
                   f'<label>{t_("Max amount")} <input name="max" inputmode="decimal" value="{esc(q["max"] or "")}" data-filter="max"></label>'
                   f'<label>{t_("Category")} <select name="category" data-filter="category">{cat_opts}</select></label>'
                   f'<button type="submit" data-action="apply-filters">{t_("Apply")}</button></form>')
        head = (f'<div class="acct-head"><p class="balance" data-balance-cents="{a["balance_cents"]}">{esc(t_("Balance {amount}").format(amount=self._money(a["balance_cents"])))}</p>'
                f'<a href="/accounts/{a["id"]}/statements" data-action="statements">{t_("Statements")}</a></div>')
        summary = f'<p class="muted" role="status" data-count="{len(txs)}" data-total-cents="{total}">{esc(t_("{count} transactions · net {amount}").format(count=len(txs), amount=self._money(total)))}</p>'
        table = (f'<table class="tx" data-region="transactions"><thead><tr><th scope="col">{t_("Date")}</th><th scope="col">{t_("Description")}</th>'
                 f'<th scope="col">{t_("Category")}</th><th scope="col">{t_("Amount")}</th><th scope="col">{t_("Balance")}</th></tr></thead>'
                 f'<tbody>{"".join(row(t) for t in txs)}</tbody></table>')
        return self._page(a["name"], head + self._error(error) + filters + summary + table, status=400 if error else 200)

    async def set_category(self, request: Request) -> Response:
        t = self.db.one("SELECT * FROM transactions WHERE id = ?", (request.path_params["tid"],))
        if t is None:
            raise Refused("No such transaction.", 404)
        cat = str((await request.form()).get("category", "") or "")
        if cat not in CATEGORIES:
            raise Refused("Choose one of the categories: {categories}.", categories=", ".join(CATEGORIES))
        self.db.execute("UPDATE transactions SET category = ? WHERE id = ?", (cat, t["id"]))
        return RedirectResponse(f"/accounts/{t['account_id']}", status_code=303)

    async def statements(self, request: Request) -> Response:
        a = self._account(request.path_params["aid"])
        months = [r["m"] for r in self.db.all("SELECT DISTINCT substr(posted_at, 1, 7) AS m FROM transactions WHERE account_id = ? "
                                              "ORDER BY m DESC", (a["id"],))]
        items = "".join(f'<li><a href="/accounts/{a["id"]}/statements/{m}" data-statement="{m}">'
                        f'{esc(self.t("Statement {month}").format(month=self._month(m)))}</a></li>' for m in months)
        return self._page(self.t("Statements · {name}").format(name=a["name"]), f'<ul class="statements">{items}</ul>')

    async def statement(self, request: Request) -> Response:
        a = self._account(request.path_params["aid"])
        month = request.path_params["month"]
        if not MONTH.match(month):
            raise Refused("A statement month is written YYYY-MM.")
        txs = self.db.all("SELECT * FROM transactions WHERE account_id = ? AND substr(posted_at, 1, 7) = ? ORDER BY posted_at, id",
                          (a["id"], month))
        if not txs:
            raise Refused("There is no statement for {month}.", 404, month=month)
        opening = txs[0]["balance_cents"] - txs[0]["amount_cents"]
        paid_in = sum(t["amount_cents"] for t in txs if t["amount_cents"] > 0)
        paid_out = -sum(t["amount_cents"] for t in txs if t["amount_cents"] < 0)
        t_, m_ = self.t, self._money
        # en-US shows the stored category key, as it always did; de-DE its German label
        rows = "".join(f'<tr data-tx-id="{t["id"]}" data-category="{esc(t["category"])}"><td>{esc(self._day(t["posted_at"]))}</td>'
                       f'<td>{esc(t["description"])}</td>'
                       f'<td>{esc(t["category"] if self.variant.locale == "en-US" else self._category(t["category"]))}</td>'
                       f'{self._amount_cell(t["amount_cents"])}<td class="amt">{esc(m_(t["balance_cents"]))}</td></tr>' for t in txs)
        body = (f'<dl class="summary" data-statement="{month}"><dt>{t_("Opening balance")}</dt><dd data-opening-cents="{opening}">{esc(m_(opening))}</dd>'
                f'<dt>{t_("Paid in")}</dt><dd data-in-cents="{paid_in}">{esc(m_(paid_in))}</dd>'
                f'<dt>{t_("Paid out")}</dt><dd data-out-cents="{paid_out}">{esc(m_(paid_out))}</dd>'
                f'<dt>{t_("Closing balance")}</dt><dd data-closing-cents="{txs[-1]["balance_cents"]}">{esc(m_(txs[-1]["balance_cents"]))}</dd></dl>'
                f'<table class="tx"><thead><tr><th scope="col">{t_("Date")}</th><th scope="col">{t_("Description")}</th>'
                f'<th scope="col">{t_("Category")}</th><th scope="col">{t_("Amount")}</th><th scope="col">{t_("Balance")}</th></tr></thead>'
                f'<tbody>{rows}</tbody></table>')
        return self._page(t_("Statement {month} · {name}").format(month=self._month(month), name=a["name"]), body)

    def _month(self, month: str) -> str:
        """A `YYYY-MM` statement month: as stored in en-US, `MM.YYYY` in de-DE."""
        return month if self.variant.locale == "en-US" else f"{month[5:7]}.{month[:4]}"

    # --- transfers ---

    def _post(self, account_id: int, amount: int, description: str, transfer_id: int, category: str) -> None:
        bal = self.db.scalar("SELECT balance_cents FROM accounts WHERE id = ?", (account_id,)) + amount
        self.db.execute("UPDATE accounts SET balance_cents = ? WHERE id = ?", (bal, account_id))
        self.db.execute("INSERT INTO transactions (account_id, posted_at, description, category, amount_cents, balance_cents, kind, "
                        "reference, transfer_id) VALUES (?,?,?,?,?,?,?,?,?)",
                        (account_id, self._stamp(), description, category, amount, bal, "transfer", f"TR{transfer_id:06d}", transfer_id))

    def _paid_today(self) -> int:
        return int(self.db.scalar("SELECT COALESCE(SUM(amount_cents), 0) FROM transfers WHERE payee_id IS NOT NULL AND "
                                  "status = 'completed' AND substr(confirmed_at, 1, 10) = ?", (self.now().date().isoformat(),)))

    def _check_transfer(self, src: dict[str, Any], to_account: int | None, payee: int | None, amount: int) -> None:
        if src["kind"] == "credit":
            raise Refused("Transfers cannot be made from a credit card account.")
        if to_account == src["id"]:
            raise Refused("Choose a different account to send the money to.")
        if amount > src["balance_cents"]:
            raise Refused("Insufficient funds: {name} holds {balance}, less than {amount}.", name=src["name"],
                          balance=self._money(src["balance_cents"]), amount=self._money(amount))
        if payee is not None:
            limit = self.db.scalar("SELECT daily_limit_cents FROM profile WHERE id = 1")
            left = limit - self._paid_today()
            if amount > left:
                raise Refused("This payment is over your daily limit for payments to payees: {left} left of {limit} today.",
                              left=self._money(left), limit=self._money(limit))

    async def transfer(self, request: Request) -> Response:
        accounts = self._accounts()
        payees = self.db.all("SELECT * FROM payees ORDER BY name")
        values = {"from": "1", "to": "", "amount": "", "reference": ""}
        error = ""
        if request.method == "POST":
            form = await request.form()
            values = {k: str(form.get(k, "") or "").strip() for k in values}
            try:
                src = next((a for a in accounts if str(a["id"]) == values["from"]), None)
                if src is None:
                    raise Refused("Choose the account to pay from.")
                kind, _, ident = values["to"].partition(":")
                to_account = payee = None
                if kind == "account" and any(str(a["id"]) == ident for a in accounts):
                    to_account = int(ident)
                elif kind == "payee" and any(str(p["id"]) == ident for p in payees):
                    payee = int(ident)
                else:
                    raise Refused("Choose who to pay: one of your accounts or a saved payee.")
                amount = self._amount(values["amount"])
                reference = " ".join(values["reference"].split())
                if len(reference) > 140:
                    raise Refused("A reference can be at most 140 characters long.")
                self._check_transfer(src, to_account, payee, amount)
                tid = self.db.insert("INSERT INTO transfers (from_account_id, to_account_id, payee_id, amount_cents, reference, status, "
                                     "created_at) VALUES (?,?,?,?,?,'pending',?)",
                                     (src["id"], to_account, payee, amount, reference, self._stamp()))
                return RedirectResponse(f"/transfer/{tid}", status_code=303)
            except Refused as exc:
                error = self._refusal(exc)
        limit = self.db.scalar("SELECT daily_limit_cents FROM profile WHERE id = 1")
        src_opts = "".join(f'<option value="{a["id"]}"{" selected" if values["from"] == str(a["id"]) else ""}>'
                           f'{esc(a["name"])} ({esc(self._money(a["balance_cents"]))})</option>' for a in accounts if a["kind"] != "credit")
        own = "".join(f'<option value="account:{a["id"]}"{" selected" if values["to"] == "account:" + str(a["id"]) else ""}>'
                      f'{esc(a["name"])}</option>' for a in accounts)
        theirs = "".join(f'<option value="payee:{p["id"]}"{" selected" if values["to"] == "payee:" + str(p["id"]) else ""}>'
                         f'{esc(p["name"])} ({esc(p["iban"][:4])}…{esc(p["iban"][-4:])})</option>' for p in payees)
        t_ = self.t
        body = (self._error(error) + '<form method="post" action="/transfer" class="card" data-form="transfer">'
                f'<label for="tr-from">{self._pay("From")}</label><select id="tr-from" name="from" data-field="from">{src_opts}</select>'
                f'<label for="tr-to">{self._pay("To")}</label><select id="tr-to" name="to" data-field="to" required>'
                f'<option value="">{t_("Choose…")}</option>'
                f'<optgroup label="{t_("Your accounts")}">{own}</optgroup><optgroup label="{t_("Payees")}">{theirs}</optgroup></select>'
                f'<label for="tr-amount">{t_("Amount (€)")}</label><input id="tr-amount" name="amount" inputmode="decimal" required '
                f'value="{esc(values["amount"])}" data-field="amount"{" aria-invalid=true" if error else ""}>'
                f'<label for="tr-ref">{t_("Reference")}</label><input id="tr-ref" name="reference" maxlength="140" value="{esc(values["reference"])}" data-field="reference">'
                f'<p class="muted">{esc(t_("Payments to payees: daily limit {limit}, {left} left today.").format(limit=self._money(limit), left=self._money(limit - self._paid_today())))}</p>'
                f'<button type="submit" class="primary" data-action="review-transfer">{t_("Review transfer")}</button></form>')
        return self._page(t_("Make a transfer"), body, status=400 if error else 200)

    def _pay(self, english: str) -> str:
        """A transfer's `From` / `To` label (German says `An` for a recipient, `Bis` for a date range's end)."""
        return self.t(f"Pay {english.lower()}") if self.variant.locale != "en-US" else english

    def _transfer(self, tid: int) -> dict[str, Any]:
        t = self.db.one("SELECT * FROM transfers WHERE id = ?", (tid,))
        if t is None:
            raise Refused("No such transfer.", 404)
        return t

    def _recipient(self, t: dict[str, Any]) -> str:
        if t["payee_id"] is not None:
            p = self.db.one("SELECT name, iban FROM payees WHERE id = ?", (t["payee_id"],))
            return f"{p['name']} ({p['iban']})" if p else self.t("a deleted payee")
        return str(self._account(t["to_account_id"])["name"])

    async def confirm_page(self, request: Request) -> Response:
        t = self._transfer(request.path_params["tid"])
        src = self._account(t["from_account_id"])
        t_ = self.t
        facts = (f'<dl class="summary" data-transfer="{t["id"]}" data-status="{t["status"]}"><dt>{self._pay("From")}</dt><dd>{esc(src["name"])}</dd>'
                 f'<dt>{self._pay("To")}</dt><dd data-recipient>{esc(self._recipient(t))}</dd>'
                 f'<dt>{t_("Amount")}</dt><dd data-amount-cents="{t["amount_cents"]}">{esc(self._money(t["amount_cents"]))}</dd>'
                 f'<dt>{t_("Reference")}</dt><dd>{esc(t["reference"]) or "—"}</dd>')
        if t["status"] == "completed":
            body = (f'<div class="notice" role="status" data-done>{t_("Transfer sent. Confirmation number")} '
                    f'<strong data-confirmation>{esc(t["confirmation_no"])}</strong>.</div>{facts}</dl>')
            return self._page(t_("Transfer sent"), body)
        if t["status"] == "cancelled":
            return self._page(t_("Transfer cancelled"), f'<div class="notice" role="status">{t_("This transfer was cancelled.")}</div>{facts}</dl>')
        body = (f'<p>{t_("Check the details. Nothing is sent until you confirm.")}</p>{facts}</dl>'
                f'<div class="row"><form method="post" action="/transfer/{t["id"]}/confirm"><button type="submit" class="primary" '
                f'data-action="confirm-transfer">{esc(t_("Confirm and send {amount}").format(amount=self._money(t["amount_cents"])))}</button></form>'
                f'<form method="post" action="/transfer/{t["id"]}/cancel"><button type="submit" data-action="cancel-transfer">{t_("Cancel")}</button></form></div>')
        return self._page(t_("Confirm transfer"), body)

    async def confirm(self, request: Request) -> Response:
        t = self._transfer(request.path_params["tid"])
        if t["status"] != "pending":
            raise Refused("This transfer is already {state}.", state=t["status"])
        src = self._account(t["from_account_id"])
        self._check_transfer(src, t["to_account_id"], t["payee_id"], t["amount_cents"])  # balances may have moved since
        label = self._recipient(t)
        self._post(src["id"], -t["amount_cents"], f"Transfer to {label.split(' (')[0]}" + (f" · {t['reference']}" if t["reference"] else ""),
                   t["id"], "transfers")
        if t["to_account_id"] is not None:
            self._post(t["to_account_id"], t["amount_cents"], f"Transfer from {src['name']}" + (f" · {t['reference']}" if t["reference"] else ""),
                       t["id"], "transfers")
        self.db.execute("UPDATE transfers SET status = 'completed', confirmed_at = ?, confirmation_no = ? WHERE id = ?",
                        (self._stamp(), f"MB{self.now():%y%m%d}{t['id']:05d}", t["id"]))
        return RedirectResponse(f"/transfer/{t['id']}", status_code=303)

    async def cancel_transfer(self, request: Request) -> Response:
        t = self._transfer(request.path_params["tid"])
        if t["status"] != "pending":
            raise Refused("This transfer is already {state}: it cannot be cancelled.", state=t["status"])
        self.db.execute("UPDATE transfers SET status = 'cancelled' WHERE id = ?", (t["id"],))
        return RedirectResponse(f"/transfer/{t['id']}", status_code=303)

    # --- payees ---

    async def payees(self, _: Request) -> Response:
        rows = "".join(f'<tr data-payee-id="{p["id"]}" data-payee="{esc(p["name"])}"><td>{esc(p["name"])}</td>'
                       f'<td class="iban">{esc(p["iban"])}</td><td>{esc(p["bank"])}</td></tr>'
                       for p in self.db.all("SELECT * FROM payees ORDER BY name"))
        t_ = self.t
        body = (f'<a class="button primary" href="/payees/new" data-action="add-payee">{t_("Add a payee")}</a>'
                f'<table class="tx" data-region="payees"><thead><tr><th scope="col">{t_("Name")}</th><th scope="col">IBAN</th>'
                f'<th scope="col">{t_("Bank")}</th></tr></thead><tbody>{rows}</tbody></table>')
        return self._page(t_("Payees"), body)

    async def new_payee(self, request: Request) -> Response:
        values = {"name": "", "iban": "", "bank": ""}
        error = ""
        if request.method == "POST":
            form = await request.form()
            values = {k: " ".join(str(form.get(k, "") or "").split()) for k in values}
            iban = normalize_iban(values["iban"])
            if not values["name"] or len(values["name"]) > 70:
                error = self.t("Enter the payee's name (at most 70 characters).")
            elif not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{10,30}", iban):
                error = self.t("Enter an IBAN: two letters, two check digits, then the account number (15-34 characters).")
            elif not iban_check_ok(iban):
                error = self.t("That IBAN's check digits do not match: check it for a typing mistake.")
            elif self.db.one("SELECT 1 FROM payees WHERE iban = ?", (iban,)):
                error = self.t("A payee with that IBAN is already saved.")
            else:
                self.db.insert("INSERT INTO payees (name, iban, bank, created_at) VALUES (?,?,?,?)",
                               (values["name"], iban, values["bank"], self._stamp()))
                return RedirectResponse("/payees", status_code=303)
        t_ = self.t
        body = (self._error(error) + '<form method="post" action="/payees/new" class="card" data-form="payee">'
                f'<label for="py-name">{t_("Name")}</label><input id="py-name" name="name" required maxlength="70" value="{esc(values["name"])}" data-field="name">'
                f'<label for="py-iban">IBAN</label><input id="py-iban" name="iban" required value="{esc(values["iban"])}" data-field="iban"'
                f'{" aria-invalid=true" if error else ""}>'
                f'<label for="py-bank">{t_("Bank (optional)")}</label><input id="py-bank" name="bank" maxlength="70" value="{esc(values["bank"])}" data-field="bank">'
                f'<button type="submit" class="primary" data-action="save-payee">{t_("Save payee")}</button></form>')
        return self._page(t_("Add a payee"), body, status=400 if error else 200)

    # --- scheduled payments ---

    async def scheduled(self, _: Request) -> Response:
        rows = self.db.all("SELECT s.*, p.name AS payee FROM scheduled s JOIN payees p ON p.id = s.payee_id ORDER BY s.status, s.next_date")

        t_ = self.t

        def row(s: dict[str, Any]) -> str:
            edit, cancel = (esc(t_(f"{verb} payment to {{name}}").format(name=s["payee"])) for verb in ("Edit", "Cancel"))
            actions = (f'<a href="/scheduled/{s["id"]}/edit" data-action="edit" aria-label="{edit}">{t_("Edit")}</a> '
                       f'<a href="/scheduled/{s["id"]}/cancel" class="danger" data-action="cancel" aria-label="{cancel}">{t_("Cancel")}</a>'
                       if s["status"] == "active" else "")
            return (f'<tr data-scheduled-id="{s["id"]}" data-status="{s["status"]}" data-frequency="{s["frequency"]}"><td>{esc(s["payee"])}</td>'
                    f'{self._amount_cell(-s["amount_cents"])}<td>{esc(t_(s["frequency"]))}</td><td>{esc(self._day(s["next_date"]))}</td>'
                    f'<td>{esc(s["reference"])}</td><td>{esc(t_(s["status"]))}</td><td>{actions}</td></tr>')
        body = (f'<a class="button primary" href="/scheduled/new" data-action="new-scheduled">{t_("Schedule a payment")}</a>'
                f'<table class="tx" data-region="scheduled"><thead><tr><th scope="col">{t_("Payee")}</th><th scope="col">{t_("Amount")}</th>'
                f'<th scope="col">{t_("Repeats")}</th><th scope="col">{t_("Next date")}</th><th scope="col">{t_("Reference")}</th>'
                f'<th scope="col">{t_("Status")}</th><th scope="col">{t_("Actions")}</th></tr></thead>'
                f'<tbody>{"".join(row(s) for s in rows)}</tbody></table>')
        return self._page(t_("Scheduled payments"), body)

    async def edit_scheduled(self, request: Request) -> Response:
        sid = request.path_params.get("sid")
        current = None
        if sid is not None:
            current = self.db.one("SELECT * FROM scheduled WHERE id = ?", (sid,))
            if current is None:
                raise Refused("No such scheduled payment.", 404)
            if current["status"] != "active":
                raise Refused("This scheduled payment was cancelled: it cannot be edited.")
        values = ({"payee": str(current["payee_id"]), "amount": self._cents_text(current["amount_cents"]),
                   "reference": current["reference"], "frequency": current["frequency"], "next_date": current["next_date"]}
                  if current else {"payee": "", "amount": "", "reference": "", "frequency": "monthly", "next_date": ""})
        payees = self.db.all("SELECT * FROM payees ORDER BY name")
        error = ""
        if request.method == "POST":
            form = await request.form()
            values = {k: str(form.get(k, "") or "").strip() for k in values}
            try:
                if not any(str(p["id"]) == values["payee"] for p in payees):
                    raise Refused("Choose a saved payee.")
                amount = self._amount(values["amount"])
                if values["frequency"] not in FREQUENCIES:
                    raise Refused("Choose how often: once, weekly or monthly.")
                day = parse_date(values["next_date"], "First payment date")
                if day <= self.now().date().isoformat():
                    raise Refused("The first payment date must be after today.")
                reference = " ".join(values["reference"].split())[:140]
                if current is None:
                    self.db.insert("INSERT INTO scheduled (from_account_id, payee_id, amount_cents, reference, frequency, next_date, "
                                   "status, created_at) VALUES (1,?,?,?,?,?,'active',?)",
                                   (int(values["payee"]), amount, reference, values["frequency"], day, self._stamp()))
                else:
                    self.db.execute("UPDATE scheduled SET payee_id = ?, amount_cents = ?, reference = ?, frequency = ?, next_date = ? "
                                    "WHERE id = ?", (int(values["payee"]), amount, reference, values["frequency"], day, current["id"]))
                return RedirectResponse("/scheduled", status_code=303)
            except Refused as exc:
                error = self._refusal(exc)
        t_ = self.t
        payee_opts = f'<option value="">{t_("Choose…")}</option>' + "".join(
            f'<option value="{p["id"]}"{" selected" if values["payee"] == str(p["id"]) else ""}>{esc(p["name"])}</option>' for p in payees)
        freq = "".join(f'<label class="check"><input type="radio" name="frequency" value="{f}" data-frequency="{f}"'
                       f'{" checked" if values["frequency"] == f else ""}> {t_(f.title())}</label>' for f in FREQUENCIES)
        action = f"/scheduled/{current['id']}/edit" if current else "/scheduled/new"
        body = (self._error(error) + f'<form method="post" action="{action}" class="card" data-form="scheduled">'
                f'<label for="sc-payee">{t_("Payee")}</label><select id="sc-payee" name="payee" data-field="payee" required>{payee_opts}</select>'
                f'<label for="sc-amount">{t_("Amount (€)")}</label><input id="sc-amount" name="amount" inputmode="decimal" required value="{esc(values["amount"])}" data-field="amount">'
                f'<label for="sc-ref">{t_("Reference")}</label><input id="sc-ref" name="reference" maxlength="140" value="{esc(values["reference"])}" data-field="reference">'
                f'<fieldset><legend>{t_("Repeats")}</legend>{freq}</fieldset>'
                f'<label for="sc-date">{t_("First payment date")}</label><input id="sc-date" type="date" name="next_date" required value="{esc(values["next_date"])}" data-field="next_date">'
                f'<button type="submit" class="primary" data-action="save-scheduled">{t_("Save")}</button></form>')
        return self._page(t_("Edit scheduled payment" if current else "Schedule a payment"), body, status=400 if error else 200)

    async def cancel_scheduled(self, request: Request) -> Response:
        s = self.db.one("SELECT s.*, p.name AS payee FROM scheduled s JOIN payees p ON p.id = s.payee_id WHERE s.id = ?",
                        (request.path_params["sid"],))
        if s is None:
            raise Refused("No such scheduled payment.", 404)
        if s["status"] != "active":
            raise Refused("This scheduled payment is already cancelled.")
        if request.method == "POST":
            self.db.execute("UPDATE scheduled SET status = 'cancelled' WHERE id = ?", (s["id"],))
            return RedirectResponse("/scheduled", status_code=303)
        t_ = self.t
        question = t_("Cancel the {frequency} payment of {amount} to {name}?").format(
            frequency=self._frequency_adjective(s["frequency"]), amount=self._money(s["amount_cents"]), name=s["payee"])
        body = (f'<div class="card" role="alertdialog" aria-labelledby="cx-h"><h2 id="cx-h">{esc(question)}</h2>'
                f'<form method="post" action="/scheduled/{s["id"]}/cancel" class="row">'
                f'<button type="submit" class="danger" data-action="confirm-cancel">{t_("Cancel payment")}</button>'
                f'<a class="button" href="/scheduled" data-action="keep">{t_("Keep it")}</a></form></div>')
        return self._page(t_("Cancel scheduled payment"), body)

    def _frequency_adjective(self, frequency: str) -> str:
        """`monthly` as it stands before a noun (`die monatliche Zahlung`)."""
        word = self.t(frequency)
        return word if self.variant.locale == "en-US" else word + "e"

    # --- cards ---

    def _card(self, cid: int) -> dict[str, Any]:
        c = self.db.one("SELECT * FROM cards WHERE id = ?", (cid,))
        if c is None:
            raise Refused("No such card.", 404)
        return c

    async def cards(self, _: Request) -> Response:
        t_ = self.t

        def card(c: dict[str, Any]) -> str:
            if c["status"] == "lost":
                return (f'<li class="card bankcard lost" data-card-id="{c["id"]}" data-card="{esc(c["name"])}" data-status="lost">'
                        f'<h2>{esc(c["name"])} ···· {esc(c["last4"])}</h2><p role="status">{t_("Reported lost: this card is blocked for good.")}</p></li>')
            frozen = bool(c["frozen"])
            return (f'<li class="card bankcard" data-card-id="{c["id"]}" data-card="{esc(c["name"])}" data-status="active" data-frozen="{int(frozen)}">'
                    f'<h2>{esc(c["name"])} ···· {esc(c["last4"])}</h2><p class="muted">{esc(t_("Expires {date}").format(date=self._expiry(c["expires"])))}</p>'
                    f'<form method="post" action="/cards/{c["id"]}/freeze"><input type="hidden" name="frozen" value="{0 if frozen else 1}">'
                    f'<button type="submit" role="switch" aria-checked="{"true" if frozen else "false"}" data-action="freeze" '
                    f'aria-label="{esc(t_("Freeze {name}").format(name=c["name"]))}">{t_("Frozen: tap to unfreeze" if frozen else "Freeze card")}</button></form>'
                    f'<form method="post" action="/cards/{c["id"]}/settings" class="inline-form">'
                    f'<label for="lim-{c["id"]}">{t_("Daily spending limit (€)")}</label><input id="lim-{c["id"]}" name="daily_limit" inputmode="decimal" '
                    f'value="{self._cents_text(c["daily_limit_cents"])}" data-field="daily_limit">'
                    f'<label class="check"><input type="checkbox" name="online_payments" data-field="online_payments"{" checked" if c["online_payments"] else ""}> '
                    f'{t_("Online payments")}</label><button type="submit" data-action="save-card">{t_("Save")}</button></form>'
                    f'<a class="danger" href="/cards/{c["id"]}/lost" data-action="report-lost">{t_("Report lost or stolen")}</a></li>')
        body = f'<ul class="cards" data-region="cards">{"".join(card(c) for c in self.db.all("SELECT * FROM cards ORDER BY id"))}</ul>'
        return self._page(t_("Cards"), body)

    async def freeze(self, request: Request) -> Response:
        c = self._card(request.path_params["cid"])
        if c["status"] == "lost":
            raise Refused("This card was reported lost: it cannot be unfrozen.")
        frozen = str((await request.form()).get("frozen", "")) == "1"
        self.db.execute("UPDATE cards SET frozen = ? WHERE id = ?", (int(frozen), c["id"]))
        return RedirectResponse("/cards", status_code=303)

    async def card_settings(self, request: Request) -> Response:
        c = self._card(request.path_params["cid"])
        if c["status"] == "lost":
            raise Refused("This card was reported lost: its settings cannot change.")
        form = await request.form()
        limit = self._amount(str(form.get("daily_limit", "") or ""), "Daily spending limit")
        if limit > MAX_CARD_LIMIT:
            raise Refused("The daily spending limit can be at most {limit}.", limit=self._money(MAX_CARD_LIMIT))
        self.db.execute("UPDATE cards SET daily_limit_cents = ?, online_payments = ? WHERE id = ?",
                        (limit, int(form.get("online_payments") == "on"), c["id"]))
        return RedirectResponse("/cards", status_code=303)

    async def report_lost(self, request: Request) -> Response:
        c = self._card(request.path_params["cid"])
        if c["status"] == "lost":
            raise Refused("This card is already reported lost.")
        if request.method == "POST":
            self.db.execute("UPDATE cards SET status = 'lost', frozen = 1 WHERE id = ?", (c["id"],))
            return RedirectResponse("/cards", status_code=303)
        t_ = self.t
        body = (f'<div class="card" role="alertdialog" aria-labelledby="lost-h"><h2 id="lost-h">'
                f'{esc(t_("Report {name} ···· {last4} lost?").format(name=c["name"], last4=c["last4"]))}</h2>'
                f'<p>{t_("The card is blocked for good and cannot be unfrozen; a new one is sent by post.")}</p>'
                f'<form method="post" action="/cards/{c["id"]}/lost" class="row"><button type="submit" class="danger" data-action="confirm-lost">'
                f'{t_("Block card")}</button><a class="button" href="/cards" data-action="keep">{t_("Keep card")}</a></form></div>')
        return self._page(t_("Report a card lost"), body)

    # --- security, messages ---

    async def security(self, request: Request, error: str = "", done: str = "", status: int = 200) -> Response:
        p = self.db.one("SELECT * FROM profile WHERE id = 1") or {}
        on = bool(p["two_factor"])
        t_ = self.t
        note = f'<div class="notice" role="status">{esc(done)}</div>' if done else ""
        changed = t_("Last changed {stamp}. At least 10 characters, with a letter and a digit.").format(
            stamp=self._when(p["password_changed_at"]))
        body = (note + self._error(error) + '<form method="post" action="/security/password" class="card" data-form="password">'
                f'<h2>{t_("Change password")}</h2><label for="pw-cur">{t_("Current password")}</label>'
                '<input id="pw-cur" type="password" name="current" required data-field="current">'
                f'<label for="pw-new">{t_("New password")}</label><input id="pw-new" type="password" name="new" required minlength="10" data-field="new">'
                f'<label for="pw-again">{t_("Repeat new password")}</label><input id="pw-again" type="password" name="again" required data-field="again">'
                f'<p class="muted">{esc(changed)}</p>'
                f'<button type="submit" class="primary" data-action="change-password">{t_("Change password")}</button></form>'
                f'<form method="post" action="/security/two-factor" class="card" data-form="two-factor"><h2>{t_("2-step verification")}</h2>'
                f'<input type="hidden" name="enabled" value="{0 if on else 1}"><p data-two-factor="{int(on)}">'
                f'{t_("On: a code is sent to your phone at each sign-in." if on else "Off.")}</p>'
                f'<button type="submit" role="switch" aria-checked="{"true" if on else "false"}" data-action="two-factor">'
                f'{t_("Turn off 2-step verification" if on else "Turn on 2-step verification")}</button></form>')
        return self._page(t_("Security"), body, status=status)

    async def change_password(self, request: Request) -> Response:
        form = await request.form()
        cur, new, again = (str(form.get(k, "") or "") for k in ("current", "new", "again"))
        p = self.db.one("SELECT password FROM profile WHERE id = 1") or {}
        error = ""
        if cur != p["password"]:
            error = self.t("The current password is not right.")
        elif len(new) < 10 or not re.search(r"[A-Za-z]", new) or not re.search(r"\d", new):
            error = self.t("The new password needs at least 10 characters, with a letter and a digit.")
        elif new != again:
            error = self.t("The two new passwords differ.")
        elif new == cur:
            error = self.t("The new password must differ from the current one.")
        if error:
            return await self.security(request, error=error, status=400)
        self.db.execute("UPDATE profile SET password = ?, password_changed_at = ? WHERE id = 1", (new, self._stamp()))
        return await self.security(request, done=self.t("Your password was changed."))

    async def two_factor(self, request: Request) -> Response:
        on = str((await request.form()).get("enabled", "")) == "1"
        self.db.execute("UPDATE profile SET two_factor = ? WHERE id = 1", (int(on),))
        return RedirectResponse("/security", status_code=303)

    async def messages(self, request: Request) -> Response:
        error = ""
        if request.method == "POST":
            form = await request.form()
            subject = " ".join(str(form.get("subject", "") or "").split())
            text = str(form.get("body", "") or "").strip()
            if not subject or not text:
                error = self.t("A message needs a subject and some text.")
            elif len(subject) > 120 or len(text) > 4000:
                error = self.t("A subject is at most 120 characters, a message at most 4,000.")
            else:
                self.db.insert("INSERT INTO messages (subject, body, sent_at, from_bank) VALUES (?,?,?,0)", (subject, text, self._stamp()))
                return RedirectResponse("/messages", status_code=303)
        t_ = self.t
        rows = "".join(f'<li class="card msg{" mine" if not m["from_bank"] else ""}" data-message-id="{m["id"]}">'
                       f'<h2>{esc(m["subject"])}</h2><p class="muted">{"Meridian Bank" if m["from_bank"] else t_("You")} · '
                       f'{esc(self._when(m["sent_at"]))}</p>'
                       f'<p>{esc(m["body"])}</p></li>' for m in self.db.all("SELECT * FROM messages ORDER BY sent_at DESC, id DESC"))
        body = (self._error(error) + f'<form method="post" action="/messages" class="card" data-form="message"><h2>{t_("Write to support")}</h2>'
                f'<label for="m-subj">{t_("Subject")}</label><input id="m-subj" name="subject" required maxlength="120" data-field="subject">'
                f'<label for="m-body">{t_("Message")}</label><textarea id="m-body" name="body" rows="4" required maxlength="4000" data-field="body"></textarea>'
                f'<button type="submit" class="primary" data-action="send-message">{t_("Send")}</button></form><ul class="msgs">{rows}</ul>')
        return self._page(t_("Messages"), body, status=400 if error else 200)


APP = BankApp
