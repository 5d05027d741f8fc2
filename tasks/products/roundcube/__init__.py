"""Roundcube Webmail (Debian package `roundcube-core` with `roundcube-sqlite3`, 1.6,
GPL-3.0-or-later) with Dovecot IMAP (Debian `dovecot-imapd`, 2.3, MIT and LGPL-2.1) and an
SMTP sink of the instance's own, as a product app.

One instance is three processes under one runner (`runner.py`): Dovecot on a loopback port,
with a generated configuration and every mailbox as a Maildir under the instance's data
folder (Dovecot's index files beside the messages); the SMTP sink (Roundcube's only SMTP
server: it records each message in the `outbox` table and delivers it to local Maildirs);
and `php -S` serving Roundcube, whose SQLite database holds the users, identities, address
books and preferences.

The judge-facing state is one SQLite file, Roundcube's own plus the mail's mirror
(`maildir.py`): `messages` (every message: user, folder, headers, flags, body, attachment
names), `folders`, and `outbox` (everything sent, which the web interface cannot delete).
The service syncs the mirror from the Maildir tree before every read and after every web
request, so the activity log holds each request's change of mail too (a message flagged and
unflagged, a message sent and then deleted from Sent). A reset puts the seed's database back
(SQLite's backup API) and its Maildir tree (hard links to the cached seed tree, renamed
into place); the tree holds no Dovecot index, so nothing Dovecot knew survives it. A
restore from a snapshot writes the tree from the mirror.
"""

from __future__ import annotations

import json
import os
import pwd
import socket
import sys
from pathlib import Path
from typing import Any, ClassVar

from cua.judges.sidefx import Change
from cua.tasks.apps.activity import added_row
from cua.tasks.products.base import FileDB, ProductApp, ProductMissing
from cua.tasks.products.roundcube import build, content, maildir
from cua.tasks.products.roundcube.config import Instance, dovecot_conf, roundcube_conf

__all__ = ["Roundcube"]

_SCHEMA = Path(__file__).parent / "schema.sql"
_ROUTER = Path(__file__).parent / "router.php"
_RUNNER = Path(__file__).parent / "runner.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _json_list(value: Any) -> list[str]:
    try:
        out = json.loads(str(value or "[]"))
    except json.JSONDecodeError:
        return []
    return [str(v) for v in out] if isinstance(out, list) else []


class Roundcube(ProductApp):
    name = "roundcube"
    title = "Harborview Mail"
    schema = _SCHEMA.read_text(encoding="utf-8")
    builder = build
    private_tables = ("session", "cache", "cache_shared", "cache_index", "cache_thread", "cache_messages", "system")
    #: Columns Roundcube or the mail store fills itself.
    assigned: ClassVar[dict[str, tuple[str, ...]]] = {
        "users": ("created", "last_login", "failed_login", "failed_login_counter", "preferences", "language"),
        "contacts": ("changed", "words", "vcard"),
        "contactgroups": ("changed",),
        "identities": ("changed",),
        "collected_addresses": ("changed",),
        "messages": ("size", "raw", "keywords"),
        "outbox": ("sent_at", "raw"),
    }

    def __init__(self) -> None:
        #: The live instance (None in process: the loader's and judge QA's copy has no mail tree).
        self.instance: Instance | None = None
        self._trees: maildir.TreeSwapper | None = None
        self._sync: maildir.TreeSync | None = None
        super().__init__()


    # --- the live instance ---

    def prepare_instance(self, data_dir: Path, control_socket: str) -> Path:
        build.version()  # ProductMissing before anything is written
        inst = Instance(data_dir, _free_port(), _free_port(), build.product_user(), control_socket)
        for sub in ("config", "logs", "temp", "dovecot"):
            (data_dir / sub).mkdir()
        (data_dir / "config" / "config.inc.php").write_text(roundcube_conf(inst))
        (data_dir / "config" / "defaults.inc.php").symlink_to("/etc/roundcube/defaults.inc.php")
        (data_dir / "dovecot.conf").write_text(dovecot_conf(inst))
        inst.passwd_file.write_text("".join(f"{login}@{content.DOMAIN}:{{PLAIN}}{content.PASSWORD}\n"
                                            for login, _, _ in content.USERS))
        inst.db_file.touch()
        if os.geteuid() == 0:  # the instance's processes run as `nobody`: the folder is theirs
            pw = pwd.getpwnam(inst.user)
            for path in [data_dir, inst.db_file, *(data_dir / s for s in ("config", "logs", "temp", "dovecot"))]:
                os.chown(path, pw.pw_uid, pw.pw_gid)
        self.instance = inst
        self._trees = maildir.TreeSwapper(inst.mail_root)
        self._sync = maildir.TreeSync(inst.mail_root)
        return inst.db_file

    def server_argv(self, data_dir: Path, port: int) -> tuple[list[str], dict[str, str]]:
        inst = self.instance
        if inst is None or inst.data_dir != data_dir:
            raise ProductMissing("roundcube: the instance was not prepared before its server")
        argv = [sys.executable, "-P", str(_RUNNER), "--data", str(data_dir), "--user", inst.user, "--php", build.PHP,
                "--dovecot", build.DOVECOT, "--docroot", str(build.DOCROOT), "--router", str(_ROUTER),
                "--http-port", str(port), "--imap-port", str(inst.imap_port), "--smtp-port", str(inst.smtp_port),
                "--control", inst.control_socket or ""]
        return argv, {k: v for k, v in os.environ.items() if k != "PHP_CLI_SERVER_WORKERS"}

    def sync(self) -> bool:
        """Read the live Maildir tree into the mirror tables (nothing in process)."""
        if self._sync is not None and isinstance(self.db, FileDB):
            return self._sync(self.db.conn)
        return False

    def reset(self, seed: int) -> None:
        if self._sync is not None:
            self._sync.forget()  # the tables and the tree are both replaced
        super().reset(seed)
        if self._trees is not None and isinstance(self.db, FileDB):
            build.seed_image(seed)  # the tree lands with the database image
            self._trees.swap(build.seed_dir(seed) / "mail")

    def restore(self, image: bytes) -> None:
        if image[:16] == b"SQLite format 3\x00" and image[18:20] == b"\x02\x02":
            # a snapshot of the live file, which Roundcube keeps in WAL mode: as a plain
            # database (header bytes 18-19), which an in-memory copy can write to
            image = image[:18] + b"\x01\x01" + image[20:]
        if self._sync is not None:
            self._sync.forget()
        super().restore(image)
        if self.instance is not None and isinstance(self.db, FileDB):
            maildir.write_tree(self.db.conn, self.instance.mail_root, owner_name=self.instance.user)

    # --- the judge-facing state ---

    def state(self) -> dict[str, Any]:
        db = self.db
        users = {int(r["user_id"]): str(r["username"]) for r in db.all("SELECT user_id, username FROM users")}
        messages = [
            {"id": str(r["id"]), "user": str(r["user"]), "folder": str(r["folder"]),
             "message_id": str(r["message_id"]), "in_reply_to": str(r["in_reply_to"]), "subject": str(r["subject"]),
             "from": str(r["from_addr"]), "from_name": str(r["from_name"]), "to": _json_list(r["to_addrs"]),
             "cc": _json_list(r["cc_addrs"]), "date": str(r["date"]), "seen": bool(r["seen"]),
             "flagged": bool(r["flagged"]), "answered": bool(r["answered"]), "deleted": bool(r["deleted"]),
             "draft": bool(r["draft"]), "body": str(r["body"]), "attachments": _json_list(r["attachments"])}
            for r in db.all("SELECT id, user, folder, message_id, in_reply_to, subject, from_addr, from_name, "
                            "to_addrs, cc_addrs, date, seen, flagged, answered, deleted, draft, body, attachments "
                            "FROM messages ORDER BY id")]
        folders = [{"id": str(r["id"]), "user": str(r["user"]), "name": str(r["name"])}
                   for r in db.all("SELECT id, user, name FROM folders ORDER BY id")]
        groups: dict[int, list[str]] = {}
        for r in db.all("SELECT m.contact_id, g.name FROM contactgroupmembers m JOIN contactgroups g "
                        "ON g.contactgroup_id = m.contactgroup_id WHERE g.del = 0 ORDER BY g.name"):
            groups.setdefault(int(r["contact_id"]), []).append(str(r["name"]))
        contacts = [{"id": int(r["contact_id"]), "user": users.get(int(r["user_id"]), ""), "name": str(r["name"]),
                     "firstname": str(r["firstname"]), "surname": str(r["surname"]), "email": str(r["email"]),
                     "groups": groups.get(int(r["contact_id"]), [])}
                    for r in db.all("SELECT contact_id, user_id, name, firstname, surname, email FROM contacts "
                                    "WHERE del = 0 ORDER BY contact_id")]
        identities = [{"id": int(r["identity_id"]), "user": users.get(int(r["user_id"]), ""), "name": str(r["name"]),
                       "email": str(r["email"]), "organization": str(r["organization"]),
                       "reply_to": str(r["reply-to"]), "bcc": str(r["bcc"]), "signature": str(r["signature"] or ""),
                       "standard": bool(r["standard"])}
                      for r in db.all('SELECT identity_id, user_id, name, email, organization, "reply-to", bcc, '
                                      "signature, standard FROM identities WHERE del = 0 ORDER BY identity_id")]
        outbox = [{"id": int(r["id"]), "sender": str(r["sender"]), "recipients": _json_list(r["recipients"]),
                   "subject": str(r["subject"]), "message_id": str(r["message_id"])}
                  for r in db.all("SELECT id, sender, recipients, subject, message_id FROM outbox ORDER BY id")]
        return {"messages": messages, "folders": folders, "contacts": contacts, "identities": identities,
                "outbox": outbox}

    def irreversible(self, change: Change) -> str | None:
        """A message handed to the SMTP sink is sent: kept in the activity log even if its
        copy in Sent is deleted and purged later."""
        return "mail_sent" if added_row(change, "outbox") is not None else None
