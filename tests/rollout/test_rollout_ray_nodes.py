"""The rollout service on a cluster of 3 Ray nodes that loses one while groups run on it:
the group is run again on a node still alive, every group comes back whole and scored, and
the result names the node that served it and the node lost under it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx
import pytest

pytest.importorskip("ray", reason="Ray placement needs the ray extra")

from ray.cluster_utils import Cluster

from cua.policy.service import serving_app
from cua.rollout.ray_placement import ray_placement
from cua.rollout.server import serve_rollouts
from cua.trajectory import validate

sys.path.insert(0, str(Path(__file__).parent))
from test_rollout_service import FakeVLLM

pytestmark = pytest.mark.slow  # a Ray cluster of 4 raylets

OBJECT_STORE = 80 * 1024 * 1024


async def test_a_lost_node_s_groups_run_again_elsewhere(tmp_path: Path) -> None:
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False,
                                                            "object_store_memory": OBJECT_STORE})
    try:
        nodes = {}
        for i in range(3):
            node = cluster.add_node(num_cpus=1, resources={f"node_{i}": 1.0}, object_store_memory=OBJECT_STORE)
            nodes[node.node_id] = node
        cluster.wait_for_nodes()
        fake = FakeVLLM()
        thinking = asyncio.Event()

        async def think() -> None:  # the model takes its time, so groups are in flight when the node goes
            thinking.set()
            await asyncio.sleep(1.5)

        fake.on_call = think
        async with serving_app(fake.app) as model, \
                ray_placement(cluster.address, actors=3, runs_dir=tmp_path, max_episodes=2, num_cpus=0.5) as placement, \
                serve_rollouts(tmp_path, local=True, placement=placement, max_episodes=6) as running:
            where = await placement.where()
            assert set(where) <= set(nodes) and len(set(where)) >= 2  # spread over the nodes
            victim = where[0]
            body = {"policy": {"base_url": f"{model}/v1", "model": "fake-vl"}, "tasks": ["fake.set_counter@1"],
                    "n": 3, "group_size": 2, "policy_version": 1}
            async with httpx.AsyncClient(timeout=600, headers=running.headers) as http:
                request = asyncio.create_task(http.post(f"{running.url}/rollouts", json=body))
                await asyncio.wait_for(thinking.wait(), 300)
                await asyncio.to_thread(cluster.remove_node, nodes[victim], False)
                response = await request
            assert response.status_code == 200, response.text
            groups = response.json()["groups"]
    finally:
        cluster.shutdown()
    assert len(groups) == 3
    retried = [g for g in groups if g["lost_nodes"]]
    assert retried, "no group was on the killed node when it died"
    for group in groups:
        assert not group["masked"] and group["node"] in nodes and group["node"] != victim
        for traj in group["trajectories"]:
            assert traj["status"] == "completed" and traj["reward"] is not None
            assert traj["attempts"] == 1 + len(group["lost_nodes"])
            assert validate(traj["folder"]).ok
    for group in retried:
        assert group["lost_nodes"] == [victim]
    folders = [t["folder"] for g in groups for t in g["trajectories"]]
    assert len(set(folders)) == 6  # each rollout once, none duplicated by the retry
