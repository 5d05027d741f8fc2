"""cua's TCP listeners (`cua.listen.tcp_listener`: the sandbox and policy servers, the
recorder's live view, the app services): every accepted connection has TCP_NODELAY.

Without it a response written as headers then body waits for the client's delayed ACK
(40 ms on each request of a kept-alive connection), which a page's fetches and MiniWoB's
synchronous episode reports paid on every call.
"""

from __future__ import annotations

import asyncio
import socket

from cua.listen import tcp_listener


def test_connections_accepted_on_a_cua_listener_have_nodelay() -> None:
    async def main() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        # loop.create_server(sock=...): the path uvicorn takes with the sockets it is given
        server = await asyncio.start_server(handle, sock=tcp_listener("127.0.0.1", 0))
        port = server.sockets[0].getsockname()[1]
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                return await asyncio.wait_for(seen, 10)
            finally:
                writer.close()

    assert asyncio.run(main()) != 0
