"""A live product instance's database: the product's own SQLite file, which its server
reads and writes, restored with SQLite's backup API (see `FileDB`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cua.tasks.apps.activity import install as install_activity_log
from cua.tasks.apps.base import AppDB
from cua.tasks.apps.base import _same_text as same_text  # the bundled apps' own: one meaning of "the same title"

__all__ = ["FileDB", "open_memory", "same_text"]


def open_memory() -> sqlite3.Connection:
    return sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)


class FileDB(AppDB):
    """A live instance's database: the product's own SQLite file, shared with its server."""

    def __init__(self, schema: str, path: Path, private_ddl: dict[str, list[str]]) -> None:
        self.schema = schema
        self.path = path
        #: table -> its CREATE statements, for the product's private tables that an image
        #: written by judge QA's copy lacks (`ProductApp.private_tables`).
        self.private_ddl = private_ddl
        self.conn = self._open()

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        conn.row_factory = sqlite3.Row
        conn.create_function("same_text", 2, same_text, deterministic=True)
        conn.execute("PRAGMA synchronous = OFF")  # this connection's copies: a crash loses an episode, not an image
        return conn

    def restore(self, image: bytes, *, trusted: bool = False) -> None:
        """Copy `image` into the file (SQLite's backup API: the product's next request sees
        it whole); on bad bytes raise sqlite3.DatabaseError and keep the file as it was."""
        if not image:
            raise sqlite3.DatabaseError("empty database image")
        fresh = open_memory()
        try:
            fresh.deserialize(image)
            if not trusted:
                check = fresh.execute("PRAGMA quick_check").fetchone()
                if check is None or check[0] != "ok":
                    raise sqlite3.DatabaseError(f"database image fails its integrity check: {check}")
                if not fresh.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    raise sqlite3.DatabaseError("database image holds no tables")
            install_activity_log(fresh)
            present = {r[0] for r in fresh.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            for table, statements in self.private_ddl.items():
                if table not in present:  # an image from the in-process copy: the product needs them, empty
                    for statement in statements:
                        fresh.execute(statement)
            fresh.backup(self.conn)
        finally:
            fresh.close()
