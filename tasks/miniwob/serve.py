"""Run the MiniWoB++ service: `python -m cua.tasks.miniwob.serve --port P --socket S`.

Speaks the app contract (tasks/apps/CONTRACT.md) like a bundled app: pages on TCP
127.0.0.1:P, control endpoints on the unix socket S; port and socket default to
$CUA_APP_PORT and $CUA_APP_SOCKET, which a sandbox sets for its services. Prints
"ready" once both listen.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys

import uvicorn

from cua.tasks.apps.base import build_asgi
from cua.tasks.miniwob.app import MiniWobApp


def _sockets(port: int, path: str) -> list[socket.socket]:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind(("127.0.0.1", port))
    if os.path.exists(path):
        os.unlink(path)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(path)
    return [tcp, unix]


async def serve(port: int, socket_path: str, seed: int) -> None:
    app = MiniWobApp()
    app.reset(seed)
    config = uvicorn.Config(build_asgi(app), log_level="warning", lifespan="off", access_log=False, loop="asyncio")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=_sockets(port, socket_path)))
    while not server.started:
        if task.done():
            await task
            return
        await asyncio.sleep(0.005)  # polling uvicorn's started flag: it offers no event
    print("ready", flush=True)
    await task


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cua.tasks.miniwob.serve")
    parser.add_argument("--port", type=int, default=int(os.environ.get("CUA_APP_PORT", "8000")))
    parser.add_argument("--socket", default=os.environ.get("CUA_APP_SOCKET", ""))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("CUA_APP_SEED", "0")))
    args = parser.parse_args(argv)
    if not args.socket:
        parser.error("--socket (or $CUA_APP_SOCKET) is required")
    asyncio.run(serve(args.port, args.socket, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
