"""The frame a Gymnasium env sizes its observations by is the task's sandbox's screen: the
fake suite's 640x400, not the browser's 1280x720, so the agent's clicks land where its
screenshots show them."""

from __future__ import annotations

from cua.actions import Click
from cua.observation import Size
from cua.rl.env import CuaEnv


def test_the_env_frame_is_the_tasks_screen() -> None:
    env = CuaEnv("fake.set_counter@1")
    try:
        assert env.frame == Size(width=640, height=400)
        obs, _ = env.reset(seed=0)
        assert obs["screenshot"].shape == (400, 640, 3)
        assert env.episode is not None and env.episode.observation.frame == env.frame
        env.step(Click(x=10, y=10))
        assert env.episode.observation.error is None
    finally:
        env.close()
