"""A proposing model (issue 38): a scripted OpenAI-compatible server proposes a good, a broken
and cheating templates; `cua tasks synth --model` admits only the good one."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from _model_server import ModelServer

from cua.cli import main
from cua.synth import todo_gen
from cua.synth.admit import screen
from cua.synth.propose import parse_answer


def _good() -> dict[str, Any]:
    template = copy.deepcopy(next(g for g in todo_gen.generate(40) if g.chain == "mark_done").template)
    template["id"] = "mine.whatever@1"  # a model's id: rewritten into the suite
    return template


def _proposals() -> list[dict[str, Any]]:
    good = _good()
    broken = {"id": "x@1", "instruction": "Do something.", "judge": "the model forgot the format"}
    blind = copy.deepcopy(good)  # reads nothing the task changes
    blind["judge"]["checks"] = [{"check": "the list exists", "get": {"kind": "app_state", "path": "lists[id={todo.list_id}]"},
                                 "expect": {"op": "present"}}]
    lax = copy.deepcopy(good)  # the no-op passes: either value of the flag will do
    lax["judge"]["checks"] = [{"check": "the todo is done or not", "get": {
        "kind": "sql", "query": "SELECT COUNT(*) FROM todos WHERE id = ? AND done IN (0, 1)",
        "params": ["{todo.id}"], "scalar": True}, "expect": {"op": "equals", "value": 1}}]
    forged = copy.deepcopy(good)  # writes the state with a forged request instead of the UI
    forged["oracle"] = [{"goto": "javascript:fetch('/todos/{todo.id}/toggle', {method: 'POST'})"}]
    return [good, broken, blind, lax, forged]


def _answer(templates: list[dict[str, Any]]) -> str:
    return "Here are my tasks:\n```yaml\n" + yaml.safe_dump(templates, sort_keys=False) + "```\n"


@pytest.fixture
def model() -> Iterator[ModelServer]:
    server = ModelServer()
    try:
        yield server
    finally:
        server.close()


def test_parsed_proposals_get_suite_ids_and_forged_oracles_are_refused_before_qa() -> None:
    cands = parse_answer(_answer(_proposals()) + "```yaml\n[unclosed\n```", "model:m", "synth_todo")
    assert len(cands) == 6 and all(c.template["id"].startswith("synth_todo.proposed_") for c in cands)
    outcomes, to_check = screen("synth_todo", cands)
    got = [o.rejection if o else None for o in outcomes]
    # good, blind and lax load (blind fails completeness at load); the forged oracle never runs
    assert got == [None, "load", "load", None, "oracle_not_ui", "load"]
    assert [i for i, _, _ in to_check] == [0, 3]


@pytest.mark.slow
def test_synth_with_a_scripted_model_admits_only_the_good_proposal(model: ModelServer, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUA_QA_CACHE_DIR", str(tmp_path / "verdicts"))
    model.plan = [_answer(_proposals())]
    rc = main(["tasks", "synth", "--app", "todo", "--count", "1", "--model", f"openai:m@{model.url}",
               "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "schema" in json.dumps(model.calls[0]["messages"]) and "CREATE TABLE todos" in json.dumps(model.calls[0])
    # the app's start page goes with them, as an image part (a PNG of the page, not an empty frame)
    images = [p["image_url"]["url"] for p in model.calls[0]["messages"][0]["content"] if p["type"] == "image_url"]
    assert len(images) == 1 and images[0].startswith("data:image/")
    assert len(base64.b64decode(images[0].partition(",")[2])) > 5_000
    suite = yaml.safe_load((tmp_path / "synth_todo" / "synth_todo.yaml").read_text())
    assert [t["instruction"] for t in suite["templates"]] == [_good()["instruction"]]
    rejected = [json.loads(line) for line in (tmp_path / "synth_todo.rejected.jsonl").read_text().splitlines()]
    # broken and blind do not load; lax passes on the untouched state (judge QA's no-op stage); forged is no UI
    assert sorted(r["rejection"] for r in rejected) == ["initial", "load", "load", "oracle_not_ui"]
    assert "admitted_per_min=" in out and "generator model:m: admitted 1/5" in out
    # the admitted one's verdict is stored where judge QA finds it; nothing for the rejected
    assert f"stored 1 verdicts in {tmp_path / 'verdicts'}" in out and len(list((tmp_path / "verdicts").glob("*.json"))) == 1


def test_an_unreachable_model_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "synth", "--model", "openai:m@http://127.0.0.1:9/v1", "--out", str(tmp_path)]) == 3
    assert "could not be asked" in capsys.readouterr().err
    assert main(["tasks", "synth", "--model", "gpt", "--out", str(tmp_path)]) == 2
