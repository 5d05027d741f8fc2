"""A sandbox's services: the control client (unix socket) and, in shared mode, host processes.

In container mode the supervisor starts services inside the namespace; the host only
talks to their control sockets. In shared mode the host starts them here, on free
loopback ports, and watches them for unexpected exits.

A service whose spec names an app host (`ServiceSpec.app_host`) is, in shared mode, an
instance inside that host: one process serving many sandboxes' apps, each with its own
database, port and socket. Hosts are found by name in the `cua.app_hosts` entry-point
group (or `register_app_host`), so this module knows no app and no host by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import shlex
import socket
import ssl
import weakref
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import httpx

from cua.errors import BadRequest, InfraError, Timeout
from cua.sandbox import ServiceSpec
from cua.variant import Variant

__all__ = ["APP_HOST_GROUP", "AppHost", "HostedApp", "HostService", "ServiceControl", "app_host_command",
           "free_port", "register_app_host", "start_host_service"]


@functools.cache
def _uds_tls() -> ssl.SSLContext:
    """The TLS context every control client shares. A unix socket never speaks TLS, but an
    httpx transport builds a context (reading the system's CA bundle) unless given one:
    25 ms of CPU in every sandbox's create."""
    return ssl.create_default_context()


class ServiceControl:
    """The host's side of the app contract, over the service's unix socket."""

    def __init__(self, name: str, socket_path: str, timeout: float) -> None:
        self.name = name
        self.socket_path = socket_path
        self._client = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=socket_path, verify=_uds_tls()),
                                         base_url="http://service", timeout=timeout)

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        for attempt in range(2):
            try:
                return await self._client.request(method, "/__cua/" + path, **kwargs)
            except httpx.RemoteProtocolError as exc:
                # A kept-alive connection the service closed (idle) just as it was reused: the
                # request never ran, and every control call is idempotent, so it goes once more.
                if attempt == 0:
                    continue
                raise InfraError(f"service {self.name!r} is unreachable: {exc}", details={"service": self.name}) from exc
            except httpx.TimeoutException as exc:
                raise Timeout(f"service {self.name!r} did not answer {path} in time",
                              details={"service": self.name}) from exc
            except httpx.TransportError as exc:
                raise InfraError(f"service {self.name!r} is unreachable: {exc}", details={"service": self.name}) from exc
        raise AssertionError("unreachable")

    @staticmethod
    def _json(resp: httpx.Response, what: str) -> Any:
        if resp.status_code >= 500:
            raise InfraError(f"service {what} failed: HTTP {resp.status_code} {resp.text[:200]}")
        return resp.json()

    async def health(self) -> dict[str, Any]:
        body = self._json(await self._call("GET", "health"), "health")
        if not isinstance(body, dict):
            raise InfraError(f"service {self.name!r} health is not a JSON object: {str(body)[:200]}")
        return body

    async def reset(self, seed: int, plant: list[dict[str, Any]] | None = None, *,
                    variant: Variant | None = None) -> None:
        """Reset to `seed`, with `plant`'s prompt injections planted in the same reset, the
        app showing `variant` (none: its default look)."""
        shown = {"variant": variant.model_dump(mode="json")} if variant is not None else {}
        resp = await self._call("POST", "reset", json={"seed": seed, **({"plant": plant} if plant else {}), **shown})
        if resp.status_code == 400 and variant is not None and str(resp.json().get("field") or "").startswith("variant"):
            raise BadRequest(f"service {self.name!r} refused the variant: {resp.json().get('error')}",
                             details={"field": "options.variant"})
        if resp.status_code == 400 and plant:
            raise BadRequest(f"service {self.name!r} refused the plant: {resp.text[:300]}",
                             details={"field": "options.plant"})
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


#: The exit status with which a service says, before `ready`, that its configuration is wrong
#: (sysexits.h; tasks/apps/CONTRACT.md).
EX_USAGE = 64


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
        except asyncio.CancelledError:  # the sandbox's start was given up (a spare no longer wanted)
            await asyncio.shield(svc.stop())
            raise
        except (asyncio.TimeoutError, InfraError, BadRequest) as exc:
            await svc.stop()
            if isinstance(exc, (InfraError, BadRequest)):
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
                if code == EX_USAGE:
                    raise BadRequest(f"service {self.spec.name!r} refused its configuration "
                                     f"({shlex.join(self.spec.argv)} exited with status {EX_USAGE}, EX_USAGE)",
                                     details={"field": "services"})
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


#: Where app hosts are registered: NAME = "module:callable", the callable returning the argv
#: of a process that speaks the app-host protocol (tasks/apps/CONTRACT.md, "App hosts").
APP_HOST_GROUP = "cua.app_hosts"

AppHostCommand = Callable[[], list[str]]

_registered_hosts: dict[str, AppHostCommand] = {}


def register_app_host(name: str, command: AppHostCommand) -> None:
    """Register an app host by name (for hosts not installed as an entry point)."""
    _registered_hosts[name] = command


def app_host_command(name: str) -> list[str]:
    """The argv that starts the app host `name`; BadRequest when no host has that name."""
    command = _registered_hosts.get(name)
    if command is None:
        found = {ep.name: ep for ep in entry_points(group=APP_HOST_GROUP)}
        if name not in found:
            known = sorted({*_registered_hosts, *found})
            raise BadRequest(f"no app host named {name!r} (registered: {', '.join(known) or 'none'}); "
                             f"name one of them in the service's app_host, or leave app_host out to run its argv",
                             details={"field": "services"})
        command = found[name].load()
        _registered_hosts[name] = command
    return list(command())


async def start_host_service(spec: ServiceSpec, socket_path: str, seed: int,
                             on_died: Callable[[str, int | None], None], *,
                             use_app_host: bool = True) -> HostService | HostedApp:
    """Start `spec` on the host: inside its app host when it names one and `use_app_host`,
    else as its own process running its argv."""
    if use_app_host and spec.app_host is not None:
        return await HostedApp.start(spec, spec.app_host.app, socket_path, seed, on_died)
    return await HostService.start(spec, socket_path, seed, on_died)


def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):  # it may exit between the check and the signal
            proc.kill()


class AppHost:
    """One running app host (one per name and event loop), reference counted by instances."""

    def __init__(self, name: str, proc: asyncio.subprocess.Process) -> None:
        self.name = name
        self.proc = proc
        self._next = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._on_died: dict[str, Callable[[str, int | None], None]] = {}
        self._reader = asyncio.create_task(self._read())
        self._lock = asyncio.Lock()

    @classmethod
    async def start(cls, name: str) -> AppHost:
        argv = app_host_command(name)
        try:
            proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
                                                        stdout=asyncio.subprocess.PIPE)
        except OSError as exc:
            raise InfraError(f"app host {name!r} could not start: {exc}") from exc
        assert proc.stdout is not None
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
        except asyncio.TimeoutError as exc:
            _kill(proc)
            raise Timeout(f"app host {name!r} did not start within 60 s") from exc
        if line.strip() != b"ready":
            _kill(proc)
            await proc.wait()
            raise InfraError(f"app host {name!r} failed to start (said {line[:200]!r}; exit code {proc.returncode})")
        return cls(name, proc)

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
                fut.set_exception(InfraError(f"app host {self.name!r} exited (code {code})"))
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
                raise BadRequest(f"app host {self.name!r}: {reply.get('error')}", details={"field": "services"})
            raise InfraError(f"app host {self.name!r}: {reply.get('error')}")
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


#: The running hosts of each event loop, by name (asyncio processes belong to one loop).
_apphosts: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AppHost]] = weakref.WeakKeyDictionary()
_apphost_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


def _ignore_death(_name: str, _code: int | None) -> None:
    return


class HostedApp:
    """An app instance inside the app host its spec names; the same surface as HostService."""

    def __init__(self, spec: ServiceSpec, port: int, socket_path: str, host: AppHost) -> None:
        self.spec = spec
        self.port = port
        self.socket_path = socket_path
        self.host = host

    @classmethod
    async def start(cls, spec: ServiceSpec, app: str, socket_path: str, seed: int,
                    on_died: Callable[[str, int | None], None]) -> HostedApp:
        if spec.app_host is None or spec.app_host.app != app:
            raise BadRequest(f"service {spec.name!r} does not name an app host serving {app!r}: set its "
                             f"app_host to {{host: NAME, app: {app!r}}}", details={"field": "services"})
        loop = asyncio.get_running_loop()
        hosts = _apphosts.setdefault(loop, {})
        async with _apphost_locks.setdefault(loop, asyncio.Lock()):
            host = hosts.get(spec.app_host.host)
            if host is None or host.proc.returncode is not None:
                host = await AppHost.start(spec.app_host.host)
                hosts[host.name] = host
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
        hosts = _apphosts.setdefault(loop, {})
        async with _apphost_locks.setdefault(loop, asyncio.Lock()):
            if self.host.instances == 0 and hosts.get(self.host.name) is self.host:
                del hosts[self.host.name]
                await self.host.stop()
