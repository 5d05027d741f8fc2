"""OSWorld-format tasks: loading a folder of task files (ours, written in that format),
unsupported functions named at load time, and the evaluators' real getters and metrics
on real office files (openpyxl, python-docx, python-pptx), fed the values a sandbox
answers. `test_os_task_end_to_end_on_the_vm` runs one on the vm kind."""

from __future__ import annotations

import asyncio
import base64
import shutil
from pathlib import Path
from typing import Any

import pytest

from cua.actions import Done
from cua.state import StateResult
from cua.task import JudgeInput, query_key
from cua.tasks.loader import TaskFormatError
from cua.tasks.osworld import OSWorldTemplate, load_osworld
from cua.tasks.osworld.getters import cache_path

TASKS = Path(__file__).parent / "test_osworld_tasks"


def _xlsx(path: Path, rows: list[list[Any]]) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    book.save(path)
    return path.read_bytes()


def _docx(path: Path, paragraphs: list[str]) -> bytes:
    import docx

    doc = docx.Document()
    for p in paragraphs:
        doc.add_paragraph(p)
    doc.save(str(path))
    return path.read_bytes()


def _pptx(path: Path, titles: list[str]) -> bytes:
    import pptx

    deck = pptx.Presentation()
    for title in titles:
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = title
    deck.save(str(path))
    return path.read_bytes()


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The local "cloud" cache: reference files keyed by URL."""
    root = tmp_path / "cache"
    root.mkdir()
    monkeypatch.setenv("CUA_OSWORLD_CACHE", str(root))
    return root


def _put(url: str, data: bytes) -> None:
    target = cache_path(url)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def _templates() -> dict[str, OSWorldTemplate]:
    templates, _ = load_osworld(TASKS)
    return {t.task.id: t for t in templates}


def _final(template: OSWorldTemplate, answers: list[StateResult]) -> JudgeInput:
    queries = template.instantiate(0).judge.queries()
    assert len(queries) == len(answers), queries
    return JudgeInput(final={query_key(q): a for q, a in zip(queries, answers)}, done=Done())


def _file_answer(data: bytes | None) -> StateResult:
    if data is None:
        return StateResult.failure("not_found", "/home/user/x does not exist")
    return StateResult(ok=True, value=base64.b64encode(data).decode())


def test_a_folder_loads_and_unsupported_functions_are_named() -> None:
    templates, problems = load_osworld(TASKS)
    assert sorted(t.task.id for t in templates) == ["cua-calc-total-0002", "cua-mixed-0004", "cua-os-hello-0001",
                                                     "cua-unsupported-0005", "cua-writer-title-0003"]
    [problem] = problems
    assert "cua-unsupported-0005" in str(problem)
    for name in ("config:googledrive", "metric:check_brightness_increase_and_structure_sim",
                 "getter:vm_window_size"):
        assert name in problem.reason
    bad = next(t for t in templates if t.task.id == "cua-unsupported-0005")
    with pytest.raises(TaskFormatError, match="metric:check_brightness"):
        bad.instantiate(0)


def test_the_registry_and_cli_take_a_folder_of_task_files(capsys: pytest.CaptureFixture[str]) -> None:
    from cua.tasks.registry import select_templates

    chosen = select_templates([str(TASKS)])
    assert {t.id for t in chosen} >= {"osworld.cua-os-hello-0001@1", "osworld.cua-calc-total-0002@1"}
    from cua.cli import main as cua_main

    cua_main(["tasks", "list"])
    out = capsys.readouterr()
    assert "osworld 5" in out.out and "check_brightness" in out.err


def test_os_task_judges_command_output() -> None:
    t = _templates()["cua-os-hello-0001"]
    instance = t.instantiate(0)
    assert instance.sandbox_kind == "vm" and instance.sandbox_config["image"] == "office"
    ok = [StateResult(ok=True, value={"returncode": 0, "stdout": "hello.txt\n", "stderr": "", "truncated": False}),
          StateResult(ok=True, value={"returncode": 0, "stdout": "hi\n", "stderr": "", "truncated": False})]
    assert instance.judge.evaluate(_final(t, ok)).passed
    wrong_word = [ok[0], StateResult(ok=True, value={"returncode": 0, "stdout": "hi there\n", "stderr": "",
                                                     "truncated": False})]
    verdict = instance.judge.evaluate(_final(t, wrong_word))
    assert not verdict.passed and verdict.progress == 0.5  # and: one of two metrics held
    gave_up = _final(t, ok).model_copy(update={"done": Done(status="infeasible")})
    assert not instance.judge.evaluate(gave_up).passed


def test_calc_task_compares_the_saved_workbook(cache: Path, tmp_path: Path) -> None:
    _put("https://example.invalid/cua/budget.xlsx", _xlsx(tmp_path / "b.xlsx", [["Item", "Cost"], ["Rent", 900]]))
    gold = _xlsx(tmp_path / "g.xlsx", [["Item", "Cost"], ["Rent", 900], ["Total", "=SUM(B2:B2)"]])
    _put("https://example.invalid/cua/totals_gold.xlsx", gold)
    t = _templates()["cua-calc-total-0002"]
    instance = t.instantiate(0)
    # the download step puts the cached file in the sandbox before anything starts
    assert base64.b64decode(instance.sandbox_config["binary_files"]["/home/user/budget.xlsx"]) == \
        cache_path("https://example.invalid/cua/budget.xlsx").read_bytes()
    assert instance.judge.evaluate(_final(t, [_file_answer(gold)])).passed
    typed_value = _xlsx(tmp_path / "v.xlsx", [["Item", "Cost"], ["Rent", 900], ["Total", 900]])
    verdict = instance.judge.evaluate(_final(t, [_file_answer(typed_value)]))
    assert not verdict.passed, "a typed number is not the formula asked for"
    assert not instance.judge.evaluate(_final(t, [_file_answer(None)])).passed
    assert not instance.judge.evaluate(_final(t, [_file_answer(b"not a workbook")])).passed


def test_a_missing_cache_file_is_a_clear_error(cache: Path) -> None:
    with pytest.raises(TaskFormatError, match="not in the cache folder"):
        _templates()["cua-calc-total-0002"].instantiate(0)


def test_writer_task_runs_postconfig_inside_the_read(cache: Path, tmp_path: Path) -> None:
    _put("https://example.invalid/cua/report.docx", _docx(tmp_path / "r.docx", ["Draft", "Body"]))
    gold = _docx(tmp_path / "g.docx", ["Quarterly report", "Body"])
    _put("https://example.invalid/cua/report_gold.docx", gold)
    t = _templates()["cua-writer-title-0003"]
    instance = t.instantiate(0)
    [query] = instance.judge.queries()
    assert query.kind == "command" and "windowactivate" in query.argv[-1] and "base64 -w0" in query.argv[-1]
    as_command = StateResult(ok=True, value={"returncode": 0, "stdout": base64.b64encode(gold).decode(),
                                             "stderr": "", "truncated": False})
    assert instance.judge.evaluate(_final(t, [as_command])).passed
    near = _docx(tmp_path / "n.docx", ["Quarterly Report", "Body"])
    as_near = as_command.model_copy(update={"value": {**as_command.value, "stdout": base64.b64encode(near).decode()}})
    assert not instance.judge.evaluate(_final(t, [as_near])).passed


def test_or_of_slides_and_chrome_tabs(cache: Path, tmp_path: Path) -> None:
    _put("https://example.invalid/cua/deck_gold.pptx", _pptx(tmp_path / "g.pptx", ["Intro", "Plan"]))
    t = _templates()["cua-mixed-0004"]
    instance = t.instantiate(0)
    _, tabs_q = instance.judge.queries()
    assert tabs_q.kind == "command" and "remote-debugging-port" in tabs_q.argv[-1]
    tabs = [{"type": "page", "url": u, "title": ""} for u in ("http://127.0.0.1:8000/a", "http://127.0.0.1:8000/b")]
    import json

    tabs_ok = StateResult(ok=True, value={"returncode": 0, "stdout": json.dumps(tabs), "stderr": "", "truncated": False})
    wrong_deck = _pptx(tmp_path / "w.pptx", ["Intro"])
    assert instance.judge.evaluate(_final(t, [_file_answer(wrong_deck), tabs_ok])).passed  # or
    tabs_wrong = tabs_ok.model_copy(update={"value": {**tabs_ok.value, "stdout": json.dumps(tabs[:1])}})
    verdict = instance.judge.evaluate(_final(t, [_file_answer(wrong_deck), tabs_wrong]))
    assert not verdict.passed and len(verdict.evidence) == 2
    right_deck = _pptx(tmp_path / "r.pptx", ["Intro", "Plan"])
    assert instance.judge.evaluate(_final(t, [_file_answer(right_deck), tabs_wrong])).passed


@pytest.mark.slow
@pytest.mark.vm
@pytest.mark.timeout(1800)
@pytest.mark.asyncio
async def test_os_task_end_to_end_on_the_vm() -> None:
    """The config steps run in a real VM (a command, an xterm launched and waited for),
    the agent's keystrokes land through pixel actions, and the judge reads real state."""
    if shutil.which("qemu-system-x86_64") is None:
        pytest.skip("QEMU is not installed")
    from cua.actions import Type
    from cua.sandbox import create_sandbox
    from cua.state import StateQuery

    t = _templates()["cua-os-hello-0001"]
    instance = t.instantiate(0)
    config = {**instance.sandbox_config, "image": "desktop", "memory_mb": 512, "accel": "tcg", "boot_timeout": 900}
    sb = await create_sandbox("vm", config, sandbox_id="test-osworld")
    try:
        obs = await sb.reset()

        class Ctx:
            observation = obs

            async def query(self, q: StateQuery) -> StateResult:
                [r] = await sb.query([q])
                return r

        async for action in instance.setup.actions(Ctx()):
            await sb.act(action)
        judge = instance.judge
        before = await sb.query(judge.queries())
        initial = JudgeInput(final={query_key(q): r for q, r in zip(judge.queries(), before)}, done=Done())
        assert not judge.evaluate(initial).passed
        await sb.act(Type(text="echo hi > ~/notes/hello.txt\n"))
        for _ in range(300):
            answers = await sb.query(judge.queries())
            verdict = judge.evaluate(JudgeInput(final={query_key(q): r for q, r in zip(judge.queries(), answers)},
                                                done=Done()))
            if verdict.passed:
                break
            await asyncio.sleep(0.2)  # the guest's shell runs the typed line on an emulated CPU
        assert verdict.passed, verdict.evidence
    finally:
        await sb.close()
