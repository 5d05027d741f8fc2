"""An outside prober's attacks on synthesised templates (issue 38, "done when" 3), built from the
app's whole schema and the episode's history rather than from the oracle's diff.

A template's *right end state* is read from what its judge asks for, in the forms an agent's
edit takes: a field of one record set (`SELECT col FROM t WHERE id = ?`, `t[id=N].col`), a
record gone (`t[id=N]` absent), an answer. A template whose checks ask for anything else is
not attackable here (`plan` returns None) and is left out of the sample, so the sample is
drawn among what this prober can build.

Every write an attack makes is one *request* of the agent: it goes to the app's database
between the activity log's `begin` and `end`, as a page request's write does, so the history
a judge reads holds it (`tasks/apps/activity.py`). The attacks, by class:

- `right`: the right end state, which must pass (a refusal is a false negative);
- `wrong_record`: the right change made to a copy of the record (same name, new id) instead,
  or to the record and a sibling of its table too;
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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from _apps_common import Running, judge_state
from _apps_common import open_app as _open_fresh

from cua.actions import Done
from cua.synth.admit import Candidate, _load
from cua.synth.schema import Generated
from cua.task import JudgeInput
from cua.tasks.render import render

__all__ = ["Attack", "Plan", "Write", "attacks_for", "changing", "load", "open_app", "plan", "run_attack"]

_SIMPLE_SQL = re.compile(r"^SELECT (\w+) FROM (\w+) WHERE id = \?$")
_FIELD_PATH = re.compile(r"^(\w+)\[id=(\d+)\]\.(\w+)$")
_ROW_PATH = re.compile(r"^(\w+)\[id=(\d+)\]$")
_ROW_SQL = re.compile(r"^SELECT (\w+(?:, \w+)*) FROM (\w+) WHERE id = (\?|\d+)$")
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
    build: Callable[[Any], None]
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
        if kind == "answer":
            answer, answer_op = expect.get("value"), op
            continue
        if kind == "sql" and (m := _SIMPLE_SQL.match(str(get.get("query")))) and op in _STORED_OPS:
            writes.append(Write(m.group(2), int(get["params"][0]), m.group(1), expect.get("value"), op))
        elif kind == "sql" and op == "table" and (m := _ROW_SQL.match(str(get.get("query")))) \
                and len(expect.get("rows") or []) == 1:
            rid = int(get["params"][0]) if m.group(3) == "?" else int(m.group(3))
            row, typed = expect["rows"][0], expect.get("normalize") or {}
            writes += [Write(m.group(2), rid, col, row[col], str(typed.get(col, "equals"))) for col in m.group(1).split(", ")]
        elif kind == "app_state" and (m := _FIELD_PATH.match(str(get.get("path")))) and op in _STORED_OPS:
            writes.append(Write(m.group(1), int(m.group(2)), m.group(3), expect.get("value"), op))
        elif kind == "app_state" and (m := _ROW_PATH.match(str(get.get("path")))) and op == "absent":
            writes.append(Write(m.group(1), int(m.group(2)), None))
        else:
            return None
    if not writes and answer is None:
        return None
    allowed = repr([judge.get(k) for k in ("expected_changes", "incidental_changes", "free_fields")])
    return Plan(tuple(writes), answer, answer_op, allowed)


# --- writing as the agent's requests -----------------------------------------------------------------------


def _request(app: Any, name: str, *statements: tuple[str, tuple[Any, ...]]) -> None:
    """The statements as one page request's writes: logged in the activity log as such a request is."""
    app.activity.begin()
    for sql, params in statements:
        app.db.execute(sql, params)
    app.activity.end(f"POST /redteam/{name}")


def _apply(app: Any, w: Write, value: Any = None, target: int | None = None) -> None:
    rid = w.id if target is None else target
    if w.column is None:
        _request(app, "delete", (f"DELETE FROM {w.table} WHERE id = ?", (rid,)))
        return
    _request(app, "edit", (f"UPDATE {w.table} SET {w.column} = ? WHERE id = ?",
                           (w.value if value is None else value, rid)))


def _apply_all(app: Any, writes: tuple[Write, ...]) -> None:
    for w in writes:
        _apply(app, w)


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


def _touchable(app: Any, table: str) -> tuple[int, str, Any] | None:
    """(a row's id, a column, another value for it) of a table that holds a row; None if none can be."""
    cols = [c for c in _columns(app, table) if c["name"] != "id" and not c["pk"]]
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
    except Exception:
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


def _sent_and_erased(app: Any, p: Plan) -> None:
    """mail: a message sent (into Sent), then its copy deleted."""
    row = app.db.one("SELECT * FROM messages ORDER BY id DESC LIMIT 1")
    assert row is not None
    row.pop("id")
    row.update(folder="sent", from_email="alex.morgan@example.com", to_addrs="someone@example.org")
    cols = list(row)
    app.activity.begin()
    mid = app.db.insert(f"INSERT INTO messages ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                        tuple(row.values()))
    app.activity.end("POST /compose")
    _request(app, "purge", ("DELETE FROM messages WHERE id = ?", (mid,)))


def _ordered_and_erased(app: Any, p: Plan) -> None:
    """shop: an order placed, then deleted."""
    row = app.db.one("SELECT * FROM orders ORDER BY id DESC LIMIT 1")
    assert row is not None
    row.pop("id")
    row.update(number="SH-000001", status="processing", cancelled_at=None)
    cols = list(row)
    app.activity.begin()
    oid = app.db.insert(f"INSERT INTO orders ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                        tuple(row.values()))
    app.activity.end("POST /checkout")
    _request(app, "erase", ("DELETE FROM orders WHERE id = ?", (oid,)))


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
    if w.op in ("text", "phone"):
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
    if op == "date" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        import datetime as dt
        d = dt.date.fromisoformat(text)
        out.append(f"{d:%B} {d.day}, {d.year}")
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


def _changing(app: Any, p: Plan) -> Plan:
    """The plan without the writes that set a field to the value it holds already (a row check names
    every column of its row): what is left are the changes the task asks for, in their order."""
    def holds(w: Write) -> bool:
        if w.column is None:
            return False
        now = app.db.scalar(f"SELECT {w.column} FROM {w.table} WHERE id = ?", (w.id,))
        return now == w.value or (now is not None and w.value is not None and str(now) == str(w.value))
    return Plan(tuple(w for w in p.writes if not holds(w)), p.answer, p.answer_op, p.allowed)


def changing(app_name: str, instance: Any, p: Plan) -> Plan:
    """`p` on app `app_name` at the instance's seed, without the writes that change nothing."""
    app, _, control = open_app(app_name)
    control.reset(instance.reset_seed)
    return _changing(app, p)


def attacks_for(app_name: str, p: Plan, seed: int) -> list[Attack]:
    """Every attack of every class this plan (`changing`'s) admits, on app `app_name` at `seed`."""
    erasable = [t for t in _tables(open_app(app_name)[0]) if t not in p.tables and _erases_cleanly(app_name, t, seed)]
    probe_app, _, probe_ctl = open_app(app_name)
    probe_ctl.reset(seed)
    out: list[Attack] = [Attack("right", "the right end state", True, lambda app: _apply_all(app, p.writes), p.answer)]
    first = p.writes[0] if p.writes else None
    if first is not None:
        def copy_only(app: Any, w: Write = first) -> None:
            _apply(app, w, target=_copy(app, w.table, w.id))
            _apply_all(app, p.writes[1:])

        def also_sibling(app: Any, w: Write = first) -> None:
            _apply_all(app, p.writes)
            sib = _sibling(app, w.table, w.id, w)
            assert sib is not None, f"{w.table} has no sibling of {w.id}"
            _apply(app, w, target=sib)
        if _copyable(probe_app, first.table, first.id):
            out.append(Attack("wrong_record", "the change made to a copy of the record instead", False, copy_only,
                              p.answer))
        out.append(Attack("wrong_record", "the change made to the record and to a sibling", False, also_sibling,
                          p.answer))
        if first.column is not None and (extra := _other_field(probe_app, p, first)) is not None:
            def plus_field(app: Any, w: Write = first, col: str = extra[0], new: Any = extra[1]) -> None:
                _apply_all(app, p.writes)
                _request(app, "edit", (f"UPDATE {w.table} SET {col} = ? WHERE id = ?", (new, w.id)))
            out.append(Attack("other_table", f"plus an edit of the record's {extra[0]}", False, plus_field, p.answer))
    for table in _tables(probe_app):
        if table in p.tables or _touchable(probe_app, table) is None:
            continue

        def other(app: Any, table: str = table) -> None:
            _apply_all(app, p.writes)
            touch = _touchable(app, table)
            assert touch is not None
            rid, col, new = touch
            _request(app, "other", (f"UPDATE {table} SET {col} = ? WHERE id = ?", (new, rid)))
        out.append(Attack("other_table", f"plus an edit of {table}", False, other, p.answer))
    target = first.table if first is not None else next(iter(_tables(probe_app)))
    if _touchable(probe_app, target) is not None:
        def undo(app: Any, table: str = target) -> None:
            touch = _touchable(app, table)
            assert touch is not None
            rid, col, new = touch
            if first is not None and first.id == rid:  # a sibling of the record, not the record
                sib = _sibling(app, table, rid)
                assert sib is not None
                rid = sib
            old = app.db.scalar(f"SELECT {col} FROM {table} WHERE id = ?", (rid,))
            _request(app, "edit", (f"UPDATE {table} SET {col} = ? WHERE id = ?", (new, rid)))
            _request(app, "edit", (f"UPDATE {table} SET {col} = ? WHERE id = ?", (old, rid)))
            _apply_all(app, p.writes)
        out.append(Attack("history", f"a row of {target} changed and put back", False, undo, p.answer))
    if erasable:
        def erase(app: Any, table: str = erasable[0]) -> None:
            assert _erase_and_restore(app, table)
            _apply_all(app, p.writes)
        out.append(Attack("history", f"a row of {erasable[0]} deleted and put back", False, erase, p.answer))
    if app_name in IRREVERSIBLE:
        def irreversible(app: Any, act: Callable[[Any, Plan], None] = IRREVERSIBLE[app_name]) -> None:
            act(app, p)
            _apply_all(app, p.writes)
        out.append(Attack("history", f"irreversible then erased: {IRREVERSIBLE[app_name].__doc__}", False,
                          irreversible, p.answer))
    for i, w in enumerate(p.writes):
        eq = _stored_equivalent(w)
        if eq is not None:
            def equivalent(app: Any, i: int = i, eq: Any = eq) -> None:
                for j, w2 in enumerate(p.writes):
                    _apply(app, w2, value=eq if j == i else None)
            out.append(Attack("equivalent", f"{w.column} stored as {eq!r}", True, equivalent, p.answer))
    if p.answer is not None:
        for ans in _answer_equivalents(p.answer, p.answer_op):
            out.append(Attack("equivalent", f"answer {ans!r}", True, lambda app: _apply_all(app, p.writes), ans))
        other_value = _hedge_other(p.answer, p.answer_op)
        for hedge in (f"{p.answer} or {other_value}", f"{other_value}, {p.answer}"):
            out.append(Attack("hedged", f"answer {hedge!r}", False, lambda app: _apply_all(app, p.writes), hedge))
    if len(p.writes) >= 2:
        out.append(Attack("partial", "the first operation done, the last not", False,
                          lambda app: _apply_all(app, p.writes[:-1]), p.answer))
    if p.writes and p.answer is not None:
        out.append(Attack("partial", "the edit done, no answer", False, lambda app: _apply_all(app, p.writes), None))
        out.append(Attack("partial", "the answer given, the edit not", False, lambda app: None, p.answer))
    return out


def run_attack(app_name: str, instance: Any, attack: Attack) -> bool:
    """The template's own judge's verdict on the end state `attack` builds on a fresh app at the instance's seed."""
    app, _, control = open_app(app_name)
    control.reset(instance.reset_seed)
    initial = judge_state(control, instance)
    attack.build(app)
    done = Done(answer=None if attack.answer is None else str(attack.answer))
    verdict = instance.judge.evaluate(JudgeInput(initial=initial, final=judge_state(control, instance), done=done))
    return bool(verdict.passed)

