"""One Roundcube instance's server processes, as one process for the product service
(`ProductApp.server_argv`): Dovecot (IMAP on a loopback port), the instance's SMTP sink, and
`php -S` serving Roundcube. It stops them all when it is told to stop or when any of them
exits, so nothing outlives the instance.

The SMTP sink is the instance's only way out for mail, and it leads nowhere outside: each
message Roundcube hands it is recorded in the `outbox` table of the instance's database
(an append-only record the web interface cannot reach: a sent message stays sent even if
its copy in Sent is deleted) and delivered into the Maildir INBOX of every recipient who
has a mailbox on this instance. It speaks the SMTP subset Roundcube's client uses (EHLO,
MAIL, RCPT, DATA, RSET, NOOP, QUIT), without AUTH or TLS, on 127.0.0.1 only.

When run as root, Dovecot and PHP run as `--user` (Dovecot's mail processes refuse uid 0)
and what the sink writes is given to that user. PHP's activity report after each request
goes to a socket of the instance's own (`activity.sock`), relayed to the control socket.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import email.utils
import json
import os
import pwd
import signal
import socket
import sqlite3
import time
from email.parser import BytesHeaderParser
from pathlib import Path

MAX_MESSAGE = 20 * 1024 * 1024
_counter = 0


def _die_with_parent() -> None:
    """Get SIGTERM when the parent dies (Linux's PR_SET_PDEATHSIG): an instance whose service
    was killed outright must not live on."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # 1: PR_SET_PDEATHSIG


def _drop(user: str) -> list[str]:
    """The prefix that runs a child as `user` (root only), dying with this runner either way
    (a change of user clears the parent-death signal, so setpriv sets it after the change)."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={user}", f"--regid={pwd.getpwnam(user).pw_gid}", "--clear-groups",
            "--pdeathsig", "TERM"]


def _own(path: Path, user: str) -> None:
    if os.geteuid() == 0:
        pw = pwd.getpwnam(user)
        os.chown(path, pw.pw_uid, pw.pw_gid)


def deliver(data_dir: Path, user: str, sender: str, recipients: list[str], raw: bytes) -> None:
    """Record one message in the outbox and put it in each local recipient's INBOX."""
    global _counter
    headers = BytesHeaderParser().parsebytes(raw)
    conn = sqlite3.connect(data_dir / "roundcube.sqlite", timeout=30)
    try:
        conn.execute("INSERT INTO outbox (sender, recipients, subject, message_id, sent_at, raw) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     (sender.lower(), json.dumps(sorted({r.lower() for r in recipients})),
                      str(headers.get("Subject", "")), str(headers.get("Message-ID", "")),
                      time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), raw))
        conn.commit()
    finally:
        conn.close()
    mail_root = data_dir / "mail"
    for rcpt in sorted({r.lower() for r in recipients}):
        box = mail_root / rcpt
        if not box.is_dir():
            continue  # no mailbox here: recorded in the outbox, delivered nowhere
        _counter += 1
        name = f"{int(time.time())}.S{os.getpid()}_{_counter}.cua-smtp"
        tmp = box / "tmp" / name
        tmp.write_bytes(f"Return-Path: <{sender}>\r\nDelivered-To: {rcpt}\r\n".encode() + raw)
        _own(tmp, user)
        os.rename(tmp, box / "new" / name)


async def _smtp_session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data_dir: Path,
                        user: str) -> None:
    def send(line: str) -> None:
        writer.write(line.encode() + b"\r\n")

    sender: str | None = None
    rcpts: list[str] = []
    send("220 localhost cua SMTP sink")
    try:
        while True:
            line = await reader.readline()
            if not line:
                return
            verb, _, arg = line.decode("utf-8", "replace").strip().partition(" ")
            verb = verb.upper()
            if verb in ("EHLO", "HELO"):
                send("250-localhost" if verb == "EHLO" else "250 localhost")
                if verb == "EHLO":
                    send("250-8BITMIME")
                    send(f"250 SIZE {MAX_MESSAGE}")
            elif verb == "MAIL" and arg.upper().startswith("FROM:"):
                sender, rcpts = email.utils.parseaddr(arg[5:].split()[0] if arg[5:].split() else "")[1], []
                send("250 OK")
            elif verb == "RCPT" and arg.upper().startswith("TO:") and sender is not None:
                addr = email.utils.parseaddr(arg[3:].split()[0] if arg[3:].split() else "")[1]
                if not addr:
                    send("501 bad recipient")
                else:
                    rcpts.append(addr)
                    send("250 OK")
            elif verb == "DATA" and sender is not None and rcpts:
                send("354 end with <CRLF>.<CRLF>")
                await writer.drain()
                body = bytearray()
                while True:
                    chunk = await reader.readline()
                    if not chunk:
                        return
                    if chunk in (b".\r\n", b".\n"):
                        break
                    body += chunk[1:] if chunk.startswith(b"..") else chunk
                    if len(body) > MAX_MESSAGE:
                        send("552 too big")
                        return
                deliver(data_dir, user, sender, rcpts, bytes(body))
                sender, rcpts = None, []
                send("250 OK delivered")
            elif verb == "RSET":
                sender, rcpts = None, []
                send("250 OK")
            elif verb == "NOOP":
                send("250 OK")
            elif verb == "QUIT":
                send("221 bye")
                return
            else:
                send("502 not implemented" if verb not in ("MAIL", "RCPT", "DATA") else "503 bad sequence")
                if verb not in ("AUTH", "STARTTLS", "VRFY", "EXPN", "HELP", "MAIL", "RCPT", "DATA"):
                    return  # not SMTP: end the session
            await writer.drain()
    finally:
        await writer.drain()
        writer.close()


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, control: str) -> None:
    """One activity report from PHP, passed to the control socket and its answer back."""
    try:
        up_r, up_w = await asyncio.open_unix_connection(control)
    except OSError:
        writer.close()
        return

    async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        while chunk := await src.read(65536):
            dst.write(chunk)
            await dst.drain()
        if dst.can_write_eof():
            dst.write_eof()

    try:
        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))
    except OSError:
        pass
    finally:
        up_w.close()
        writer.close()


async def _wait_port(port: int, proc: asyncio.subprocess.Process, deadline: float) -> None:
    while time.monotonic() < deadline:
        if proc.returncode is not None:
            raise SystemExit(f"dovecot exited (status {proc.returncode}) before listening")
        try:
            _, w = await asyncio.open_connection("127.0.0.1", port)
            w.close()
            return
        except OSError:
            await asyncio.sleep(0.02)
    raise SystemExit(f"dovecot did not listen on 127.0.0.1:{port}")


async def main(args: argparse.Namespace) -> int:
    _die_with_parent()
    data = Path(args.data)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    procs: list[asyncio.subprocess.Process] = []
    try:
        dovecot = await asyncio.create_subprocess_exec(*_drop(args.user), args.dovecot, "-F", "-c",
                                                       str(data / "dovecot.conf"), stdin=asyncio.subprocess.DEVNULL,
                                                       preexec_fn=_die_with_parent)
        procs.append(dovecot)
        await _wait_port(args.imap_port, dovecot, time.monotonic() + 20)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", args.smtp_port))
        smtp = await asyncio.start_server(lambda r, w: _smtp_session(r, w, data, args.user), sock=sock)
        relays = []
        if args.control:
            relay_path = data / "activity.sock"
            relay_path.unlink(missing_ok=True)
            relays.append(await asyncio.start_unix_server(lambda r, w: _relay(r, w, args.control), path=str(relay_path)))
            _own(relay_path, args.user)
        env = dict(os.environ, ROUNDCUBE_CONFIG_DIR=str(data / "config"))
        env.pop("PHP_CLI_SERVER_WORKERS", None)
        php = await asyncio.create_subprocess_exec(*_drop(args.user), args.php, "-S", f"127.0.0.1:{args.http_port}",
                                                   "-t", args.docroot, args.router, env=env,
                                                   stdin=asyncio.subprocess.DEVNULL, preexec_fn=_die_with_parent)
        procs.append(php)
        waits = [asyncio.ensure_future(p.wait()) for p in procs] + [asyncio.ensure_future(stop.wait())]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for w in waits:
            w.cancel()
        smtp.close()
        for relay in relays:
            relay.close()
        return 0 if stop.is_set() else 1
    finally:
        for p in procs:
            if p.returncode is None:
                p.terminate()
        for p in procs:
            try:
                await asyncio.wait_for(p.wait(), 5)
            except asyncio.TimeoutError:
                p.kill()
                await p.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("data", "user", "php", "dovecot", "docroot", "router"):
        parser.add_argument(f"--{name}", required=True)
    parser.add_argument("--control", default="", help="the control socket PHP's activity reports go to")
    for name in ("http-port", "imap-port", "smtp-port"):
        parser.add_argument(f"--{name}", type=int, required=True)
    raise SystemExit(asyncio.run(main(parser.parse_args())))
