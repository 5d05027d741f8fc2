"""`app`: the OpenEnv server as a module-level ASGI app, for what runs an app by its import
path (`uvicorn cua.hubs.openenv.asgi:app`, `openenv.yaml`'s `app:`, a Hugging Face Space).

Such a runner passes no arguments, so the settings come from the environment:

- `CUA_OPENENV_TOKEN`: the bearer token, required. The runner, not this app, chooses the
  bind, so the app cannot tell loopback from a public port and never serves without a token;
- `CUA_OPENENV_SERVER` (and `CUA_TOKEN`): a `cua serve` websocket URL for the sandboxes;
  unset, the sandboxes live in this process;
- `CUA_OPENENV_MAX_SESSIONS` (4), `CUA_OPENENV_IDLE_TIMEOUT` (seconds, 300),
  `CUA_OPENENV_TASK` (the task of a reset that names none), `CUA_OPENENV_REWARD`
  (`sparse` or `dense`), `CUA_OPENENV_FORMAT` (`jpeg` or `png`).

Asking for `app` without a token raises, naming the variable.

The runner also chooses websocket compression, which an app cannot refuse: run uvicorn with
`--ws-per-message-deflate false` (as `cua openenv serve` does), or each step deflates its
base64 screenshot, about a third of the step's cost on the fake kind (bench/openenv_step.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI

from cua.episode.handle import SandboxOpener
from cua.episode.openers import sandbox_opener
from cua.hubs.openenv.app import create_app
from cua.hubs.openenv.models import RewardMode
from cua.hubs.openenv.pool import SandboxPool
from cua.hubs.openenv.server import TOKEN_ENV
from cua.observation import ObserveOptions

__all__ = ["app_from_environment"]  # and `app` (module __getattr__)


class _OpenerWhileServing:
    """The sandbox opener the app's lifespan opens (`sandbox_opener` is an async context)."""

    def __init__(self) -> None:
        self.opener: SandboxOpener | None = None

    def __call__(self, kind: str, config: dict[str, Any]) -> Any:
        if self.opener is None:
            raise RuntimeError("the app is not serving")
        return self.opener(kind, config)


def app_from_environment(environ: dict[str, str] | None = None) -> FastAPI:
    """The app as the environment's variables (above) configure it; ValueError for a missing
    token or a setting out of range."""
    env = dict(os.environ if environ is None else environ)
    token = env.get(TOKEN_ENV) or None
    if token is None:
        raise ValueError(f"set {TOKEN_ENV}: the OpenEnv app never serves without a token")
    server = env.get("CUA_OPENENV_SERVER") or None
    max_sessions = int(env.get("CUA_OPENENV_MAX_SESSIONS", "4"))
    idle = float(env.get("CUA_OPENENV_IDLE_TIMEOUT", "300"))
    reward = env.get("CUA_OPENENV_REWARD", "sparse")
    image = env.get("CUA_OPENENV_FORMAT", "jpeg")
    if max_sessions < 1 or idle <= 0 or reward not in ("sparse", "dense") or image not in ("jpeg", "png"):
        raise ValueError("CUA_OPENENV_MAX_SESSIONS >= 1, CUA_OPENENV_IDLE_TIMEOUT > 0, "
                         "CUA_OPENENV_REWARD sparse|dense, CUA_OPENENV_FORMAT jpeg|png")
    lazy = _OpenerWhileServing()
    mode: RewardMode = "dense" if reward == "dense" else "sparse"
    pool = SandboxPool(lazy, max_sessions, ObserveOptions(format="png" if image == "png" else "jpeg"),
                       default_task=env.get("CUA_OPENENV_TASK") or None, reward=mode)

    @contextlib.asynccontextmanager
    async def opened() -> AsyncIterator[None]:
        async with sandbox_opener(local=server is None, server=server, token=env.get("CUA_TOKEN"),
                                  max_sandboxes=max_sessions + 2) as opener:
            lazy.opener = opener
            try:
                yield
            finally:
                lazy.opener = None

    return create_app(pool, token=token, host="0.0.0.0", max_sessions=max_sessions, idle_timeout_s=idle,
                      lifespan=opened)


def __getattr__(name: str) -> Any:
    """`app`, built when a runner asks for it (`uvicorn cua.hubs.openenv.asgi:app`), so that
    importing the module for `app_from_environment` needs no token."""
    if name == "app":
        return app_from_environment()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
