"""Where a command's sandboxes live: in process, on a given server, or on one it starts.

Through a server, the connection is re-established when it is lost: a sandbox asked for
while the server is away waits (reconnecting with backoff, up to `reconnect_s`) instead of
failing, so a server that restarts costs a run only the episodes that were in flight (they
fail with `server_lost` and their runner retries them). A child server that died is
started again. Only when the server stays away past `reconnect_s` does opening fail, with
a typed `ConnectionLost` (an infrastructure fault).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

from cua.episode.handle import SandboxHandle, SandboxOpener
from cua.task import TaskInstance
from cua.tasks.variants import shared_config

__all__ = ["ServerLink", "open_remote", "sandbox_key", "sandbox_opener"]


def sandbox_key(instance: TaskInstance) -> str:
    """Which task instances may share one sandbox: the same kind and config, but for the start
    page and the variant's look (a reset loads and shows those: `shared_config`). A driver
    that keeps its sandbox across episodes (`cua eval`'s workers, `CuaEnv`) opens another
    only when the key changes."""
    config = {k: v for k, v in shared_config(instance.sandbox_config).items() if k != "start_url"}
    return json.dumps([instance.sandbox_kind, config], sort_keys=True, default=str)


@asynccontextmanager
async def open_remote(client: Any, kind: str, config: dict[str, Any]) -> AsyncIterator[SandboxHandle]:
    """A sandbox created on a server through `client` (a `cua.client.Client`), closed on exit
    unless the connection is already gone (the server then closes it)."""
    sandbox = await client.create(kind, config=config)
    try:
        yield sandbox
    finally:
        if not client.closed:
            await sandbox.close()

log = logging.getLogger(__name__)


class ServerLink:
    """One client connection to a sandbox server, connected again whenever it was lost.

    `url`/`token`: a running server; or `child`: a factory of `serve_in_subprocess`
    contexts, whose server is (re)started by the link itself."""

    def __init__(self, *, url: str | None = None, token: str | None = None,
                 child: Any = None, reconnect_s: float = 300.0, connect_s: float = 30.0,
                 max_backoff_s: float = 5.0) -> None:
        if (url is None) == (child is None):
            raise ValueError("a ServerLink takes a url or a child factory")
        self.url, self.token, self._child_factory = url, token, child
        #: How long to wait for a lost server to come back, and for the first connection.
        self.reconnect_s, self.connect_s, self.max_backoff_s = reconnect_s, connect_s, max_backoff_s
        self._client: Any = None
        self._child: AbstractAsyncContextManager[Any] | None = None
        self._lock = asyncio.Lock()
        #: Times the connection was established again after a loss (and children restarted).
        self.reconnects = 0
        self.restarts = 0

    async def _start_child(self) -> None:
        await self._stop_child()
        self._child = self._child_factory()
        self.url, self.token = await self._child.__aenter__()

    async def _stop_child(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            try:
                await child.__aexit__(None, None, None)
            except Exception as exc:  # a child that died already may fail to stop again
                log.warning("stopping the sandbox server failed: %s: %s", type(exc).__name__, exc)

    async def client(self) -> Any:
        """The live client, connecting (again) first if there is none."""
        async with self._lock:
            if self._client is not None and not self._client.closed:
                return self._client
            lost = self._client is not None
            if lost:
                await self._close_client()
            self._client = await self._connect(lost)
            if lost:
                self.reconnects += 1
            return self._client

    async def _connect(self, lost: bool) -> Any:
        import cua
        from cua.client import ConnectionLost
        from cua.errors import Unauthorized

        loop = asyncio.get_running_loop()
        patience = self.reconnect_s if lost else self.connect_s
        deadline = loop.time() + patience
        delay = 0.2
        tries = 0
        while True:
            if self._child_factory is not None and (self._child is None or (lost and tries > 0)):
                try:
                    await self._start_child()
                    if lost:
                        self.restarts += 1
                        log.warning("the sandbox server was lost; started a new one at %s", self.url)
                except RuntimeError as exc:  # it did not come up: try again until the deadline
                    log.warning("starting the sandbox server failed: %s", exc)
                    if loop.time() > deadline:
                        raise ConnectionLost(f"no sandbox server could be started within {patience:.0f} s: "
                                             f"{exc}") from exc
            tries += 1
            try:
                return await cua.connect(self.url, self.token, open_timeout=10)
            except Unauthorized:
                raise
            except Exception as exc:  # refused, reset, handshake or timeout: the server is not there (yet)
                if loop.time() > deadline:
                    raise ConnectionLost(f"the sandbox server at {self.url} did not answer within "
                                         f"{patience:.0f} s ({type(exc).__name__}: {exc})") from exc
                if tries == 1 or tries % 10 == 0:
                    log.warning("the sandbox server at %s is not reachable (%s); waiting", self.url, type(exc).__name__)
            # backing off between connection attempts to a server that is away is the point
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_backoff_s)

    async def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except Exception as exc:  # closing a lost connection may fail again
                log.debug("closing a lost connection: %s: %s", type(exc).__name__, exc)

    async def aclose(self) -> None:
        await self._close_client()
        await self._stop_child()

    @asynccontextmanager
    async def open(self, kind: str, config: dict[str, Any]) -> AsyncIterator[SandboxHandle]:
        """A `SandboxOpener`: a sandbox on the server, closed on exit."""
        async with open_remote(await self.client(), kind, config) as sandbox:
            yield sandbox


@asynccontextmanager
async def sandbox_opener(*, local: bool = False, server: str | None = None, token: str | None = None,
                         max_sandboxes: int = 8, reconnect_s: float = 300.0) -> AsyncIterator[SandboxOpener]:
    """Yields a SandboxOpener. `local`: sandboxes in this process. Else through the client:
    to `server` if given, or to a `cua serve` started as a child process on loopback (see
    `ServerLink` for what happens when the connection is lost)."""
    if local:
        from cua.episode.local import open_local

        yield open_local
        return
    async with AsyncExitStack() as stack:
        if server is None:
            from functools import partial

            from cua.server_process import serve_in_subprocess

            link = ServerLink(child=partial(serve_in_subprocess, max_sandboxes=max_sandboxes), reconnect_s=reconnect_s)
        else:
            link = ServerLink(url=server, token=token, reconnect_s=reconnect_s)
        stack.push_async_callback(link.aclose)
        await link.client()  # fail now, not at the first episode, when there is no server at all
        yield link.open
