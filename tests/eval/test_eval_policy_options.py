"""`cua eval` with a model that fails, end to end: the sampling flags reach an OpenAI-compatible
server (a stand-in speaking the chat completions wire format on loopback), `--observe` puts the
accessibility tree in the trajectory, the run says how it was made, and `cua report` of it,
opened from disk in headless Chromium, shows every step's screenshot with its action drawn.
Also `--agent module:factory` with the example of docs/agents.md."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
from fastapi import FastAPI, Request
from playwright.async_api import async_playwright

from cua.policy.service import serving_app
from cua.sandboxes.browser.launcher import find_executable
from cua.trajectory import read_trajectory

TASK = "todo.mark_done@1"


def _tool_call(arguments: dict) -> str:
    return f'<tool_call>\n{json.dumps({"name": "computer_use", "arguments": arguments})}\n</tool_call>'


#: A model that clicks somewhere useless, writes something that does not parse, types, and
#: claims success: the task is judged wrong.
ANSWERS = [
    "I will click the header.\n" + _tool_call({"action": "left_click", "coordinate": [400, 30]}),
    "I am not sure what to do here.",
    _tool_call({"action": "type", "text": "milk"}),
    _tool_call({"action": "terminate", "status": "success"}),
]


def _fake_model() -> tuple[FastAPI, list[dict]]:
    app = FastAPI()
    requests: list[dict] = []

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> dict:
        body = await request.json()
        requests.append(body)
        content = ANSWERS[min(len(requests) - 1, len(ANSWERS) - 1)]
        return {"id": f"c{len(requests)}", "object": "chat.completion", "created": int(time.time()),
                "model": body["model"], "usage": {"prompt_tokens": 900, "completion_tokens": 30},
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}

    return app, requests


async def _cua(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "cua.cli", *args, cwd=cwd,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                env={**os.environ, "COLUMNS": "200", **(env or {})})
    out, err = await asyncio.wait_for(proc.communicate(), 600)
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.mark.slow
async def test_a_failing_model_run_sends_its_sampling_settings_and_reports_every_step(tmp_path: Path) -> None:
    app, requests = _fake_model()
    out = tmp_path / "run"
    async with serving_app(app) as base:
        rc, stdout, stderr = await _cua(
            "eval", TASK, "--policy", f"openai:fake-vl@{base}/v1", "--family", "qwen2.5-vl", "--local",
            "--temperature", "0.3", "--top-p", "0.9", "--max-tokens", "77", "--seed", "5", "--history", "2",
            "--observe", "screenshot,axtree", "--out", str(out), "--no-progress")
    assert rc == 0, stderr[-3000:]
    assert len(requests) == len(ANSWERS)
    for body in requests:  # every call carried the flags
        assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (0.3, 0.9, 77, 5), body.keys()
    images = [sum(1 for m in body["messages"] if isinstance(m["content"], list)
                  for part in m["content"] if part["type"] == "image_url") for body in requests]
    assert max(images) == 2 and images[0] == 1, images  # --history 2

    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["failure"] == "judged_wrong" and not record["verdict"]["passed"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failures"] == {"judged_wrong": 1} and summary["success_rate"] == 0.0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["policy"]["kind"] == "openai" and manifest["policy"]["model"] == "fake-vl"
    assert manifest["policy"]["sampling"] == {"temperature": 0.3, "top_p": 0.9, "max_tokens": 77, "seed": 5,
                                              "history_images": 2}
    assert manifest["observe"]["axtree"] is True
    traj = read_trajectory(out / record["trajectory"])
    assert traj.meta is not None and traj.meta.agent.settings["temperature"] == 0.3
    assert all(step.observation.axtree for step in traj.steps)
    assert [s.action["type"] if s.action else None for s in traj.steps] == ["click", None, "type", "done"]
    report = out / "report" / "index.html"
    assert f"report: {report.resolve().as_uri()}" in stdout

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_executable().path,
                                           args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = await browser.new_page(viewport={"width": 1400, "height": 900})
            key = record["trajectory"].removeprefix("trajectories/")
            await page.goto(f"{report.resolve().as_uri()}#/ep/0/{key}")
            await page.wait_for_selector(".episode")
            cards = page.locator(".episode > section.step:not(.final)")
            assert await cards.count() == len(ANSWERS)
            widths = await page.eval_on_selector_all(".episode .shot img", "els => els.map(e => e.naturalWidth)")
            assert widths == [1280] * (len(ANSWERS) + 1), widths
            # the click drawn where the model's grid point lands on the screen
            click = traj.steps[0].action
            img = await page.locator("#step-0-0 .shot img").bounding_box()
            dot = await page.locator("#step-0-0 [data-marker=click] circle").bounding_box()
            assert img is not None and dot is not None
            scale = img["width"] / 1280
            assert abs(dot["x"] + dot["width"] / 2 - (img["x"] + click["x"] * scale)) < 1.5
            assert abs(dot["y"] + dot["height"] / 2 - (img["y"] + click["y"] * scale)) < 1.5
            assert "I will click the header." in await page.inner_text("#step-0-0 pre.raw")
            assert await page.locator("#step-0-1 .parse-error").count() == 1
            assert await page.inner_text("#step-0-2 .badge") == "type “milk”"
            assert await page.inner_text("#step-0-3 .badge") == "done: success"
            assert await page.locator("table.evidence tr").count() >= 2  # a header and a check
            await page.click("#step-0-0 details.axtree summary")
            await page.wait_for_function("document.querySelector('#step-0-0 pre.ax').textContent.includes('RootWebArea')")
            await page.screenshot(path=str(tmp_path / "failing-model.png"), full_page=True)
        finally:
            await browser.close()


@pytest.mark.slow
async def test_a_python_agent_runs_with_agent_module_factory(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text()
    example = next(b for b in re.findall(r"```python\n(.*?)```", doc, re.DOTALL) if "my_agents.py" in b)
    (tmp_path / "my_agents.py").write_text(example)
    out = tmp_path / "run"
    rc, _, stderr = await _cua("eval", TASK, "--agent", "my_agents:make_agent", "--observe", "screenshot,axtree",
                               "--local", "--out", str(out), "--no-progress", cwd=tmp_path,
                               env={"PYTHONPATH": str(tmp_path)})
    assert rc == 0, stderr[-3000:]
    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["agent"] == "first-button" and record["status"] == "completed"
    traj = read_trajectory(out / record["trajectory"])
    assert traj.meta is not None and traj.meta.agent.kind == "python"
    assert [s.action["type"] for s in traj.steps if s.action] == ["click", "done"]
    assert traj.steps[0].thought and traj.steps[0].thought.startswith("the button")
    # a spec that does not load is refused before any sandbox starts
    rc, _, stderr = await _cua("eval", TASK, "--agent", "no_such_module:x", "--out", str(tmp_path / "x"))
    assert rc == 2 and "cannot import" in stderr


@pytest.mark.slow
async def test_an_unreachable_model_is_the_infrastructures_fault_not_the_agents(tmp_path: Path) -> None:
    """A model that cannot be reached stops the run before any browser starts (exit 3, nothing
    written); test_eval_model_endpoint.py covers one lost mid-run, each attempt kept."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "run"
    rc, _, stderr = await _cua("eval", TASK, "--policy", f"openai:m@http://127.0.0.1:{port}/v1", "--family",
                               "qwen2.5-vl", "--local", "--retries", "1", "--out", str(out), "--no-progress")
    assert rc == 3, stderr[-3000:]
    assert "model_unreachable" in stderr and "Traceback" not in stderr
    assert not out.exists()
