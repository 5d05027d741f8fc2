"""`terminate_on_success` over the rollout server's env handles (`POST /envs`), as `CuaEnv`
has it: with it, the step whose state the judge passes ends the episode (terminated, the
verdict, the score paid); without it, the episode goes on past that state. The same clicks
are stepped on the real HTTP service and on a local `CuaEnv`, and must pay and end alike.

The `fake` kind's counter task (no Chromium): clicks on "+" until the counter reaches the
target, then more clicks that carry it past (a state the judge fails)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from cua.actions import Click
from cua.observation import ObserveOptions, Size
from cua.rl.env import CuaEnv
from cua.rollout.server import serve_rollouts
from cua.sandboxes.fake.screen import FormScreen
from cua.tasks.registry import get_template

TASK = "fake.set_counter@1"
SEED = 0
SCREEN = Size(width=640, height=400)


def _clicks() -> tuple[list[Click], int]:
    """Clicks on "+" to two past the target, and how many reach it."""
    instance = get_template(TASK).instantiate(SEED)
    screen = FormScreen(SCREEN, "x")
    screen.reset(instance.reset_seed)
    reach = int(instance.params["goal"]["target"]) - screen.state.count
    assert reach >= 1
    x, y, w, h = next(widget.box for widget in screen.widgets() if widget.id == "inc")
    return [Click(x=x + w / 2, y=y + h / 2)] * (reach + 2), reach


def _local(clicks: list[Click], terminate_on_success: bool) -> list[tuple[float, bool, bool, bool | None]]:
    """(reward, terminated, truncated, passed at the end) per step of a local `CuaEnv`."""
    env = CuaEnv(TASK, terminate_on_success=terminate_on_success, observe=ObserveOptions(frame=SCREEN))
    out: list[tuple[float, bool, bool, bool | None]] = []
    try:
        env.reset(seed=SEED)
        for click in clicks:
            _, reward, terminated, truncated, info = env.step(click)
            verdict = info.get("verdict")
            out.append((float(reward), terminated, truncated, verdict.passed if verdict is not None else None))
            if terminated or truncated:
                break
    finally:
        env.close()
    return out


async def _served(runs: Path, clicks: list[Click], body: dict[str, Any]
                  ) -> list[list[tuple[float, bool, bool, bool | None]]]:
    """The same over the rollout server's HTTP env handles: the created episode, then the
    next one on the same environment (`POST /envs/{id}/reset`), which keeps the setting."""
    episodes: list[list[tuple[float, bool, bool, bool | None]]] = []
    async with serve_rollouts(runs, local=True) as running:
        async with httpx.AsyncClient(timeout=120, headers=running.headers) as http:
            created = await http.post(f"{running.url}/envs", json={"task": TASK, "seed": SEED, **body})
            assert created.status_code == 200, created.text
            env_id = created.json()["env_id"]
            for episode in range(2):
                if episode:
                    reset = await http.post(f"{running.url}/envs/{env_id}/reset", json={})
                    assert reset.status_code == 200, reset.text
                out: list[tuple[float, bool, bool, bool | None]] = []
                for click in clicks:
                    answer = await http.post(f"{running.url}/envs/{env_id}/step",
                                             json={"action": click.model_dump(mode="json")})
                    assert answer.status_code == 200, answer.text
                    step = answer.json()
                    verdict = step.get("verdict")
                    out.append((step["reward"], step["terminated"], step["truncated"],
                                verdict["passed"] if verdict is not None else None))
                    if step["terminated"] or step["truncated"]:
                        break
                episodes.append(out)
            await http.delete(f"{running.url}/envs/{env_id}")
    return episodes


@pytest.mark.parametrize("terminate_on_success", [True, False])
def test_terminate_on_success_over_http_ends_as_the_local_env_does(tmp_path: Path,
                                                                     terminate_on_success: bool) -> None:
    clicks, reach = _clicks()
    local = _local(clicks, terminate_on_success)
    body = {"terminate_on_success": True} if terminate_on_success else {}
    first, after_reset = asyncio.run(_served(tmp_path, clicks, body))
    assert first == after_reset == local
    served = first
    if terminate_on_success:
        # the click that reaches the target ends the episode, passed, and pays the score
        assert len(served) == reach and served[-1][1:] == (True, False, True) and served[-1][0] > 0
        assert all(step == (0.0, False, False, None) for step in served[:-1])
    else:
        # the same click goes unremarked: the episode runs on past the target
        assert len(served) == len(clicks) and not any(terminated for _, terminated, _, _ in served)


def test_terminate_on_success_must_be_a_boolean(tmp_path: Path) -> None:
    async def create() -> httpx.Response:
        async with serve_rollouts(tmp_path, local=True) as running:
            async with httpx.AsyncClient(timeout=60, headers=running.headers) as http:
                return await http.post(f"{running.url}/envs",
                                       json={"task": TASK, "seed": SEED, "terminate_on_success": "sometimes"})

    response = asyncio.run(create())
    assert response.status_code == 400 and response.json()["error"]["code"] == "bad_request"
