"""A loopback SMTP server for the office suite's Thunderbird tasks, run in the sandbox as
a windowless app: `python3 smtp_sink.py OUTDIR PORT`. It accepts every message and
writes it as received to OUTDIR/NNN.eml, under an `X-Cua-Rcpt` header that names the
envelope's recipients (so a blind copy shows), to a temporary name first and then
renamed, so that a judge never reads half a message. A line that is no SMTP command ends
the session, so a web page's cross-protocol POST cannot smuggle a message in its body.
Standard library only: it runs on the guest's Python as well as the host's."""

from __future__ import annotations

import asyncio
import os
import sys


def _next_path(out: str) -> str:
    return os.path.join(out, f"{len([f for f in os.listdir(out) if f.endswith('.eml')]) + 1:03d}.eml")


def store(out: str, recipients: list[str], data: bytes) -> str:
    """Write one accepted message; returns its path."""
    os.makedirs(out, exist_ok=True)
    path = _next_path(out)
    tmp = os.path.join(out, ".incoming")
    with open(tmp, "wb") as f:
        f.write(b"X-Cua-Rcpt: " + ", ".join(recipients).encode() + b"\r\n" + data)
    os.rename(tmp, path)
    return path


def _address(line: bytes) -> str:
    """The address of `MAIL FROM:<a>` or `RCPT TO:<a> PARAMS`."""
    value = line.decode(errors="replace").split(":", 1)[-1].strip()
    return value[1:value.index(">")] if value.startswith("<") and ">" in value else value.split(" ", 1)[0]


async def _session(out: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    def reply(*lines: str) -> None:
        for i, line in enumerate(lines):
            code, text = line.split(" ", 1)
            writer.write(f"{code}{' ' if i == len(lines) - 1 else '-'}{text}\r\n".encode())

    reply("220 localhost ESMTP cua")
    recipients: list[str] = []
    while line := await reader.readline():
        verb = line[:4].upper()
        if verb == b"EHLO":
            reply("250 localhost", "250 8BITMIME", "250 SMTPUTF8")
        elif verb == b"HELO":
            reply("250 localhost")
        elif verb == b"MAIL":
            recipients = []
            reply("250 OK")
        elif verb == b"RCPT":
            recipients.append(_address(line))
            reply("250 OK")
        elif verb == b"DATA" and recipients:
            reply("354 End data with <CR><LF>.<CR><LF>")
            await writer.drain()
            data = bytearray()
            while (chunk := await reader.readline()) not in (b".\r\n", b".\n", b""):
                data += chunk[1:] if chunk.startswith(b".") else chunk
            store(out, recipients, bytes(data))
            recipients = []
            reply("250 OK")
        elif verb == b"DATA":
            reply("503 RCPT first")
        elif verb == b"QUIT":
            reply("221 Bye")
            await writer.drain()
            break
        elif verb in (b"RSET", b"NOOP"):
            recipients = [] if verb == b"RSET" else recipients
            reply("250 OK")
        else:
            # Not SMTP: an HTTP request a web page in the sandbox sent here, say. The session
            # ends, so nothing after it (a request body spelling SMTP commands) is read as mail.
            reply("502 Not an SMTP command; closing")
            await writer.drain()
            break
        await writer.drain()
    writer.close()


async def serve(out: str, port: int) -> None:
    server = await asyncio.start_server(lambda r, w: _session(out, r, w), "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], int(sys.argv[2])))
