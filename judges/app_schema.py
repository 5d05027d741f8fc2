"""What a judge knows of an app's schema: its tables and columns, the columns the app fills
itself, the state fields derived from columns, and what an SQL query on it reads.

What a query reads comes from SQLite itself: the query is prepared (never run) on an empty
database of the app's schema under an authorizer, which reports every (table, column) it
reads. A second preparation with marker functions around each SELECT's result columns tells
the columns that feed the result (values) from those that only choose rows (filters): SQLite
resolves a SELECT's result columns before its WHERE, so the authorizer's reports fall
between the markers or outside them. The markers are placed by a small tokenizer that only
tracks brackets and keywords; a marker it misplaces makes the query fail to prepare, which
is reported, never read as a pass. `cua.judges.completeness` uses both to find the allowed
changes no check reads.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["AppSchema", "SqlReads", "TIMESTAMP", "mark_results"]

#: Bookkeeping timestamps an app stamps itself (created, updated_at, sent_at, ...).
TIMESTAMP = re.compile(r"^(created|updated|modified|changed|sent|received|joined|last_seen|last_login|viewed|placed|"
                       r"rotated)(_at|_on)?$|_at$")

@dataclass
class AppSchema:
    """What the rule needs of one app: its tables' columns, the columns it fills itself,
    the state fields derived from columns, and an empty database of its schema on which
    a judge's SQL is prepared (never run) to learn what it reads."""

    #: table -> its columns, in order.
    columns: Mapping[str, tuple[str, ...]]
    #: table -> the columns the app fills itself on a new row (primary key, timestamps, assigned).
    generated: Mapping[str, frozenset[str]]
    #: table -> its primary key columns.
    keys: Mapping[str, frozenset[str]]
    #: "collection.field" of the app's state -> the "table.column"s it is computed from.
    derived: Mapping[str, tuple[str, ...]]
    #: keys of a nested record of the state ("sheets.cells.*") -> its fixed fields.
    records: Mapping[str, tuple[str, ...]]
    #: table -> the key of the state that lists its rows, where the two differ ("cart_items": "cart").
    state_keys: Mapping[str, str]
    conn: sqlite3.Connection
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _reads: dict[str, SqlReads | str] = field(default_factory=dict)

    @classmethod
    def of(cls, conn: sqlite3.Connection, assigned: Mapping[str, Iterable[str]],
           derived: Mapping[str, tuple[str, ...]], records: Mapping[str, tuple[str, ...]],
           state_keys: Mapping[str, str]) -> AppSchema:
        """From `conn`, an empty database of the app's schema (with the app's SQL functions)."""
        columns: dict[str, tuple[str, ...]] = {}
        generated: dict[str, frozenset[str]] = {}
        keys: dict[str, frozenset[str]] = {}
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                             "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        for table in tables:
            info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
            columns[table] = tuple(str(r[1]) for r in info)
            keys[table] = frozenset(str(r[1]) for r in info if r[5])
            generated[table] = frozenset(keys[table] | {c for c in columns[table] if TIMESTAMP.search(c)}
                                         | set(assigned.get(table, ())))
        return cls(columns, generated, keys, dict(derived), dict(records), dict(state_keys), conn)

    def sql_reads(self, query: str) -> SqlReads | str:
        """The (table, column) pairs `query` reads for its result's values and those that
        choose its rows, or why it cannot be prepared."""
        with self._lock:
            cached = self._reads.get(query)
            if cached is not None:
                return cached
            seen: dict[str, set[tuple[str, str]]] = {state: set() for state in _MARKS.values()}
            seen["filter"] = set()
            state = "filter"

            def authorize(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
                nonlocal state
                if action == sqlite3.SQLITE_FUNCTION and arg2 in _MARKS:
                    state = _MARKS[arg2]
                elif action == sqlite3.SQLITE_READ and arg1:
                    seen[state].add((arg1, arg2 or ""))
                return sqlite3.SQLITE_OK

            for name in _MARKS:
                self.conn.create_function(name, -1, _no_value, deterministic=True)
            self.conn.set_authorizer(authorize)
            try:
                self.conn.execute("EXPLAIN " + query, [None] * query.count("?")).fetchall()
                for reads in seen.values():
                    reads.clear()
                self.conn.execute("EXPLAIN " + mark_results(query), [None] * query.count("?")).fetchall()
                result: SqlReads | str = SqlReads.of(seen)
            except sqlite3.Error as exc:
                result = f"the query does not prepare on the app's schema: {exc}"
            finally:
                self.conn.set_authorizer(None)
            self._reads[query] = result
            return result


@dataclass(frozen=True)
class SqlReads:
    """What an sql check reads: the columns its result holds or is ordered by (values) and
    those that choose its rows (filtered: WHERE, ON, GROUP BY, HAVING, an ORDER BY with a
    LIMIT, and subqueries there)."""

    values: frozenset[tuple[str, str]]
    filtered: frozenset[tuple[str, str]]

    @classmethod
    def of(cls, seen: Mapping[str, set[tuple[str, str]]]) -> SqlReads:
        # a scalar subquery in the result (`(SELECT COUNT(*) FROM attendees a WHERE a.event_id
        # = events.id)`) chooses its own table's rows; the outer row's column it names feeds
        # the result, a value
        outer = {t for t, _ in seen["value"]}
        inner = {(t, c) for t, c in seen["inner_filter"] if t not in outer}
        values = seen["value"] | seen["inner_value"] | (seen["inner_filter"] - inner)
        return cls(frozenset(values), frozenset(seen["filter"] | inner))


#: The marker functions `mark_results` inserts -> the state they start.
_MARKS = {"cua_completeness_value": "value", "cua_completeness_filter": "filter",
          "cua_completeness_inner_value": "inner_value", "cua_completeness_inner_filter": "inner_filter"}


def _no_value(*_: object) -> None:
    return None


_TOKEN = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\]|--[^\n]*|/\*.*?\*/|\w+|\s+|.""", re.S)
#: Keywords that end a SELECT's result columns (at the SELECT's own depth).
_AFTER_RESULT = frozenset({"from", "where", "group", "having", "window", "order", "limit", "union", "intersect",
                           "except", "join", "on", "using"})


@dataclass
class _Select:
    depth: int
    #: whether its result columns reach the query's result (not a subquery of a WHERE, ON, ...)
    valued: bool
    #: a subquery inside an expression has one result column: its marks wrap it, `V(x, F())`
    wrap: bool
    #: an arm of a compound SELECT (its ORDER BY names result columns: left as it is)
    compound: bool = False
    clause: str = "result"
    #: where the mark that opens its ORDER BY's values sits in the output (dropped if a LIMIT follows)
    order_mark: int | None = None

    def mark(self, end: bool) -> str:
        return f"cua_completeness_{'inner_' if self.wrap else ''}{'filter' if end else 'value'}"

    def close(self) -> str:
        """The mark that ends its result columns or ORDER BY (where they reach the query's result)."""
        out = ""
        if self.valued and self.clause == "result":
            out = f", {self.mark(True)}())" if self.wrap else f", {self.mark(True)}()"
        elif self.order_mark is not None:
            out = f", {self.mark(True)}()"
        self.clause, self.order_mark = "closed", None
        return out


def mark_results(query: str) -> str:
    """`query` with the result columns of every SELECT whose result reaches the query's
    result between two marker calls: `SELECT a, (SELECT b FROM t WHERE c) + d FROM u WHERE e`
    becomes `SELECT V(), a, (SELECT VI(b, FI()) FROM t WHERE c) + 0 * V() + d, F() FROM u WHERE e`.
    SQLite resolves names (and asks the authorizer) in that order: a FROM subquery first,
    then the result columns left to right (a function before its arguments), then HAVING,
    WHERE, ORDER BY, GROUP BY; so a column read between V and F is read for its value, any
    other only to choose rows. An ORDER BY without a LIMIT orders the values (its terms are
    marked as values); with one it chooses rows. The query is only prepared, never run."""
    out: list[str] = []
    stack: list[_Select] = []
    depth = 0
    opening: _Select | None = None  # its result columns start at the next token (after DISTINCT/ALL)
    for tok in _TOKEN.findall(query):
        word = tok.lower()
        blank = tok.isspace() or tok.startswith(("--", "/*"))
        if opening is not None and not blank and word not in ("distinct", "all"):
            out.append(f" {opening.mark(False)}(" if opening.wrap else f" {opening.mark(False)}(), ")
            opening = None
        top = stack[-1] if stack else None
        if word == "select":
            compound = False
            while stack and stack[-1].depth == depth:  # the previous arm of a compound
                compound = True
                stack.pop()
            parent = stack[-1] if stack else None
            valued = parent is None or (parent.valued and parent.clause in ("result", "from"))
            stack.append(_Select(depth, valued, wrap=parent is not None and parent.clause == "result",
                                 compound=compound))
            opening = stack[-1] if valued else None
        elif top is not None and depth == top.depth and word == "as" and top.wrap and top.clause == "result":
            out.append(top.close())
        elif top is not None and depth == top.depth and word in _AFTER_RESULT:
            if word == "limit" and top.order_mark is not None:
                out[top.order_mark] = ""  # the order chooses the rows a LIMIT keeps
                top.order_mark = None
            out.append(top.close() + " ")
            top.clause = ("from" if word in ("from", "join") else "order" if word == "order"
                          else "compound" if word in ("union", "intersect", "except") else "filter")
        elif top is not None and depth == top.depth and word == "by" and top.clause == "order":
            out.append(tok)
            if top.valued and not top.compound:
                out.append(f" {top.mark(False)}(),")
                top.order_mark = len(out) - 1
            continue
        elif tok == "(":
            depth += 1
        elif tok in (")", ";"):
            depth -= tok == ")"
            closed = False
            while stack and stack[-1].depth > depth - (tok == ";"):
                out.append(stack.pop().close())
                closed = True
            out.append(tok)
            parent = stack[-1] if stack else None
            if closed and parent is not None and parent.valued and parent.clause == "result":
                out.append(f" + 0 * {parent.mark(False)}()")  # the rest of the parent's result columns
            continue
        out.append(tok)
    out += [sel.close() for sel in reversed(stack)]
    return "".join(out)
