"""Templates for the HR app (tasks/apps/hr, "Tally People"), described for the generator core.

Signed in as Morgan Ellis (employees.id 1), a manager of eight. Operations: edit a line of a
draft expense report (its amount, currency, category, project or note; the app converts to
dollars at the company's fixed rates, and the judge computes the same `home_cents`), chains of
2, 3 and 5 of those edits in one save, delete a line, add a line (and submit the report after
it), create a report with a line and submit it, a five-part chain (create, two lines, submit,
then the report's total), approve or reject a direct report's expense report or time off,
approve every waiting report under a dollar limit (bulk with a filter), request and cancel time
off, change the emergency contact or the address, a colleague's manager, office or e-mail, a
month's net pay, count a team's people in an office and the reports waiting for me, which of two
colleagues joined first (compare), and chains that end with a question (a line's currency, then
the report's total; an approval and a rejection, then how many reports still wait).

Judges read exact values (cents, ids, dates, working days) and history: `report_events` keeps
every creation, submission, recall and decision, so "its history gained exactly ..." also fails
a step done and undone. A task that names no comment or note is judged with an empty one.

Scopes filter the expense line a template draws (travel, meals, small or large amounts); the
operations that draw no line have templates in the unscoped "any" only. Every selector is the
hand-written hr suite's (`data-nav`, `data-action`, `data-field`, `data-filter`, `data-*-id`,
`data-approval`): the app has de-DE and three layouts.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from cua.synth.schema import AppSchema, Description, Operation

__all__ = ["DESCRIPTION", "GENERATOR_VERSION", "SCHEMA"]

GENERATOR_VERSION = 2  # 2: judge QA's findings at --count 20 (admitted 17): a deletion awaits the report's new
# total (version 1's oracle could end before the delete landed); a new report's lines get the steps they take

SCOPES: tuple[tuple[str, str], ...] = (
    ("any", ""),
    ("travel", "AND l.category IN ('hotel', 'airfare', 'taxi', 'parking')"),
    ("meals", "AND l.category = 'meals'"),
    ("small", "AND l.home_cents < 5000"),
    ("large", "AND l.home_cents >= 10000"),
)

Step = dict[str, Any]

#: category key -> the label the app shows (tasks/apps/hr/text.py)
_CATEGORIES = {"airfare": "Airfare", "hotel": "Hotel", "taxi": "Taxi & rideshare", "meals": "Meals",
               "client_entertainment": "Client entertainment", "office_supplies": "Office supplies",
               "training": "Training & books", "phone_internet": "Phone & internet", "parking": "Parking"}
_CAT_VALUES = "(VALUES " + ", ".join(f"('{k}', '{v}')" for k, v in _CATEGORIES.items()) + ")"
_NOTES = ("Client: Northwind Traders", "Shared with the platform team", "Booked through the travel desk",
          "Receipt is in German", "Team offsite")
_AMOUNTS = (1850, 2475, 3320, 4199, 5640, 6105)


def _eur(col: str) -> str:
    """SQL: integer cents `col` as `1234.56`."""
    return f"printf('%d.%02d', ({col}) / 100, ({col}) % 100)"


def _rate(currency: str) -> str:
    """SQL: the company's rate of `currency` (a `?` or a column) in ten-thousandths."""
    return f"(SELECT CAST(replace(to_home, '.', '') AS INTEGER) FROM rates WHERE currency = {currency})"


# --- a line of one of my draft reports ------------------------------------------------------------------

_LINE_SQL = ("SELECT l.id, l.report_id AS rid, r.title, l.merchant, l.day, l.category, l.amount_cents, l.currency, "
             "l.home_cents, l.project, l.note, " + _eur("l.amount_cents") + " AS text, "
             "(SELECT MAX(id) FROM report_events) AS ev FROM lines l JOIN reports r ON r.id = l.report_id "
             "WHERE r.employee_id = 1 AND r.status = 'draft' AND (SELECT COUNT(*) FROM lines x WHERE x.report_id = "
             "l.report_id AND x.merchant = l.merchant AND x.day = l.day) = 1 {extra} {scope} ORDER BY l.id")


def _line(scope: str, extra: str = "") -> dict[str, Any]:
    return {"type": "rows", "sql": _LINE_SQL.replace("{extra}", extra).replace("{scope}", scope)}


_OPEN_REPORT: list[Step] = [{"click": 'a[data-nav="/expenses"]'}, {"click": '[data-report-id="{l.rid}"] a'}]
_EDIT_LINE: Step = {"click": '[data-line-id="{l.id}"] [data-action=edit-line]'}
_ON_REPORT = {"check": "the report or its line is open", "get": {"kind": "url", "part": "path"},
              "expect": {"op": "regex", "pattern": "^/(expenses|lines)/[0-9]+"}}
_LINE_COLS = "report_id, day, merchant, category, amount_cents, currency, home_cents, project, note"


#: A line's field whose new value is another row of a table: (its rows, the column compared, the line's value).
_CHOICES = {
    "category": (f"SELECT column1 AS v, column2 AS label FROM {_CAT_VALUES}", "column1", "{l.category}"),
    "project": ("SELECT code AS v, name AS label FROM projects", "code", "{l.project}"),
    "currency": ("SELECT currency AS v FROM rates", "currency", "{l.currency}"),
}


def _new(field: str, wrong: bool) -> dict[str, Any]:
    """The params of a field's new value (`new_F`) and, for a near miss, another (`wrong_F`)."""
    if field in _CHOICES:
        rows, column, current = _CHOICES[field]
        base = f"{rows} WHERE {column} != ?"
        out = {f"new_{field}": {"type": "rows", "sql": base, "params": [current]}}
        if wrong:
            out[f"wrong_{field}"] = {"type": "rows", "sql": f"{base} AND {column} != ?",
                                     "params": [current, f"{{new_{field}.v}}"]}
        return out
    if field == "amount":
        rows = ", ".join(f"({v})" for v in _AMOUNTS)
        base = (f"SELECT column1 AS cents, {_eur('column1')} AS v, {_eur('column1 + 1000')} AS wrong FROM (VALUES {rows}) "
                "WHERE column1 != ?")
        return {"new_amount": {"type": "rows", "sql": base, "params": ["{l.amount_cents}"]}}
    rows = ", ".join("('" + n + "')" for n in _NOTES)
    base = f"SELECT column1 AS v FROM (VALUES {rows}) WHERE column1 != ?"
    out = {"new_note": {"type": "rows", "sql": base, "params": ["{l.note}"]}}
    if wrong:
        out["wrong_note"] = {"type": "rows", "sql": base + " AND column1 != ?", "params": ["{l.note}", "{new_note.v}"]}
    return out


def _set(field: str, p: str) -> Step:
    if field == "amount":
        return {"fill": {"selector": "input[data-field=amount]", "text": "{" + p + "}"}}
    if field == "note":
        return {"fill": {"selector": "input[data-field=note]", "text": "{" + p + "}"}}
    return {"select": {"selector": f"select[data-field={field}]", "option": "{" + p + "}"}}


#: field -> (how an instruction says its new value, the change paths it makes)
_SAYS = {"amount": ("the amount to ${new_amount.v}", ("amount_cents", "home_cents")),
         "currency": ("the currency to {new_currency.v}", ("currency", "home_cents")),
         "category": ("the category to {new_category.label}", ("category",)),
         "project": ("the project to {new_project.v}", ("project",)),
         "note": ('the note to "{new_note.v}"', ("note",))}


def line_edit(fields: Sequence[str]) -> Operation:
    """Edit one line's fields in one save; the judge reads the whole row (the dollars converted as the app
    does). One field: the near miss sets another value; a chain: the near miss stops one field short."""
    single = len(fields) == 1

    def op(scope: str) -> dict[str, Any]:
        params: dict[str, Any] = {"l": _line(scope)}
        for f in fields:
            params.update(_new(f, wrong=single and f != "amount"))
        amount = "{new_amount.cents}" if "amount" in fields else "{l.amount_cents}"
        currency = "{new_currency.v}" if "currency" in fields else "{l.currency}"
        params["h"] = {"type": "rows", "sql": f"SELECT (CAST(? AS INTEGER) * {_rate('?')} + 5000) / 10000 AS home",
                       "params": [amount, currency]}
        row = {"report_id": "{l.rid}", "day": "{l.day}", "merchant": "{l.merchant}",
               "category": "{new_category.v}" if "category" in fields else "{l.category}", "amount_cents": amount,
               "currency": currency, "home_cents": "{h.home}",
               "project": "{new_project.v}" if "project" in fields else "{l.project}",
               "note": "{new_note.v}" if "note" in fields else "{l.note}"}
        changes: list[str] = []
        for f in fields:
            changes += [f"lines[id={{l.id}}].{c}" for c in _SAYS[f][1] if f"lines[id={{l.id}}].{c}" not in changes]
        parts = [_SAYS[f][0] for f in fields]
        listed = parts[0] if single else ", ".join(parts[:-1]) + " and " + parts[-1]
        what = 'the {l.merchant} line of {l.day} in my draft expense report "{l.title}"'
        steps = [*_OPEN_REPORT, _EDIT_LINE]
        done: Step = {"wait_for": '[data-line-id="{l.id}"]'}
        if single:
            f = fields[0]
            near = [*steps, _set(f, "new_amount.wrong" if f == "amount" else f"wrong_{f}.v"),
                    {"click": "[data-action=save-line]"}, done]
        else:
            near = [*steps, *(_set(f, f"new_{f}.v") for f in fields[:-1]),
                    {"click": "[data-action=save-line]"}, done]
        return {
            "phrasings": [f"Change {listed} for {what}.",
                          f'Fix my draft report "{{l.title}}": on the {{l.merchant}} line ({{l.day}}) set {listed}.',
                          f"Edit {what}: {listed}. Leave the rest of the line as it is."],
            "params": params,
            "judge": {"subgoals": [_ON_REPORT],
                      "checks": [{"check": "the line has the new values and keeps the rest (its dollars converted)",
                                  "get": {"kind": "sql", "query": f"SELECT {_LINE_COLS} FROM lines WHERE id = ?",
                                          "params": ["{l.id}"]},
                                  "expect": {"op": "table", "rows": [row], "normalize": {"note": "text"}}}],
                      "expected_changes": changes},
            "oracle": [*steps, *(_set(f, f"new_{f}.v") for f in fields), {"click": "[data-action=save-line]"}, done],
            "near_miss": near,
            "max_steps": 15 + 3 * len(fields),
            "tags": {"skills": ["navigate", "form", "select", *(["multi_step"] if not single else [])],
                     "tier": 2 if single else min(4, 1 + len(fields))},
        }
    return op


def line_delete(scope: str) -> dict[str, Any] | None:
    """Delete one line (one with no receipt: a receipt would be freed, another change); the near miss deletes
    another such line of the same report (drawn unscoped and among travel lines: not every seed has a free small line)."""
    if scope not in ("", "AND l.category IN ('hotel', 'airfare', 'taxi', 'parking')"):
        return None
    free = ("AND NOT EXISTS (SELECT 1 FROM receipts rc WHERE rc.line_id = l.id) AND EXISTS (SELECT 1 FROM lines y WHERE "
            "y.report_id = l.report_id AND y.id != l.id AND NOT EXISTS (SELECT 1 FROM receipts rc WHERE rc.line_id = y.id))")
    return {
        "phrasings": ['Delete the {l.merchant} line of {l.day} from my draft expense report "{l.title}".',
                      'Remove the {l.day} {l.merchant} expense from "{l.title}"; keep the other lines.',
                      'In "{l.title}", the {l.merchant} line ({l.day}) should not be there: delete it.'],
        "params": {"l": _line(scope, free),
                   "o": {"type": "rows", "sql": "SELECT id FROM lines WHERE report_id = ? AND id != ? AND NOT EXISTS "
                                                "(SELECT 1 FROM receipts rc WHERE rc.line_id = lines.id) ORDER BY id",
                         "params": ["{l.rid}", "{l.id}"]},
                   # the report's total once the line is gone, and once the other one is: the page shows it
                   "x": {"type": "rows", "sql": "SELECT SUM(home_cents) - ? AS after, SUM(home_cents) - (SELECT home_cents "
                                                "FROM lines WHERE id = ?) AS other FROM lines WHERE report_id = ?",
                         "params": ["{l.home_cents}", "{o.id}", "{l.rid}"]}},
        "judge": {"subgoals": [_ON_REPORT],
                  "checks": [{"check": "the line is gone", "get": {"kind": "app_state", "path": "lines[id={l.id}]"},
                              "expect": {"op": "absent"}}],
                  "expected_changes": ["lines[id={l.id}]"]},
        # version 1 awaited the report page it was already on: the oracle could end before the delete landed
        "oracle": [*_OPEN_REPORT, {"click": '[data-line-id="{l.id}"] [data-action=delete-line]'},
                   {"wait_for": '[data-report-id="{l.rid}"][data-total-cents="{x.after}"]'}],
        "near_miss": [*_OPEN_REPORT, {"click": '[data-line-id="{o.id}"] [data-action=delete-line]'},
                      {"wait_for": '[data-report-id="{l.rid}"][data-total-cents="{x.other}"]'}],
        "max_steps": 10,
        "tags": {"skills": ["navigate", "delete"], "tier": 2},
    }


# --- new lines and reports --------------------------------------------------------------------------------

#: (merchant, category, cents, day): lines under their category's limit and the receipt threshold
_NEW_LINES = (("Blue Bottle Coffee", "meals", 1840, "2026-02-24"), ("Lyft", "taxi", 3265, "2026-02-25"),
              ("Staples", "office_supplies", 4799, "2026-02-20"), ("SpotHero", "parking", 2400, "2026-02-26"),
              ("O'Reilly Media", "training", 5999, "2026-02-18"), ("Verizon", "phone_internet", 6450, "2026-02-10"),
              ("Sweetgreen", "meals", 2215, "2026-02-27"))
_NEW_SQL = ("SELECT column1 AS merchant, column2 AS category, column3 AS cents, " + _eur("column3") + " AS amount, "
            + _eur("column3 + 900") + " AS wrong, column4 AS day, column5 AS k FROM (VALUES "
            + ", ".join("('" + m.replace("'", "''") + f"', '{c}', {a}, '{d}', {k})"
                        for k, (m, c, a, d) in enumerate(_NEW_LINES)) + ")")
_MAXES = {"type": "rows", "sql": "SELECT (SELECT MAX(id) FROM reports) AS report, (SELECT MAX(id) FROM reports) + 1 AS "
                                 "next_report, (SELECT MAX(id) FROM lines) AS line, (SELECT MAX(id) FROM report_events) AS ev"}
_PROJECT = {"type": "rows", "sql": "SELECT code FROM projects ORDER BY code"}


def _add_line(n: str, amount: str) -> list[Step]:
    return [{"fill": {"selector": "input[data-field=day]", "text": "{" + n + ".day}"}},
            {"fill": {"selector": "input[data-field=merchant]", "text": "{" + n + ".merchant}"}},
            {"select": {"selector": "select[data-field=category]", "option": "{" + n + ".category}"}},
            {"fill": {"selector": "input[data-field=amount]", "text": amount}},
            {"select": {"selector": "select[data-field=currency]", "option": "USD"}},
            {"select": {"selector": "select[data-field=project]", "option": "{proj.code}"}},
            {"click": "[data-action=add-line]"},
            {"wait_for": {"selector": "[data-merchant]", "text_contains": "{" + n + ".merchant}"}}]


def _new_row(report: str, n: str) -> dict[str, Any]:
    return {"report_id": report, "day": "{" + n + ".day}", "merchant": "{" + n + ".merchant}",
            "category": "{" + n + ".category}", "amount_cents": "{" + n + ".cents}", "currency": "USD",
            "project": "{proj.code}", "note": ""}


def _lines_are(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"check": "exactly the new lines, in dollars, on that project, with no note",
            "get": {"kind": "sql", "query": "SELECT report_id, day, merchant, category, amount_cents, currency, project, "
                                            "note FROM lines WHERE id > ?", "params": ["{mx.line}"]},
            "expect": {"op": "table", "rows": rows, "normalize": {"merchant": "text"}}}


#: my draft reports that a new small line leaves submittable (no line over its limit, none missing a receipt)
_CLEAN_DRAFT = ("SELECT r.id AS rid, r.title FROM reports r WHERE r.employee_id = 1 AND r.status = 'draft' AND NOT EXISTS "
                "(SELECT 1 FROM lines l WHERE l.report_id = r.id AND (l.home_cents > (SELECT limit_cents FROM policy p "
                "WHERE p.category = l.category) OR (l.home_cents > 7500 AND NOT EXISTS (SELECT 1 FROM receipts rc WHERE "
                "rc.line_id = l.id)))) ORDER BY r.id")
_ANY_DRAFT = "SELECT r.id AS rid, r.title FROM reports r WHERE r.employee_id = 1 AND r.status = 'draft' ORDER BY r.id"


def _events(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"check": "the reports' history gained exactly these events",
            "get": {"kind": "sql", "query": "SELECT report_id, action, comment FROM report_events WHERE id > ? ORDER BY id",
                    "params": ["{mx.ev}"]},
            "expect": {"op": "table", "ordered": True, "rows": rows}}


def add_line(scope: str) -> dict[str, Any] | None:
    """Add a line to a draft report; the near miss types an amount nine dollars off."""
    if scope:
        return None
    return {
        "phrasings": ['Add a line to my draft expense report "{r.title}": {n.day}, {n.merchant}, ${n.amount} in US '
                      "dollars, category {n.category}, project {proj.code}.",
                      'On "{r.title}", add the {n.merchant} expense of {n.day}: ${n.amount} (USD), {n.category}, '
                      "charged to {proj.code}.",
                      'I forgot an expense in "{r.title}": {n.merchant} on {n.day}, ${n.amount}, {n.category}, project '
                      "{proj.code}. Add it as a line."],
        "params": {"r": {"type": "rows", "sql": _ANY_DRAFT}, "n": {"type": "rows", "sql": _NEW_SQL}, "proj": _PROJECT,
                   "mx": _MAXES},
        "judge": {"subgoals": [{"check": "the report is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/expenses/{r.rid}$"}}],
                  "checks": [_lines_are([_new_row("{r.rid}", "n")])],
                  "expected_changes": ["lines[id>{mx.line}]"]},
        "oracle": [{"click": 'a[data-nav="/expenses"]'}, {"click": '[data-report-id="{r.rid}"] a'},
                   *_add_line("n", "{n.amount}")],
        "near_miss": [{"click": 'a[data-nav="/expenses"]'}, {"click": '[data-report-id="{r.rid}"] a'},
                      *_add_line("n", "{n.wrong}")],
        "max_steps": 40,  # a line's form takes the agent many actions (the suite gives three lines 70)
        "tags": {"skills": ["navigate", "form", "select", "date"], "tier": 2},
    }


def _submitted(report: str) -> dict[str, Any]:
    return {"check": "the report is submitted and waits for a decision",
            "get": {"kind": "sql", "query": "SELECT employee_id, status, decided_by, decision_comment FROM reports "
                                            "WHERE id = ?", "params": [report]},
            "expect": {"op": "table", "rows": [{"employee_id": 1, "status": "submitted", "decided_by": None,
                                                "decision_comment": ""}]}}


def add_line_submit(scope: str) -> dict[str, Any] | None:
    """A chain: add a line to a draft report, then submit it; the near miss adds it and never submits."""
    if scope:
        return None
    start = [{"click": 'a[data-nav="/expenses"]'}, {"click": '[data-report-id="{r.rid}"] a'}, *_add_line("n", "{n.amount}")]
    return {
        "phrasings": ['Add {n.merchant} ({n.day}, ${n.amount} USD, {n.category}, project {proj.code}) to my draft '
                      'report "{r.title}" and submit the report.',
                      'Finish "{r.title}": add a line for {n.merchant} on {n.day}, ${n.amount} in dollars, category '
                      "{n.category}, project {proj.code}; then send it for approval.",
                      'Two steps on my expense report "{r.title}": 1. a new line, {n.merchant}, {n.day}, ${n.amount}, '
                      "{n.category}, {proj.code}; 2. submit it."],
        "params": {"r": {"type": "rows", "sql": _CLEAN_DRAFT}, "n": {"type": "rows", "sql": _NEW_SQL}, "proj": _PROJECT,
                   "mx": _MAXES},
        "judge": {"subgoals": [{"check": "the line is added", "get": {"kind": "sql", "query": "SELECT COUNT(*) FROM lines "
                                                                                           "WHERE id > ?",
                                                                      "params": ["{mx.line}"], "scalar": True},
                                "expect": {"op": "equals", "value": 1}}],
                  "checks": [_lines_are([_new_row("{r.rid}", "n")]), _submitted("{r.rid}"),
                             _events([{"report_id": "{r.rid}", "action": "submitted", "comment": ""}])],
                  "expected_changes": ["lines[id>{mx.line}]", "reports[id={r.rid}].status",
                                       "reports[id={r.rid}].submitted_at", "report_events[id>{mx.ev}]"]},
        "oracle": [*start, {"click": "[data-action=submit-report]"},
                   {"wait_for": '[data-report-id="{r.rid}"][data-status=submitted]'}],
        "near_miss": start,
        "max_steps": 50,  # version 1: the oracle ran out of 25
        "tags": {"skills": ["navigate", "form", "select", "date", "multi_step"], "tier": 3},
    }


_TITLES = {"type": "string", "values": ["Boston customer visit (Feb 2026)", "Team offsite supplies",
                                        "Client workshop Chicago", "Conference travel March"]}


def _create(title: str) -> list[Step]:
    return [{"click": 'a[data-nav="/expenses"]'}, {"fill": {"selector": "input[data-field=title]", "text": title}},
            {"click": "[data-action=create-report]"}, {"wait_for": "[data-form=line]"}]


def new_report(scope: str) -> dict[str, Any] | None:
    """A chain of three: create a report, add a line, submit it; the near miss stops before the submit."""
    if scope:
        return None
    start = [*_create("{title}"), *_add_line("n", "{n.amount}")]
    return {
        "phrasings": ['Create an expense report titled "{title}" with one line -- {n.merchant}, {n.day}, ${n.amount} '
                      "USD, {n.category}, project {proj.code} -- and submit it.",
                      'New expense report "{title}": add {n.merchant} ({n.day}, ${n.amount}, {n.category}, '
                      "{proj.code}) and send it for approval.",
                      'Claim ${n.amount} for {n.merchant} on {n.day} ({n.category}, project {proj.code}) in a new '
                      'report called "{title}", submitted.'],
        "params": {"title": _TITLES, "n": {"type": "rows", "sql": _NEW_SQL}, "proj": _PROJECT, "mx": _MAXES},
        "judge": {"subgoals": [_REPORT_EXISTS, _lines_count(1)],
                  "checks": [_new_report_is(), _lines_are([_new_row("{mx.next_report}", "n")]),
                             _events([{"report_id": "{mx.next_report}", "action": "created", "comment": ""},
                                      {"report_id": "{mx.next_report}", "action": "submitted", "comment": ""}])],
                  "expected_changes": ["reports[id>{mx.report}]", "lines[id>{mx.line}]", "report_events[id>{mx.ev}]"]},
        "oracle": [*start, {"click": "[data-action=submit-report]"}, {"wait_for": "[data-report-id][data-status=submitted]"}],
        "near_miss": start,
        "max_steps": 60,
        "tags": {"skills": ["form", "select", "date", "multi_step"], "tier": 4},
    }


_REPORT_EXISTS = {"check": "the report exists", "get": {"kind": "sql", "query": "SELECT COUNT(*) FROM reports WHERE id > ?",
                                                        "params": ["{mx.report}"], "scalar": True},
                  "expect": {"op": "equals", "value": 1}}


def _lines_count(n: int) -> dict[str, Any]:
    return {"check": f"{n} line(s) are on it", "get": {"kind": "sql", "query": "SELECT COUNT(*) FROM lines WHERE id > ?",
                                                      "params": ["{mx.line}"], "scalar": True},
            "expect": {"op": "equals", "value": n}}


def _new_report_is() -> dict[str, Any]:
    return {"check": "one new report, mine, with that title, submitted and undecided",
            "get": {"kind": "sql", "query": "SELECT employee_id, title, status, decided_by, decision_comment FROM reports "
                                            "WHERE id > ?", "params": ["{mx.report}"]},
            "expect": {"op": "table", "normalize": {"title": "text"},
                       "rows": [{"employee_id": 1, "title": "{title}", "status": "submitted", "decided_by": None,
                                 "decision_comment": ""}]}}


def new_report_total(scope: str) -> dict[str, Any] | None:
    """A chain of five that ends with a question: create a report, add two lines, submit it, then its total;
    the near miss does the four and answers the first line's amount."""
    if scope:
        return None
    start = [*_create("{title}"), *_add_line("n", "{n.amount}"), *_add_line("m", "{m.amount}"),
             {"click": "[data-action=submit-report]"}, {"wait_for": "[data-report-id][data-status=submitted]"}]
    return {
        "phrasings": ['Create an expense report "{title}" with two lines in US dollars on project {proj.code}: '
                      "{n.merchant} ({n.day}, ${n.amount}, {n.category}) and {m.merchant} ({m.day}, ${m.amount}, "
                      "{m.category}). Submit it, then tell me its total in dollars.",
                      'New report "{title}", project {proj.code}: line 1 {n.merchant}, {n.day}, ${n.amount}, '
                      "{n.category}; line 2 {m.merchant}, {m.day}, ${m.amount}, {m.category}. Send it for approval "
                      "and report the total.",
                      'Claim {n.merchant} (${n.amount}, {n.day}, {n.category}) and {m.merchant} (${m.amount}, {m.day}, '
                      '{m.category}) on {proj.code} in a new report "{title}"; submit it and answer with what it '
                      "totals."],
        "params": {"title": _TITLES, "n": {"type": "rows", "sql": _NEW_SQL},
                   "m": {"type": "rows", "sql": "SELECT * FROM (" + _NEW_SQL + ") WHERE k != ? AND day != ?",
                         "params": ["{n.k}", "{n.day}"]},
                   "proj": _PROJECT, "mx": _MAXES,
                   "sum": {"type": "rows", "sql": "SELECT " + _eur("x + y") + " AS total FROM (SELECT CAST(? AS INTEGER) "
                                                  "AS x, CAST(? AS INTEGER) AS y)", "params": ["{n.cents}", "{m.cents}"]}},
        "judge": {"subgoals": [_REPORT_EXISTS, _lines_count(1), _lines_count(2)],
                  "checks": [_new_report_is(),
                             _lines_are([_new_row("{mx.next_report}", "n"), _new_row("{mx.next_report}", "m")]),
                             _events([{"report_id": "{mx.next_report}", "action": "created", "comment": ""},
                                      {"report_id": "{mx.next_report}", "action": "submitted", "comment": ""}]),
                             {"check": "the answer is the report's total", "get": {"kind": "answer"},
                              "expect": {"op": "money", "value": "{sum.total}", "currency": "USD"}}],
                  "expected_changes": ["reports[id>{mx.report}]", "lines[id>{mx.line}]", "report_events[id>{mx.ev}]"]},
        "oracle": [*start, {"done": {"answer": "${sum.total}"}}],
        "near_miss": [*start, {"done": {"answer": "${n.amount}"}}],
        "max_steps": 90,  # version 1: the oracle ran out of 45
        "tags": {"skills": ["form", "select", "date", "sum", "answer", "multi_step"], "tier": 4},
    }


# --- approvals --------------------------------------------------------------------------------------------

_WAITING = ("SELECT r.id, r.title, e.name AS who, (SELECT MAX(id) FROM report_events) AS ev FROM reports r JOIN employees e "
            "ON e.id = r.employee_id WHERE r.status = 'submitted' AND e.manager_id = 1 "
            "AND (SELECT COUNT(*) FROM reports x WHERE x.employee_id = r.employee_id AND x.title = r.title) = 1 ORDER BY r.id")
_REASONS = {"type": "string", "values": ["Please itemise the hotel bill.", "Wrong project code: this belongs to PLT-220.",
                                         "Split the client dinner by attendee, please."]}
_ON_APPROVALS = {"check": "the approvals are open", "get": {"kind": "url", "part": "path"},
                 "expect": {"op": "regex", "pattern": "^/approvals"}}


def _decide(kind: str, ident: str, action: str, comment: str | None) -> list[Step]:
    steps: list[Step] = [{"click": '[data-approval="' + kind + ":" + ident + '"] [data-action=review]'}]
    if comment is not None:
        steps.append({"fill": {"selector": "textarea[data-field=comment]", "text": comment}})
    # the approvals list again (the review page has no [data-approval]): version 1 awaited the navigation's link,
    # which the review page has too
    return [*steps, {"click": f"[data-action={action}]"}, {"wait_for": "[data-approval]"}]


def _decided(report: str, status: str, comment: str) -> dict[str, Any]:
    return {"check": f"that report is {status}, by me, with exactly that comment",
            "get": {"kind": "sql", "query": "SELECT status, decided_by, decision_comment FROM reports WHERE id = ?",
                    "params": [report]},
            "expect": {"op": "table", "rows": [{"status": status, "decided_by": 1, "decision_comment": comment}],
                       "normalize": {"decision_comment": "text"}}}


def _decision_changes(report: str) -> list[str]:
    return [f"reports[id={report}].{c}" for c in ("status", "decided_by", "decision_comment", "decided_at")]


def decide_expense(action: str) -> Operation:
    """Approve (no comment) or reject (with a comment) one direct report's expense report; the near miss
    approves another one, or approves this one with the comment."""
    def op(scope: str) -> dict[str, Any] | None:
        if scope:
            return None
        approve = action == "approve"
        status = "approved" if approve else "rejected"
        comment = "" if approve else "{reason}"
        params: dict[str, Any] = {"r": {"type": "rows", "sql": _WAITING}}
        if approve:
            params["o"] = {"type": "rows", "sql": "SELECT id FROM (" + _WAITING + ") WHERE id != ?", "params": ["{r.id}"]}
            says = ["Approve {r.who}'s expense report \"{r.title}\".",
                    "{r.who} is waiting on \"{r.title}\": approve it, without a comment.",
                    "Sign off {r.who}'s report \"{r.title}\" (approve it)."]
            near = [{"click": 'a[data-nav="/approvals"]'}, *_decide("expense", "{o.id}", "approve", None)]
        else:
            params["reason"] = _REASONS
            says = ["Reject {r.who}'s expense report \"{r.title}\" with the comment \"{reason}\".",
                    "Send \"{r.title}\" back to {r.who}: reject it, comment \"{reason}\".",
                    "{r.who}'s report \"{r.title}\" cannot be approved as is. Reject it and write \"{reason}\"."]
            near = [{"click": 'a[data-nav="/approvals"]'}, *_decide("expense", "{r.id}", "approve", "{reason}")]
        return {
            "phrasings": says, "params": params,
            "judge": {"subgoals": [_ON_APPROVALS],
                      "checks": [_decided("{r.id}", status, comment),
                                 {"check": "its history holds the decision and nothing else happened to any report",
                                  "get": {"kind": "sql", "query": "SELECT report_id, action, comment FROM report_events "
                                                                  "WHERE id > ?", "params": ["{r.ev}"]},
                                  "expect": {"op": "table", "rows": [{"report_id": "{r.id}", "action": status,
                                                                      "comment": comment}],
                                             "normalize": {"comment": "text"}}}],
                      "expected_changes": [*_decision_changes("{r.id}"), "report_events[id>{r.ev}]"]},
            "oracle": [{"click": 'a[data-nav="/approvals"]'},
                       *_decide("expense", "{r.id}", action, None if approve else "{reason}")],
            "near_miss": near,
            "max_steps": 15,
            "tags": {"skills": ["navigate", "approve", *([] if approve else ["form"])], "tier": 2},
        }
    return op


_PENDING = ("SELECT t.id, e.name AS who, t.kind, t.start_day, t.end_day FROM time_off t JOIN employees e ON "
            "e.id = t.employee_id WHERE t.status = 'pending' AND e.manager_id = 1 ORDER BY t.id")


def decide_time_off(action: str) -> Operation:
    """Approve or reject (with a comment) a direct report's time off; the near miss decides another
    person's request, or approves this one."""
    def op(scope: str) -> dict[str, Any] | None:
        if scope:
            return None
        approve = action == "approve"
        status = "approved" if approve else "rejected"
        comment = "" if approve else "{reason}"
        params: dict[str, Any] = {"t": {"type": "rows", "sql": _PENDING},
                                  "o": {"type": "rows", "sql": "SELECT id FROM (" + _PENDING + ") WHERE id != ?",
                                        "params": ["{t.id}"]}}
        if approve:
            says = ["Approve {t.who}'s {t.kind} request for {t.start_day} to {t.end_day}.",
                    "{t.who} asked for {t.kind} from {t.start_day} through {t.end_day}: approve it.",
                    "Say yes to {t.who}'s time off ({t.kind}, {t.start_day} - {t.end_day})."]
            near = [{"click": 'a[data-nav="/approvals"]'}, *_decide("time-off", "{o.id}", "approve", None)]
        else:
            params["reason"] = {"type": "string", "values": ["We have the release that week.",
                                                             "Please move it by a week: the team is short then.",
                                                             "Overlaps the on-call rotation."]}
            says = ["Reject {t.who}'s {t.kind} request for {t.start_day} to {t.end_day}, with the comment \"{reason}\".",
                    "Decline {t.who}'s time off ({t.start_day} - {t.end_day}); comment: \"{reason}\".",
                    "{t.who} cannot take {t.start_day} to {t.end_day} off. Reject the request and write \"{reason}\"."]
            near = [{"click": 'a[data-nav="/approvals"]'}, *_decide("time-off", "{t.id}", "approve", "{reason}")]
        return {
            "phrasings": says, "params": params,
            "judge": {"subgoals": [_ON_APPROVALS],
                      "checks": [{"check": f"that request is {status}, by me, with exactly that comment",
                                  "get": {"kind": "sql", "query": "SELECT status, decided_by, decision_comment FROM "
                                                                  "time_off WHERE id = ?", "params": ["{t.id}"]},
                                  "expect": {"op": "table", "normalize": {"decision_comment": "text"},
                                             "rows": [{"status": status, "decided_by": 1, "decision_comment": comment}]}}],
                      "expected_changes": [f"time_off[id={{t.id}}].{c}" for c in ("status", "decided_by", "decided_at",
                                                                                   "decision_comment")]},
            "oracle": [{"click": 'a[data-nav="/approvals"]'},
                       *_decide("time-off", "{t.id}", action, None if approve else "{reason}")],
            "near_miss": near,
            "max_steps": 15,
            "tags": {"skills": ["navigate", "approve", *([] if approve else ["form"])], "tier": 2},
        }
    return op


def approve_under(scope: str) -> dict[str, Any] | None:
    """Bulk with a filter: approve exactly the waiting reports under a dollar limit (two of them); the near
    miss approves one over it as well."""
    if scope:
        return None
    # limits in steps of $5: two totals close together still leave one that has exactly two under it
    lim = ("WITH RECURSIVE w AS (SELECT r.id, (SELECT SUM(home_cents) FROM lines WHERE report_id = r.id) AS total FROM "
           "reports r JOIN employees e ON e.id = r.employee_id WHERE r.status = 'submitted' AND e.manager_id = 1), "
           "l(dollars) AS (SELECT 20 UNION ALL SELECT dollars + 5 FROM l WHERE dollars < 5000) "
           "SELECT l.dollars, (SELECT MIN(id) FROM w WHERE total < l.dollars * 100) AS a, (SELECT MAX(id) FROM w WHERE "
           "total < l.dollars * 100) AS b, (SELECT MIN(id) FROM w WHERE total >= l.dollars * 100) AS over, (SELECT MAX(id) "
           "FROM report_events) AS ev FROM l WHERE (SELECT COUNT(*) FROM w WHERE total < l.dollars * 100) = 2 AND EXISTS "
           "(SELECT 1 FROM w WHERE total >= l.dollars * 100)")
    return {
        "phrasings": ["Approve every expense report waiting for my approval that totals less than ${lim.dollars}. Leave "
                      "the others waiting for me.",
                      "Of the expense reports I still have to decide, approve those under ${lim.dollars} in total, and "
                      "only those.",
                      "Clear the small ones: approve each waiting expense report below ${lim.dollars}; do not touch the "
                      "rest."],
        "params": {"lim": {"type": "rows", "sql": lim}},
        "judge": {"subgoals": [_ON_APPROVALS],
                  "checks": [_decided("{lim.a}", "approved", ""), _decided("{lim.b}", "approved", ""),
                             {"check": "the history holds those two approvals and nothing else",
                              "get": {"kind": "sql", "query": "SELECT report_id, action, comment FROM report_events "
                                                              "WHERE id > ?", "params": ["{lim.ev}"]},
                              "expect": {"op": "table", "rows": [{"report_id": "{lim.a}", "action": "approved",
                                                                  "comment": ""},
                                                                 {"report_id": "{lim.b}", "action": "approved",
                                                                  "comment": ""}]}}],
                  "expected_changes": [*_decision_changes("{lim.a}"), *_decision_changes("{lim.b}"),
                                       "report_events[id>{lim.ev}]"]},
        "oracle": [{"click": 'a[data-nav="/approvals"]'}, *_decide("expense", "{lim.a}", "approve", None),
                   *_decide("expense", "{lim.b}", "approve", None)],
        "near_miss": [{"click": 'a[data-nav="/approvals"]'}, *_decide("expense", "{lim.a}", "approve", None),
                      *_decide("expense", "{lim.b}", "approve", None), *_decide("expense", "{lim.over}", "approve", None)],
        "max_steps": 25,
        "tags": {"skills": ["navigate", "approve", "filter", "bulk"], "tier": 3},
    }


def approve_reject_ask(scope: str) -> dict[str, Any] | None:
    """A chain that ends with a question: approve one waiting report, reject another with a comment, then how
    many still wait for me; the near miss answers the count before the decisions."""
    if scope:
        return None
    waiting = ("(SELECT COUNT(*) FROM reports x JOIN employees y ON y.id = x.employee_id WHERE x.status = 'submitted' "
               "AND y.manager_id = 1)")
    return {
        "phrasings": ['Approve {r.who}\'s expense report "{r.title}", reject {s.who}\'s "{s.title}" with the comment '
                      '"{reason}", and then tell me how many expense reports still wait for my approval.',
                      'Two decisions: "{r.title}" ({r.who}) approved; "{s.title}" ({s.who}) rejected, comment "{reason}". '
                      "After that, how many reports are left waiting for me? A number only.",
                      'Decide {r.who}\'s "{r.title}" (approve) and {s.who}\'s "{s.title}" (reject: "{reason}"), then '
                      "count the expense reports still waiting for my decision."],
        "params": {"r": {"type": "rows", "sql": _WAITING},
                   "s": {"type": "rows", "sql": "SELECT * FROM (" + _WAITING + ") WHERE id != ?", "params": ["{r.id}"]},
                   "reason": _REASONS,
                   "n": {"type": "rows", "sql": f"SELECT {waiting} - 2 AS left, {waiting} AS before"}},
        "judge": {"subgoals": [_ON_APPROVALS],
                  "checks": [_decided("{r.id}", "approved", ""), _decided("{s.id}", "rejected", "{reason}"),
                             {"check": "the history holds the two decisions and nothing else",
                              "get": {"kind": "sql", "query": "SELECT report_id, action, comment FROM report_events "
                                                              "WHERE id > ?", "params": ["{r.ev}"]},
                              "expect": {"op": "table", "normalize": {"comment": "text"},
                                         "rows": [{"report_id": "{r.id}", "action": "approved", "comment": ""},
                                                  {"report_id": "{s.id}", "action": "rejected", "comment": "{reason}"}]}},
                             {"check": "the answer is the number still waiting", "get": {"kind": "answer"},
                              "expect": {"op": "number", "value": "{n.left}"}}],
                  "expected_changes": [*_decision_changes("{r.id}"), *_decision_changes("{s.id}"),
                                       "report_events[id>{r.ev}]"]},
        "oracle": [{"click": 'a[data-nav="/approvals"]'}, *_decide("expense", "{r.id}", "approve", None),
                   *_decide("expense", "{s.id}", "reject", "{reason}"), {"done": {"answer": "{n.left}"}}],
        "near_miss": [{"click": 'a[data-nav="/approvals"]'}, *_decide("expense", "{r.id}", "approve", None),
                      *_decide("expense", "{s.id}", "reject", "{reason}"), {"done": {"answer": "{n.before}"}}],
        "max_steps": 25,
        "tags": {"skills": ["navigate", "approve", "form", "count", "answer", "multi_step"], "tier": 4},
    }


def currency_then_total(scope: str) -> dict[str, Any]:
    """A chain that ends with a question: change a line's currency (the app converts it), then the report's
    total in dollars; the near miss answers the total before the change."""
    total = "(SELECT SUM(home_cents) FROM lines WHERE report_id = ?)"
    return {
        "phrasings": ['The {l.merchant} line of {l.day} in my draft report "{l.title}" was paid in {new_currency.v}, '
                      "not {l.currency}. Change its currency, then tell me the report's new total in dollars.",
                      'Set the currency of the {l.day} {l.merchant} line in "{l.title}" to {new_currency.v} and report '
                      "what the report totals afterwards (USD).",
                      'Fix "{l.title}": {l.merchant} ({l.day}) is in {new_currency.v}. After saving, answer with the '
                      "report's total in dollars."],
        "params": {"l": _line(scope), **_new("currency", wrong=False),
                   "h": {"type": "rows", "sql": f"SELECT (CAST(? AS INTEGER) * {_rate('?')} + 5000) / 10000 AS home",
                         "params": ["{l.amount_cents}", "{new_currency.v}"]},
                   "sum": {"type": "rows", "sql": f"SELECT {_eur(total + ' - CAST(? AS INTEGER) + CAST(? AS INTEGER)')} "
                                                  f"AS after, {_eur(total)} AS before",
                           "params": ["{l.rid}", "{l.home_cents}", "{h.home}", "{l.rid}", "{l.home_cents}", "{h.home}",
                                      "{l.rid}", "{l.rid}"]}},
        "judge": {"subgoals": [_ON_REPORT],
                  "checks": [{"check": "the line is in the new currency, converted at the company rate, the rest as it was",
                              "get": {"kind": "sql", "query": f"SELECT {_LINE_COLS} FROM lines WHERE id = ?",
                                      "params": ["{l.id}"]},
                              "expect": {"op": "table", "rows": [{
                                  "report_id": "{l.rid}", "day": "{l.day}", "merchant": "{l.merchant}",
                                  "category": "{l.category}", "amount_cents": "{l.amount_cents}",
                                  "currency": "{new_currency.v}", "home_cents": "{h.home}", "project": "{l.project}",
                                  "note": "{l.note}"}]}},
                             {"check": "the answer is the report's new total", "get": {"kind": "answer"},
                              "expect": {"op": "money", "value": "{sum.after}", "currency": "USD"}}],
                  "expected_changes": ["lines[id={l.id}].currency", "lines[id={l.id}].home_cents"]},
        "oracle": [*_OPEN_REPORT, _EDIT_LINE, _set("currency", "new_currency.v"), {"click": "[data-action=save-line]"},
                   {"wait_for": '[data-line-id="{l.id}"]'}, {"done": {"answer": "${sum.after}"}}],
        "near_miss": [*_OPEN_REPORT, _EDIT_LINE, _set("currency", "new_currency.v"), {"click": "[data-action=save-line]"},
                      {"wait_for": '[data-line-id="{l.id}"]'}, {"done": {"answer": "${sum.before}"}}],
        "max_steps": 20,
        "tags": {"skills": ["navigate", "form", "select", "currency", "read", "answer", "multi_step"], "tier": 3},
    }


# --- time off --------------------------------------------------------------------------------------------

def _ranges() -> str:
    """Candidate requests in 2026 after the app's clock (Monday 2026-03-02): (start, end, working days, one
    day later, kind) over weeks Monday to Friday, none with a company holiday in them."""
    rows = []
    monday = dt.date(2026, 3, 9)
    spans = ((1, 3, 3), (0, 1, 2), (2, 2, 1), (0, 4, 5), (3, 4, 2))
    k = 0
    while monday.year == 2026 and monday < dt.date(2026, 11, 30):
        a, b, days = spans[k % len(spans)]
        start, end = monday + dt.timedelta(days=a), monday + dt.timedelta(days=b)
        kind = "personal" if days == 1 and k % 2 else "vacation"
        rows.append(f"('{start}', '{end}', {days}, '{end + dt.timedelta(days=1)}', '{kind}')")
        monday += dt.timedelta(days=7)
        k += 1
    return "(VALUES " + ", ".join(rows) + ")"


_AVAILABLE = ("(SELECT allowance_days FROM balances WHERE employee_id = 1 AND kind = v.column5 AND year = 2026) - "
              "(SELECT COALESCE(SUM(days), 0) FROM time_off WHERE employee_id = 1 AND kind = v.column5 AND status IN "
              "('approved', 'pending') AND substr(start_day, 1, 4) = '2026')")
_RANGE_SQL = ("SELECT v.column1 AS start, v.column2 AS end, v.column3 AS days, v.column4 AS late, v.column5 AS kind, "
              "(SELECT MAX(id) FROM time_off) AS t FROM " + _ranges() + " v WHERE NOT EXISTS (SELECT 1 FROM holidays h "
              "WHERE h.day BETWEEN v.column1 AND v.column4) AND NOT EXISTS (SELECT 1 FROM time_off o WHERE "
              "o.employee_id = 1 AND o.status IN ('pending', 'approved') AND NOT (o.end_day < v.column1 OR o.start_day > "
              f"v.column4)) AND {_AVAILABLE} >= v.column3 + 1 ORDER BY v.column1")


def _request(end: str) -> list[Step]:
    return [{"click": 'a[data-nav="/time-off"]'}, {"select": {"selector": "select[data-field=kind]", "option": "{h.kind}"}},
            {"fill": {"selector": "input[data-field=start]", "text": "{h.start}"}},
            {"fill": {"selector": "input[data-field=end]", "text": end}}, {"click": "[data-action=request-time-off]"},
            {"wait_for": '[data-request-id][data-start="{h.start}"]'}]


def request_time_off(scope: str) -> dict[str, Any] | None:
    """Request time off for a range of working days; the near miss ends it a day later."""
    if scope:
        return None
    return {
        "phrasings": ["Request {h.kind} time off from {h.start} through {h.end} ({h.days} working days).",
                      "Book {h.start} to {h.end} off as {h.kind}: {h.days} working day(s), no note.",
                      "I need {h.kind} leave from {h.start} until {h.end} inclusive. Send the request."],
        "params": {"h": {"type": "rows", "sql": _RANGE_SQL}},
        "judge": {"subgoals": [{"check": "the time-off page is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/time-off"}}],
                  "checks": [{"check": "one new request of mine, exactly those dates and working days, waiting",
                              "get": {"kind": "sql", "query": "SELECT employee_id, kind, start_day, end_day, days, status, "
                                                              "note, decision_comment FROM time_off WHERE id > ?",
                                      "params": ["{h.t}"]},
                              "expect": {"op": "table", "rows": [{"employee_id": 1, "kind": "{h.kind}",
                                                                  "start_day": "{h.start}", "end_day": "{h.end}",
                                                                  "days": "{h.days}", "status": "pending", "note": "",
                                                                  "decision_comment": ""}]}}],
                  "expected_changes": ["time_off[id>{h.t}]"]},
        "oracle": _request("{h.end}"),
        "near_miss": _request("{h.late}"),
        "max_steps": 15,
        "tags": {"skills": ["form", "date", "select"], "tier": 2},
    }


def cancel_time_off(scope: str) -> dict[str, Any] | None:
    """Cancel my pending request; the near miss opens the page and leaves it."""
    if scope:
        return None
    return {
        "phrasings": ["Cancel my pending {p.kind} request for {p.start_day} to {p.end_day}.",
                      "Withdraw the {p.kind} request I made for {p.start_day} - {p.end_day}; it is still pending.",
                      "I no longer need {p.start_day} to {p.end_day} off: cancel that request."],
        "params": {"p": {"type": "rows", "sql": "SELECT id, kind, start_day, end_day FROM time_off WHERE employee_id = 1 "
                                                "AND status = 'pending' ORDER BY id"}},
        "judge": {"subgoals": [{"check": "the time-off page is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/time-off"}}],
                  "checks": [{"check": "that request is cancelled",
                              "get": {"kind": "sql", "query": "SELECT status, decided_by, decision_comment FROM time_off "
                                                              "WHERE id = ?", "params": ["{p.id}"]},
                              "expect": {"op": "table", "rows": [{"status": "cancelled", "decided_by": None,
                                                                  "decision_comment": ""}]}}],
                  "expected_changes": ["time_off[id={p.id}].status", "time_off[id={p.id}].decided_at"]},
        "oracle": [{"click": 'a[data-nav="/time-off"]'}, {"click": '[data-request-id="{p.id}"] [data-action=cancel-request]'},
                   {"wait_for": '[data-request-id="{p.id}"][data-status=cancelled]'}],
        "near_miss": [{"click": 'a[data-nav="/time-off"]'}, {"wait_for": '[data-request-id="{p.id}"]'}],
        "max_steps": 8,
        "tags": {"skills": ["navigate", "cancel"], "tier": 1},
    }


# --- profile ---------------------------------------------------------------------------------------------

def emergency(scope: str) -> dict[str, Any] | None:
    """Change the emergency contact (three fields in one save); the near miss swaps two digits of the phone."""
    if scope:
        return None
    fill = [{"click": 'a[data-nav="/profile"]'}, {"fill": {"selector": "input[data-field=emergency_name]", "text": "{c.name}"}},
            {"fill": {"selector": "input[data-field=emergency_relation]", "text": "{c.relation}"}}]
    return {
        "phrasings": ["Change my emergency contact to {c.name} ({c.relation}), phone {c.phone}.",
                      "My emergency contact is now {c.name}, my {c.relation}, reachable at {c.phone}. Update it.",
                      "Update the emergency contact in my profile: {c.name}, relationship {c.relation}, {c.phone}."],
        "params": {"c": {"type": "rows", "sql": "SELECT column1 AS name, column2 AS relation, column3 AS phone, column4 AS "
                                                "wrong FROM (VALUES ('Dana Ellis', 'Sister', '+1 617 555 0142', "
                                                "'+1 617 555 0124'), ('Priya Raman', 'Partner', '+1 857 555 0199', "
                                                "'+1 857 555 0919'), ('Tomás Herrera', 'Friend', '+1 781 555 0173', "
                                                "'+1 781 555 0137'), ('Grace Okafor', 'Spouse', '+1 617 555 0108', "
                                                "'+1 617 555 0180'))"}},
        "judge": {"subgoals": [_ON_PROFILE],
                  "checks": [{"check": "the emergency contact is that person, relationship and number",
                              "get": {"kind": "sql", "query": "SELECT emergency_name, emergency_relation, emergency_phone "
                                                              "FROM profile WHERE id = 1"},
                              "expect": {"op": "table", "normalize": {"emergency_name": "text",
                                                                      "emergency_relation": "text",
                                                                      "emergency_phone": "phone"},
                                         "rows": [{"emergency_name": "{c.name}", "emergency_relation": "{c.relation}",
                                                   "emergency_phone": "{c.phone}"}]}}],
                  "expected_changes": ["profile[id=1].emergency_name", "profile[id=1].emergency_relation",
                                       "profile[id=1].emergency_phone"]},
        "oracle": [*fill, {"fill": {"selector": "input[data-field=emergency_phone]", "text": "{c.phone}"}},
                   {"click": "[data-action=save-emergency]"}, {"wait_for": "[data-saved]"}],
        "near_miss": [*fill, {"fill": {"selector": "input[data-field=emergency_phone]", "text": "{c.wrong}"}},
                      {"click": "[data-action=save-emergency]"}, {"wait_for": "[data-saved]"}],
        "max_steps": 12,
        "tags": {"skills": ["form"], "tier": 2},
    }


_ON_PROFILE = {"check": "the profile is open", "get": {"kind": "url", "part": "path"},
               "expect": {"op": "regex", "pattern": "^/profile"}}


def address(scope: str) -> dict[str, Any] | None:
    """A move: street, city and postal code in one save (the country stays); the near miss leaves the old
    postal code."""
    if scope:
        return None
    start = [{"click": 'a[data-nav="/profile"]'}, {"fill": {"selector": "input[data-field=street]", "text": "{a.street}"}},
             {"fill": {"selector": "input[data-field=city]", "text": "{a.city}"}}]
    return {
        "phrasings": ["I moved: my address is now {a.street}, {a.city} {a.zip}. Update my profile.",
                      "Change my home address to {a.street}, {a.city}, postal code {a.zip} (same country).",
                      "New address for my HR profile: street {a.street}, city {a.city}, postal code {a.zip}."],
        "params": {"a": {"type": "rows", "sql": "SELECT column1 AS street, column2 AS city, column3 AS zip FROM (VALUES "
                                                "('88 Tremont St', 'Boston, MA', '02108'), ('17 Elm Ave', 'Cambridge, MA', "
                                                "'02139'), ('402 Harvard St', 'Brookline, MA', '02446'))"}},
        "judge": {"subgoals": [_ON_PROFILE],
                  "checks": [{"check": "the address is the new one, in the same country",
                              "get": {"kind": "sql", "query": "SELECT street, city, postal_code, country FROM profile "
                                                              "WHERE id = 1"},
                              "expect": {"op": "table", "normalize": {"street": "address", "city": "text"},
                                         "rows": [{"street": "{a.street}", "city": "{a.city}", "postal_code": "{a.zip}",
                                                   "country": "United States"}]}}],
                  "expected_changes": ["profile[id=1].street", "profile[id=1].city", "profile[id=1].postal_code"]},
        "oracle": [*start, {"fill": {"selector": "input[data-field=postal_code]", "text": "{a.zip}"}},
                   {"click": "[data-action=save-address]"}, {"wait_for": "[data-saved]"}],
        "near_miss": [*start, {"click": "[data-action=save-address]"}, {"wait_for": "[data-saved]"}],
        "max_steps": 12,
        "tags": {"skills": ["form"], "tier": 2},
    }


# --- people and pay: questions ---------------------------------------------------------------------------

def _open_person(p: str) -> list[Step]:
    return [{"click": 'a[data-nav="/people"]'}, {"fill": {"selector": "input[data-filter=q]", "text": "{" + p + ".name}"}},
            {"click": "[data-action=search-people]"}, {"click": '[data-person-id="{' + p + '.id}"] [data-person-name]'},
            {"wait_for": "[data-field=office]"}]


_ON_PEOPLE = {"check": "the directory is open", "get": {"kind": "url", "part": "path"},
              "expect": {"op": "regex", "pattern": "^/people"}}
#: find: (the words, the column answered, the SQL of its value, the comparator)
_FINDS = {"manager": ("manager", "m.name", "text"), "office": ("office", "e.office", "text"),
          "email": ("e-mail address", "e.email", "text")}


def find_person(what: str) -> Operation:
    """A colleague's manager, office or e-mail; the near miss answers another colleague's (a different value)."""
    words, col, cmp = _FINDS[what]
    # a name the directory search finds alone (no other employee has it)
    rows = (f"SELECT e.id, e.name, {col} AS v FROM employees e JOIN employees m ON m.id = e.manager_id WHERE e.id != 1 "
            "AND (SELECT COUNT(*) FROM employees x WHERE x.name = e.name) = 1 ORDER BY e.id")

    def op(scope: str) -> dict[str, Any] | None:
        if scope:
            return None
        return {
            "phrasings": [f"What is {{p.name}}'s {words}? Answer with just that.",
                          f"Look up {{p.name}} in the directory and tell me their {words}.",
                          f"Find {{p.name}}'s {words}; reply with it and nothing else."],
            "params": {"p": {"type": "rows", "sql": rows},
                       "o": {"type": "rows", "sql": "SELECT * FROM (" + rows + ") WHERE v != ?", "params": ["{p.v}"]}},
            "judge": {"subgoals": [_ON_PEOPLE],
                      "checks": [{"check": f"the answer is the {words}", "get": {"kind": "answer"},
                                  "expect": {"op": cmp, "value": "{p.v}"}}],
                      "expected_changes": []},
            "oracle": [*_open_person("p"), {"done": {"answer": "{p.v}"}}],
            "near_miss": [*_open_person("p"), {"done": {"answer": "{o.v}"}}],
            "max_steps": 12,
            "tags": {"skills": ["search", "navigate", "answer"], "tier": 1},
        }
    return op


def compare_start(scope: str) -> dict[str, Any] | None:
    """Which of two colleagues of one team joined first; the near miss names the other."""
    if scope:
        return None
    rows = ("SELECT a.id AS a_id, a.name AS a, b.id AS b_id, b.name AS b, CASE WHEN a.start_date < b.start_date THEN a.name "
            "ELSE b.name END AS first, CASE WHEN a.start_date < b.start_date THEN b.name ELSE a.name END AS later "
            "FROM employees a JOIN employees b ON b.team_id = a.team_id AND a.id < b.id AND a.start_date != b.start_date "
            "WHERE a.id != 1 AND b.id != 1 AND (SELECT COUNT(*) FROM employees x WHERE x.name IN (a.name, b.name)) = 2 "
            "ORDER BY a.id, b.id")
    return {
        "phrasings": ["Who joined the company first, {c.a} or {c.b}? Answer with the name.",
                      "Compare the start dates of {c.a} and {c.b}: which of them started earlier?",
                      "Of {c.a} and {c.b}, name the one who has been with the company longer."],
        "params": {"c": {"type": "rows", "sql": rows}},
        "judge": {"subgoals": [{"check": "a person's page was opened", "get": {"kind": "navigation",
                                                                                "url_path": "/people/{c.a_id}"},
                                "expect": {"op": "length", "min": 1}},
                               {"check": "the other person's page was opened", "get": {"kind": "navigation",
                                                                                        "url_path": "/people/{c.b_id}"},
                                "expect": {"op": "length", "min": 1}}],
                  "checks": [{"check": "the answer is the one who started first", "get": {"kind": "answer"},
                              "expect": {"op": "text", "value": "{c.first}"}}],
                  "expected_changes": []},
        "oracle": [{"goto": "/people/{c.a_id}"}, {"wait_for": "[data-field=start]"}, {"goto": "/people/{c.b_id}"},
                   {"wait_for": "[data-field=start]"}, {"done": {"answer": "{c.first}"}}],
        "near_miss": [{"goto": "/people/{c.a_id}"}, {"wait_for": "[data-field=start]"}, {"goto": "/people/{c.b_id}"},
                      {"wait_for": "[data-field=start]"}, {"done": {"answer": "{c.later}"}}],
        "max_steps": 15,
        "tags": {"skills": ["search", "read", "compare", "answer"], "tier": 3},
    }


def count_team_office(scope: str) -> dict[str, Any] | None:
    """How many of a team work in one office (the directory's filters); the near miss counts the whole team."""
    if scope:
        return None
    return {
        "phrasings": ["How many people of the {g.team} team work in the {g.office} office? Answer with a number.",
                      "Count the {g.team} team members based in {g.office}; reply with the number.",
                      "In {g.office}, how many people belong to {g.team}? A number only."],
        "params": {"g": {"type": "rows", "sql": "SELECT t.name AS team, e.office, COUNT(*) AS n, (SELECT COUNT(*) FROM "
                                                "employees x WHERE x.team_id = t.id) AS team_n FROM employees e JOIN teams "
                                                "t ON t.id = e.team_id GROUP BY t.id, e.office HAVING COUNT(*) >= 2 AND "
                                                "COUNT(*) < team_n ORDER BY t.name, e.office"}},
        "judge": {"subgoals": [_ON_PEOPLE],
                  "checks": [{"check": "the answer is that team's people in that office", "get": {"kind": "answer"},
                              "expect": {"op": "number", "value": "{g.n}"}}],
                  "expected_changes": []},
        "oracle": [{"click": 'a[data-nav="/people"]'}, {"select": {"selector": "select[data-filter=team]", "option": "{g.team}"}},
                   {"select": {"selector": "select[data-filter=office]", "option": "{g.office}"}},
                   {"click": "[data-action=search-people]"}, {"wait_for": '[data-count="{g.n}"]'},
                   {"done": {"answer": "{g.n}"}}],
        "near_miss": [{"click": 'a[data-nav="/people"]'},
                      {"select": {"selector": "select[data-filter=team]", "option": "{g.team}"}},
                      {"click": "[data-action=search-people]"}, {"done": {"answer": "{g.team_n}"}}],
        "max_steps": 20,
        "tags": {"skills": ["filter", "count", "answer"], "tier": 2},
    }


def net_pay(scope: str) -> dict[str, Any] | None:
    """A month's net pay; the near miss answers the gross."""
    if scope:
        return None
    return {
        "phrasings": ["What was my net pay for {m.label}? Answer with the amount in dollars.",
                      "Open my {m.label} payslip and tell me the net amount paid.",
                      "How much did I take home in {m.label} (net pay)?"],
        "params": {"m": {"type": "rows", "sql": "SELECT p.month, v.column2 AS label, " + _eur("p.net_cents") + " AS net, "
                                                + _eur("p.gross_cents") + " AS gross FROM payslips p JOIN (VALUES "
                                                "('2025-09', 'September 2025'), ('2025-10', 'October 2025'), "
                                                "('2025-11', 'November 2025'), ('2025-12', 'December 2025'), "
                                                "('2026-01', 'January 2026'), ('2026-02', 'February 2026')) v ON "
                                                "v.column1 = p.month ORDER BY p.month"}},
        "judge": {"subgoals": [{"check": "the payslips are open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/pay"}}],
                  "checks": [{"check": "the answer is that month's net pay, to the cent", "get": {"kind": "answer"},
                              "expect": {"op": "money", "value": "{m.net}", "currency": "USD"}}],
                  "expected_changes": []},
        "oracle": [{"click": 'a[data-nav="/pay"]'}, {"click": '[data-month="{m.month}"] a'}, {"wait_for": "[data-net-cents]"},
                   {"done": {"answer": "${m.net}"}}],
        "near_miss": [{"click": 'a[data-nav="/pay"]'}, {"click": '[data-month="{m.month}"] a'},
                      {"wait_for": "[data-net-cents]"}, {"done": {"answer": "${m.gross}"}}],
        "max_steps": 10,
        "tags": {"skills": ["navigate", "read", "answer"], "tier": 1},
    }


OPERATIONS: dict[str, Operation] = {
    "line:amount": line_edit(("amount",)), "line:currency": line_edit(("currency",)),
    "line:category": line_edit(("category",)), "line:project": line_edit(("project",)),
    "line:note": line_edit(("note",)), "line:category+project": line_edit(("category", "project")),
    "line:amount+category+note": line_edit(("amount", "category", "note")),
    "line:amount+currency+category+project+note": line_edit(("amount", "currency", "category", "project", "note")),
    "line:delete": line_delete, "line:add": add_line, "line:add+submit": add_line_submit,
    "report:new+line+submit": new_report, "report:new+line+line+submit>ask:total": new_report_total,
    "line:currency>ask:report_total": currency_then_total,
    "expense:approve": decide_expense("approve"), "expense:reject": decide_expense("reject"),
    "bulk:approve_under_limit": approve_under, "expense:approve+reject>ask:waiting": approve_reject_ask,
    "time_off:approve": decide_time_off("approve"), "time_off:reject": decide_time_off("reject"),
    "time_off:request": request_time_off, "time_off:cancel": cancel_time_off,
    "profile:emergency": emergency, "profile:address": address,
    "find:manager": find_person("manager"), "find:office": find_person("office"), "find:email": find_person("email"),
    "find:net_pay": net_pay, "compare:start_date": compare_start, "count:team_office": count_team_office,
}

DESCRIPTION = Description(app="hr", version=GENERATOR_VERSION, scopes=SCOPES, entities=(), extra=OPERATIONS,
                          test_chains=frozenset({"line:amount+currency+category+project+note",
                                                 "report:new+line+line+submit>ask:total", "compare:start_date"}))
SCHEMA: AppSchema = DESCRIPTION.schema()
