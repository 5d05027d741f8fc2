"""Helpers of the OpenEnv tests: a task's oracle actions, played once in a local sandbox."""

from __future__ import annotations

from cua.actions import Action, Done
from cua.episode.agent import EpisodeContext, OracleAgent
from cua.episode.episode import Episode
from cua.episode.local import open_local
from cua.task import TaskInstance


def instance_of(task: str, seed: int) -> TaskInstance:
    from cua.tasks.registry import get_template

    instance: TaskInstance = get_template(task).instantiate(seed)
    return instance


async def oracle_actions(task: str, seed: int) -> list[Action]:
    """The actions the task's oracle takes from the instance's start, ending with a `Done`
    (the oracles act by clicks and keys as an agent would, so the same actions replayed on
    another sandbox of the same instance do the same)."""
    instance = instance_of(task, seed)
    actions: list[Action] = []
    async with open_local(instance.sandbox_kind, dict(instance.sandbox_config)) as handle:
        episode = Episode(handle, instance, producer="rl")
        obs = await episode.reset()
        ctx = EpisodeContext(handle, obs)
        agent = OracleAgent()
        await agent.begin(instance, ctx)
        while (turn := await agent.turn(obs)).actions:
            for action in turn.actions:
                actions.append(action)
                obs = (await episode.step(action)).observation
                ctx.update(obs)
        episode.finish()
    if not actions or not isinstance(actions[-1], Done):
        actions.append(Done(status="success"))
    return actions
