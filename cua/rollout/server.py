"""Starting the rollout service: in the current event loop (tests, notebooks) or as `cua rollout serve`."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path

from cua.episode.handle import SandboxOpener
from cua.episode.openers import sandbox_opener
from cua.exposure import generate_token
from cua.observation import ObserveOptions
from cua.rollout.app import create_app
from cua.rollout.curriculum import CurriculumSettings
from cua.rollout.envs import EnvHandles
from cua.rollout.proxy import TokenProxy
from cua.rollout.service import GroupPlacement, RolloutService, RolloutSettings

__all__ = ["TOKEN_ENV", "RunningRollouts", "serve_rollouts"]

#: Where `cua rollout serve` and the trainer adapters read the service's token from.
TOKEN_ENV = "CUA_ROLLOUT_TOKEN"


@dataclass
class RunningRollouts:
    url: str
    service: RolloutService
    envs: EnvHandles
    #: The bearer token every route but /health needs (None: served without auth).
    token: str | None

    @property
    def headers(self) -> dict[str, str]:
        """The headers an HTTP client sends to be let in."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


@contextlib.asynccontextmanager
async def serve_rollouts(runs_dir: str | Path, *, local: bool = False, server: str | None = None,
                         server_token: str | None = None, token: str | None = None, no_auth: bool = False,
                         allowed_origins: Iterable[str] = (), unsafe_public_no_auth: bool = False,
                         max_episodes: int = 8, max_queued: int | None = None, max_retries: int = 2,
                         max_staleness: int = 1, observe: ObserveOptions | None = None,
                         host: str = "127.0.0.1", port: int = 0, placement: GroupPlacement | None = None,
                         opener: SandboxOpener | None = None, curriculum: CurriculumSettings | None = None,
                         curriculum_path: Path | None = None) -> AsyncIterator[RunningRollouts]:
    """Serve the rollout service on `host:port` (0: a free port) until the block exits.

    Sandboxes live in this process (`local`), on `server` (a `cua serve` URL, with
    `server_token`), on a `cua serve` child process started here (neither), or come from
    `opener` (any `SandboxOpener`). With a `placement` (`cua.rollout.ray_placement`'s Ray
    actors, opened by the caller), groups run there instead, each worker with its own sandboxes.

    The service requires `token` (a fresh one when None; `RunningRollouts.token` says
    which) unless `no_auth`, and refuses foreign browser origins either way
    (`cua.rollout.app`). Raises ValueError for an exposure the rules refuse.
    """
    from cua.policy.service import serving_app

    own_token = None if no_auth else (token or generate_token())
    settings = RolloutSettings(runs_dir=Path(runs_dir), max_episodes=max_episodes, max_queued=max_queued,
                               max_retries=max_retries,
                               max_staleness=max_staleness, observe=observe or ObserveOptions(),
                               curriculum=curriculum or CurriculumSettings(), curriculum_path=curriculum_path)
    async with contextlib.AsyncExitStack() as openers:
        if opener is None:
            opener = await openers.enter_async_context(sandbox_opener(
                local=local, server=server, token=server_token, max_sandboxes=2 * max_episodes + 8))
        proxy = TokenProxy()
        box: dict[str, str] = {}
        service = RolloutService(settings, opener, proxy, proxy_url=lambda: box["url"], proxy_token=own_token)
        envs = EnvHandles(opener, settings.observe)
        app = create_app(service, envs, proxy, token=own_token, host=host, allowed_origins=allowed_origins,
                         unsafe_public_no_auth=unsafe_public_no_auth)
        service.placement = placement
        async with serving_app(app, host=host, port=port) as url:
            box["url"] = url
            yield RunningRollouts(url, service, envs, own_token)
