"""cua's OpenEnv server over real browser sandboxes (Chromium), with OpenEnv's own client.

A real template's reset, step and state round trip: the oracle's actions, replayed through
the websocket, are paid 1 twice over (same task, seed and actions, same reward) and doing
nothing 0; the observation is the page's URL, title and a PNG screenshot. The idle reaper
closes a session's sandbox, and the Chromium processes that sandbox started are gone.
"""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

import psutil
import pytest
from _openenv import oracle_actions

from cua.actions import Action, Done
from cua.errors import BadRequest
from cua.hubs.openenv.client import CuaEnvClient
from cua.hubs.openenv.models import CuaAction
from cua.hubs.openenv.server import RunningOpenEnv, serve_openenv
from cua.observation import ObserveOptions

pytestmark = pytest.mark.slow

TASK = "todo.mark_done@1"
SEED = 2


async def _play(running: RunningOpenEnv, actions: list[Action]) -> float:
    async with CuaEnvClient(running.url, token=running.token, message_timeout_s=120) as env:
        result = await env.reset(task=TASK, seed=SEED)
        obs = result.observation
        assert obs.url is not None and obs.url.startswith("http") and obs.title
        assert obs.screenshot_format == "png" and base64.b64decode(obs.screenshot or "")[:4] == b"\x89PNG"
        assert (await env.state()).sandbox_kind == "browser"
        for action in actions:
            result = await env.step(CuaAction(action=action))
        assert result.done and result.reward is not None
        return float(result.reward)


async def test_a_browser_task_round_trip_pays_the_oracle_the_same_each_time() -> None:
    actions = await oracle_actions(TASK, SEED)
    async with serve_openenv(local=True, max_sessions=2, observe=ObserveOptions(format="png")) as running:
        first = await _play(running, actions)
        second = await _play(running, actions)
        nothing = await _play(running, [Done(status="success")])
        await _until(lambda: running.pool.in_use == 0)
    assert first == second == 1.0
    assert nothing == 0.0


def _chromium_under(pid: int) -> set[int]:
    me = psutil.Process(pid)
    return {p.pid for p in me.children(recursive=True) if "chrom" in p.name().lower()}


async def test_the_reaper_closes_an_idle_browser_session_and_its_processes() -> None:
    before = _chromium_under(psutil.Process().pid)
    async with serve_openenv(local=True, max_sessions=1, idle_timeout_s=0.5) as running:
        async with CuaEnvClient(running.url, token=running.token, message_timeout_s=120) as env:
            await env.reset(task=TASK, seed=SEED)
            started = _chromium_under(psutil.Process().pid) - before
            assert started, "the session's browser runs under this process"
            await _until(lambda: running.pool.in_use == 0, timeout=60)
            await _until(lambda: not any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
                                         for p in started), timeout=30)
            with pytest.raises(BadRequest, match="session is closed"):
                await env.reset(task=TASK, seed=SEED)


async def _until(condition: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.1)
