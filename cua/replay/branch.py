"""Continue a trajectory from step k with another agent (`cua replay --from-step K --policy SPEC`).

The recording's task instance is reset in a fresh sandbox and its actions 0..k-1 are
performed again, every screen checked against the recorded frame (`cua.branch.replay_prefix`:
a recording that no longer reproduces is refused, never continued from a look-alike state).
From step k the agent plays to the end in the same episode, so the judge compares the end
with the task's start and the step limit counts the recorded steps too. The continuation's
trajectory starts at step k (meta.extra["branch"] names the parent and the step,
`forked_at_step` is k), as a rollout group's branches do.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cua.branch import branch_extra, replay_prefix, task_instance
from cua.branch.fork import load
from cua.episode import EpisodeContext, SandboxOpener, play
from cua.episode.agent import EpisodeAgent, agent_info
from cua.episode.episode import Episode
from cua.episode.loop import AgentRaised
from cua.errors import CuaError, ErrorRecord
from cua.observation import ObserveOptions
from cua.trajectory import TrajectoryWriter

__all__ = ["Continuation", "continue_from"]


@dataclass
class Continuation:
    source: str
    trajectory: str
    task_id: str
    seed: int
    from_step: int
    #: Steps the agent took from `from_step` on.
    steps: int
    status: str
    passed: bool | None
    score: float | None
    recorded_passed: bool | None
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        verdict = {True: "pass", False: "fail", None: "none"}
        return (f"{self.task_id} seed={self.seed} from_step={self.from_step} steps={self.steps} status={self.status} "
                f"verdict recorded={verdict[self.recorded_passed]} continued={verdict[self.passed]}")


async def continue_from(source: str | Path, step: int, opener: SandboxOpener, agent: EpisodeAgent,
                        out: str | Path) -> Continuation:
    """Bring the recording at `source` to `step` in a sandbox from `opener`, then let `agent`
    play on; write the continuation's trajectory to `out`. Raises `cua.branch.BranchRefused`
    when the step cannot be reached; faults after that are recorded, as `run_episode` does."""
    t0 = time.perf_counter()
    traj = load(source)
    instance = task_instance(traj)
    meta = traj.meta
    assert meta is not None
    observe = ObserveOptions.model_validate(meta.observe) if meta.observe else None
    info = agent_info(agent)
    async with opener(instance.sandbox_kind, instance.sandbox_config) as handle:
        base = Episode(handle, instance, observe=observe, producer="replay", agent=info, run_id=meta.run_id,
                       extra=branch_extra(traj, step))
        obs = await replay_prefix(base, traj, step)
        ep = base.fork(handle, obs, writer=TrajectoryWriter(out, frames=meta.frames))
        ctx = EpisodeContext(handle, obs)
        try:
            try:
                await agent.begin(ep.instance, ctx)
            except CuaError:
                raise
            except Exception as exc:  # the agent's own bug: recorded, not raised
                raise AgentRaised(ErrorRecord.of_agent(exc)) from exc
            await play(ep, agent, ctx)
            await ep.judge()
            record = ep.finish()
        except AgentRaised as exc:
            record = ep.finish(status="agent_error", error=exc.error)
        except CuaError as exc:
            record = ep.finish(status="infra_error" if exc.fault != "agent" else "agent_error",
                               error=ErrorRecord.of(exc))
    recorded = traj.end.verdict if traj.end is not None else None
    verdict = record.verdict
    return Continuation(source=str(source), trajectory=str(out), task_id=meta.task_id, seed=meta.seed,
                        from_step=step, steps=record.steps, status=record.status,
                        passed=verdict.passed if verdict is not None else None,
                        score=verdict.score if verdict is not None else None,
                        recorded_passed=recorded.passed if recorded is not None else None,
                        seconds=round(time.perf_counter() - t0, 3))
