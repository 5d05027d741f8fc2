"""The README's examples work: every command in README.md and docs/agents.md parses with the
real CLI and names tasks that exist, and every one that can run offline runs, in order, in a
fresh folder, as a user would type it. The rest are listed in EXCLUDED with the reason."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cua.cli import build_parser
from cua.tasks.registry import get_template, select_templates

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "docs" / "agents.md"]
VENV_BIN = Path(sys.executable).parent

#: Commands that do not run here, by their text (comment stripped), with why.
EXCLUDED = {
    "bash scripts/quickstart.sh": "sets a fresh machine up (apt packages, venv) before running a suite",
    "bash scripts/test.sh": "runs the whole test suite",
    "cua serve": "a server: runs until stopped",
    "cua eval shop --policy http://127.0.0.1:9000 --policy-token T": "needs a running policy server",
    "cua eval shop --policy openai:Qwen2.5-VL-7B@http://127.0.0.1:8000/v1 --family qwen2.5-vl --temperature 0 "
    "--max-tokens 512": "needs a model endpoint",
    "cua eval shop --ray auto --parallel 64 --policy http://policy-host:9000": "needs a Ray cluster and a policy server",
    "cua record shop.add_to_cart@1 --seed 4": "interactive: waits for a person to act in the live view",
}
#: Python blocks that do not run here, by a line they contain, with why.
EXCLUDED_PYTHON = {
    'async with cua.connect("ws://127.0.0.1:8765/v1/ws", token) as c:':
        "a fragment: top-level await, a running server and its token, and an elided services list",
    'trainer = GRPOTrainer(model="your/vlm",':
        "names a VLM checkpoint to download (no model hub here); tests/hubs/test_trl.py runs this trainer "
        "with the tiny Qwen2.5-VL",
}
#: What a command reads that the user is assumed to have.
FIXTURES = {
    "output.txt": "Thought: I click the Save button.\nAction: click(start_box='(640,360)')\n",
}


def _blocks(path: Path) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w+)\n(.*?)```", path.read_text(), re.DOTALL)]


def _commands() -> list[str]:
    out = []
    for doc in DOCS:
        for lang, body in _blocks(doc):
            if lang != "sh":
                continue
            for line in body.splitlines():
                command = re.sub(r"\s+#.*$", "", line).strip()
                if command and not command.startswith("#"):
                    out.append(command)
    return out


def _python_blocks() -> list[str]:
    return [body for doc in DOCS for lang, body in _blocks(doc) if lang == "python"]


def _argv(command: str) -> list[str]:
    """The `cua` arguments of a command line, without env assignments and redirections."""
    words = shlex.split(command)
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        words.pop(0)
    cut = next((i for i, w in enumerate(words) if w in ("<", ">", "|")), len(words))
    return words[1:cut]


def test_every_command_parses_and_names_tasks_that_exist() -> None:
    commands = _commands()
    assert commands, "no commands found"
    assert not set(EXCLUDED) - set(commands), f"excluded commands no longer in the docs: {set(EXCLUDED) - set(commands)}"
    written: list[Path] = []  # what earlier commands write (--out): a later one may read it
    for command in commands:
        if not command.startswith(("cua ", "PYTHONPATH=")):
            continue
        argv = _argv(command)
        try:
            args = build_parser(argv[0]).parse_args(argv)
        except SystemExit as exc:
            pytest.fail(f"`{command}` does not parse (exit {exc.code})")
        for word in argv:
            if re.fullmatch(r"[a-z_]+\.[a-z0-9_]+(@\d+)?", word):
                get_template(word)  # KeyError: the docs name a task that does not exist
        suites = [s for s in vars(args).get("suites") or []
                  if not any(Path(s).is_relative_to(out) for out in written)]
        if suites:
            assert select_templates(suites), command
        if isinstance(vars(args).get("out"), Path):
            written.append(vars(args)["out"])


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_every_offline_command_runs_as_written(tmp_path: Path) -> None:
    for name, text in FIXTURES.items():
        (tmp_path / name).write_text(text)
    example = next(b for b in _python_blocks() if "my_agents.py" in b)
    (tmp_path / "my_agents.py").write_text(example)
    # judge QA's verdicts as committed (a copy: what the commands check is stored there), so that
    # `cua tasks check` reuses what CI's own check reused a minute before, by the same digests
    verdicts = tmp_path / ".qa-verdicts"
    shutil.copytree(ROOT / ".ci" / "qa-verdicts", verdicts)
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200",
           "CUA_QA_CACHE_DIR": str(verdicts)}
    ran, failed = [], []
    for command in _commands():
        if command in EXCLUDED:
            continue
        proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=1800, check=False)
        if proc.returncode != 0:
            failed.append(f"`{command}` failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
        ran.append(command)
    for body in _python_blocks():
        if any(marker in body for marker in EXCLUDED_PYTHON) or "my_agents.py" in body:
            continue
        proc = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        if proc.returncode != 0:
            failed.append(f"python block failed:\n{body}\n{proc.stderr[-3000:]}")
    assert not failed, "\n\n".join(failed)
    assert any(c.startswith("cua eval todo") for c in ran) and "cua report runs/todo" in ran
    assert json.loads((tmp_path / "cua-protocol.schema.json").read_text())
    summary = json.loads((tmp_path / "runs" / "todo" / "summary.json").read_text())
    assert summary["episodes"] == summary["passed"] > 0  # the oracle passes every task
    assert (tmp_path / "runs" / "todo" / "report" / "index.html").exists()
    assert json.loads((tmp_path / "runs" / "mine" / "summary.json").read_text())["episodes"] > 0
