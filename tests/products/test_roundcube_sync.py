"""Roundcube's mirror of the Maildir tree is read after each request only when the tree
changed (cua.tasks.products.roundcube.maildir.TreeSync): reading it whole took ~3 ms idle
and ~25 ms on a busy machine, on each of a page's three requests, in the server's way.

The skip must never hide a change: each kind of change (a flag, a new message, an expunge,
a folder, a tree swapped in, tables rewritten by a restore) is seen by the next sync, and
so is one made within the file system's timestamp tick of the last read. A real Maildir
tree on disk and a real SQLite database; no Dovecot needed."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from cua.tasks.products.roundcube import maildir

USER = "alice@harborview.test"
HOUR_NS = 3600 * 10**9


def _message(n: int) -> bytes:
    return (f"From: Bob <bob@harborview.test>\r\nTo: {USER}\r\nSubject: note {n}\r\n"
            f"Message-ID: <m{n}@harborview.test>\r\nDate: Mon, 1 Jun 2026 10:00:00 +0000\r\n\r\nbody {n}\r\n").encode()


def _tree(root: Path) -> Path:
    """A user's INBOX with two messages (one seen) and an Archive folder with one."""
    inbox = root / USER
    for folder in (inbox, inbox / ".Archive"):
        for sub in ("cur", "new", "tmp"):
            (folder / sub).mkdir(parents=True)
    (inbox / "cur" / "1001.a:2,S").write_bytes(_message(1))
    (inbox / "cur" / "1002.b:2,").write_bytes(_message(2))
    (inbox / ".Archive" / "cur" / "1003.c:2,").write_bytes(_message(3))
    return inbox


def _age(root: Path) -> None:
    """Every directory of the tree last changed an hour ago (outside the racy window)."""
    old = time.time_ns() - HOUR_NS
    for path in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        os.utime(path, ns=(old, old))


@pytest.fixture
def db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(maildir.MIRROR_DDL)
    return conn


def _rows(db: sqlite3.Connection) -> dict[str, tuple[str, int, int]]:
    return {r[0]: (r[1], r[2], r[3]) for r in db.execute("SELECT id, folder, seen, flagged FROM messages")}


def _statements(db: sqlite3.Connection, tree: maildir.TreeSync) -> tuple[bool, list[str]]:
    """Run `tree` once; whether it wrote, and the SQL it sent."""
    sent: list[str] = []
    db.set_trace_callback(sent.append)
    try:
        return tree(db), sent
    finally:
        db.set_trace_callback(None)


def test_an_unchanged_tree_is_not_read_again(tmp_path: Path, db: sqlite3.Connection) -> None:
    _tree(tmp_path)
    _age(tmp_path)
    tree = maildir.TreeSync(tmp_path)
    assert tree(db) is True and len(_rows(db)) == 3
    wrote, sent = _statements(db, tree)
    assert wrote is False and sent == []  # before: every request read the whole messages table


def test_every_kind_of_change_is_seen_by_the_next_sync(tmp_path: Path, db: sqlite3.Connection) -> None:
    inbox = _tree(tmp_path)
    _age(tmp_path)
    tree = maildir.TreeSync(tmp_path)
    tree(db)
    # a flag (Dovecot renames the file)
    os.rename(inbox / "cur" / "1002.b:2,", inbox / "cur" / "1002.b:2,FS")
    assert tree(db) is True and _rows(db)["1002.b"] == ("INBOX", 1, 1)
    _age(tmp_path)
    tree(db)
    # a new message, delivered into new/
    (inbox / "new" / "1004.d").write_bytes(_message(4))
    assert tree(db) is True and "1004.d" in _rows(db)
    _age(tmp_path)
    tree(db)
    # an expunge
    (inbox / ".Archive" / "cur" / "1003.c:2,").unlink()
    assert tree(db) is True and "1003.c" not in _rows(db)
    _age(tmp_path)
    tree(db)
    # a move to a new folder
    for sub in ("cur", "new", "tmp"):
        (inbox / ".Receipts" / sub).mkdir(parents=True)
    os.rename(inbox / "cur" / "1001.a:2,S", inbox / ".Receipts" / "cur" / "1001.a:2,S")
    assert tree(db) is True and _rows(db)["1001.a"][0] == "Receipts"
    assert (USER, "Receipts") in {(r[0], r[1]) for r in db.execute("SELECT user, name FROM folders")}


def test_a_change_within_the_timestamp_tick_of_the_last_read_is_seen(tmp_path: Path, db: sqlite3.Connection) -> None:
    """A directory changed twice within one file-system tick keeps one mtime: a signature
    taken that close to a change is not trusted, so the second change is still read."""
    inbox = _tree(tmp_path)  # just made: its mtimes are now
    tree = maildir.TreeSync(tmp_path)
    tree(db)
    cur = inbox / "cur"
    before = os.stat(cur).st_mtime_ns
    os.rename(cur / "1002.b:2,", cur / "1002.b:2,S")
    os.utime(cur, ns=(before, before))  # the rename landed in the same tick: the mtime did not move
    assert tree(db) is True and _rows(db)["1002.b"][1] == 1


def test_a_swapped_tree_and_forgotten_tables_are_read_again(tmp_path: Path, db: sqlite3.Connection) -> None:
    live = tmp_path / "mail"
    _tree(live)
    _age(live)
    tree = maildir.TreeSync(live)
    tree(db)
    # a reset: another tree renamed into place (same names, other inodes)
    seed = tmp_path / "seed"
    shutil.copytree(live, seed)
    (seed / USER / "cur" / "1002.b:2,").rename(seed / USER / "cur" / "1002.b:2,S")
    _age(seed)
    shutil.rmtree(live)
    os.rename(seed, live)
    assert tree(db) is True and _rows(db)["1002.b"][1] == 1
    _age(live)
    tree(db)
    # a restore rewrote the tables, not the tree: forget() makes the next sync compare them again
    db.execute("UPDATE messages SET seen = 0 WHERE id = '1002.b'")
    tree.forget()
    assert tree(db) is True and _rows(db)["1002.b"][1] == 1
