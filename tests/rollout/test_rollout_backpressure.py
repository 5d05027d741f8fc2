"""Backpressure (issue 37, item 4): at twice its capacity the rollout service refuses the
excess at once with a typed, retryable `capacity` error (HTTP 503, saying how full it is),
instead of queueing it without end; a request it could never admit is the client's error;
a refused request leaves nothing behind, and capacity comes back as requests end."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from _model_server import DONE, MODEL, ModelServer

from cua.rollout.server import serve_rollouts

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]


async def test_twice_the_capacity_is_refused_typed_and_capacity_comes_back(tmp_path: Path) -> None:
    called, gate = threading.Event(), threading.Event()

    def respond(_: dict[str, Any]) -> str:
        called.set()
        gate.wait(300)  # the model "thinks" until the test has sent the overload
        return DONE

    model = ModelServer()
    model.respond = respond
    try:
        # capacity: 1 running + 1 waiting = 2 rollouts admitted at once
        async with serve_rollouts(tmp_path, local=True, max_episodes=1, max_queued=1, max_retries=0) as running:
            def body(group_size: int, seed: int) -> dict[str, Any]:
                return {"policy": {"base_url": model.url, "model": MODEL}, "tasks": ["todo.mark_done@1"],
                        "seeds": [seed], "group_size": group_size, "max_steps": 2, "isolation": "shared"}

            async with httpx.AsyncClient(headers=running.headers, timeout=600) as http:
                url = f"{running.url}/rollouts"
                admitted = [asyncio.create_task(http.post(url, json=body(1, seed))) for seed in (0, 1)]
                assert await asyncio.to_thread(called.wait, 300), "no rollout reached the model"
                assert running.service.admitted == 2
                folders = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())

                # twice the capacity: the excess is refused at once, typed, and says why
                overload = await asyncio.gather(*(http.post(url, json=body(1, seed)) for seed in (2, 3)))
                for reply in overload:
                    assert reply.status_code == 503, reply.text
                    error = reply.json()["error"]
                    assert (error["code"], error["fault"], error["retryable"]) == ("capacity", "infra", True)
                    assert error["details"] == {"requested": 1, "admitted": 2, "capacity": 2, "max_episodes": 1}
                # more than it ever admits: no retry helps
                too_big = await http.post(url, json=body(3, 4))
                assert too_big.status_code == 400 and too_big.json()["error"]["fault"] == "client", too_big.text
                assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == folders  # nothing written

                gate.set()
                for reply in await asyncio.gather(*admitted):
                    assert reply.status_code == 200, reply.text
                    [group] = reply.json()["groups"]
                    assert not group["masked"] and group["trajectories"][0]["status"] == "completed"
                assert running.service.admitted == 0
                again = await http.post(url, json=body(2, 5))  # capacity came back
                assert again.status_code == 200, again.text
                assert [t["status"] for t in again.json()["groups"][0]["trajectories"]] == ["completed"] * 2
    finally:
        gate.set()
        model.close()
