"""cua as a verifiers environment, run by verifiers' own evaluation loop (`vf-eval`, in the venv
scripts/setup.sh builds for it) against `cua openenv serve` and a fake OpenAI-compatible model:
the judge's verdict is the reward, a model that does nothing or answers prose earns 0, and a
reply that is not an action is answered with what is wrong (`cua.hubs.verifiers.replies`)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _model_server import ModelServer
from _openenv import oracle_actions

from cua.actions import Click, Done
from cua.errors import BadRequest
from cua.hubs.verifiers.replies import reply_action

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("CUA_CACHE_DIR", Path.home() / ".cache/cua")) / "hubs/verifiers/venv"
TASK = "fake.set_counter@1"
FORM = "fake.submit_form@1"
TOKEN = "verifiers-t0ken"


def test_a_reply_is_one_action_bare_fenced_or_amid_prose() -> None:
    assert reply_action('{"type": "click", "x": 3, "y": 4}').action == Click(x=3, y=4)
    assert reply_action('I will click.\n```json\n{"type": "click", "x": 3, "y": 4}\n```').action == Click(x=3, y=4)
    assert reply_action('Done now: {"type": "done", "answer": "42"} thanks').action == Done(answer="42")
    with pytest.raises(BadRequest, match="no JSON object"):
        reply_action("I think I should click the plus button")
    with pytest.raises(BadRequest, match=r"not a cua action \(click.x"):
        reply_action('{"type": "click", "x": "left", "y": 4}')


@pytest.fixture
def openenv_server() -> Iterator[str]:
    env = {**os.environ, "CUA_OPENENV_TOKEN": TOKEN}
    with subprocess.Popen([sys.executable, "-m", "cua.cli", "openenv", "serve", "--local", "--port", "0",
                           "--max-sessions", "2"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            match = re.search(r"(http://127\.0\.0\.1:\d+)", line)
            assert match, line
            yield match.group(1)
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=60) == 0


@pytest.mark.slow
async def test_vf_eval_scores_cua_tasks_by_the_judge(openenv_server: str, tmp_path: Path) -> None:
    vf_eval = VENV / "bin/vf-eval"
    assert vf_eval.exists(), f"{vf_eval} is missing: scripts/setup.sh builds the verifiers venv"
    # Two tasks at once, in no fixed order: the model plays the oracle's actions on the counter
    # task, then says done; on the form task it answers prose until the environment gives up.
    oracle = [json.dumps(a.model_dump(mode="json")) for a in await oracle_actions(TASK, 3)] + ['{"type": "done"}']

    def respond(body: dict[str, Any]) -> str:
        messages = body["messages"]
        opening = json.dumps(next(m for m in messages if m["role"] == "user")["content"])
        if "Set the counter" not in opening:
            return "I think the Name field is the one to fill first."
        return oracle[sum(m["role"] == "assistant" for m in messages)]

    model = ModelServer()
    model.respond = respond
    out = tmp_path / "out"
    try:
        proc = subprocess.run(
            [str(vf_eval), "cua-verifiers", "--env.taskset.tasks", json.dumps([TASK, FORM]),
             "--env.taskset.seeds", "[3]", "--env.taskset.base-url", openenv_server,
             "--env.taskset.kind", "fake", "--client.base-url", model.url, "--model", "tiny-vl-7b",
             "--no-push", "--no-rich", "-o", str(out)],
            env={**os.environ, "CUA_OPENENV_TOKEN": TOKEN, "OPENAI_API_KEY": "unused",
                 "PATH": f"{VENV / 'bin'}:{os.environ['PATH']}"},
            capture_output=True, text=True, timeout=600)
    finally:
        model.close()
    assert proc.returncode == 0, proc.stderr[-4000:]
    [traces] = list(out.glob("*/traces.jsonl"))
    episodes = {ep["task"]["data"]["task_id"]: ep["traces"][0] for ep in map(json.loads, traces.read_text().splitlines())}
    assert {task: trace["rewards"]["cua_judge"]["score"] for task, trace in episodes.items()} == {TASK: 1.0, FORM: 0.0}
    assert episodes[FORM]["stop_condition"] == "bad_replies"
    # the model saw each screenshot as an image, and was told why its prose was not performed
    first_user = episodes[TASK]["nodes"][0]["message"]["content"]
    assert [part["type"] for part in first_user] == ["text", "image_url"]
    assert first_user[1]["image_url"]["url"].startswith("data:image/")
    told = [json.dumps(n["message"]["content"]) for n in episodes[FORM]["nodes"] if n["message"]["role"] == "user"]
    assert len(told) == 3 and all("no JSON object" in content for content in told[1:])
