"""What a model policy said is kept in the eval trajectory: raw output, thought, parse error,
token ids and logprobs, and the action in the model's own frame beside the screen pixels.

A real browser task, a real `ModelPolicy` (qwen2.5-vl family) over the OpenAI backend, whose
model is a local chat-completions server on loopback answering a scripted plan."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_policy_openai import QWEN_CLICK, FakeModelServer  # tests/ is on the path

from cua.episode import open_local, run_episode
from cua.episode.policy_agent import PolicyAgent
from cua.policy import PolicyOptions, make_policy
from cua.policy.service import serving_app
from cua.tasks.registry import get_template
from cua.trajectory import read_trajectory

pytestmark = pytest.mark.slow

DONE = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}\n</tool_call>'


async def test_model_outputs_tokens_and_model_frame_actions_are_kept(tmp_path: Path) -> None:
    from cua.trajectory import TrajectoryWriter

    fake = FakeModelServer()
    fake.plan = [{"content": "I will click the list.\n" + QWEN_CLICK}, {"content": "no tool call here"},
                 {"content": DONE}]
    instance = get_template("todo.mark_done@1").instantiate(0)
    async with serving_app(fake.app) as url:
        policy = make_policy(f"openai:qwen-test@{url}/v1", family="qwen2.5-vl",
                             defaults=PolicyOptions(logprobs=True))
        try:
            async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
                record = await run_episode(handle, instance, PolicyAgent(policy, "openai:qwen-test"),
                                           writer=TrajectoryWriter(tmp_path / "t"))
        finally:
            await policy.aclose()
    assert record.status == "completed", record.error
    assert record.steps == 3 and record.parse_errors == 1
    traj = read_trajectory(tmp_path / "t")
    assert traj.meta is not None and traj.meta.agent.kind == "policy" and traj.meta.agent.family == "qwen2.5-vl"
    click, wasted, done = traj.steps
    assert click.raw is not None and QWEN_CLICK in click.raw and click.parse_error is None
    assert click.action is not None and click.action["type"] == "click"
    # the model spoke its own 1288x728 image: the action is kept in both frames
    assert click.model_frame is not None and (click.model_frame.width, click.model_frame.height) == (1288, 728)
    assert click.model_action is not None and (click.model_action["x"], click.model_action["y"]) == (644, 364)
    assert (round(click.action["x"]), round(click.action["y"])) == (640, 360)
    assert click.tokens is not None and click.tokens.prompt_tokens == 1234 and click.tokens.completion_tokens == 56
    assert click.tokens.completion_ids == [100, 101, 102, 103, 104]
    assert click.tokens.logprobs is not None and len(click.tokens.logprobs) == 5
    assert click.timings_ms.get("policy", 0) > 0 and "act" in click.timings_ms
    # an unparseable turn is a step with no action, its raw text and the parse error
    assert wasted.action is None and wasted.raw == "no tool call here" and wasted.parse_error
    assert done.action is not None and done.action["type"] == "done"
    assert traj.end is not None and traj.end.done is not None and traj.end.steps == 3
    assert len(traj.observations()) == 4 and all(traj.frame_bytes(r) for r in traj.observations())
