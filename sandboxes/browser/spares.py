"""Pre-started fork targets, so a group of forks is ready to act in one page load.

A fork is a new sandbox (services, browser context, page) restored from a snapshot.
Starting the sandbox costs more than the restore, and a group rollout forks k at once
from one snapshot, again and again. So each config keeps spares: sandboxes started
with their start page loaded and settled, taken by the next forks, which then only
restore (a same-origin load into a renderer that has loaded the app once: about a fifth
less Chromium CPU than a restore into a blank page).

- The pool learns its size from demand: after k forks of a config ran at once it keeps
  k spares of that config (at most `CUA_BROWSER_FORK_SPARES`, default 8; 0 turns the
  pool off), refilled one at a time in the background once the forks are done, so the
  refill does not compete with the forks it replaces.
- A spare serves any fork of the same config: the restore replaces its app databases,
  cookies, storage and page with the snapshot's.
- Spares never outlive the sandboxes they serve: when the last other browser sandbox of
  the event loop closes, the spares close too. A spare whose browser died is dropped.

The same pool keeps the warm spares of `create` when `CUA_BROWSER_POOL` is N > 0 (`cua
serve --pool N`): N sandboxes per config fully created (services up, start page loaded
and settled), so a `create` of that config takes one instead of starting one. The first
create of a config is cold and names the config; its N spares start in the background,
and each one taken is replaced, one at a time, once creates pause (`REFILL_PAUSE_S`: a
refill costs what a create does and would slow the creates it serves). A warm spare's
page was loaded when it was pre-started (the first `reset` makes the episode's state, as
for any create). They are live processes of the server, so its memory figures count them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["ForkSpares", "pool_size", "spares_limit"]

log = logging.getLogger(__name__)


def spares_limit() -> int:
    try:
        return max(0, int(os.environ.get("CUA_BROWSER_FORK_SPARES", "8")))
    except ValueError:
        return 8


#: A warm spare is started once no create has taken one for this long.
REFILL_PAUSE_S = 0.5


def pool_size() -> int:
    """Warm spares kept per config for `create` (`CUA_BROWSER_POOL`, default 0: none)."""
    try:
        return max(0, int(os.environ.get("CUA_BROWSER_POOL", "0")))
    except ValueError:
        return 0


def config_key(config: Any) -> str:
    return json.dumps(config.model_dump(mode="json"), sort_keys=True)


class ForkSpares:
    """The spares of one event loop (one Playwright runtime)."""

    def __init__(self, spawn: Callable[[Any, str], Awaitable[Any]],
                 create: Callable[[Any, str], Awaitable[Any]] | None = None) -> None:
        self._spawn = spawn
        self._create = create
        #: Warm spares for `create` (fully created sandboxes), per config, and how many to keep.
        self._warm: dict[str, list[Any]] = {}
        self._warm_want: dict[str, int] = {}
        #: When a create last took a warm spare: the refill waits for creates to pause.
        self._last_take = 0.0
        self._ready: dict[str, list[Any]] = {}
        self._configs: dict[str, Any] = {}
        self._inflight: dict[str, int] = {}
        self._demand: dict[str, int] = {}
        self._refill: asyncio.Task[None] | None = None
        self._closing = False

    def ready(self, config: Any) -> int:
        return len(self._ready.get(config_key(config), []))

    def begin(self, config: Any) -> Any | None:
        """A fork of `config` starts: note the demand; a live spare if one is ready."""
        key = config_key(config)
        self._configs[key] = config
        self._inflight[key] = self._inflight.get(key, 0) + 1
        self._demand[key] = min(spares_limit(), max(self._demand.get(key, 0), self._inflight[key]))
        pool = self._ready.get(key, [])
        while pool:
            spare = pool.pop()
            if spare.alive:
                return spare
            asyncio.ensure_future(spare.close())
        return None

    def warm(self, config: Any) -> int:
        return len(self._warm.get(config_key(config), []))

    def take_warm(self, config: Any, keep: int) -> Any | None:
        """A create of `config`: a live warm spare if one is ready (None: create it cold);
        either way the pool of `config` is kept at `keep`, refilled in the background."""
        if self._create is None or keep <= 0 or self._closing:
            return None
        key = config_key(config)
        self._configs[key] = config
        self._warm_want[key] = keep
        self._last_take = asyncio.get_running_loop().time()
        pool = self._warm.get(key, [])
        spare = None
        while pool:
            candidate = pool.pop(0)
            if candidate.alive:
                spare = candidate
                break
            asyncio.ensure_future(candidate.close())
        if self._refill is None or self._refill.done():
            self._refill = asyncio.ensure_future(self._fill())
        return spare

    def end(self, config: Any) -> None:
        """A fork of `config` finished (either way): refill once none is running."""
        key = config_key(config)
        self._inflight[key] = max(0, self._inflight.get(key, 0) - 1)
        if self._inflight[key] == 0 and not self._closing and (self._refill is None or self._refill.done()):
            self._refill = asyncio.ensure_future(self._fill())

    async def _fill(self) -> None:
        while not self._closing:
            short = [k for k, want in self._demand.items()
                     if len(self._ready.get(k, [])) < want and self._inflight.get(k, 0) == 0]
            cold = [k for k, want in self._warm_want.items() if len(self._warm.get(k, [])) < want]
            if not short and not cold:
                return
            key, warm = (short[0], False) if short else (cold[0], True)
            if warm:  # starting a spare costs what a create does: not while creates are coming in
                pause = self._last_take + REFILL_PAUSE_S - asyncio.get_running_loop().time()
                if pause > 0:
                    await asyncio.sleep(pause)
                    continue
            start = self._create if warm and self._create is not None else self._spawn
            try:
                spare = await start(self._configs[key], f"spare-{uuid.uuid4().hex[:12]}")
            except Exception as exc:  # a failed spare costs a slower fork or create later, nothing else
                log.warning("could not start a %s spare: %s: %s", "create" if warm else "fork", type(exc).__name__, exc)
                if warm:
                    self._warm_want[key] = len(self._warm.get(key, []))
                else:
                    self._demand[key] = len(self._ready.get(key, []))
                continue
            if self._closing:
                await spare.close()
                return
            (self._warm if warm else self._ready).setdefault(key, []).append(spare)

    async def close(self) -> None:
        """Close every spare (the last sandbox they could serve has closed)."""
        self._closing = True
        refill, self._refill = self._refill, None
        if refill is not None and not refill.done():
            refill.cancel()
            await asyncio.gather(refill, return_exceptions=True)
        spares = [s for pool in (*self._ready.values(), *self._warm.values()) for s in pool]
        self._ready.clear()
        self._demand.clear()
        self._warm.clear()
        self._warm_want.clear()
        await asyncio.gather(*(s.close() for s in spares), return_exceptions=True)
        self._closing = False
