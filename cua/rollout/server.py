"""Starting the rollout service: in the current event loop (tests, notebooks) or as `cua rollout serve`."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from cua.episode.openers import sandbox_opener
from cua.observation import ObserveOptions
from cua.rollout.app import create_app
from cua.rollout.envs import EnvHandles
from cua.rollout.proxy import TokenProxy
from cua.rollout.service import RolloutService, RolloutSettings

__all__ = ["RunningRollouts", "serve_rollouts"]


@dataclass
class RunningRollouts:
    url: str
    service: RolloutService
    envs: EnvHandles


@contextlib.asynccontextmanager
async def serve_rollouts(runs_dir: str | Path, *, local: bool = False, server: str | None = None,
                         token: str | None = None, max_episodes: int = 8, max_retries: int = 2,
                         max_staleness: int = 1, observe: ObserveOptions | None = None,
                         host: str = "127.0.0.1", port: int = 0, ray: str | None = None,
                         ray_actors: int = 2) -> AsyncIterator[RunningRollouts]:
    """Serve the rollout service on `host:port` (0: a free port) until the block exits.

    Sandboxes live in this process (`local`), on `server` (a `cua serve` URL), or on a
    `cua serve` child process started here (neither). `ray` (a Ray address, "auto" or
    "local"): groups run on `ray_actors` Ray actors instead, each with its own sandboxes.
    """
    from cua.policy.service import serving_app

    settings = RolloutSettings(runs_dir=Path(runs_dir), max_episodes=max_episodes, max_retries=max_retries,
                               max_staleness=max_staleness, observe=observe or ObserveOptions())
    async with sandbox_opener(local=local, server=server, token=token, max_sandboxes=2 * max_episodes + 8) as opener:
        proxy = TokenProxy()
        box: dict[str, str] = {}
        service = RolloutService(settings, opener, proxy, proxy_url=lambda: box["url"])
        envs = EnvHandles(opener, settings.observe)
        app = create_app(service, envs, proxy)
        async with contextlib.AsyncExitStack() as stack:
            if ray is not None:
                from cua.rollout.ray_placement import ray_placement

                service.placement = await stack.enter_async_context(ray_placement(
                    ray, actors=ray_actors, runs_dir=settings.runs_dir, max_episodes=max_episodes,
                    max_retries=max_retries))
            url = await stack.enter_async_context(serving_app(app, host=host, port=port))
            box["url"] = url
            yield RunningRollouts(url, service, envs)
