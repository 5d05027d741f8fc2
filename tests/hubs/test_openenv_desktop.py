"""cua's OpenEnv server over a real desktop sandbox (Xvfb, a window manager, xterm), with
OpenEnv's own client: a desktop template's oracle, replayed through the websocket, is paid 1,
and doing nothing 0; the observation has no URL (a desktop has none) and the screenshot."""

from __future__ import annotations

import base64

import pytest
from _openenv import oracle_actions

from cua.actions import Action, Done
from cua.hubs.openenv.client import CuaEnvClient
from cua.hubs.openenv.models import CuaAction
from cua.hubs.openenv.server import RunningOpenEnv, serve_openenv

pytestmark = pytest.mark.slow

TASK = "desktop.create_file@1"
SEED = 1


async def _play(running: RunningOpenEnv, actions: list[Action]) -> float:
    async with CuaEnvClient(running.url, token=running.token, message_timeout_s=180) as env:
        result = await env.reset(task=TASK, seed=SEED)
        assert result.observation.url is None and result.observation.instruction.startswith("Create a file")
        assert base64.b64decode(result.observation.screenshot or "")[:3] == b"\xff\xd8\xff"
        assert (await env.state()).sandbox_kind == "desktop"
        for action in actions:
            result = await env.step(CuaAction(action=action))
        assert result.done and result.reward is not None
        return float(result.reward)


async def test_a_desktop_task_pays_the_oracle_and_not_doing_nothing() -> None:
    actions = await oracle_actions(TASK, SEED)
    async with serve_openenv(local=True, max_sessions=1) as running:
        assert await _play(running, actions) == 1.0
        assert await _play(running, [Done(status="success")]) == 0.0
