"""A sandbox's services: the control client (unix socket) and, in shared mode, host processes.

In container mode the supervisor starts services inside the namespace; the host only
talks to their control sockets. In shared mode the host starts them here, on free
loopback ports, and watches them for unexpected exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
import weakref
from collections.abc import Callable
from typing import Any

import httpx

from cua.errors import BadRequest, InfraError, Timeout
from cua.sandbox import ServiceSpec

__all__ = ["AppHost", "HostedApp", "HostService", "ServiceControl", "bundled_app_name", "free_port"]


class ServiceControl:
    """The host's side of the app contract, over the service's unix socket."""

    def __init__(self, name: str, socket_path: str, timeout: float) -> None:
        self.name = name
        self.socket_path = socket_path
        self._client = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=socket_path),
                                         base_url="http://service", timeout=timeout)

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            resp = await self._client.request(method, "/__cua/" + path, **kwargs)
        except httpx.TimeoutException as exc:
            raise Timeout(f"service {self.name!r} did not answer {path} in time", details={"service": self.name}) from exc
        except httpx.TransportError as exc:
            raise InfraError(f"service {self.name!r} is unreachable: {exc}", details={"service": self.name}) from exc
        return resp

    @staticmethod
    def _json(resp: httpx.Response, what: str) -> Any:
        if resp.status_code >= 500:
            raise InfraError(f"service {what} failed: HTTP {resp.status_code} {resp.text[:200]}")
        return resp.json()

    async def health(self) -> dict[str, Any]:
        return self._json(await self._call("GET", "health"), "health")

    async def reset(self, seed: int) -> None:
        resp = await self._call("POST", "reset", json={"seed": seed})
        if resp.status_code != 200:
            raise InfraError(f"service {self.name!r} reset failed: HTTP {resp.status_code} {resp.text[:200]}")

    async def state(self) -> Any:
        return self._json(await self._call("GET", "state"), "state")

    async def sql(self, query: str, params: list[Any]) -> tuple[bool, Any]:
        """(True, rows) or (False, error message) for a query the app refused."""
        resp = await self._call("POST", "sql", json={"query": query, "params": params})
        body = self._json(resp, "sql")
        if resp.status_code == 200:
            return True, body["rows"]
        return False, body.get("error", f"HTTP {resp.status_code}")

    async def snapshot(self) -> bytes:
        resp = await self._call("GET", "snapshot")
        if resp.status_code != 200:
            raise InfraError(f"service {self.name!r} snapshot failed: HTTP {resp.status_code}")
        return resp.content

    async def restore(self, image: bytes) -> None:
        resp = await self._call("POST", "restore", content=image)
        if resp.status_code != 200:
            raise InfraError(f"service {self.name!r} restore failed: HTTP {resp.status_code} {resp.text[:200]}")

    async def aclose(self) -> None:
        await self._client.aclose()


def free_port() -> int:
    """A currently free loopback port (the service binds it right after; a race is unlikely
    and shows up as a clear 'exited before ready' error)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HostService:
    """A service process on the host (shared isolation)."""

    def __init__(self, spec: ServiceSpec, port: int, socket_path: str, proc: asyncio.subprocess.Process) -> None:
        self.spec = spec
        self.port = port
        self.socket_path = socket_path
        self.proc = proc
        self._closing = False
        self._watch: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, spec: ServiceSpec, socket_path: str, seed: int,
                    on_died: Callable[[str, int | None], None]) -> "HostService":
        port = free_port()
        env = {**os.environ, **spec.env, "CUA_APP_PORT": str(port), "CUA_APP_SOCKET": socket_path,
               "CUA_APP_SEED": str(seed)}
        try:
            proc = await asyncio.create_subprocess_exec(*spec.argv, stdin=asyncio.subprocess.DEVNULL,
                                                        stdout=asyncio.subprocess.PIPE, env=env)
        except OSError as exc:
            raise InfraError(f"service {spec.name!r} could not start: {exc}") from exc
        svc = cls(spec, port, socket_path, proc)
        try:
            await asyncio.wait_for(svc._until_ready(), spec.ready_timeout)
        except (asyncio.TimeoutError, InfraError) as exc:
            await svc.stop()
            if isinstance(exc, InfraError):
                raise
            raise Timeout(f"service {spec.name!r} did not print 'ready' within {spec.ready_timeout:g} s") from exc
        svc._watch = asyncio.create_task(svc._drain_and_watch(on_died))
        return svc

    async def _until_ready(self) -> None:
        assert self.proc.stdout is not None
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                code = await self.proc.wait()
                raise InfraError(f"service {self.spec.name!r} exited with code {code} before it was ready")
            if line.strip() == b"ready":
                return

    async def _drain_and_watch(self, on_died: Callable[[str, int | None], None]) -> None:
        assert self.proc.stdout is not None
        while await self.proc.stdout.read(65536):
            pass  # drained so a chatty service never blocks on a full pipe
        code = await self.proc.wait()
        if not self._closing:
            on_died(self.spec.name, code)

    async def stop(self) -> None:
        self._closing = True
        if self.proc.returncode is None:
            try:
                self.proc.terminate()
                await asyncio.wait_for(self.proc.wait(), 3.0)
            except ProcessLookupError:
                pass  # it exited between the check and the signal: nothing left to stop
            except asyncio.TimeoutError:
                self.proc.kill()
            await self.proc.wait()
        if self._watch is not None:
            await asyncio.gather(self._watch, return_exceptions=True)
        try:
            os.unlink(self.socket_path)
        except FileNotFoundError:
            pass


_SERVE_MODULE = "cua.tasks.apps.serve"
#: The multi-instance host of bundled apps, run by module name: the sandbox never imports it.
_APPHOST_MODULE = "cua.tasks.apps.multiserve"


def bundled_app_name(spec: ServiceSpec) -> str | None:
    """The app name when `spec` runs a bundled app the standard way (`python -m cua.tasks.apps.serve NAME`)."""
    argv = spec.argv
    if len(argv) == 4 and argv[1:3] == ["-m", _SERVE_MODULE] and not spec.env and os.path.basename(argv[0]).startswith("python"):
        return argv[3]
    return None


def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):  # it may exit between the check and the signal
            proc.kill()


class AppHost:
    """The process-wide `cua.tasks.apps.multiserve` server (one per event loop), reference counted by instances."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._next = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._on_died: dict[str, Callable[[str, int | None], None]] = {}
        self._reader = asyncio.create_task(self._read())
        self._lock = asyncio.Lock()

    @classmethod
    async def start(cls) -> "AppHost":
        proc = await asyncio.create_subprocess_exec(sys.executable, "-P", "-m", _APPHOST_MODULE, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE)
        assert proc.stdout is not None
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
        except asyncio.TimeoutError as exc:
            _kill(proc)
            raise Timeout("the shared app host did not start within 60 s") from exc
        if line.strip() != b"ready":
            _kill(proc)
            raise InfraError(f"the shared app host failed to start (said {line[:200]!r}; exit code {proc.returncode})")
        return cls(proc)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            reply = json.loads(line)
            fut = self._pending.pop(reply.get("id"), None)
            if fut is not None and not fut.done():
                fut.set_result(reply)
        code = await self.proc.wait()
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(InfraError(f"the shared app host exited (code {code})"))
        for name, callback in list(self._on_died.items()):
            callback(name, code)

    async def request(self, **cmd: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self._next += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[self._next] = fut
        self.proc.stdin.write(json.dumps({"id": self._next, **cmd}).encode() + b"\n")
        await self.proc.stdin.drain()
        reply = await asyncio.wait_for(fut, 60)
        if not reply.get("ok"):
            if reply.get("fault") == "client":
                raise BadRequest(f"shared app host: {reply.get('error')}", details={"field": "services"})
            raise InfraError(f"shared app host: {reply.get('error')}")
        return reply

    @property
    def instances(self) -> int:
        return len(self._on_died)

    async def stop(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):  # it may exit just now: then it is stopped
                self.proc.kill()
            await self.proc.wait()
        await asyncio.gather(self._reader, return_exceptions=True)


_apphosts: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AppHost]" = weakref.WeakKeyDictionary()
_apphost_locks: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]" = weakref.WeakKeyDictionary()


def _ignore_death(_name: str, _code: int | None) -> None:
    return


class HostedApp:
    """A bundled-app instance inside the shared app host; the same surface as HostService."""

    def __init__(self, spec: ServiceSpec, port: int, socket_path: str, host: AppHost) -> None:
        self.spec = spec
        self.port = port
        self.socket_path = socket_path
        self.host = host

    @classmethod
    async def start(cls, spec: ServiceSpec, app: str, socket_path: str, seed: int,
                    on_died: Callable[[str, int | None], None]) -> "HostedApp":
        loop = asyncio.get_running_loop()
        async with _apphost_locks.setdefault(loop, asyncio.Lock()):
            host = _apphosts.get(loop)
            if host is None or host.proc.returncode is not None:
                host = await AppHost.start()
                _apphosts[loop] = host
            host._on_died[socket_path] = lambda _name, code: on_died(spec.name, code)
        try:
            reply = await host.request(op="start", app=app, socket=socket_path, seed=seed)
        except BaseException:
            host._on_died.pop(socket_path, None)
            raise
        return cls(spec, int(reply["port"]), socket_path, host)

    async def stop(self) -> None:
        # Counted as an instance until its stop is answered, so the host is not stopped under it;
        # its death callback is silenced first, as this exit is wanted.
        self.host._on_died[self.socket_path] = _ignore_death
        try:
            if self.host.proc.returncode is None:
                await self.host.request(op="stop", socket=self.socket_path)
        finally:
            self.host._on_died.pop(self.socket_path, None)
        loop = asyncio.get_running_loop()
        async with _apphost_locks.setdefault(loop, asyncio.Lock()):
            if self.host.instances == 0 and _apphosts.get(loop) is self.host:
                del _apphosts[loop]
                await self.host.stop()
