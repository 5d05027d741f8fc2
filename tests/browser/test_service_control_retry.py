"""The host's control client over a service's unix socket survives the keep-alive race: a
connection the service closes (idle) just as the host reuses it drops that request unrun,
and every control call is idempotent, so it is sent once more on a new connection. A judge's
final state read failed this way once in CI ("Server disconnected without sending a response")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cua.errors import InfraError
from cua.sandboxes.browser.services import ServiceControl


async def _serve(path: Path, drop: int) -> tuple[asyncio.AbstractServer, list[int]]:
    """A service that answers the first request of each connection and closes the connection
    unanswered on its second (the idle close racing a reuse); `drop` new connections are
    closed unanswered at once too."""
    seen: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(1)
        if len(seen) <= drop:
            writer.close()
            return
        for answered in range(2):
            head = await reader.readuntil(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length")), 0)
            await reader.readexactly(length)
            if answered:
                break  # the second request on this connection: closed, unanswered
            writer.write(b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4\r\n\r\n"up"')
            await writer.drain()
        writer.close()

    return await asyncio.start_unix_server(handle, path=str(path)), seen


async def test_a_request_on_a_connection_closed_as_it_was_reused_goes_once_more(tmp_path: Path) -> None:
    server, seen = await _serve(tmp_path / "c.sock", drop=0)
    control = ServiceControl("app", str(tmp_path / "c.sock"), timeout=5)
    try:
        assert (await control._call("GET", "health")).json() == "up"
        assert (await control._call("GET", "health")).json() == "up"  # reused, dropped, sent again
        assert len(seen) == 2  # on a second connection
    finally:
        await control.aclose()
        server.close()


async def test_a_service_that_keeps_dropping_is_unreachable(tmp_path: Path) -> None:
    server, _ = await _serve(tmp_path / "d.sock", drop=10)
    control = ServiceControl("app", str(tmp_path / "d.sock"), timeout=5)
    try:
        with pytest.raises(InfraError, match="unreachable"):
            await control._call("GET", "health")
    finally:
        await control.aclose()
        server.close()
