"""The one way cua opens a TCP listener for a server it runs.

Every server cua runs (the sandbox server, the policy server, the recorder's live view,
the bundled apps) answers small requests on kept-alive connections, where Nagle's
algorithm holds a reply written in two parts (headers then body, a result frame right
after its screenshot frame) until the client's delayed ACK: 40 ms per call on Linux.
asyncio turns on TCP_NODELAY for an accepted connection only when the listening socket's
`proto` says TCP, so the listener is made with `IPPROTO_TCP` (and carries TCP_NODELAY
itself, which Linux copies to what it accepts). Plain I/O: imports nothing of the project.
"""

from __future__ import annotations

import socket

__all__ = ["tcp_listener"]


def tcp_listener(host: str, port: int, *, inheritable: bool = False) -> socket.socket:
    """A bound (not yet listening) TCP socket on `host`:`port` (0: any free port), ready
    for `uvicorn.Server.serve(sockets=[...])` or `asyncio.start_server(sock=...)`;
    `inheritable` for one handed to a child process."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host.strip("[]"), port))
        sock.set_inheritable(inheritable)
    except BaseException:
        sock.close()
        raise
    return sock
