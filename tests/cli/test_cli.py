"""The `cua` command line: wiring, and a part with missing dependencies breaking only itself."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cua import cli


@pytest.mark.slow  # a subprocess or thousands of frames: seconds even on an idle machine
def test_tasks_list_prints_one_suite_per_line_name_then_count() -> None:
    proc = subprocess.run([sys.executable, "-m", "cua.cli", "tasks", "list"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert {"todo", "shop", "mail", "desktop", "miniwob"} <= {r[0] for r in rows}
    assert all(len(r) == 2 and int(r[1]) > 0 for r in rows)
    assert sum(int(r[1]) for r in rows if r[0] not in ("desktop", "miniwob", "todo")) >= 150


def test_a_command_whose_module_is_missing_fails_alone_and_clearly(monkeypatch, capsys) -> None:
    monkeypatch.setitem(cli.COMMANDS, "vm", ("cua.sandboxes.no_such_part.cli", "vm"))
    assert cli.main(["vm", "build"]) == 2
    assert "pip install 'cua[vm]'" in capsys.readouterr().err
    # Every other command still parses.
    with pytest.raises(SystemExit) as exc:
        cli.main(["tasks", "--help"])
    assert exc.value.code == 0


def test_unknown_command_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["teleport"])
    assert exc.value.code == 2
