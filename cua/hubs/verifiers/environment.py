"""cua's tasks as a verifiers environment (`verifiers` 0.4, its `v1` stack).

A verifiers environment is a taskset (the rows a rollout starts from) and an `Env` that turns
one row into one episode. Here a row is a cua task id and seed, and the episode is played on
`cua openenv serve` through OpenEnv's websocket client (`CuaEnvClient`), so the sandbox, its
lifecycle and the judge stay on cua's side and verifiers' process holds only a connection:
nothing it crashes can orphan a browser.

The model sees the instruction and each screenshot as an image part of its user turn, and
answers one cua action as JSON (`{"type": "click", "x": 10, "y": 20}`, `{"type": "done"}`).
A reply that is not an action is answered with the validation error and costs a turn, never
a step; `max_bad_replies` in a row end the rollout. The reward is cua's judge's verdict of the
end state (`cua_judge`): verifiers' rubric is the task's own judge, never a model.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from cua.errors import BadRequest
from cua.hubs.openenv.client import CuaEnvClient
from cua.hubs.openenv.models import CuaObservation
from cua.hubs.verifiers.replies import ACTION_HELP, reply_action

__all__ = ["CuaEnv", "CuaEnvConfig", "CuaTask", "CuaTaskData", "CuaTaskset", "CuaTasksetConfig",
           "load_environment"]

#: The verifiers id of this environment: `vf-eval cua-verifiers ...` imports `cua_verifiers`.
ENV_ID = "cua-verifiers"


class CuaTaskData(vf.TaskData):  # type: ignore[misc]
    task_id: str
    seed: int
    base_url: str
    token_env: str
    kind: str | None
    max_bad_replies: int


class CuaTasksetConfig(vf.TasksetConfig):  # type: ignore[misc]
    tasks: list[str] = Field(default_factory=list)
    """cua task ids (`suite.template@version`, as `cua tasks list` shows them)."""
    seeds: list[int] = Field(default_factory=lambda: [0])
    """Each task runs at each of these seeds: one row per (task, seed)."""
    base_url: str = "http://127.0.0.1:8765"
    """Where `cua openenv serve` listens."""
    token_env: str = "CUA_OPENENV_TOKEN"
    """The variable holding that server's token (unset: a server started with --no-auth)."""
    kind: str | None = None
    """The sandbox kind every task must run on (browser, desktop, vm, fake); None: any."""
    max_bad_replies: int = Field(3, ge=1)
    """Replies in a row that are not an action before the rollout ends."""


class CuaTask(vf.Task[CuaTaskData]):  # type: ignore[misc]
    pass


class CuaTaskset(vf.Taskset[CuaTask, CuaTasksetConfig]):  # type: ignore[misc]
    def load(self) -> Iterator[CuaTask]:
        config: CuaTasksetConfig = self.config
        if not config.tasks:
            raise ValueError("name at least one cua task: --env.taskset.tasks '[\"todo.mark_done@1\"]'")
        for task_id in config.tasks:
            for seed in config.seeds:
                yield CuaTask(CuaTaskData(name=f"{task_id}#{seed}", id=f"{task_id}#{seed}", prompt=None,
                                          task_id=task_id, seed=seed, base_url=config.base_url,
                                          token_env=config.token_env, kind=config.kind,
                                          max_bad_replies=config.max_bad_replies), config.task)


class CuaEnvConfig(vf.EnvConfig):  # type: ignore[misc]
    #: The seat the model plays: a plain chat program (the `null` harness: no shell, no tools:
    #: the env performs the actions) in a subprocess on this host, which reaches the
    #: interception server at localhost, so no tunnel or hosted runtime is needed.
    player: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime=vf.SubprocessConfig())


def _turn(obs: CuaObservation, *, opening: bool, problem: str | None = None) -> list[dict[str, Any]]:
    lines = []
    if opening:
        lines += [f"Task: {obs.instruction}", ACTION_HELP]
    if problem:
        lines.append(f"Your last reply was not performed: {problem}")
    if obs.error is not None:
        lines.append(f"The last action failed: {obs.error.message}")
    where = " ".join(part for part in (obs.title, obs.url) if part)
    lines.append(f"Step {obs.step}. Screen {obs.width}x{obs.height}." + (f" Page: {where}." if where else ""))
    content: list[dict[str, Any]] = [{"type": "text", "text": "\n".join(lines)}]
    if obs.screenshot:
        mime = "jpeg" if obs.screenshot_format == "jpeg" else "png"
        content.append({"type": "image_url", "image_url": {"url": f"data:image/{mime};base64,{obs.screenshot}"}})
    return [{"role": "user", "content": content}]


class CuaEnv(vf.Env[CuaEnvConfig]):  # type: ignore[misc]
    """One cua episode per rollout on `cua openenv serve`; the judge's verdict is the reward."""

    async def run(self, task: CuaTask, agents: Any) -> None:
        data: CuaTaskData = task.data
        token = os.environ.get(data.token_env) or None
        async with CuaEnvClient(data.base_url, token=token) as client:
            result = await client.reset(task=data.task_id, seed=data.seed)
            if data.kind is not None:
                state = await client.state()
                if state.sandbox_kind != data.kind:
                    raise BadRequest(f"task {data.task_id} runs on {state.sandbox_kind}, not {data.kind}")
            obs = result.observation
            async with agents.player.interaction(task) as interaction:
                segment = await interaction.turn(_turn(obs, opening=True))
                bad = 0
                while not segment.terminated and not result.done:
                    try:
                        action = reply_action(segment.last_reply)
                    except BadRequest as e:
                        bad += 1
                        if bad >= data.max_bad_replies:
                            interaction.trace.stop("bad_replies")
                            break
                        segment = await interaction.turn(_turn(obs, opening=False, problem=str(e)))
                        continue
                    bad = 0
                    result = await client.step(action)
                    obs = result.observation
                    if not result.done:
                        segment = await interaction.turn(_turn(obs, opening=False))
                # Recorded before the interaction closes, where verifiers scores the rollout. An
                # episode the model left unfinished (turn limit, bad replies) is never judged as
                # done: it earns 0, like a fault, rather than a verdict of a state it walked away from.
                verdict = obs.verdict if result.done else None
                interaction.trace.record_reward("cua_judge", float(verdict.score) if verdict is not None else 0.0)


def load_environment(task: str | list[str], *, kind: str | None = None, seeds: list[int] | None = None,
                     base_url: str = "http://127.0.0.1:8765", **taskset: Any) -> Any:
    """verifiers' multi-turn environment over cua tasks, with the judge as its rubric: the
    package-level entry point (`import cua_verifiers; env = cua_verifiers.load_environment(
    task="todo.mark_done@1", kind="browser")`)."""
    tasks = [task] if isinstance(task, str) else list(task)
    config = CuaEnvConfig(taskset=CuaTasksetConfig(id=ENV_ID, tasks=tasks, seeds=seeds or [0], base_url=base_url,
                                                   kind=kind, **taskset))
    return vf.load_environment(config)

