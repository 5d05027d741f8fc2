"""A judge's reads of a desktop must run no code the agent wrote (issue 29, probe set 4, class 5).

The agent owns the home folder: its dotfiles, ~/.local, any module it leaves there. The
env-var check used to take its verdict from `bash -ic 'printf ...'`, which sources the
agent's ~/.bashrc, so a `printf` function planted there forged the value; the office
readers ran `python3 -c` from the home folder, so a planted `zipfile.py` or a user
`usercustomize.py` ran inside the judge's reader. These tests plant exactly that in a real
desktop sandbox and judge it; the spec tests hold every template to the rule at load time.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from cua.episode.episode import gather_state
from cua.episode.local import open_local
from cua.judges.spec import CommandGetter
from cua.sandboxes.guest.queries import QueryContext, answer
from cua.state import CommandQuery
from cua.task import JudgeInput, TaskInstance
from cua.tasks.registry import get_template, list_templates

COMMAND = TypeAdapter(CommandGetter)


@pytest.mark.parametrize("argv", [
    ["bash", "-c", "true"],                        # a PATH lookup: ~/.local/bin/bash could answer
    ["/bin/bash", "-ic", "printf %s \"$X\""],      # interactive: sources ~/.bashrc
    ["/bin/bash", "-l", "-c", "true"],             # login: sources ~/.profile
    ["/bin/sh", "--login", "-c", "true"],
    ["/usr/bin/python3", "-c", "import zipfile"],  # the home folder on sys.path
    ["/usr/bin/python3", "-S", "-c", "import zipfile"],
])
def test_a_command_check_that_would_run_agent_code_is_refused_at_load(argv: list[str]) -> None:
    with pytest.raises(ValidationError):
        COMMAND.validate_python({"kind": "command", "argv": argv})


@pytest.mark.parametrize("argv", [
    ["/usr/bin/test", "-x", "run.sh"],
    ["/bin/sh", "-c", "/bin/tar tzf a.tar.gz | /bin/grep -c '\\.jpg$'"],  # `-c` inside the script is not an option
    ["/usr/bin/python3", "-I", "-S", "-c", "import sys", "budget.xlsx"],
    ["/usr/bin/git", "config", "--global", "user.name"],
])
def test_a_command_check_that_runs_only_system_code_loads(argv: list[str]) -> None:
    assert COMMAND.validate_python({"kind": "command", "argv": argv}).argv == argv


def test_every_desktop_and_office_template_loads_under_the_rule() -> None:
    """Each command a template's judge runs names its program by an absolute path and runs
    no interactive shell or non-isolated Python (the loader would refuse it otherwise)."""
    seen = 0
    for suite in ("desktop", "office"):
        for template in list_templates(suite):
            for query in template.instantiate(0).judge.queries():
                if isinstance(query, CommandQuery):
                    seen += 1
                    assert query.argv[0].startswith("/"), (template.id, query.argv[:3])
    assert seen > 40


# --- planted in a real desktop sandbox (Xvfb, bwrap, the guest agent) ---

needs_desktop = pytest.mark.skipif(any(shutil.which(t) is None for t in ("bwrap", "Xvfb", "openbox", "xterm")),
                                   reason="desktop sandboxes need bwrap, Xvfb, openbox and xterm")


async def _judge(instance: TaskInstance, files: dict[str, str]) -> tuple[bool, dict[str, Any]]:
    """Seed the instance's home with `files` on top of its own, and judge that state as both
    the initial and the final one (nothing changed during the episode). No app runs: a
    broken ~/.bashrc would end the terminal, and the judge needs none."""
    config = {**instance.sandbox_config, "apps": [],
              "files": {**instance.sandbox_config.get("files", {}), **files}}
    async with open_local("desktop", config) as handle:
        await handle.reset()
        state = await gather_state(handle, instance.judge.queries())
    verdict = instance.judge.evaluate(JudgeInput(initial=state, final=state))
    commands = {k: r.value for k, r in state.items() if r.ok and isinstance(r.value, dict) and "stdout" in r.value}
    return bool(verdict.passed), commands


@pytest.mark.slow
@pytest.mark.asyncio
@needs_desktop
async def test_a_forged_printf_in_bashrc_no_longer_sets_the_variable() -> None:
    instance = get_template("desktop.env_var@1").instantiate(0)
    var, value = instance.params["var"], instance.params["value"]
    rc = instance.sandbox_config["files"][".bashrc"]
    forged = {
        "a printf function": f"printf() {{ builtin printf %s {value}; }}\n",     # the red team's probe
        "an exec function": f"exec() {{ builtin printf %s {value}; }}\n",
        "an echo, then exit": f"builtin echo -n {value}; exit 0\n",
        "a shell variable, not exported": f"{var}={value}\n",
    }
    for how, line in forged.items():
        passed, _ = await _judge(instance, {".bashrc": rc + line})
        assert not passed, f"{how} in ~/.bashrc passed without {var} in the environment"
    passed, _ = await _judge(instance, {".bashrc": rc + f"export {var}={value}\n"})
    assert passed, "exporting the variable in ~/.bashrc is the task"


def _system_python_version() -> str:
    done = subprocess.run(["/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.slow
@pytest.mark.asyncio
@needs_desktop
async def test_an_office_reader_imports_no_module_the_agent_planted() -> None:
    instance = get_template("office.calc_sum_total@1").instantiate(0)
    forge = "import sys\nsys.stdout.write('FORGED BY THE AGENT\\n')\nsys.exit(0)\n"
    site = f".local/lib/python{_system_python_version()}/site-packages"
    planted = {"zipfile.py": forge, "xml/__init__.py": forge, "sys.py": forge,
               f"{site}/usercustomize.py": forge, f"{site}/zipfile.py": forge}
    clean_verdict, clean = await _judge(instance, {})
    verdict, commands = await _judge(instance, planted)
    assert commands and all("FORGED" not in out["stdout"] for out in commands.values()), commands
    assert [out["stdout"] for out in commands.values()] == [out["stdout"] for out in clean.values()]
    assert verdict == clean_verdict


def test_a_judge_command_finds_no_program_or_module_in_the_home_folder(tmp_path: Path) -> None:
    """The guest answers an OSWorld-style command (`sh -c "python3 -c ..."`: bare names, run
    from the home folder) with the system PATH and PYTHONSAFEPATH, even where its own PATH
    starts in the home folder (Ubuntu's ~/.profile puts ~/.local/bin and ~/bin first): neither
    a planted ~/.local/bin/python3 nor a planted ./json.py answers for the judge."""
    home = tmp_path / "home"
    for name in (".local/bin/python3", "bin/python3", ".local/bin/sh"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("#!/bin/sh\necho FORGED\n")
        (home / name).chmod(0o755)
    (home / "json.py").write_text("print('FORGED')\n")
    env = {"HOME": str(home), "PATH": f"{home}/.local/bin:{home}/bin:/usr/bin:/bin"}
    ctx = QueryContext(str(home), env, windows=lambda: {})
    for argv in (["sh", "-c", "python3 -c 'import json; print(json.dumps(1))'"],
                 ["/bin/sh", "-c", "python3 -c 'import json; print(json.dumps(1))'"]):
        result = answer({"kind": "command", "argv": argv}, ctx)
        assert result["ok"], result
        assert result["value"]["stdout"] == "1\n", (argv, result["value"])
    relative = answer({"kind": "command", "argv": [".local/bin/python3", "-c", "1"]}, ctx)
    assert not relative["ok"] and relative["error"] == "failed"
