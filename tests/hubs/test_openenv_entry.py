"""The OpenEnv server's two ways in: `cua openenv serve` (a real process: it prints where it
listens, answers /health, serves a session to OpenEnv's client and exits on SIGINT) and the
module-level ASGI app of `openenv.yaml` (refuses to exist without a token; its lifespan
opens the sandboxes a session needs and closes them)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cua.hubs.openenv.asgi import app_from_environment
from cua.hubs.openenv.client import CuaEnvClient
from cua.policy.service import serving_app

ROOT = Path(__file__).resolve().parents[2]
TASK = "fake.set_counter@1"


async def test_cua_openenv_serve_serves_a_session_and_exits_on_sigint() -> None:
    env = {**os.environ, "CUA_OPENENV_TOKEN": "t0ken-for-the-test"}
    with subprocess.Popen([sys.executable, "-m", "cua.cli", "openenv", "serve", "--local", "--port", "0",
                           "--task", TASK], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            match = re.search(r"(http://127\.0\.0\.1:\d+)", line)
            assert match, line
            url = match.group(1)
            assert "token required" in line and "t0ken" not in line  # a chosen token is never echoed
            async with httpx.AsyncClient(base_url=url, timeout=60) as http:
                assert (await http.get("/health")).json() == {"status": "healthy"}
            async with CuaEnvClient(url, token="t0ken-for-the-test") as client:
                result = await client.reset(seed=4)  # the server's --task
                assert result.observation.task_id == TASK
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=60) == 0


def test_the_asgi_app_never_serves_without_a_token() -> None:
    with pytest.raises(ValueError, match="CUA_OPENENV_TOKEN"):
        app_from_environment({})
    with pytest.raises(ValueError):
        app_from_environment({"CUA_OPENENV_TOKEN": "x", "CUA_OPENENV_MAX_SESSIONS": "0"})


async def test_the_asgi_app_opens_and_closes_its_sandboxes_in_its_lifespan() -> None:
    app = app_from_environment({"CUA_OPENENV_TOKEN": "tok", "CUA_OPENENV_FORMAT": "png"})
    async with serving_app(app) as url:
        async with CuaEnvClient(url, token="tok") as client:
            result = await client.reset(task=TASK, seed=1)
            assert result.observation.screenshot_format == "png"
