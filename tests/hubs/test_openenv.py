"""cua as an OpenEnv environment, over a real server on loopback, with OpenEnv's own client.

The fake kind's tasks (in process, milliseconds) carry the spec's details: the routes
answer as the spec says (and OpenEnv's own runtime validator passes), a reset, step and
state round trip pays the oracle 1 and doing nothing 0, the same task, seed and actions
pay the same, a wrong action or reset parameter is a typed error after which the session
goes on, the declared session limit is a typed capacity error (for HTTP resets too), two
sessions never see each other's episode, and an idle session's sandbox is closed by the
reaper and the session then refuses to go on.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
import websockets
from _openenv import oracle_actions
from openenv.cli._validation import validate_running_environment

from cua.actions import Click, Done
from cua.errors import BadRequest, Capacity
from cua.hubs.openenv.client import CuaEnvClient
from cua.hubs.openenv.models import CuaAction
from cua.hubs.openenv.server import RunningOpenEnv, serve_openenv

TASK = "fake.set_counter@1"
SEED = 3


@pytest_asyncio.fixture
async def server() -> AsyncIterator[RunningOpenEnv]:
    async with serve_openenv(local=True, max_sessions=2, idle_timeout_s=60, slot_wait_s=0.5) as running:
        yield running


def client(running: RunningOpenEnv) -> CuaEnvClient:
    return CuaEnvClient(running.url, token=running.token)


async def _play(running: RunningOpenEnv, actions: list[Any], *, seed: int = SEED) -> float:
    """Reset to the task and play `actions` through OpenEnv's client; the reward of the last step."""
    async with client(running) as env:
        result = await env.reset(task=TASK, seed=seed)
        assert not result.done
        for action in actions:
            result = await env.step(CuaAction(action=action))
        assert result.done and result.reward is not None
        return float(result.reward)


async def test_routes_answer_as_the_spec_says_and_openenvs_validator_passes(server: RunningOpenEnv) -> None:
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        assert (await http.get("/health")).json() == {"status": "healthy"}  # open, as the kit's /health is
        assert (await http.get("/schema")).status_code == 401  # every other route needs the token
        schema = (await http.get("/schema", headers=server.headers)).json()
        assert set(schema) == {"action", "observation", "state"}
        assert "screenshot" in schema["observation"]["properties"]
        assert {"click", "type", "done"} <= set(json.dumps(schema["action"]).replace('"', " ").split())
        meta = (await http.get("/metadata", headers=server.headers)).json()
        assert meta["name"] == "cua"

        reset = await http.post("/reset", json={"task": TASK, "seed": SEED}, headers=server.headers)
        assert reset.status_code == 200, reset.text
        body = reset.json()
        assert body["done"] is False and body["observation"]["instruction"].startswith("Set the counter to")
        assert base64.b64decode(body["observation"]["screenshot"])[:3] == b"\xff\xd8\xff"  # a JPEG, not a list
        # HTTP is stateless in OpenEnv: a step outside a session is a typed client error, not a 500
        step = await http.post("/step", json={"action": {"action": {"type": "wait"}}}, headers=server.headers)
        assert step.status_code == 400 and step.json()["error"]["code"] == "bad_request"
        bad = await http.post("/reset", json={"task": "no_such_suite.x@1"}, headers=server.headers)
        assert bad.status_code == 400 and bad.json()["error"]["type"] == "BadRequest"
        bad_action = await http.post("/step", json={"action": {"action": {"type": "click", "x": "left"}}},
                                     headers=server.headers)
        assert bad_action.status_code == 422
    await _until(lambda: server.pool.in_use == 0)  # the HTTP reset's sandbox was closed after it answered

    async with serve_openenv(local=True, no_auth=True) as open_server:  # the validator sends no token
        report = await asyncio.to_thread(validate_running_environment, open_server.url)
    assert report["passed"], [c for c in report["criteria"] if not c["passed"]]
    assert report["mode"] == "simulation"


async def test_oracle_is_paid_and_doing_nothing_is_not_deterministically(server: RunningOpenEnv) -> None:
    actions = await oracle_actions(TASK, SEED)
    assert len(actions) > 2
    first = await _play(server, actions)
    second = await _play(server, actions)
    assert first == second == 1.0
    assert await _play(server, [Done(status="success")]) == 0.0
    await _until(lambda: server.pool.in_use == 0)  # each session's sandbox is closed once its client left


async def test_state_round_trip_and_a_wrong_action_leaves_the_session_alive(server: RunningOpenEnv) -> None:
    async with client(server) as env:
        result = await env.reset(task=TASK, seed=SEED)
        state = await env.state()
        assert (state.task_id, state.seed, state.step_count, state.over) == (TASK, SEED, 0, False)
        assert state.instruction == result.observation.instruction
        # a malformed action is refused by validation, before the sandbox
        with pytest.raises(BadRequest):
            await env._send_and_receive({"type": "step", "data": {"action": {"type": "click", "x": "left"}}})
        with pytest.raises(BadRequest):
            await env.reset(task=TASK, seed=-1)
        with pytest.raises(BadRequest):  # an environment's own error, rebuilt from its code
            await env.reset(task="no_such_suite.x@1")
        with pytest.raises(BadRequest):
            await env.reset(task=TASK, sede=1)
        step = await env.step(CuaAction(action=Click(x=5, y=5)))  # the session goes on
        assert step.observation.step == 1 and not step.done
        assert (await env.state()).step_count == 1
        done = await env.step(CuaAction(action=Done(status="success")))
        assert done.done and done.observation.verdict is not None
        with pytest.raises(BadRequest, match="reset first"):
            await env.step(CuaAction(action=Click(x=5, y=5)))


async def test_past_the_declared_sessions_a_typed_capacity_error(server: RunningOpenEnv) -> None:
    async with client(server) as a, client(server) as b:
        await a.reset(task=TASK, seed=1)
        await b.reset(task=TASK, seed=2)
        with pytest.raises(Capacity):
            async with client(server) as c:
                await c.reset(task=TASK, seed=3)
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:  # the HTTP route counts sandboxes too
            busy = await http.post("/reset", json={"task": TASK}, headers=server.headers)
        assert busy.status_code == 503 and busy.json()["error"]["code"] == "capacity"
        assert server.pool.in_use == 2
    await _until(lambda: server.pool.in_use == 0)
    async with client(server) as c:  # a slot freed is a session again
        assert not (await c.reset(task=TASK, seed=3)).done


async def test_two_sessions_never_see_each_others_episode(server: RunningOpenEnv) -> None:
    async with client(server) as a, client(server) as b:
        ra = await a.reset(task=TASK, seed=1)
        rb = await b.reset(task="fake.submit_form@1", seed=2)
        assert ra.observation.instruction != rb.observation.instruction
        for _ in range(3):
            await a.step(CuaAction(action=Click(x=5, y=5)))
        sa, sb = await a.state(), await b.state()
        assert (sa.task_id, sa.step_count) == (TASK, 3)
        assert (sb.task_id, sb.step_count) == ("fake.submit_form@1", 0)
        ended = await a.step(CuaAction(action=Done(status="success")))
        assert ended.done and not (await b.state()).over


async def test_the_reaper_closes_an_idle_sessions_sandbox() -> None:
    async with serve_openenv(local=True, max_sessions=1, idle_timeout_s=0.5) as running:
        async with client(running) as env:
            await env.reset(task=TASK, seed=SEED)
            assert running.pool.in_use == 1
            await _until(lambda: running.pool.in_use == 0, timeout=30)  # the reaper runs every 5 s at most
            with pytest.raises(BadRequest, match="session is closed"):
                await env.reset(task=TASK, seed=SEED)
        async with client(running) as again:  # its slot is free for a new session
            assert not (await again.reset(task=TASK, seed=SEED)).done


async def test_a_wrong_token_is_refused_and_the_server_closes_every_sandbox_at_shutdown() -> None:
    async with serve_openenv(local=True, max_sessions=2) as running:
        with pytest.raises(websockets.InvalidStatus):
            async with websockets.connect(running.url.replace("http", "ws") + "/ws?token=wrong"):
                pass
        env = client(running)
        await env.connect()
        await env.reset(task=TASK, seed=SEED)
        pool = running.pool
        assert pool.in_use == 1
    assert pool.in_use == 0 and not pool.live
    await env.disconnect()


async def test_websockets_are_not_deflated_though_openenvs_client_offers_it(server: RunningOpenEnv) -> None:
    """Deflating a step's base64 screenshot (already JPEG or PNG) cost more than the rest of
    OpenEnv's protocol (bench/openenv_step.py); `cua serve` does not deflate either."""
    url = server.url.replace("http", "ws") + f"/ws?token={server.token}"
    async with websockets.connect(url) as ws:  # as OpenEnv's EnvClient connects: offering permessage-deflate
        assert "permessage-deflate" in (ws.request.headers.get("Sec-WebSocket-Extensions") or "")
        assert ws.response.headers.get("Sec-WebSocket-Extensions") is None
        await ws.send(json.dumps({"type": "reset", "data": {"task": TASK, "seed": SEED}}))
        reply = json.loads(await ws.recv())
        assert reply["type"] == "observation" and reply["data"]["observation"]["screenshot"]


async def _until(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)
