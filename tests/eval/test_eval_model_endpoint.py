"""`cua eval --policy openai:MODEL@URL` against a real loopback HTTP server speaking the chat
completions wire format (stdlib `http.server` in a thread, answers scripted per test), on the
in-process `fake` kind: the model's name reaches every trajectory and the export, a model's
HTTP 500s are kept in the trajectory and the report, a model nothing answers for stops the run
before any sandbox starts, and one lost mid-run stops it after a few episodes, exit code 3."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _model_server import CLICK, DONE, MODEL, ModelServer

from cua.cli import main
from cua.trajectory import read_trajectory

TASK = "fake.set_counter@1"


@pytest.fixture
def model() -> Iterator[ModelServer]:
    server = ModelServer()
    yield server
    server.close()


def _eval(out: Path, url: str, *extra: str) -> int:
    return main(["eval", TASK, "--local", "--no-progress", "--policy", f"openai:{MODEL}@{url}",
                 "--family", "qwen2.5-vl", "--out", str(out), *extra])


def _only_trajectory(out: Path) -> Any:
    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    return read_trajectory(out / json.loads(line)["trajectory"])


def test_the_model_name_is_in_every_trajectory_and_the_export_and_observe_says_what_was_in_force(
        model: ModelServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    model.plan = [CLICK]
    assert _eval(out, model.url, "--no-report") == 0
    manifest = json.loads((out / "manifest.json").read_text())
    traj = _only_trajectory(out)
    assert traj.meta.agent.model == manifest["policy"]["model"] == MODEL
    # the observation settings in force, defaults included (a default run wrote {})
    assert manifest["observe"] == {**traj.meta.observe, "history": 3}
    assert manifest["observe"]["screenshot"] is True and manifest["observe"]["quality"] == 80
    assert main(["export", str(out), "--format", "jsonl", "--out", str(tmp_path / "data")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "data" / "data" / "train.jsonl").read_text().splitlines()]
    assert rows and {r["agent_model"] for r in rows} == {MODEL}
    # one numbering: the index line, the trajectory and the export count steps from 0
    record = json.loads((out / "episodes.jsonl").read_text())
    assert [a["index"] for a in record["actions"]] == [s.index for s in traj.steps] == [r["step"] for r in rows] \
        == list(range(len(traj.steps)))


def test_http_500s_are_kept_in_the_trajectory_step_and_the_report(model: ModelServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    model.plan = [500, 502, CLICK, DONE]
    assert _eval(out, model.url) == 0
    traj = _only_trajectory(out)
    first = traj.steps[0]
    assert first.retries is not None and [r.status for r in first.retries] == [500, 502]
    assert "upstream overloaded" in first.retries[0].error
    assert all(s.retries is None for s in traj.steps[1:])
    # the report's episode data carries them (test_report.py shows them in a browser)
    data = next((out / "report" / "data" / "ep" / "0").glob("*.js")).read_text()
    payload = json.loads(data[data.index(",") + 1: data.rindex(")")])
    assert [r["status"] for r in payload["steps"][0]["retries"]] == [500, 502]


def test_a_model_nothing_answers_for_stops_the_run_before_any_sandbox(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "run"
    assert _eval(out, f"http://127.0.0.1:{port}/v1") == 3
    err = capsys.readouterr().err
    assert "model_unreachable" in err and f"127.0.0.1:{port}" in err and "nothing was run" in err
    assert not out.exists()  # no run folder, no sandbox, no episode spent its retries


def test_a_model_lost_mid_run_stops_it_after_three_episodes_in_a_row(model: ModelServer, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    model.then = 503  # /models answers (the preflight passes), every completion fails
    assert _eval(out, model.url, "--seeds", "8", "--retries", "0", "--no-report") == 3
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 3 and {r["failure"] for r in records} == {"model_unreachable"}
    assert "3 episode(s) in a row could not reach the model" in capsys.readouterr().err
    # each lost attempt keeps the calls retried before the last one failed
    traj = read_trajectory(out / records[0]["trajectory"])
    assert traj.end is not None
    error = traj.end.attempts[-1].error
    assert error is not None and [r["status"] for r in error.details["retries"]] == [503] * 4
