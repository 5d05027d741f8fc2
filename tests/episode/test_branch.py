"""Branching from any step (cua.branch): a real Chromium todo episode keeps a snapshot every
2 steps; a fork at a step with a snapshot, and at one between two (the recorded action
replayed), is pixel-equal to that step's recorded frame and judge-equal to the state the
agent acted on there; the task's reset plus the recorded prefix gets there too; a step
that cannot be reached is refused with a typed error saying why."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import numpy as np
import pytest
from PIL import Image

from cua.actions import Click, Done, Scroll
from cua.branch import (
    BranchRefused,
    SnapshottingHandle,
    SnapshotWriter,
    StepSnapshots,
    fork,
    parse_snapshots,
    replay_prefix,
)
from cua.episode import Episode, LocalSandbox, SandboxHandle
from cua.state import AppStateQuery, DomQuery
from cua.tasks.registry import get_template
from cua.trajectory import TrajectoryWriter, read_trajectory, validate

TASK = "todo.mark_done@1"


def _pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def _portless(results: list[Any]) -> list[Any]:
    """Judge reads with loopback ports blanked: in shared isolation each sandbox's app has
    its own port, so URLs differ by it alone."""
    return [(r.ok, json.loads(re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:*", json.dumps(r.value, sort_keys=True))))
            for r in results]


async def _centre(handle: SandboxHandle, selector: str) -> Click:
    (res,) = await handle.query([DomQuery(selector=selector, prop="bbox")])
    assert res.ok and res.value, (selector, res)
    b = res.value
    return Click(x=b["x"] + b["width"] / 2, y=b["y"] + b["height"] / 2)


def test_parse_snapshots() -> None:
    assert parse_snapshots("every") == "every" and parse_snapshots("1") == "every"
    assert parse_snapshots("none") == "none" and parse_snapshots("3") == 3
    for bad in ("0", "-2", "often"):
        with pytest.raises(ValueError):
            parse_snapshots(bad)


@pytest.mark.slow
async def test_fork_at_any_step_is_pixel_and_judge_equal(tmp_path) -> None:
    instance = get_template(TASK).instantiate(2)
    config = {**instance.sandbox_config, "isolation": "shared"}
    # the judge's own reads, and the whole app state and page they are read from
    queries = [*instance.judge.queries(), AppStateQuery(), DomQuery(selector="input.toggle", prop="checked", all=True)]
    todo, other = instance.params["todo"], instance.params["other"]
    source = await LocalSandbox.create(instance.sandbox_kind, config)
    opened: list[SandboxHandle] = [source]
    try:
        keeper = StepSnapshots(every=2)
        ep = Episode(SnapshottingHandle(source, keeper), instance, writer=SnapshotWriter(tmp_path / "t", keeper))
        await ep.reset()
        states = []  # the judge's reads of the state the agent acted on, step by step
        selectors = [f'a.list-card[data-list="{todo["list"]}"]', f'tr[data-id="{other["id"]}"] input.toggle',
                     f'tr[data-id="{todo["id"]}"] input.toggle']

        async def act(action: Click | Scroll | Done) -> None:
            states.append(_portless(await source.query(queries)))
            result = await ep.step(action)
            assert result.error is None, result.error

        for selector in selectors:
            click = await _centre(source, selector)
            if click.y > source.observation.frame.height - 20:  # below the frame: scroll it in, as an agent would
                await act(Scroll(x=640, y=360, dy=click.y - 360))
                click = await _centre(source, selector)
            await act(click)
        await act(Scroll(x=640, y=360, dy=-120))
        await act(Done())
        await ep.judge()
        ep.finish()
        traj = read_trajectory(tmp_path / "t")
        assert validate(tmp_path / "t").ok
        last = len(traj.steps) - 1  # the Done, which performs nothing and so takes no snapshot
        assert last >= 4 and len(states) == last + 1
        assert [s.snapshot is not None for s in traj.steps] == [i % 2 == 0 and i != last for i in range(last + 1)]
        assert traj.meta is not None and traj.meta.extra["snapshots"] == {"every": 2}
        assert len({json.dumps(state) for state in states}) >= 3  # the state moves from step to step

        for k, snapshot_step in ((2, 2), (3, 2), (last, last - 1 - (last - 1) % 2)):
            branch = await fork(traj, k, source=source)
            opened.append(branch.handle)
            assert (branch.snapshot_step, branch.replayed) == (snapshot_step, k - snapshot_step)
            recorded = traj.frame_bytes(traj.steps[k].observation)
            assert recorded is not None and branch.observation.screenshot is not None
            assert np.array_equal(_pixels(branch.observation.screenshot.data), _pixels(recorded)), k
            assert _portless(await branch.handle.query(queries)) == states[k], k
            await branch.close()

        # the same step from the task's reset, the recorded prefix performed again, in a fresh
        # sandbox: an episode at step 3 whose judge knows the task's start
        fresh = await LocalSandbox.create(instance.sandbox_kind, config)
        opened.append(fresh)
        again = Episode(fresh, instance)
        obs = await replay_prefix(again, traj, 3)
        assert again.steps == 3 and again.initial.keys() == ep.initial.keys()
        recorded = traj.frame_bytes(traj.steps[3].observation)
        assert recorded is not None and obs.screenshot is not None
        assert np.array_equal(_pixels(obs.screenshot.data), _pixels(recorded))
        assert _portless(await fresh.query(queries)) == states[3]

        # refused, each with its reason: past the end, no snapshot before the step, and a
        # snapshot gone with its release
        with pytest.raises(BranchRefused) as past:
            await fork(traj, 9, source=source)
        assert past.value.details["why"] == "out_of_range"
        plain = Episode(fresh, instance, writer=TrajectoryWriter(tmp_path / "plain"))
        await plain.reset()
        await plain.step(Done())
        plain.finish()
        with pytest.raises(BranchRefused) as none:
            await fork(tmp_path / "plain", 0, source=source)
        assert none.value.details["why"] == "no_snapshot"
        await keeper.release(source)
        with pytest.raises(BranchRefused) as gone:
            await fork(traj, 3, source=source)
        assert gone.value.details["why"] == "snapshot_gone"
    finally:
        for handle in opened:
            await handle.close()


@pytest.mark.slow
def test_eval_keeps_snapshots_while_its_sandbox_lives_and_releases_them(tmp_path) -> None:
    """`cua eval --snapshots 2`: every other step's line names its snapshot, and none is left
    behind once the run's sandbox has closed (in process: the browser's snapshot store is as it was)."""
    from cua.cli import main as cli
    from cua.sandboxes.browser.snapshot import STORE

    held = len(STORE)
    assert cli(["eval", TASK, "--seed-list", "1", "--policy", "oracle", "--local", "--snapshots", "2",
                "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    (folder,) = (tmp_path / "run" / "trajectories").iterdir()
    traj = read_trajectory(folder)
    assert traj.meta is not None and traj.meta.extra["snapshots"] == {"every": 2}
    acted = [s.index for s in traj.steps if s.action is not None and s.action["type"] != "done"]
    assert acted and [s.index for s in traj.steps if s.snapshot is not None] == [i for i in acted if i % 2 == 0]
    assert len(STORE) == held
    # a period that is not one is the command line's error
    with pytest.raises(SystemExit) as bad:
        cli(["eval", TASK, "--snapshots", "0", "--local", "--out", str(tmp_path / "bad")])
    assert bad.value.code == 2
