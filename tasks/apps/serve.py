"""Run one bundled app: `python -m cua.tasks.apps.serve NAME --port P --socket S [--seed N]`.

Pages reach it on TCP 127.0.0.1:P; the host reaches the control endpoints on the unix
socket S. Port and socket default to $CUA_APP_PORT and $CUA_APP_SOCKET, which a
sandbox sets when it starts the app as a service. Prints "ready" when both listen.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys

import uvicorn

from cua.listen import tcp_listener
from cua.tasks.apps import load_app
from cua.tasks.apps.base import WebApp, build_asgi


def listen_unix(path: str) -> socket.socket:
    if os.path.exists(path):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    return sock


async def serve_app(app: WebApp, port: int, socket_path: str) -> None:
    """Serve `app` (already reset) on TCP 127.0.0.1:`port` and the unix socket; print "ready"."""
    sockets = [tcp_listener("127.0.0.1", port), listen_unix(socket_path)]
    config = uvicorn.Config(build_asgi(app), log_level="warning", lifespan="off", access_log=False,
                            http="httptools" if _has("httptools") else "h11", loop="asyncio")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=sockets))
    while not server.started:
        if task.done():
            await task
            return
        await asyncio.sleep(0.005)  # polling uvicorn's started flag: it offers no event
    print("ready", flush=True)
    await task


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def service_args(prog: str, argv: list[str] | None, *, named: bool) -> argparse.Namespace:
    """The arguments every app service takes; port, socket and seed default to the
    $CUA_APP_* variables a sandbox sets for its services."""
    parser = argparse.ArgumentParser(prog=prog)
    if named:
        parser.add_argument("name")
    parser.add_argument("--port", type=int, default=int(os.environ.get("CUA_APP_PORT", "8000")))
    parser.add_argument("--socket", default=os.environ.get("CUA_APP_SOCKET", ""))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("CUA_APP_SEED", "0")))
    args = parser.parse_args(argv)
    if not args.socket:
        parser.error("--socket (or $CUA_APP_SOCKET) is required")
    return args


def main(argv: list[str] | None = None) -> int:
    args = service_args("python -m cua.tasks.apps.serve", argv, named=True)
    try:
        app = load_app(args.name)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return os.EX_USAGE  # the contract's "my configuration is wrong": the client's fault
    app.reset(args.seed)
    asyncio.run(serve_app(app, args.port, args.socket))
    return 0


if __name__ == "__main__":
    sys.exit(main())
