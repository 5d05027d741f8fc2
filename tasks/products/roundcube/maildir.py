"""The mailboxes as files (Maildir++, Dovecot's layout) and their mirror in the instance's
database, the `messages` and `folders` tables that judges read.

The Maildir tree is the truth for Dovecot; the tables are the truth for a snapshot. So:
- `sync(conn, root)` reads the tree into the tables (only files it has not seen are parsed:
  a flag change is a rename, which Maildir keeps in the file's name); `TreeSync` runs it
  after each request only when a directory it reads changed (a full read of the tree and
  of the table was ~3 ms idle, 25 ms on a busy machine, on each of a page's requests);
- `write_tree(conn, root)` writes the tree back from the tables (a restore from a snapshot),
  with no Dovecot index file: Dovecot rebuilds its indexes from the files it finds;
- `TreeSwapper` puts a seed's tree in place by hard links and renames (a reset):
  Dovecot never rewrites a message file in place (a flag change renames it, an expunge
  unlinks it), so the seed's files stay as they were; the seed's tree holds no index file.

A message's key is its Maildir base name (before ":2,"), unique across the instance.
"""

from __future__ import annotations

import email
import email.policy
import json
import os
import pwd
import shutil
import sqlite3
import threading
import time
from email.message import EmailMessage
from email.utils import getaddresses, parsedate_to_datetime
from pathlib import Path
from typing import Any

__all__ = ["MIRROR_DDL", "TreeSwapper", "TreeSync", "folder_dir", "link_into", "parse", "sync", "write_tree"]

MIRROR_DDL = """
CREATE TABLE IF NOT EXISTS folders (
  id TEXT PRIMARY KEY NOT NULL,      -- user|folder
  user TEXT NOT NULL,
  name TEXT NOT NULL                 -- INBOX, Sent, Invoices/Paid
);
CREATE TABLE IF NOT EXISTS messages (
  id TEXT PRIMARY KEY NOT NULL,      -- the Maildir base name
  user TEXT NOT NULL,
  folder TEXT NOT NULL,
  message_id TEXT NOT NULL DEFAULT '',  -- without its angle brackets
  in_reply_to TEXT NOT NULL DEFAULT '',
  subject TEXT NOT NULL DEFAULT '',
  from_addr TEXT NOT NULL DEFAULT '',
  from_name TEXT NOT NULL DEFAULT '',
  to_addrs TEXT NOT NULL DEFAULT '[]',
  cc_addrs TEXT NOT NULL DEFAULT '[]',
  date TEXT NOT NULL DEFAULT '',
  seen INTEGER NOT NULL DEFAULT 0,
  flagged INTEGER NOT NULL DEFAULT 0,
  answered INTEGER NOT NULL DEFAULT 0,
  deleted INTEGER NOT NULL DEFAULT 0,
  draft INTEGER NOT NULL DEFAULT 0,
  keywords TEXT NOT NULL DEFAULT '',
  size INTEGER NOT NULL DEFAULT 0,
  body TEXT NOT NULL DEFAULT '',
  attachments TEXT NOT NULL DEFAULT '[]',
  raw BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_user_folder ON messages (user, folder);
CREATE TABLE IF NOT EXISTS outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sender TEXT NOT NULL,
  recipients TEXT NOT NULL,          -- a JSON list of lower-case addresses, sorted
  subject TEXT NOT NULL DEFAULT '',
  message_id TEXT NOT NULL DEFAULT '',
  sent_at TEXT NOT NULL DEFAULT '',
  raw BLOB NOT NULL
);
"""
_FLAGS = {"D": "draft", "F": "flagged", "R": "answered", "S": "seen", "T": "deleted"}
_SKIP_DIRS = {"cur", "new", "tmp"}


def folder_dir(root: Path, user: str, folder: str) -> Path:
    """The Maildir++ folder of `folder` ("INBOX" is the user's root; "Invoices/Paid" is ".Invoices.Paid")."""
    base = root / user
    return base if folder == "INBOX" else base / ("." + folder.replace("/", "."))


def _folder_name(dirname: str) -> str:
    return dirname[1:].replace(".", "/")


def parse(raw: bytes) -> dict[str, Any]:
    """The judge-facing fields of one message."""
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)

    def addrs(name: str) -> list[str]:
        return sorted({a.lower() for _, a in getaddresses([str(v) for v in msg.get_all(name, [])]) if a})

    from_pairs = getaddresses([str(v) for v in msg.get_all("From", [])])
    body = ""
    part = msg.get_body(("plain", "html"))
    if part is not None:
        try:
            body = str(part.get_content())
        except (LookupError, ValueError):
            body = ""
    date = ""
    if msg["Date"]:
        try:
            date = parsedate_to_datetime(str(msg["Date"])).strftime("%Y-%m-%dT%H:%M:%S%z")
        except (TypeError, ValueError):
            date = ""
    return {"message_id": str(msg.get("Message-ID", "")).strip().strip("<>"),
            "in_reply_to": str(msg.get("In-Reply-To", "")).strip().strip("<>"),
            "subject": str(msg.get("Subject", "")), "from_addr": from_pairs[0][1].lower() if from_pairs else "",
            "from_name": from_pairs[0][0] if from_pairs else "", "to_addrs": json.dumps(addrs("To")),
            "cc_addrs": json.dumps(addrs("Cc")), "date": date, "size": len(raw), "body": body.replace("\r\n", "\n"),
            "attachments": json.dumps([str(p.get_filename()) for p in msg.iter_attachments() if p.get_filename()])}


def _split(name: str) -> tuple[str, str]:
    base, _, info = name.partition(":2,")
    return base, "".join(sorted(c for c in info if c.isupper() or c.islower()))


def _scan(root: Path) -> tuple[set[tuple[str, str]], dict[str, tuple[str, str, str, Path]]]:
    """Every folder (user, name) and message (key -> user, folder, flags, path) in the tree."""
    folders: set[tuple[str, str]] = set()
    messages: dict[str, tuple[str, str, str, Path]] = {}
    if not root.is_dir():
        return folders, messages
    for user_entry in os.scandir(root):
        if not user_entry.is_dir():
            continue
        user = user_entry.name
        dirs = [("INBOX", Path(user_entry.path))]
        dirs += [(_folder_name(e.name), Path(e.path)) for e in os.scandir(user_entry.path)
                 if e.is_dir() and e.name.startswith(".") and e.name not in _SKIP_DIRS]
        for folder, path in dirs:
            folders.add((user, folder))
            for sub in ("cur", "new"):
                try:
                    entries = list(os.scandir(path / sub))
                except FileNotFoundError:
                    continue
                for e in entries:
                    base, flags = _split(e.name)
                    messages[base] = (user, folder, flags, Path(e.path))
    return folders, messages


def _flag_row(flags: str) -> dict[str, Any]:
    row: dict[str, Any] = {col: int(letter in flags) for letter, col in _FLAGS.items()}
    row["keywords"] = "".join(c for c in flags if c.islower())
    return row


def sync(db: sqlite3.Connection, root: Path) -> bool:
    """Make the `folders` and `messages` tables say what the tree holds; True when they changed."""
    folders, found = _scan(root)
    have_folders = {(r[0], r[1]) for r in db.execute("SELECT user, name FROM folders")}
    have = {str(r[0]): (str(r[1]), str(r[2]), r) for r in
            db.execute("SELECT id, user, folder, seen, flagged, answered, deleted, draft, keywords FROM messages")}
    statements: list[tuple[str, tuple[Any, ...]]] = []
    for user, name in sorted(have_folders - folders):
        statements.append(("DELETE FROM folders WHERE user = ? AND name = ?", (user, name)))
    for user, name in sorted(folders - have_folders):
        statements.append(("INSERT INTO folders (id, user, name) VALUES (?, ?, ?)", (f"{user}|{name}", user, name)))
    for key in sorted(set(have) - set(found)):
        statements.append(("DELETE FROM messages WHERE id = ?", (key,)))
    for key, (user, folder, flags, path) in sorted(found.items()):
        flag_row = _flag_row(flags)
        old = have.get(key)
        if old is None:
            try:
                raw = path.read_bytes()
            except FileNotFoundError:
                continue  # renamed while read: the next sync sees it
            row = {"id": key, "user": user, "folder": folder, **parse(raw), **flag_row, "raw": raw}
            cols = ", ".join(row)
            statements.append((f"INSERT INTO messages ({cols}) VALUES ({', '.join('?' * len(row))})",
                               tuple(row.values())))
            continue
        r = old[2]
        current = {"seen": r[3], "flagged": r[4], "answered": r[5], "deleted": r[6], "draft": r[7], "keywords": r[8]}
        if (old[0], old[1]) != (user, folder) or current != flag_row:
            statements.append(("UPDATE messages SET user = ?, folder = ?, seen = ?, flagged = ?, answered = ?, "
                               "deleted = ?, draft = ?, keywords = ? WHERE id = ?",
                               (user, folder, flag_row["seen"], flag_row["flagged"], flag_row["answered"],
                                flag_row["deleted"], flag_row["draft"], flag_row["keywords"], key)))
    if not statements:
        return False
    db.execute("BEGIN IMMEDIATE")
    try:
        for sql, params in statements:
            db.execute(sql, params)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return True


#: A directory whose mtime is this close to the time its signature was taken may change
#: again within the same file-system timestamp (a kernel tick, a few ms): the signature is
#: not trusted then, and the next sync reads the tree (as git treats a "racily clean" file).
_RACY_NS = 200_000_000

_Signature = tuple[tuple[str, int, int, int], ...]


def _signature(root: Path) -> _Signature:
    """(path, device, inode, mtime) of every directory whose entries `sync` reads: the
    root, each user's, each folder's, and their cur/ and new/. A message added, removed
    or renamed (a flag change), a folder made or removed, a tree swapped in: one changes."""
    dirs: list[str] = [str(root)]
    try:
        users = [e.path for e in os.scandir(root) if e.is_dir()]
    except FileNotFoundError:
        users = []
    for user in users:
        folders = [user] + [e.path for e in os.scandir(user)
                            if e.is_dir() and e.name.startswith(".") and e.name not in _SKIP_DIRS]
        dirs += [user] + [f"{folder}/{sub}" for folder in folders for sub in ("cur", "new")] + folders[1:]
    out: list[tuple[str, int, int, int]] = []
    for path in dirs:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            out.append((path, 0, 0, 0))
            continue
        out.append((path, st.st_dev, st.st_ino, st.st_mtime_ns))
    return tuple(out)


class TreeSync:
    """`sync` of one tree, skipped when no directory it reads changed since the last one
    that read it (`_signature`). Message files are never rewritten in place (Maildir), so
    an unchanged set of directory entries is an unchanged tree. Whoever writes the tables
    or the tree by other means (a reset, a restore) calls `forget`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._seen: _Signature | None = None

    def forget(self) -> None:
        self._seen = None

    def __call__(self, db: sqlite3.Connection) -> bool:
        started = time.time_ns()
        signature = _signature(self.root)
        if signature == self._seen:
            return False
        self._seen = None  # until the tables say what this signature's tree holds
        changed = sync(db, self.root)
        if all(mtime < started - _RACY_NS for _, _, _, mtime in signature):
            self._seen = signature
        return changed


def _owner(user: str | None) -> tuple[int, int] | None:
    if user is None or os.geteuid() != 0:
        return None
    pw = pwd.getpwnam(user)
    return pw.pw_uid, pw.pw_gid


def _mkdir(path: Path, owner: tuple[int, int] | None) -> None:
    path.mkdir(parents=True, exist_ok=True)
    if owner is not None:
        os.chown(path, *owner)


def _make_folder(root: Path, user: str, folder: str, owner: tuple[int, int] | None) -> Path:
    base = folder_dir(root, user, folder)
    _mkdir(root / user, owner)
    _mkdir(base, owner)
    for sub in ("cur", "new", "tmp"):
        _mkdir(base / sub, owner)
    return base


def write_tree(db: sqlite3.Connection, root: Path, *, owner_name: str | None = None) -> None:
    """Replace the tree under `root` with what the tables hold (no Dovecot index files)."""
    owner = _owner(owner_name)
    fresh = root.with_name(root.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    _mkdir(fresh, owner)
    for r in db.execute("SELECT user, name FROM folders ORDER BY user, name"):
        _make_folder(fresh, str(r[0]), str(r[1]), owner)
    subs: dict[str, list[str]] = {}
    for r in db.execute("SELECT user, name FROM folders WHERE name != 'INBOX' ORDER BY user, name"):
        subs.setdefault(str(r[0]), []).append(str(r[1]))
    for user, names in subs.items():
        (fresh / user / "subscriptions").write_text("\n".join(names) + "\n")
        if owner is not None:
            os.chown(fresh / user / "subscriptions", *owner)
    letters = {v: k for k, v in _FLAGS.items()}
    for r in db.execute("SELECT id, user, folder, seen, flagged, answered, deleted, draft, keywords, raw FROM messages"):
        base = _make_folder(fresh, str(r[1]), str(r[2]), owner)
        flags = "".join(sorted([letters[c] for c, v in zip(("seen", "flagged", "answered", "deleted", "draft"),
                                                             r[3:8]) if v] + list(str(r[8] or ""))))
        path = base / "cur" / f"{r[0]}:2,{flags}"
        path.write_bytes(bytes(r[9]))
        if owner is not None:
            os.chown(path, *owner)
    old = root.with_name(f"{root.name}.old-{os.getpid()}-{time.monotonic_ns()}")
    if root.exists():
        os.rename(root, old)
    os.rename(fresh, root)
    threading.Thread(target=shutil.rmtree, args=(old, True), name="maildir-trash", daemon=True).start()


def link_into(src: Path, target: Path) -> None:
    """Make `target` (absent) a tree of hard links to `src`'s files; its directories are
    made anew, owned as `src`'s are."""
    src_s, target_s = str(src), str(target)
    root = os.geteuid() == 0
    for dirpath, _, filenames in os.walk(src_s):
        made = target_s + dirpath[len(src_s):]
        os.mkdir(made)
        if root:
            st = os.stat(dirpath)
            os.chown(made, st.st_uid, st.st_gid)
        for name in filenames:
            os.link(os.path.join(dirpath, name), os.path.join(made, name))


class TreeSwapper:
    """Puts a seed's tree in place of the live one in two renames: a linked copy of each
    seed's tree is made ahead (in a thread, after each swap, one per seed in use), and the
    replaced tree is deleted in another thread (unlinking a few hundred files takes far
    longer than linking them, and no reset waits for it)."""

    #: Spare trees kept ready (one per seed tree; the least recently used goes first).
    MAX_SPARES = 4

    def __init__(self, live: Path) -> None:
        self.live = live
        self._n = 0
        self._spares: dict[Path, Path] = {}  # seed tree -> its ready linked copy
        self._worker: threading.Thread | None = None

    def _path(self, what: str) -> Path:
        self._n += 1
        return self.live.with_name(f"{self.live.name}.{what}-{os.getpid()}-{self._n}")

    @staticmethod
    def _remove_later(path: Path) -> None:
        threading.Thread(target=shutil.rmtree, args=(path, True), name="maildir-trash", daemon=True).start()

    def swap(self, src: Path) -> None:
        if self._worker is not None:
            self._worker.join()
        spare = self._spares.pop(src, None)
        if spare is None:
            spare = self._path("spare")
            link_into(src, spare)
        if self.live.exists():
            trash = self._path("trash")
            os.rename(self.live, trash)
            self._remove_later(trash)
        os.rename(spare, self.live)
        next_spare = self._path("spare")

        def work() -> None:
            link_into(src, next_spare)
            self._spares[src] = next_spare
            while len(self._spares) > self.MAX_SPARES:
                self._remove_later(self._spares.pop(next(iter(self._spares))))

        self._worker = threading.Thread(target=work, name="maildir-spare", daemon=True)
        self._worker.start()

    def close(self) -> None:
        if self._worker is not None:
            self._worker.join()
