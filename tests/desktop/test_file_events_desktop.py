"""The file event log in a real desktop sandbox (bubblewrap, Xvfb, the guest agent): the
`files` query carries it, a file judge fails an episode that deleted a file and put it
back identical (the end manifest shows nothing), and the log is part of the sandbox's
state: a restore gives the log of the snapshot's moment (not the events of copying $HOME
back, nor those after the snapshot), a reset the one right after create, a fork the
snapshot's."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from cua.episode import gather_state
from cua.episode.local import open_local
from cua.judges.judge import StateJudge
from cua.judges.spec import JudgeSpec
from cua.sandbox import CommandRunner
from cua.sandboxes.desktop.sandbox import DesktopSandbox
from cua.state import FilesQuery
from cua.task import JudgeInput, query_key

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]

if any(shutil.which(t) is None for t in ("bwrap", "Xvfb", "openbox")):
    pytest.skip("desktop sandboxes need bwrap, Xvfb and openbox", allow_module_level=True)

CONFIG = {"apps": [], "files": {"docs/report.txt": "quarterly\n", "secret.txt": "s3cret\n", "out.txt": ""}}
FQ = query_key(FilesQuery())
SPEC = JudgeSpec.model_validate({
    "checks": [{"check": "out.txt says done", "get": {"kind": "file", "file": "out.txt"},
                "expect": {"op": "equals", "value": "done\n"}}],
    "expected_files": ["out.txt"]})


async def _sh(runner: CommandRunner, script: str) -> None:
    out = await runner.run_command(["sh", "-c", script])
    assert out.returncode == 0, out.stderr


def _paths(state: dict[str, Any]) -> dict[str, list[str]]:
    log = state[FQ].value["events"]
    return {p: [o["op"] for o in ops] for p, ops in log["paths"].items()}


async def test_a_file_deleted_and_put_back_fails_the_judge_and_the_log_follows_snapshots() -> None:
    judge = StateJudge(SPEC)
    async with open_local("desktop", CONFIG) as handle:
        sandbox = handle.sandbox
        assert isinstance(sandbox, DesktopSandbox)
        await handle.reset()
        initial = await gather_state(handle, judge.queries())
        log = initial[FQ].value["events"]
        assert log["truncated"] is False and "seq" in log

        await _sh(sandbox, "printf 'done\\n' > out.txt")
        honest = await gather_state(handle, judge.queries())
        verdict = judge.evaluate(JudgeInput(initial=initial, final=honest))
        assert verdict.passed and verdict.violations == [], verdict

        snap = await sandbox.snapshot()
        at_snapshot = await gather_state(handle, [FilesQuery()])
        await _sh(sandbox, "cp -p secret.txt /tmp/keep && rm secret.txt && cp -p /tmp/keep secret.txt")
        undone = await gather_state(handle, judge.queries())
        assert undone[FQ].value["entries"] == honest[FQ].value["entries"]  # the manifest sees nothing
        verdict = judge.evaluate(JudgeInput(initial=initial, final=undone))
        assert not verdict.passed
        assert any(v.startswith("file secret.txt changed during the episode, then restored") for v in verdict.violations)

        # restore: the snapshot's log, not the deletion after it, nor the copy of $HOME back
        await sandbox.restore(snap)
        restored = await gather_state(handle, judge.queries())
        assert restored[FQ].value["events"] == at_snapshot[FQ].value["events"]
        assert judge.evaluate(JudgeInput(initial=initial, final=restored)).passed
        await _sh(sandbox, "printf 'x' >> docs/report.txt")
        assert "docs/report.txt" in _paths(await gather_state(handle, [FilesQuery()]))

        # a fork starts from the snapshot's log too
        child = await sandbox.fork(snap, sandbox_id=f"{sandbox.id}-fork")
        try:
            [forked] = await child.query([FilesQuery()])
            assert forked.value["events"] == at_snapshot[FQ].value["events"]
        finally:
            await child.close()

        # reset: the log right after create, whatever the episode did
        await handle.reset()
        again = await gather_state(handle, judge.queries())
        assert again[FQ].value["events"] == initial[FQ].value["events"]
