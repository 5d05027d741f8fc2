"""CuaVectorEnv: Gymnasium 1.x vector semantics over one connection to a real `cua serve`."""

from __future__ import annotations

import os
import signal

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import cua.rl  # noqa: F401  (registers the ids)
from cua.actions import Done, Scroll
from cua.rl.vector import CuaVectorEnv

pytestmark = pytest.mark.slow
TASK = "todo.mark_done@1"


def test_make_vec_next_step_autoreset_and_fork():
    envs = gym.make_vec("cua/todo.mark_done-v1", num_envs=3, vectorization_mode="vector_entry_point",
                        isolation="shared", reward="dense")
    try:
        assert isinstance(envs, CuaVectorEnv) and envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        obs, infos = envs.reset(seed=10)
        assert obs["screenshot"].shape == (3, 720, 1280, 3) and obs in envs.observation_space
        assert list(infos["seed"]) == [10, 11, 12] and infos["_seed"].all()
        scroll = Scroll(x=640, y=360, dy=120)
        # env 1 ends its episode; the others go on
        obs, rewards, terminated, truncated, infos = envs.step([scroll, Done(), scroll])
        assert list(terminated) == [False, True, False] and not truncated.any()
        assert infos["_verdict"].tolist() == [False, True, False] and not infos["verdict"][1].passed
        assert rewards.dtype == np.float64 and rewards[1] == 0.0
        # the next step resets env 1 (its action ignored): reward 0, neither flag, step 0
        obs, rewards, terminated, truncated, infos = envs.step([scroll, Done(), scroll])
        assert not terminated.any() and not truncated.any()
        assert infos["step"][1] == 0 and rewards[1] == 0.0
        obs, *_ = envs.step([scroll, scroll, scroll])  # envs 0 and 2 reset, env 1 steps
        forks = envs.fork(2)
        try:
            assert forks.num_envs == 6 and forks.observation_space["screenshot"].shape[0] == 6
            fobs = forks._call(_first(forks))
            for i in range(3):  # env i's two forks start on the same screen
                assert np.array_equal(fobs[2 * i], fobs[2 * i + 1])
            _, _, fterm, _, _ = forks.step([Done()] * 6)
            assert fterm.all()
        finally:
            forks.close()
        _, _, _, _, infos = envs.step([scroll, scroll, scroll])  # the parents go on after their forks closed
        assert infos["_step"].all()
    finally:
        envs.close()


async def _first(forks: CuaVectorEnv) -> np.ndarray:
    observations = [s.episode.observation for s in forks._slots]
    return (await forks._batch(observations))["screenshot"]


def test_a_crashed_sandbox_is_a_masked_truncation_and_is_recreated():
    envs = CuaVectorEnv(TASK, num_envs=2, isolation="container")
    try:
        envs.reset(seed=0)
        victim = envs._slots[0].handle
        pid = victim.info.details["browser_pid"]
        os.kill(pid, signal.SIGKILL)
        scroll = Scroll(x=640, y=360, dy=120)
        for _ in range(20):  # the death reaches the sandbox within a step or two
            _, rewards, terminated, truncated, infos = envs.step([scroll, scroll])
            if truncated[0]:
                break
        assert truncated[0] and not terminated[0] and rewards[0] == 0.0
        assert infos["mask_sample"][0] and infos["_mask_sample"].tolist() == [True, False]
        assert infos["infra_error"]["fault"][0] == "infra"  # a dict info is a dict of arrays
        assert not truncated[1]
        _, rewards, terminated, truncated, infos = envs.step([scroll, scroll])  # autoreset on a new sandbox
        assert envs._slots[0].handle is not victim and infos["step"][0] == 0
    finally:
        envs.close()
