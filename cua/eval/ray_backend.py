"""Episodes on Ray: past one machine, cua runs on a Ray cluster, not a home-made one.

Each parallel slot is a Ray actor holding a `LocalExecutor`: its sandboxes live in the
actor's process on whatever node Ray placed it, and are reused from episode to episode
as on one machine. The driver hands out (template id, seed) jobs and writes the records,
so `episodes.jsonl` and `summary.json` are the same as for a local run: the actors ask
the model with the same sampling options, retry as often and name the run in every
trajectory as a local run's workers do. Every node needs cua and its system packages
installed (`scripts/setup.sh`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import ray

from cua.episode.episode import EpisodeRecord
from cua.eval.runner import EpisodeJob, JobExecutor
from cua.observation import ObserveOptions
from cua.policy.base import PolicyOptions
from cua.variant import parse_variant

__all__ = ["EpisodeActor", "ray_executors"]


class EpisodeActor:
    """Runs episodes inside a Ray worker; becomes a Ray actor class through `ray.remote`."""

    def __init__(self, policy: str, policy_kw: dict[str, Any], observe: dict[str, Any] | None,
                 config_overrides: dict[str, dict[str, Any]], run_dir: str | None = None,
                 frames: str = "all", options: dict[str, Any] | None = None, retries: int = 2,
                 run_id: str | None = None, attacks: int = 0) -> None:
        from cua.episode.local import open_local
        from cua.eval.agents import agent_factory
        from cua.eval.runner import LocalExecutor
        from cua.policy.base import PolicyOptions

        make_agent, _, self._policy = agent_factory(
            policy, options=PolicyOptions.model_validate(options) if options is not None else None, **policy_kw)
        self._executor = LocalExecutor(open_local, make_agent, config_overrides=config_overrides,
                                       observe=ObserveOptions.model_validate(observe) if observe else None,
                                       run_dir=Path(run_dir) if run_dir else None,
                                       frames=frames, retries=retries, run_id=run_id,  # type: ignore[arg-type]
                                       attacks=attacks)

    async def run(self, template_id: str, seed: int, repeat: int = 0, variant: dict[str, Any] | None = None) -> str:
        from cua.tasks.registry import get_template

        record = await self._executor.run(EpisodeJob(template=get_template(template_id), seed=seed, repeat=repeat,
                                                     variant=parse_variant(variant) if variant else None))
        return record.model_dump_json()

    async def aclose(self) -> None:
        await self._executor.aclose()
        if self._policy is not None:
            await self._policy.aclose()  # type: ignore[attr-defined]


class _ActorExecutor:
    """The driver's side of one actor: a `JobExecutor` whose work happens on the cluster."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def run(self, job: EpisodeJob) -> EpisodeRecord:
        variant = job.variant.model_dump(mode="json") if job.variant is not None else None
        return EpisodeRecord.model_validate_json(await self.actor.run.remote(job.template.id, job.seed, job.repeat, variant))

    async def aclose(self) -> None:
        await self.actor.aclose.remote()
        ray.kill(self.actor)


@asynccontextmanager
async def ray_executors(address: str, *, policy: str, policy_kw: dict[str, Any] | None = None,
                        observe: ObserveOptions | None = None,
                        config_overrides: dict[str, dict[str, Any]] | None = None,
                        num_cpus: float = 1.0, run_dir: Path | None = None,
                        frames: str = "all", options: PolicyOptions | None = None, retries: int = 2,
                        run_id: str | None = None, attacks: int = 0) -> AsyncIterator[Callable[[], JobExecutor]]:
    """Yields a factory of executors, each a new actor. `address`: a Ray cluster address,
    "auto", or "local" to start a Ray instance in this process (shut down on exit).
    `run_dir`: where the actors write trajectories (a path every worker sees)."""
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=None if address == "local" else address, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    actor_class = ray.remote(num_cpus=num_cpus)(EpisodeActor)
    observe_dict = observe.model_dump(mode="json") if observe else None
    options_dict = options.model_dump(mode="json", exclude_unset=True) if options is not None else None

    def make() -> JobExecutor:
        return _ActorExecutor(actor_class.remote(policy, policy_kw or {}, observe_dict, config_overrides or {},
                                                 str(run_dir.resolve()) if run_dir else None, frames, options_dict,
                                                 retries, run_id, attacks))

    try:
        yield make
    finally:
        if started_here:
            ray.shutdown()
