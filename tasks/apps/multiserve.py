"""One host process serving many bundled-app instances (shared isolation's app server).

A Python app server per sandbox costs ~30 MB; 32 shared sandboxes would spend a GiB on
interpreters. This process hosts every instance instead: each is its own `WebApp` (own
in-memory SQLite database), its own uvicorn server, its own TCP port and unix control
socket, so the app contract and isolation between instances are unchanged.

It is the `bundled` app host (`cua.tasks.apps.host_command`, in the `cua.app_hosts`
entry-point group): a shared sandbox starts it for services whose spec names it
(`app_host: {host: bundled, app: NAME}`), never by importing it. Commands arrive as JSON
lines on stdin, answers leave as JSON lines on stdout (CONTRACT.md, "App hosts"):
  {"id": 1, "op": "start", "app": "todo", "socket": "/tmp/x.sock", "seed": 0} -> {"id": 1, "ok": true, "port": 41234}
  {"id": 2, "op": "stop", "socket": "/tmp/x.sock"}                            -> {"id": 2, "ok": true}
Prints `ready` first. Exits (stopping every instance) when stdin closes.

Who may talk to it: its command channel is its stdin, which only the process that started
it holds -- no page and no other local process can reach it. Each instance's TCP port is
held to `AppHostGuard`'s rules (`build_asgi`: loopback Host, no state change from another
origin's page, no control endpoints), and its control socket lies where the sandbox put it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import socket
import sys
from typing import Any

import uvicorn

from cua.listen import tcp_listener
from cua.tasks.apps import load_app
from cua.tasks.apps.base import build_asgi
from cua.tasks.apps.serve import listen_unix

_HTTP = "httptools" if importlib.util.find_spec("httptools") else "h11"


#: How long a stopping instance waits for its open connections (a page's kept-alive ones
#: close at once; a request still running gets this long) before its tasks are cancelled.
STOP_GRACE_S = 5.0


class _Server(uvicorn.Server):
    """A uvicorn server that leaves signal handling alone (many of them share this process)
    and stops as soon as it is told. uvicorn notices `should_exit` at its next 0.1 s tick and
    then waits a fixed 0.1 s more for connections to close: about 180 ms of every shared
    sandbox's release went there, for an instance whose page connections close at once."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._stop_asked = asyncio.Event()

    def capture_signals(self) -> contextlib.AbstractContextManager[None]:  # type: ignore[override]
        return contextlib.nullcontext()

    def stop(self) -> None:
        self.should_exit = True
        self._stop_asked.set()

    async def main_loop(self) -> None:
        # uvicorn's ticks also refresh the Date header once a second and count requests
        # against limit_max_requests; these apps set neither, and their answers never depend
        # on the wall clock.
        await self.on_tick(0)
        await self._stop_asked.wait()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        deadline = asyncio.get_running_loop().time() + STOP_GRACE_S
        while (self.server_state.connections or self.server_state.tasks) \
                and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.002)  # uvicorn signals no event when its last connection closes
        for task in self.server_state.tasks:
            task.cancel()
        for server in self.servers:
            await server.wait_closed()


async def _start(cmd: dict[str, Any], instances: dict[str, tuple[_Server, asyncio.Task[None]]]) -> dict[str, Any]:
    app = load_app(str(cmd["app"]))
    app.reset(int(cmd.get("seed", 0)))
    path = str(cmd["socket"])
    tcp, unix = tcp_listener("127.0.0.1", int(cmd.get("port", 0))), listen_unix(path)
    server = _Server(uvicorn.Config(build_asgi(app), log_level="warning", lifespan="off", access_log=False,
                                    http=_HTTP, loop="asyncio"))
    task = asyncio.create_task(server.serve(sockets=[tcp, unix]))
    while not server.started:
        if task.done():
            await task
            raise RuntimeError("server stopped while starting")
        await asyncio.sleep(0.002)  # uvicorn offers no started event, only this flag
    instances[path] = (server, task)
    return {"port": tcp.getsockname()[1]}


async def _stop(path: str, instances: dict[str, tuple[_Server, asyncio.Task[None]]]) -> None:
    entry = instances.pop(path, None)
    if entry is None:
        return
    server, task = entry
    server.stop()
    await task
    if os.path.exists(path):
        os.unlink(path)


async def _answer(cmd: dict[str, Any], instances: dict[str, tuple[_Server, asyncio.Task[None]]],
                  before: asyncio.Task[None] | None) -> None:
    """Carry out one command and print its answer. Commands run side by side (one at a
    time, 128 sandboxes closing at once took 13 s when a stop waited for uvicorn's ticks),
    each after the previous command on the same socket."""
    if before is not None:
        await asyncio.gather(before, return_exceptions=True)
    reply: dict[str, Any] = {"id": cmd.get("id")}
    try:
        if cmd["op"] == "start":
            reply.update(await _start(cmd, instances), ok=True)
        elif cmd["op"] == "stop":
            await _stop(str(cmd["socket"]), instances)
            reply["ok"] = True
        else:
            reply.update(ok=False, error=f"unknown op {cmd['op']!r}")
    except Exception as exc:  # reported to the caller, who raises it as a typed error
        # an unknown app name is the caller's mistake, anything else the host's
        reply.update(ok=False, error=f"{type(exc).__name__}: {exc}",
                     fault="client" if isinstance(exc, LookupError) else "infra")
    with contextlib.suppress(BrokenPipeError):  # the caller is gone: the loop ends at stdin's end
        print(json.dumps(reply), flush=True)


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    instances: dict[str, tuple[_Server, asyncio.Task[None]]] = {}
    #: The last command of each socket, still running or done.
    last: dict[str, asyncio.Task[None]] = {}
    print("ready", flush=True)
    while line := await reader.readline():
        cmd = json.loads(line)
        key = str(cmd.get("socket"))
        task = last[key] = asyncio.create_task(_answer(cmd, instances, last.get(key)))
        task.add_done_callback(lambda done, key=key: last.pop(key) if last.get(key) is done else None)  # type: ignore[misc]
    await asyncio.gather(*last.values(), return_exceptions=True)
    for path in list(instances):
        await _stop(path, instances)


if __name__ == "__main__":
    asyncio.run(main())
