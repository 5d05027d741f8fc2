"""The one episode, on the fake kind (in process and through the shared server; the fast lane)
and on real browsers with the bundled apps (the slow lane): reset with the task's seed, its
initial reads riding on the reset (`reset_query`: one request, not two), oracle and near miss
judged from real state over both kinds, dense progress, forks of a live episode, trajectories
written and read back, infrastructure faults classified, and the fake sandbox passing the
conformance check every kind must. Eval, CuaEnv and the recorder start a task the same way
(reset seed, setup steps, initial state, first screen), the instruction may come from the
page, the app may end the episode, and dense reward never pays for an episode merely ending."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops

import cua
from cua.actions import Click, Done, Goto, Key, KeyDown, KeyUp, Type, Wait
from cua.conformance import check_sandbox
from cua.episode import Episode, EpisodeAgent, LocalSandbox, NoopAgent, OracleAgent, open_local, run_episode
from cua.episode.handle import ResetQueryHandle, SandboxHandle
from cua.errors import BadRequest, SandboxCrashed, Unsupported
from cua.observation import ObserveOptions, Size
from cua.record.live import LiveSession
from cua.rl.env import CuaEnv
from cua.sandbox import create_sandbox
from cua.server.app import RunningServer
from cua.state import A11yQuery, AppStateQuery, DomQuery, TitleQuery, UrlQuery
from cua.task import TaskInstance, TaskSetup, TaskTags, actions_oracle
from cua.tasks.registry import get_template
from cua.trajectory import TrajectoryWriter, read_trajectory, validate

#: The templates the episode contract runs, by kind.
TEMPLATES = {"fake": ("fake.set_counter@1", "fake.submit_form@1"), "browser": ("todo.mark_done@1",)}


async def centre(handle: SandboxHandle, ident: str) -> tuple[float, float]:
    """Where a widget is, read as an oracle reads it (a state query, never the screen's insides)."""
    (result,) = await handle.query([DomQuery(selector=f"#{ident}", prop="bbox")])
    assert result.ok and result.value, result
    box = result.value
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


async def click(handle: SandboxHandle, ident: str) -> Click:
    x, y = await centre(handle, ident)
    return Click(x=x, y=y)


async def app_state(handle: SandboxHandle) -> dict[str, object]:
    (result,) = await handle.query([AppStateQuery()])
    assert result.ok, result
    return result.value  # type: ignore[no-any-return]


# --- the sandbox ---

async def test_fake_sandbox_passes_the_conformance_check() -> None:
    sandbox = await create_sandbox("fake", {"screen": {"width": 500, "height": 300}}, sandbox_id="conf")
    await sandbox.reset(seed=1)
    (box,) = await sandbox.query([DomQuery(selector="#inc", prop="bbox")])  # type: ignore[attr-defined]
    x, y = box.value["x"] + 2, box.value["y"] + 2
    report = await check_sandbox(sandbox, changing_action=Click(x=x, y=y))
    assert report.ok, str(report)
    assert len(report.passed) == 6


async def test_input_changes_state_and_pixels_deterministically() -> None:
    async with open_local("fake") as a, open_local("fake") as b:
        for handle in (a, b):
            await handle.reset(seed=7)
            await handle.act(await click(handle, "name"))
            await handle.act([Type(text="Grace"), Key(keys=["ctrl", "a"]), Type(text="Ada L"), Key(keys="Backspace")])
            await handle.act([KeyDown(key="Shift"), KeyDown(key="x"), KeyUp(key="Shift")])
            await handle.act(await click(handle, "subscribe"))
            await handle.act(Key(keys="Tab"))  # focus moves on to Submit
            await handle.act(Key(keys="Enter"))
        png = ObserveOptions(format="png")
        assert (await a.observe(png)).screenshot.data == (await b.observe(png)).screenshot.data  # type: ignore[union-attr]
        state = await app_state(a)
        assert state == await app_state(b)
        assert state["name"] == "Ada X" and state["subscribe"] is True and state["focus"] == "submit"
        assert state["submissions"] == [{"name": "Ada X", "subscribe": True, "count": state["count"]}]
        obs = await a.observe(ObserveOptions(axtree=True, focused=True))
        assert obs.focused is not None and obs.focused["id"] == "submit" and obs.title == "Fake form - 1 submitted"
        assert obs.axtree is not None and {n["id"] for n in obs.axtree[0]["children"]} >= {"inc", "name", "submit"}
        (tree,) = await a.query([A11yQuery()])
        assert tree.value == obs.axtree


async def test_seeds_frames_and_bad_input() -> None:
    async with open_local("fake", {"viewport": {"width": 800, "height": 500}}) as handle:
        counts = set()
        for seed in range(6):
            await handle.reset(seed=seed)
            counts.add((await app_state(handle))["count"])
        assert len(counts) > 1  # the seed decides where the counter starts
        obs = await handle.observe(ObserveOptions(format="webp", frame=Size(width=400, height=250)))
        assert obs.screenshot is not None
        assert Image.open(io.BytesIO(obs.screenshot.data)).size == (400, 250) and obs.screen.width == 800
        with pytest.raises(BadRequest):
            await handle.reset(options={"start_url": "/"})
        (selector,) = await handle.query([DomQuery(selector="div > p")])
        assert not selector.ok and selector.error == "failed"
    with pytest.raises(BadRequest) as caught:
        await LocalSandbox.create("fake", {"no_such_field": 1})
    assert caught.value.details["field"] == "no_such_field"


async def test_a_staged_death_raises_and_announces() -> None:
    async with open_local("fake", {"die_at_step": 3}) as handle:
        died: list[str] = []
        handle.on_event(lambda event: died.append(event.event))
        await handle.reset(seed=0)
        await handle.act([Wait(seconds=0), Wait(seconds=0)])
        with pytest.raises(SandboxCrashed):
            await handle.act(Wait(seconds=0))
        assert died == ["died"] and not handle.alive
        assert handle.info.status == "crashed"


# --- episodes ---

async def test_oracle_passes_near_miss_and_noop_fail(kind: str, tmp_path: Path) -> None:
    for template in TEMPLATES[kind]:
        template_ = get_template(template)
        folder = tmp_path / template
        for seed in (0, 1):
            instance = template_.instantiate(seed)
            records = {}
            agents: dict[str, EpisodeAgent] = {"oracle": OracleAgent(), "near_miss": OracleAgent("near_miss"),
                                               "noop": NoopAgent()}
            async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
                for name, agent in agents.items():
                    writer = TrajectoryWriter(folder / f"{name}-{seed}")
                    records[name] = await run_episode(handle, instance, agent, writer=writer)
            assert records["oracle"].verdict is not None and records["oracle"].verdict.passed, records["oracle"]
            assert records["oracle"].failure is None and records["oracle"].steps >= 1
            for name in ("near_miss", "noop"):
                verdict = records[name].verdict
                assert verdict is not None and not verdict.passed and records[name].failure == "judged_wrong"
        report = validate(folder)
        assert report.ok, report
        traj = read_trajectory(folder / "oracle-0")
        assert traj.complete and traj.meta is not None and traj.meta.sandbox_kind == kind
        assert len(traj.observations()) == len(traj.steps) + 1  # one frame per step, and the final one
        assert all(traj.frame_bytes(ref) for ref in traj.observations())


async def test_progress_grows_along_the_oracle_and_a_fork_continues_the_episode() -> None:
    instance = get_template("fake.submit_form@1").instantiate(2)
    async with open_local("fake") as handle:
        episode = Episode(handle, instance)
        await episode.reset()
        progress = [await episode.progress()]
        for action in (await click(handle, "name"), Type(text=instance.params["name"])):
            progress.append((await episode.step(action, progress=True)).progress)  # type: ignore[arg-type]
        snap = await handle.snapshot()
        twin = await handle.fork(snap)
        try:
            forked = episode.fork(twin, twin.observation)
            for ep, ident in ((episode, "subscribe"), (forked, "submit")):  # the fork forgets to subscribe
                await ep.step(await click(ep.handle, ident))
            await episode.step(await click(handle, "submit"))
            await episode.step(Done())
            assert (await episode.judge(episode.done)).passed
            assert not (await forked.judge()).passed
            assert (await app_state(handle))["submissions"] != (await app_state(twin))["submissions"]
        finally:
            await twin.close()
        assert progress == sorted(progress) and progress[0] < progress[-1] < 1.0


class _Crashing:
    """An agent on a sandbox that dies under it: the episode is the infrastructure's loss."""

    name = "crashing"

    async def begin(self, instance: object, ctx: object) -> None: ...

    async def turn(self, observation: object) -> cua.episode.AgentTurn:
        return cua.episode.AgentTurn(actions=[Wait(seconds=0)])


async def test_a_sandbox_that_dies_is_an_infra_error_not_a_score(tmp_path: Path) -> None:
    instance = get_template("fake.set_counter@1").instantiate(0)
    async with open_local("fake", {"die_at_step": 2}) as handle:
        record = await run_episode(handle, instance, _Crashing(), writer=TrajectoryWriter(tmp_path / "t"))
    assert record.status == "infra_error" and record.failure == "sandbox_crashed" and record.verdict is None
    assert validate(tmp_path).ok


# --- the same episode through a real server ---

@pytest.fixture
async def remote(server: RunningServer) -> AsyncIterator[cua.client.Client]:
    async with cua.connect(server.url, server.token, default_timeout=30) as client:
        yield client


async def test_remote_and_local_episodes_agree(remote: cua.client.Client, tmp_path: Path) -> None:
    instance = get_template("fake.submit_form@1").instantiate(3)
    sandbox = await remote.create("fake")
    try:
        far = await run_episode(sandbox, instance, OracleAgent(), writer=TrajectoryWriter(tmp_path / "remote"))
    finally:
        await sandbox.close()
    async with open_local("fake") as handle:
        near = await run_episode(handle, instance, OracleAgent(), writer=TrajectoryWriter(tmp_path / "local"))
    assert far.verdict is not None and near.verdict is not None and far.verdict.passed and near.verdict.passed
    assert [a.action for a in far.actions] == [a.action for a in near.actions]
    assert far.verdict.evidence == near.verdict.evidence
    remote_frames = [read_trajectory(tmp_path / "remote").frame_bytes(r) for r in
                     read_trajectory(tmp_path / "remote").observations()]
    local_frames = [read_trajectory(tmp_path / "local").frame_bytes(r) for r in
                    read_trajectory(tmp_path / "local").observations()]
    assert remote_frames == local_frames  # the same pixels, whichever way the sandbox was driven


async def test_episodes_run_concurrently_on_one_server(remote: cua.client.Client) -> None:
    instances = [get_template("fake.set_counter@1").instantiate(seed) for seed in range(4)]

    async def one(seed: int) -> bool:
        sandbox = await remote.create("fake")
        try:
            record = await run_episode(sandbox, instances[seed], OracleAgent())
        finally:
            await sandbox.close()
        return record.verdict is not None and record.verdict.passed

    assert await asyncio.gather(*(one(seed) for seed in range(4))) == [True] * 4


# --- an episode's initial reads ride on its reset ---

#: The task whose episode `reset_query` starts, by kind.
RESET_TASKS = {"fake": "fake.submit_form@1", "browser": "todo.mark_done@1"}


class Counting:
    """A handle wrapper that counts the requests an episode makes."""

    def __init__(self, handle: Any) -> None:
        self.inner, self.calls = handle, []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name in ("act", "act_query", "query", "observe", "reset", "reset_query"):
            async def counted(*a: Any, **kw: Any) -> Any:
                self.calls.append(name)
                return await attr(*a, **kw)
            return counted
        return attr


class Plain(Counting):
    """A handle that offers no `reset_query`: the episode reads its initial state apart."""

    def __getattr__(self, name: str) -> Any:
        if name == "reset_query":
            raise AttributeError(name)
        return super().__getattr__(name)


async def _check(handle: Any, instance: TaskInstance) -> None:
    assert isinstance(handle, ResetQueryHandle)
    obs, (title, app) = await handle.reset_query([TitleQuery(), AppStateQuery()], seed=3)
    assert obs.step == 0 and title.ok and title.value == obs.title and app.ok
    assert handle.observation is obs  # the handle's latest observation, as after a reset
    (again,) = await handle.query([AppStateQuery()])
    assert again.value == app.value  # answered about the reset state

    counted = Counting(handle)
    ep = Episode(counted, instance)  # type: ignore[arg-type]
    await ep.reset()
    assert counted.calls == ["reset_query"]
    plain = Plain(handle)
    fresh = Episode(plain, instance)  # type: ignore[arg-type]
    await fresh.reset()
    assert plain.calls == ["reset", "query"]  # read in a request of their own: the same initial state
    assert ep.initial == fresh.initial and ep.initial and ep.instance.instruction == fresh.instance.instruction


async def test_reset_query_remote_and_local_and_episode_reset_in_one_request(kind: str, server: RunningServer) -> None:
    instance = get_template(RESET_TASKS[kind]).instantiate(2)
    async with cua.connect(server.url, server.token, default_timeout=120) as client:
        remote = await client.create(instance.sandbox_kind, config=instance.sandbox_config)
        try:
            await _check(remote, instance)
        finally:
            await remote.close()
    local = await LocalSandbox.create(instance.sandbox_kind, instance.sandbox_config)
    try:
        await _check(local, instance)
    finally:
        await local.close()


async def test_reset_query_on_a_kind_without_queries_is_unsupported(server: RunningServer) -> None:
    from _blank_kind import BlankSandbox  # registers the capability-less kind

    handle = await LocalSandbox.create(BlankSandbox.kind, {})
    try:
        with pytest.raises(Unsupported):
            await handle.reset_query([TitleQuery()])
    finally:
        await handle.close()
    async with cua.connect(server.url, server.token, default_timeout=60) as client:
        remote = await client.create(BlankSandbox.kind)
        with pytest.raises(Unsupported):
            await remote.reset_query([TitleQuery()])
        await remote.close()


# --- eval, CuaEnv and the recorder start a task alike (real browsers, the todo app) ---

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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
async def test_an_instruction_query_that_reads_nothing_is_a_typed_infra_error() -> None:
    instance = SetupTemplate(instruction_query=DomQuery(selector="#no-such-element")).instantiate(0)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        record = await run_episode(handle, instance, NoopAgent())
    assert record.status == "infra_error" and record.error is not None and record.error.code == "internal"
    assert "instruction query" in record.error.message


@pytest.mark.slow
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


@pytest.mark.slow
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
