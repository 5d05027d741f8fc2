"""The episode layer on the fake kind, in process and through a real server: reset with the
task's seed, oracle and near miss judged from real state, dense progress, forks of a live
episode, trajectories written and read back, infrastructure faults classified; and the
fake sandbox itself passes the conformance check every kind must."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PIL import Image

import cua
from cua.actions import Click, Done, Key, KeyDown, KeyUp, Type, Wait
from cua.conformance import check_sandbox
from cua.episode import Episode, EpisodeAgent, LocalSandbox, NoopAgent, OracleAgent, open_local, run_episode
from cua.episode.handle import SandboxHandle
from cua.errors import BadRequest, SandboxCrashed
from cua.observation import ObserveOptions, Size
from cua.sandbox import create_sandbox
from cua.server.app import serve_in_background
from cua.state import A11yQuery, AppStateQuery, DomQuery
from cua.tasks.registry import get_template
from cua.trajectory import TrajectoryWriter, read_trajectory, validate


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

@pytest.mark.parametrize("template", ["fake.set_counter@1", "fake.submit_form@1"])
async def test_oracle_passes_near_miss_and_noop_fail(template: str, tmp_path: Path) -> None:
    template_ = get_template(template)
    async with open_local("fake") as handle:
        for seed in (0, 1):
            instance = template_.instantiate(seed)
            records = {}
            agents: dict[str, EpisodeAgent] = {"oracle": OracleAgent(), "near_miss": OracleAgent("near_miss"),
                                               "noop": NoopAgent()}
            for name, agent in agents.items():
                writer = TrajectoryWriter(tmp_path / f"{name}-{seed}")
                records[name] = await run_episode(handle, instance, agent, writer=writer)
            assert records["oracle"].verdict is not None and records["oracle"].verdict.passed, records["oracle"]
            assert records["oracle"].failure is None and records["oracle"].steps >= 1
            for name in ("near_miss", "noop"):
                verdict = records[name].verdict
                assert verdict is not None and not verdict.passed and records[name].failure == "judged_wrong"
    report = validate(tmp_path)
    assert report.ok, report
    traj = read_trajectory(tmp_path / "oracle-0")
    assert traj.complete and traj.meta is not None and traj.meta.sandbox_kind == "fake"
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
async def remote() -> AsyncIterator[cua.client.Client]:
    async with serve_in_background(max_sandboxes=4) as running, \
            cua.connect(running.url, running.token, default_timeout=30) as client:
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
