"""A trainer whose `POST /rollouts` connection drops mid-group: the service gives the
group up (its rollouts cancelled, their sandboxes closed), instead of running it on to a
result nobody reads, that the curriculum counts and the disk keeps beside the group the
trainer asks for again (bench/rollout_soak.py's client_disconnect fault found it)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import httpx
import pytest
from _rollout_common import held_model, todo_group, until

from cua.rollout.server import serve_rollouts
from cua.trajectory import read_trajectory

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]


async def test_a_group_whose_client_left_is_cancelled(tmp_path: Path) -> None:
    called = threading.Event()
    model, gate = held_model(called.set)  # it "thinks" until the test has checked what the service did
    try:
        async with serve_rollouts(tmp_path, local=True, max_episodes=2, max_retries=0) as running:
            body = todo_group(model.url, 2)
            async with httpx.AsyncClient(headers=running.headers, timeout=600) as http:
                post = asyncio.create_task(http.post(f"{running.url}/rollouts", json=body))
                assert await asyncio.to_thread(called.wait, 300), "no rollout reached the model"
                assert running.service.live
                post.cancel()  # the connection closes with the request in flight
                with pytest.raises(asyncio.CancelledError):
                    await post
            await until(lambda: not running.service.live, 30, "the dropped group's rollouts end")
            gate.set()
            assert running.service.curriculum.view().templates == {} or all(
                t.episodes == 0 for t in running.service.curriculum.view().templates.values())
            ends = [read_trajectory(f.parent).end for f in tmp_path.glob("*/*/end.json")]
            assert ends and all(e is not None and e.status != "completed" for e in ends), ends
    finally:
        gate.set()
        model.close()
