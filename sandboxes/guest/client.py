"""The host side of the guest agent's wire: an asyncio client over any byte stream.

One client per agent connection. Requests may be in flight concurrently (replies are
matched by id). Failures arrive as cua's typed errors: the connection lost (agent
killed, container or VM dead) fails every pending and later call with
`SandboxCrashed`, never a hang; a reply that does not come in time is `Timeout`.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from cua.errors import ActionFailed, BadRequest, CuaError, InternalError, SandboxCrashed, Timeout, Unsupported
from cua.info import CommandOutput
from cua.sandboxes.guest import wire

__all__ = ["FocusedPart", "GuestClient", "GuestReply", "command_output", "home_relative"]

GuestReply = tuple[dict[str, Any], list[bytes]]
#: What a reply says of the focused window: "title" ({id, title}: two X round trips) or
#: "window" (the whole description `windows` lists).
FocusedPart = Literal["title", "window"]


def _error(err: dict[str, Any], op: str) -> CuaError:
    code = str(err.get("code", "internal"))
    message = str(err.get("message", "guest agent error"))
    reason = err.get("reason")
    if code == "action_failed":
        return ActionFailed(message, reason=str(reason or "failed"))
    if code == "unsupported":
        return Unsupported(message, details={"op": op, "reason": reason})
    if code == "bad_request":
        return BadRequest(message, details={"op": op})
    if reason == "timeout":
        return Timeout(message, details={"op": op})
    return InternalError(f"guest agent: {message}", details={"op": op, "code": code})


def home_relative(path: str, home: str, *, folder: bool = False) -> str:
    """`path` (relative to `home`, `~/...`, or absolute inside `home`) relative to `home`;
    BadRequest for anything outside it (or for `home` itself, unless a `folder` is meant)."""
    import os.path

    rel = path[2:] if path.startswith("~/") else path
    if os.path.isabs(rel):
        rel = os.path.relpath(os.path.normpath(rel), home)
    rel = os.path.normpath(rel)
    if rel == ".." or (rel == "." and not folder) or rel.startswith("../") or os.path.isabs(rel):
        raise BadRequest(f"{path!r} is not a file inside the sandbox user's home {home}", details={"path": path})
    return rel


def command_output(result: dict[str, Any]) -> CommandOutput:
    """The guest's `run` reply as the protocol's CommandOutput."""
    return CommandOutput(returncode=result.get("returncode"), stdout=str(result.get("stdout", "")),
                         stderr=str(result.get("stderr", "")), truncated=bool(result.get("truncated")),
                         timed_out=bool(result.get("timed_out")), duration_ms=float(result.get("duration_ms", 0.0)))


class GuestClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, name: str = "guest",
                 on_lost: Callable[[str], None] | None = None, explain: Callable[[str], str] | None = None) -> None:
        self.name = name
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[GuestReply]] = {}
        self._blobs: dict[int, list[bytes]] = {}
        self._decoder = wire.Decoder()
        self._lost: str | None = None
        self._closing = False
        self._on_lost = on_lost
        #: Turns "the connection closed" into its cause when the owner knows it (the VM's
        #: QEMU exited, the container died), before any caller sees the error.
        self._explain = explain
        self.hello: dict[str, Any] | None = None
        self._hello = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._read_loop(), name=f"guest-reader-{name}")

    # --- connecting ---

    @classmethod
    async def connect_unix(cls, path: str, *, timeout: float = 10.0, **kw: Any) -> "GuestClient":
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(path, limit=1 << 22), timeout)
        return await cls._ready(reader, writer, timeout, **kw)

    @classmethod
    async def connect_tcp(cls, host: str, port: int, *, timeout: float = 10.0, **kw: Any) -> "GuestClient":
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, limit=1 << 22), timeout)
        return await cls._ready(reader, writer, timeout, **kw)

    @classmethod
    async def from_streams(cls, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                           timeout: float = 10.0, **kw: Any) -> "GuestClient":
        """A client over streams you opened (a subprocess's pipes, a serial port), once the
        agent's hello has arrived."""
        return await cls._ready(reader, writer, timeout, **kw)

    @classmethod
    async def _ready(cls, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout: float,
                     **kw: Any) -> "GuestClient":
        client = cls(reader, writer, **kw)
        try:
            await asyncio.wait_for(asyncio.shield(client._hello), timeout)
        except asyncio.TimeoutError as exc:
            await client.close()
            raise Timeout(f"guest agent {client.name} sent no hello within {timeout:g} s") from exc
        except CuaError:
            await client.close()
            raise
        return client

    @property
    def alive(self) -> bool:
        return self._lost is None and not self._closing

    # --- reading ---

    async def _read_loop(self) -> None:
        reason = "guest agent closed the connection"
        try:
            while True:
                chunk = await self._reader.read(1 << 20)
                if not chunk:
                    break
                for frame in self._decoder.feed(chunk):
                    if isinstance(frame, wire.Blob):
                        self._blobs.setdefault(frame.id, []).append(frame.data)
                    else:
                        self._dispatch(frame.body)
        except wire.ProtocolError as exc:
            reason = f"guest agent sent a bad frame: {exc}"
        except (ConnectionError, OSError) as exc:
            reason = f"guest agent connection failed: {exc}"
        except asyncio.CancelledError:
            reason = "client closed"
        self._fail_all(reason)

    def _dispatch(self, body: dict[str, Any]) -> None:
        if "hello" in body:
            self.hello = body["hello"]
            if not self._hello.done():
                self._hello.set_result(body["hello"])
            return
        msg_id = body.get("id")
        blobs = self._blobs.pop(msg_id, []) if isinstance(msg_id, int) else []
        fut = self._pending.pop(msg_id, None) if isinstance(msg_id, int) else None
        if fut is None or fut.done():
            return  # a reply to a call that already timed out
        if body.get("ok"):
            fut.set_result((body.get("result") or {}, blobs))
        else:
            fut.set_exception(_error(body.get("error") or {}, str(body.get("op", ""))))

    def _fail_all(self, reason: str) -> None:
        if self._lost is not None:
            return
        if self._explain is not None and not self._closing:
            reason = self._explain(reason)
        self._lost = reason
        crashed = self._closing is False
        for fut in [self._hello, *self._pending.values()]:
            if not fut.done():
                fut.set_exception(SandboxCrashed(f"{self.name}: {reason}"))
                fut.exception()  # mark retrieved: nobody may be waiting on the hello any more
        self._pending.clear()
        if crashed and self._on_lost is not None:
            self._on_lost(reason)

    # --- calling ---

    async def call(self, op: str, *, blobs: Sequence[bytes] = (), timeout: float = 30.0, **args: Any) -> GuestReply:
        if self._lost is not None:
            raise SandboxCrashed(f"{self.name}: {self._lost}")
        msg_id = next(self._ids)
        fut: asyncio.Future[GuestReply] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        body = {"id": msg_id, "op": op, **args}
        try:
            self._writer.write(wire.encode_reply(body, list(blobs)) if blobs else wire.encode_message(body))
            return await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError as exc:
            raise Timeout(f"{self.name}: no reply to {op!r} within {timeout:g} s", details={"op": op}) from exc
        except (ConnectionError, OSError) as exc:
            self._fail_all(f"guest agent connection failed: {exc}")
            raise SandboxCrashed(f"{self.name}: {self._lost}") from exc
        finally:
            self._pending.pop(msg_id, None)

    async def close(self) -> None:
        self._closing = True
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass  # the peer is already gone: closed either way

    # --- typed helpers ---

    async def ping(self, timeout: float = 5.0) -> float:
        """Round trip time in milliseconds."""
        t0 = time.perf_counter()
        await self.call("ping", timeout=timeout)
        return (time.perf_counter() - t0) * 1000

    async def info(self) -> dict[str, Any]:
        return (await self.call("info"))[0]

    async def act(self, action: dict[str, Any], *, settle: dict[str, float] | None = None,
                  observe: dict[str, Any] | None = None, focused: FocusedPart | None = None,
                  timeout: float = 90.0) -> tuple[dict[str, Any], bytes | None]:
        """Perform an action, settle, and grab the screen when `observe` asks; with `focused`
        the reply's `focused` is the focused window (or None): its {id, title}, or the
        whole description."""
        args: dict[str, Any] = {"action": action}
        if settle:
            args["settle"] = settle
        if observe is not None:
            args["observe"] = observe
        if focused is not None:
            args["focused"] = focused
        result, blobs = await self.call("act", timeout=timeout, **args)
        return result, (blobs[0] if blobs else None)

    async def screenshot(self, fmt: str = "jpeg", quality: int = 80, width: int | None = None,
                         height: int | None = None, *, focused: FocusedPart | None = None,
                         timeout: float = 30.0) -> tuple[dict[str, Any], bytes]:
        """The screen as an image and its {format, width, height}; with `focused`, also the
        focused window (or None) as `focused`, as `act` gives it."""
        args: dict[str, Any] = {"focused": focused} if focused is not None else {}
        result, blobs = await self.call("screenshot", format=fmt, quality=quality, width=width, height=height,
                                        timeout=timeout, **args)
        if len(blobs) != 1:
            raise InternalError("guest agent screenshot reply carried no image")
        return result, blobs[0]

    async def query(self, queries: Sequence[dict[str, Any]], *, timeout: float = 90.0) -> list[dict[str, Any]]:
        """Answer state queries (cua.state shapes as dicts) -> StateResult-shaped dicts."""
        result, blobs = await self.call("query", queries=list(queries), timeout=timeout)
        out = []
        for item in result.get("results", []):
            if "blob" in item:
                item = dict(item)
                item["value"] = base64.b64encode(blobs[int(item.pop("blob"))]).decode("ascii")
            out.append(item)
        return out

    async def windows(self) -> dict[str, Any]:
        return (await self.call("windows"))[0]

    async def spawn(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
                    name: str | None = None) -> int:
        return int((await self.call("spawn", argv=argv, env=env or {}, cwd=cwd, name=name))[0]["pid"])

    async def kill(self, *, pids: Sequence[int] = (), all: bool = False, timeout: float = 5.0) -> list[int]:
        result, _ = await self.call("kill", pids=list(pids), all=all, wait_s=timeout, timeout=timeout + 10)
        return list(result.get("killed", []))

    async def apps(self) -> list[dict[str, Any]]:
        return list((await self.call("apps"))[0]["apps"])

    async def wait_window(self, *, pid: int | None = None, klass: str | None = None,
                          timeout: float = 600.0, stall_s: float = 120.0) -> dict[str, Any]:
        """The first mapped window of `pid` or `klass`. With a pid the guest gives up early
        when the app exits or makes no progress (no CPU) for `stall_s`; `timeout` is the
        outer bound."""
        match: dict[str, Any] = {"class": klass}  # a Python keyword as the wire's field name
        result, _ = await self.call("wait_window", pid=pid, wait_s=timeout, stall_s=stall_s, timeout=timeout + 10,
                                    **match)
        return dict(result["window"])

    async def place_windows(self, places: Sequence[dict[str, int]], *, focus: int | None = None,
                            timeout: float = 3.0) -> bool:
        """Move/resize windows and focus one through the window manager; True once done."""
        result, _ = await self.call("place_windows", places=list(places), focus=focus, wait_s=timeout,
                                    timeout=timeout + 10)
        return bool(result.get("placed"))

    async def file_events(self, *, timeout: float = 60.0) -> dict[str, Any]:
        """The guest's file event log (what a snapshot keeps of it)."""
        result, _ = await self.call("file_events", timeout=timeout)
        return dict(result["log"])

    async def replace_file_events(self, log: dict[str, Any] | None, *, timeout: float = 60.0) -> dict[str, Any]:
        """Put back a file event log read earlier (None: an empty one) once $HOME is
        restored; the events of the restore itself are dropped. Returns the log."""
        result, _ = await self.call("file_events", replace=log, timeout=timeout)
        return dict(result["log"])

    async def write_file(self, path: str, data: bytes, *, mode: int | None = None, append: bool = False,
                         timeout: float = 60.0) -> dict[str, Any]:
        """Write (or append) a file under the guest's $HOME; returns {path, bytes, size}."""
        return (await self.call("write_file", path=path, mode=mode, append=append, blobs=[data], timeout=timeout))[0]

    async def run(self, argv: Sequence[str], *, time_limit: float = 30.0, max_bytes: int = 100_000,
                  cwd: str | None = None, stdin: bytes | None = None) -> dict[str, Any]:
        """Run a bounded command as the guest's app user: {returncode, stdout, stderr,
        truncated, timed_out, duration_ms}."""
        result, _ = await self.call("run", argv=list(argv), time_limit=time_limit, max_bytes=max_bytes, cwd=cwd,
                                    blobs=[stdin] if stdin is not None else [], timeout=time_limit + 30)
        return result
