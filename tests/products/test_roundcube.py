"""Roundcube with Dovecot as a real product (cua.tasks.products.roundcube): the service
speaks the app contract, Dovecot's view and the judge's mirror agree after IMAP changes, a
reset restores the seed exactly (database and Maildir, with nothing stale in Dovecot), a
snapshot restores the mail, sent mail stays in the outbox and the activity log, a bad
configuration is a typed error, and one oracle passes judge QA in a real browser.

Each test that starts the service runs Dovecot and php and is marked slow."""

from __future__ import annotations

import imaplib
import json
import os
import smtplib
import sqlite3
import time
from collections.abc import Iterator, Mapping
from email.message import EmailMessage
from pathlib import Path

import _product as harness
import httpx
import pytest

from cua.tasks.products.base import ProductConfigError
from cua.tasks.products.roundcube import Roundcube, maildir
from cua.tasks.products.roundcube.content import PASSWORD

INSTALLED = Path("/usr/share/roundcube/program/include/iniset.php").is_file() and Path("/usr/sbin/dovecot").is_file()
needs_product = pytest.mark.skipif(not INSTALLED, reason="Roundcube/Dovecot are not installed (scripts/setup.sh)")
ALICE = "alice.morgan@harborview.test"
BEN = "ben.okafor@harborview.test"


class Service(harness.Service):
    """The webmail's service, with the instance's IMAP and SMTP ports and mail folder (read
    from its runner's command line)."""

    app = "roundcube"

    def __init__(self, tmp: Path, seed: int = 0, name: str | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        super().__init__(tmp, seed, name, env)
        argv = Path(f"/proc/{self.children()[0]}/cmdline").read_bytes().decode().split("\0")
        self.imap_port = int(argv[argv.index("--imap-port") + 1])
        self.smtp_port = int(argv[argv.index("--smtp-port") + 1])
        self.data_dir = Path(argv[argv.index("--data") + 1])

    def imap(self, user: str = ALICE) -> imaplib.IMAP4:
        conn = imaplib.IMAP4("127.0.0.1", self.imap_port)
        conn.login(user, PASSWORD)
        return conn


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with harness.running(Service, tmp_path_factory.mktemp("roundcube")) as svc:
        yield svc


def _mirror_db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(maildir.MIRROR_DDL)
    return conn


def _message(subject: str) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"], msg["Message-ID"] = ALICE, BEN, subject, f"<{subject}@test>"
    msg.set_content("hello")
    return bytes(msg)


def test_sync_reads_each_maildir_flag_into_its_own_column(tmp_path: Path) -> None:
    """A flag change is a rename; the mirror's columns follow the file's flags one by one
    (each flag went into the wrong column before: flagging set `deleted` and cleared `seen`)."""
    cur = tmp_path / "u@x" / "cur"
    for sub in ("cur", "new", "tmp"):
        (tmp_path / "u@x" / sub).mkdir(parents=True)
    (cur / "1.M1P1.h:2,S").write_bytes(_message("one"))
    conn = _mirror_db()
    maildir.sync(conn, tmp_path)
    os.rename(cur / "1.M1P1.h:2,S", cur / "1.M1P1.h:2,FS")
    maildir.sync(conn, tmp_path)
    row = conn.execute("SELECT seen, flagged, answered, deleted, draft, folder FROM messages").fetchone()
    assert row == (1, 1, 0, 0, 0, "INBOX")
    os.rename(cur / "1.M1P1.h:2,FS", cur / "1.M1P1.h:2,RT")
    maildir.sync(conn, tmp_path)
    assert conn.execute("SELECT seen, flagged, answered, deleted, draft FROM messages").fetchone() == (0, 0, 1, 1, 0)
    (cur / "1.M1P1.h:2,RT").unlink()
    maildir.sync(conn, tmp_path)
    assert conn.execute("SELECT COUNT(*) FROM messages").fetchone() == (0,)


def test_write_tree_gives_back_the_mirrored_mail(tmp_path: Path) -> None:
    conn = _mirror_db()
    box = maildir.folder_dir(tmp_path / "mail", "u@x", "Invoices/Paid")
    for sub in ("cur", "new", "tmp"):
        (box / sub).mkdir(parents=True)
    (box / "cur" / "7.M7P1.h:2,FS").write_bytes(_message("paid"))
    maildir.sync(conn, tmp_path / "mail")
    before = conn.execute("SELECT * FROM messages").fetchall()
    maildir.write_tree(conn, tmp_path / "mail")
    assert sorted(p.name for p in box.joinpath("cur").iterdir()) == ["7.M7P1.h:2,FS"]
    maildir.sync(conn, tmp_path / "mail")
    assert conn.execute("SELECT * FROM messages").fetchall() == before


@needs_product
@pytest.mark.slow
def test_the_service_serves_roundcube_and_answers_the_contract(service: Service) -> None:
    assert service.control.get("/__cua/health").json() == {"ok": True, "app": "roundcube", "seed": 0}
    page = httpx.get(service.base + "/", timeout=60)
    assert page.status_code == 200 and 'id="rcmloginuser"' in page.text
    state = service.state()
    assert len(state["messages"]) > 300 and len({m["user"] for m in state["messages"]}) == 4
    assert {"INBOX", "Sent", "Trash", "Invoices/Paid"} <= {f["name"] for f in state["folders"]}
    assert any(m["attachments"] for m in state["messages"]) and len(state["contacts"]) > 40
    assert state["outbox"] == []
    assert httpx.get(service.base + "/__cua/state", timeout=30).status_code == 404
    assert httpx.get(service.base + "/installer/index.php", timeout=30).status_code == 404
    assert httpx.get(service.base + "/", headers={"Host": "evil.example"}, timeout=30).status_code == 403


@needs_product
@pytest.mark.slow
def test_reset_puts_mail_and_database_back_and_dovecot_keeps_nothing_stale(service: Service) -> None:
    service.reset()
    before = harness.dump(service.state())
    imap = service.imap()
    try:
        imap.select("INBOX")
        total = int(imap.search(None, "ALL")[1][0].split()[-1])
        imap.store("1", "+FLAGS", "\\Flagged")
        imap.store("2", "+FLAGS", "\\Deleted")
        imap.expunge()
        imap.append("INBOX", "", imaplib.Time2Internaldate(time.time()), _message("appended"))
    finally:
        imap.logout()
    changed = service.state()
    assert harness.dump(changed) != before and any(m["subject"] == "appended" for m in changed["messages"])
    assert service.reset() < 1000
    assert harness.dump(service.state()) == before
    imap = service.imap()
    try:
        imap.select("INBOX")
        assert len(imap.search(None, "ALL")[1][0].split()) == total  # the expunged one is back, the appended gone
        seed_flagged = sum(1 for m in json.loads(before)["messages"]
                           if m["flagged"] and m["user"] == ALICE and m["folder"] == "INBOX")
        assert len(imap.search(None, "FLAGGED")[1][0].split()) == seed_flagged  # the flag set before is gone
        assert imap.search(None, '(SUBJECT "appended")')[1] == [b""]
    finally:
        imap.logout()
    flagged = {m["id"] for m in service.state()["messages"] if m["flagged"]}
    assert flagged == {m["id"] for m in json.loads(before)["messages"] if m["flagged"]}


@needs_product
@pytest.mark.slow
def test_sent_mail_stays_in_the_outbox_and_the_activity_log(service: Service) -> None:
    service.reset()
    with smtplib.SMTP("127.0.0.1", service.smtp_port, timeout=30) as smtp:
        smtp.sendmail(ALICE, [BEN, "someone@elsewhere.test"], _message("zx-memo-7741"))
    service.control.post("/__cua/activity", json={"request": "POST /?_task=mail&_action=send"}).raise_for_status()
    imap = service.imap(BEN)
    try:
        imap.select("INBOX")
        (num,) = imap.search(None, '(SUBJECT "zx-memo-7741")')[1][0].split()
        imap.store(num, "+FLAGS", "\\Deleted")
        imap.expunge()
    finally:
        imap.logout()
    service.control.post("/__cua/activity", json={"request": "POST /?_task=mail&_action=delete"}).raise_for_status()
    state = service.state()
    assert not any(m["subject"] == "zx-memo-7741" for m in state["messages"])  # erased from the mailboxes...
    assert [(o["sender"], o["recipients"]) for o in state["outbox"]] == [
        (ALICE, [BEN, "someone@elsewhere.test"])]  # ...but sent
    log = [json.loads(r["changes"]) for r in service.sql("SELECT changes FROM cua_activity ORDER BY seq")]
    assert len(log) == 2 and "outbox" in json.dumps(log[0]) and "zx-memo-7741" in json.dumps(log[1])


@needs_product
@pytest.mark.slow
def test_snapshot_restore_carries_the_mail(service: Service) -> None:
    service.reset()
    imap = service.imap()
    try:
        imap.select("INBOX")
        imap.store("3", "+FLAGS", "\\Flagged")
    finally:
        imap.logout()
    image = service.snapshot()
    at_snapshot = harness.dump(service.state())
    service.reset()
    assert harness.dump(service.state()) != at_snapshot
    assert service.restore(image).status_code == 200
    assert harness.dump(service.state()) == at_snapshot
    imap = service.imap()
    try:
        imap.select("INBOX")
        flagged = len(imap.search(None, "FLAGGED")[1][0].split())
    finally:
        imap.logout()
    assert flagged == sum(1 for m in json.loads(at_snapshot)["messages"] if m["flagged"] and m["user"] == ALICE
                          and m["folder"] == "INBOX")
    harness.assert_a_bad_image_changes_nothing(service)


@needs_product
@pytest.mark.slow
def test_bad_configuration_is_a_typed_error(tmp_path: Path) -> None:
    harness.assert_refuses_bad_configuration("roundcube", tmp_path, {"CUA_DOVECOT": str(tmp_path / "nowhere")},
                                             "Roundcube is not installed")
    with pytest.raises(ProductConfigError):
        Roundcube().reset(-1)


@needs_product
@pytest.mark.slow
def test_an_oracle_passes_judge_qa_in_a_real_browser() -> None:
    harness.assert_oracle_passes_judge_qa("webmail_roundcube.flag_message@1",
                                          ("schema_mutation", "history", "collateral"))
