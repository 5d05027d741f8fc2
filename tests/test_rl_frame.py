"""The frame a Gymnasium env sizes its observations by is the task's sandbox's own screen:
the size the task names, else its kind's default (the fake kind shows 640x400, not the
browser's 1280x720), so the agent's clicks land where its screenshots show them."""

from __future__ import annotations

from cua.actions import Click
from cua.observation import Size
from cua.rl.env import CuaEnv
from cua.sandbox import configured_screen


def test_the_env_frame_is_the_kinds_screen_when_the_task_names_none() -> None:
    assert configured_screen("fake", {}) == Size(width=640, height=400)
    assert configured_screen("fake", {"viewport": {"width": 320, "height": 200}}) == Size(width=320, height=200)
    env = CuaEnv("fake.set_counter@1")
    try:
        assert env.frame == Size(width=640, height=400)
        obs, _ = env.reset(seed=0)
        assert obs["screenshot"].shape == (400, 640, 3)
        before = env.episode.observation if env.episode else None
        assert before is not None and before.frame == env.frame
        env.step(Click(x=10, y=10))  # inside the frame: no out-of-bounds agent fault
        assert env.episode is not None and env.episode.observation.error is None
    finally:
        env.close()
