"""Starting the OpenEnv server: in the current event loop (tests, notebooks) or as `cua openenv serve`."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

from cua.episode.handle import SandboxOpener
from cua.episode.openers import sandbox_opener
from cua.exposure import generate_token
from cua.hubs.openenv.app import create_app
from cua.hubs.openenv.models import RewardMode
from cua.hubs.openenv.pool import SandboxPool
from cua.observation import ObserveOptions

__all__ = ["TOKEN_ENV", "RunningOpenEnv", "serve_openenv"]

#: Where `cua openenv serve` reads its token from.
TOKEN_ENV = "CUA_OPENENV_TOKEN"


@dataclass
class RunningOpenEnv:
    url: str
    #: The bearer token every route but /health needs (None: served without auth).
    token: str | None
    pool: SandboxPool

    @property
    def headers(self) -> dict[str, str]:
        """The headers an HTTP client sends to be let in."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


@contextlib.asynccontextmanager
async def serve_openenv(*, local: bool = False, server: str | None = None, server_token: str | None = None,
                        token: str | None = None, no_auth: bool = False, max_sessions: int = 4,
                        idle_timeout_s: float | None = 300.0, slot_wait_s: float = 30.0,
                        default_task: str | None = None,
                        reward: RewardMode = "sparse", observe: ObserveOptions | None = None,
                        allowed_origins: Iterable[str] = (), unsafe_public_no_auth: bool = False,
                        host: str = "127.0.0.1", port: int = 0,
                        opener: SandboxOpener | None = None) -> AsyncIterator[RunningOpenEnv]:
    """Serve OpenEnv on `host:port` (0: a free port) until the block exits, then close every sandbox.

    Sandboxes live in this process (`local`), on `server` (a `cua serve` URL, with
    `server_token`), on a `cua serve` child process started here (neither), or come from
    `opener`. A sandbox asked for while all `max_sessions` are open waits up to
    `slot_wait_s` for a closing one (`SandboxPool`). The server requires `token` (a fresh one
    when None) unless `no_auth`.
    Raises ValueError for an exposure the rules refuse."""
    from cua.policy.service import serving_app

    own_token = None if no_auth else (token or generate_token())
    async with contextlib.AsyncExitStack() as stack:
        if opener is None:
            opener = await stack.enter_async_context(sandbox_opener(
                local=local, server=server, token=server_token, max_sandboxes=max_sessions + 2))
        pool = SandboxPool(opener, max_sessions, observe or ObserveOptions(), default_task=default_task,
                           reward=reward, slot_wait_s=slot_wait_s)
        app = create_app(pool, token=own_token, host=host, max_sessions=max_sessions, idle_timeout_s=idle_timeout_s,
                         allowed_origins=allowed_origins, unsafe_public_no_auth=unsafe_public_no_auth)
        # uncompressed, as `cua serve`'s: the screenshots are JPEG or PNG already, and deflating
        # their base64 cost more than the rest of a step's protocol (bench/openenv_step.py)
        async with serving_app(app, host=host, port=port, ws_per_message_deflate=False) as url:
            yield RunningOpenEnv(url, own_token, pool)
