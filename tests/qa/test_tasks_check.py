"""`cua tasks check`: judge QA in real sandboxes (real Chromium, the real todo app).

Broken tasks must be reported with their reason, never crash the check; the bundled
todo suite must pass.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import textwrap

import pytest

from cua import tasks_cli
from cua.qa.check import check_templates
from cua.tasks.loader import load_text

pytestmark = pytest.mark.skipif(
    not (shutil.which("chromium-headless-shell") or shutil.which("chromium")), reason="needs Chromium")

# Shared isolation keeps these quick; the container mode is the browser sandbox's own test.
BROKEN = """
suite: qa
defaults:
  sandbox: {kind: browser, app: todo, start_url: /, isolation: shared}
  tags: {app: todo}
templates:
  - id: qa.good@1
    instruction: Open the {list.name} list.
    params:
      list: {type: rows, sql: "SELECT id, name FROM lists ORDER BY id"}
    judge:
      checks:
        - {check: on the list, get: {kind: url, part: path}, expect: {op: equals, value: "/lists/{list.id}"}}
    oracle:
      - click: 'a.list-card[data-list="{list.name}"]'
    near_miss:
      - click: {selector: 'header nav a', text: Search}
  - id: qa.missing_element@1
    instruction: Click the thing.
    judge:
      checks:
        - {check: on search, get: {kind: url, part: path}, expect: {op: equals, value: /search}}
    oracle:
      - click: '#no-such-element'
    near_miss:
      - done: {}
  - id: qa.passes_at_start@1
    instruction: Look at the lists.
    judge:
      checks:
        - {check: on the index, get: {kind: url, part: path}, expect: {op: equals, value: /}}
    oracle:
      - done: {}
    near_miss:
      - done: {}
  - id: qa.no_rows@1
    instruction: Finish "{todo.title}".
    params:
      todo: {type: rows, sql: "SELECT id, title FROM todos WHERE priority = 'urgent'"}
    judge:
      checks:
        - {check: done, get: {kind: app_state, path: "todos[id={todo.id}].done"}, expect: {op: equals, value: true}}
    oracle:
      - done: {}
  - id: qa.side_effect@1
    instruction: Create the list Travel.
    judge:
      checks:
        - {check: list exists, get: {kind: sql, query: "SELECT COUNT(*) FROM lists WHERE name = 'Travel'", scalar: true},
           expect: {op: equals, value: 1}}
      expected_changes: []
    oracle:
      - fill: {selector: '#new-list', text: Travel, submit: true}
    near_miss:
      - done: {}
"""


@pytest.mark.slow  # Chromium and the todo app
def test_broken_tasks_are_reported_not_crashed_on() -> None:
    templates = load_text(textwrap.dedent(BROKEN), "qa.yaml", suite="qa")
    report = asyncio.run(check_templates(templates, seeds=[0, 1]))
    by_id = {t.template_id: t for t in report.templates}
    assert by_id["qa.good@1"].failures == [] and by_id["qa.good@1"].variants == 2

    missing = by_id["qa.missing_element@1"].failures
    assert {f.stage for f in missing} == {"oracle"} and {f.seed for f in missing} == {0, 1}
    assert all("no element matches '#no-such-element'" in f.reason for f in missing)

    start = by_id["qa.passes_at_start@1"].failures
    # a judge that passes at the start passes the parrot too: nothing done, the instruction typed back
    assert {f.stage for f in start} == {"initial", "near_miss", "probe:typed_answer"}
    assert any("already passes" in f.reason and f.evidence for f in start)

    no_rows = by_id["qa.no_rows@1"].failures
    assert {f.stage for f in no_rows} == {"instantiate"} and "found 0 row(s)" in no_rows[0].reason

    side = by_id["qa.side_effect@1"].failures
    oracle = [f for f in side if f.stage == "oracle"]
    assert len(oracle) == 2 and all(f.reason == "the oracle has side effects" for f in oracle)
    # the new list, whatever id the seed's lists leave it (the seed draws 5 to 9 of them)
    assert any(e["check"] == "no unexpected side effects" and re.search(r"lists\[id=\d+\]", str(e["observed"]))
               for e in oracle[0].evidence)

    assert report.summary() == f"templates=5 variants=10 failures={report.failures}"
    assert report.failures == 8  # two variants of each broken template
    lines = [line for f in side for line in f.lines()]
    assert lines[0].startswith("FAIL qa.side_effect@1 seed=")


@pytest.mark.slow
def test_cua_tasks_check_todo_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code = tasks_cli.main(["check", "todo", "--seeds", "1", "--parallel", "2"])
    out = capsys.readouterr().out
    last = out.strip().splitlines()[-1]
    assert code == 0, out
    assert last.startswith("templates=") and last.endswith(" failures=0"), out
    n = int(last.split()[0].split("=")[1])
    assert n >= 8 and f"variants={n}" in last


def test_cua_tasks_list(capsys: pytest.CaptureFixture[str]) -> None:
    tasks_cli.main(["list"])
    lines = capsys.readouterr().out.strip().splitlines()
    todo = next(line for line in lines if line.split()[0] == "todo")
    assert int(todo.split()[1]) >= 8


@pytest.mark.slow
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_ctrl_c_or_a_term_stops_a_check_with_a_message_and_leaves_no_process(tmp_path, signame) -> None:  # type: ignore[no-untyped-def]
    """Ctrl-C, or a supervisor's SIGTERM (a CI step's timeout): the checks are cancelled and
    their sandboxes closed; a SIGTERM used to kill the check outright and orphan its services."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    env = {**os.environ, "CUA_QA_CACHE_DIR": str(tmp_path / "verdicts")}
    proc = subprocess.Popen([sys.executable, "-m", "cua.tasks_cli", "check", "todo.rename", "--seeds", "1",
                             "--isolation", "shared"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)

    def descendants() -> dict[int, bytes]:
        """Every process under the check, by parent links (Chromium starts a session of its own)."""
        parents: dict[int, int] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
        found, frontier = set(), {proc.pid}
        while frontier:
            frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
            found |= frontier
        out: dict[int, bytes] = {}
        for pid in found:
            try:
                out[pid] = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
        return out

    deadline = time.monotonic() + 120
    # a renderer draws the app's page: the browser and the app host are up, the check under way
    while not any(b"--type=renderer" in cmd for cmd in descendants().values()):
        assert proc.poll() is None and time.monotonic() < deadline, "the check never started its sandbox"
        time.sleep(0.1)  # another process's children: polled
    under = descendants()  # the driver, the browser, the app host: none may outlive the check
    os.kill(proc.pid, getattr(signal, signame))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err, err
    deadline = time.monotonic() + 30
    while (left := [pid for pid in under if Path(f"/proc/{pid}").exists()]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"processes left behind: {[under[pid][:80] for pid in left]}"
