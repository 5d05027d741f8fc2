"""Every bundled app's activity log: an append-only audit trail of its writes, outside
what its UI can delete.

A judge that compares only the state at reset with the state at the end is blind to
history: something sent and then purged, or a record damaged and then put back, leaves no
trace in the end state. Real products keep an audit trail for the same reason; so does
every bundled app, for free, from the framework:

- after each request that wrote to the database (SQLite's change counter moved), the
  app's judge-facing state (`WebApp.state()`) is diffed against the state before it, and
  the changes (`cua.judges.sidefx.Change`, as JSON) are appended as one entry, with the
  request that made them and the irreversible events among them;
- the log is the table `cua_activity` in the app's own database, so snapshots, restores
  and forks carry it; triggers refuse every UPDATE and DELETE of it, no route of any app
  touches it, and the state a judge diffs leaves it out;
- an app names its irreversible operations (`WebApp.irreversible`: a message sent, an
  order placed); an entry lists each such event with the record it made, so a judge can
  tell that the record was erased afterwards.

Judges read it with a read-only SQL query (`cua.judges.judge.HISTORY_SQL`): entries after
the last one seen at the episode's start are the episode's history.

Method evidence: where a task names the way to do something ("drag the card", "pick the
date in the date picker"), the end state cannot tell that way from another. The route
that writes such a field says which of the app's ways produced the value it wrote
(`used_method(scope, "drag", "cards[id=5].column_id")`, on every route that writes the
field, each time it changes it); the entry keeps the list in its column `methods`, and a
judge reads the last one for the field (tasks/README.md, "Method-named instructions").
The way is told by what only the UI can produce: a route only the widget's script calls,
or a field the widget's script sets that no page lets a person type into; the app host
refuses writes from any other page's origin (`AppHostGuard`), and no write answers a GET.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, MutableMapping, Sequence
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from cua.judges.sidefx import Change, change_to_json, diff, row_path

__all__ = ["ACTIVITY_DDL", "ACTIVITY_TABLE", "METHODS_SCOPE_KEY", "ActivityLog", "ActivityRecorded", "added_row",
           "install", "new_value", "used_method"]

ACTIVITY_TABLE = "cua_activity"

ACTIVITY_DDL = f"""
CREATE TABLE IF NOT EXISTS {ACTIVITY_TABLE} (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    request TEXT NOT NULL,
    events TEXT NOT NULL,
    changes TEXT NOT NULL,
    methods TEXT NOT NULL DEFAULT '[]'
);
CREATE TRIGGER IF NOT EXISTS {ACTIVITY_TABLE}_no_update BEFORE UPDATE ON {ACTIVITY_TABLE}
BEGIN SELECT RAISE(ABORT, 'the activity log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS {ACTIVITY_TABLE}_no_delete BEFORE DELETE ON {ACTIVITY_TABLE}
BEGIN SELECT RAISE(ABORT, 'the activity log is append-only'); END;
"""


#: Where a route puts the methods of its request (`used_method`), in the ASGI scope.
METHODS_SCOPE_KEY = "cua.activity.methods"


def install(conn: sqlite3.Connection) -> None:
    """Create the log (and its guards) in a database that has none; a log from before
    method evidence gets its `methods` column (every old entry: none)."""
    conn.executescript(ACTIVITY_DDL)
    if "methods" not in {row[1] for row in conn.execute(f"PRAGMA table_info({ACTIVITY_TABLE})")}:
        conn.execute(f"ALTER TABLE {ACTIVITY_TABLE} ADD COLUMN methods TEXT NOT NULL DEFAULT '[]'")


def used_method(scope: MutableMapping[str, Any], method: str, field: str) -> None:
    """Record in this request's log entry that it wrote `field` (a path of the app's state,
    `cards[id=5].column_id`) by `method` (`drag`, `keyboard`, `dialog`, `date_picker`,
    `form`): the entry's `methods` gets `"<method> <field>"`. Call it on every route that
    writes the field, each time the value changes, so that the last entry naming the field
    says how its current value was made. A request that changes nothing logs nothing."""
    if not method or " " in method:
        raise ValueError(f"a method is one word: {method!r}")
    scope.setdefault(METHODS_SCOPE_KEY, []).append(f"{method} {field}")


def added_row(change: Change, collection: str) -> dict[str, Any] | None:
    """The record `change` adds to the top-level list `collection` of an app's state, if it does."""
    steps = change.steps
    if change.kind == "added" and len(steps) == 2 and steps[0].key == collection and steps[1].key is None \
            and isinstance(change.after, dict):
        return change.after
    return None


def new_value(change: Change, collection: str, field: str) -> tuple[bool, Any]:
    """(True, value) when `change` sets `field` of a record of the top-level list `collection`."""
    steps = change.steps
    if change.kind == "changed" and len(steps) == 3 and steps[0].key == collection and steps[1].key is None \
            and steps[2].key == field:
        return True, change.after
    return False, None


class ActivityLog:
    """Appends an entry for each write of one app instance.

    `begin()` before a request makes sure the state before it is known; `end(request)`
    after it appends the changes, if the request wrote anything. The state before is the
    one after the last logged write (or the last reset or restore): computed once, then
    carried from entry to entry, so a request that writes nothing costs one integer read.
    """

    def __init__(self, conn: Callable[[], sqlite3.Connection], state: Callable[[], Any],
                 irreversible: Callable[[Change], str | None]) -> None:
        self._conn = conn
        self._state = state
        self._irreversible = irreversible
        self._before: Any = None
        self._known = False
        self._counter = -1

    def forget(self) -> None:
        """The database was replaced (reset, restore): the state before the next write is read anew."""
        self._known = False

    def begin(self) -> None:
        if not self._known:
            self._before = self._state()
            self._counter = self._conn().total_changes
            self._known = True

    def end(self, request: str, methods: Sequence[str] = ()) -> list[Change]:
        """Log what `request` changed (nothing when it wrote nothing), with the methods its
        route said it used (`used_method`)."""
        conn = self._conn()
        if not self._known or conn.total_changes == self._counter:
            return []
        after = self._state()
        changes = self.append(request, self._before, after, methods)
        self._before, self._counter = after, conn.total_changes
        return changes

    def append(self, request: str, before: Any, after: Any, methods: Sequence[str] = ()) -> list[Change]:
        """Append the changes from state `before` to state `after` as one entry (none if equal)."""
        changes = list(diff(before, after))
        if changes:
            events = [{"event": name, "record": row_path(c)} for c in changes
                      if (name := self._irreversible(c)) is not None]
            self._conn().execute(
                f"INSERT INTO {ACTIVITY_TABLE} (request, events, changes, methods) VALUES (?, ?, ?, ?)",
                (request, json.dumps(events), json.dumps([change_to_json(c) for c in changes], default=str),
                 json.dumps(list(methods))))
        return changes


class ActivityRecorded:
    """ASGI middleware: log each page request's writes in the app's activity log. Control
    requests (the host's, under `control_prefix`) are not the agent's, and are not logged."""

    def __init__(self, inner: ASGIApp, log: ActivityLog, control_prefix: str) -> None:
        self.inner = inner
        self.log = log
        self.control_prefix = control_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.control_prefix):
            await self.inner(scope, receive, send)
            return
        self.log.begin()
        try:
            await self.inner(scope, receive, send)
        finally:
            self.log.end(f"{scope.get('method', 'GET')} {scope['path']}", scope.get(METHODS_SCOPE_KEY, ()))
