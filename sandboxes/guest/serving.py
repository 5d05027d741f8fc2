"""Serving the host: the operation table, one stream of requests (many in flight), and
the listeners (unix socket, TCP, a virtio-serial port or stdio)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

try:
    from . import wire
    from .core import Agent, Handler, log
    from .faults import BadRequestFault, GuestFault
    from .ops_apps import op_apps, op_file_events, op_kill, op_run, op_spawn, op_wait_window, op_write_file
    from .ops_screen import op_act, op_info, op_ping, op_place_windows, op_query, op_screenshot, op_windows
except ImportError:  # run as a script from this folder (inside a VM image)
    import wire  # type: ignore[no-redef,import-not-found]
    from core import Agent, Handler, log  # type: ignore[no-redef,import-not-found]
    from faults import BadRequestFault, GuestFault  # type: ignore[no-redef,import-not-found]
    from ops_apps import op_apps, op_file_events, op_kill, op_run, op_spawn, op_wait_window, op_write_file  # type: ignore[no-redef,import-not-found]
    from ops_screen import op_act, op_info, op_ping, op_place_windows, op_query, op_screenshot, op_windows  # type: ignore[no-redef,import-not-found]

__all__ = ["OPS", "serve", "serve_stream"]

OPS: dict[str, Handler] = {
    "ping": op_ping,
    "info": op_info,
    "act": op_act,
    "screenshot": op_screenshot,
    "windows": op_windows,
    "query": op_query,
    "spawn": op_spawn,
    "kill": op_kill,
    "apps": op_apps,
    "wait_window": op_wait_window,
    "write_file": op_write_file,
    "run": op_run,
    "place_windows": op_place_windows,
    "file_events": op_file_events,
}


# --- serving a stream ---

async def serve_stream(agent: Agent, reader: asyncio.StreamReader, write: Callable[[bytes], None]) -> None:
    decoder = wire.Decoder()
    pending_blobs: dict[int, list[bytes]] = {}
    tasks: set[asyncio.Task[None]] = set()
    write(wire.encode_message(agent.hello()))

    async def handle(body: dict[str, Any], blobs: list[bytes]) -> None:
        msg_id = body.get("id")
        op = OPS.get(str(body.get("op")))
        try:
            if not isinstance(msg_id, int):
                raise BadRequestFault("request needs an integer id")
            if op is None:
                raise BadRequestFault(f"unknown op {body.get('op')!r}")
            result, out = await op(agent, body, blobs)
            write(wire.encode_reply(wire.ok_reply(msg_id, result), out))
        except GuestFault as exc:
            write(wire.encode_message(wire.error_reply(msg_id if isinstance(msg_id, int) else None,
                                                       exc.code, exc.message, exc.reason)))
        except (ValueError, TypeError, KeyError) as exc:
            write(wire.encode_message(wire.error_reply(msg_id if isinstance(msg_id, int) else None,
                                                       "bad_request", f"{type(exc).__name__}: {exc}")))
        except Exception as exc:  # keep serving: one failed request must not end the session
            if await agent.xserver_died():
                return  # no answer: the session ends (see main), which the host reports as a crash
            log(f"op {body.get('op')!r} failed: {type(exc).__name__}: {exc}")
            write(wire.encode_message(wire.error_reply(msg_id if isinstance(msg_id, int) else None,
                                                       "internal", f"{type(exc).__name__}: {exc}")))

    try:
        while True:
            chunk = await reader.read(1 << 20)
            if not chunk:
                break
            for frame in decoder.feed(chunk):
                if isinstance(frame, wire.Blob):
                    pending_blobs.setdefault(frame.id, []).append(frame.data)
                    continue
                msg_id = frame.body.get("id")
                blobs = pending_blobs.pop(msg_id, []) if isinstance(msg_id, int) else []
                task = asyncio.create_task(handle(frame.body, blobs))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
    except wire.ProtocolError as exc:
        log(f"dropping connection: {exc}")
    finally:
        for task in tasks:
            task.cancel()


async def serve(agent: Agent, listen: str) -> None:
    scheme, _, where = listen.partition(":")

    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await serve_stream(agent, reader, writer.write)
        finally:
            writer.close()

    if scheme == "unix":
        if os.path.exists(where):
            os.unlink(where)
        tmp = f"{where}.tmp"
        if os.path.exists(tmp):
            os.unlink(tmp)
        # Bind under a temporary name and rename: the host treats the socket's appearance
        # as "the agent is ready", so it must never see a socket that does not accept yet.
        server = await asyncio.start_unix_server(on_conn, path=tmp, limit=1 << 20)
        os.chmod(tmp, 0o600)
        os.rename(tmp, where)
        async with server:
            await server.serve_forever()
    elif scheme == "tcp":
        host, _, port = where.rpartition(":")
        server = await asyncio.start_server(on_conn, host=host or "127.0.0.1", port=int(port))
        async with server:
            await server.serve_forever()
    elif scheme in ("serial", "stdio"):
        await _serve_pipe(agent, where if scheme == "serial" else None)
    else:
        raise SystemExit(f"--listen wants unix:PATH, tcp:HOST:PORT, serial:DEVICE or stdio, got {listen!r}")


async def _serve_pipe(agent: Agent, device: str | None) -> None:
    """Serve a character device (virtio-serial) or stdin/stdout: one stream, no accept."""
    loop = asyncio.get_running_loop()
    while True:
        if device is None:
            rfd, wfd = os.dup(0), os.dup(1)
        else:
            rfd = os.open(device, os.O_RDWR | os.O_NONBLOCK)
            wfd = os.dup(rfd)
        reader = asyncio.StreamReader(limit=1 << 20)
        rtransport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                     os.fdopen(rfd, "rb", buffering=0))
        wtransport, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(wfd, "wb", buffering=0))
        try:
            await serve_stream(agent, reader, wtransport.write)
        finally:
            rtransport.close()
            wtransport.close()
        if device is None:
            return
        # A virtio-serial port reads EOF while no host is attached, and no event says when
        # one attaches again: reopen after a short pause instead of spinning.
        await asyncio.sleep(0.2)
