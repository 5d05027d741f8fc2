"""Suites from anywhere: a folder of task files (or one file) outside the package runs with
`cua tasks list|check PATH` and `cua eval PATH`, with no entry point and no registration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cua.tasks.registry import SUITES_DIR

SOURCE_TASK = "todo.mark_done@1"


def _cua(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cua.cli", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env={**os.environ, "COLUMNS": "200"})


def _outside_suite(folder: Path) -> Path:
    """A suite `acme` in a folder of its own: the bundled mark-done template under a new id."""
    data = yaml.safe_load((SUITES_DIR / "todo" / "edit.yaml").read_text())
    template = next(t for t in data["templates"] if t["id"] == SOURCE_TASK)
    template["id"] = "acme.mark_done@1"
    folder.mkdir(parents=True)
    (folder / "tasks.yaml").write_text(yaml.safe_dump({"suite": "acme", "defaults": data["defaults"],
                                                       "templates": [template]}, sort_keys=False))
    return folder


@pytest.mark.slow  # a subprocess or thousands of frames: seconds even on an idle machine
def test_list_takes_a_folder_a_file_and_a_suite_name(tmp_path: Path) -> None:
    suite = _outside_suite(tmp_path / "elsewhere" / "my-suite")
    for name in (str(suite), str(suite / "tasks.yaml")):
        proc = _cua("tasks", "list", name, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ["acme.mark_done@1"]
    proc = _cua("tasks", "list", "todo", timeout=120)
    assert proc.returncode == 0 and SOURCE_TASK in proc.stdout.split()
    # a relative folder works from where the command runs
    proc = _cua("tasks", "list", "my-suite", cwd=suite.parent, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["acme.mark_done@1"], proc.stderr
    # a path that is not a suite is a clear error, not a traceback
    (tmp_path / "bad.yaml").write_text("templates: [{id: acme.x@1}]\n")
    proc = _cua("tasks", "list", str(tmp_path / "bad.yaml"), timeout=120)
    assert proc.returncode == 2 and "bad.yaml" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_check_and_eval_run_a_suite_from_an_outside_folder(tmp_path: Path) -> None:
    suite = _outside_suite(tmp_path / "my-suite")
    proc = _cua("tasks", "check", str(suite), "--seeds", "1")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "templates=1 " in proc.stdout and "failures=0" in proc.stdout
    out = tmp_path / "run"
    proc = _cua("eval", str(suite), "--policy", "oracle", "--local", "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["task_id"] == "acme.mark_done@1" and record["verdict"]["passed"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suites"][0]["name"] == "acme" and str(suite.resolve()) in manifest["suites"][0]["sources"]
