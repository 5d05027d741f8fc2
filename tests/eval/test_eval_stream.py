"""`cua eval --stream` (issue 35, item 6): an ordered list of tasks in ONE sandbox, without
resets between them, each judged in turn on the state the earlier ones left. On the todo app
in a real browser (shared isolation): a stream whose second task needs the first one's todo
passes only without resets; a later task's judge diffs against the carried state, so an
earlier task's change is not its collateral, where against the reset state it would be; the
records and the summary say the stream, the positions and success with and without resets.
Bad input (a stream file naming no task, tasks that cannot share a sandbox) is refused with
a typed error before any sandbox starts."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml
from _eval_common import report_cards

from cua.cli import main
from cua.episode.agent import OracleAgent
from cua.episode.openers import sandbox_opener
from cua.eval.records import EvalRecord
from cua.eval.runner import read_records, run_jobs
from cua.eval.stream import StreamExecutor, stream_id, stream_jobs
from cua.task import JudgeInput
from cua.tasks.loader import load_file
from cua.tasks.registry import SUITES_DIR

TITLE = "Feed the cat"
ADD, FINISH, MARK = "relay.add@1", "relay.finish@1", "relay.mark_done@1"


def _relay(folder: Path) -> Path:
    """Three todo tasks: add a todo, finish THAT todo (it exists only after the first task; its
    start page is the list's), and the bundled mark-done task (a seeded todo, from the lists page)."""
    bundled = yaml.safe_load((SUITES_DIR / "todo" / "edit.yaml").read_text())
    mark = next(t for t in bundled["templates"] if t["id"] == "todo.mark_done@1")
    mark["id"] = MARK
    add = {"id": ADD, "instruction": f'Add a todo "{TITLE}" to the Inbox list.',
           "judge": {"checks": [{"check": "the todo is in the Inbox, open and plain",
                                 "get": {"kind": "sql", "query": "SELECT list_id, done, due, priority, tags, notes FROM "
                                                                 f"todos WHERE title = '{TITLE}'"},
                                 "expect": {"op": "table", "rows": [{"list_id": 1, "done": 0, "due": None,
                                                                     "priority": "normal", "tags": "", "notes": ""}]}}],
                     "expected_changes": [f"todos[title={TITLE}]"]},
           "oracle": [{"click": 'a[data-list="Inbox"]'},
                      {"fill": {"selector": "form[data-form=add-todo] input[name=title]", "text": TITLE}},
                      {"click": "form[data-form=add-todo] button[data-action=add]"}]}
    finish = {"id": FINISH, "instruction": f'Mark the todo "{TITLE}" as done.',
              "sandbox": {"kind": "browser", "app": "todo", "start_url": "/lists/1"},
              "judge": {"checks": [{"check": "the todo is done",
                                    "get": {"kind": "sql", "query": f"SELECT done FROM todos WHERE title = '{TITLE}'"},
                                    "expect": {"op": "table", "rows": [{"done": 1}]}}],
                        "expected_changes": [f"todos[title={TITLE}].done"]},
              "oracle": [{"click": f'input[aria-label="Done: {TITLE}"]'}]}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "relay.yaml"
    path.write_text(yaml.safe_dump({"suite": "relay", "defaults": {**bundled["defaults"], "max_steps": 10},
                                    "templates": [add, finish, mark]}, sort_keys=False))
    return path


def _eval(*args: str) -> int:
    return main(["eval", *args, "--policy", "oracle", "--local", "--isolation", "shared", "--no-progress",
                 "--no-report"])


def _first_url(run: Path, record: EvalRecord) -> str:
    line = (run / str(record.trajectory) / "steps.jsonl").read_text().splitlines()[0]
    return str(json.loads(line)["observation"]["url"])


@pytest.mark.slow  # Chromium
def test_the_second_task_passes_only_on_the_state_the_first_left(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    suite = _relay(tmp_path / "suite")
    stream = tmp_path / "stream.txt"
    stream.write_text(f"# add, then finish it, then a seeded one\n{ADD}\n{FINISH}@0\n\n{MARK}\n")
    out = tmp_path / "run"
    assert _eval(str(suite), "--stream", str(stream), "--stream-resets", "--out", str(out)) == 0
    printed = capsys.readouterr().out
    records = [r for r in read_records(out / "episodes.jsonl") if isinstance(r, EvalRecord)]
    assert len(records) == 6 and all(r.stream is not None for r in records)
    sid = stream_id([(ADD, 0), (FINISH, 0), (MARK, 0)])
    carried = [r for r in records if r.stream is not None and r.stream.carried]
    reset = [r for r in records if r.stream is not None and not r.stream.carried]
    assert [(r.task_id, r.stream.id, r.stream.position, r.stream.length) for r in carried if r.stream] == [
        (ADD, sid, 0, 3), (FINISH, sid, 1, 3), (MARK, sid, 2, 3)]
    assert [bool(r.verdict and r.verdict.passed) for r in carried] == [True, True, True]
    # with its own reset the second task has no todo to finish; the others pass as before
    assert [bool(r.verdict and r.verdict.passed) for r in reset] == [True, False, True]
    # a start URL that differs from the last task's is navigated to, without a reset; one that is the same is not
    assert _first_url(out, carried[1]).endswith("/lists/1") and _first_url(out, carried[2]).endswith("/")
    summary = json.loads((out / "summary.json").read_text())
    got = summary["streams"][sid]
    assert got["success"] == 1.0 and got["success_reset"] == pytest.approx(2 / 3)
    assert [(p["task_id"], p["passed"], p["passed_reset"]) for p in got["positions"]] == [
        (ADD, True, True), (FINISH, True, False), (MARK, True, True)]
    assert f"stream={sid} success=1.000 success_with_resets=0.667" in printed
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["runner"]["stream"] == str(stream) and manifest["runner"]["stream_resets"] is True
    cards = {f"stream {sid} (3 tasks)": "100.0%", f"stream {sid} with resets": "66.7%"}
    assert report_cards(out, cards) == cards  # what a person sees: the HTML report's cards, in a real Chromium


@pytest.mark.slow  # Chromium
def test_an_earlier_change_is_collateral_against_the_reset_state_but_not_in_the_stream(tmp_path: Path) -> None:
    templates = {t.id: t for t in load_file(_relay(tmp_path / "suite"), suite="relay")}
    tasks = [(templates[ADD], 0), (templates[FINISH], 0), (templates[MARK], 0)]  # FINISH: MARK starts on the lists

    async def run() -> list[EvalRecord]:
        async with sandbox_opener(local=True) as opener:
            def executor() -> StreamExecutor:
                return StreamExecutor(opener, lambda _instance: OracleAgent(),
                                      config_overrides={"browser": {"isolation": "shared"}})

            _, records = await run_jobs(stream_jobs(tasks, resets=True), executor=executor, agent_name="oracle")
        return [r for r in records if isinstance(r, EvalRecord)]

    records = asyncio.run(run())
    carried = next(r for r in records if r.task_id == MARK and r.stream is not None and r.stream.carried)
    reset = next(r for r in records if r.task_id == MARK and r.stream is not None and not r.stream.carried)
    assert carried.verdict is not None and carried.verdict.passed and not carried.verdict.violations
    assert carried.judge_input is not None and reset.judge_input is not None
    assert TITLE in json.dumps(carried.judge_input.model_dump(mode="json")["initial"])  # its start: the carried state
    assert TITLE not in json.dumps(reset.judge_input.model_dump(mode="json")["initial"])
    # the same end state judged against the reset state: the first task's todo is collateral
    judge = templates[MARK].instantiate(0).judge
    against_reset = judge.evaluate(JudgeInput(initial=reset.judge_input.initial, final=carried.judge_input.final,
                                              done=None, steps=carried.steps))
    assert not against_reset.passed and any(TITLE in v for v in against_reset.violations)


def test_bad_stream_input_gets_a_typed_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = _relay(tmp_path / "suite")
    fake = tmp_path / "fake.yaml"  # another sandbox kind: no one sandbox runs it with the todo tasks
    fake.write_text(yaml.safe_dump({"suite": "other", "defaults": {"sandbox": {"kind": "fake"}}, "templates": [
        {"id": "other.noop@1", "instruction": "Nothing.", "oracle": [],
         "judge": {"checks": [{"check": "no submission", "get": {"kind": "app_state", "path": "submissions"},
                               "expect": {"op": "length", "max": 0}}]}}]}))
    cases = {
        "mixed": (f"{ADD}\nother.noop@1\n", [str(fake)],
                  "do not share the first task's sandbox (relay.add@1@0: kind browser"),
        "seeds": (f"{ADD}@0\n{FINISH}@1\n", [], f"{FINISH}@1 (position 1)"),
        "unknown": (f"{ADD}\nrelay.nothing@1\n", [], "no such task: line 2: 'relay.nothing@1'"),
        "empty": ("# nothing\n", [], "names no task"),
    }
    for name, (text, more, says) in cases.items():
        path = tmp_path / f"{name}.txt"
        path.write_text(text)
        out = tmp_path / name
        assert _eval(str(suite), *more, "--stream", str(path), "--out", str(out)) == 2, name
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, (name, err)
        assert not out.exists()
    for args, says in ((["--stream", str(tmp_path / "missing.txt")], "cannot read it"),
                       (["--stream", "--repeats", "2"], "does not combine with --repeats"),
                       (["--stream-resets"], "give --stream too")):
        assert _eval(str(suite), *args, "--out", str(tmp_path / "x")) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, (args, err)
