"""The environment operations answer typed models (`cua.rollout.models`), and the wire JSON is
the one docs/rollout.md describes and the service sent when they were dicts: the same keys,
in the same order, with the same values, over HTTP and over the websocket; every answer
validates against its route's schema in `cua rollout schema`."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import websockets

from cua.rollout.models import json_schema
from cua.rollout.server import serve_rollouts

TASK = "fake.set_counter@1"
#: A dense step's answer as the service sent it before the models (its screenshot's bytes
#: aside): the state, then reward, terminated, truncated and progress.
STEP_BEFORE = (
    '{"observation":{"url":null,"title":"Fake form - 0 submitted","frame":{"width":640,"height":400},'
    '"screenshot":{"format":"jpeg","width":640,"height":400,"data":"B64"},"error":null,"step":1},'
    '"instruction":"Set the counter to 10.","task_id":"fake.set_counter@1","seed":0,"step":1,"over":false,'
    '"reward":0.0,"terminated":false,"truncated":false,"progress":0.3333333333333333}')
STATE_KEYS = ["observation", "instruction", "task_id", "seed", "step", "over"]


def _bytes_aside(text: str) -> str:
    return re.sub(r'"data":"[^"]*"', '"data":"B64"', text)


def _valid(answer: dict[str, Any], route: str, name: str | None = None) -> None:
    schema = json_schema()
    model = name or schema["routes"][route]["response"]
    jsonschema.validate(answer, schema["schemas"][model])


async def test_env_answers_keep_their_wire_json(tmp_path: Path) -> None:
    async with serve_rollouts(tmp_path, local=True) as running, \
            httpx.AsyncClient(base_url=running.url, headers=running.headers, timeout=60) as http:
        created = (await http.post("/envs", json={"task": TASK, "seed": 0, "reward": "dense"})).json()
        assert list(created) == ["env_id", *STATE_KEYS]
        _valid(created, "POST /envs")
        env = created["env_id"]
        shot = created["observation"]["screenshot"]
        assert base64.b64decode(shot["data"])[:2] == b"\xff\xd8"  # a JPEG, as base64

        stepped = await http.post(f"/envs/{env}/step", json={"action": {"type": "click", "x": 5, "y": 5}})
        assert _bytes_aside(stepped.text) == STEP_BEFORE
        _valid(stepped.json(), "POST /envs/{env_id}/step")

        wasted = (await http.post(f"/envs/{env}/step", json={"action": None})).json()
        assert list(wasted) == [*STATE_KEYS, "reward", "terminated", "truncated", "progress"]

        snapshot = (await http.post(f"/envs/{env}/snapshot")).json()
        assert list(snapshot) == ["snapshot"] and isinstance(snapshot["snapshot"], str)
        forked = (await http.post(f"/envs/{env}/fork", json={"k": 1})).json()
        assert list(forked) == ["envs"] and [list(e) for e in forked["envs"]] == [["env_id", *STATE_KEYS]]
        _valid(forked, "POST /envs/{env_id}/fork")

        ended = (await http.post(f"/envs/{env}/step", json={"action": {"type": "done", "status": "success"}})).json()
        assert list(ended) == [*STATE_KEYS, "reward", "terminated", "truncated", "verdict"]  # no progress key
        assert ended["terminated"] and ended["over"] and ended["verdict"]["passed"] is False
        _valid(ended, "POST /envs/{env_id}/step", "EnvEnded")

        reset = (await http.post(f"/envs/{env}/reset", json={"seed": 1})).json()
        assert list(reset) == STATE_KEYS and reset["seed"] == 1 and reset["step"] == 0
        _valid(reset, "POST /envs/{env_id}/reset")

        ws_url = running.url.replace("http://", "ws://") + "/ws"
        async with websockets.connect(ws_url, additional_headers=running.headers, max_size=None) as ws:
            await ws.send(json.dumps({"id": 1, "op": "step", "env_id": env,
                                      "action": {"type": "click", "x": 5, "y": 5}}))
            over_ws = json.loads(await ws.recv())
            await ws.send(json.dumps({"id": 2, "op": "policy_version", "version": 3}))
            assert json.loads(await ws.recv()) == {"id": 2, "result": {"policy_version": 3}}
        by_http = (await http.post(f"/envs/{forked['envs'][0]['env_id']}/step",
                                   json={"action": {"type": "click", "x": 5, "y": 5}})).json()
        assert list(over_ws["result"]) == list(by_http)  # one answer, either way

        closed = (await http.delete(f"/envs/{env}")).json()
        assert closed == {"closed": env}
        _valid(closed, "DELETE /envs/{env_id}")


async def test_a_reset_to_a_snapshot_continues_the_episode_it_was_taken_in(tmp_path: Path) -> None:
    """Was a 500 (the episode it was taken in is finished by the reset itself: "fork it before
    it ends"), whether that episode had ended or not."""
    async with serve_rollouts(tmp_path, local=True) as running, \
            httpx.AsyncClient(base_url=running.url, headers=running.headers, timeout=60) as http:
        env = (await http.post("/envs", json={"task": TASK, "seed": 0, "reward": "dense"})).json()["env_id"]
        click = {"action": {"type": "click", "x": 448, "y": 86}}  # the fake form's "+": the counter goes up
        first = (await http.post(f"/envs/{env}/step", json=click)).json()
        snap = (await http.post(f"/envs/{env}/snapshot")).json()["snapshot"]
        later = (await http.post(f"/envs/{env}/step", json=click)).json()
        shot = first["observation"]["screenshot"]["data"]
        assert later["observation"]["screenshot"]["data"] != shot
        for _ in range(2):  # from a live episode, then from one that ended
            restored = await http.post(f"/envs/{env}/reset", json={"snapshot": snap})
            assert restored.status_code == 200, restored.text
            state = restored.json()
            assert state["over"] is False and state["step"] == 0  # a fork counts its steps from 0
            assert state["observation"]["screenshot"]["data"] == shot  # the counter as it was
            again = (await http.post(f"/envs/{env}/step", json=click)).json()
            assert again["observation"]["screenshot"]["data"] == later["observation"]["screenshot"]["data"]
            assert again["progress"] == later["progress"]
            ended = (await http.post(f"/envs/{env}/step", json={"action": {"type": "done", "status": "success"}}))
            assert ended.json()["over"] is True
        refused = await http.post(f"/envs/{env}/snapshot")  # nothing left to continue
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "bad_request"
