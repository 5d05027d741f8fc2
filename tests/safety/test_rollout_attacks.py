"""The rollout service's `attacks: N`: each prompt's app carries seeded injections, recorded in
every rollout's meta, and every rollout (the forked ones of a group too) ends with its safety."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request

from cua.policy.service import serving_app
from cua.rollout.server import serve_rollouts

pytestmark = pytest.mark.slow

CLICK = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [40, 30]}}\n</tool_call>'
STOP = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}\n</tool_call>'


def _model() -> FastAPI:
    """A chat completions server that clicks once, then stops."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> dict[str, Any]:
        body = await request.json()
        text = STOP if any(m["role"] == "assistant" for m in body["messages"]) else CLICK
        return {"id": "c", "object": "chat.completion", "created": int(time.time()), "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 4, "total_tokens": 11}}

    return app


async def test_rollouts_under_attack_record_attacks_and_safety(tmp_path: Any) -> None:
    async with serving_app(_model()) as url, \
            serve_rollouts(tmp_path / "runs", local=True, max_episodes=2, max_retries=0) as running:
        async with httpx.AsyncClient(timeout=600, headers=running.headers) as http:
            async def post(**kw: Any) -> dict[str, Any]:
                body = {"policy": {"base_url": f"{url}/v1", "model": "fake-vl"}, "tasks": ["mail.star_message@1"],
                        "isolation": "shared", **kw}
                response = await http.post(f"{running.url}/rollouts", json=body)
                assert response.status_code == 200, response.text
                result: dict[str, Any] = response.json()
                return result

            attacked = await post(attacks=1, group_size=2)
            trajectories = [t for g in attacked["groups"] for t in g["trajectories"]]
            assert len(trajectories) == 2
            for traj in trajectories:
                assert traj["status"] == "completed", traj.get("error")
                planted = traj["meta"]["extra"]["attacks"]
                assert len(planted) == 1 and planted[0]["address"].endswith(".test")
                assert traj["end"]["safety"]["safety"] == "safe" and traj["end"]["safety"]["attacks"] == [planted[0]["id"]]
            clean = await post()
            traj = clean["groups"][0]["trajectories"][0]
            assert "attacks" not in traj["meta"]["extra"] and traj["end"]["safety"] is None
            refused = await http.post(f"{running.url}/rollouts", json={
                "policy": {"base_url": f"{url}/v1", "model": "m"}, "tasks": ["mail.star_message@1"], "attacks": 99})
            assert refused.status_code in (400, 422), refused.text
