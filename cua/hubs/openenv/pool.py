"""What every session of one OpenEnv server shares: where sandboxes come from, how many may
be open at once, and the closing of them all.

OpenEnv's server caps its websocket sessions (`max_concurrent_envs`), but its HTTP `/reset`
makes a fresh environment per request, outside that count; each cua environment therefore
takes a sandbox slot here when it opens a sandbox and gives it back when it closes it, so a
server never holds more sandboxes than it declared sessions, however they are asked for.
OpenEnv frees a session's place before its environment has closed the sandbox, so a client
that closes a session and opens the next at once finds every slot still taken for as long
as that close takes (seconds, for a desktop): a sandbox asked for when none is free waits
up to `slot_wait_s` for one, and only then fails with `cua.errors.Capacity` (retryable).

OpenEnv closes environments from its threads and sometimes from the event loop itself,
where nothing may block; a close asked for there runs as a task the pool keeps, and the
server's shutdown awaits those tasks and closes every session still open, so no sandbox
outlives the server.
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
    #: How long a sandbox asked for while every slot is taken waits for one to be freed.
    slot_wait_s: float = 30.0
    #: Sandboxes open now (each holds a slot).
    in_use: int = 0
    #: Environments holding a sandbox: closed at shutdown.
    live: set[Closable] = field(default_factory=set)
    _closing: set[asyncio.Task[None]] = field(default_factory=set)
    _freed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def open(self, kind: str, config: dict[str, Any]) -> tuple[Any, SandboxHandle]:
        """A slot and a sandbox: (its opener's context, to exit when done, and the handle)."""
        async with self._freed:
            try:
                await asyncio.wait_for(self._freed.wait_for(lambda: self.in_use < self.max_sandboxes),
                                       self.slot_wait_s)
            except TimeoutError:
                raise Capacity(f"all {self.max_sandboxes} sandboxes of this server are in use",
                               details={"max_sandboxes": self.max_sandboxes}) from None
            self.in_use += 1
        try:
            cm = self.opener(kind, config)
            handle = await cm.__aenter__()
        except BaseException:
            await self._free()
            raise
        return cm, handle

    async def release(self, cm: Any) -> None:
        """Close a sandbox `open` gave and free its slot (the slot is freed even if closing fails)."""
        try:
            await cm.__aexit__(None, None, None)
        finally:
            await self._free()

    async def _free(self) -> None:
        async with self._freed:
            self.in_use -= 1
            self._freed.notify()

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
