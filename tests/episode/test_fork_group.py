"""Group rollouts: k forks of one live episode start identical, run independently, and
the browser's fork spares never outlive the sandboxes they serve."""

from __future__ import annotations

import asyncio
import io
import json
import re

import numpy as np
import pytest
from PIL import Image

from cua.actions import Click, Done, Scroll
from cua.episode.group import fork_episode, fork_handles
from cua.episode.local import LocalSandbox
from cua.rl.env import CuaEnv
from cua.state import DomQuery
from cua.task import query_key

TASK = "todo.mark_done@1"
pytestmark = pytest.mark.slow


def _pixels(obs) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(obs.screenshot.data)).convert("RGB"))


def _centre(env: CuaEnv, selector: str) -> Click:
    (res,) = env._loop.call(env._handle.query([DomQuery(selector=selector, prop="bbox")]))
    assert res.ok and res.value, (selector, res)
    b = res.value
    return Click(x=b["x"] + b["width"] / 2, y=b["y"] + b["height"] / 2)


def _step_click(env: CuaEnv, selector: str) -> None:
    """Click an element, scrolling it into the frame first when it is below it."""
    click = _centre(env, selector)
    if click.y > env.frame.height - 20:
        env.step(Scroll(x=env.frame.width / 2, y=env.frame.height / 2, dy=click.y - env.frame.height / 2))
        click = _centre(env, selector)
    *_, info = env.step(click)
    assert info["action_error"] is None, info["action_error"]


def _portless(results: list) -> list:
    """Judge reads with loopback ports blanked: in shared isolation each sandbox's app has
    its own port, so URLs differ by it alone."""
    return [(r.ok, json.loads(re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:*", json.dumps(r.value, sort_keys=True))))
            for r in results]


def _judge_state(env: CuaEnv) -> list:
    queries = env.episode.instance.judge.queries()
    return [(r.ok, r.value) for r in env._loop.call(env._handle.query(queries))]


def test_cua_env_forks_start_identical_and_run_independently(tmp_path):
    env = CuaEnv(TASK, reward="dense", trajectory_dir=tmp_path)
    try:
        env.reset(seed=2)
        todo = env.episode.instance.params["todo"]
        _step_click(env, f'a.list-card[data-list="{todo["list"]}"]')
        parent_state = _judge_state(env)
        parent_screen = _pixels(env.episode.observation)
        forks = env.fork(3)
        assert len(forks) == 3
        for child in forks:
            assert np.array_equal(_pixels(child.episode.observation), parent_screen)
            assert _judge_state(child) == parent_state
            assert child.episode.steps == 0 and child.episode.max_steps == env.episode.max_steps - 1
            assert child.episode.initial == env.episode.initial
            assert child._handle.id != env._handle.id
        # fork 0 does the task; fork 1 gives up; the others' apps are untouched by fork 0
        _step_click(forks[0], f'tr[data-id="{todo["id"]}"] input.toggle')
        *_, terminated, _, info0 = forks[0].step(Done())
        *_, _, _, info1 = forks[1].step(Done())
        assert terminated and info0["verdict"].passed
        assert not info1["verdict"].passed
        assert _judge_state(forks[2]) == parent_state and _judge_state(env) == parent_state
        # each fork wrote its own trajectory, starting at the fork with the snapshot named
        from cua.trajectory import read_trajectory, validate

        traj = read_trajectory(forks[0].trajectory)
        assert traj.complete and traj.meta.start_snapshot and traj.meta.extra["forked_at_step"] == 1
        assert validate(forks[0].trajectory).ok
    finally:
        env.close()
    assert all(child._closed for child in forks)


async def test_fork_episode_in_process_and_spares_close_with_the_last_sandbox():
    from cua.episode.episode import Episode
    from cua.sandboxes.browser import sandbox as browser_sandbox
    from cua.tasks.registry import get_template

    instance = get_template(TASK).instantiate(1)
    config = {**instance.sandbox_config, "isolation": "shared"}
    handle = await LocalSandbox.create("browser", config)
    try:
        ep = Episode(handle, instance, producer="rl")
        await ep.reset()
        children = await fork_episode(ep, 4)
        try:
            states = await asyncio.gather(*(c.handle.query(instance.judge.queries()) for c in children))
            want = _portless(await handle.query(instance.judge.queries()))
            assert all(_portless(s) == want for s in states)
            assert all(c.initial == ep.initial for c in children)
            assert {query_key(q) for q in instance.judge.queries()} <= set(children[0].initial)
        finally:
            await asyncio.gather(*(c.handle.close() for c in children))
        # the pool learnt a group of 4 and refills in the background
        loop = asyncio.get_running_loop()
        spares = browser_sandbox._spares[loop]
        for _ in range(600):
            if spares.ready(handle.sandbox.config) >= 4:
                break
            await asyncio.sleep(0.05)
        assert spares.ready(handle.sandbox.config) == 4
        _, again = await fork_handles(handle, 2)
        assert spares.ready(handle.sandbox.config) == 2  # two spares taken
        await asyncio.gather(*(c.close() for c in again))
    finally:
        await handle.close()
    # the last sandbox closed: no spare is left running
    assert spares.ready(handle.sandbox.config) == 0
    assert browser_sandbox._live.get(asyncio.get_running_loop(), 0) == 0


async def test_fork_of_an_unknown_or_finished_episode_is_refused():
    from cua.episode.episode import Episode
    from cua.tasks.registry import get_template

    instance = get_template(TASK).instantiate(1)
    handle = await LocalSandbox.create("browser", {**instance.sandbox_config, "isolation": "shared"})
    try:
        ep = Episode(handle, instance, producer="rl")
        with pytest.raises(RuntimeError):
            ep.fork(handle, handle.observation)
        await ep.reset()
        await ep.step(Done())
        with pytest.raises(RuntimeError):
            await fork_episode(ep, 2)
        with pytest.raises(ValueError):
            await fork_handles(handle, 0)
    finally:
        await handle.close()
