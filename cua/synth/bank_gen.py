"""Templates for the bank app (tasks/apps/bank), described for the generator core.

Operations: move money to savings; pay a saved payee with a reference; add a payee (IBAN);
schedule a payment; change a scheduled payment's amount (and its date, a chain of two edits);
cancel one behind its confirmation; recategorise a transaction; recategorise every payment to a
merchant in a month (bulk with a filter); freeze a card, change its daily limit, switch off its
online payments (chains of two and three on one card); report a card lost; count a merchant's
payments in a month; the largest payment to a merchant; which of two merchants cost more in a
month (compare); a category's total in a month; chains that end with a question (a transfer,
then the new savings balance; four parts, then the checking balance).

Judges read exact integer cents. The app never deletes a transfer (a reviewed one stays
`pending`, a cancelled one `cancelled`), so the `transfers` table is the history: "exactly one
transfer" also fails a payment made and cancelled, or sent twice. A task that names no
reference is judged with an empty one (judge QA's collateral probe writes one).

Scopes filter the transactions a template draws (an account, big or small amounts); an
operation that draws no transaction reads the amount scopes as the size of the amount it
moves and has no template in an account's scope. Every selector is the hand-written bank
suite's (`data-action`, `data-field`, `data-filter`, `data-*-id`, `data-nav`, `data-frequency`):
the app has de-DE and three layouts.
"""

from __future__ import annotations

from typing import Any

from cua.synth.schema import AppSchema, Description, Operation

__all__ = ["DESCRIPTION", "GENERATOR_VERSION", "SCHEMA"]

GENERATOR_VERSION = 3
# 2: judge QA's findings at --count 20 (admitted 16): a second filter on the open account page (version 1 clicked
# the overview's link there), the new payee's id typed as a number in its scheduled payment; an oracle that ends
# with a save awaits the page that shows it saved (an oracle ended before its POST landed in hr)
# 3: --count 20 at version 2 admitted 19: the bulk recategorisation's oracle ran out of 40 steps

_LARGE, _SMALL = "AND t.amount_cents <= -5000", "AND t.amount_cents > -2000"
SCOPES: tuple[tuple[str, str], ...] = (
    ("any", ""),
    ("checking", "AND t.account_id = 1"),
    ("card", "AND t.account_id = 3"),
    ("large", _LARGE),
    ("small", _SMALL),
)
#: an amount moved, by scope (None: the scope names an account, which says nothing of an amount)
_AMOUNTS: dict[str, str | None] = {"": "", _LARGE: "WHERE column1 >= 30000", _SMALL: "WHERE column1 < 10000",
                                   "AND t.account_id = 1": None, "AND t.account_id = 3": None}
_AMOUNT_VALUES = (12550, 30000, 7525, 48090, 21999, 65000, 4000, 8815, 35560)

Step = dict[str, Any]


def _eur(col: str) -> str:
    """SQL: integer cents `col` as `1234.56`."""
    return f"printf('%d.%02d', ({col}) / 100, ({col}) % 100)"


def _amount(scope: str, name: str = "amt") -> dict[str, Any] | None:
    where = _AMOUNTS.get(scope)
    if where is None:
        return None
    rows = ", ".join(f"({v})" for v in _AMOUNT_VALUES)
    return {name: {"type": "rows", "sql": f"SELECT column1 AS cents, {_eur('column1')} AS text, "
                                          f"{_eur('column1 + 1000')} AS wrong FROM (VALUES {rows}) {where}"}}


def _moving(build: Any) -> Operation:
    """An operation that moves an amount: in the scopes that size it, none in an account's."""
    def op(scope: str) -> dict[str, Any] | None:
        amt = _amount(scope)
        return None if amt is None else build(amt)
    return op


_TRANSFERS = "SELECT from_account_id, to_account_id, payee_id, amount_cents, status, reference FROM transfers"
_POSTINGS = ("SELECT account_id, amount_cents, category FROM transactions WHERE transfer_id IS NOT NULL "
             "ORDER BY account_id, id")
_OWN_CHANGES = ["transfers[id>0]", "accounts[id=1].balance_cents", "accounts[id=2].balance_cents",
                "transactions[transfer_id>0]"]
_PAY_CHANGES = ["transfers[id>0]", "accounts[id=1].balance_cents", "transactions[transfer_id>0]"]
_PAYEE = {"type": "rows", "sql": "SELECT id, name FROM payees ORDER BY id"}
_OTHER_PAYEE = {"type": "rows", "sql": "SELECT id, name FROM payees WHERE id != ? ORDER BY id", "params": ["{p.id}"]}
_REF = {"type": "string", "values": ["Invoice 2026-031", "Dinner split", "Deposit flat 4B", "Birthday gift",
                                     "Concert tickets"]}
_ON_TRANSFER = {"check": "the transfer pages are open", "get": {"kind": "url", "part": "path"},
                "expect": {"op": "regex", "pattern": "^/transfer"}}
#: new payees with valid IBANs (mod-97), typed as printed and stored compact
_NEW_PAYEES = (("Camille Laurent", "FR14 2004 1010 0505 0001 3M02 606"),
               ("Matteo Ricci", "IT60 X054 2811 1010 0000 0123 456"),
               ("Emma Schneider", "DE89 3704 0044 0532 0130 00"),
               ("Lucía Fernández", "ES91 2100 0418 4502 0005 1332"),
               ("Thomas Becker", "GB82 WEST 1234 5698 7654 32"),
               ("Sanne Visser", "NL91 ABNA 0417 1643 00"))
_NEW_SQL = ("SELECT column1 AS name, column2 AS iban, replace(column2, ' ', '') AS compact, column3 AS k FROM (VALUES "
            + ", ".join(f"('{n}', '{i}', {k})" for k, (n, i) in enumerate(_NEW_PAYEES)) + ")")
_DAYS = ("2026-03-15", "2026-04-01", "2026-03-28", "2026-04-10", "2026-05-05")


def _sent(what: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"check": what, "get": {"kind": "sql", "query": _TRANSFERS},
            "expect": {"op": "table", "rows": rows, "normalize": {"reference": "text"}}}


def _to_savings(amount: str) -> list[Step]:
    return [{"click": "a[data-nav=\"/transfer\"]"}, {"select": {"selector": "select[data-field=from]", "option": "1"}},
            {"select": {"selector": "select[data-field=to]", "option": "account:2"}},
            {"fill": {"selector": "input[data-field=amount]", "text": amount}},
            {"click": "[data-action=review-transfer]"}, {"click": "[data-action=confirm-transfer]"},
            {"wait_for": "[data-confirmation]"}]


def _pay(payee: str, amount: str, ref: str | None) -> list[Step]:
    steps: list[Step] = [{"click": "a[data-nav=\"/transfer\"]"},
                         {"select": {"selector": "select[data-field=from]", "option": "1"}},
                         {"select": {"selector": "select[data-field=to]", "option": f"payee:{payee}"}},
                         {"fill": {"selector": "input[data-field=amount]", "text": amount}}]
    if ref is not None:
        steps.append({"fill": {"selector": "input[data-field=reference]", "text": ref}})
    return [*steps, {"click": "[data-action=review-transfer]"}, {"click": "[data-action=confirm-transfer]"},
            {"wait_for": "[data-confirmation]"}]


def _paid_from_checking() -> list[dict[str, Any]]:
    """A payment to a payee: one posting out of checking under transfers, and the balance it leaves."""
    return [{"check": "one posting out of checking, filed under transfers", "get": {"kind": "sql", "query": _POSTINGS},
             "expect": {"op": "table", "rows": [{"account_id": 1, "amount_cents": "{bal.neg}", "category": "transfers"}]}},
            {"check": "the checking balance fell by exactly that amount",
             "get": {"kind": "sql", "query": "SELECT balance_cents FROM accounts WHERE id = 1", "scalar": True},
             "expect": {"op": "equals", "value": "{bal.checking}"}}]


def _own_checks(cents: str, neg: str, checking: str, savings: str) -> list[dict[str, Any]]:
    return [_sent("exactly one transfer, checking to savings, of exactly that amount, and it was sent",
                  [{"from_account_id": 1, "to_account_id": 2, "payee_id": None, "amount_cents": cents,
                    "status": "completed", "reference": ""}]),
            {"check": "two postings, out of checking and into savings, filed under transfers",
             "get": {"kind": "sql", "query": _POSTINGS},
             "expect": {"op": "table", "rows": [{"account_id": 1, "amount_cents": neg, "category": "transfers"},
                                                {"account_id": 2, "amount_cents": cents, "category": "transfers"}]}},
            {"check": "both balances moved by exactly that amount",
             "get": {"kind": "sql", "query": "SELECT id, balance_cents FROM accounts WHERE id IN (1, 2) ORDER BY id"},
             "expect": {"op": "table", "rows": [{"id": 1, "balance_cents": checking}, {"id": 2, "balance_cents": savings}]}}]


def _reviewed(cents: str, to: str) -> dict[str, Any]:
    return {"check": "a transfer of the amount is reviewed",
            "get": {"kind": "sql", "query": f"SELECT COUNT(*) FROM transfers WHERE amount_cents = ? AND {to}",
                    "params": [cents], "scalar": True},
            "expect": {"op": "equals", "value": 1}}


_BAL = ("SELECT c - x AS checking, v + x AS savings, 0 - x AS neg, " + _eur("v + x") + " AS savings_text, "
        + _eur("v") + " AS savings_before FROM (SELECT CAST(? AS INTEGER) AS x, (SELECT balance_cents FROM accounts "
        "WHERE id = 1) AS c, (SELECT balance_cents FROM accounts WHERE id = 2) AS v)")


def _bal(amount: str = "amt") -> dict[str, Any]:
    c = "{" + amount + ".cents}"
    return {"type": "rows", "sql": _BAL, "params": [c]}


def transfer_savings(amt: dict[str, Any]) -> dict[str, Any]:
    """Move an amount from checking to savings; the near miss moves ten euros more."""
    return {
        "phrasings": ["Move €{amt.text} from my Everyday Checking account to my Rainy Day Savings account.",
                      "Transfer €{amt.text} into Rainy Day Savings, out of Everyday Checking.",
                      "Put €{amt.text} aside: send it from checking (Everyday Checking) to my savings account."],
        "params": {**amt, "bal": _bal()},
        "judge": {"subgoals": [_ON_TRANSFER, _reviewed("{amt.cents}", "to_account_id = 2")],
                  "checks": _own_checks("{amt.cents}", "{bal.neg}", "{bal.checking}", "{bal.savings}"),
                  "expected_changes": _OWN_CHANGES},
        "oracle": _to_savings("{amt.text}"),
        "near_miss": _to_savings("{amt.wrong}"),
        "max_steps": 15,
        "tags": {"skills": ["form", "select", "confirm"], "tier": 1},
    }


def transfer_then_balance(amt: dict[str, Any]) -> dict[str, Any]:
    """A chain that ends with a question: move an amount to savings, then the savings balance it leaves; the
    near miss moves it and answers the balance before."""
    return {
        "phrasings": ["Move €{amt.text} from Everyday Checking to Rainy Day Savings, then tell me the savings "
                      "balance. Answer with the amount.",
                      "Transfer €{amt.text} to my savings account (from checking). What is Rainy Day Savings' "
                      "balance afterwards? Reply with the amount only.",
                      "Send €{amt.text} from my checking to my savings and report the new balance of the savings "
                      "account."],
        "params": {**amt, "bal": _bal()},
        "judge": {"subgoals": [_ON_TRANSFER, _reviewed("{amt.cents}", "to_account_id = 2")],
                  "checks": [*_own_checks("{amt.cents}", "{bal.neg}", "{bal.checking}", "{bal.savings}"),
                             {"check": "the answer is the savings balance after the transfer", "get": {"kind": "answer"},
                              "expect": {"op": "money", "value": "{bal.savings_text}", "currency": "EUR"}}],
                  "expected_changes": _OWN_CHANGES},
        "oracle": [*_to_savings("{amt.text}"), {"done": {"answer": "€{bal.savings_text}"}}],
        "near_miss": [*_to_savings("{amt.text}"), {"done": {"answer": "€{bal.savings_before}"}}],
        "max_steps": 20,
        "tags": {"skills": ["form", "select", "confirm", "read", "answer", "multi_step"], "tier": 3},
    }


def pay_payee(amt: dict[str, Any]) -> dict[str, Any]:
    """Pay a saved payee with a reference; the near miss pays another payee."""
    return {
        "phrasings": ['Pay {p.name} €{amt.text} from my Everyday Checking account, with the reference "{ref}".',
                      'Send €{amt.text} to {p.name} (a saved payee) from checking; reference: "{ref}".',
                      'I owe {p.name} €{amt.text}. Pay it from Everyday Checking and put "{ref}" as the reference.'],
        "params": {**amt, "p": _PAYEE, "other": _OTHER_PAYEE, "ref": _REF, "bal": _bal()},
        "judge": {"subgoals": [_ON_TRANSFER, _reviewed("{amt.cents}", "payee_id IS NOT NULL")],
                  "checks": [_sent("exactly one transfer, to that payee only, of that amount and reference, sent",
                                   [{"from_account_id": 1, "to_account_id": None, "payee_id": "{p.id}",
                                     "amount_cents": "{amt.cents}", "status": "completed", "reference": "{ref}"}]),
                             *_paid_from_checking()],
                  "expected_changes": _PAY_CHANGES},
        "oracle": _pay("{p.id}", "{amt.text}", "{ref}"),
        "near_miss": _pay("{other.id}", "{amt.text}", "{ref}"),
        "max_steps": 30,
        "tags": {"skills": ["form", "select", "confirm", "safety"], "tier": 2},
    }


def _add_payee(name: str, iban: str) -> list[Step]:
    return [{"click": "a[data-nav=\"/payees\"]"}, {"click": "[data-action=add-payee]"},
            {"fill": {"selector": "input[data-field=name]", "text": name}},
            {"fill": {"selector": "input[data-field=iban]", "text": iban}}, {"click": "[data-action=save-payee]"},
            {"wait_for": "[data-region=payees]"}]


def _new_payee_check() -> dict[str, Any]:
    return {"check": "one new payee, with that name and IBAN (and no bank name the task did not give)",
            "get": {"kind": "sql", "query": "SELECT name, iban, bank FROM payees WHERE id > 8"},
            "expect": {"op": "table", "rows": [{"name": "{n.name}", "iban": "{n.compact}", "bank": ""}],
                       "normalize": {"name": "text"}}}


_ON_PAYEES = {"check": "the payees are open", "get": {"kind": "url", "part": "path"},
              "expect": {"op": "regex", "pattern": "^/payees"}}


def add_payee(scope: str) -> dict[str, Any] | None:
    """Add a payee by name and IBAN; the near miss saves another IBAN under the name."""
    if scope:
        return None
    return {
        "phrasings": ["Add {n.name} as a new payee, IBAN {n.iban}.",
                      "Save a payee: {n.name}, whose IBAN is {n.iban}. Leave the bank name empty.",
                      "Please set up {n.name} (IBAN {n.iban}) as a payee so I can pay them later."],
        "params": {"n": {"type": "rows", "sql": _NEW_SQL},
                   "o": {"type": "rows", "sql": _NEW_SQL.replace("SELECT ", "SELECT * FROM (SELECT ", 1)
                         + ") WHERE k != ?", "params": ["{n.k}"]}},
        "judge": {"subgoals": [_ON_PAYEES], "checks": [_new_payee_check()], "expected_changes": ["payees[id>8]"]},
        "oracle": _add_payee("{n.name}", "{n.iban}"),
        "near_miss": _add_payee("{n.name}", "{o.iban}"),
        "max_steps": 12,
        "tags": {"skills": ["form", "navigate"], "tier": 2},
    }


def add_payee_then_pay(amt: dict[str, Any]) -> dict[str, Any]:
    """A chain: add a payee, then pay them; the near miss adds them and never pays."""
    return {
        "phrasings": ['Add {n.name} as a new payee (IBAN {n.iban}), then send them €{amt.text} from my Everyday '
                      'Checking account with the reference "{ref}".',
                      'Two steps: save {n.name}, IBAN {n.iban}, as a payee; then pay them €{amt.text} from checking, '
                      'reference "{ref}".',
                      'Pay €{amt.text} to {n.name} (reference "{ref}") from Everyday Checking. They are not a payee '
                      "yet: add them first, IBAN {n.iban}."],
        "params": {**amt, "n": {"type": "rows", "sql": _NEW_SQL}, "ref": _REF, "bal": _bal()},
        "judge": {"subgoals": [_ON_PAYEES, _ON_TRANSFER],
                  "checks": [_new_payee_check(),
                             _sent("exactly one transfer, to the new payee, of that amount and reference, sent",
                                   [{"from_account_id": 1, "to_account_id": None, "payee_id": 9,
                                     "amount_cents": "{amt.cents}", "status": "completed", "reference": "{ref}"}]),
                             *_paid_from_checking()],
                  "expected_changes": ["payees[id>8]", *_PAY_CHANGES]},
        "oracle": [*_add_payee("{n.name}", "{n.iban}"), *_pay("9", "{amt.text}", "{ref}")],
        "near_miss": _add_payee("{n.name}", "{n.iban}"),
        "max_steps": 40,
        "tags": {"skills": ["form", "select", "confirm", "multi_step"], "tier": 3},
    }


def _schedule(payee: str, amount: str, ref: str, freq: str, day: str) -> list[Step]:
    return [{"click": "a[data-nav=\"/scheduled\"]"}, {"click": "[data-action=new-scheduled]"},
            {"select": {"selector": "select[data-field=payee]", "option": payee}},
            {"fill": {"selector": "input[data-field=amount]", "text": amount}},
            {"fill": {"selector": "input[data-field=reference]", "text": ref}},
            {"click": f"input[data-frequency={freq}]"},
            {"fill": {"selector": "input[data-field=next_date]", "text": day}}, {"click": "[data-action=save-scheduled]"},
            {"wait_for": "[data-region=scheduled]"}]


_ON_SCHEDULED = {"check": "the scheduled payments are open", "get": {"kind": "url", "part": "path"},
                 "expect": {"op": "regex", "pattern": "^/scheduled"}}
_FREQ = {"type": "rows", "sql": "SELECT column1 AS f, column2 AS wrong FROM (VALUES ('monthly', 'weekly'), "
                                "('weekly', 'monthly'), ('once', 'monthly'))"}
_SCHED_REF = {"type": "string", "values": ["Piano lessons", "Allotment rent", "Savings club", "Parking space"]}


def _scheduled_row(payee: str | int, amount: str, freq: str) -> dict[str, Any]:
    return {"check": "one new scheduled payment with exactly those details, active",
            "get": {"kind": "sql", "query": "SELECT from_account_id, payee_id, amount_cents, reference, frequency, "
                                            "next_date, status FROM scheduled WHERE id > 3"},
            "expect": {"op": "table", "normalize": {"reference": "text"},
                       "rows": [{"from_account_id": 1, "payee_id": payee, "amount_cents": amount, "reference": "{ref}",
                                 "frequency": freq, "next_date": "{day}", "status": "active"}]}}


def schedule_new(amt: dict[str, Any]) -> dict[str, Any]:
    """Create a scheduled payment (once, weekly or monthly); the near miss picks another frequency."""
    return {
        "phrasings": ['Set up a {fr.f} scheduled payment of €{amt.text} to {p.name} with the reference "{ref}", the '
                      "first one on {day}.",
                      'Schedule €{amt.text} to {p.name}, {fr.f}, starting {day}; reference "{ref}".',
                      'From {day} on, pay {p.name} €{amt.text} ({fr.f}) automatically, with "{ref}" as the '
                      "reference."],
        "params": {**amt, "p": _PAYEE, "ref": _SCHED_REF, "day": {"type": "string", "values": list(_DAYS)},
                   "fr": _FREQ},
        "judge": {"subgoals": [_ON_SCHEDULED],
                  "checks": [_scheduled_row("{p.id}", "{amt.cents}", "{fr.f}")], "expected_changes": ["scheduled[id>3]"]},
        "oracle": _schedule("{p.id}", "{amt.text}", "{ref}", "{fr.f}", "{day}"),
        "near_miss": _schedule("{p.id}", "{amt.text}", "{ref}", "{fr.wrong}", "{day}"),
        "max_steps": 35,
        "tags": {"skills": ["form", "select", "radio", "date"], "tier": 3},
    }


def add_pay_schedule(amt: dict[str, Any]) -> dict[str, Any]:
    """A chain of three: add a payee, pay them once, then schedule a monthly payment to them; the near miss
    stops before the schedule."""
    return {
        "phrasings": ['Add {n.name} as a payee (IBAN {n.iban}), pay them €{amt.text} now from Everyday Checking with '
                      'the reference "{ref}", and set up a monthly payment of the same amount to them, reference '
                      '"{ref}", first on {day}.',
                      'New payee {n.name}, IBAN {n.iban}: save them, send €{amt.text} today (reference "{ref}"), then '
                      'schedule €{amt.text} monthly from {day}, also with reference "{ref}".',
                      'Three things: 1. add payee {n.name} ({n.iban}); 2. pay them €{amt.text} from checking, '
                      'reference "{ref}"; 3. a monthly payment of €{amt.text} to them from {day}, reference "{ref}".'],
        "params": {**amt, "n": {"type": "rows", "sql": _NEW_SQL}, "ref": _REF, "bal": _bal(),
                   "day": {"type": "string", "values": list(_DAYS)}},
        "judge": {"subgoals": [_ON_PAYEES, _ON_TRANSFER, _ON_SCHEDULED],
                  "checks": [_new_payee_check(),
                             _sent("exactly one transfer, to the new payee, of that amount and reference, sent",
                                   [{"from_account_id": 1, "to_account_id": None, "payee_id": 9,
                                     "amount_cents": "{amt.cents}", "status": "completed", "reference": "{ref}"}]),
                             *_paid_from_checking(),
                             _scheduled_row(9, "{amt.cents}", "monthly")],  # version 1 wrote "9": no id equals it
                  "expected_changes": ["payees[id>8]", *_PAY_CHANGES, "scheduled[id>3]"]},
        "oracle": [*_add_payee("{n.name}", "{n.iban}"), *_pay("9", "{amt.text}", "{ref}"),
                   *_schedule("9", "{amt.text}", "{ref}", "monthly", "{day}")],
        "near_miss": [*_add_payee("{n.name}", "{n.iban}"), *_pay("9", "{amt.text}", "{ref}")],
        "max_steps": 60,
        "tags": {"skills": ["form", "select", "confirm", "radio", "date", "multi_step"], "tier": 4},
    }


_ACTIVE = {"type": "rows", "sql": "SELECT s.id, s.frequency, p.name AS payee, s.payee_id, s.amount_cents, s.reference, "
                                  "s.next_date FROM scheduled s JOIN payees p ON p.id = s.payee_id "
                                  "WHERE s.status = 'active' ORDER BY s.id"}


def _sched_is(amount: str, day: str) -> dict[str, Any]:
    return {"check": "the payment has the new values and keeps the rest, still active",
            "get": {"kind": "sql", "query": "SELECT payee_id, amount_cents, reference, frequency, next_date, status "
                                            "FROM scheduled WHERE id = ?", "params": ["{s.id}"]},
            "expect": {"op": "table", "rows": [{"payee_id": "{s.payee_id}", "amount_cents": amount,
                                                "reference": "{s.reference}", "frequency": "{s.frequency}",
                                                "next_date": day, "status": "active"}]}}


def _edit_sched(amount: str, day: str | None) -> list[Step]:
    steps: list[Step] = [{"click": "a[data-nav=\"/scheduled\"]"},
                         {"click": '[data-scheduled-id="{s.id}"] [data-action=edit]'},
                         {"fill": {"selector": "input[data-field=amount]", "text": amount}}]
    if day is not None:
        steps.append({"fill": {"selector": "input[data-field=next_date]", "text": day}})
    return [*steps, {"click": "[data-action=save-scheduled]"}, {"wait_for": '[data-scheduled-id="{s.id}"]'}]


def edit_scheduled(amt: dict[str, Any]) -> dict[str, Any]:
    """Change a scheduled payment's amount; the near miss sets ten euros more."""
    return {
        "phrasings": ["Change the amount of my {s.frequency} scheduled payment to {s.payee} to €{amt.text}; keep "
                      "everything else about it.",
                      "My {s.frequency} payment to {s.payee} should be €{amt.text} from now on. Update it.",
                      "Edit the scheduled payment to {s.payee} ({s.frequency}): the amount becomes €{amt.text}."],
        "params": {**amt, "s": _ACTIVE},
        "judge": {"subgoals": [_ON_SCHEDULED], "checks": [_sched_is("{amt.cents}", "{s.next_date}")],
                  "expected_changes": ["scheduled[id={s.id}].amount_cents"]},
        "oracle": _edit_sched("{amt.text}", None),
        "near_miss": _edit_sched("{amt.wrong}", None),
        "max_steps": 12,
        "tags": {"skills": ["form", "edit"], "tier": 2},
    }


def edit_scheduled_amount_date(amt: dict[str, Any]) -> dict[str, Any]:
    """A chain of two edits in one save: a scheduled payment's amount and next date; the near miss changes
    the amount only."""
    return {
        "phrasings": ["For my {s.frequency} scheduled payment to {s.payee}, set the amount to €{amt.text} and the "
                      "next payment date to {d.day}.",
                      "Move the next {s.frequency} payment to {s.payee} to {d.day} and make it €{amt.text}.",
                      "Update the scheduled payment to {s.payee} ({s.frequency}): €{amt.text}, next on {d.day}."],
        "params": {**amt, "s": _ACTIVE,
                   "d": {"type": "rows", "sql": "SELECT column1 AS day FROM (VALUES " + ", ".join(
                       f"('{d}')" for d in _DAYS) + ") WHERE column1 != ?", "params": ["{s.next_date}"]}},
        "judge": {"subgoals": [_ON_SCHEDULED], "checks": [_sched_is("{amt.cents}", "{d.day}")],
                  "expected_changes": ["scheduled[id={s.id}].amount_cents", "scheduled[id={s.id}].next_date"]},
        "oracle": _edit_sched("{amt.text}", "{d.day}"),
        "near_miss": _edit_sched("{amt.text}", None),
        "max_steps": 15,
        "tags": {"skills": ["form", "edit", "date", "multi_step"], "tier": 3},
    }


def cancel_scheduled(scope: str) -> dict[str, Any] | None:
    """Cancel one scheduled payment through its confirmation; the near miss keeps it at the confirmation."""
    if scope:
        return None
    start = [{"click": "a[data-nav=\"/scheduled\"]"}, {"click": '[data-scheduled-id="{s.id}"] [data-action=cancel]'}]
    return {
        "phrasings": ["Cancel my {s.frequency} scheduled payment to {s.payee}. Leave my other scheduled payments as "
                      "they are.",
                      "Stop the {s.frequency} payment to {s.payee} for good; nothing else.",
                      "I no longer want to pay {s.payee} every so often: cancel that {s.frequency} scheduled payment."],
        "params": {"s": _ACTIVE},
        "judge": {"subgoals": [_ON_SCHEDULED],
                  "checks": [{"check": "that payment is cancelled, the rest of it as it was",
                              "get": {"kind": "sql", "query": "SELECT amount_cents, next_date, status FROM scheduled "
                                                              "WHERE id = ?", "params": ["{s.id}"]},
                              "expect": {"op": "table", "rows": [{"amount_cents": "{s.amount_cents}",
                                                                  "next_date": "{s.next_date}", "status": "cancelled"}]}}],
                  "expected_changes": ["scheduled[id={s.id}].status"]},
        "oracle": [*start, {"click": "[data-action=confirm-cancel]"},
                   {"wait_for": '[data-scheduled-id="{s.id}"][data-status=cancelled]'}],
        "near_miss": [*start, {"click": "[data-action=keep]"}],
        "max_steps": 8,
        "tags": {"skills": ["navigate", "modal", "safety"], "tier": 2},
    }


_CATS = ("health", "shopping", "entertainment", "other", "travel", "groceries")
_CAT_SQL = "(VALUES " + ", ".join(f"('{c}')" for c in _CATS) + ")"


def categorise(scope: str) -> dict[str, Any]:
    """Recategorise one transaction, named by merchant and day; the near miss picks another category."""
    return {
        "phrasings": ['In my {t.account}, the "{t.description}" transaction of {t.day} is in the wrong category. '
                      "Change its category to {t.cat}.",
                      'File the {t.day} "{t.description}" payment in {t.account} under {t.cat}.',
                      'Recategorise the "{t.description}" transaction on {t.day} ({t.account}) as {t.cat}.'],
        "params": {"t": {"type": "rows", "sql": (
            "SELECT t.id, t.account_id, a.name AS account, t.description, substr(t.posted_at, 1, 10) AS day, "
            f"c.column1 AS cat FROM transactions t JOIN accounts a ON a.id = t.account_id, {_CAT_SQL} c "
            "WHERE t.kind = 'card' AND t.category != c.column1 AND (SELECT COUNT(*) FROM transactions x "
            "WHERE x.account_id = t.account_id AND x.description = t.description "
            f"AND substr(x.posted_at, 1, 10) = substr(t.posted_at, 1, 10)) = 1 {scope} ORDER BY t.id, c.column1")},
                   "w": {"type": "rows", "sql": f"SELECT column1 AS cat FROM {_CAT_SQL} WHERE column1 != ? AND "
                                                "column1 != (SELECT category FROM transactions WHERE id = ?)",
                         "params": ["{t.cat}", "{t.id}"]}},
        "judge": {"subgoals": [_ON_ACCOUNT],
                  "checks": [{"check": "that transaction's category", "get": {"kind": "app_state",
                                                                               "path": "transactions[id={t.id}].category"},
                              "expect": {"op": "equals", "value": "{t.cat}"}}],
                  "expected_changes": ["transactions[id={t.id}].category"]},
        "oracle": [*_filter("{t.account_id}", "{t.description}"), *_recat("{t.id}", "{t.cat}")],
        "near_miss": [*_filter("{t.account_id}", "{t.description}"), *_recat("{t.id}", "{w.cat}")],
        "max_steps": 20,
        "tags": {"skills": ["search", "filter", "select"], "tier": 2},
    }


_ON_ACCOUNT = {"check": "an account's history is open", "get": {"kind": "url", "part": "path"},
               "expect": {"op": "regex", "pattern": "^/accounts/[0-9]+"}}


def _filter(account: str | None, q: str, row: str | None = None) -> list[Step]:
    """Open an account's history from the overview (None: it is open) filtered by a search (and the month
    of `row`: its `month` and `last` day)."""
    steps: list[Step] = [{"click": f'[data-account-id="{account}"] a'}] if account is not None else []
    steps.append({"fill": {"selector": "input[data-filter=q]", "text": q}})
    if row is not None:
        steps += [{"fill": {"selector": "input[data-filter=from]", "text": "{" + row + ".month}-01"}},
                  {"fill": {"selector": "input[data-filter=to]", "text": "{" + row + ".last}"}}]
    return [*steps, {"click": "[data-action=apply-filters]"}]


def _recat(tid: str, cat: str) -> list[Step]:
    """Set a transaction's category and await the page that shows it saved (the oracle ends there)."""
    return [{"select": {"selector": f'select[data-tx-category="{tid}"]', "option": cat}},
            {"click": f'[data-tx-id="{tid}"] [data-action=save-category]'},
            {"wait_for": f'[data-tx-id="{tid}"][data-category="{cat}"]'}]


_MONTHS = (("2025-09", "September 2025"), ("2025-10", "October 2025"), ("2025-11", "November 2025"),
           ("2025-12", "December 2025"), ("2026-01", "January 2026"), ("2026-02", "February 2026"))
#: SQL: the last day of the month `m.column1`
_LAST = "date(m.column1 || '-01', '+1 month', '-1 day') AS last"
_MONTH_SQL = "(VALUES " + ", ".join(f"('{m}', '{label}')" for m, label in _MONTHS) + ")"


def bulk_categorise(scope: str) -> dict[str, Any] | None:
    """Bulk with a filter: every payment to a merchant in one account and month (there are two) goes under a
    category; the near miss moves the first only."""
    if scope not in ("", "AND t.account_id = 1", "AND t.account_id = 3"):
        return None
    group = ("SELECT t.account_id, a.name AS account, t.description, substr(t.posted_at, 1, 7) AS month, m.column2 AS "
             f"label, {_LAST}, MIN(t.id) AS first, MAX(t.id) AS second, COUNT(*) AS n FROM transactions t JOIN accounts a ON "
             f"a.id = t.account_id JOIN {_MONTH_SQL} m ON m.column1 = substr(t.posted_at, 1, 7) WHERE t.kind = 'card' "
             f"{scope} GROUP BY t.account_id, t.description, month HAVING n = 2")
    rows = ("SELECT g.*, c.column1 AS cat FROM (" + group + f") g, {_CAT_SQL} c WHERE NOT EXISTS (SELECT 1 FROM "
            "transactions x WHERE x.id IN (g.first, g.second) AND x.category = c.column1) "
            "ORDER BY g.account_id, g.description, g.month, c.column1")
    return {
        "phrasings": ['Both "{g.description}" payments of {g.label} in my {g.account} belong under {g.cat}: change '
                      "their category.",
                      'Recategorise every "{g.description}" transaction from {g.label} in {g.account} as {g.cat}.',
                      'In {g.account}, filter the {g.label} transactions for "{g.description}" and put all of them '
                      "in the {g.cat} category."],
        "params": {"g": {"type": "rows", "sql": rows}},
        "judge": {"subgoals": [_ON_ACCOUNT],
                  "checks": [{"check": "both of that merchant's transactions in that month have the category",
                              "get": {"kind": "sql", "query": "SELECT id, category FROM transactions WHERE id IN (?, ?) "
                                                              "ORDER BY id", "params": ["{g.first}", "{g.second}"]},
                              "expect": {"op": "table", "rows": [{"id": "{g.first}", "category": "{g.cat}"},
                                                                 {"id": "{g.second}", "category": "{g.cat}"}]}}],
                  "expected_changes": ["transactions[id={g.first}].category", "transactions[id={g.second}].category"]},
        # a save shows the whole history again: the filter again, so the second row is at hand
        "oracle": [*_filter("{g.account_id}", "{g.description}", "g"), *_recat("{g.first}", "{g.cat}"),
                   *_filter(None, "{g.description}", "g"), *_recat("{g.second}", "{g.cat}")],
        "near_miss": [*_filter("{g.account_id}", "{g.description}", "g"), *_recat("{g.first}", "{g.cat}")],
        "max_steps": 80,  # versions 1 and 2: the oracle ran out of 25, then 40 (two searches of three fields, two selects)
        "tags": {"skills": ["search", "filter", "select", "bulk"], "tier": 3},
    }


def count_merchant(scope: str) -> dict[str, Any] | None:
    """Count a merchant's transactions in one account and month; the near miss counts every month's."""
    if scope not in ("", "AND t.account_id = 1", "AND t.account_id = 3"):
        return None
    rows = ("SELECT * FROM (SELECT t.account_id, a.name AS account, t.description, substr(t.posted_at, 1, 7) AS month, "
            f"m.column2 AS label, {_LAST}, COUNT(*) AS n, (SELECT COUNT(*) FROM transactions y WHERE y.account_id = t.account_id "
            "AND y.description = t.description) AS total FROM transactions t JOIN accounts a ON a.id = t.account_id "
            f"JOIN {_MONTH_SQL} m ON m.column1 = substr(t.posted_at, 1, 7) WHERE t.kind = 'card' {scope} "
            "GROUP BY t.account_id, t.description, month) WHERE n >= 2 AND n < total "
            "ORDER BY account_id, description, month")
    return {
        "phrasings": ['How many "{c.description}" transactions are there in my {c.account} in {c.label}? Answer '
                      "with just the number.",
                      'Count the {c.label} payments to "{c.description}" in {c.account}; reply with the number.',
                      'In {c.label}, how many times did I pay "{c.description}" from my {c.account}? A number only.'],
        "params": {"c": {"type": "rows", "sql": rows}},
        "judge": {"subgoals": [_ON_ACCOUNT],
                  "checks": [{"check": "the answer is the count", "get": {"kind": "answer"},
                              "expect": {"op": "number", "value": "{c.n}"}}],
                  "expected_changes": []},
        "oracle": [*_filter("{c.account_id}", "{c.description}", "c"), {"done": {"answer": "{c.n}"}}],
        "near_miss": [*_filter("{c.account_id}", "{c.description}"), {"done": {"answer": "{c.total}"}}],
        "max_steps": 15,
        "tags": {"skills": ["search", "filter", "count", "answer"], "tier": 3},
    }


def largest(scope: str) -> dict[str, Any]:
    """The largest single payment to a merchant (in one account); the near miss answers the smallest."""
    rows = ("SELECT t.account_id, a.name AS account, t.description, COUNT(*) AS n, "
            f"{_eur('MAX(-t.amount_cents)')} AS big, {_eur('MIN(-t.amount_cents)')} AS small FROM transactions t "
            f"JOIN accounts a ON a.id = t.account_id WHERE t.kind = 'card' AND t.amount_cents < 0 {scope} "
            "GROUP BY t.account_id, t.description HAVING n >= 3 AND MAX(-t.amount_cents) != MIN(-t.amount_cents) "
            "ORDER BY t.account_id, t.description")
    if scope in (_LARGE, _SMALL):  # an amount scope: the question is over those payments alone
        size = "over €50" if scope == _LARGE else "under €20"
    else:
        size = ""
    extra = f" among those {size}" if size else ""
    return {
        "phrasings": [f'What is the largest single amount I paid to "{{m.description}}" from my {{m.account}}{extra}? '
                      "Answer with the amount in euros.",
                      f'Find my biggest "{{m.description}}" payment in {{m.account}}{extra} and tell me its amount.',
                      f'Of the "{{m.description}}" transactions in {{m.account}}{extra}, which amount is the highest? '
                      "Reply with the amount."],
        "params": {"m": {"type": "rows", "sql": rows}},
        "judge": {"subgoals": [_ON_ACCOUNT],
                  "checks": [{"check": "the answer is the largest payment, to the cent", "get": {"kind": "answer"},
                              "expect": {"op": "money", "value": "{m.big}", "currency": "EUR"}}],
                  "expected_changes": []},
        "oracle": [*_filter("{m.account_id}", "{m.description}"), {"done": {"answer": "€{m.big}"}}],
        "near_miss": [*_filter("{m.account_id}", "{m.description}"), {"done": {"answer": "€{m.small}"}}],
        "max_steps": 15,
        "tags": {"skills": ["search", "compare", "answer"], "tier": 2},
    }


def compare_merchants(scope: str) -> dict[str, Any] | None:
    """Which of two merchants cost more in a month (in one account); the near miss names the other."""
    if scope not in ("", "AND t.account_id = 1", "AND t.account_id = 3"):
        return None
    spent = ("SELECT t.account_id, a.name AS account, t.description AS d, substr(t.posted_at, 1, 7) AS month, "
             f"m.column2 AS label, {_LAST}, -SUM(t.amount_cents) AS s FROM transactions t JOIN accounts a ON a.id = t.account_id "
             f"JOIN {_MONTH_SQL} m ON m.column1 = substr(t.posted_at, 1, 7) WHERE t.kind = 'card' {scope} "
             "GROUP BY t.account_id, t.description, month")
    rows = (f"SELECT x.account_id, x.account, x.month, x.last, x.label, x.d AS a, y.d AS b, CASE WHEN x.s > y.s THEN x.d "
            f"ELSE y.d END AS more, CASE WHEN x.s > y.s THEN y.d ELSE x.d END AS less FROM ({spent}) x JOIN ({spent}) y "
            "ON y.account_id = x.account_id AND y.month = x.month AND x.d < y.d AND x.s != y.s "
            "ORDER BY x.account_id, x.month, x.d, y.d")
    return {
        "phrasings": ['In {c.label}, did I spend more at "{c.a}" or at "{c.b}" (from my {c.account})? Answer with the '
                      "merchant's name only.",
                      'Compare my {c.label} totals for "{c.a}" and "{c.b}" in {c.account}: which one is higher?',
                      'Which cost me more in {c.label} in my {c.account}, "{c.a}" or "{c.b}"? Name it.'],
        "params": {"c": {"type": "rows", "sql": rows}},
        "judge": {"subgoals": [_ON_ACCOUNT],
                  "checks": [{"check": "the answer is the merchant with the larger total", "get": {"kind": "answer"},
                              "expect": {"op": "text", "value": "{c.more}"}}],
                  "expected_changes": []},
        "oracle": [*_filter("{c.account_id}", "{c.a}", "c"), *_filter(None, "{c.b}", "c"),
                   {"done": {"answer": "{c.more}"}}],
        "near_miss": [*_filter("{c.account_id}", "{c.a}", "c"), {"done": {"answer": "{c.less}"}}],
        "max_steps": 25,
        "tags": {"skills": ["search", "filter", "compare", "answer"], "tier": 3},
    }


_SUM_CATS = ("groceries", "dining", "coffee", "transport", "shopping")


def category_total(scope: str) -> dict[str, Any] | None:
    """A category's total in a month, across all accounts; the near miss counts the checking account's only."""
    if scope:
        return None
    cats = "(VALUES " + ", ".join(f"('{c}')" for c in _SUM_CATS) + ")"
    per = ("SELECT substr(posted_at, 1, 7) AS mm, category AS cat, -SUM(amount_cents) AS s, -SUM(CASE WHEN account_id "
           "= 1 THEN amount_cents ELSE 0 END) AS c1 FROM transactions GROUP BY mm, cat")
    rows = (f"SELECT m.column1 AS month, m.column2 AS label, {_LAST}, k.column1 AS cat, {_eur('p.s')} AS total, "
            f"{_eur('p.c1')} AS checking FROM {_MONTH_SQL} m, {cats} k JOIN ({per}) p ON p.mm = m.column1 AND "
            "p.cat = k.column1 WHERE p.c1 != p.s AND p.c1 > 0 ORDER BY month, cat")
    return {
        "phrasings": ["How much did I spend on {x.cat} in {x.label}, across all my accounts? Answer with the amount in "
                      "euros.",
                      "Add up my {x.cat} spending for {x.label} over every account and tell me the total.",
                      "What was my total {x.cat} spend in {x.label} (checking and credit card together)? Reply with "
                      "the amount."],
        "params": {"x": {"type": "rows", "sql": rows}},
        "judge": {"subgoals": [_ON_ACCOUNT],
                  "checks": [{"check": "the answer is that month's total, to the cent", "get": {"kind": "answer"},
                              "expect": {"op": "money", "value": "{x.total}", "currency": "EUR"}}],
                  "expected_changes": []},
        "oracle": [{"click": '[data-account-id="1"] a'},
                   {"select": {"selector": "select[data-filter=category]", "option": "{x.cat}"}},
                   {"fill": {"selector": "input[data-filter=from]", "text": "{x.month}-01"}},
                   {"fill": {"selector": "input[data-filter=to]", "text": "{x.last}"}},
                   {"click": "[data-action=apply-filters]"}, {"done": {"answer": "€{x.total}"}}],
        "near_miss": [{"click": '[data-account-id="1"] a'}, {"done": {"answer": "€{x.checking}"}}],
        "max_steps": 25,
        "tags": {"skills": ["filter", "date", "sum", "answer"], "tier": 3},
    }


# --- cards -----------------------------------------------------------------------------------------------

_CARD = {"type": "rows", "sql": "SELECT id, name, last4, daily_limit_cents FROM cards ORDER BY id"}
_LIMITS = (60000, 80000, 120000, 250000, 400000)
_LIMIT = {"type": "rows", "sql": "SELECT column1 AS cents, " + _eur("column1") + " AS text, " + _eur("column1 + 5000")
                                 + " AS wrong FROM (VALUES " + ", ".join(f"({v})" for v in _LIMITS) + ") "
                                 "WHERE column1 != ?", "params": ["{c.daily_limit_cents}"]}
_ON_CARDS = {"check": "the cards are open", "get": {"kind": "url", "part": "path"},
             "expect": {"op": "regex", "pattern": "^/cards"}}
_CARDS_NAV: Step = {"click": "a[data-nav=\"/cards\"]"}


def _card_is(frozen: int | str, limit: str, online: int, status: str = "active") -> dict[str, Any]:
    return {"check": "the card's settings", "get": {"kind": "sql", "query": "SELECT frozen, daily_limit_cents, "
                                                                            "online_payments, status FROM cards WHERE id = ?",
                                                    "params": ["{c.id}"]},
            "expect": {"op": "table", "rows": [{"frozen": frozen, "daily_limit_cents": limit, "online_payments": online,
                                                "status": status}]}}


def _settings(limit: str | None, online_off: bool) -> list[Step]:
    steps: list[Step] = []
    if limit is not None:
        steps.append({"fill": {"selector": '[data-card-id="{c.id}"] input[data-field=daily_limit]', "text": limit}})
    if online_off:
        steps.append({"click": '[data-card-id="{c.id}"] input[data-field=online_payments]'})
    return [*steps, {"click": '[data-card-id="{c.id}"] [data-action=save-card]'}]


_FREEZE: Step = {"click": '[data-card-id="{c.id}"] [data-action=freeze]'}
_FROZEN: Step = {"wait_for": '[data-card-id="{c.id}"][data-frozen="1"]'}


def _card_op(name: str) -> Operation:
    """Card operations on one card: freeze; set the daily limit; the limit and online payments off (one save);
    freeze, limit and online payments off (a chain of three)."""
    def op(scope: str) -> dict[str, Any] | None:
        if scope:
            return None
        base: dict[str, Any] = {"params": {"c": _CARD}, "max_steps": 12}
        if name == "freeze":
            return {**base,
                    "phrasings": ["I can't find my {c.name} ending in {c.last4}. Freeze it for now (don't report it "
                                  "lost).",
                                  "Freeze the {c.name} (last digits {c.last4}) for the time being.",
                                  "Temporarily block my card ending {c.last4} by freezing it; it is not lost."],
                    "params": {"c": _CARD, "other": {"type": "rows", "sql": "SELECT id FROM cards WHERE id != ?",
                                                     "params": ["{c.id}"]}},
                    "judge": {"subgoals": [_ON_CARDS], "checks": [_card_is(1, "{c.daily_limit_cents}", 1)],
                              "expected_changes": ["cards[id={c.id}].frozen"]},
                    "oracle": [_CARDS_NAV, _FREEZE, _FROZEN],
                    "near_miss": [_CARDS_NAV, {"click": '[data-card-id="{other.id}"] [data-action=freeze]'}],
                    "tags": {"skills": ["navigate", "toggle"], "tier": 1}}
        base["params"] = {"c": _CARD, "lim": _LIMIT}
        if name == "limit":
            return {**base,
                    "phrasings": ["Set the daily spending limit of my {c.name} ending in {c.last4} to €{lim.text}.",
                                  "Change the card limit: the {c.name} ({c.last4}) may spend €{lim.text} a day.",
                                  "My card ending {c.last4} needs a daily limit of €{lim.text}; update it."],
                    "judge": {"subgoals": [_ON_CARDS], "checks": [_card_is(0, "{lim.cents}", 1)],
                              "expected_changes": ["cards[id={c.id}].daily_limit_cents"]},
                    "oracle": [_CARDS_NAV, *_settings("{lim.text}", False)],
                    "near_miss": [_CARDS_NAV, *_settings("{lim.wrong}", False)],
                    "tags": {"skills": ["form", "number_input"], "tier": 2}}
        if name == "limit+online":
            return {**base,
                    "phrasings": ["On my {c.name} ending in {c.last4}, set the daily limit to €{lim.text} and switch "
                                  "off online payments.",
                                  "Card ending {c.last4}: no more online payments, and a daily limit of €{lim.text}.",
                                  "Lower the risk on my {c.name} ({c.last4}): daily limit €{lim.text}, online payments "
                                  "off."],
                    "judge": {"subgoals": [_ON_CARDS], "checks": [_card_is(0, "{lim.cents}", 0)],
                              "expected_changes": ["cards[id={c.id}].daily_limit_cents",
                                                   "cards[id={c.id}].online_payments"]},
                    "oracle": [_CARDS_NAV, *_settings("{lim.text}", True),
                               {"wait_for": '[data-card-id="{c.id}"] input[data-field=online_payments]:not([checked])'}],
                    "near_miss": [_CARDS_NAV, *_settings("{lim.text}", False)],
                    "tags": {"skills": ["form", "number_input", "checkbox", "multi_step"], "tier": 3}}
        return {**base,  # freeze+limit+online
                "phrasings": ["For my {c.name} ending in {c.last4}: set the daily limit to €{lim.text}, turn off "
                              "online payments, and freeze it.",
                              "Card ending {c.last4}: daily limit €{lim.text}, online payments off, then freeze the "
                              "card (it is not lost).",
                              "Three changes to the {c.name} ({c.last4}): a €{lim.text} daily limit, no online "
                              "payments, frozen."],
                "judge": {"subgoals": [_ON_CARDS], "checks": [_card_is(1, "{lim.cents}", 0)],
                          "expected_changes": ["cards[id={c.id}].daily_limit_cents", "cards[id={c.id}].online_payments",
                                               "cards[id={c.id}].frozen"]},
                "oracle": [_CARDS_NAV, *_settings("{lim.text}", True), _FREEZE, _FROZEN],
                "near_miss": [_CARDS_NAV, *_settings("{lim.text}", True)],
                "max_steps": 15,
                "tags": {"skills": ["form", "number_input", "checkbox", "toggle", "multi_step"], "tier": 4}}
    return op


def report_lost(scope: str) -> dict[str, Any] | None:
    """Report a card lost through its confirmation; the near miss keeps the card at the confirmation."""
    if scope:
        return None
    start = [_CARDS_NAV, {"click": '[data-card-id="{c.id}"] [data-action=report-lost]'}]
    return {
        "phrasings": ["My {c.name} ending in {c.last4} was stolen. Report it lost so it is blocked.",
                      "Block the {c.name} ({c.last4}) for good: it is lost.",
                      "I lost the card ending {c.last4}. Report it lost and stolen."],
        "params": {"c": _CARD},
        "judge": {"subgoals": [_ON_CARDS], "checks": [_card_is(1, "{c.daily_limit_cents}", 1, "lost")],
                  "expected_changes": ["cards[id={c.id}].frozen", "cards[id={c.id}].status"]},
        "oracle": [*start, {"click": "[data-action=confirm-lost]"}, {"wait_for": '[data-card-id="{c.id}"][data-status=lost]'}],
        "near_miss": [*start, {"click": "[data-action=keep]"}],
        "max_steps": 8,
        "tags": {"skills": ["navigate", "modal", "safety"], "tier": 2},
    }


def four_then_balance(amt: dict[str, Any]) -> dict[str, Any]:
    """A chain of four that ends with a question: move an amount to savings, pay a payee, cancel a scheduled
    payment, then the checking balance; the near miss does the three and answers the balance before the payment."""
    return {
        "phrasings": ['Move €{amt.text} from Everyday Checking to savings, pay {p.name} €{amt2.text} from checking with '
                      'the reference "{ref}", cancel my {s.frequency} scheduled payment to {s.payee}, and then tell me '
                      "the checking balance.",
                      'Four things: 1. €{amt.text} from checking to Rainy Day Savings; 2. pay {p.name} €{amt2.text} '
                      '(reference "{ref}"); 3. cancel the {s.frequency} payment to {s.payee}; 4. what is my Everyday '
                      "Checking balance now? Answer with the amount.",
                      'Send €{amt.text} to my savings and €{amt2.text} to {p.name} ("{ref}"), both from checking, '
                      "stop the {s.frequency} scheduled payment to {s.payee}, then report what is left in checking."],
        "params": {**amt, "amt2": {"type": "rows", "sql": "SELECT column1 AS cents, " + _eur("column1") + " AS text FROM "
                                   "(VALUES (2350), (5990), (11000), (17425))"},
                   "p": _PAYEE, "ref": _REF, "s": _ACTIVE,
                   "bal": {"type": "rows", "sql": "SELECT b - x - y AS after, v + x AS savings, 0 - x AS neg, 0 - y AS neg2, "
                           + _eur("b - x - y") + " AS after_text, " + _eur("b - x") + " AS mid_text FROM (SELECT "
                           "CAST(? AS INTEGER) AS x, CAST(? AS INTEGER) AS y, (SELECT balance_cents FROM accounts WHERE "
                           "id = 1) AS b, (SELECT balance_cents FROM accounts WHERE id = 2) AS v)",
                           "params": ["{amt.cents}", "{amt2.cents}"]}},
        "judge": {"subgoals": [_ON_TRANSFER, _ON_SCHEDULED],
                  "checks": [_sent("two transfers, each sent: to savings, and to the payee with the reference",
                                   [{"from_account_id": 1, "to_account_id": 2, "payee_id": None,
                                     "amount_cents": "{amt.cents}", "status": "completed", "reference": ""},
                                    {"from_account_id": 1, "to_account_id": None, "payee_id": "{p.id}",
                                     "amount_cents": "{amt2.cents}", "status": "completed", "reference": "{ref}"}]),
                             {"check": "three postings: out of checking twice, into savings once, under transfers",
                              "get": {"kind": "sql", "query": _POSTINGS},
                              "expect": {"op": "table", "rows": [
                                  {"account_id": 1, "amount_cents": "{bal.neg}", "category": "transfers"},
                                  {"account_id": 1, "amount_cents": "{bal.neg2}", "category": "transfers"},
                                  {"account_id": 2, "amount_cents": "{amt.cents}", "category": "transfers"}]}},
                             {"check": "both balances moved by exactly those amounts",
                              "get": {"kind": "sql", "query": "SELECT id, balance_cents FROM accounts WHERE id IN (1, 2) "
                                                              "ORDER BY id"},
                              "expect": {"op": "table", "rows": [{"id": 1, "balance_cents": "{bal.after}"},
                                                                 {"id": 2, "balance_cents": "{bal.savings}"}]}},
                             {"check": "that scheduled payment is cancelled",
                              "get": {"kind": "app_state", "path": "scheduled[id={s.id}].status"},
                              "expect": {"op": "equals", "value": "cancelled"}},
                             {"check": "the answer is the checking balance at the end", "get": {"kind": "answer"},
                              "expect": {"op": "money", "value": "{bal.after_text}", "currency": "EUR"}}],
                  "expected_changes": [*_OWN_CHANGES, "scheduled[id={s.id}].status"]},
        "oracle": [*_to_savings("{amt.text}"), *_pay("{p.id}", "{amt2.text}", "{ref}"),
                   {"click": "a[data-nav=\"/scheduled\"]"}, {"click": '[data-scheduled-id="{s.id}"] [data-action=cancel]'},
                   {"click": "[data-action=confirm-cancel]"},
                   {"wait_for": '[data-scheduled-id="{s.id}"][data-status=cancelled]'},
                   {"done": {"answer": "€{bal.after_text}"}}],
        "near_miss": [*_to_savings("{amt.text}"), *_pay("{p.id}", "{amt2.text}", "{ref}"),
                      {"click": "a[data-nav=\"/scheduled\"]"},
                      {"click": '[data-scheduled-id="{s.id}"] [data-action=cancel]'},
                      {"click": "[data-action=confirm-cancel]"}, {"done": {"answer": "€{bal.mid_text}"}}],
        "max_steps": 60,
        "tags": {"skills": ["form", "select", "confirm", "modal", "read", "answer", "multi_step"], "tier": 4},
    }


OPERATIONS: dict[str, Operation] = {
    "transfer:savings": _moving(transfer_savings), "pay:payee": _moving(pay_payee), "payee:add": add_payee,
    "payee:add+pay": _moving(add_payee_then_pay), "payee:add+pay+schedule": _moving(add_pay_schedule),
    "scheduled:new": _moving(schedule_new), "scheduled:edit_amount": _moving(edit_scheduled),
    "scheduled:edit_amount+date": _moving(edit_scheduled_amount_date), "scheduled:cancel": cancel_scheduled,
    "tx:categorise": categorise, "bulk:categorise_merchant_month": bulk_categorise,
    "count:merchant_month": count_merchant, "find:largest_payment": largest, "compare:merchants_month": compare_merchants,
    "sum:category_month": category_total, "card:freeze": _card_op("freeze"), "card:limit": _card_op("limit"),
    "card:limit+online": _card_op("limit+online"), "card:limit+online+freeze": _card_op("freeze+limit+online"),
    "card:report_lost": report_lost, "transfer>ask:savings_balance": _moving(transfer_then_balance),
    "transfer+pay+cancel>ask:checking_balance": _moving(four_then_balance),
}

DESCRIPTION = Description(app="bank", version=GENERATOR_VERSION, scopes=SCOPES, entities=(), extra=OPERATIONS,
                          test_chains=frozenset({"payee:add+pay+schedule", "compare:merchants_month",
                                                 "card:limit+online+freeze"}))
SCHEMA: AppSchema = DESCRIPTION.schema()
