"""Where a command's sandboxes live: in process, on a given server, or on one it starts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from cua.episode.handle import SandboxHandle, SandboxOpener

__all__ = ["sandbox_opener"]


@asynccontextmanager
async def sandbox_opener(*, local: bool = False, server: str | None = None, token: str | None = None,
                         max_sandboxes: int = 8) -> AsyncIterator[SandboxOpener]:
    """Yields a SandboxOpener. `local`: sandboxes in this process. Else through the client:
    to `server` if given, or to a `cua serve` started as a child process on loopback."""
    if local:
        from cua.episode.local import open_local

        yield open_local
        return
    import cua
    from cua.server.app import serve_in_subprocess

    async with AsyncExitStack() as stack:
        url = server
        if url is None:
            url, token = await stack.enter_async_context(serve_in_subprocess(max_sandboxes=max_sandboxes))
        client = await stack.enter_async_context(cua.connect(url, token))

        @asynccontextmanager
        async def open_remote(kind: str, config: dict[str, Any]) -> AsyncIterator[SandboxHandle]:
            sandbox = await client.create(kind, config=config)
            try:
                yield sandbox
            finally:
                await sandbox.close()

        yield open_remote
