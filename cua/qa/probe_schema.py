"""Judge QA's `schema_mutation` probes: one edit anywhere in the app, not only where the
oracle wrote.

The state probes (`cua.qa.probes`) perturb the rows and columns of the oracle's diff,
so a judge is only ever attacked where its author already looked. These probes start
from the app's whole schema (`table_infos`): each end state is the oracle's final
database plus ONE edit elsewhere:

- in every table, touched by the oracle or not, on a row the oracle left alone: a column
  changed (each kind of column: free text, number, flag, a foreign key moved to another
  parent record), the row deleted, and a copy of it inserted; in a table the oracle emptied
  (a cart checked out), a row put back like one it removed;
- on the parent records of the oracle's targets (the foreign keys of the rows it changed:
  the list a todo is in, the thread a message is in), a column changed.

A correct judge fails every one that its queries can see: the change is neither what the
task asked nor allowed by it, so its side-effect diff (or a check) must refuse it. An edit
the template allows (its `expected_changes` match the changed field) that passes is the
issue's "allowed but never judged": the template lets the field change and no check reads
it. Columns no agent controls (`WebApp.assigned`, bookkeeping timestamps, on-screen order),
fields the task leaves free (`free_fields`) or incidental, and edits the judge's queries
cannot see are not edited or not counted, as for the state probes. The count is bounded
per table and per template: each probe is judged in process in milliseconds.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cua.judges.sidefx import allowed_by, diff
from cua.qa.probes import (
    _BOOKKEEPING,
    _ORDER,
    DbDiff,
    DbImage,
    Probe,
    ProbeMirror,
    TableInfo,
    _delete,
    _insert,
    _update,
)
from cua.state import AppStateQuery, StateQuery, StateResult
from cua.task import Verdict, query_key
from cua.tasks.apps.activity import ACTIVITY_TABLE

__all__ = ["KIND", "MAX_PER_TABLE", "MAX_PROBES", "FastMirror", "ForeignKeys", "foreign_keys", "judge_schema_mutations",
           "schema_mutations"]

KIND = "schema_mutation"
#: Column edits per table, each of another kind (text, number, flag, foreign key).
MAX_COLUMN_EDITS = 4
#: Edits per table: its column edits, a deleted row, an inserted copy.
MAX_PER_TABLE = MAX_COLUMN_EDITS + 2
#: Parent records of the oracle's targets edited, and column edits on each.
MAX_PARENTS = 3
MAX_PARENT_EDITS = 2
#: Probes judged per template (more are generated: many are invisible to a judge's queries).
MAX_PROBES = 40

#: (table, column) -> (referenced table, referenced column).
ForeignKeys = dict[tuple[str, str], tuple[str, str]]


def foreign_keys(conn: sqlite3.Connection, infos: Sequence[TableInfo]) -> ForeignKeys:
    """Where each foreign key of the app's schema points (a key naming no column points at
    the referenced table's primary key)."""
    by_name = {i.name: i for i in infos}
    out: ForeignKeys = {}
    for info in infos:
        for row in conn.execute(f'PRAGMA foreign_key_list("{info.name}")').fetchall():
            table, column, ref = str(row[2]), str(row[3]), row[4]
            if ref is None:
                pk = by_name[table].pk if table in by_name else ()
                ref = pk[0] if len(pk) == 1 else "rowid"
            out[(info.name, column)] = (table, str(ref))
    return out


def _kind(info: TableInfo, column: str, values: Sequence[Any]) -> str:
    """foreign key | flag | number | text: which kind of value an edit of the column writes."""
    if column in info.foreign:
        return "foreign key"
    present = [v for v in values if v is not None]
    declared = info.types[info.columns.index(column)]
    if present and all(isinstance(v, int) and v in (0, 1) for v in present) and \
            ("BOOL" in declared or {0, 1} <= set(present)):  # a count that is 1 everywhere is no flag
        return "flag"
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "number"
    return "text"


def _editable(info: TableInfo, free: set[str]) -> list[str]:
    """The columns an agent controls: not the key, not what the app assigns or keeps for
    itself (timestamps, on-screen order), not what the task leaves free."""
    return [c for c in info.columns if c not in info.pk and c not in info.assigned and f"{info.name}.{c}" not in free
            and not _BOOKKEEPING.search(c) and not _ORDER.match(c)]


def _column_values(image: DbImage, table: str, column: str) -> list[Any]:
    seen: list[Any] = []
    for row in image.tables.get(table, {}).values():
        if row.get(column) not in seen:
            seen.append(row.get(column))
    return seen


def _new_value(info: TableInfo, column: str, kind: str, row: dict[str, Any], image: DbImage,
               fks: ForeignKeys) -> Any:
    """Another value of the same kind for `row`'s `column`, or None when there is none."""
    old = row.get(column)
    if kind == "foreign key":
        target = fks.get((info.name, column))
        if target is None:
            return None
        parents = [v for v in _column_values(image, target[0], target[1]) if v is not None and v != old]
        if target[0] == info.name:  # a tree (a folder's parent folder): never under itself
            parents = [v for v in parents if not _under(image, info.name, column, target[1], v, row.get(target[1]))]
        return parents[0] if parents else None
    if kind == "flag":
        return 0 if old == 1 else 1
    if kind == "number":
        return (old or 0) + (1.5 if isinstance(old, float) else 1)
    if isinstance(old, str) and old.strip():
        new = f"{old} (x)"
    elif old is None or old == "":
        new = "x"
    else:
        new = f"{old}x"
    return new if column not in info.unique or new not in _column_values(image, info.name, column) else None


def _under(image: DbImage, table: str, column: str, ref: str, value: Any, node: Any) -> bool:
    """Whether `value` is `node` or lies below it in the tree that `table.column` draws
    (each row's `column` names its parent's `ref`). Moving `node` there makes a cycle: no
    app's UI can make one (the notes app creates a folder under an existing one and never
    moves it), and the app's own reads of a tree (a folder's path) never end on one, so
    such an edit says nothing about the judge."""
    parent = {r.get(ref): r.get(column) for r in image.tables.get(table, {}).values()}
    seen: set[Any] = set()
    while value is not None and value not in seen:
        if value == node:
            return True
        seen.add(value)
        value = parent.get(value)
    return False


def _describe(info: TableInfo, row: dict[str, Any]) -> str:
    return f"{info.name}{list(info.key(row))}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _column_edit(info: TableInfo, row: dict[str, Any], column: str, kind: str, image: DbImage, fks: ForeignKeys,
                 what: str = "") -> Probe | None:
    new = _new_value(info, column, kind, row, image, fks)
    if new is None or new == row.get(column):
        return None
    return Probe(KIND, f"{what}{_describe(info, row)}.{column} ({kind}): {_short(row.get(column))} -> {_short(new)}",
                 [_update(info, row, {column: new})])


def _copy(info: TableInfo, row: dict[str, Any], image: DbImage, fks: ForeignKeys) -> Probe | None:
    """A copy of `row` inserted: a new key, unique text made unique; a link row (a compound
    key) copied onto another parent that it is not yet linked to."""
    copy = {k: v for k, v in row.items() if k != "__rowid"}
    if len(info.pk) > 1:
        keys = {tuple(r.get(c) for c in info.pk) for r in image.tables.get(info.name, {}).values()}
        for c in info.pk:
            target = fks.get((info.name, c))
            if target is None:
                continue
            for parent in _column_values(image, target[0], target[1]):
                moved = {**copy, c: parent}
                if parent is not None and tuple(moved.get(k) for k in info.pk) not in keys:
                    return Probe(KIND, f"a copy of {_describe(info, row)} inserted with {c}={_short(parent)}",
                                 [_insert(info, moved)])
        return None
    if len(info.pk) == 1:
        pk = info.pk[0]
        ty = info.types[info.columns.index(pk)]
        target = fks.get((info.name, pk))
        if target is not None:  # keyed by its parent (one cart line per product): another parent
            taken = set(_column_values(image, info.name, pk))
            parent = next((v for v in _column_values(image, target[0], target[1]) if v is not None and v not in taken),
                          None)
            if parent is None:
                return None
            return Probe(KIND, f"a copy of {_describe(info, row)} inserted with {pk}={_short(parent)}",
                         [_insert(info, {**copy, pk: parent})])
        if "INT" in ty:
            copy.pop(pk)
        elif isinstance(copy.get(pk), str):
            copy[pk] = f"{copy[pk]}-copy"
        else:
            return None
    for c in info.unique:
        if c in copy and c not in info.pk:
            if not isinstance(copy[c], str):
                return None
            copy[c] = f"{copy[c]} (copy)"
    return Probe(KIND, f"a copy of {_describe(info, row)} inserted", [_insert(info, copy)])


def _table_edits(info: TableInfo, image: DbImage, diff_db: DbDiff, free: set[str], fks: ForeignKeys,
                 used: dict[str, int], rng: random.Random) -> list[Probe]:
    touched = diff_db.touched(info.name)
    rows = [r for k, r in image.tables.get(info.name, {}).items() if k not in touched]
    rng.shuffle(rows)
    if not rows:
        # a table the oracle emptied or only wrote (a cart checked out): a row put back in it,
        # modelled on one the oracle removed, else on one it wrote
        removed = [c.before for c in diff_db.changes if c.table == info.name and c.kind == "removed" and c.before]
        kept = list(image.tables.get(info.name, {}).values())
        model = removed[0] if removed else kept[0] if kept else None
        copy = _copy(info, model, image, fks) if model is not None else None
        return [copy] if copy is not None else []
    out: list[Probe] = []
    by_kind: dict[str, list[str]] = {}
    for c in _editable(info, free):
        by_kind.setdefault(_kind(info, c, _column_values(image, info.name, c)), []).append(c)
    # the kinds edited least so far first, so that every kind of column is attacked somewhere
    for kind in sorted(by_kind, key=lambda k: (used.get(k, 0), k))[:MAX_COLUMN_EDITS]:
        column = rng.choice(by_kind[kind])
        for row in rows:
            probe = _column_edit(info, row, column, kind, image, fks)
            if probe is not None:
                out.append(probe)
                used[kind] = used.get(kind, 0) + 1
                break
    out.append(Probe(KIND, f"{_describe(info, rows[0])} deleted", [_delete(info, rows[0])]))
    copy = _copy(info, rows[-1], image, fks)
    if copy is not None:
        out.append(copy)
    return out[:MAX_PER_TABLE]


def _parent_edits(by_name: dict[str, TableInfo], image: DbImage, diff_db: DbDiff, free: set[str], fks: ForeignKeys,
                  rng: random.Random) -> list[Probe]:
    """Edits of the records the oracle's targets hang from (their foreign keys' rows)."""
    out: list[Probe] = []
    seen: set[tuple[str, Any]] = set()
    for change in diff_db.changes:
        target = change.after or change.before or {}
        for (table, column), (ref_table, ref_column) in fks.items():
            value = target.get(column)
            if table != change.table or value is None or (ref_table, value) in seen or ref_table not in by_name:
                continue
            parent = next((r for r in image.tables.get(ref_table, {}).values() if r.get(ref_column) == value), None)
            if parent is None:
                continue
            seen.add((ref_table, value))
            info = by_name[ref_table]
            written = {c for ch in diff_db.changes if ch.table == ref_table and ch.kind == "changed"
                       and ch.after is not None and info.key(ch.after) == info.key(parent) for c in ch.columns}
            columns = [c for c in _editable(info, free) if c not in written]
            rng.shuffle(columns)
            columns.sort(key=lambda c: _kind(info, c, _column_values(image, ref_table, c)) != "text")
            edits = 0
            for c in columns:
                probe = _column_edit(info, parent, c, _kind(info, c, _column_values(image, ref_table, c)), image, fks,
                                     what=f"the parent of {change.describe()}: ")
                if probe is not None:
                    out.append(probe)
                    edits += 1
                    if edits >= MAX_PARENT_EDITS:
                        break
            if len(seen) >= MAX_PARENTS:
                return out
    return out


def schema_mutations(infos: Sequence[TableInfo], final: DbImage, diff_db: DbDiff, fks: ForeignKeys, *, seed: int = 0,
                     free: Sequence[str] = ()) -> tuple[list[Probe], str]:
    """The probes for one oracle run (the parents' edits first, then every table's in
    turn), or why there are none."""
    rng = random.Random(f"schema#{seed}")
    by_name = {i.name: i for i in infos if i.name != ACTIVITY_TABLE}
    free_set = set(free)
    parents = _parent_edits(by_name, final, diff_db, free_set, fks, rng)
    used: dict[str, int] = {}
    tables = [_table_edits(info, final, diff_db, free_set, fks, used, rng)
              for info in by_name.values()]
    out = list(parents)
    for i in range(max((len(t) for t in tables), default=0)):
        out += [t[i] for t in tables if i < len(t)]
    return out, "" if out else "the app's tables hold no row to edit"


@dataclass
class _Judged:
    ran: int
    skipped: str
    wrong: list[tuple[str, str, Verdict | None]]


class FastMirror:
    """`ProbeMirror.load(image, writes)` for many probes of one image: the image is built
    into a database once, and each probe's writes run on a copy of its bytes (~0.4 ms a
    probe on the shop's database, where building it from its rows takes ~10 ms)."""

    def __init__(self, mirror: ProbeMirror, image: DbImage) -> None:
        self.mirror = mirror
        conn = image.build(mirror.app.schema, mirror.infos)
        try:
            self.base: bytes = conn.serialize()
        finally:
            conn.close()

    def load(self, writes: Sequence[tuple[str, list[Any]]] = ()) -> None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        try:
            conn.deserialize(self.base)
            for sql, params in writes:
                conn.execute(sql, params)
            data = conn.serialize()
        finally:
            conn.close()
        self.mirror.app.db.restore(data, trusted=True)


def _same(a: StateResult | None, b: StateResult | None) -> bool:
    """Whether two reads are the same, as JSON (`1` is not `true`); unequal objects are
    told apart without serialising a whole app state twice."""
    if a != b:
        return False
    dump = [json.dumps(r.model_dump(mode="json"), sort_keys=True, default=str) if r is not None else None
            for r in (a, b)]
    return dump[0] == dump[1]


def judge_schema_mutations(probes: Sequence[Probe], mirror: ProbeMirror, final_db: DbImage,
                           queries: Sequence[StateQuery], oracle_final: dict[str, StateResult],
                           expected: Sequence[str], incidental: Sequence[str],
                           evaluate: Callable[[dict[str, StateResult]], Verdict]
                           ) -> tuple[int, str, list[tuple[str, str, Verdict | None]]]:
    """(probes judged, why none was when none was, the judge's wrong verdicts): each probe
    written on the mirror holding the oracle's end state, and judged; the mirror is left
    holding the oracle's end state."""
    keys = [query_key(q) for q in ProbeMirror.mirrored(queries)]
    state_key = next((query_key(q) for q in ProbeMirror.mirrored(queries) if isinstance(q, AppStateQuery)), None)
    if not keys:
        return 0, "the judge reads no app state (only the page or the answer): the page probes attack it", []
    judged = _Judged(0, "", [])
    fast = FastMirror(mirror, final_db)
    for probe in probes:
        if judged.ran >= MAX_PROBES:
            break
        try:
            fast.load(probe.writes)
            final = mirror.answer(queries, oracle_final)
        except (sqlite3.Error, LookupError, TypeError, ValueError) as exc:  # the schema or the app refuses it
            judged.skipped = judged.skipped or f"the app refuses it ({type(exc).__name__}: {exc})"
            continue
        if all(_same(final.get(k), oracle_final.get(k)) for k in keys):
            judged.skipped = judged.skipped or f"invisible to the judge's queries ({probe.description})"
            continue
        changes = _changes(oracle_final, final, state_key)
        if incidental and changes and all(allowed_by(c, list(incidental)) for c in changes):
            judged.skipped = judged.skipped or f"changes only incidental fields ({probe.description})"
            continue
        judged.ran += 1
        verdict = evaluate(final)
        if verdict.passed:
            allowed = [str(c) for c in changes if allowed_by(c, list(expected))]
            if allowed:
                reason = (f"allowed but never judged: the template allows {'; '.join(allowed)[:200]} "
                          f"(expected_changes) and no check reads it: {probe.description}")
            else:
                reason = f"passes: {probe.description} (no check reads it and nothing refuses it)"
            judged.wrong.append((f"probe:{KIND}", reason, verdict))
    fast.load()
    return judged.ran, "" if judged.ran else (judged.skipped or "no edit to make"), judged.wrong


def _changes(before: dict[str, StateResult], after: dict[str, StateResult], state_key: str | None) -> list[Any]:
    if state_key is None:
        return []
    a, b = before.get(state_key), after.get(state_key)
    if a is None or b is None or not a.ok or not b.ok:
        return []
    return list(diff(a.value, b.value))
