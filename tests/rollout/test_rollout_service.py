"""The rollout service end to end: a real HTTP model server speaking the chat completions
format with token ids and logprobs, real browser sandboxes, real crashes.

- `POST /rollouts` returns groups whose trajectories carry the model's prompt and
  completion token ids and logprobs on every step, a status, `mask_sample` and timings;
- a sandbox killed on every attempt of one rollout masks its whole group (never a 0),
  while the other group is scored; a sandbox killed once is retried and scored;
- a request further behind than the staleness bound is refused;
- environment handles over the websocket: create, step, fork, close.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from typing import Any

import httpx
import pytest
import pytest_asyncio
import websockets
from fastapi import FastAPI, Request

from cua.policy.service import serving_app
from cua.rollout.server import serve_rollouts
from cua.trajectory import read_trajectory, validate

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

TASK = "todo.mark_done@1"
CLICK = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [40, 30]}}\n</tool_call>'
STOP = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}\n</tool_call>'


class FakeVLLM:
    """Answers like vLLM with `return_token_ids`: prompt ids at the top, completion ids and
    logprobs on the choice. It clicks once, then terminates. `on_call` lets a test act
    (crash a sandbox) while the model "thinks"."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.on_call: Any = None
        self.app = FastAPI()

        @self.app.post("/v1/chat/completions")
        async def completions(request: Request) -> dict[str, Any]:
            body = await request.json()
            self.requests.append(body)
            if self.on_call is not None:
                await self.on_call()
            turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
            text = CLICK if turns == 0 else STOP
            n = len(self.requests)
            completion_ids = [1000 + n * 10 + i for i in range(4)]
            choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": text}}
            if body.get("logprobs"):
                choice["logprobs"] = {"content": [{"token": f"t{i}", "logprob": -0.5 * i, "bytes": [],
                                                   "top_logprobs": []} for i in range(4)]}
            if body.get("return_token_ids"):
                choice["token_ids"] = completion_ids
            data = {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                    "model": body["model"], "choices": [choice],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 4, "total_tokens": 11}}
            if body.get("return_token_ids"):
                data["prompt_token_ids"] = [1, 2, 3, 4, 5, 6, 7]
            return data


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def model():
    fake = FakeVLLM()
    async with serving_app(fake.app) as url:
        yield fake, f"{url}/v1"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def rollouts(tmp_path_factory):
    async with serve_rollouts(tmp_path_factory.mktemp("runs"), local=True, max_episodes=4, max_retries=1,
                              max_staleness=1) as running:
        yield running


def _request(base: str, **kw: Any) -> dict[str, Any]:
    return {"policy": {"base_url": base, "model": "fake-vl", "temperature": 1.0}, "tasks": [TASK],
            **kw}


async def _post(running: Any, path: str, body: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=600, headers=running.headers) as http:
        return await http.post(f"{running.url}{path}", json=body)


async def test_groups_carry_tokens_logprobs_timings_and_identical_starts(model, rollouts):
    fake, base = model
    response = await _post(rollouts, "/rollouts", _request(base, n=2, group_size=2, policy_version=3,
                                                              isolation="shared", reward="dense", frames="all"))
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["policy_version"] == 3 and len(data["groups"]) == 2
    for group in data["groups"]:
        assert not group["masked"] and len(group["trajectories"]) == 2
        for traj in group["trajectories"]:
            assert traj["status"] == "completed" and traj["mask_sample"] is False
            assert traj["reward"] == 0.0 and traj["passed"] is False  # a click in the corner does not do the task
            assert traj["meta"]["extra"]["policy_version"] == 3 and traj["meta"]["start_snapshot"]
            assert traj["timings_ms"]["env"] > 0 and traj["timings_ms"]["model"] > 0
            steps = traj["steps"]
            assert [s["action"]["type"] for s in steps] == ["click", "done"]
            for step in steps:
                tokens = step["tokens"]
                assert tokens["prompt_ids"] == [1, 2, 3, 4, 5, 6, 7]
                assert len(tokens["completion_ids"]) == 4 and tokens["logprobs"] == [0.0, -0.5, -1.0, -1.5]
            assert steps[0]["progress"] == 0.0
            assert validate(traj["folder"]).ok
        # the group's rollouts started from one state: the same first frame
        frames = [read_trajectory(t["folder"]) for t in group["trajectories"]]
        first = [f.frame_bytes(f.steps[0].observation) for f in frames]
        assert first[0] is not None and first[0] == first[1]
    # the proxy asked the model for what training needs, whatever the agent asked
    assert all(r["logprobs"] is True and r["return_token_ids"] is True for r in fake.requests)


async def _crash_when(rollouts, group_suffix: str, *, times: int | None) -> Any:
    """An `on_call` that kills the Chromium of a live rollout of the named group."""
    killed: list[int] = []

    async def crash() -> None:
        if times is not None and len(killed) >= times:
            return
        for live in list(rollouts.service.live.values()):
            if live.group_id.endswith(group_suffix) and live.handle is not None:
                pid = live.handle.info.details.get("browser_pid")
                if pid and pid not in killed:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    await asyncio.sleep(0.2)  # the browser's death reaches the sandbox
                    return

    return crash, killed


async def test_a_crash_on_every_attempt_masks_its_group_and_the_other_group_is_scored(model, rollouts):
    fake, base = model
    crash, killed = await _crash_when(rollouts, "__g0", times=None)
    fake.on_call = crash
    try:
        response = await _post(rollouts, "/rollouts", _request(base, n=2, group_size=2, seed_start=5,
                                                                  isolation="container", policy_version=3))
    finally:
        fake.on_call = None
    assert response.status_code == 200, response.text
    g0, g1 = response.json()["groups"]
    assert killed, "no sandbox was crashed"
    assert g0["masked"] and all(t["mask_sample"] for t in g0["trajectories"])
    # no score for any rollout of a masked group, the completed ones included: never a fake 0
    assert all(t["reward"] is None and t["passed"] is None for t in g0["trajectories"])
    lost = [t for t in g0["trajectories"] if t["status"] == "infra_error"]
    assert lost and all(t["attempts"] == 2 and t["error"]["fault"] == "infra" for t in lost)
    assert {t["status"] for t in g0["trajectories"]} <= {"infra_error", "masked"}
    traj = read_trajectory(lost[0]["folder"])
    assert traj.complete and len(traj.end.attempts) == 2 and traj.end.status == "infra_error"
    assert not g1["masked"] and all(t["status"] == "completed" and t["reward"] == 0.0 for t in g1["trajectories"])


async def test_a_single_crash_is_retried_and_scored(model, rollouts):
    fake, base = model
    crash, killed = await _crash_when(rollouts, "__g0", times=1)
    fake.on_call = crash
    try:
        response = await _post(rollouts, "/rollouts", _request(base, n=1, group_size=1, seed_start=9,
                                                                  isolation="container", policy_version=3))
    finally:
        fake.on_call = None
    (group,) = response.json()["groups"]
    (traj,) = group["trajectories"]
    assert len(killed) == 1
    assert not group["masked"] and traj["status"] == "completed" and traj["attempts"] == 2
    assert traj["mask_sample"] is False and traj["reward"] == 0.0
    assert len(read_trajectory(traj["folder"]).end.attempts) == 2


async def test_requests_too_far_behind_are_refused(model, rollouts):
    _, base = model
    assert (await _post(rollouts, "/policy_version", {"version": 7})).json()["policy_version"] == 7
    stale = await _post(rollouts, "/rollouts", _request(base, policy_version=5))
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "bad_request"
    bad = await _post(rollouts, "/rollouts", {"tasks": [TASK]})
    assert bad.status_code == 400 and bad.json()["error"]["fault"] == "client"
    unknown = await _post(rollouts, "/rollouts", _request(base, policy_version=7, tasks=["todo.nope@1"]))
    assert unknown.status_code == 400


async def test_environment_handles_over_the_websocket(rollouts):
    ws_url = rollouts.url.replace("http://", "ws://") + "/ws"
    async with websockets.connect(ws_url, max_size=2**26, additional_headers=rollouts.headers) as ws:
        async def call(rid: int, op: str, **args: Any) -> dict[str, Any]:
            await ws.send(json.dumps({"id": rid, "op": op, **args}))
            reply = json.loads(await ws.recv())
            assert reply["id"] == rid
            return reply

        created = (await call(1, "create", task=TASK, seed=2, reward="dense", isolation="shared"))["result"]
        env = created["env_id"]
        assert created["observation"]["screenshot"]["format"] == "jpeg" and created["instruction"]
        stepped = (await call(2, "step", env_id=env, action={"type": "scroll", "x": 600, "y": 300, "dy": 200}))
        assert stepped["result"]["reward"] == 0.0 and stepped["result"]["terminated"] is False
        forked = (await call(3, "fork", env_id=env, k=2))["result"]["envs"]
        assert len(forked) == 2
        assert forked[0]["observation"]["screenshot"]["data"] == forked[1]["observation"]["screenshot"]["data"]
        done = (await call(4, "step", env_id=forked[0]["env_id"], action={"type": "done"}))["result"]
        assert done["terminated"] and done["verdict"]["passed"] is False
        error = await call(5, "step", env_id="env-nope", action={"type": "done"})
        assert error["error"]["code"] == "unknown_sandbox"
        for rid, e in enumerate([env, *(f["env_id"] for f in forked)], start=6):
            assert "result" in await call(rid, "close", env_id=e)
