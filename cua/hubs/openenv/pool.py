"""What every session of one OpenEnv server shares: where sandboxes come from, how many may
be open at once, and the closing of them all.

OpenEnv's server caps its websocket sessions (`max_concurrent_envs`), but its HTTP `/reset`
makes a fresh environment per request, outside that count; each cua environment therefore
takes a sandbox slot here when it opens a sandbox and gives it back when it closes it, so a
server never holds more sandboxes than it declared sessions, however they are asked for
(past the limit: `cua.errors.Capacity`, retryable). OpenEnv closes environments from its
threads and sometimes from the event loop itself, where nothing may block; a close asked
for there runs as a task the pool keeps, and the server's shutdown awaits those tasks and
closes every session still open, so no sandbox outlives the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

from cua.episode.handle import SandboxHandle, SandboxOpener
from cua.errors import Capacity
from cua.hubs.openenv.models import RewardMode
from cua.observation import ObserveOptions

__all__ = ["Closable", "SandboxPool"]


class Closable(Protocol):
    async def aclose(self) -> None: ...


@dataclass
class SandboxPool:
    opener: SandboxOpener
    max_sandboxes: int
    observe: ObserveOptions = field(default_factory=ObserveOptions)
    #: The task a reset that names none starts (None: a reset must name one).
    default_task: str | None = None
    reward: RewardMode = "sparse"
    #: Sandboxes open now (each holds a slot).
    in_use: int = 0
    #: Environments holding a sandbox: closed at shutdown.
    live: set[Closable] = field(default_factory=set)
    _closing: set[asyncio.Task[None]] = field(default_factory=set)

    async def open(self, kind: str, config: dict[str, Any]) -> tuple[Any, SandboxHandle]:
        """A slot and a sandbox: (its opener's context, to exit when done, and the handle)."""
        if self.in_use >= self.max_sandboxes:
            raise Capacity(f"all {self.max_sandboxes} sandboxes of this server are in use",
                           details={"max_sandboxes": self.max_sandboxes})
        self.in_use += 1
        try:
            cm = self.opener(kind, config)
            handle = await cm.__aenter__()
        except BaseException:
            self.in_use -= 1
            raise
        return cm, handle

    async def release(self, cm: Any) -> None:
        """Close a sandbox `open` gave and free its slot (the slot is freed even if closing fails)."""
        try:
            await cm.__aexit__(None, None, None)
        finally:
            self.in_use -= 1

    def close_later(self, closing: Coroutine[Any, Any, None]) -> None:
        """Run a close on the event loop without waiting for it (the caller is on the loop and may not block)."""
        task = asyncio.get_running_loop().create_task(closing)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        """Close every environment still holding a sandbox, and wait for the closes under way."""
        await asyncio.gather(*(env.aclose() for env in list(self.live)), return_exceptions=True)
        while self._closing:
            await asyncio.gather(*list(self._closing), return_exceptions=True)
