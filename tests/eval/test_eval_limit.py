"""`cua eval A B --limit N` runs the first N templates of each suite named (not N in all, which
left the second suite out without a word), says so in --help, and prints what it left out.
Two suites of the in-process `fake` kind, written as folders, stand in for shop and mail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cua.cli import main


def _suite(folder: Path, name: str, templates: int) -> Path:
    folder.mkdir(parents=True)
    lines = [f"suite: {name}", "defaults:", "  sandbox: {kind: fake}", "  tags: {app: fake}", "templates:"]
    for i in range(templates):
        lines += [f"  - id: {name}.t{i}@1", "    instruction: Set the counter to 10.", "    judge:",
                  "      checks:", "        - check: the counter shows 10",
                  "          get: {kind: app_state, path: count}", "          expect: {op: equals, value: 10}",
                  '    oracle: {python: "cua.tasks.suites.fake.oracles:set_counter"}', "    max_steps: 3"]
    (folder / "tasks.yaml").write_text("\n".join(lines) + "\n")
    return folder


def test_limit_is_per_suite_and_says_what_it_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shop, mail = _suite(tmp_path / "shop", "alpha", 4), _suite(tmp_path / "mail", "beta", 3)
    out = tmp_path / "run"
    assert main(["eval", str(shop), str(mail), "--limit", "2", "--policy", "noop", "--local", "--no-progress",
                 "--no-report", "--out", str(out)]) == 0
    ran = sorted(json.loads(line)["task_id"] for line in (out / "episodes.jsonl").read_text().splitlines())
    assert ran == ["alpha.t0@1", "alpha.t1@1", "beta.t0@1", "beta.t1@1"]
    err = capsys.readouterr().err
    assert "2 template(s) of alpha left out: alpha.t2@1, alpha.t3@1" in err
    assert "1 template(s) of beta left out: beta.t2@1" in err


def test_help_says_what_limit_counts() -> None:
    text = subprocess.run([sys.executable, "-m", "cua.cli", "eval", "--help"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "300"}).stdout
    assert "templates of each suite" in " ".join(text.split())
