"""The one agent loop: what a turn becomes, and how turns drive an episode.

Every driver that lets an agent act (`cua eval` through `run_episode`, the rollout service's
group rollouts, the verl agent loop, and a trainer's loop over `CuaEnv` or the vector env)
maps a turn to steps with `plan`, so the same policy takes the same steps, is paid the same
and is judged after the same number of steps everywhere.

The rule for a turn (`plan`):

- actions: each is stepped, in order, until the episode is over;
- no action and a parse error (the model wrote something that is not an action): one
  wasted step (`None`), counted against the step limit and kept in the trajectory with the
  raw output. Otherwise an unparseable policy would be asked again and again at no cost,
  and never meet the step limit;
- no action and no parse error (the agent says it has nothing more to do: an oracle's
  script that ran out, the no-op agent, a model that answered in prose without a tool
  call, as a chat agent ends its turn): `STOP`, the episode ends where it is and the state
  is judged (terminated, without a `Done`). Counting it as a wasted step instead would
  show the agent the same screen again, and a deterministic policy would answer the same
  until the step limit: the episode would then be judged after a different number of
  steps, and reported truncated, for what is the same decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from cua.actions import Action
from cua.episode.agent import AgentTurn, EpisodeAgent, EpisodeContext, agent_info
from cua.episode.episode import Episode, EpisodeRecord, LastAttempt, Status
from cua.episode.handle import SandboxHandle
from cua.errors import CuaError, ErrorRecord
from cua.observation import ObserveOptions
from cua.task import TaskInstance
from cua.trajectory import Producer, TrajectoryWriter

__all__ = ["STOP", "AgentRaised", "Planned", "Stop", "play", "plan", "run_episode"]


class Stop:
    """The agent has nothing more to do: the episode ends where it is (see the module docstring)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "STOP"


STOP: Final = Stop()

#: What a driver steps for a turn: an action, `None` (a wasted turn: a step that does
#: nothing), or `STOP`.
Planned = Action | Stop | None


def plan(turn: AgentTurn) -> Sequence[Planned]:
    """The steps of one turn, by the one rule (module docstring)."""
    if turn.actions:
        return turn.actions
    return [None] if turn.parse_error else [STOP]


class AgentRaised(Exception):  # noqa: N818 -- a wrapper that carries the agent's own failure
    """The agent's own code raised (not a `CuaError`): the episode is the agent's fault.
    `error` is the record's error, with the agent's traceback."""

    def __init__(self, error: ErrorRecord) -> None:
        super().__init__(error.message)
        self.error = error


async def play(ep: Episode, agent: EpisodeAgent, ctx: EpisodeContext, *, progress: bool = False) -> None:
    """Ask `agent` for turns and step them (`plan`) until the episode is over or the agent
    stops; the caller judges. What drivers differ in (what a turn records: token traces, the
    time split between model and environment) is the agent's, not the loop's.

    Raises `AgentRaised` when the agent's own code raises; a `CuaError` (the sandbox's, the
    model server's) passes through. `progress`: read dense progress after every step.
    """
    while not ep.over:
        try:
            turn = await agent.turn(ctx.observation)
        except CuaError:
            raise
        except Exception as exc:  # the agent's own bug: the caller records it, never raises it on
            raise AgentRaised(ErrorRecord.of_agent(exc)) from exc
        for step in plan(turn):
            if isinstance(step, Stop):
                return
            result = await ep.step(step, turn=turn, progress=progress)
            ctx.update(result.observation)
            if ep.over:
                break


async def run_episode(handle: SandboxHandle, instance: TaskInstance, agent: EpisodeAgent, *,
                      observe: ObserveOptions | None = None, writer: TrajectoryWriter | None = None,
                      producer: Producer = "eval", max_steps: int | None = None, run_id: str | None = None,
                      last_attempt: LastAttempt = True, repeat: int = 0) -> EpisodeRecord:
    """Run one episode of `agent` on an already created sandbox (`play`, then the judge);
    never raises for sandbox or agent faults."""
    ep = Episode(handle, instance, observe=observe, writer=writer, producer=producer, agent=agent_info(agent),
                 max_steps=max_steps, run_id=run_id, repeat=repeat)
    try:
        obs = await ep.reset()
        ctx = EpisodeContext(handle, obs)
        try:
            await agent.begin(ep.instance, ctx)
        except CuaError:
            raise
        except Exception as exc:  # an agent's own bug: recorded, not raised
            return ep.finish(status="agent_error", error=ErrorRecord.of_agent(exc), last_attempt=last_attempt)
        try:
            await play(ep, agent, ctx)
        except AgentRaised as exc:
            return ep.finish(status="agent_error", error=exc.error, last_attempt=last_attempt)
        await ep.judge()
    except CuaError as exc:
        status: Status = "infra_error" if exc.fault != "agent" else "agent_error"
        return ep.finish(status=status, error=ErrorRecord.of(exc), last_attempt=last_attempt)
    return ep.finish(last_attempt=last_attempt)
