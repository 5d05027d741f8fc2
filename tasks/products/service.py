"""A product's service process: the product's own server on $CUA_APP_PORT, and the app
contract's control endpoints on the unix socket $CUA_APP_SOCKET.

    python -m cua.tasks.apps.serve mediawiki     (a sandbox sets the $CUA_APP_* variables)

Each instance gets a private data folder (its configuration and its database file),
removed when it stops; one left by a service killed outright goes at the next start (its
owner's pid is in it). The product's server is its own process (MediaWiki: `php -S`, one
worker); this process holds the control side:

- `reset` copies the seed image into the database file (SQLite's backup API: no server
  restart, nothing heavy); `snapshot`/`restore` read and write the same file;
- `state` and `sql` read the file on a read-only path after a *barrier*: a request to the
  server's `/.cua-idle`, which the single worker reaches only when the request before it
  has finished, post-send updates included, so a judge never reads half a request;
- the activity log: the product calls `POST /__cua/activity` on this socket at the end of
  each of its requests; when the database changed (SQLite's `data_version`), the change of
  `state()` is appended to the log, as the bundled apps' middleware does for theirs.

A server that does not start fails the service before `ready` with a message naming the
product (exit 1: the machinery's fault), a bad configuration with exit 64 (the client's).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar, Protocol

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cua.errors import CuaError
from cua.tasks.apps.activity import ActivityLog
from cua.tasks.apps.base import CONTROL_PREFIX, AppDB
from cua.tasks.apps.serve import listen_unix
from cua.tasks.products.errors import ProductConfigError, ProductStartFailed
from cua.tasks.products.filedb import FileDB
from cua.tasks.products.stale import own_folder, reap_stale

__all__ = ["IDLE_PATH", "Product", "ProductService", "run"]

#: The product server's path that answers at once (see the module's docstring).
IDLE_PATH = "/.cua-idle"
#: How long the server may take to listen, and a request to finish before a read goes on.
START_TIMEOUT_S = 30.0
BARRIER_TIMEOUT_S = 60.0


class Product(Protocol):
    """What the service needs of a product (`cua.tasks.products.base.ProductApp` is one)."""

    name: ClassVar[str]
    schema: ClassVar[str]
    db: AppDB
    activity: ActivityLog
    current_seed: int | None

    def seed_file(self, seed: int) -> Path: ...
    def prepare_instance(self, data_dir: Path, control_socket: str) -> Path: ...
    def server_argv(self, data_dir: Path, port: int) -> tuple[list[str], dict[str, str]]: ...
    def private_ddl(self) -> dict[str, list[str]]: ...
    def sync(self) -> bool: ...
    def reset(self, seed: int) -> None: ...
    def restore(self, image: bytes) -> None: ...
    def state(self) -> dict[str, Any]: ...


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ProductService:
    """One live product instance (see the module's docstring)."""

    def __init__(self, app: Product, port: int, socket_path: str, seed: int) -> None:
        if not 0 <= port <= 65535:
            raise ProductConfigError(f"port {port} is not a TCP port")
        if seed < 0:
            raise ProductConfigError(f"a seed is a non-negative integer, not {seed}")
        self.app = app
        self.port = port or _free_port()
        self.socket_path = socket_path
        self.seed = seed
        reap_stale(app.name)
        self.data_dir = Path(tempfile.mkdtemp(prefix=f"cua-{app.name}-"))  # 0700: this user's only
        own_folder(self.data_dir)
        #: Run by a person (no socket given): the control socket goes in the data folder.
        self.announce = not socket_path
        if not socket_path:
            self.socket_path = str(self.data_dir / "control.sock")
        self.proc: asyncio.subprocess.Process | None = None
        #: Whether a SIGTERM stopped it (a sandbox's way to stop its service).
        self.terminated = False
        self._db: FileDB | None = None
        self._before: Any = None
        self._version = 0
        self._seed_states: dict[int, Any] = {}

    # --- the database and its log ---

    def _data_version(self) -> int:
        return int(self.app.db.scalar("PRAGMA data_version"))

    def _reset(self, seed: int) -> float:
        """Put seed `seed` back; the milliseconds it took. The state at a seed is read once
        per seed (before the server can write): the activity log diffs the first write from it."""
        started = time.perf_counter()
        self.app.reset(seed)
        self._version = self._data_version()
        ms = (time.perf_counter() - started) * 1000
        if seed not in self._seed_states:
            self._seed_states[seed] = self.app.state()
        self._before = self._seed_states[seed]
        return ms

    def record(self, request: str) -> int:
        """Log what the product's request changed (nothing when the file did not change)."""
        synced = self.app.sync()  # its own writes leave data_version as it was
        version = self._data_version()
        if version == self._version and not synced:
            return 0
        before = self._before
        after = self.app.state()
        changes = self.app.activity.append(request[:300], before, after)
        self._before, self._version = after, self._data_version()
        return len(changes)

    # --- the server ---

    async def barrier(self) -> None:
        """Wait until the product's server has finished the request it is serving."""
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", self.port), BARRIER_TIMEOUT_S)
        try:
            writer.write(f"GET {IDLE_PATH} HTTP/1.0\r\nHost: 127.0.0.1:{self.port}\r\n\r\n".encode())
            await writer.drain()
            await asyncio.wait_for(reader.read(), BARRIER_TIMEOUT_S)
        finally:
            writer.close()

    async def start_server(self) -> None:
        argv, env = self.app.server_argv(self.data_dir, self.port)
        log = open(self.data_dir / "server.log", "wb")  # noqa: SIM115 -- the child writes it for its whole life
        try:
            self.proc = await asyncio.create_subprocess_exec(*argv, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                             stdout=log, stderr=log)
        finally:
            log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.returncode is not None:
                break
            try:
                await self.barrier()
                return
            except OSError:
                await asyncio.sleep(0.02)  # php -S offers no readiness signal but its port
        tail = (self.data_dir / "server.log").read_bytes()[-800:].decode("utf-8", "replace").strip()
        raise ProductStartFailed(f"{self.app.name}: its server did not start on 127.0.0.1:{self.port} "
                                 f"({' '.join(argv[:3])}): {tail or 'no output'}")

    async def stop_server(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 5)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()

    # --- the control endpoints ---

    def routes(self) -> list[Route]:
        app = self.app

        async def health(_: Request) -> Response:
            return JSONResponse({"ok": True, "app": app.name, "seed": app.current_seed})

        async def reset(request: Request) -> Response:
            body = await request.body()
            try:
                payload = json.loads(body) if body else {}
            except json.JSONDecodeError:
                return JSONResponse({"error": "the body is not JSON"}, status_code=400)
            seed = payload.get("seed", 0)
            if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                return JSONResponse({"error": "seed must be a non-negative integer"}, status_code=400)
            await self.barrier()
            try:
                ms = self._reset(seed)
            except CuaError as exc:  # the seed's image cannot be built here (a read-only image folder)
                return JSONResponse({"error": exc.message, "fault": exc.fault},
                                    status_code=400 if exc.fault == "client" else 500)
            return JSONResponse({"ok": True, "seed": seed, "ms": ms})

        async def state(_: Request) -> Response:
            await self.barrier()
            app.sync()
            return JSONResponse(app.state())

        async def sql(request: Request) -> Response:
            try:
                payload = await request.json()
                query, params = str(payload["query"]), list(payload.get("params") or [])
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=400)
            await self.barrier()
            app.sync()
            try:
                rows = app.db.read_only_query(query, params)
            except sqlite3.Error as exc:
                return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=400)
            return JSONResponse({"rows": rows})

        async def snapshot(_: Request) -> Response:
            await self.barrier()
            app.sync()
            return Response(app.db.snapshot(), media_type="application/octet-stream",
                            headers={"x-cua-seed": str(app.current_seed)})

        async def restore(request: Request) -> Response:
            image = await request.body()
            await self.barrier()
            try:
                app.restore(image)
            except sqlite3.Error as exc:
                return JSONResponse({"error": f"not a database image: {exc}"}, status_code=400)
            self._before, self._version = app.state(), self._data_version()
            return JSONResponse({"ok": True})

        async def activity(request: Request) -> Response:
            try:
                what = str((await request.json())["request"])
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=400)
            return JSONResponse({"ok": True, "changes": self.record(what)})

        p = CONTROL_PREFIX
        return [Route(f"{p}health", health), Route(f"{p}reset", reset, methods=["POST"]),
                Route(f"{p}state", state), Route(f"{p}sql", sql, methods=["POST"]),
                Route(f"{p}snapshot", snapshot), Route(f"{p}restore", restore, methods=["POST"]),
                Route(f"{p}activity", activity, methods=["POST"])]

    def prepare(self) -> None:
        """The instance's files and database at its seed (which may build the seed's image)."""
        db_file = self.app.prepare_instance(self.data_dir, self.socket_path)
        shutil.copyfile(self.app.seed_file(self.seed), db_file)
        self._db = self.app.db = FileDB(self.app.schema, db_file, self.app.private_ddl())
        self._reset(self.seed)

    async def serve(self) -> None:
        """Serve until SIGTERM (or the product's server exits: ProductStartFailed). A SIGTERM
        is an event of the loop, not an exception: uvicorn stops its server on it, or, while
        the product's server is starting, the start is cancelled; either way the cleanup
        below runs and nothing is left for asyncio to report."""
        control = listen_unix(self.socket_path)
        server = uvicorn.Server(uvicorn.Config(Starlette(routes=self.routes()), log_level="warning", lifespan="off",
                                               access_log=False, loop="asyncio"))
        main = asyncio.current_task()

        def on_sigterm() -> None:
            self.terminated = True
            server.should_exit = True
            if not server.started and main is not None:
                main.cancel()

        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, on_sigterm)
        server_task = asyncio.create_task(server.serve(sockets=[control]))
        try:
            await self.start_server()
            while not server.started:
                if server_task.done():
                    await server_task
                    raise ProductStartFailed(f"{self.app.name}: its control socket stopped while starting")
                await asyncio.sleep(0.005)  # uvicorn offers no started event, only this flag
            print("ready", flush=True)
            if self.announce:
                print(f"{self.app.name}: open http://127.0.0.1:{self.port}/ (control endpoints on the unix socket "
                      f"{self.socket_path}; Ctrl-C stops it)", flush=True)
            assert self.proc is not None
            waiter = asyncio.create_task(self.proc.wait())
            done, _ = await asyncio.wait({server_task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if waiter in done:
                server.should_exit = True
                await server_task
                raise ProductStartFailed(f"{self.app.name}: its server exited (status {self.proc.returncode})")
            waiter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiter
        finally:
            server.should_exit = True
            try:
                with contextlib.suppress(asyncio.CancelledError):
                    await server_task
            finally:
                await self.stop_server()

    def remove(self) -> None:
        """Remove the instance's files and control socket (whatever state it stopped in)."""
        if self._db is not None:
            self._db.conn.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def run(app: Product, port: int, socket_path: str, seed: int) -> int:
    """Serve `app` until it stops: 0, or 64 for a bad configuration, 1 for a failure."""
    try:
        service = ProductService(app, port, socket_path, seed)
    except ProductConfigError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return os.EX_USAGE
    # a sandbox stops its service with SIGTERM: while the seed's image is built, as an
    # exception (the build's subprocess is killed); once serving, an event of the loop
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        service.prepare()
        asyncio.run(service.serve())
    except CuaError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return os.EX_USAGE if exc.fault == "client" else 1
    except KeyboardInterrupt:
        return 130
    except SystemExit as exc:
        return int(exc.code or 0)
    except asyncio.CancelledError:
        if not service.terminated:
            raise
    finally:
        service.remove()
    return 128 + signal.SIGTERM if service.terminated else 0
