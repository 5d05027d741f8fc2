"""File tasks see the user's other files (issue 29, defect class 7): the home folder's
manifest after reset and at the end, diffed, with `expected_files` naming what the task
may change; judge QA's `files` probes prove it per template.

The diff and glob rules are pure; the rest runs a real Xvfb desktop sandbox: a move
task's oracle passes, the same end state with another file deleted fails (before the
manifest, only the target was read, and it passed), and the probes all run and fail."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from cua.judges.files import allowed_by, file_violations, files_diff, glob_problem
from cua.judges.judge import StateJudge
from cua.judges.spec import JudgeSpec
from cua.state import FileQuery, FilesQuery, StateResult
from cua.task import JudgeInput, query_key

DESKTOP = all(shutil.which(t) for t in ("bwrap", "Xvfb", "openbox", "xterm"))


def _m(**files: str) -> dict[str, Any]:
    return {"entries": {p.replace("__", "/"): {"type": "file", "size": len(c), "sha256": f"h-{c}"}
                        for p, c in files.items()}, "truncated": False}


def test_diff_names_added_removed_changed_and_moved() -> None:
    before, after = _m(a="1", b="2", c="3"), _m(a="1", b="9", d="3", e="5")
    assert files_diff(before, after) == {"added": ["d", "e"], "removed": ["c"], "changed": ["b"],
                                         "moved": [{"from": "c", "to": "d"}], "events": None, "ever": None}
    assert file_violations(before, after, ["b", "e"]) == ["file c moved to d"]
    assert file_violations(before, after, ["b", "c", "d", "e"]) == []


def test_globs_stay_in_their_folder_and_refuse_everything() -> None:
    assert allowed_by("out/x/y.txt", ["out/**"]) and allowed_by("out", ["out/**"])
    assert not allowed_by("out/x/y.txt", ["out/*"]) and allowed_by("out/y.txt", ["out/*"])
    assert not allowed_by("notes.txt", ["*.log"]) and not allowed_by("a/b.log", ["*.log"])
    assert allowed_by("a/b.log", ["**/*.log"]) and glob_problem("logs/**/*.log") is None
    for bad in ("*", "**", "**/*", "/etc/passwd", "../x", "*.txt", "**/*.log"):
        assert glob_problem(bad) is not None
    with pytest.raises(ValueError, match="expected file"):
        JudgeSpec.model_validate({"checks": [], "expected_files": ["**"]})


def test_a_file_check_turns_the_rule_on_and_a_truncated_manifest_fails() -> None:
    spec = JudgeSpec.model_validate({"checks": [{"check": "t", "get": {"kind": "file", "file": "t.txt"},
                                                 "expect": {"op": "equals", "value": "x"}}]})
    judge = StateJudge(spec)
    assert judge.files_judged and FilesQuery() in judge.queries()
    fq, tq = query_key(FilesQuery()), query_key(FileQuery(path="t.txt"))
    before = {fq: StateResult(value=_m(keep="k")), tq: StateResult(value="")}
    ok = {fq: StateResult(value=_m(keep="k", t__txt="x")), tq: StateResult(value="x")}
    # the target is the only check: before expected_files, a task had to name it
    assert judge.evaluate(JudgeInput(initial=before, final=ok)).violations == ["file t/txt created"]
    spec = spec.model_copy(update={"expected_files": ["t/txt"]})
    assert StateJudge(spec).evaluate(JudgeInput(initial=before, final=ok)).passed
    gone = {fq: StateResult(value=_m(t__txt="x")), tq: StateResult(value="x")}
    verdict = StateJudge(spec).evaluate(JudgeInput(initial=before, final=gone))
    assert not verdict.passed and verdict.violations == ["file keep removed"]
    cut = {fq: StateResult(value={**_m(t__txt="x"), "truncated": True}), tq: StateResult(value="x")}
    assert not StateJudge(spec).evaluate(JudgeInput(initial=before, final=cut)).passed


@pytest.mark.slow
@pytest.mark.asyncio
@pytest.mark.skipif(not DESKTOP, reason="desktop sandboxes need bwrap, Xvfb, openbox and xterm")
async def test_a_move_that_also_deletes_another_file_fails_in_a_real_desktop() -> None:
    from cua.episode import OracleAgent, gather_state, run_episode
    from cua.episode.local import open_local
    from cua.qa.probe_files import files_probes
    from cua.sandbox import CommandRunner
    from cua.tasks.registry import get_template

    instance = get_template("desktop.move_into_folder@1").instantiate(0)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        record = await run_episode(handle, instance, OracleAgent())
        assert record.verdict is not None and record.verdict.passed and record.judge_input is not None
        oracle = record.judge_input

        outcome = await files_probes(handle, instance, oracle)
        # created, removed, moved, edited; removed_restored, edited_restored, created_removed
        assert outcome.ran == {"files": 7} and outcome.wrong == [], outcome

        runner = handle.sandbox
        assert isinstance(runner, CommandRunner)
        start = oracle.initial[query_key(FilesQuery())].value["entries"]
        other = next(p for p, e in sorted(start.items())
                     if e["type"] == "file" and not allowed_by(p, list(instance.judge.spec.expected_files or [])))
        assert (await runner.run_command(["rm", "--", other])).returncode == 0
        verdict = instance.judge.evaluate(oracle.model_copy(
            update={"final": await gather_state(handle, instance.judge.queries())}))
        assert not verdict.passed and f"file {other} removed" in verdict.violations
        # the task's own checks still pass: only the manifest sees the deletion
        assert all(e.passed for e in verdict.evidence if e.check != "no other file created, removed, moved or changed")
        # a permission taken away is a change too
        third = next(p for p, e in sorted(start.items()) if e["type"] == "file" and p != other
                     and not allowed_by(p, list(instance.judge.spec.expected_files or [])))
        assert (await runner.run_command(["chmod", "a-w", "--", third])).returncode == 0
        verdict = instance.judge.evaluate(oracle.model_copy(
            update={"final": await gather_state(handle, instance.judge.queries())}))
        assert f"file {third} changed" in verdict.violations


def test_the_manifest_lists_the_startup_files_though_hidden(tmp_path: Path) -> None:
    """An alias planted in ~/.bashrc runs the agent's code in every later shell: the
    manifest lists the home folder's startup files, though not other hidden entries
    (applications rewrite their own settings and caches as they run)."""
    from cua.sandboxes.guest.manifest import manifest

    (tmp_path / ".bashrc").write_text("alias ll='ls -l'\n")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "thumb").write_text("x")
    (tmp_path / ".lock").write_text("x")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / ".bashrc").write_text("not a startup file")
    entries = manifest(str(tmp_path), ["."])["entries"]
    assert ".bashrc" in entries and "docs" in entries
    assert not {".cache", ".cache/thumb", ".lock", "docs/.bashrc"} & set(entries)
