"""An outside prober's attacks on synthesised templates (issue 38, "done when" 3), built from the
app's whole schema and the episode's history rather than from the oracle's diff.

A template's *right end state* is read from what its judge asks for, in the forms an agent's
edit takes: a field of one record set (`SELECT col FROM t WHERE id = ?`, `t[id=N].col`, a row
check of one record), a record gone (`t[id=N]` absent), new records (a row check of
`WHERE id > ?`: inserted with the checked fields, the rest as the table's last row), an answer. A template whose checks ask for anything else is
not attackable here (`plan` returns None) and is left out of the sample, so the sample is
drawn among what this prober can build.

Every write an attack makes is one *request* of the agent: it goes to the app's database
between the activity log's `begin` and `end`, as a page request's write does, so the history
a judge reads holds it (`tasks/apps/activity.py`). The attacks, by class:

- `right`: the right end state, which must pass (a refusal is a false negative);
- `wrong_record`: the right change made to a copy of the record (same name, new id) instead,
  or to the record and a sibling of its table too; a new record put in another container (its
  first `*_id` field: another report, product, list);
- `other_table`: the right change plus an edit of one row of a table the judge does not expect
  to change, for every such table of the app that holds a row;
- `history`: the right change after a sibling's field was changed and put back (do-then-undo),
  or after a row of another table was deleted and put back (irreversible-then-erase);
- `equivalent`: the right change with an equivalent value (surrounding whitespace, an email's
  case), or an answer in an equivalent form, which must pass;
- `hedged`: an answer holding two values;
- `partial`: a chain's first operation done and its last not.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from _apps_common import Control, Running
from _apps_common import open_app as _open_fresh

from cua.actions import Done
from cua.state import AppStateQuery, SqlQuery, StateResult
from cua.synth.admit import Candidate, _load
from cua.synth.schema import Generated
from cua.task import JudgeInput, query_key
from cua.tasks.render import render

__all__ = ["Apps", "Attack", "Plan", "Write", "attacks_for", "changing", "load", "open_app", "plan", "run_attack", "services"]

#: a template's apps by service (`app`, and a workflow's other apps by name)
Apps = dict[str, Any]
_SIMPLE_SQL = re.compile(r"^SELECT (\w+) FROM (\w+) WHERE id = \?$")
_FIELD_PATH = re.compile(r"^(\w+)\[id=(\d+)\]\.(\w+)$")
_ROW_PATH = re.compile(r"^(\w+)\[id=(\d+)\]$")
_ROW_SQL = re.compile(r"^SELECT (\w+(?:, \w+)*) FROM (\w+) WHERE id = (\?|\d+)$")
_NEW_ROWS_SQL = re.compile(r"^SELECT (\w+(?:, \w+)*) FROM (\w+) WHERE id > \?( ORDER BY id)?$")
#: the typed comparisons whose value an agent's edit stores as given
_STORED_OPS = {"text", "email", "phone", "equals"}


@dataclass(frozen=True)
class Write:
    """One record's field set to `value`, or (column None) the record deleted; `op` is the judge's comparison."""

    table: str
    id: int
    column: str | None
    value: Any = None
    op: str = "equals"
    #: the app it is written in: `app` (the sandbox's own) or another app of a workflow, by name
    service: str = "app"
    #: a new record's checked fields (column and id unused): inserted, its other fields as the table's last row
    row: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Plan:
    """A template's right end state: its writes in the order asked, and its answer (if it asks one)."""

    writes: tuple[Write, ...]
    answer: Any = None
    answer_op: str = ""
    #: the judge's allowances rendered (expected, incidental and free changes), as text: a column named
    #: there may change, so an attack does not count a change of it as damage
    allowed: str = ""

    @property
    def tables(self) -> set[str]:
        return {w.table for w in self.writes}

    def tables_of(self, service: str) -> set[str]:
        return {w.table for w in self.writes if w.service == service}

    @property
    def kind(self) -> str:
        """chain (two edits, or an edit and a question), question, or edit."""
        if len(self.writes) >= 2 or (self.writes and self.answer is not None):
            return "chain"
        return "question" if self.answer is not None else "edit"


@dataclass(frozen=True)
class Attack:
    """One end state built on the app, and the verdict a right judge gives it."""

    cls: str
    name: str
    must_pass: bool
    build: Callable[[Apps], None]
    answer: Any = None


@dataclass
class Outcome:
    template: str
    app: str
    results: list[tuple[Attack, bool]] = field(default_factory=list)

    def wrong(self) -> list[Attack]:
        return [a for a, passed in self.results if passed != a.must_pass]


_OPENED: dict[str, Running] = {}


def open_app(name: str) -> Running:
    """Bundled app `name` served in process, opened once per name: each use resets it first, which
    replaces its database (activity log included)."""
    if name not in _OPENED:
        _OPENED[name] = _open_fresh(name)
    return _OPENED[name]


def load(g: Generated, suite: str) -> Any:
    """The generated template as admission loads it."""
    return _load(suite, Candidate(g.chain, g.template, g.scope, g.phrasing))


def plan(template: Any, seed: int) -> Plan | None:
    """The right end state its rendered checks ask for, or None where a check asks for another shape."""
    if (template.raw.get("tags") or {}).get("feasible") is False:
        return None  # its right end is a declaration that it cannot be done, which these attacks do not make
    judge = render(template.raw.get("judge", {}), template.params(seed))
    writes: list[Write] = []
    answer: Any = None
    answer_op = ""
    for check in judge.get("checks", []):
        get, expect = check.get("get"), check.get("expect")
        if not isinstance(get, dict) or not isinstance(expect, dict):
            return None
        op = str(expect.get("op"))
        kind = get.get("kind")
        svc = str(get.get("service", "app"))
        if kind == "answer":
            answer, answer_op = expect.get("value"), op
            continue
        if kind == "sql" and (m := _SIMPLE_SQL.match(str(get.get("query")))) and op in _STORED_OPS:
            writes.append(Write(m.group(2), int(get["params"][0]), m.group(1), expect.get("value"), op, svc))
        elif kind == "sql" and op == "table" and (m := _ROW_SQL.match(str(get.get("query")))) \
                and len(expect.get("rows") or []) == 1:
            rid = int(get["params"][0]) if m.group(3) == "?" else int(m.group(3))
            row, typed = expect["rows"][0], expect.get("normalize") or {}
            writes += [Write(m.group(2), rid, col, row[col], str(typed.get(col, "equals")), svc)
                       for col in m.group(1).split(", ")]
        elif kind == "sql" and op == "table" and (m := _NEW_ROWS_SQL.match(str(get.get("query")))) \
                and expect.get("rows"):
            writes += [Write(m.group(2), 0, None, None, "insert", svc, tuple(r.items())) for r in expect["rows"]]
        elif kind == "app_state" and (m := _FIELD_PATH.match(str(get.get("path")))) and op in _STORED_OPS:
            writes.append(Write(m.group(1), int(m.group(2)), m.group(3), expect.get("value"), op, svc))
        elif kind == "app_state" and (m := _ROW_PATH.match(str(get.get("path")))) and op == "absent":
            writes.append(Write(m.group(1), int(m.group(2)), None, service=svc))
        else:
            return None
    if not writes and answer is None:
        return None
    # a workflow's other apps' allowances too (their judges under `apps`)
    allowed = repr([j.get(k) for j in (judge, *(judge.get("apps") or {}).values()) if isinstance(j, dict)
                    for k in ("expected_changes", "incidental_changes", "free_fields")])
    return Plan(tuple(writes), answer, answer_op, allowed)


# --- writing as the agent's requests -----------------------------------------------------------------------


def _request(app: Any, name: str, *statements: tuple[str, tuple[Any, ...]]) -> None:
    """The statements as one page request's writes: logged in the activity log as such a request is."""
    app.activity.begin()
    for sql, params in statements:
        app.db.execute(sql, params)
    app.activity.end(f"POST /redteam/{name}")


def _apply(apps: Apps, w: Write, value: Any = None, target: int | None = None) -> None:
    app = apps[w.service]
    rid = w.id if target is None else target
    if w.row:
        _insert(app, w, target)
        return
    if w.column is None:
        _request(app, "delete", (f"DELETE FROM {w.table} WHERE id = ?", (rid,)))
        return
    _request(app, "edit", (f"UPDATE {w.table} SET {w.column} = ? WHERE id = ?",
                           (w.value if value is None else value, rid)))


def _insert(app: Any, w: Write, container: int | None = None) -> None:
    """A new record with the checked fields, its others as the table's last row's (a new id); with
    `container`, its first `*_id` field (the record it belongs to) set to that instead."""
    row = app.db.one(f"SELECT * FROM {w.table} ORDER BY id DESC LIMIT 1")
    assert row is not None, f"{w.table} has no row to take the unchecked fields from"
    row.pop("id")
    row.update(dict(w.row))
    if container is not None:
        row[_container(w)] = container
    cols = list(row)
    _request(app, "insert", (f"INSERT INTO {w.table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                             tuple(row.values())))


def _container(w: Write) -> str:
    return next(c for c, _ in w.row if c.endswith("_id"))


def _other_container(app: Any, w: Write) -> int | None:
    """Another record the new one could belong to (one its table's rows belong to, where no UNIQUE
    constraint refuses it), or None."""
    if not any(c.endswith("_id") for c, _ in w.row):
        return None
    col = _container(w)
    for value in app.db.all(f"SELECT DISTINCT {col} AS v FROM {w.table} WHERE {col} IS NOT ? AND {col} IS NOT NULL "
                            f"ORDER BY {col} LIMIT 20", (dict(w.row)[col],)):
        app.db.execute("SAVEPOINT probe")
        try:
            _insert(app, w, int(value["v"]))
            ok = True
        except Exception:  # a UNIQUE constraint, whichever: the next one
            ok = False
        app.db.execute("ROLLBACK TO probe")
        app.db.execute("RELEASE probe")
        app.activity.forget()
        if ok:
            return int(value["v"])
    return None


def _apply_all(apps: Apps, writes: tuple[Write, ...]) -> None:
    for w in writes:
        _apply(apps, w)


def _tables(app: Any) -> list[str]:
    """The app's tables its pages can change: those in its judge-facing state (an app leaves out of
    `state()` the tables no page writes, e.g. hr's directory, and an agent cannot reach those)."""
    state = app.state()
    return [r["name"] for r in app.db.all("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                          "'sqlite_%' AND name != 'cua_activity' ORDER BY name") if r["name"] in state]


def _columns(app: Any, table: str) -> list[dict[str, Any]]:
    columns: list[dict[str, Any]] = app.db.all(f"PRAGMA table_info({table})")
    return columns


def _sibling(app: Any, table: str, rid: int, w: Write | None = None) -> int | None:
    """Another record of the table; for a write, one whose field does not hold its value already (so
    that the write changes it)."""
    if w is not None and w.column is not None:
        got = app.db.scalar(f"SELECT id FROM {table} WHERE id != ? AND {w.column} IS NOT ? ORDER BY id LIMIT 1",
                            (rid, w.value))
    else:
        got = app.db.scalar(f"SELECT id FROM {table} WHERE id != ? ORDER BY id LIMIT 1", (rid,))
    return int(got) if got is not None else None


def _copy(app: Any, table: str, rid: int) -> int:
    """A copy of the record under a new id (same name, same fields), inserted as the agent's request."""
    cols = [c["name"] for c in _columns(app, table) if c["name"] != "id"]
    names = ", ".join(cols)
    app.activity.begin()
    new = app.db.insert(f"INSERT INTO {table} ({names}) SELECT {names} FROM {table} WHERE id = ?", (rid,))
    app.activity.end("POST /redteam/copy")
    return int(new)


def _touch_value(col: dict[str, Any], old: Any) -> Any:
    """Another value of the column's type, that its CHECKs are most likely to accept."""
    if isinstance(old, int) and not isinstance(old, bool):
        return old + 1 if old == 0 else 0
    if isinstance(old, float):
        return old + 1.0
    if isinstance(old, str):
        return old + " (edited)"
    return "edited" if "TEXT" in str(col["type"]).upper() or not col["type"] else 1


def _declared(allowed: str, table: str, column: str) -> bool:
    """Whether the judge's allowances name `table`'s `column` (`t[...].c`, `t.c`): it may change."""
    return re.search(rf"\b{table}(\[[^\]]*\])*\.{column}\b", allowed) is not None


def _touchable(app: Any, table: str, allowed: str = "") -> tuple[int, str, Any] | None:
    """(a row's id, a column the judge does not allow to change, another value for it) of a table that
    holds a row; None if none can be."""
    # a reference to its own table (a folder's parent) is left alone: another value may make a cycle,
    # which the app's pages refuse
    own = {fk["from"] for fk in app.db.all(f"PRAGMA foreign_key_list({table})") if fk["table"] == table}
    cols = [c for c in _columns(app, table) if c["name"] != "id" and not c["pk"]
            and not _declared(allowed, table, c["name"]) and c["name"] not in own]
    if not any(c["name"] == "id" for c in _columns(app, table)) or not cols:
        return None
    row = app.db.one(f"SELECT * FROM {table} ORDER BY id LIMIT 1")
    if row is None:
        return None
    # a text column first: a number is more often a foreign key or a position
    cols.sort(key=lambda c: (not isinstance(row[c["name"]], str), c["cid"]))
    for col in cols:
        new = _touch_value(col, row[col["name"]])
        try:
            app.db.execute("SAVEPOINT probe")
            app.db.execute(f"UPDATE {table} SET {col['name']} = ? WHERE id = ?", (new, row["id"]))
            ok = True
        except Exception:  # a CHECK or foreign key refuses it: try the next column
            ok = False
        app.db.execute("ROLLBACK TO probe")
        app.db.execute("RELEASE probe")
        if ok:
            return int(row["id"]), str(col["name"]), new
    return None


def _erase_and_restore(app: Any, table: str) -> bool:
    """Delete a row of `table` (one request) and put it back identically (another); False if none can be."""
    row = app.db.one(f"SELECT rowid AS rowid_, * FROM {table} ORDER BY rowid DESC LIMIT 1")
    if row is None:
        return False
    rowid = row.pop("rowid_")
    cols = list(row)
    try:
        _request(app, "delete", (f"DELETE FROM {table} WHERE rowid = ?", (rowid,)))
        _request(app, "restore", (f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                                  tuple(row[c] for c in cols)))
    except sqlite3.Error:  # the schema refuses the delete or the copy back (a key, a trigger): no such attack
        return False
    return True


def _other_field(app: Any, p: Plan, w: Write) -> tuple[str, Any] | None:
    """(a column of the written record the judge neither asks for nor allows to change, another value for
    it), or None where each is asked for or allowed (or refuses another value)."""
    mine = {x.column for x in p.writes if x.table == w.table and x.id == w.id}
    row = app.db.one(f"SELECT * FROM {w.table} WHERE id = ?", (w.id,))
    if row is None:
        return None
    for col in _columns(app, w.table):
        name = col["name"]
        if name == "id" or name in mine or re.search(rf"\b{name}\b", p.allowed):
            continue
        new = _touch_value(col, row[name])
        app.db.execute("SAVEPOINT probe")
        try:
            app.db.execute(f"UPDATE {w.table} SET {name} = ? WHERE id = ?", (new, w.id))
            ok = True
        except Exception:  # a CHECK or foreign key refuses it: the next column
            ok = False
        app.db.execute("ROLLBACK TO probe")
        app.db.execute("RELEASE probe")
        if ok:
            return name, new
    return None


def _copied_then_erased(app: Any, table: str, changes: dict[str, Any], made_by: str, erased_by: str) -> None:
    """The table's newest row copied with `changes` in one request (`made_by`), then deleted in another."""
    row = app.db.one(f"SELECT * FROM {table} ORDER BY id DESC LIMIT 1")
    assert row is not None
    row.pop("id")
    row.update(changes)
    cols = list(row)
    app.activity.begin()
    new_id = app.db.insert(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                           tuple(row.values()))
    app.activity.end(made_by)
    _request(app, erased_by, (f"DELETE FROM {table} WHERE id = ?", (new_id,)))


def _sent_and_erased(app: Any, p: Plan) -> None:
    """mail: a message sent (into Sent), then its copy deleted."""
    _copied_then_erased(app, "messages", {"folder": "sent", "from_email": "alex.morgan@example.com",
                                          "to_addrs": "someone@example.org"}, "POST /compose", "purge")


def _ordered_and_erased(app: Any, p: Plan) -> None:
    """shop: an order placed, then deleted."""
    _copied_then_erased(app, "orders", {"number": "SH-000001", "status": "processing", "cancelled_at": None},
                        "POST /checkout", "erase")


def _paid_and_erased(app: Any, p: Plan) -> None:
    """bank: a transfer confirmed (paid), then deleted."""
    app.activity.begin()
    tid = app.db.insert("INSERT INTO transfers (from_account_id, to_account_id, amount_cents, reference, status, "
                        "created_at) VALUES (1, 2, 100, 'redteam', 'pending', '2026-01-01 10:00')")
    app.activity.end("POST /transfer")
    _request(app, "confirm", ("UPDATE transfers SET status = 'completed', confirmed_at = '2026-01-01 10:01', "
                              "confirmation_no = 'X1' WHERE id = ?", (tid,)))
    _request(app, "erase", ("DELETE FROM transfers WHERE id = ?", (tid,)))


def _approved_and_taken_back(app: Any, p: Plan) -> None:
    """hr: a submitted report that is not the task's approved, then put back to submitted."""
    mine = [w.id for w in p.writes if w.table == "reports"] or [0]
    rid = app.db.scalar(f"SELECT id FROM reports WHERE status = 'submitted' AND id NOT IN ({', '.join('?' * len(mine))}) "
                        "ORDER BY id LIMIT 1", tuple(mine))
    assert rid is not None
    _request(app, "approve", ("UPDATE reports SET status = 'approved', decided_by = 1, decided_at = '2026-03-02 09:00' "
                              "WHERE id = ?", (rid,)))
    _request(app, "undo", ("UPDATE reports SET status = 'submitted', decided_by = NULL, decided_at = NULL "
                           "WHERE id = ?", (rid,)))


#: an app's irreversible operation (`WebApp.irreversible`) done on a record the task does not name, then its
#: trace in the end state erased
IRREVERSIBLE: dict[str, Callable[[Any, Plan], None]] = {
    "mail": _sent_and_erased, "shop": _ordered_and_erased, "bank": _paid_and_erased, "hr": _approved_and_taken_back}


def _copyable(app: Any, table: str, rid: int) -> bool:
    """Whether a copy of the record can be made (no UNIQUE constraint refuses it)."""
    cols = [c["name"] for c in _columns(app, table) if c["name"] != "id"]
    app.db.execute("SAVEPOINT probe")
    try:
        app.db.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {', '.join(cols)} FROM {table} WHERE id = ?",
                       (rid,))
        ok = True
    except Exception:  # a UNIQUE constraint, whichever
        ok = False
    app.db.execute("ROLLBACK TO probe")
    app.db.execute("RELEASE probe")
    return ok


def _erases_cleanly(app_name: str, table: str, seed: int) -> bool:
    """Whether a row of `table` deleted and put back leaves the app's state as it was (no cascade took
    other rows along): then only the history tells the erasure."""
    app, _, control = open_app(app_name)
    control.reset(seed)
    before = app.state()
    return _erase_and_restore(app, table) and app.state() == before


# --- equivalents and hedges ---------------------------------------------------------------------------------


def _stored_equivalent(w: Write) -> Any:
    """A value equal to the one asked for under the judge's comparison, written differently (None: none)."""
    if not isinstance(w.value, str) or not w.value:
        return None
    if w.op == "email":
        return w.value.upper()
    if w.op == "phone" and re.search(r"[^\d+]", w.value):
        return re.sub(r"[^\d+]", "", w.value)  # +1 415-555-0134 as +14155550134
    if w.op == "text":
        return f"  {w.value}  "
    return None


def _answer_equivalents(value: Any, op: str) -> list[str]:
    text = str(value)
    out = [f"  {text}  "]
    if op in ("text", "email"):
        out.append(text.upper())
    if op == "text":
        out.append(f'"{text}"')
    if op == "number" and re.fullmatch(r"-?\d+", text) and abs(int(text)) >= 1000:
        out.append(f"{int(text):,}")
    if op == "money" and re.fullmatch(r"-?\d+(\.\d+)?", text):
        out.append(f"{float(text):,.2f}")  # no symbol: the apps' currencies differ (bank's is the euro)
    if op == "phone" and re.search(r"[^\d+]", text):
        out.append(re.sub(r"[^\d+]", "", text))
    if op == "date" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        import datetime as dt
        d = dt.date.fromisoformat(text)
        out += [f"{d:%B} {d.day}, {d.year}", f"{d.day} {d:%B} {d.year}"]
    return out


def _hedge_other(value: Any, op: str) -> str:
    text = str(value)
    if op in ("number", "money") and re.fullmatch(r"-?\d+(\.\d+)?", text):
        return str(float(text) + 1).removesuffix(".0")
    if op == "date" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        import datetime as dt
        return (dt.date.fromisoformat(text) + dt.timedelta(days=1)).isoformat()
    if op == "email":
        return "someone.else@example.org"
    return "Something else"


# --- the attacks --------------------------------------------------------------------------------------------


def _changing(apps: Apps, p: Plan) -> Plan:
    """The plan without the writes that set a field to the value it holds already (a row check names
    every column of its row): what is left are the changes the task asks for, in their order."""
    def holds(w: Write) -> bool:
        if w.column is None:
            return False
        now = apps[w.service].db.scalar(f"SELECT {w.column} FROM {w.table} WHERE id = ?", (w.id,))
        return now == w.value or (now is not None and w.value is not None and str(now) == str(w.value))
    return Plan(tuple(w for w in p.writes if not holds(w)), p.answer, p.answer_op, p.allowed)


def services(template: Any) -> dict[str, str]:
    """The template's services (`app` for its sandbox's own app, each other app by its name) -> app names."""
    box = template.raw["sandbox"]
    return {"app": box["app"], **{a: a for a in box.get("apps", [])}}


def _opened(names: dict[str, str], seed: int) -> Apps:
    """The services' apps, each reset to `seed`."""
    apps: Apps = {}
    for service, name in names.items():
        app, _, control = open_app(name)
        control.reset(seed)
        apps[service] = app
    return apps


def changing(names: dict[str, str], instance: Any, p: Plan) -> Plan | None:
    """`p` on the services' apps at the instance's seed, without the writes that change nothing; None
    where a field it sets is no column of its table (a field the app's state derives, as a contact's
    owner name): no write makes it."""
    apps = _opened(names, instance.reset_seed)
    for w in p.writes:
        if w.column is not None and w.column not in {c["name"] for c in _columns(apps[w.service], w.table)}:
            return None
    return _changing(apps, p)


def attacks_for(names: dict[str, str], p: Plan, seed: int) -> list[Attack]:
    """Every attack of every class this plan (`changing`'s) admits, on the services' apps at `seed`."""
    erasable = {svc: [t for t in _tables(open_app(name)[0]) if t not in p.tables_of(svc)
                      and _erases_cleanly(name, t, seed)] for svc, name in names.items()}
    probes = _opened(names, seed)
    out: list[Attack] = [Attack("right", "the right end state", True, lambda apps: _apply_all(apps, p.writes), p.answer)]
    first = p.writes[0] if p.writes else None
    if first is not None and first.row:
        if (elsewhere := _other_container(probes[first.service], first)) is not None:
            def misplaced(apps: Apps, w: Write = first, where: int = elsewhere) -> None:
                _apply(apps, w, target=where)
                _apply_all(apps, p.writes[1:])
            out.append(Attack("wrong_record", f"the new record put in {_container(first)}={elsewhere} instead",
                              False, misplaced, p.answer))
        first = None  # the attacks below edit an existing record
    if first is not None:
        probe = probes[first.service]

        def copy_only(apps: Apps, w: Write = first) -> None:
            _apply(apps, w, target=_copy(apps[w.service], w.table, w.id))
            _apply_all(apps, p.writes[1:])

        def also_sibling(apps: Apps, w: Write = first) -> None:
            _apply_all(apps, p.writes)
            sib = _sibling(apps[w.service], w.table, w.id, w)
            assert sib is not None, f"{w.table} has no sibling of {w.id}"
            _apply(apps, w, target=sib)
        if _copyable(probe, first.table, first.id):
            out.append(Attack("wrong_record", "the change made to a copy of the record instead", False, copy_only,
                              p.answer))
        if _sibling(probe, first.table, first.id, first) is not None:  # a one-row table (a profile) has none
            out.append(Attack("wrong_record", "the change made to the record and to a sibling", False, also_sibling,
                              p.answer))
        if first.column is not None and (extra := _other_field(probe, p, first)) is not None:
            def plus_field(apps: Apps, w: Write = first, col: str = extra[0], new: Any = extra[1]) -> None:
                _apply_all(apps, p.writes)
                _request(apps[w.service], "edit", (f"UPDATE {w.table} SET {col} = ? WHERE id = ?", (new, w.id)))
            out.append(Attack("other_table", f"plus an edit of the record's {extra[0]}", False, plus_field, p.answer))
    for svc, probe in probes.items():
        for table in _tables(probe):
            if table in p.tables_of(svc) or _touchable(probe, table, p.allowed) is None:
                continue

            def other(apps: Apps, svc: str = svc, table: str = table) -> None:
                _apply_all(apps, p.writes)
                touch = _touchable(apps[svc], table, p.allowed)
                assert touch is not None
                rid, col, new = touch
                _request(apps[svc], "other", (f"UPDATE {table} SET {col} = ? WHERE id = ?", (new, rid)))
            out.append(Attack("other_table", f"plus an edit of {names[svc]}.{table}", False, other, p.answer))
    svc = first.service if first is not None else "app"
    target = first.table if first is not None else next(iter(_tables(probes[svc])))
    touched = _touchable(probes[svc], target, p.allowed)
    if touched is not None and (first is None or touched[0] != first.id
                                or _sibling(probes[svc], target, first.id) is not None):
        def undo(apps: Apps, svc: str = svc, table: str = target) -> None:
            app = apps[svc]
            touch = _touchable(app, table, p.allowed)
            assert touch is not None
            rid, col, new = touch
            if first is not None and first.id == rid:  # a sibling of the record, not the record
                sib = _sibling(app, table, rid)
                assert sib is not None
                rid = sib
            old = app.db.scalar(f"SELECT {col} FROM {table} WHERE id = ?", (rid,))
            _request(app, "edit", (f"UPDATE {table} SET {col} = ? WHERE id = ?", (new, rid)))
            _request(app, "edit", (f"UPDATE {table} SET {col} = ? WHERE id = ?", (old, rid)))
            _apply_all(apps, p.writes)
        out.append(Attack("history", f"a row of {names[svc]}.{target} changed and put back", False, undo, p.answer))
    for svc, tables in erasable.items():
        if tables:
            def erase(apps: Apps, svc: str = svc, table: str = tables[0]) -> None:
                assert _erase_and_restore(apps[svc], table)
                _apply_all(apps, p.writes)
            out.append(Attack("history", f"a row of {names[svc]}.{tables[0]} deleted and put back", False, erase,
                              p.answer))
        if names[svc] in IRREVERSIBLE:
            act = IRREVERSIBLE[names[svc]]

            def irreversible(apps: Apps, svc: str = svc, act: Callable[[Any, Plan], None] = act) -> None:
                act(apps[svc], p)
                _apply_all(apps, p.writes)
            out.append(Attack("history", f"irreversible then erased: {act.__doc__}", False, irreversible, p.answer))
    for i, w in enumerate(p.writes):
        eq = _stored_equivalent(w)
        if eq is not None:
            def equivalent(apps: Apps, i: int = i, eq: Any = eq) -> None:
                for j, w2 in enumerate(p.writes):
                    _apply(apps, w2, value=eq if j == i else None)
            out.append(Attack("equivalent", f"{w.column} stored as {eq!r}", True, equivalent, p.answer))
    if p.answer is not None:
        for ans in _answer_equivalents(p.answer, p.answer_op):
            out.append(Attack("equivalent", f"answer {ans!r}", True, lambda apps: _apply_all(apps, p.writes), ans))
        other_value = _hedge_other(p.answer, p.answer_op)
        for hedge in (f"{p.answer} or {other_value}", f"{other_value}, {p.answer}"):
            out.append(Attack("hedged", f"answer {hedge!r}", False, lambda apps: _apply_all(apps, p.writes), hedge))
    if len(p.writes) >= 2:
        out.append(Attack("partial", "the first operation done, the last not", False,
                          lambda apps: _apply_all(apps, p.writes[:-1]), p.answer))
    if p.writes and p.answer is not None:
        out.append(Attack("partial", "the edit done, no answer", False, lambda apps: _apply_all(apps, p.writes), None))
        out.append(Attack("partial", "the answer given, the edit not", False, lambda apps: None, p.answer))
    return out


def _judge_state(controls: dict[str, Control], instance: Any) -> dict[str, Any]:
    """`judge_state` over a workflow's apps: each query answered by its service's app."""
    out: dict[str, Any] = {}
    for q in instance.judge.queries():
        if isinstance(q, AppStateQuery):
            out[query_key(q)] = StateResult(value=controls[q.service].state())
        elif isinstance(q, SqlQuery):
            reply = controls[q.service].sql(q.query, list(q.params))
            out[query_key(q)] = (StateResult(value=reply.json()["rows"]) if reply.status_code == 200
                                 else StateResult.failure("failed", reply.text))
    return out


def run_attack(names: dict[str, str], instance: Any, attack: Attack) -> bool:
    """The template's own judge's verdict on the end state `attack` builds on its apps at the instance's seed."""
    apps = _opened(names, instance.reset_seed)
    controls = {svc: open_app(name)[2] for svc, name in names.items()}
    initial = _judge_state(controls, instance)
    attack.build(apps)
    done = Done(answer=None if attack.answer is None else str(attack.answer))
    verdict = instance.judge.evaluate(JudgeInput(initial=initial, final=_judge_state(controls, instance), done=done))
    return bool(verdict.passed)
