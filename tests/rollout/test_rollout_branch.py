"""Rollouts that branch from a recorded trajectory (issue 35, item 1): a request with
`from_step` returns a group started at that step of the parent (the state the agent acted
on there, pixel-equal to its recorded frame), whose records name the parent trajectory and
step; `from_step: "every"` gives a group at each step (a tree); a step past the end, or a
folder outside the runs folder, is the request's fault. Real browser sandboxes, a real
HTTP model server."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
import pytest_asyncio
from fastapi import FastAPI, Request

from cua.policy.service import serving_app
from cua.rollout.server import serve_rollouts
from cua.trajectory import read_trajectory, validate

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

TASK = "todo.mark_done@1"
CLICK = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [40, 30]}}\n</tool_call>'
STOP = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}\n</tool_call>'


def _model_app() -> FastAPI:
    """A chat completions server that clicks once, then terminates."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> dict[str, Any]:
        body = await request.json()
        turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()), "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": CLICK if turns == 0 else STOP}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 4, "total_tokens": 11}}

    return app


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def model():
    async with serving_app(_model_app()) as url:
        yield f"{url}/v1"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def rollouts(tmp_path_factory):
    async with serve_rollouts(tmp_path_factory.mktemp("runs"), local=True, max_episodes=4, max_retries=1) as running:
        yield running


async def _post(running: Any, body: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=600, headers=running.headers) as http:
        return await http.post(f"{running.url}/rollouts", json=body)


def _policy(base: str) -> dict[str, Any]:
    return {"base_url": base, "model": "fake-vl", "temperature": 1.0}


async def test_a_group_starts_at_the_step_of_its_parent(model, rollouts):
    first = await _post(rollouts, {"policy": _policy(model), "tasks": [TASK], "isolation": "shared", "frames": "all"})
    assert first.status_code == 200, first.text
    (parent_record,) = first.json()["groups"][0]["trajectories"]
    parent = read_trajectory(parent_record["folder"])
    assert [s.action["type"] for s in parent.steps if s.action] == ["click", "done"]
    assert parent.meta is not None
    where = parent_record["folder"]

    response = await _post(rollouts, {"policy": _policy(model), "from_trajectory": where, "from_step": 1,
                                      "group_size": 2, "isolation": "shared", "frames": "all"})
    assert response.status_code == 200, response.text
    (group,) = response.json()["groups"]
    assert (group["parent"], group["parent_step"], group["masked"]) == (parent.meta.id, 1, False)
    recorded = parent.frame_bytes(parent.steps[1].observation)
    assert recorded is not None
    for record in group["trajectories"]:
        assert (record["parent"], record["parent_step"], record["status"]) == (parent.meta.id, 1, "completed")
        child = read_trajectory(record["folder"])
        assert validate(record["folder"]).ok and child.meta is not None
        assert child.meta.extra["branch"] == {"of": parent.meta.id, "step": 1, "source": str(parent.folder)}
        assert child.meta.extra["forked_at_step"] == 1
        # it starts where the parent stood at step 1: the same screen, pixel for pixel
        assert child.frame_bytes(child.steps[0].observation) == recorded
        assert [s.action["type"] for s in child.steps if s.action] == ["click", "done"]

    tree = await _post(rollouts, {"policy": _policy(model), "from_trajectory": where, "from_step": "every",
                                  "isolation": "shared"})
    assert tree.status_code == 200, tree.text
    assert [(g["parent"], g["parent_step"]) for g in tree.json()["groups"]] == [(parent.meta.id, 0), (parent.meta.id, 1)]

    for body, why in (({"from_trajectory": where, "from_step": 7}, "out_of_range"),
                      ({"from_trajectory": "/etc", "from_step": 0}, None),
                      ({"from_trajectory": where}, None)):
        refused = await _post(rollouts, {"policy": _policy(model), **body})
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert error["fault"] == "client" and error["details"].get("why") == why, error


async def test_a_branch_at_a_kept_snapshot_shares_it(model, rollouts):
    """`snapshots: "every"` keeps each rollout's sandbox with its snapshots; a group started
    at a step with one forks off it directly: the forks' start snapshot is the parent's ref."""
    first = await _post(rollouts, {"policy": _policy(model), "tasks": [TASK], "isolation": "shared", "frames": "all",
                                   "snapshots": "every", "seed_start": 1})
    assert first.status_code == 200, first.text
    (record,) = first.json()["groups"][0]["trajectories"]
    parent = read_trajectory(record["folder"])
    assert parent.meta is not None and parent.steps[0].snapshot is not None  # the click's; the done takes none
    assert rollouts.service.sources.get(parent.meta.id) is not None

    response = await _post(rollouts, {"policy": _policy(model), "from_trajectory": record["folder"], "from_step": 0,
                                      "group_size": 2, "isolation": "shared", "frames": "all"})
    assert response.status_code == 200, response.text
    (group,) = response.json()["groups"]
    assert (group["parent"], group["parent_step"], group["masked"]) == (parent.meta.id, 0, False)
    for child_record in group["trajectories"]:
        child = read_trajectory(child_record["folder"])
        assert child.meta is not None and child_record["status"] == "completed"
        assert child.meta.start_snapshot is not None
        assert child.meta.start_snapshot["id"] == parent.steps[0].snapshot["id"]  # shared, not copied
        assert child.frame_bytes(child.steps[0].observation) == parent.frame_bytes(parent.steps[0].observation)

    # its branches done, the source goes, and its snapshots with it: a branch now replays from the reset
    await rollouts.service.sources.close(parent.meta.id)
    assert rollouts.service.sources.get(parent.meta.id) is None
    again = await _post(rollouts, {"policy": _policy(model), "from_trajectory": record["folder"], "from_step": 0,
                                   "isolation": "shared"})
    assert again.status_code == 200, again.text
    (replayed,) = again.json()["groups"][0]["trajectories"]
    assert replayed["meta"]["start_snapshot"]["id"] != parent.steps[0].snapshot["id"]
