"""Completeness: which changes a judge allows that no check reads.

A template's judge allows changes (`expected_changes`, `incidental_changes`), fields left
to the agent (`free_fields`) and files (`expected_files`). Every one of them is either
read by a check or declared in `unjudged` with the reason it needs none; otherwise an
agent can put anything there and pass ("allowed but never judged": a new note in the
wrong folder passes a judge that allows the note and reads only its title).

What a check reads (its `checks`, never its `subgoals`, through all / not / weighted;
under `any`, or `weighted` below its full threshold, only what every branch reads):

- an `app_state` getter: its path, with the row selectors of each step as its scope;
  a path that ends at rows reads every field of them, except for `present` / `absent` /
  `length` (only the selectors' columns) and for `json_subset` / `table` / `json_path`
  (the keys they compare); a selector reads its own column;
- an `sql` getter: exactly the (table, column) pairs SQLite's authorizer reports while
  preparing the query on an empty database of the app's schema, each table-wide, but a
  column it only FILTERS on (read in WHERE, ON, GROUP BY, HAVING, ORDER BY, or in a
  subquery there, never in a result column) narrows the check's scope rather than
  judging the column: `SELECT title FROM todos WHERE list_id = ?` never sees a copy of
  the todo in another list. A result column is a value read wherever it sits
  (`SELECT role = 'viewer' FROM users` judges `role`; so does a scalar subquery's own
  result column); an aggregate over rows (`SELECT COUNT(*) ... WHERE done = 0`) reads
  only filters;
- a `file` / `files` / `command` getter: the user's files it names;
- any other getter (the URL, the page, the answer) reads no app table and no file.

The rules:

- a field allowance (`todos[list_id=3][*].done`) is covered by a read of that field (or
  of a path above it) whose selectors are the allowance's or fewer: a check of one row
  does not cover an allowance of many; an sql read covers it when every other column of
  the table the check filters on is one the allowance selects on, or the table's primary
  key where the allowance selects rows (the check names them by their keys: `WHERE id IN
  (...)` of `deals[contact_id=7].contact_id`); a filter on the field itself compares its
  value: `WHERE list_id = 3 AND done = 0` reads `done`;
- a row allowance (`todos[title~=X]`: the row may be added or removed) is covered when
  every column of the row's table is read, a free field, unjudged, or filled by the app
  itself (`AppSchema.generated`: its primary key, timestamps, `WebApp.assigned`); an sql
  read of a column covers it only when every column of the table that check filters on
  is one the allowance selects on, or its key as above (the check looks exactly where
  the allowance allows:
  `todos[list_id=3][title~=X]` for `WHERE list_id = ? AND same_text(title, ?)`);
- an expected file glob is covered by a check that reads a matching path;
- `unjudged` keys name an allowance, a free field, an expected file or a `table.column`,
  each with its reason.

The analysis runs on the template as written (placeholders compare as text: the check
and the allowance both say `todos[id={todo.id}]`), once per template at load.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from cua.judges.app_schema import TIMESTAMP, AppSchema
from cua.judges.files import allowed_by as file_allowed_by
from cua.judges.paths import PathError, parse_path
from cua.judges.spec import (
    AbsentCmp,
    AllNode,
    AnyNode,
    AppStateGetter,
    CheckNode,
    CommandGetter,
    ComparatorSpec,
    FileGetter,
    FilesGetter,
    JsonPathCmp,
    JsonSubsetCmp,
    JudgeSpec,
    LengthCmp,
    NodeSpec,
    NotNode,
    PresentCmp,
    SqlGetter,
    TableCmp,
    WeightedNode,
)

__all__ = ["Gap", "Tally", "gaps", "tally"]

#: Ops that read whether rows exist, not what they hold.
_EXISTENCE_OPS = frozenset({"present", "absent", "length"})


# ---------------------------------------------------------------- paths and reads

#: One step of a path: a key (None: selectors only) and its row selectors as text (`[*]` dropped).
Step = tuple[str | None, frozenset[str]]


def _steps(path: str) -> tuple[Step, ...]:
    out: list[Step] = []
    for seg in parse_path(path):
        sels: set[str] = set()
        for kind, arg in seg.selectors:
            if kind == "index":
                sels.add(f"[{arg}]")
            elif kind == "cond":
                sels.add(f"{arg.field}{arg.op}{arg.text}")
        out.append((seg.key, frozenset(sels)))
    return tuple(out)


def _ends_at_rows(path: str) -> bool:
    segs = parse_path(path)
    return bool(segs) and bool(segs[-1].selectors)


@dataclass(frozen=True)
class Read:
    """A check reads everything at and under `steps`; `scoped` False: at any rows (SQL)."""

    steps: tuple[Step, ...]
    check: str
    scoped: bool = True
    #: The check requires that no row is there (`absent`; `not` of `present`; at most 0 rows).
    absent: bool = False

    #: SQL: the columns of the table the check filters on (its rows are those they choose).
    filters: frozenset[str] = frozenset()
    #: SQL: the check only filters on this column (it reads no value of it).
    filter_only: bool = False
    #: SQL: the table's primary key (a check may name the rows an allowance selects by their keys).
    keys: frozenset[str] = frozenset()

    def covers(self, target: tuple[Step, ...], row: bool = False) -> bool | None:
        """True when this read covers `target`; None when it reads the field, but at a
        narrower scope (fewer rows); False when it reads something else. `row`: `target`
        is a column of a row the judge lets the agent add or remove."""
        if len(self.steps) > len(target):
            return False
        narrower = False
        for (rkey, rsel), (tkey, tsel) in zip(self.steps, target):
            if rkey != tkey and rkey != "*":
                return False
            if self.scoped and not rsel <= tsel:
                narrower = True
        if not self.scoped and target:
            # an sql check sees only the rows its filters choose: the allowance's selectors
            # must choose them too (a filter on the field itself compares the field's value)
            chosen = _selector_fields(target[0][1])
            own = {target[1][0]} if len(target) > 1 and not row else set()
            named = self.keys if chosen else set()  # the rows the selectors resolve to, by their keys
            if not self.filters <= chosen | own | named:
                narrower = True
        return None if narrower else True

    def at_least(self, other: Read) -> bool:
        """Whether this read judges all that `other` does (as wide, and a value where it reads one)."""
        if self.scoped or other.scoped:
            return self.covers(other.steps) is True and (self.absent or not other.absent)
        return (self.steps == other.steps and self.filters <= other.filters
                and (other.filter_only or not self.filter_only))


_SELECTOR = re.compile(r"^([^=!<>~\[\s]+)\s*(?:~=|!=|<=|>=|=|<|>)")


def _selector_fields(sels: frozenset[str]) -> set[str]:
    """The columns a step's selectors (`list_id=3`, `title~=X`) choose rows by."""
    return {m.group(1) for m in map(_SELECTOR.match, sels) if m}


def _selector_reads(steps: tuple[Step, ...], path: str, check: str) -> Iterator[Read]:
    """A selector `[k=v]` reads column k of the rows it looks at."""
    for i, seg in enumerate(parse_path(path)):
        for kind, arg in seg.selectors:
            if kind == "cond":
                yield Read((*steps[: i + 1], (arg.field, frozenset())), check)


def _app_state_reads(getter: AppStateGetter, expect: ComparatorSpec, check: str, negated: bool) -> Iterator[Read]:
    path = getter.path or ""
    steps = _steps(path) if path else ()
    yield from _selector_reads(steps, path, check)
    if expect.op in _EXISTENCE_OPS and (not steps or _ends_at_rows(path)):
        none_left = ((isinstance(expect, AbsentCmp) and not negated) or (isinstance(expect, PresentCmp) and negated)
                     or (isinstance(expect, LengthCmp) and expect.max == 0 and not negated))
        if none_left and getter.at == "final":
            yield Read(steps, check, absent=True)
        return
    if isinstance(expect, JsonPathCmp):
        yield Read((*steps, *_steps(expect.path)), check)
        return
    keys: set[str] = set()
    if isinstance(expect, TableCmp):
        keys = set(expect.columns or []) or _row_keys(expect.rows)
    elif isinstance(expect, JsonSubsetCmp):
        keys = _row_keys(expect.value)
    if keys:
        yield from (Read((*steps, (k, frozenset())), check) for k in sorted(keys))
    else:
        yield Read(steps, check)


def _row_keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return {str(k) for k in value}
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return {str(k) for v in value for k in v}
    return set()


def _command_files(argv: list[str]) -> set[str]:
    return {tok for arg in argv for tok in re.split(r"[\s|;&<>()'\"]+", arg) if tok and not tok.startswith("-")}


@dataclass
class _ReadSet:
    reads: list[Read] = field(default_factory=list)
    files: list[tuple[str, str]] = field(default_factory=list)  # (path or root/, check)
    problems: list[str] = field(default_factory=list)
    #: The service whose reads count (a workflow's checks read several apps; each is tallied apart).
    service: str = "app"


def _collect(nodes: Iterable[NodeSpec], schema: AppSchema | None, out: _ReadSet, where: str,
             negated: bool = False) -> None:
    for i, node in enumerate(nodes):
        here = f"{where}[{i}]"
        if isinstance(node, CheckNode):
            _collect_check(node, schema, out, here, negated)
        elif isinstance(node, AllNode):
            _collect(node.all, schema, out, f"{here}.all", negated)
        elif isinstance(node, AnyNode):
            _collect_either(node.any, schema, out, f"{here}.any", negated)
        elif isinstance(node, NotNode):
            _collect([node.not_], schema, out, f"{here}.not", not negated)
        elif isinstance(node, WeightedNode):
            items = [w.node for w in node.weighted]
            if node.threshold >= 1:
                _collect(items, schema, out, f"{here}.weighted", negated)
            else:  # it passes with some items failing: what one of them reads may go unjudged
                _collect_either(items, schema, out, f"{here}.weighted", negated)


def _collect_either(nodes: list[NodeSpec], schema: AppSchema | None, out: _ReadSet, where: str,
                    negated: bool) -> None:
    """What a check reads when any one of `nodes` may decide it: only what each of them reads
    (an `any` whose one branch reads the folder and the other does not leaves the folder unjudged)."""
    branches = []
    for i, node in enumerate(nodes):
        branch = _ReadSet(service=out.service)
        _collect([node], schema, branch, f"{where}[{i}]", negated)
        out.problems += branch.problems
        branches.append(branch)
    first, rest = branches[0], branches[1:]
    out.reads += [r for r in first.reads if all(any(o.at_least(r) for o in b.reads) for b in rest)]
    out.files += [f for f in first.files if all(any(g[0] == f[0] for g in b.files) for b in rest)]


def _collect_check(node: CheckNode, schema: AppSchema | None, out: _ReadSet, where: str, negated: bool) -> None:
    get, name = node.get, f"{where} {node.check!r}"
    if isinstance(get, (AppStateGetter, SqlGetter)) and get.service != out.service:
        return  # another app's read: it counts toward that app's allowances
    if isinstance(get, AppStateGetter):
        out.reads += _app_state_reads(get, node.expect, name, negated)
    elif isinstance(get, SqlGetter):
        if schema is None:
            return
        reads = schema.sql_reads(get.query)
        if isinstance(reads, str):
            out.problems.append(f"{where}: {reads}")
            return
        for t, c in sorted(reads.values | reads.filtered):
            filters = frozenset(fc for ft, fc in reads.filtered if ft == t and fc)  # "": COUNT(*) reads no column
            out.reads.append(Read(((schema.state_keys.get(t, t), frozenset()), (c, frozenset())), name, scoped=False,
                                  filters=filters, filter_only=(t, c) not in reads.values,
                                  keys=schema.keys.get(t, frozenset())))
    elif isinstance(get, FileGetter):  # a folder's listing reads which files are in it
        out.files.append((get.file.rstrip("/") + "/" if get.mode == "list" else get.file, name))
    elif isinstance(get, FilesGetter):
        out.files += [(root.rstrip("/") + "/", name) for root in get.roots]
    elif isinstance(get, CommandGetter):
        out.files += [(f, name) for f in sorted(_command_files(get.argv[1:]))]


def _with_derived(reads: list[Read], schema: AppSchema | None) -> list[Read]:
    """A read of a derived state field (a note's `folder`) is a read of the columns of its
    own row it is computed from (`notes.folder_id`), at the same rows."""
    if schema is None or not schema.derived:
        return reads
    out = list(reads)
    for name, sources in schema.derived.items():
        table, _, fld = name.partition(".")
        own = [s.partition(".")[2] for s in sources if s.partition(".")[0] == table]
        other = [s.partition(".")[::2] for s in sources if s.partition(".")[0] != table]
        for r in reads:
            if len(r.steps) >= 2 and r.steps[0][0] == table and r.steps[1][0] == fld and not r.absent:
                out += [replace(r, steps=(r.steps[0], (c, frozenset()))) for c in own]
                out += [Read(((t, frozenset()), (c, frozenset())), r.check, scoped=False) for t, c in other]
    return out


# ---------------------------------------------------------------- the rule

@dataclass(frozen=True)
class Gap:
    """One allowance (the field that holds it, e.g. `judge.expected_changes[0]`) that no
    check reads, and what is missing."""

    field: str
    reason: str


@dataclass
class Tally:
    """How one judge's allowances are accounted for: each is read by checks, or (in whole or
    in part) declared unjudged, or a gap."""

    allowances: int = 0
    read: int = 0
    unjudged: int = 0
    gaps: list[Gap] = field(default_factory=list)


_FIX = "read it in a check, or declare it in judge.unjudged with the reason it needs none"


def tally(judge: JudgeSpec, schema: AppSchema | None, checks: list[NodeSpec] | None = None) -> Tally:
    """Account for every allowance of `judge`; `schema`: its app's (None without an app).
    `checks`: those that read it, when they are another judge's (a workflow's other app,
    `JudgeSpec.apps`: only the checks' reads of its service count)."""
    out = Tally()
    if not (judge.expected_changes or judge.incidental_changes or judge.free_fields or judge.expected_files
            or judge.unjudged):
        return out
    found = _ReadSet(service=judge.service)
    _collect(judge.checks if checks is None else checks, schema, found, "judge.checks")
    reads = _with_derived(found.reads, schema)
    out.gaps += [Gap("judge.checks", p) for p in found.problems]
    unjudged = _Declared(judge.unjudged)
    free = set(judge.free_fields)
    allowed = [_steps(p) for p in [*judge.expected_changes, *judge.incidental_changes]]
    for key in unjudged:
        if not _names_an_allowance(key, judge, schema):
            out.gaps.append(Gap(f"judge.unjudged {key!r}", "names no allowance of this judge (an expected or "
                                "incidental change, a free field, an expected file, or a table.column of one)"))
    for kind, patterns in (("expected_changes", judge.expected_changes),
                           ("incidental_changes", judge.incidental_changes)):
        for i, pattern in enumerate(patterns):
            where = f"judge.{kind}[{i}] {pattern!r}"
            out.allowances += 1
            if pattern in unjudged:
                out.unjudged += 1
                continue
            unjudged.used.clear()
            missing = _pattern_gap(pattern, reads, schema, unjudged, free, allowed)
            if missing is None and unjudged.used:  # some of what it allows is declared unjudged
                out.unjudged += 1
            elif missing is None:
                out.read += 1
            else:
                out.gaps.append(Gap(where, f"{missing}: {_FIX}"))
    for i, name in enumerate(judge.free_fields):
        out.allowances += 1
        if name in unjudged:
            out.unjudged += 1
            continue
        table, _, column = name.partition(".")
        if _field_read(((table, frozenset()), (column, frozenset())), reads) is True:
            out.read += 1
        else:
            out.gaps.append(Gap(f"judge.free_fields[{i}] {name!r}", f"no check reads {name}: {_FIX}"))
    for i, glob in enumerate(judge.expected_files or []):
        out.allowances += 1
        if glob in unjudged:
            out.unjudged += 1
        elif any(_file_read(glob, path) for path, _ in found.files):
            out.read += 1
        else:
            out.gaps.append(Gap(f"judge.expected_files[{i}] {glob!r}",
                                f"no file, files or command check reads a file it allows: {_FIX}"))
    return out


class _Declared(dict[str, str]):
    """`JudgeSpec.unjudged`, noting which of its keys were looked up and found."""

    def __init__(self, entries: Mapping[str, str]) -> None:
        super().__init__(entries)
        self.used: set[object] = set()

    def __contains__(self, key: object) -> bool:
        found = super().__contains__(key)
        if found:
            self.used.add(key)
        return found


def gaps(judge: JudgeSpec, schema: AppSchema | None) -> list[Gap]:
    return tally(judge, schema).gaps


def _names_an_allowance(key: str, judge: JudgeSpec, schema: AppSchema | None) -> bool:
    allowances = [*judge.expected_changes, *judge.incidental_changes, *judge.free_fields, *(judge.expected_files or [])]
    if key in allowances:
        return True
    table, dot, column = key.partition(".")
    if not dot or not column or "." in column or "[" in key:
        return False
    tables = {f.partition(".")[0] for f in judge.free_fields}
    for pattern in [*judge.expected_changes, *judge.incidental_changes]:
        try:
            segs = parse_path(pattern)
        except PathError:
            continue
        if segs and segs[0].key is not None:
            tables.add(segs[0].key)
    # a table whose rows the state lists under another key is named by either
    keys = {schema.state_keys.get(table, table)} if schema is not None else set()
    return table in tables or bool(keys & tables)


def _field_read(target: tuple[Step, ...], reads: list[Read]) -> bool | Read | None:
    """True when some read covers `target`; else the read that covers it only narrowly
    (for the message), else None."""
    narrow: Read | None = None
    for r in reads:
        verdict = r.covers(target)
        if verdict is True:
            return True
        if verdict is None and narrow is None:
            narrow = r
    return narrow


def _scope(steps: tuple[Step, ...]) -> str:
    return "".join(f"[{s}]" for _, sels in steps for s in sorted(sels)) or "[*]"


def _keys_match(names: list[str], steps: tuple[Step, ...]) -> bool:
    """Whether a declared path (`sheets.cells.*`) names the keys of `steps` (selectors aside)."""
    return len(names) == len(steps) and all(n in ("*", k) or (k or "").startswith("{") for n, (k, _) in
                                            zip(names, steps))


def _record_fields(schema: AppSchema, steps: tuple[Step, ...]) -> tuple[str, ...]:
    """The fixed fields of a nested record of the state at `steps` (`WebApp.records`), if it is one."""
    return next((f for path, f in schema.records.items() if _keys_match(path.split("."), steps)), ())


def _derived(schema: AppSchema, steps: tuple[Step, ...]) -> tuple[str, ...] | None:
    """The columns the derived field at `steps` (or the one above it) is computed from."""
    for name, sources in schema.derived.items():
        parts = name.split(".")
        if len(parts) <= len(steps) and _keys_match(parts, steps[: len(parts)]):
            return sources
    return None


def _stamped(schema: AppSchema, table: str, column: str) -> bool:
    """A key or a bookkeeping timestamp of an existing row: the app sets it, whatever the agent does."""
    return column in schema.keys.get(table, ()) or bool(TIMESTAMP.search(column)) and column in schema.columns.get(table, ())


def _source_pinned(source: str, steps: tuple[Step, ...], reads: list[Read], allowed: list[tuple[Step, ...]],
                   state_keys: Mapping[str, str]) -> bool:
    """Whether a column a derived field is computed from is read at the field's rows (at
    any rows, for another table's column: the rows that feed this one, such as the votes
    of a post), or, in the field's own table, each change of it the judge allows is read
    (the side-effect diff refuses every other: a folder's path follows from the one name
    the task renames)."""
    table, _, column = source.partition(".")
    table = state_keys.get(table, table)
    own = steps[0][0] == table
    target: tuple[Step, ...] = ((steps[0] if own else (table, frozenset())), (column, frozenset()))
    if not own:  # the rows of another table that feed this one: read at any rows
        return any(r.covers(target) is not False for r in reads)
    if _field_read(target, reads) is True:
        return True
    # every change of it the judge allows is one a check reads
    return all(_field_read((a[0], (column, frozenset())), reads) is True for a in allowed
               if a[0][0] == table and (len(a) == 1 or a[1][0] in (column, "*")))


def _pattern_gap(pattern: str, reads: list[Read], schema: AppSchema | None, unjudged: Mapping[str, str],
                 free: set[str], allowed: list[tuple[Step, ...]]) -> str | None:
    steps = _steps(pattern)
    if _ends_at_rows(pattern):
        if any(r.absent and r.covers(steps) is True for r in reads):
            return None  # no such row is left at the end: none carries anything unread
        key = steps[0][0] if len(steps) == 1 else None
        # the state lists a table's rows under its own key where the two differ ("cart_items": "cart")
        table = next((t for t, k in schema.state_keys.items() if k == key), key) if schema is not None else key
        if schema is not None and table in schema.columns:
            assert table is not None
            unread = []
            for column in schema.columns[table]:
                names = {f"{table}.{column}", f"{key}.{column}"}
                if column in schema.generated.get(table, ()) or names & set(unjudged) or names & free:
                    continue
                if _field_read((*steps, (column, frozenset())), reads) is not True:
                    unread.append(column)
            # what a new row holds in other tables (its tags, its attendees) is part of it
            for name, sources in schema.derived.items():
                own, _, fld = name.partition(".")
                if (own not in (table, key) or "." in fld or name in unjudged
                        or any(src.startswith(f"{table}.") for src in sources)):
                    continue
                if _field_read((*steps, (fld, frozenset())), reads) is not True and not all(
                        _source_pinned(src, steps, reads, allowed, schema.state_keys) for src in sources):
                    unread.append(fld)
            if unread:
                narrow = next((r for c in unread for r in reads
                               if not r.scoped and r.covers((*steps, (c, frozenset())), row=True) is None), None)
                return (f"a row it lets the agent add or remove carries {', '.join(unread)} of {table}, which no "
                        f"check reads at rows as wide as {_scope(steps)}{_filtered(narrow, steps)}")
            return None
    verdict = _field_read(steps, reads)
    if verdict is True:
        return None
    name = f"{steps[0][0]}.{steps[1][0]}" if len(steps) >= 2 else ""
    if len(steps) == 2 and name in unjudged:
        return None
    if schema is None:
        return _narrow(verdict, steps)
    if len(steps) == 2 and _stamped(schema, str(steps[0][0]), str(steps[1][0])):
        return None
    fields = _record_fields(schema, steps)
    if fields and all(_field_read((*steps, (f, frozenset())), reads) is True for f in fields):
        return None  # a record of fixed fields, each of them read
    derived = _derived(schema, steps)
    if derived is not None:
        unread = [s for s in derived
                  if s not in unjudged and not _source_pinned(s, steps, reads, allowed, schema.state_keys)]
        if not unread:
            return None
        return (f"it is computed from {', '.join(unread)}, which no check reads at rows as wide as {_scope(steps)}"
                f"{' and the judge lets change' if any(s.startswith(name.split('.')[0] + '.') for s in unread) else ''}")
    return _narrow(verdict, steps)


def _filtered(read: Read | None, steps: tuple[Step, ...], own: str | None = None) -> str:
    """Why an sql read is narrower than an allowance: the columns it chooses its rows by
    (`own`: the allowed field, whose own filter compares its value)."""
    if read is None:
        return ""
    chosen = _selector_fields(steps[0][1])
    extra = sorted(read.filters - chosen - (read.keys if chosen else set()) - {own})
    return (f" ({read.check} looks only at the rows it chooses by {', '.join(extra)}, which the allowance does "
            f"not select on: select on {'it' if len(extra) == 1 else 'them'} in the allowance, or read the rows "
            f"the allowance allows)")


def _narrow(verdict: bool | Read | None, steps: tuple[Step, ...]) -> str:
    if isinstance(verdict, Read) and not verdict.scoped:
        return (f"no check reads it at rows as wide as {_scope(steps)}"
                f"{_filtered(verdict, steps, steps[1][0] if len(steps) > 1 else None)}")
    if isinstance(verdict, Read):
        return (f"the only check that reads it, {verdict.check}, reads it at {_scope(verdict.steps)}, "
                f"narrower than the {_scope(steps)} it allows")
    return "no check reads it"


def _file_read(glob: str, path: str) -> bool:
    """Whether a check that reads `path` (a folder when it ends with /) reads a file `glob` allows."""
    if path in ("./", "/"):
        return True
    if path.endswith("/"):
        return glob.startswith(path) or glob == path.rstrip("/")
    if path == glob or file_allowed_by(path, [glob]):
        return True
    static = glob.split("*", 1)[0].rstrip("/")
    return "*" in glob and path.rstrip("/") == static
