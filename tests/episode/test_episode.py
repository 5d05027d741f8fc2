"""The one episode: eval, CuaEnv and the recorder start a task the same way (reset seed, setup
steps, initial state, first screen), the instruction may come from the page, the app may end
the episode, and dense reward never pays for an episode merely ending. Real browsers, real apps."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops

from cua.actions import Done, Goto, Wait
from cua.episode import Episode, NoopAgent, open_local, run_episode
from cua.record.live import LiveSession
from cua.rl.env import CuaEnv
from cua.state import AppStateQuery, DomQuery, TitleQuery, UrlQuery
from cua.task import TaskInstance, TaskSetup, TaskTags, actions_oracle
from cua.tasks.registry import get_template
from cua.trajectory import TrajectoryWriter, read_trajectory, validate

pytestmark = pytest.mark.slow

BASE = "todo.mark_done@1"
SEARCH = "http://127.0.0.1:8000/search?q=tickets"
#: A page of the app with a marker the search page lacks (the app's own origin: the sandbox
#: refuses a `data:` page the agent would forge an end marker with).
ENDED = "http://127.0.0.1:8000/lists/1"
ENDED_MARKER = "form.add-todo"


class SetupTemplate:
    """todo.mark_done@1 with a pinned app seed and a setup step (a search page to start on)."""

    id = "test.setup_mark_done@1"
    tags = TaskTags(app="todo")

    def __init__(self, **setup: Any) -> None:
        self.base = get_template(BASE)
        self.setup = setup

    def instantiate(self, seed: int) -> TaskInstance:
        instance = self.base.instantiate(seed)
        return instance.model_copy(update={
            "task_id": self.id,
            "setup": TaskSetup(seed=7, actions=actions_oracle([Goto(url=SEARCH)]), **self.setup)})


def _pixels(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


def _same_screen(a: bytes, b: bytes) -> bool:
    return a == b or ImageChops.difference(_pixels(a), _pixels(b)).getbbox() is None


def _values(state: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.ok, v.value) for k, v in state.items()}


async def test_eval_cuaenv_and_the_recorder_start_a_task_the_same_way(tmp_path: Path) -> None:
    template = SetupTemplate()
    instance = template.instantiate(2)
    assert instance.reset_seed == 7 != instance.seed

    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        record = await run_episode(handle, instance, NoopAgent(), writer=TrajectoryWriter(tmp_path / "eval"))
        session = LiveSession(handle=handle, instance=instance, writer=TrajectoryWriter(tmp_path / "rec"))
        await session.start()
        assert session.episode is not None
        recorder_initial = session.episode.initial
        await session.finish(None)
        (pinned,) = await handle.query([AppStateQuery()])
        await handle.reset(seed=instance.seed)
        (unpinned,) = await handle.query([AppStateQuery()])
    assert record.status == "completed" and record.judge_input is not None and record.steps == 0
    eval_initial = record.judge_input.initial

    env = CuaEnv(template, trajectory_dir=tmp_path / "rl")
    try:
        _, info = env.reset(seed=2)
        assert env.episode is not None
        env_initial = env.episode.initial
        assert info["url"] == SEARCH and info["instruction"] == instance.instruction
    finally:
        env.close()

    # the same judge state: the pinned app seed, not the instance's seed, after the setup step
    assert _values(eval_initial) == _values(env_initial) == _values(recorder_initial)
    assert pinned.value != unpinned.value
    # the same first screen, kept as frame 0 of each producer's trajectory
    trajectories = {name: read_trajectory(tmp_path / name) for name in ("eval", "rec")}
    (rl_folder,) = (tmp_path / "rl").iterdir()
    trajectories["rl"] = read_trajectory(rl_folder)
    firsts = {}
    for name, traj in trajectories.items():
        assert traj.meta is not None and traj.meta.reset_seed == 7 and traj.meta.seed == 2, name
        assert traj.meta.producer == {"eval": "eval", "rec": "record", "rl": "rl"}[name]
        ref = traj.observations()[0]
        assert ref.url == SEARCH, (name, ref)
        data = traj.frame_bytes(ref)
        assert data is not None, name
        firsts[name] = data
        assert validate(traj.folder).ok, validate(traj.folder).problems
    assert _same_screen(firsts["eval"], firsts["rl"]) and _same_screen(firsts["eval"], firsts["rec"])


async def test_the_instruction_can_be_read_from_the_page_after_reset(tmp_path: Path) -> None:
    template = SetupTemplate(instruction_query=TitleQuery())
    instance = template.instantiate(0)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        (title,) = await handle.query([TitleQuery()])  # the page before reset and setup
        record = await run_episode(handle, instance, NoopAgent(), writer=TrajectoryWriter(tmp_path / "t"))
        (after,) = await handle.query([TitleQuery()])
    assert record.status == "completed", record.error
    assert record.instruction == after.value.strip() != instance.instruction
    traj = read_trajectory(tmp_path / "t")
    assert traj.meta is not None and traj.meta.instruction == record.instruction
    assert title.ok


async def test_an_instruction_query_that_reads_nothing_is_a_typed_infra_error() -> None:
    instance = SetupTemplate(instruction_query=DomQuery(selector="#no-such-element")).instantiate(0)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        record = await run_episode(handle, instance, NoopAgent())
    assert record.status == "infra_error" and record.error is not None and record.error.code == "internal"
    assert "instruction query" in record.error.message


async def test_the_app_can_end_the_episode(tmp_path: Path) -> None:
    # the "app" ends the episode by showing an end marker: a flag read after every step
    instance = SetupTemplate(end_query=DomQuery(selector=ENDED_MARKER, prop="count")).instantiate(0)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        ep = Episode(handle, instance, writer=TrajectoryWriter(tmp_path / "e"))
        await ep.reset()
        first = await ep.step(Wait(seconds=0))
        assert not first.ended and not ep.over
        result = await ep.step(Goto(url=ENDED))
        assert result.ended and ep.over and not ep.truncated
        verdict = await ep.judge()
        record = ep.finish()
    assert record.ended and not verdict.passed
    traj = read_trajectory(tmp_path / "e")
    assert traj.end is not None and traj.end.steps == len(traj.steps) == ep.steps == 2


def test_cuaenv_terminates_when_the_app_ends_and_truncates_at_the_limit(tmp_path: Path) -> None:
    template = SetupTemplate(end_query=UrlQuery())  # any URL: the app ends the episode at once
    env = CuaEnv(template, reward="dense")
    try:
        env.reset(seed=0)
        _, reward, terminated, truncated, info = env.step(Wait(seconds=0))
        assert terminated and not truncated and info["ended"] and not info["verdict"].passed
        assert reward == pytest.approx(info["verdict"].score - 0.0)
    finally:
        env.close()
    env = CuaEnv(BASE, reward="dense", max_steps=2, trajectory_dir=tmp_path / "rl")
    try:
        for seed in (0, 1):
            env.reset(seed=seed)
            rewards = []
            for _ in range(2):
                _, reward, terminated, truncated, info = env.step(Wait(seconds=0))
                rewards.append(reward)
            # out of steps: truncated, not terminated; nothing done pays nothing, ending included
            assert truncated and not terminated and rewards == [0.0, 0.0]
            assert not info["verdict"].passed and info["verdict"].score == 0.0
        _, info = env.reset(seed=3)
        env.step(Done())
    finally:
        env.close()
    folders = sorted((tmp_path / "rl").iterdir())
    assert len(folders) == 3
    for folder in folders:
        traj = read_trajectory(folder)
        assert traj.meta is not None and traj.meta.producer == "rl" and traj.end is not None
        assert len(traj.observations()) == len(traj.steps) + 1
    last = read_trajectory(folders[-1])
    assert last.end is not None and last.end.done is not None and last.steps[-1].action is not None
    assert last.steps[-1].action["type"] == "done"
    first = read_trajectory(folders[0])
    assert first.end is not None and first.end.truncated and first.end.failure == "step_limit"
    assert all(s.progress == 0.0 for s in first.steps)
