"""Run one bundled app: `python -m cua.tasks.apps.serve NAME [--port P] [--socket S] [--seed N]`.

Pages reach it on TCP 127.0.0.1:P; the host reaches the control endpoints on the unix
socket S. Port and socket default to $CUA_APP_PORT and $CUA_APP_SOCKET, which a
sandbox sets when it starts the app as a service. Prints "ready" when both listen.

Run by a person (no socket given), the control socket goes in a new private folder
(mode 0700) under the temp dir, removed on exit, and the URL to open in a browser is
printed after "ready"; `--port 0` takes any free port. Who may talk to the app on its
port is `cua.tasks.apps.base.AppHostGuard`'s to say (no token: the sandbox's browser
must load it by URL alone; loopback Host; no state change from another origin's page).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import sys
import tempfile

import uvicorn

from cua.errors import CuaError
from cua.listen import tcp_listener
from cua.tasks.apps import load_app
from cua.tasks.apps.base import IMAGES_ENV, WebApp, build_asgi


def listen_unix(path: str) -> socket.socket:
    if os.path.exists(path):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    return sock


async def serve_app(app: WebApp, port: int, socket_path: str) -> None:
    """Serve `app` (already reset) on TCP 127.0.0.1:`port` and the unix socket; print "ready".
    Without a socket path (a person running it), one is made in a private temp folder and
    the page's URL is printed after "ready"."""
    if socket_path:
        await _serve(app, port, socket_path, announce=False)
        return
    folder = tempfile.mkdtemp(prefix=f"cua-app-{app.name}-")  # 0700: only this user reaches the socket
    # uvicorn re-raises the SIGTERM it caught once it has stopped: as an exception, so the folder goes too
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        await _serve(app, port, os.path.join(folder, "control.sock"), announce=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


async def _serve(app: WebApp, port: int, socket_path: str, *, announce: bool) -> None:
    tcp = tcp_listener("127.0.0.1", port)
    sockets = [tcp, listen_unix(socket_path)]
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
    if announce:
        print(f"{app.name}: open http://127.0.0.1:{tcp.getsockname()[1]}/ (control endpoints on the unix socket "
              f"{socket_path}; Ctrl-C stops it)", flush=True)
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
    parser.add_argument("--port", type=int, default=int(os.environ.get("CUA_APP_PORT", "8000")),
                        help="TCP port of the pages on 127.0.0.1 (default $CUA_APP_PORT, else 8000; 0: any free port)")
    parser.add_argument("--socket", default=os.environ.get("CUA_APP_SOCKET", ""),
                        help="unix socket of the control endpoints (default $CUA_APP_SOCKET, else one in a new "
                             "private temp folder)")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("CUA_APP_SEED", "0")))
    parser.add_argument("--images", default="",
                        help="a real product's folder of prebuilt database images (cua.tasks.products): named in "
                             "the argv, so a container sandbox binds it read-only")
    return parser.parse_args(argv)


def run_service(app: WebApp, port: int, socket_path: str) -> int:
    """`serve_app` until it stops; a port that cannot be bound is a clear error (exit 1),
    not a traceback, and Ctrl-C a clean stop."""
    try:
        asyncio.run(serve_app(app, port, socket_path))
    except OSError as exc:
        print(f"error: cannot serve {app.name} on 127.0.0.1:{port}: {exc.strerror or exc} "
              "(--port 0 takes any free port)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


def main(argv: list[str] | None = None) -> int:
    args = service_args("python -m cua.tasks.apps.serve", argv, named=True)
    if args.images:  # read by the product's image builder (cua.tasks.products), before the app is built
        os.environ[IMAGES_ENV] = args.images
    try:
        app = load_app(args.name)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return os.EX_USAGE  # the contract's "my configuration is wrong": the client's fault
    except CuaError as exc:  # a real product that is not installed or cannot build its images
        print(f"error: {args.name}: {exc.message}", file=sys.stderr)
        return os.EX_USAGE if exc.fault == "client" else 1
    own = app.serve_own(args.port, args.socket, args.seed)
    if own is not None:
        return own
    app.reset(args.seed)
    return run_service(app, args.port, args.socket)


if __name__ == "__main__":
    sys.exit(main())
