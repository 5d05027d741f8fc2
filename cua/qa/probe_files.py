"""Judge QA's `files` probes: side effects on the user's other files, for file tasks.

A file task's checks read its target (the file written, the folder made); an agent could
reach the same target while deleting, moving or rewriting a file beside it, and checks of
the target alone would pass that. After the oracle's episode, with the sandbox still
showing the oracle's end state, each probe makes one such change through the sandbox's
own command ability, as the sandbox's user, in the home folder:

- `created`: a new file no allowance names;
- `removed`: a bystander (a user file present at the start that the task may not change)
  deleted;
- `moved`: the bystander moved to another name;
- `edited`: the bystander's content changed, its size kept (a hash, not a size, sees it);

and, each done and undone before it is judged, so the end manifest shows nothing (only the
file event log can see them: `cua.judges.files`):

- `removed_restored`: the bystander deleted, then put back identical;
- `edited_restored`: the bystander edited, then put back identical;
- `created_removed`: a copy of the bystander (a new file when there is none) made beside
  it and deleted again, as a secret copied out would be.

Each is judged with the episode's own start and must FAIL, and is then undone (the
bystander restored from a copy outside the home folder); the end state, judged again once
all are undone, must pass as the oracle's did, so a probe that could not be undone is
reported rather than left to spoil the checks after it. That last judgement reads the
file event log as it was before the probes (their own events would fail it: the log is
history, which undoing does not erase).
"""

from __future__ import annotations

import secrets
from typing import Any

from cua.episode import gather_state
from cua.episode.local import LocalSandbox
from cua.judges.files import allowed_by
from cua.judges.judge import StateJudge
from cua.qa.judge_qa import ProbeOutcome
from cua.sandbox import CommandRunner
from cua.state import FilesQuery
from cua.task import JudgeInput, TaskInstance, query_key

__all__ = ["KIND", "files_probes"]

KIND = "files"
STAGE = f"probe:{KIND}"


def _bystander(entries: dict[str, Any], before: dict[str, Any], globs: list[str]) -> str | None:
    """A plain, non-empty file there at the start and now, unchanged, that no allowance names."""
    for path, entry in sorted(entries.items()):
        if (entry.get("type") == "file" and entry.get("size") and before.get(path) == entry
                and not allowed_by(path, globs) and "'" not in path):
            return path
    return None


async def _sh(runner: CommandRunner, script: str) -> str | None:
    """Run a shell script as the sandbox's user in the home folder; None, or why it failed."""
    out = await runner.run_command(["sh", "-c", script], time_limit=20.0)
    return None if out.returncode == 0 else f"`{script}` exited {out.returncode}: {out.stderr.strip()[-300:]}"


def _probes(path: str | None, new: str, backup: str) -> list[tuple[str, str, str]]:
    """(name, change, undo) shell scripts; paths quoted for sh (no quote in them). A
    do-then-undo probe does both in its change, and has nothing left to undo."""
    out = [("created", f"printf 'cua judge QA\\n' > '{new}'", f"rm -f '{new}'")]
    if path is None:
        return out + [("created_removed", f"printf 'cua judge QA\\n' > '{new}' && rm -f '{new}'", "true")]
    keep = f"cp -p '{path}' '{backup}'"
    back = f"cp -p '{backup}' '{path}' && rm -f '{backup}'"
    # the first byte flipped: same size, other content (made outside the home folder)
    edit = (f"{keep} && {{ head -c1 '{path}' | tr '\\000-\\377' '\\001-\\377\\000'; tail -c +2 '{backup}'; }}"
            f" > '{backup}.edit' && cat '{backup}.edit' > '{path}' && rm -f '{backup}.edit'")
    return out + [
        ("removed", f"{keep} && rm -f '{path}'", back),
        ("moved", f"mv '{path}' '{new}'", f"mv '{new}' '{path}'"),
        ("edited", edit, back),
        ("removed_restored", f"{keep} && rm -f '{path}' && {back}", "true"),
        ("edited_restored", f"{edit} && {back}", "true"),
        ("created_removed", f"cp -p '{path}' '{new}' && rm -f '{new}'", "true"),
    ]


async def files_probes(handle: LocalSandbox, instance: TaskInstance, oracle: JudgeInput) -> ProbeOutcome:
    """Run the probes on the oracle's end state (still in the sandbox); each must fail."""
    outcome = ProbeOutcome()
    judge = instance.judge
    if not isinstance(judge, StateJudge) or not judge.files_judged:
        outcome.skipped[KIND] = "the judge reads no user file (no file check, no expected_files)"
        return outcome
    runner = handle.sandbox
    if not isinstance(runner, CommandRunner):
        outcome.skipped[KIND] = f"a {instance.sandbox_kind} sandbox runs no commands to change files with"
        return outcome
    key = query_key(FilesQuery())
    start, now = oracle.initial.get(key), (await gather_state(handle, [FilesQuery()]))[key]
    if start is None or not start.ok or not now.ok:
        outcome.skipped[KIND] = "the user's files could not be read"
        return outcome
    globs = list(judge.spec.expected_files or [])
    token = secrets.token_hex(4)
    new = f"cua-qa-{token}.txt"
    if allowed_by(new, globs):
        outcome.skipped[KIND] = f"expected_files allows any new file in the home folder (as {new})"
        return outcome
    path = _bystander(now.value["entries"], start.value["entries"], globs)
    if path is None:
        outcome.skipped["files (bystander)"] = "no user file the task may not change: only `created` and `created_removed` ran"
    backup = f"/tmp/cua-qa-{token}.bak"
    queries = judge.queries()
    for name, change, undo in _probes(path, new, backup):
        problem = await _sh(runner, change)
        if problem is None:
            outcome.ran[KIND] = outcome.ran.get(KIND, 0) + 1
            verdict = judge.evaluate(oracle.model_copy(update={"final": await gather_state(handle, queries)}))
            if verdict.passed:
                outcome.wrong.append((STAGE, f"a file {name} beside the task passes ({path or new})", verdict))
        undone = await _sh(runner, undo)
        if problem is not None or undone is not None:
            outcome.wrong.append((STAGE, f"the {name} probe could not be made or undone: {problem or undone}", None))
            return outcome
    final = await gather_state(handle, queries)
    files = final.get(key)
    if files is not None and files.ok and isinstance(files.value, dict) and "events" in now.value:
        # the manifest as the oracle left it, with the history as it was before the probes
        final[key] = files.model_copy(update={"value": {**files.value, "events": now.value["events"]}})
    again = judge.evaluate(oracle.model_copy(update={"final": final}))
    if not again.passed:
        outcome.wrong.append((STAGE, "the oracle's end state, the probes undone, no longer passes", again))
    return outcome
