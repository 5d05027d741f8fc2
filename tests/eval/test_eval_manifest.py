"""The manifest's `observe` holds every observation setting in force (a default run wrote
`{}`), and a run whose manifest was written the old way still resumes as the same experiment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cua.cli import main
from cua.observation import ObserveOptions

ARGS = ["eval", "fake.set_counter@1", "--policy", "noop", "--local", "--no-progress", "--no-report", "--seeds", "2"]


def test_observe_is_written_in_full_and_an_old_manifest_resumes(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main([*ARGS, "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["observe"] == {**ObserveOptions().model_dump(mode="json"), "history": None}
    assert {"screenshot": True, "format": "jpeg", "quality": 80, "axtree": False}.items() <= \
        manifest["observe"].items()
    # as a cua before this one wrote it: defaults left out
    manifest["observe"] = {}
    (out / "manifest.json").write_text(json.dumps(manifest))
    lines = (out / "episodes.jsonl").read_text().splitlines()
    (out / "episodes.jsonl").write_text(lines[0] + "\n")
    capsys.readouterr()
    assert main([*ARGS, "--out", str(out), "--resume"]) == 0
    assert "1 finished episode(s) kept, 1 to run" in capsys.readouterr().err
    # a setting that differs is still a different experiment
    assert main([*ARGS, "--out", str(out), "--resume", "--quality", "50"]) == 2
    assert "observe.quality: 80 -> 50" in capsys.readouterr().err
