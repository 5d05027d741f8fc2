"""The async client: sandboxes on a cua server, driven like local ones.

```python
async with cua.connect(url, token) as client:
    sb = await client.create("browser", config={...})
    obs = await sb.act(Click(x=10, y=20))
    await sb.close()
```

A thin asyncio shell around `cua.protocol.ClientConnection`: one reader task feeds
received frames to the state machine and resolves the waiting requests; many requests
may be in flight at once. Errors raise the typed `cua.errors` exceptions. Cancelling
the awaiting task sends `cancel` to the server; a per-request `timeout` bounds the
server's work and, with a grace period, the wait here. See `cua.sync_api` for the
blocking facade over this same client.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import weakref
from collections.abc import AsyncGenerator, Callable, Generator, Sequence
from typing import Any, Self, TypedDict, TypeVar

from pydantic import BaseModel
from websockets.asyncio.client import ClientConnection as _WebSocket
from websockets.asyncio.client import connect as _ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from cua import protocol as p
from cua.actions import Action
from cua.errors import CuaError, FailureClass, InternalError, SlowConsumer, Timeout, Unauthorized, UnknownSandbox
from cua.info import CommandOutput, SandboxEvent, SandboxInfo, SnapshotRef
from cua.observation import Observation, ObserveOptions, Screenshot, Size
from cua.state import StateQuery, StateResult

__all__ = ["Client", "ConnectOptions", "ConnectionLost", "Event", "EventStream", "RemoteSandbox", "connect"]

log = logging.getLogger("cua.client")


class ConnectionLost(InternalError):
    """The websocket to the server closed while requests were pending."""

    failure = FailureClass.SERVER_LOST


#: Something the server reported on its own about a sandbox: `died`, `navigated`, `closed`
#: (e.g. reaped for idleness: data["reason"] == "idle"), `stream_ended`... The one event
#: model (`cua.info.SandboxEvent`), which a local sandbox's callbacks get too.
Event = SandboxEvent

EventCallback = Callable[[Event], None]

#: A result payload of the protocol (`cua.protocol.RESULT_MODELS`).
R = TypeVar("R", bound=BaseModel)


class Client:
    """One connection to a cua server. Create with `cua.connect(url, token)`."""

    def __init__(self, ws: _WebSocket, *, max_message_bytes: int, default_timeout: float | None) -> None:
        self._ws = ws
        self._conn = p.ClientConnection(max_message_bytes=max_message_bytes)
        self.default_timeout = default_timeout
        self._futures: dict[int, asyncio.Future[BaseModel]] = {}
        #: Each stream's screenshots; None when it ended.
        self._streams: dict[int, asyncio.Queue[Screenshot | None]] = {}
        self._callbacks: list[EventCallback] = []
        self._event_queues: list[asyncio.Queue[Event | None]] = []
        self._sandboxes: weakref.WeakValueDictionary[str, RemoteSandbox] = weakref.WeakValueDictionary()
        self._reader: asyncio.Task[None] | None = None
        self._closed_error: CuaError | None = None
        self._refusal: CuaError | None = None
        self.session: p.HelloResult | None = None

    # --- connection lifecycle ---

    async def _open(self, token: str | None, client_name: str, timeout: float | None) -> None:
        self._reader = asyncio.get_running_loop().create_task(self._read_loop(), name="cua-client-reader")
        hello = p.Hello(id=self._conn.next_id(), token=token, client=client_name, timeout=timeout)
        self.session = await self._request(hello, p.HelloResult)

    async def close(self) -> None:
        """Close the connection; the server closes this connection's sandboxes
        (except those created with keep=True)."""
        await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    @property
    def closed(self) -> bool:
        return self._closed_error is not None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _read_loop(self) -> None:
        conn = self._conn
        error: CuaError = ConnectionLost("the connection to the server closed")
        try:
            async for frame in self._ws:
                try:
                    received = conn.receive_text(frame) if isinstance(frame, str) else conn.receive_bytes(frame)
                except p.ProtocolError as exc:
                    log.error("protocol violation from the server: %s", exc)
                    continue
                except CuaError as exc:
                    log.error("unreadable frame from the server: %s", exc)
                    continue
                for item in received:
                    self._deliver(item)
        except ConnectionClosed as exc:
            if exc.rcvd is not None and exc.rcvd.code == 1008:
                error = Unauthorized(exc.rcvd.reason or "the server refused the connection")
            elif exc.rcvd is not None and exc.rcvd.code == 4008:  # the server's slow-consumer close
                error = SlowConsumer(exc.rcvd.reason or "the server closed a connection that was not read")
        finally:
            error = self._refusal or error
            self._closed_error = error
            for failed in conn.fail_all(error):
                self._deliver(failed)
            for fut in self._futures.values():
                if not fut.done():
                    fut.set_exception(error)
            self._futures.clear()
            for queue in self._streams.values():
                queue.put_nowait(None)
            for equeue in self._event_queues:
                equeue.put_nowait(None)

    def _deliver(self, item: p.Received) -> None:
        if isinstance(item, p.Completed):
            fut = self._futures.pop(item.id, None)
            if fut is not None and not fut.done():
                fut.set_result(item.result)
        elif isinstance(item, p.Failed):
            fut = self._futures.pop(item.id, None) if item.id is not None else None
            if fut is not None and not fut.done():
                fut.set_exception(item.error)
            elif item.id is None:
                if isinstance(item.error, Unauthorized):
                    self._refusal = item.error  # the server closes next; say why
                else:
                    log.warning("server error not tied to a request: %r", item.error)
        elif isinstance(item, p.StreamFrame):
            queue = self._streams.get(item.stream_id)
            if queue is not None:
                queue.put_nowait(item.screenshot)
        else:
            self._on_event(item)

    def _on_event(self, event: Event) -> None:
        if event.event == "stream_ended":
            queue = self._streams.get(int(event.data.get("stream_id", -1)))
            if queue is not None:
                queue.put_nowait(None)
        sandbox = self._sandboxes.get(event.sandbox_id or "")
        if sandbox is not None:
            sandbox._on_event(event)
        for callback in list(self._callbacks):
            try:
                callback(event)
            except Exception:
                log.exception("event callback failed")
        for events in self._event_queues:
            events.put_nowait(event)

    # --- requests ---

    async def _request(self, request: p.Request, expect: type[R]) -> R:
        """Send `request` and await its answer: the result payload `expect` (the protocol's
        model for the request's type), or its typed error raised."""
        answer = await self._answer(request)
        if not isinstance(answer, expect):
            raise InternalError(f"the answer to {request.type} request {request.id} is a {type(answer).__name__}, "
                                f"not a {expect.__name__}")
        return answer

    async def _answer(self, request: p.Request) -> BaseModel:
        if self._closed_error is not None:
            raise self._closed_error
        loop = asyncio.get_running_loop()
        rid, frame = self._conn.send_request(request, loop.time())
        fut: asyncio.Future[BaseModel] = loop.create_future()
        self._futures[rid] = fut
        try:
            await self._ws.send(frame)
            if request.timeout is None:
                return await fut
            try:
                async with asyncio.timeout(request.timeout + self._conn.DEADLINE_GRACE):
                    return await asyncio.shield(fut)
            except TimeoutError:
                # the server answers `timeout` itself; this is for a server that went quiet
                _discard(self._futures.pop(rid, fut))
                cancel = self._conn.abandon(rid)
                if cancel is not None and self._closed_error is None:
                    with contextlib.suppress(ConnectionClosed):
                        await self._ws.send(cancel)
                raise Timeout(f"no answer to {request.type} request {rid} within {request.timeout}s "
                              f"(+{self._conn.DEADLINE_GRACE}s grace)", details={"timeout": request.timeout}) from None
        except asyncio.CancelledError:
            _discard(self._futures.pop(rid, fut))
            cancel = self._conn.abandon(rid)
            if cancel is not None and self._closed_error is None:
                with contextlib.suppress(ConnectionClosed):
                    await asyncio.shield(self._ws.send(cancel))
            raise
        except ConnectionClosed:
            _discard(self._futures.pop(rid, fut))
            if self._reader is not None:  # let it record why the server closed
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait({self._reader}, timeout=5)
            raise self._closed_error or ConnectionLost("the connection to the server closed") from None

    def _timeout(self, timeout: float | None) -> float | None:
        return self.default_timeout if timeout is None else timeout

    def _id(self) -> int:
        return self._conn.next_id()

    # --- API ---

    async def create(self, kind: str, config: dict[str, Any] | None = None, *, observe: ObserveOptions | None = None,
                     keep: bool = False, timeout: float | None = None) -> RemoteSandbox:
        """Start a sandbox of `kind` (e.g. "browser") with its config as a dict."""
        result = await self._request(p.Create(
            id=self._id(), kind=kind, config=config or {}, observe=observe, keep=keep,
            timeout=self._timeout(timeout)), p.SandboxResult)
        return self._adopt(result)

    def _adopt(self, result: p.SandboxResult) -> RemoteSandbox:
        sandbox = RemoteSandbox(self, SandboxInfo.model_validate(result.sandbox), result.observation)
        self._sandboxes[sandbox.id] = sandbox
        return sandbox

    async def attach(self, sandbox_id: str) -> RemoteSandbox:
        """A handle to an existing sandbox (e.g. one created elsewhere with keep=True)."""
        for info in await self.list(all=True):
            if info.id == sandbox_id:
                obs = await self._request(p.Observe(id=self._id(), sandbox_id=sandbox_id), p.ObservationResult)
                sandbox = RemoteSandbox(self, info, obs.observation)
                self._sandboxes[sandbox.id] = sandbox
                return sandbox
        raise UnknownSandbox(f"no sandbox {sandbox_id!r}", details={"sandbox_id": sandbox_id})

    async def list(self, *, all: bool = False) -> list[SandboxInfo]:
        result = await self._request(p.ListSandboxes(id=self._id(), all=all), p.ListResult)
        return [SandboxInfo.model_validate(i) for i in result.sandboxes]

    async def ping(self, *, timeout: float | None = None) -> None:
        await self._request(p.Ping(id=self._id(), timeout=self._timeout(timeout)), p.EmptyResult)

    def on_event(self, callback: EventCallback) -> Callable[[], None]:
        """Call `callback(event)` for every event; returns a function that unsubscribes."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def events(self) -> EventStream:
        """Events from this call on (subscribed at once, not at the first iteration), until the
        connection closes or the stream is closed: `async for event in client.events(): ...`."""
        return EventStream(self)

    async def _stream(self, sandbox_id: str, options: ObserveOptions | None, max_fps: float
                      ) -> AsyncGenerator[Screenshot, None]:
        request = p.Stream(id=self._id(), sandbox_id=sandbox_id, options=options, max_fps=max_fps)
        queue: asyncio.Queue[Screenshot | None] = asyncio.Queue()
        self._streams[request.id] = queue  # before sending: frames may follow the result at once
        try:
            await self._request(request, p.StreamResult)
            while (item := await queue.get()) is not None:
                yield item
        finally:
            self._streams.pop(request.id, None)
            if self._closed_error is None and request.id in self._conn.streams():
                with contextlib.suppress(CuaError, ConnectionClosed):
                    await self._request(p.Unstream(id=self._id(), stream_id=request.id), p.EmptyResult)


class EventStream:
    """An async iterator of a connection's events; `aclose()` unsubscribes."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._open = True
        if client.closed:
            self._queue.put_nowait(None)
        else:
            client._event_queues.append(self._queue)

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        if not self._open:
            raise StopAsyncIteration
        event = await self._queue.get()
        if event is None:
            await self.aclose()
            raise StopAsyncIteration
        return event

    async def aclose(self) -> None:
        self._open = False
        if self._queue in self._client._event_queues:
            self._client._event_queues.remove(self._queue)


class RemoteSandbox:
    """A sandbox on the server. Same methods as a local `cua.sandbox.Sandbox`
    (reset/act/observe/query/snapshot/restore/fork/close), over the connection."""

    def __init__(self, client: Client, info: SandboxInfo, observation: Observation) -> None:
        self._client = client
        self.info = info
        #: The latest observation received for this sandbox.
        self.observation = observation
        #: False once the server reported that the sandbox died.
        self.alive = info.status not in ("crashed", "closed")
        self.closed = info.status == "closed"
        self._events: list[EventCallback] = []

    @property
    def id(self) -> str:
        return self.info.id

    def __repr__(self) -> str:
        return f"RemoteSandbox({self.id!r}, kind={self.info.kind!r}, alive={self.alive})"

    def _on_event(self, event: Event) -> None:
        if event.event == "died":
            self.alive = False
        elif event.event == "closed":
            self.alive = False
            self.closed = True
        for callback in list(self._events):
            try:
                callback(event)
            except Exception:
                log.exception("sandbox event callback failed")

    def on_event(self, callback: EventCallback) -> None:
        self._events.append(callback)

    async def _observed(self, request: p.Request) -> Observation:
        result = await self._client._request(request, p.ObservationResult)
        self.observation = result.observation
        return result.observation

    def _t(self, timeout: float | None) -> float | None:
        return self._client._timeout(timeout)

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None, timeout: float | None = None) -> Observation:
        return await self._observed(p.Reset(id=self._client._id(), sandbox_id=self.id, seed=seed, options=options,
                                            observe=observe, timeout=self._t(timeout)))

    async def reset_query(self, queries: Sequence[StateQuery], *, seed: int | None = None,
                          options: dict[str, Any] | None = None, observe: ObserveOptions | None = None,
                          timeout: float | None = None) -> tuple[Observation, list[StateResult]]:
        """`reset`, then `queries` answered once it settled, in one round trip (an episode's
        initial state and instruction read with its first observation)."""
        result = await self._client._request(p.Reset(
            id=self._client._id(), sandbox_id=self.id, seed=seed, options=options, observe=observe,
            queries=list(queries), timeout=self._t(timeout)), p.ObservationResult)
        self.observation = result.observation
        return result.observation, list(result.results or [])

    async def act(self, action: Action | Sequence[Action], *, frame: Size | None = None,
                  observe: ObserveOptions | None = None, timeout: float | None = None) -> Observation:
        """Perform one action (or several in order) and observe once at the end."""
        return await self._observed(p.Act(id=self._client._id(), sandbox_id=self.id, action=_payload(action), frame=frame,
                                          observe=observe, timeout=self._t(timeout)))

    async def act_query(self, action: Action | Sequence[Action], queries: Sequence[StateQuery], *,
                        frame: Size | None = None, observe: ObserveOptions | None = None,
                        timeout: float | None = None) -> tuple[Observation, list[StateResult]]:
        """`act`, then `queries` answered once it settled, in one round trip (an RL step
        that reads the judge's state for dense reward)."""
        result = await self._client._request(p.Act(
            id=self._client._id(), sandbox_id=self.id, action=_payload(action), frame=frame, observe=observe,
            queries=list(queries), timeout=self._t(timeout)), p.ObservationResult)
        self.observation = result.observation
        return result.observation, list(result.results or [])

    async def observe(self, options: ObserveOptions | None = None, *, timeout: float | None = None) -> Observation:
        return await self._observed(p.Observe(id=self._client._id(), sandbox_id=self.id, options=options,
                                              timeout=self._t(timeout)))

    async def query(self, queries: Sequence[StateQuery], *, timeout: float | None = None) -> list[StateResult]:
        result = await self._client._request(p.Query(
            id=self._client._id(), sandbox_id=self.id, queries=list(queries), timeout=self._t(timeout)), p.QueryResult)
        return result.results

    async def snapshot(self, *, timeout: float | None = None) -> SnapshotRef:
        result = await self._client._request(p.Snapshot(
            id=self._client._id(), sandbox_id=self.id, timeout=self._t(timeout)), p.SnapshotResult)
        return SnapshotRef.model_validate(result.snapshot)

    async def restore(self, ref: SnapshotRef | str, *, observe: ObserveOptions | None = None,
                      timeout: float | None = None) -> Observation:
        return await self._observed(p.Restore(id=self._client._id(), sandbox_id=self.id, snapshot_id=_snap_id(ref),
                                              observe=observe, timeout=self._t(timeout)))

    async def fork(self, ref: SnapshotRef | str, *, observe: ObserveOptions | None = None, keep: bool = False,
                   timeout: float | None = None) -> RemoteSandbox:
        """A new, independent sandbox started from one of this sandbox's snapshots."""
        result = await self._client._request(p.Fork(
            id=self._client._id(), sandbox_id=self.id, snapshot_id=_snap_id(ref), observe=observe, keep=keep,
            timeout=self._t(timeout)), p.SandboxResult)
        return self._client._adopt(result)

    async def delete_snapshot(self, ref: SnapshotRef | str) -> None:
        await self._client._request(p.DeleteSnapshot(id=self._client._id(), snapshot_id=_snap_id(ref)), p.EmptyResult)

    async def upload(self, path: str, data: bytes, *, mode: int | None = None, timeout: float | None = None) -> str:
        """Write bytes into a file in the sandbox (relative to its user's home), in chunks of
        `protocol.UPLOAD_CHUNK_BYTES`; returns the file's absolute path there."""
        step = p.UPLOAD_CHUNK_BYTES
        result: p.UploadResult | None = None
        for index, start in enumerate(range(0, max(len(data), 1), step)):
            chunk = base64.b64encode(data[start:start + step]).decode("ascii")
            result = await self._client._request(p.Upload(
                id=self._client._id(), sandbox_id=self.id, path=path, data=chunk, append=index > 0, mode=mode,
                timeout=self._t(timeout)), p.UploadResult)
        assert result is not None
        return result.path

    async def run(self, argv: Sequence[str], *, time_limit: float = 30.0, max_output_bytes: int = 100_000,
                  cwd: str | None = None, stdin: bytes | None = None, timeout: float | None = None) -> CommandOutput:
        """Run one command in the sandbox as its user, killed at `time_limit` seconds, keeping
        at most `max_output_bytes` of stdout and of stderr."""
        t = self._t(timeout)
        result = await self._client._request(p.Run(
            id=self._client._id(), sandbox_id=self.id, argv=list(argv), cwd=cwd, time_limit=time_limit,
            max_output_bytes=max_output_bytes, stdin=base64.b64encode(stdin).decode("ascii") if stdin is not None else None,
            timeout=max(t, time_limit + 10) if t is not None else None), p.RunResult)
        return result.output

    async def refresh(self) -> SandboxInfo:
        """Fetch the current `info` (status, timings) from the server."""
        for info in await self._client.list(all=True):
            if info.id == self.id:
                self.info = info
                return info
        raise UnknownSandbox(f"no sandbox {self.id!r}", details={"sandbox_id": self.id})

    def stream(self, options: ObserveOptions | None = None, *, max_fps: float = 10.0
               ) -> AsyncGenerator[Screenshot, None]:
        """Live screenshots until the iterator is closed or the sandbox goes away."""
        return self._client._stream(self.id, options, max_fps)

    async def close(self) -> None:
        """Close the sandbox on the server; closing twice, or after the connection
        went away, does nothing."""
        if self.closed or self._client.closed:
            self.closed = True
            return
        try:
            await self._client._request(p.Close(id=self._client._id(), sandbox_id=self.id), p.EmptyResult)
        except UnknownSandbox:
            pass  # already gone (reaped, or closed by another connection): the goal holds
        self.closed = True
        self.alive = False


def _discard(fut: asyncio.Future[BaseModel]) -> None:
    """Drop a request's future without leaving an exception nobody retrieves."""
    if fut.done():
        if not fut.cancelled():
            fut.exception()
    else:
        fut.cancel()


def _payload(action: Action | Sequence[Action]) -> Action | list[Action]:
    """One action as itself, several as a list (the `act` request's `action`)."""
    return list(action) if isinstance(action, Sequence) else action


def _snap_id(ref: SnapshotRef | str) -> str:
    return ref if isinstance(ref, str) else ref.id


class _Connect:
    """`await connect(...)` or `async with connect(...) as client`."""

    def __init__(self, url: str, token: str | None, *, client_name: str, open_timeout: float,
                 max_message_bytes: int, default_timeout: float | None) -> None:
        self._args = (url, token, client_name, open_timeout, max_message_bytes, default_timeout)
        self._client: Client | None = None

    async def _connect(self) -> Client:
        url, token, client_name, open_timeout, max_bytes, default_timeout = self._args
        headers = {"Authorization": f"Bearer {token}"} if token else None
        try:
            ws = await _ws_connect(url, additional_headers=headers, max_size=max_bytes, compression=None,
                                   open_timeout=open_timeout, ping_interval=20, ping_timeout=60,
                                   user_agent_header=client_name)
        except InvalidStatus as exc:
            if exc.response.status_code in (401, 403):
                raise Unauthorized(f"the server refused the connection ({exc.response.status_code})") from exc
            raise
        client = Client(ws, max_message_bytes=max_bytes, default_timeout=default_timeout)
        try:
            await client._open(None if headers else token, client_name, open_timeout)
        except BaseException:
            await ws.close()
            raise
        return client

    def __await__(self) -> Generator[Any, None, Client]:
        return self._connect().__await__()

    async def __aenter__(self) -> Client:
        self._client = await self._connect()
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.close()


class ConnectOptions(TypedDict, total=False):
    """`connect`'s keyword arguments, for a caller that passes them on (`cua.sync_api.connect`)."""

    client_name: str
    open_timeout: float
    max_message_bytes: int
    default_timeout: float | None


def connect(url: str, token: str | None = None, *, client_name: str = "cua-python", open_timeout: float = 30.0,
            max_message_bytes: int = 64 * 1024 * 1024, default_timeout: float | None = None) -> _Connect:
    """Connect to a cua server (`ws://host:port/v1/ws`). Use as `async with` or await it.

    `default_timeout` (seconds) applies to every request that does not give its own.
    """
    return _Connect(url, token, client_name=client_name, open_timeout=open_timeout,
                    max_message_bytes=max_message_bytes, default_timeout=default_timeout)

