"""The rollout service placing groups on Ray actors (a local Ray instance): the same
groups, tokens and masking as in one process."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import httpx
import pytest

pytest.importorskip("ray", reason="Ray placement needs the ray extra")

from cua.policy.service import serving_app
from cua.rollout.ray_placement import ray_placement
from cua.rollout.server import serve_rollouts
from cua.trajectory import validate

sys.path.insert(0, str(Path(__file__).parent))
from test_rollout_service import TASK, FakeVLLM

pytestmark = pytest.mark.slow


async def test_groups_on_ray_actors(tmp_path):
    fake = FakeVLLM()
    sigterm = signal.getsignal(signal.SIGTERM)
    async with serving_app(fake.app) as model, \
            ray_placement("local", actors=1, runs_dir=tmp_path, max_episodes=2) as placement, \
            serve_rollouts(tmp_path, local=True, placement=placement, max_episodes=2) as running:
        assert running.service.placement is not None
        body = {"policy": {"base_url": f"{model}/v1", "model": "fake-vl"}, "tasks": [TASK], "n": 1,
                "group_size": 2, "policy_version": 1, "isolation": "shared"}
        async with httpx.AsyncClient(timeout=600, headers=running.headers) as http:
            response = await http.post(f"{running.url}/rollouts", json=body)
            assert response.status_code == 200, response.text
            (group,) = response.json()["groups"]
            assert not group["masked"] and len(group["trajectories"]) == 2
            for traj in group["trajectories"]:
                assert traj["status"] == "completed" and traj["steps"][0]["tokens"]["prompt_ids"] == list(range(1, 8))
                assert validate(traj["folder"]).ok
            # the driver keeps the staleness bound
            assert (await http.post(f"{running.url}/policy_version", json={"version": 9})).status_code == 200
            assert (await http.post(f"{running.url}/rollouts", json={**body, "policy_version": 2})).status_code == 409
    # Ray's SIGTERM handler (it exits) leaves with Ray: the embedding process keeps its own
    assert signal.getsignal(signal.SIGTERM) is sigterm
