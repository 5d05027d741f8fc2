"""One agent loop: `cua eval`, `CuaEnv`, the vector env and the rollout service, driven by
one scripted policy, take the same steps, pay the same rewards and reach the same verdict;
the rollout server's env handles, stepped with the same plan, pay the same too.

Every driver asks its policy through `cua.episode.policy_agent.PolicyAgent` (the one reading
of a policy's answer as a turn) and steps the turn by `cua.episode.loop.plan`, on the
`fake` kind's counter task (no Chromium).

- A model behind a real HTTP server speaking the chat completions format (stdlib,
  loopback) answers each conversation by its turn: a tool call no parser knows (a parse
  error: a wasted step), a click, a turn of two clicks, clicks, then `terminate`. One
  `ModelPolicy` over it (the OpenAI backend, the qwen2.5-vl family) drives a trainer's loop
  over `CuaEnv` and over the vector env; `cua eval --policy openai:...` (its runner, its
  `PolicyAgent`) and the rollout service (behind a real rollout server and its token, its
  own `ModelPolicy` through its token proxy) ask the same server.
- One `ScriptedPolicy` object, the same answers as raw model output parsed by the same
  family, but ending on an empty turn (no action, no parse error: `STOP`, the episode ends
  where it is and is judged, not counted as a step), drives `cua eval`'s executor, `CuaEnv`
  and the vector env. No model family answers with an empty turn (prose without a tool call
  is a parse error, or the anthropic and openai families' Done), so the rollout service,
  which asks only a model endpoint, never meets one; its loop is `play`, the one `cua eval`
  runs.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from cua.actions import Click
from cua.cli import main
from cua.episode import NoopAgent, open_local, run_episode, sandbox_opener
from cua.episode.agent import AgentTurn
from cua.episode.episode import EpisodeRecord
from cua.episode.loop import STOP, Planned, Stop, plan
from cua.episode.policy_agent import PolicyAgent
from cua.eval.runner import EpisodeJob, LocalExecutor
from cua.observation import ObserveOptions, Size
from cua.policy.backends.openai import OpenAIBackend
from cua.policy.backends.scripted import ScriptedPolicy, ScriptStep
from cua.policy.base import Policy
from cua.policy.engine import ModelPolicy
from cua.policy.families import get_family
from cua.rl.env import CuaEnv
from cua.rl.vector import CuaVectorEnv
from cua.rollout.server import serve_rollouts
from cua.sandboxes.fake.screen import FormScreen
from cua.server.app import serve_in_thread
from cua.tasks.registry import get_template
from cua.trajectory import read_trajectory

TASK = "fake.set_counter@1"
SEED = 0
#: The fake kind's screen. The gym envs observe a task without a viewport in 1280x720
#: unless told; eval and the rollout service observe the screen as it is.
OBSERVE = ObserveOptions(frame=Size(width=640, height=400))


def _call(*args: dict[str, Any]) -> str:
    return "\n".join(f"<tool_call>\n{json.dumps(a)}\n</tool_call>" for a in args)


def _script() -> list[str]:
    """The model's answers, turn by turn: enough clicks on "+" to reach the target from
    where the reset seed starts the counter."""
    instance = get_template(TASK).instantiate(SEED)
    screen = FormScreen(Size(width=640, height=400), "x")
    screen.reset(instance.reset_seed)
    clicks = int(instance.params["goal"]["target"]) - screen.state.count
    assert clicks >= 3, "the script needs a turn of one click, one of two, and the rest"
    x, y, w, h = next(widget.box for widget in screen.widgets() if widget.id == "inc")
    mx, my = get_family("qwen2.5-vl").model_frame(screen.size).from_frame(x + w / 2, y + h / 2)
    click = {"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [mx, my]}}
    return [_call({"name": "browser", "arguments": {"action": "open"}}),  # no such tool: a parse error
            _call(click), _call(click, click), *[_call(click)] * (clicks - 3),
            _call({"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}})]


class _Model(BaseHTTPRequestHandler):
    script: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 -- the handler's name is http.server's
        self._send({"object": "list", "data": [{"id": "scripted", "object": "model"}]})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        text = self.script[turn] if turn < len(self.script) else "Nothing more."
        self._send({"id": f"c{turn}", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}})

    def _send(self, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture(scope="module")
def model() -> Iterator[str]:
    """The scripted model's base URL (".../v1")."""
    _Model.script = _script()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@dataclass
class Played:
    """One driver's episode as the test compares it."""

    steps: int
    actions: list[str | None]
    rewards: list[float]
    terminated: bool
    truncated: bool
    passed: bool
    score: float


def _planned(agent: PolicyAgent, runner: asyncio.Runner, instruction: str, obs: Any) -> list[Planned]:
    """A trainer's turn: the policy asked through `PolicyAgent`, the answer planned."""
    agent.instruction = instruction
    return list(plan(runner.run(agent.turn(obs))))


def _name(action: Planned) -> str | None:
    return None if action is None else "stop" if action is STOP else getattr(action, "type", None)


def _gym(policy: Policy, runner: asyncio.Runner, reward: str, *, server: Any = None) -> tuple[Played, list[Planned]]:
    """A trainer's loop over `CuaEnv` (or, with `server`, a one-env `CuaVectorEnv`), asking
    `policy` (on `runner`'s event loop) through `PolicyAgent` in a session of its own."""
    agent = PolicyAgent(policy, "scripted", session_id=f"{'vec' if server else 'gym'}-{reward}")
    stepped: list[Planned] = []
    rewards: list[float] = []
    if server is None:
        env = CuaEnv(TASK, reward=reward, observe=OBSERVE)  # type: ignore[arg-type]
        try:
            _, info = env.reset(seed=SEED)
            over, terminated, truncated = False, False, False
            while not over:
                for action in _planned(agent, runner, info["instruction"],
                                       env.episode.observation if env.episode else None):
                    stepped.append(action)
                    _, r, terminated, truncated, info = env.step(action)
                    rewards.append(r)
                    if terminated or truncated:
                        over = True
                        break
            verdict = info["verdict"]
            steps = info["step"]
        finally:
            env.close()
    else:
        venv = CuaVectorEnv(TASK, num_envs=1, reward=reward, server=server.url,  # type: ignore[arg-type]
                            token=server.token, observe=OBSERVE)
        try:
            _, infos = venv.reset(seed=SEED)
            slot = venv._slots[0]
            over, terminated, truncated = False, False, False
            while not over:
                assert slot.episode is not None
                for action in _planned(agent, runner, infos["instruction"][0], slot.episode.observation):
                    stepped.append(action)
                    _, paid, term, trunc, infos = venv.step((action,))
                    rewards.append(float(paid[0]))
                    terminated, truncated = bool(term[0]), bool(trunc[0])
                    if terminated or truncated:
                        over = True
                        break
            verdict = infos["verdict"][0]
            steps = int(infos["step"][0])
        finally:
            venv.close()
    played = Played(steps=steps, actions=[_name(a) for a in stepped], rewards=rewards,
                    terminated=terminated, truncated=truncated, passed=verdict.passed, score=verdict.score)
    return played, stepped


def _eval(model: str, out: Path) -> EpisodeRecord:
    args = ["eval", TASK, "--seed-list", str(SEED), "--local", "--policy", f"openai:scripted@{model}",
            "--out", str(out), "--no-progress", "--no-report"]
    assert main(args) == 0
    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    return EpisodeRecord.model_validate_json(line)


async def _rollout(model: str, runs: Path, reward: str) -> dict[str, Any]:
    async with serve_rollouts(runs, local=True, max_episodes=1, max_retries=0) as running:
        async with httpx.AsyncClient(timeout=120, headers=running.headers) as http:
            response = await http.post(f"{running.url}/rollouts", json={
                "policy": {"base_url": model, "model": "scripted"}, "tasks": [TASK], "seeds": [SEED],
                "group_size": 1, "reward": reward})
    assert response.status_code == 200, response.text
    (group,) = response.json()["groups"]
    (trajectory,) = group["trajectories"]
    assert trajectory["status"] == "completed", trajectory
    return dict(trajectory)


async def _handles(model: str, runs: Path, reward: str, stepped: list[Planned]) -> Played:
    """The rollout server's env handles (`POST /envs`, `/envs/{id}/step`), stepped with a plan."""
    async with serve_rollouts(runs, local=True) as running:
        async with httpx.AsyncClient(timeout=120, headers=running.headers) as http:
            created = await http.post(f"{running.url}/envs", json={"task": TASK, "seed": SEED, "reward": reward})
            assert created.status_code == 200, created.text
            env_id = created.json()["env_id"]
            rewards: list[float] = []
            for action in stepped:
                assert not isinstance(action, Stop), "the env handles take actions and wasted turns"
                answer = await http.post(f"{running.url}/envs/{env_id}/step", json={
                    "action": action.model_dump(mode="json") if action is not None else None})
                assert answer.status_code == 200, answer.text
                out = answer.json()
                rewards.append(out["reward"])
            await http.delete(f"{running.url}/envs/{env_id}")
    verdict = out["verdict"]
    return Played(steps=out["step"], actions=[_name(a) for a in stepped], rewards=rewards,
                  terminated=out["terminated"], truncated=out["truncated"], passed=verdict["passed"],
                  score=verdict["score"])


def _dense_rewards(progress: list[float], score: float) -> list[float]:
    """What the one transition rule pays for these per-step progress reads (the last step pays
    the rest); the first is off by the progress of the start state, which no step line keeps."""
    paid, out = 0.0, []
    for p in progress[:-1]:
        out.append(p - paid)
        paid = p
    return [*out, score - paid]


def test_eval_gym_vector_and_rollout_service_agree(model: str, tmp_path: Path) -> None:
    script = _script()
    record = _eval(model, tmp_path / "eval")
    policy = ModelPolicy(OpenAIBackend(base_url=model, model="scripted"), family="qwen2.5-vl")
    with asyncio.Runner() as runner, serve_in_thread(max_sandboxes=4) as server:
        try:
            runs = {reward: (_gym(policy, runner, reward), _gym(policy, runner, reward, server=server))
                    for reward in ("sparse", "dense")}
        finally:
            runner.run(policy.aclose())
    rollouts = {reward: asyncio.run(_rollout(model, tmp_path / f"runs-{reward}", reward))
                for reward in ("sparse", "dense")}

    # eval: the parse error is a wasted step, the empty turn ends the episode, and it passes
    clicks = len(script) - 1  # one turn clicks twice; the first is a parse error, the last terminate
    assert record.status == "completed" and not record.truncated and record.failure is None
    assert record.steps == 1 + clicks + 1 and record.parse_errors == 1
    assert [a.action.get("type") for a in record.actions] == [None, *["click"] * clicks, "done"]
    assert record.verdict is not None and record.verdict.passed
    assert record.trajectory is not None  # eval asked the model through `PolicyAgent`
    meta = read_trajectory(tmp_path / "eval" / record.trajectory).meta
    assert meta is not None and meta.agent is not None and meta.agent.kind == "policy"
    assert meta.agent.family == "qwen2.5-vl"

    for reward in ("sparse", "dense"):
        (gym, stepped), (vector, vstepped) = runs[reward]
        assert stepped == vstepped and stepped[0] is None
        assert gym == vector, reward
        assert gym.steps == record.steps and not gym.truncated and gym.terminated
        assert gym.actions == [None, *["click"] * clicks, "done"]
        assert gym.passed == record.verdict.passed and gym.score == record.verdict.score

        assert asyncio.run(_handles(model, tmp_path / f"envs-{reward}", reward, stepped)) == gym, reward

        rollout = rollouts[reward]
        end = rollout["end"]
        assert end["steps"] == record.steps and end["truncated"] is False and end["status"] == "completed"
        assert [s["action"]["type"] if s["action"] else None for s in rollout["steps"]] == gym.actions
        assert rollout["passed"] == gym.passed and rollout["reward"] == gym.score
        traj = read_trajectory(rollout["folder"])
        assert traj.end is not None and traj.end.verdict is not None
        assert traj.end.verdict.model_dump(exclude={"judge_ms"}) == record.verdict.model_dump(exclude={"judge_ms"})
        if reward == "sparse":
            assert gym.rewards == [0.0] * (record.steps - 1) + [record.verdict.score]  # the Done pays the score
        else:
            # dense pays each step's progress change (from the state it started in) and the rest at the end
            progress = [s["progress"] for s in rollout["steps"]]
            assert gym.rewards[1:] == pytest.approx(_dense_rewards(progress, record.verdict.score)[1:])
            assert any(r != 0.0 for r in gym.rewards[:-1])  # dense pays on the way, not only at the end


def _scripted_policy() -> ScriptedPolicy:
    """The model's answers as raw output the same family parses (the unknown tool's parse
    error included), ending on an empty turn in place of `terminate`."""
    return ScriptedPolicy([*(ScriptStep(raw=raw) for raw in _script()[:-1]), ScriptStep(actions=[])],
                          family="qwen2.5-vl")


async def _eval_executor(policy: Policy, run_dir: Path) -> EpisodeRecord:
    """`cua eval`'s executor (its sandbox, its retries, its `run_episode`), asking `policy`
    through `PolicyAgent`."""
    async with sandbox_opener(local=True) as opener:
        executor = LocalExecutor(opener, lambda _instance: PolicyAgent(policy, "scripted"), run_dir=run_dir)
        try:
            return await executor.run(EpisodeJob(template=get_template(TASK), seed=SEED))
        finally:
            await executor.aclose()


def test_one_scripted_policy_with_an_empty_turn_ends_alike_in_eval_and_the_gym_envs(tmp_path: Path) -> None:
    policy = _scripted_policy()  # one object drives every driver, each in its own session
    record = asyncio.run(_eval_executor(policy, tmp_path / "eval"))
    with asyncio.Runner() as runner, serve_in_thread(max_sandboxes=2) as server:
        runs = {reward: (_gym(policy, runner, reward), _gym(policy, runner, reward, server=server))
                for reward in ("sparse", "dense")}

    # eval: the parse error is a wasted step; the empty turn ends the episode where it is,
    # judged (the counter is at its target: passed), not counted as a step, not truncated
    clicks = len(_script()) - 1  # one turn clicks twice; the first is a parse error; the empty turn is no step
    assert record.status == "completed" and not record.truncated and record.failure is None
    assert record.steps == 1 + clicks and record.parse_errors == 1
    assert [a.action.get("type") for a in record.actions] == [None, *["click"] * clicks]
    assert record.verdict is not None and record.verdict.passed
    assert record.trajectory is not None
    meta = read_trajectory(tmp_path / "eval" / record.trajectory).meta
    assert meta is not None and meta.agent is not None and meta.agent.kind == "policy"

    for reward in ("sparse", "dense"):
        (gym, stepped), (vector, vstepped) = runs[reward]
        assert stepped == vstepped and stepped[0] is None and stepped[-1] is STOP
        assert gym == vector, reward
        assert gym.actions == [None, *["click"] * clicks, "stop"]
        assert gym.steps == record.steps and gym.terminated and not gym.truncated
        assert gym.passed == record.verdict.passed and gym.score == record.verdict.score
        if reward == "sparse":  # the empty turn's judging pays the score
            assert gym.rewards == [0.0] * record.steps + [record.verdict.score]
        else:  # dense pays each click's progress on the way
            assert any(r != 0.0 for r in gym.rewards[:-1])


def test_an_empty_turn_ends_the_episode_in_the_loop_and_in_the_gym_env() -> None:
    assert plan(AgentTurn()) == [STOP]
    assert plan(AgentTurn(parse_error="no <tool_call> in the output")) == [None]
    record = asyncio.run(_noop_episode())
    assert record.status == "completed" and record.steps == 0 and not record.truncated
    assert record.verdict is not None and not record.verdict.passed

    env = CuaEnv(TASK)
    try:
        env.reset(seed=SEED)
        _, reward, terminated, truncated, info = env.step(STOP)
        assert (terminated, truncated, info["step"]) == (True, False, 0)
        assert info["verdict"].model_dump(exclude={"judge_ms"}) == record.verdict.model_dump(exclude={"judge_ms"})
        assert reward == record.verdict.score
    finally:
        env.close()


async def _noop_episode() -> EpisodeRecord:
    async with open_local("fake", get_template(TASK).instantiate(SEED).sandbox_config) as handle:
        return await run_episode(handle, get_template(TASK).instantiate(SEED), NoopAgent())


class _Breaks:
    """Clicks once, then its own code fails."""

    name = "breaks"

    def __init__(self) -> None:
        self.turns = 0

    async def begin(self, instance: Any, ctx: Any) -> None:
        return None

    async def turn(self, observation: Any) -> AgentTurn:
        self.turns += 1
        if self.turns > 1:
            raise ValueError("the agent's own bug")
        return AgentTurn(actions=[Click(x=10, y=10)])


def test_an_agent_that_raises_is_recorded_as_the_agents_fault() -> None:
    async def run() -> EpisodeRecord:
        instance = get_template(TASK).instantiate(SEED)
        async with open_local("fake", instance.sandbox_config) as handle:
            return await run_episode(handle, instance, _Breaks())

    record = asyncio.run(run())
    assert record.status == "agent_error" and record.steps == 1 and record.failure == "agent_error"
    assert record.error is not None and record.error.fault == "agent" and record.error.traceback is not None
    assert "ValueError: the agent's own bug" in record.error.message and "turn" in record.error.traceback
