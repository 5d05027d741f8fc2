"""`cua.branch.fork_sync`: branching a recorded trajectory at step k from plain blocking code.
A real Chromium todo episode recorded over the shared server through a `cua.sync_api`
sandbox (the async recorder, on the connection's loop thread) keeps a snapshot at step 0;
a branch at step 1 (the recorded click performed again) is a sandbox like any other,
pixel-equal to the recorded frame, that acts apart from its source; a step past the end
and a trajectory without snapshots are refused with the typed `BranchRefused`."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from cua.actions import Click, Done, Scroll
from cua.branch import BranchRefused, SnapshottingHandle, SnapshotWriter, StepSnapshots, fork_sync
from cua.client import RemoteSandbox
from cua.episode import Episode
from cua.errors import Timeout
from cua.server.app import RunningServer
from cua.state import DomQuery
from cua.sync_api import Client, Sandbox, connect
from cua.tasks.registry import get_template
from cua.trajectory import TrajectoryWriter, read_trajectory

TASK = "todo.mark_done@1"
CHECKED = DomQuery(selector="input.toggle", prop="checked", all=True)


@pytest.fixture(scope="module")
def client(server: RunningServer) -> Iterator[Client]:
    with connect(server.url, server.token, default_timeout=120) as c:
        yield c


def _pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


async def _centre(remote: RemoteSandbox, selector: str) -> Click:
    (res,) = await remote.query([DomQuery(selector=selector, prop="bbox")])
    assert res.ok and res.value, (selector, res)
    b = res.value
    return Click(x=b["x"] + b["width"] / 2, y=b["y"] + b["height"] / 2)


async def _scroll_to(remote: RemoteSandbox, selector: str) -> Scroll:
    """The scroll that brings `selector` to the frame's middle, as an agent would."""
    return Scroll(x=640, y=360, dy=(await _centre(remote, selector)).y - 360)


@pytest.mark.slow
def test_fork_sync_at_a_step_is_pixel_equal_and_refuses_what_it_cannot_reach(client: Client, tmp_path: Path) -> None:
    instance = get_template(TASK).instantiate(2)
    todo, other = instance.params["todo"], instance.params["other"]
    source = client.create(instance.sandbox_kind, config={**instance.sandbox_config, "isolation": "shared"})
    keeper = StepSnapshots(every=2)
    folder = tmp_path / "t"
    toggle = f'tr[data-id="{other["id"]}"] input.toggle'
    try:
        # step 0 opens the list (its snapshot kept), step 1 scrolls another todo into view,
        # step 2 ticks it (a snapshot), step 3 is Done
        async def record(remote: RemoteSandbox) -> None:
            ep = Episode(SnapshottingHandle(remote, keeper), instance, writer=SnapshotWriter(folder, keeper))
            await ep.reset()
            for action in (_centre(remote, f'a.list-card[data-list="{todo["list"]}"]'), _scroll_to(remote, toggle),
                           _centre(remote, toggle)):
                result = await ep.step(await action)
                assert result.error is None, result.error
            await ep.step(Done())
            await ep.judge()
            ep.finish()

        source.run_async(record)
        traj = read_trajectory(folder)
        assert [s.snapshot is not None for s in traj.steps] == [True, False, True, False]
        at_source = source.query([CHECKED])[0].value

        with fork_sync(traj, 1, source=source) as branch:
            assert isinstance(branch.sandbox, Sandbox) and branch.sandbox.id != source.id
            assert (branch.step, branch.snapshot_step, branch.replayed) == (1, 0, 1) and branch.checked == 1
            recorded = traj.frame_bytes(traj.steps[1].observation)
            assert recorded is not None and branch.observation.screenshot is not None
            assert np.array_equal(_pixels(branch.observation.screenshot.data), _pixels(recorded))
            # the state the agent acted on at step 1: the other todo not yet ticked; acting on
            # the branch ticks it there, and the source stays as the recording left it
            before = branch.sandbox.query([CHECKED])[0].value
            assert before != at_source
            scroll = branch.sandbox.run_async(lambda remote: _scroll_to(remote, toggle))
            assert branch.sandbox.act(scroll).error is None
            tick = branch.sandbox.run_async(lambda remote: _centre(remote, toggle))
            assert branch.sandbox.act(tick).error is None
            assert branch.sandbox.query([CHECKED])[0].value == at_source
            assert source.query([CHECKED])[0].value == at_source
        assert {i.id for i in client.list()} == {source.id}  # the branch closed with its block

        with pytest.raises(BranchRefused) as past:
            fork_sync(traj, 9, source=source)
        assert past.value.details["why"] == "out_of_range"

        async def record_plain(remote: RemoteSandbox) -> None:
            plain = Episode(remote, instance, writer=TrajectoryWriter(tmp_path / "plain"))
            await plain.reset()
            await plain.step(Done())
            plain.finish()

        source.run_async(record_plain)
        with pytest.raises(BranchRefused) as none:
            fork_sync(tmp_path / "plain", 0, source=source)
        assert none.value.details["why"] == "no_snapshot"
        with pytest.raises(Timeout):  # a deadline the fork cannot meet: typed, and nothing left
            fork_sync(traj, 1, source=source, timeout=0.001)
        assert {i.id for i in client.list()} == {source.id}  # no half-made branch left behind
    finally:
        source.run_async(keeper.release)
        source.close()
