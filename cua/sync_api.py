"""The blocking facade over the async client, for scripts and notebooks.

```python
from cua.sync_api import connect
with connect(url, token) as client:
    sb = client.create("browser", config={...})
    obs = sb.act(Click(x=10, y=20))
```

One implementation: every call runs the `cua.client` coroutine on a private event-loop
thread owned by the connection and waits for its result, so behaviour (errors,
timeouts, events) is exactly the async client's. Interrupting a blocked call
(KeyboardInterrupt) cancels the request on the server.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, Self, TypeVar, Unpack

from cua import client as aio
from cua.actions import Action
from cua.info import SandboxEvent, SandboxInfo, SnapshotRef
from cua.observation import Observation, ObserveOptions, Screenshot, Size
from cua.state import StateQuery, StateResult

__all__ = ["Client", "Sandbox", "connect"]

T = TypeVar("T")


class _LoopThread:
    """A private event loop on a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="cua-sync-client", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("a cua.sync_api object was used from inside its own event loop")
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()  # cancels the task, which sends `cancel` to the server
            raise

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class Sandbox:
    """Blocking twin of `cua.client.RemoteSandbox`."""

    def __init__(self, runner: _LoopThread, remote: aio.RemoteSandbox) -> None:
        self._run = runner.call
        self._runner = runner
        self.remote = remote

    @property
    def id(self) -> str:
        return self.remote.id

    @property
    def info(self) -> SandboxInfo:
        return self.remote.info

    @property
    def observation(self) -> Observation:
        return self.remote.observation

    @property
    def alive(self) -> bool:
        return self.remote.alive

    def __repr__(self) -> str:
        return f"sync {self.remote!r}"

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
              observe: ObserveOptions | None = None, timeout: float | None = None) -> Observation:
        return self._run(self.remote.reset(seed=seed, options=options, observe=observe, timeout=timeout))

    def act(self, action: Action | Sequence[Action], *, frame: Size | None = None,
            observe: ObserveOptions | None = None, timeout: float | None = None) -> Observation:
        return self._run(self.remote.act(action, frame=frame, observe=observe, timeout=timeout))

    def observe(self, options: ObserveOptions | None = None, *, timeout: float | None = None) -> Observation:
        return self._run(self.remote.observe(options, timeout=timeout))

    def query(self, queries: Sequence[StateQuery], *, timeout: float | None = None) -> list[StateResult]:
        return self._run(self.remote.query(queries, timeout=timeout))

    def snapshot(self, *, timeout: float | None = None) -> SnapshotRef:
        return self._run(self.remote.snapshot(timeout=timeout))

    def restore(self, ref: SnapshotRef | str, *, observe: ObserveOptions | None = None,
                timeout: float | None = None) -> Observation:
        return self._run(self.remote.restore(ref, observe=observe, timeout=timeout))

    def fork(self, ref: SnapshotRef | str, *, observe: ObserveOptions | None = None, keep: bool = False,
             timeout: float | None = None) -> Sandbox:
        return Sandbox(self._runner, self._run(self.remote.fork(ref, observe=observe, keep=keep, timeout=timeout)))

    def run_async(self, work: Callable[[aio.RemoteSandbox], Coroutine[Any, Any, T]]) -> T:
        """Run `work(remote)`, async code written against `cua.client.RemoteSandbox`, on the
        connection's loop thread and wait for its result: how a layer above the client
        (`cua.branch.fork_sync`) offers its async operations on this facade without this
        module importing it. Interrupting the wait cancels `work`."""
        return self._run(work(self.remote))

    def twin(self, remote: aio.RemoteSandbox) -> Sandbox:
        """The blocking twin of another sandbox of this connection (one `run_async` opened)."""
        return Sandbox(self._runner, remote)

    def delete_snapshot(self, ref: SnapshotRef | str) -> None:
        self._run(self.remote.delete_snapshot(ref))

    def refresh(self) -> SandboxInfo:
        """Fetch the current `info` (status, timings) from the server."""
        return self._run(self.remote.refresh())

    def on_event(self, callback: Callable[[SandboxEvent], None]) -> None:
        """Call `callback(event)` for this sandbox's events. It runs on the connection's loop
        thread: keep it short and thread-safe."""
        self.remote.on_event(callback)

    def stream(self, options: ObserveOptions | None = None, *, max_fps: float = 10.0) -> Iterator[Screenshot]:
        """Live screenshots; break out of the loop (or close the iterator) to stop."""
        agen = self.remote.stream(options, max_fps=max_fps)
        try:
            while True:
                try:
                    yield self._run(_anext(agen))
                except StopAsyncIteration:
                    return
        finally:
            self._run(agen.aclose())

    def close(self) -> None:
        self._run(self.remote.close())


class Client:
    """Blocking twin of `cua.client.Client`."""

    def __init__(self, runner: _LoopThread, client: aio.Client) -> None:
        self._runner = runner
        self._run = runner.call
        self.aio = client

    def create(self, kind: str, config: dict[str, Any] | None = None, *, observe: ObserveOptions | None = None,
               keep: bool = False, timeout: float | None = None) -> Sandbox:
        return Sandbox(self._runner, self._run(self.aio.create(kind, config, observe=observe, keep=keep,
                                                               timeout=timeout)))

    def attach(self, sandbox_id: str) -> Sandbox:
        return Sandbox(self._runner, self._run(self.aio.attach(sandbox_id)))

    def list(self, *, all: bool = False) -> list[SandboxInfo]:
        return self._run(self.aio.list(all=all))

    def ping(self, *, timeout: float | None = None) -> None:
        self._run(self.aio.ping(timeout=timeout))

    def on_event(self, callback: Callable[[SandboxEvent], None]) -> Callable[[], None]:
        """`callback` runs on the client's loop thread: keep it short and thread-safe."""
        return self.aio.on_event(callback)

    def events(self, *, timeout: float | None = None) -> Iterator[SandboxEvent]:
        """The connection's events from this call on, blocking for each, until the connection
        closes (or, with `timeout`, until none came for that many seconds). Break out of the
        loop (or close the iterator) to unsubscribe."""
        return self._events(self.aio.events(), timeout)  # subscribed now, before the first next()

    def _events(self, stream: aio.EventStream, timeout: float | None) -> Iterator[SandboxEvent]:
        async def next_event() -> SandboxEvent | None:
            try:
                return await asyncio.wait_for(stream.__anext__(), timeout)
            except (StopAsyncIteration, TimeoutError):
                return None

        try:
            while (event := self._run(next_event())) is not None:
                yield event
        finally:
            self._run(stream.aclose())

    def close(self) -> None:
        try:
            self._run(self.aio.close())
        finally:
            self._runner.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(url: str, token: str | None = None, **options: Unpack[aio.ConnectOptions]) -> Client:
    """Connect to a cua server; same arguments as `cua.client.connect`."""
    runner = _LoopThread()

    async def open_client() -> aio.Client:
        return await aio.connect(url, token, **options)

    try:
        client = runner.call(open_client())
    except BaseException:
        runner.stop()
        raise
    return Client(runner, client)


async def _anext(frames: AsyncIterator[T]) -> T:
    """The next item, as a coroutine (the loop thread runs coroutines)."""
    return await frames.__anext__()
