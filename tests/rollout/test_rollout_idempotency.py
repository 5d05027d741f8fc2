"""Keyed rollout requests (`Idempotency-Key`, `cua.rollout.ledger`): a trainer that asks
again after its connection broke joins the running request, or gets its answer, and the
rollouts run once; the same key with another body is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from _model_server import DONE, ModelServer
from _rollout_common import held_model, todo_group, until

from cua.rollout.server import serve_rollouts

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]


def _rollouts_on_disk(runs: Path) -> list[Path]:
    return sorted(runs.glob("r*/*/end.json"))


async def test_a_retry_with_the_key_joins_the_dropped_request_and_nothing_runs_twice(tmp_path: Path) -> None:
    calls: list[int] = []
    model, gate = held_model(lambda: calls.append(1))  # it "thinks" until the client has dropped and asked again
    try:
        async with serve_rollouts(tmp_path, local=True, max_episodes=2, max_retries=0) as running:
            body = todo_group(model.url, 2)
            keyed = {**running.headers, "Idempotency-Key": "trainer-7:step-3:prompt-0"}
            async with httpx.AsyncClient(headers=keyed, timeout=600) as http:
                first = asyncio.create_task(http.post(f"{running.url}/rollouts", json=body))
                await until(lambda: len(calls) >= 2, 300, "the group's rollouts reach the model")
                first.cancel()  # the connection breaks with the request in flight
                with pytest.raises(asyncio.CancelledError):
                    await first
                retry = asyncio.create_task(http.post(f"{running.url}/rollouts", json=body))
                await until(lambda: running.service.ledger.replayed == 1, 60, "the retry joins the running request")
                gate.set()
                joined = await retry
                again = await http.post(f"{running.url}/rollouts", json=body)  # after the end: replayed
                other = await http.post(f"{running.url}/rollouts", json={**body, "group_size": 1})
                health = (await http.get(f"{running.url}/health")).json()
        assert joined.status_code == 200, joined.text
        answer = joined.json()
        assert [t["status"] for g in answer["groups"] for t in g["trajectories"]] == ["completed", "completed"]
        assert again.status_code == 200 and again.json() == answer
        assert other.status_code == 409 and other.json()["error"]["code"] == "bad_request", other.text
        assert health["keyed_requests"] == {"running": 0, "replayed": 2}
        # the group ran once: two rollouts asked the model once each, one request folder on disk
        assert len(calls) == 2
        assert len(_rollouts_on_disk(tmp_path)) == 2
        episodes = sum(t.episodes for t in running.service.curriculum.view().templates.values())
        assert episodes == 2
    finally:
        gate.set()
        model.close()


async def test_a_restarted_service_answers_a_finished_keyed_request_from_disk(tmp_path: Path) -> None:
    calls: list[int] = []

    def respond(_: dict[str, Any]) -> str:
        calls.append(1)
        return DONE

    model = ModelServer()
    model.respond = respond
    body = todo_group(model.url, 1)
    try:
        answers = []
        for _ in range(2):  # the same runs folder, a new service each time
            async with serve_rollouts(tmp_path, local=True, max_episodes=1, max_retries=0) as running:
                async with httpx.AsyncClient(headers={**running.headers, "Idempotency-Key": "k1"}, timeout=600) as http:
                    reply = await http.post(f"{running.url}/rollouts", json=body)
                    assert reply.status_code == 200, reply.text
                    answers.append(reply.json())
                    bad = await http.post(f"{running.url}/rollouts", json=body, headers={"Idempotency-Key": "no spaces"})
                    assert bad.status_code == 400 and "idempotency key" in bad.json()["error"]["message"]
        assert answers[0] == answers[1]
        assert len(calls) == 1 and len(_rollouts_on_disk(tmp_path)) == 1
    finally:
        model.close()
