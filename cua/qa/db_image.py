"""The database a bundled app keeps, as judge QA handles it: its tables (`TableInfo`),
read row by row through the app's read-only SQL (`dump_queries`, `DbImage`), the changes
between two such images (`DbDiff`), and an in-process copy of the app that answers a judge's
state queries over a database QA wrote (`ProbeMirror`). The probes (`cua.qa.probes`)
build their end states on these."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from cua.state import AppStateQuery, SqlQuery, StateQuery, StateResult
from cua.task import query_key
from cua.tasks.apps.activity import ACTIVITY_TABLE
from cua.tasks.apps.activity import install as install_activity_log

__all__ = ["DUMP_PAGE", "DbDiff", "DbImage", "ProbeMirror", "RowChange", "TableInfo", "count_queries", "dump_queries",
           "table_infos"]


# ---------------------------------------------------------------- the database as rows

@dataclass(frozen=True)
class TableInfo:
    name: str
    columns: tuple[str, ...]
    types: tuple[str, ...]
    #: The declared primary key's columns (the row key); empty: keyed by rowid.
    pk: tuple[str, ...]
    #: Columns that reference another table (a row's parent).
    foreign: tuple[str, ...]
    #: Columns (single) that are UNIQUE: a copy of a row must change them.
    unique: tuple[str, ...]
    #: Columns the app fills or computes itself (`WebApp.assigned`).
    assigned: tuple[str, ...] = ()

    def key(self, row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(row[c] for c in self.pk) if self.pk else (row["__rowid"],)


def table_infos(conn: sqlite3.Connection, assigned: dict[str, tuple[str, ...]] | None = None) -> list[TableInfo]:
    """Every table of a database (the app's schema), read with PRAGMAs in process;
    `assigned`: the app's `WebApp.assigned`."""
    out = []
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
    for name in names:
        info = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
        cols = tuple(r[1] for r in info)
        types = tuple(str(r[2]).upper() for r in info)
        pk = tuple(r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
        foreign = tuple(r[3] for r in conn.execute(f'PRAGMA foreign_key_list("{name}")').fetchall())
        unique: list[str] = []
        for idx in conn.execute(f'PRAGMA index_list("{name}")').fetchall():
            if idx[2]:  # unique
                idx_cols = [r[2] for r in conn.execute(f'PRAGMA index_info("{idx[1]}")').fetchall()]
                if len(idx_cols) == 1:
                    unique.append(idx_cols[0])
        out.append(TableInfo(name, cols, types, pk, foreign, tuple(unique), tuple((assigned or {}).get(name, ()))))
    return out


#: Rows per dump query: an app bounds each read-only query's time, so big tables are read in pages.
DUMP_PAGE = 400


def count_queries(tables: Sequence[TableInfo], service: str = "app") -> list[StateQuery]:
    return [SqlQuery(service=service, query=f'SELECT COUNT(*) AS n FROM "{t.name}"') for t in tables]


def dump_queries(tables: Sequence[TableInfo], service: str = "app",
                 counts: Sequence[int] | None = None) -> list[tuple[int, StateQuery]]:
    """(table index, read-only SQL) that together read every row of every table (BLOBs as
    hex), `DUMP_PAGE` rows at a time when `counts` gives the tables' sizes."""
    out: list[tuple[int, StateQuery]] = []
    for i, t in enumerate(tables):
        cols = ", ".join(f'hex("{c}") AS "{c}"' if "BLOB" in ty else f'"{c}"' for c, ty in zip(t.columns, t.types))
        base = f'SELECT rowid AS "__rowid", {cols} FROM "{t.name}" ORDER BY rowid'
        n = counts[i] if counts is not None else 0
        if n <= DUMP_PAGE:
            out.append((i, SqlQuery(service=service, query=base)))
        else:
            out += [(i, SqlQuery(service=service, query=f"{base} LIMIT {DUMP_PAGE} OFFSET {k}"))
                    for k in range(0, n, DUMP_PAGE)]
    return out


@dataclass
class DbImage:
    """A database as rows: table -> key -> row (with its `__rowid`)."""

    tables: dict[str, dict[tuple[Any, ...], dict[str, Any]]]

    @classmethod
    def from_results(cls, infos: Sequence[TableInfo], results: Sequence[StateResult],
                     which: Sequence[int] | None = None) -> "DbImage":
        """The image from the answers to `dump_queries` (`which`: each answer's table index)."""
        tables: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {i.name: {} for i in infos}
        for index, result in zip(which if which is not None else range(len(infos)), results, strict=True):
            info = infos[index]
            if not result.ok or not isinstance(result.value, list):
                raise ValueError(f"table {info.name} could not be read: {result.error}: {result.message}")
            tables[info.name].update({info.key(r): r for r in result.value})
        return cls(tables)

    def build(self, schema: str, infos: Sequence[TableInfo]) -> sqlite3.Connection:
        """A fresh database holding exactly these rows."""
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.executescript(schema)
        install_activity_log(conn)  # the app framework's own table, not in any app's schema
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("BEGIN")
        for info in infos:
            conn.execute(f'DELETE FROM "{info.name}"')  # a schema may seed rows of its own
            blob = {c for c, ty in zip(info.columns, info.types) if "BLOB" in ty}
            cols = ", ".join(f'"{c}"' for c in ("rowid", *info.columns))
            marks = ", ".join("?" for _ in range(len(info.columns) + 1))
            for row in self.tables.get(info.name, {}).values():
                values = [row["__rowid"], *(bytes.fromhex(row[c]) if c in blob and row[c] is not None else row[c]
                                             for c in info.columns)]
                conn.execute(f'INSERT INTO "{info.name}" ({cols}) VALUES ({marks})', values)
        conn.execute("COMMIT")
        return conn


@dataclass
class RowChange:
    table: str
    key: tuple[Any, ...]
    kind: str  # changed | added | removed
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @property
    def columns(self) -> list[str]:
        """The columns the change wrote (every column for an added row)."""
        if self.kind == "changed":
            assert self.before is not None and self.after is not None
            return [c for c in self.after if c != "__rowid" and self.before.get(c) != self.after.get(c)]
        row = self.after if self.kind == "added" else self.before
        return [c for c in (row or {}) if c != "__rowid"]

    def describe(self) -> str:
        return f"{self.table}{list(self.key)}"


@dataclass
class DbDiff:
    changes: list[RowChange]

    @classmethod
    def between(cls, before: DbImage, after: DbImage) -> "DbDiff":
        out: list[RowChange] = []
        for table in after.tables.keys() | before.tables.keys():
            if table == ACTIVITY_TABLE:  # the app's audit trail: history probes write it, never these
                continue
            old, new = before.tables.get(table, {}), after.tables.get(table, {})
            for key, row in old.items():
                if key not in new:
                    out.append(RowChange(table, key, "removed", row, None))
                elif {k: v for k, v in row.items() if k != "__rowid"} != {k: v for k, v in new[key].items() if k != "__rowid"}:
                    out.append(RowChange(table, key, "changed", row, new[key]))
            for key, row in new.items():
                if key not in old:
                    out.append(RowChange(table, key, "added", None, row))
        out.sort(key=lambda c: (c.table, c.kind, json.dumps(c.key, default=str)))
        return cls(out)

    def touched(self, table: str) -> set[tuple[Any, ...]]:
        return {c.key for c in self.changes if c.table == table}


# ---------------------------------------------------------------- the in-process mirror

class ProbeMirror:
    """An in-process instance of the bundled app that answers a judge's state queries
    over a database QA wrote (the live app is never written by a probe)."""

    def __init__(self, app: Any, infos: Sequence[TableInfo], service: str = "app") -> None:
        self.app = app
        self.infos = list(infos)
        self.service = service

    def load(self, image: DbImage, writes: Sequence[tuple[str, list[Any]]] = ()) -> None:
        conn = image.build(self.app.schema, self.infos)
        try:
            for sql, params in writes:
                conn.execute(sql, params)
            data = conn.serialize()
        finally:
            conn.close()
        self.app.db.restore(data, trusted=True)

    def answer(self, queries: Sequence[StateQuery], fallback: dict[str, StateResult]) -> dict[str, StateResult]:
        """The judge's state as the mirror sees it; queries it cannot answer keep `fallback`'s."""
        out: dict[str, StateResult] = {}
        for q in queries:
            key = query_key(q)
            if isinstance(q, AppStateQuery) and q.service == self.service:
                out[key] = StateResult(value=json.loads(json.dumps(self.app.state())))
            elif isinstance(q, SqlQuery) and q.service == self.service:
                try:
                    rows = self.app.db.read_only_query(q.query, list(q.params))
                except sqlite3.Error as exc:
                    out[key] = StateResult.failure("failed", f"{type(exc).__name__}: {exc}")
                else:
                    out[key] = StateResult(value=json.loads(json.dumps(rows)))
            elif key in fallback:
                out[key] = fallback[key]
        return out

    @staticmethod
    def mirrored(queries: Sequence[StateQuery], service: str = "app") -> Iterator[StateQuery]:
        for q in queries:
            if isinstance(q, (AppStateQuery, SqlQuery)) and q.service == service:
                yield q
