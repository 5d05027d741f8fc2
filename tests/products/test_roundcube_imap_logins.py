"""Roundcube logs in to IMAP anew on each of its requests (a page, then its message list
and unread counts): Dovecot serves those logins from one standing login process, with an
IMAP process forked ahead, so no request waits on a process start (cua.tasks.products.
roundcube.config.dovecot_conf). Before, each request forked and exec'd an imap-login and
an imap process on its way (Dovecot's CPU per request 7 ms, now 3.5).

Starts the real service (PHP, Dovecot): marked slow."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cua.tasks.products.errors import ProductMissing
from cua.tasks.products.roundcube import build

try:
    build.version()
    INSTALLED = True
except ProductMissing:
    INSTALLED = False

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not INSTALLED, reason="Roundcube/Dovecot are not installed (scripts/setup.sh)")]


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def _tree(pid: int) -> Iterator[tuple[int, str]]:
    """(pid, name) of every process under `pid`."""
    for child in _children(pid):
        try:
            name = Path(f"/proc/{child}/comm").read_text().strip()
        except FileNotFoundError:
            continue
        yield child, name
        yield from _tree(child)


def _dovecot_children(service: int) -> dict[str, set[int]]:
    """The service's Dovecot processes below its master, pids by program name."""
    out: dict[str, set[int]] = {}
    for pid, name in _tree(service):
        out.setdefault(name, set()).add(pid)
    return out


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    proc = subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", "roundcube", "--port", str(port),
                             "--socket", str(tmp_path / "rc.sock")], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        assert any(line.strip() == "ready" for line in proc.stdout), "the roundcube service did not start"
        yield proc, f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()


def test_roundcubes_requests_log_in_through_one_standing_login_process(
        service: tuple[subprocess.Popen[str], str]) -> None:
    proc, base = service
    with httpx.Client(base_url=base, timeout=60) as client:
        token = re.search(r'name="_token" value="([^"]+)"', client.get("/").text)
        assert token is not None
        client.post("/?_task=login", data={"_token": token.group(1), "_task": "login", "_action": "login",
                                            "_timezone": "UTC", "_url": "", "_user": "alice.morgan@harborview.test",
                                            "_pass": "harbor-2026"})
        assert "Inbox" in client.get("/?_task=mail&_mbox=INBOX").text  # logged in: IMAP answered
        before = _dovecot_children(proc.pid)
        for _ in range(3):
            page = client.get("/?_task=mail&_mbox=INBOX")
            assert page.status_code == 200 and "Inbox" in page.text
        after = _dovecot_children(proc.pid)
    assert len(before.get("imap-login", set())) == 1, before
    assert after.get("imap-login") == before["imap-login"], (before, after)  # the same process served them
    assert after.get("imap"), after  # an IMAP process stands ready for the next login
