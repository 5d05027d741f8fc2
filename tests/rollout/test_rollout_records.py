"""What a rollout reports and keeps on disk when it is lost, on the fake kind (sandboxes in
this process, milliseconds each) and a real HTTP model server:

- a masked group carries no score at all: `reward` and `passed` are null for every rollout
  of it, the completed ones included (a trainer that reads `reward` finds no fake 0);
- a lost rollout's `failure` is its typed error's failure class, as its error and its
  trajectory's end say (a model endpoint on a closed port is `model_unreachable`);
- an attempt lost while forking is in the trajectory: `end.json` lists every attempt the
  response counts;
- a signal meant for the process that embeds the service does not shut the service down
  (uvicorn's handler closed every websocket with 1012, service restart);
- `cua rollout schema` describes the requests the service takes and the response it gives.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import websockets
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from cua.episode.handle import SandboxHandle
from cua.episode.local import open_local
from cua.policy.service import serving_app
from cua.rollout.server import RunningRollouts, serve_rollouts
from cua.trajectory import read_trajectory, validate

TASK = "fake.set_counter@1"
STOP = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}\n</tool_call>'


class Model:
    """A chat completions server: `answer(n)` says what call n (from 0) gets, the text of a
    completion or an HTTP status to fail with; `before(n)` may act first."""

    def __init__(self, answer: Callable[[int], str | int] = lambda n: STOP,
                 before: Callable[[int], Awaitable[None]] | None = None) -> None:
        self.calls = 0
        self.app = FastAPI()

        @self.app.post("/v1/chat/completions")
        async def completions(request: Request) -> Any:
            body = await request.json()
            n = self.calls
            self.calls += 1
            if before is not None:
                await before(n)
            reply = answer(n)
            if isinstance(reply, int):
                return JSONResponse({"error": {"message": "overloaded"}}, reply)
            return {"id": f"c{n}", "object": "chat.completion", "created": int(time.time()), "model": body["model"],
                    "prompt_token_ids": [1, 2, 3],
                    "choices": [{"index": 0, "finish_reason": "stop", "token_ids": [7, 8],
                                 "logprobs": {"content": [{"token": "a", "logprob": -0.5}, {"token": "b", "logprob": 0.0}]},
                                 "message": {"role": "assistant", "content": reply}}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 2}}


def request(base_url: str, **kw: Any) -> dict[str, Any]:
    return {"policy": {"base_url": base_url, "model": "m"}, "tasks": [TASK], "frames": "none", **kw}


async def post(running: RunningRollouts, body: dict[str, Any]) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=120, headers=running.headers) as http:
        response = await http.post(f"{running.url}/rollouts", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_masked_group_has_no_score_not_even_for_its_completed_rollouts(tmp_path: Path) -> None:
    # the first call ends its rollout (a judged, completed episode); every later one fails,
    # so the other rollout of the group is lost to the model endpoint
    model = Model(answer=lambda n: STOP if n == 0 else 503)
    async with serving_app(model.app) as url, serve_rollouts(tmp_path, local=True, max_retries=0) as running:
        data = await post(running, request(f"{url}/v1", group_size=2))
    (group,) = data["groups"]
    assert group["masked"]
    by_status = {t["status"]: t for t in group["trajectories"]}
    assert set(by_status) == {"masked", "infra_error"}
    completed = by_status["masked"]
    assert read_trajectory(completed["folder"]).end.verdict is not None  # it was judged: there was a score to leak
    for traj in group["trajectories"]:
        assert traj["mask_sample"] is True
        assert traj["reward"] is None and traj["passed"] is None


async def test_an_unreachable_model_is_model_unreachable_everywhere(tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{closed_port()}/v1"
    async with serve_rollouts(tmp_path, local=True, max_retries=1) as running:
        data = await post(running, request(base))
    ((traj,),) = [g["trajectories"] for g in data["groups"]]
    assert traj["status"] == "infra_error" and traj["attempts"] == 2 and traj["reward"] is None
    assert traj["error"]["failure"] == "model_unreachable"
    assert traj["failure"] == "model_unreachable"  # was "internal", the error's code
    end = read_trajectory(traj["folder"]).end
    assert end is not None and end.failure == "model_unreachable"
    assert [a.error.failure for a in end.attempts if a.error] == ["model_unreachable"] * 2


async def test_an_attempt_lost_while_forking_is_on_record(tmp_path: Path) -> None:
    parents: list[SandboxHandle] = []

    @contextlib.asynccontextmanager
    async def opener(kind: str, config: dict[str, Any]) -> AsyncIterator[SandboxHandle]:
        async with open_local(kind, config) as handle:
            parents.append(handle)
            yield handle

    async def close_the_parent(n: int) -> None:
        if n == 0:  # while the first attempt waits for the model: the next fork has nothing to fork
            await parents[0].close()

    model = Model(answer=lambda n: 503, before=close_the_parent)
    async with serving_app(model.app) as url, \
            serve_rollouts(tmp_path, opener=opener, max_retries=1) as running:
        data = await post(running, request(f"{url}/v1"))
    ((traj,),) = [g["trajectories"] for g in data["groups"]]
    assert traj["status"] == "infra_error" and traj["attempts"] == 2
    stored = read_trajectory(traj["folder"])
    assert stored.end is not None, "the rollout left no end.json"
    assert [a.attempt for a in stored.end.attempts] == [0, 1]
    first, forked = stored.end.attempts
    assert first.error is not None and first.error.failure == "model_unreachable"
    assert forked.error is not None and forked.error.code == "sandbox_crashed" and forked.steps == 0
    assert stored.end.failure == traj["failure"] == "sandbox_crashed"
    assert validate(traj["folder"]).ok


async def test_a_signal_to_the_process_leaves_the_service_and_its_websockets_up(tmp_path: Path) -> None:
    seen: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda signum, _frame: seen.append(signum))
    try:
        async with serve_rollouts(tmp_path, local=True) as running:
            ws_url = running.url.replace("http://", "ws://") + "/ws"
            async with websockets.connect(ws_url, additional_headers=running.headers) as ws:
                await ws.send(json.dumps({"id": 1, "op": "create", "task": TASK, "seed": 1}))
                env = json.loads(await ws.recv())["result"]["env_id"]
                signal.raise_signal(signal.SIGTERM)  # e.g. a SIGTERM to the process group
                await ws.send(json.dumps({"id": 2, "op": "close", "env_id": env}))
                assert json.loads(await ws.recv()) == {"id": 2, "result": {"closed": env}}
            assert seen == [signal.SIGTERM]  # the process's own handler got it
            async with httpx.AsyncClient() as http:
                assert (await http.get(f"{running.url}/health")).status_code == 200
    finally:
        signal.signal(signal.SIGTERM, before)


@pytest.mark.parametrize("op", ["snapshot", "close"])
async def test_env_operations_take_only_what_they_name(tmp_path: Path, op: str) -> None:
    async with serve_rollouts(tmp_path, local=True) as running, \
            httpx.AsyncClient(base_url=running.url, headers=running.headers) as http:
        created = (await http.post("/envs", json={"task": TASK, "seed": 0})).json()
        env = created["env_id"]
        bad = await http.post("/envs", json={"task": TASK, "sed": 0})
        assert bad.status_code == 400 and bad.json()["error"]["fault"] == "client"
        method = "DELETE" if op == "close" else "POST"
        path = f"/envs/{env}" if op == "close" else f"/envs/{env}/{op}"
        assert (await http.request(method, path)).status_code == 200
        assert len(running.envs) == (0 if op == "close" else 1)


async def test_cua_rollout_schema_describes_what_the_service_takes_and_answers(tmp_path: Path) -> None:
    printed = subprocess.run([sys.executable, "-m", "cua.cli", "rollout", "schema"], capture_output=True, text=True,
                             timeout=120)
    assert printed.returncode == 0, printed.stderr
    schema = json.loads(printed.stdout)
    assert schema["routes"]["POST /rollouts"] == {"request": "RolloutRequest", "response": "RolloutResponse"}
    schemas = schema["schemas"]
    model = Model()
    async with serving_app(model.app) as url, serve_rollouts(tmp_path, local=True, max_retries=0) as running:
        body = request(f"{url}/v1", group_size=2, reward="dense")
        jsonschema.validate(body, schemas["RolloutRequest"])
        jsonschema.validate(await post(running, body), schemas["RolloutResponse"])
        for name, bad in (("RolloutRequest", {**body, "group_size": 0}), ("RolloutRequest", {**body, "extra": 1}),
                          ("CreateEnvRequest", {"task": TASK, "reward": "shaped"}), ("ForkEnvRequest", {"k": 65})):
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(bad, schemas[name])
            if name != "RolloutRequest":  # the service refuses what the schema refuses
                async with httpx.AsyncClient(base_url=running.url, headers=running.headers) as http:
                    path = "/envs" if name == "CreateEnvRequest" else "/envs/env-x/fork"
                    assert (await http.post(path, json=bad)).status_code == 400
