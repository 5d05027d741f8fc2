"""cua as an Inspect AI sandbox: `inspect eval` of small tasks with `sandbox="cua"` end to end,
Inspect's mock model playing a scripted solution, scored by the cua judge as an Inspect scorer.
The browser sample acts through the native `cua_computer` tool (element ids, no scripts); the
desktop sample through Inspect's own `bash()` tool, which runs on `exec`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval_async
from inspect_ai.model import ChatMessage, ChatMessageTool, ChatMessageUser, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
from inspect_ai.tool import bash
from inspect_ai.util import sandbox

from cua.compat.inspect_sandbox import CuaSandboxConfig, CuaSandboxEnvironment, cua_computer, cua_judge, cua_samples
from cua.trajectory import read_trajectory, validate

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]


@pytest.fixture(autouse=True)
def _quiet_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
MODEL = "mockllm/model"


def _text(message: ChatMessage) -> str:
    return message.text if isinstance(message.content, list) else str(message.content)


def _counted(output: ModelOutput) -> ModelOutput:
    # the mock model would otherwise count tokens with tiktoken, which downloads its encoding
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def _tool(name: str, arguments: dict[str, Any]) -> ModelOutput:
    return _counted(ModelOutput.for_tool_call(model=MODEL, tool_name=name, tool_arguments=arguments))


def _answer(text: str) -> ModelOutput:
    return _counted(ModelOutput.from_content(model=MODEL, content=text))


def todo_player(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    """Marks the named todo done: look, open the list by its element id, tick its box, answer."""
    goal = next(_text(m) for m in messages if isinstance(m, ChatMessageUser))
    list_name, title = re.search(r'In the "(.+)" list, mark the todo "(.+)" as done', goal).groups()  # type: ignore[union-attr]
    results = [_text(m) for m in messages if isinstance(m, ChatMessageTool)]
    if not results:
        return _tool("cua_computer", {})
    if len(results) == 1:
        link = re.search(rf"^(e\d+): link '{re.escape(list_name)} \d+ open", results[-1], re.M)
        assert link, results[-1]
        return _tool("cua_computer", {"action": {"type": "click_element", "element": link.group(1)}})
    if len(results) == 2:
        box = re.search(rf"^(e\d+): checkbox 'Done: {re.escape(title)}'$", results[-1], re.M)
        assert box, results[-1]
        return _tool("cua_computer", {"action": {"type": "click_element", "element": box.group(1)}})
    return _answer("Done.")


def csv_player(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    """Counts the lines with bash, then answers the number."""
    results = [_text(m) for m in messages if isinstance(m, ChatMessageTool)]
    if not results:
        return _tool("bash", {"command": "wc -l < data/sales.csv"})
    return _answer(results[-1].strip())


@solver
def probe_files() -> Any:
    """Inspect's file operations on the sample's sandbox, as a tool of Inspect's would use them."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        box = sandbox()
        state.metadata["cua_env"] = type(box.as_type(CuaSandboxEnvironment)).__name__
        try:
            # The scratch file is not the task's: in the user's files, the judge rightly counts it a side
            # effect, left behind or removed again (the file event log sees both). A hidden folder is
            # an application's own, which neither the manifest nor the log reads.
            await box.write_file(".cache/inspect/notes.txt", "written by inspect\n")
            state.metadata["read_back"] = await box.read_file(".cache/inspect/notes.txt")
            state.metadata["bytes"] = list(await box.read_file(".cache/inspect/notes.txt", text=False))[:3]
            result = await box.exec(["cat"], input="piped")
            state.metadata["exec"] = [result.success, result.stdout]
            removed = await box.exec(["/bin/rm", "-r", ".cache/inspect"])  # the folder write_file made for it
            state.metadata["removed"] = removed.success
            try:
                await box.read_file("no/such/file")
            except FileNotFoundError:
                state.metadata["missing"] = "FileNotFoundError"
        except NotImplementedError as exc:
            state.metadata["refused"] = str(exc)
        return state

    return solve


async def test_browser_task_through_inspect(tmp_path: Path) -> None:
    config = CuaSandboxConfig(config_overrides={"browser": {"isolation": "shared"}},
                              trajectory_dir=str(tmp_path / "traj"))
    task = Task(dataset=cua_samples(["todo.mark_done@1"], seeds=[0, 1]),
                solver=[probe_files(), use_tools(cua_computer()), generate()], scorer=cua_judge(),
                sandbox=("cua", config), message_limit=20)
    (log,) = await eval_async(task, model=get_model(MODEL, custom_outputs=todo_player), log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        assert sample.metadata["cua_env"] == "CuaSandboxEnvironment"
        assert "no shell" in sample.metadata["refused"]  # a browser refuses exec/read/write as Inspect expects
        (score,) = sample.scores.values()  # type: ignore[union-attr]
        assert score.value == 1.0 and score.metadata["passed"], score.explanation
    # each sample's steps are a cua trajectory, forked from the task's initial state
    report = validate(tmp_path / "traj")
    assert report.ok and report.trajectories == 2, report.problems
    for folder in sorted((tmp_path / "traj").iterdir()):
        traj = read_trajectory(folder)
        assert traj.meta is not None and traj.meta.start_snapshot is not None
        assert [s.action["type"] for s in traj.steps if s.action] == ["click_element", "click_element"]
        # each step by element id is kept with the click it resolved to, so it replays in pixels
        assert all(s.resolved_action is not None and s.resolved_action["type"] == "click" for s in traj.steps)


async def test_desktop_task_through_inspect(tmp_path: Path) -> None:
    task = Task(dataset=cua_samples(["desktop.count_csv_lines@1"], seeds=[0]),
                solver=[probe_files(), use_tools(bash()), generate()], scorer=cua_judge(),
                sandbox=("cua", CuaSandboxConfig()), message_limit=10)
    (log,) = await eval_async(task, model=get_model(MODEL, custom_outputs=csv_player), log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    assert sample.metadata["read_back"] == "written by inspect\n"
    assert sample.metadata["bytes"] == list(b"wri")
    assert sample.metadata["exec"] == [True, "piped"] and sample.metadata["removed"] is True
    assert sample.metadata["missing"] == "FileNotFoundError"
    (score,) = sample.scores.values()  # type: ignore[union-attr]
    assert score.value == 1.0 and score.answer == "29", [(m.role, _text(m)[:200]) for m in sample.messages]


def infeasible_player(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    """Looks once, then declares the task infeasible with cua's done action, tries one more
    action (refused: the task is over) and says so in its last answer."""
    results = [_text(m) for m in messages if isinstance(m, ChatMessageTool)]
    if not results:
        return _tool("cua_computer", {})
    if len(results) == 1:
        return _tool("cua_computer", {"action": {"type": "done", "status": "infeasible",
                                                 "answer": "there is no such list"}})
    if len(results) == 2:
        assert "task ended: done(status='infeasible')" in results[-1], results[-1]
        return _tool("cua_computer", {"action": {"type": "key", "keys": ["Tab"]}})
    return _answer("It cannot be done.")


async def test_a_sample_declares_its_task_infeasible(tmp_path: Path) -> None:
    """The same infeasible claim, judged as cua eval judges it: right on the infeasible task
    (1), wrong on a feasible one (0)."""
    task = Task(dataset=cua_samples(["todo.infeasible_ghost_list@1", "todo.mark_done@1"], seeds=[0]),
                solver=[use_tools(cua_computer()), generate()], scorer=cua_judge(),
                sandbox=("cua", CuaSandboxConfig(config_overrides={"browser": {"isolation": "shared"}},
                                                 trajectory_dir=str(tmp_path / "traj"))),
                message_limit=20)
    (log,) = await eval_async(task, model=get_model(MODEL, custom_outputs=infeasible_player),
                              log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    scores = {}
    for sample in log.samples or []:
        (score,) = sample.scores.values()  # type: ignore[union-attr]
        assert score.metadata is not None and sample.metadata is not None
        assert score.metadata["done_status"] == "infeasible" and score.answer == "there is no such list"
        scores[sample.metadata["cua_task"]] = (score.value, score.metadata["passed"])
        refused = [m for m in sample.messages if isinstance(m, ChatMessageTool) and m.error is not None]
        assert [m.error.message for m in refused if m.error] == [
            "the task is over: it was ended with done(status='infeasible')"]
    assert scores == {"todo.infeasible_ghost_list@1": (1.0, True), "todo.mark_done@1": (0.0, False)}
    # the claim is the episode's last step in its trajectory, as cua eval writes it
    for folder in (tmp_path / "traj").iterdir():
        traj = read_trajectory(folder)
        assert [s.action for s in traj.steps if s.action] == [
            {"type": "done", "status": "infeasible", "answer": "there is no such list"}]
