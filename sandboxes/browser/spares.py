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
- Fork spares never outlive the sandboxes they serve: when the last other browser sandbox
  of the event loop closes, they close too. A spare whose browser died is dropped.

The same pool keeps the warm spares of `create` when `CUA_BROWSER_POOL` is N > 0 (`cua
serve --pool N`): N sandboxes per config fully created (services up, start page loaded
and settled), so a `create` of that config takes one instead of starting one. The first
create of a config is cold and names the config; its N spares start in the background.
Each spare taken is replaced at once, the starts side by side, so a pool of N keeps up
with creates that come one after another as fast as a start takes / N; a create that
finds none ready waits for the spare nearest to ready rather than starting cold, since
that one has already paid part of a start. A warm spare's page was loaded when it was
pre-started (the first `reset` makes the episode's state, as for any create). They are
live processes of the server, so its memory figures count them. Warm spares serve the
server rather than a sandbox: they outlive the last sandbox (with them the browser,
Playwright and the app host stay up, which a create after an idle moment would otherwise
start again: 0.6 s) until `close`, which the server calls when it stops
(`cua.sandbox.close_pools`).
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
        #: Warm spares for `create` (fully created sandboxes) per config, those starting, and
        #: how many to keep.
        self._warm: dict[str, list[Any]] = {}
        self._warm_starting: dict[str, set[asyncio.Task[None]]] = {}
        self._warm_want: dict[str, int] = {}
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

    async def take_warm(self, config: Any, keep: int) -> Any | None:
        """A create of `config`: a live warm spare, the one nearest to ready if none is
        (None: create it cold); either way the pool of `config` is topped up to `keep`."""
        if self._create is None or keep <= 0 or self._closing:
            return None
        key = config_key(config)
        self._configs[key] = config
        self._warm_want[key] = keep
        spare = self._pop_warm(key)
        starting = self._warm_starting.get(key)
        if spare is None and starting:
            await asyncio.wait(starting, return_when=asyncio.FIRST_COMPLETED)
            spare = self._pop_warm(key)  # None if that start failed or another create took it
        self._top_up(key)
        return spare

    def _pop_warm(self, key: str) -> Any | None:
        pool = self._warm.get(key, [])
        while pool:
            candidate = pool.pop(0)
            if candidate.alive:
                return candidate
            asyncio.ensure_future(candidate.close())
        return None

    def _top_up(self, key: str) -> None:
        starting = self._warm_starting.setdefault(key, set())
        for _ in range(self._warm_want.get(key, 0) - len(self._warm.get(key, [])) - len(starting)):
            task = asyncio.ensure_future(self._start_warm(key))
            starting.add(task)
            task.add_done_callback(starting.discard)

    async def _start_warm(self, key: str) -> None:
        assert self._create is not None
        try:
            spare = await self._create(self._configs[key], f"spare-{uuid.uuid4().hex[:12]}")
        except Exception as exc:  # a failed spare costs a slower create later, nothing else
            log.warning("could not start a create spare: %s: %s", type(exc).__name__, exc)
            self._warm_want[key] = len(self._warm.get(key, []))  # no retry loop on a config that fails
            return
        if self._closing or not self._warm_want.get(key):
            await spare.close()
            return
        self._warm.setdefault(key, []).append(spare)

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
            if not short:
                return
            key = short[0]
            try:
                spare = await self._spawn(self._configs[key], f"spare-{uuid.uuid4().hex[:12]}")
            except Exception as exc:  # a failed spare costs a slower fork later, nothing else
                log.warning("could not start a fork spare: %s: %s", type(exc).__name__, exc)
                self._demand[key] = len(self._ready.get(key, []))
                continue
            if self._closing:
                await spare.close()
                return
            if not self._demand.get(key):  # the fork spares closed while it started
                await spare.close()
                continue
            self._ready.setdefault(key, []).append(spare)

    async def close_forks(self) -> None:
        """Close the fork spares (the last sandbox they could serve has closed); the warm
        spares of `create` stay, for the creates still to come."""
        spares = [s for pool in self._ready.values() for s in pool]
        self._ready.clear()
        self._demand.clear()
        await asyncio.gather(*(s.close() for s in spares), return_exceptions=True)

    async def close(self) -> None:
        """Close every spare, warm ones too, and stop refilling."""
        self._closing = True
        refill, self._refill = self._refill, None
        starting = [t for tasks in self._warm_starting.values() for t in tasks]
        self._warm_starting.clear()
        for task in (refill, *starting):
            if task is not None and not task.done():
                task.cancel()
        await asyncio.gather(*(t for t in (refill, *starting) if t is not None), return_exceptions=True)
        spares = [s for pool in (*self._ready.values(), *self._warm.values()) for s in pool]
        self._ready.clear()
        self._demand.clear()
        self._warm.clear()
        self._warm_want.clear()
        await asyncio.gather(*(s.close() for s in spares), return_exceptions=True)
        self._closing = False
