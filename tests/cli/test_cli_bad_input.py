"""Bad input to the command line is answered with a message and a non-zero exit code, never a
Python traceback: unknown suites, missing folders, task files that do not parse, OSWorld tasks
using a metric the adapter lacks (named with their file and task), policy specs that make no
policy, and numbers out of range. Each command runs as a person would run it, in a subprocess;
none gets as far as starting a sandbox."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest

OSWORLD_UNSUPPORTED = Path(__file__).resolve().parents[1] / "tasks" / "test_osworld_tasks" / "unsupported.json"
UNSUPPORTED = ("unsupported.json", "cua-unsupported-0005", "metric:check_brightness_increase_and_structure_sim")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("bad")
    (root / "malformed").mkdir()
    (root / "malformed" / "tasks.yaml").write_text("suite: broken\ntemplates: [oops\n")
    (root / "osworld").mkdir()
    shutil.copy(OSWORLD_UNSUPPORTED, root / "osworld" / "unsupported.json")
    return {"missing": str(root / "no-such-folder"), "malformed": str(root / "malformed"),
            "osworld": str(root / "osworld"), "out": str(root / "out")}


#: (argv, what the message must say). {missing}, {malformed}, {osworld}, {out} are filled in.
CASES: list[tuple[list[str], tuple[str, ...]]] = [
    (["tasks", "list", "nosuch"], ("unknown suite 'nosuch'",)),
    (["tasks", "list", "{missing}"], ("no such file or folder",)),
    (["tasks", "list", "{malformed}"], ("tasks.yaml", "not valid YAML")),
    (["tasks", "list", "{osworld}"], UNSUPPORTED),
    (["tasks", "show", "nosuch.x@1"], ("unknown suite 'nosuch'",)),
    (["tasks", "check", "nosuch"], ("unknown suite 'nosuch'",)),
    (["eval", "nosuch", "--local"], ("unknown suite 'nosuch'",)),
    (["eval", "{missing}", "--local"], ("no such file or folder",)),
    (["eval", "{malformed}", "--local"], ("tasks.yaml", "not valid YAML")),
    (["eval", "{osworld}", "--local", "--out", "{out}/ow"], UNSUPPORTED),
    (["eval", "fake", "--local", "--policy", "bogus:x", "--out", "{out}/p1"], ("unknown policy kind 'bogus'",)),
    (["eval", "fake", "--local", "--policy", "openai:just-a-model", "--out", "{out}/p2"],
     ("expected openai:MODEL@BASE_URL",)),
    (["eval", "fake", "--local", "--policy", "scripted:{missing}/steps.jsonl", "--out", "{out}/p3"],
     ("No such file or directory", "steps.jsonl")),
    (["eval", "fake", "--local", "--parallel", "0"], ("--parallel", "at least 1")),
    (["eval", "fake", "--local", "--seeds", "-1"], ("--seeds", "at least 1")),
    (["eval", "fake", "--local", "--seed-list", "a,b"], ("--seed-list", "'a' is not a whole number")),
    (["eval", "fake", "--local", "--limit", "0"], ("--limit", "at least 1")),
    (["eval", "fake", "--local", "--quality", "500"], ("--quality", "at most 100")),
    (["eval", "fake", "--local", "--retries", "many"], ("--retries", "not a whole number")),
    (["eval", "fake", "--local", "--history", "0", "--out", "{out}/h"], ("--history",)),
    (["eval", "fake", "--local", "--temperature", "9", "--out", "{out}/t"], ("--temperature",)),
    (["tasks", "check", "fake", "--seeds", "0"], ("--seeds", "at least 1")),
    (["tasks", "show", "fake.set_counter@1", "--seed", "-5"], ("--seed", "at least 0")),
    (["report", "{missing}"], ("no run folder",)),
    (["export", "{malformed}", "--format", "jsonl", "--out", "{malformed}/tasks.yaml"], ("is a file, not a folder",)),
    (["export", "{missing}", "--out", "{out}/e"], ("does not exist",)),
    (["export", "{malformed}", "--format", "sft", "--out", "{out}/e2"], ("--family",)),
    (["export", "{malformed}", "--format", "prm", "--execute", "--parallel", "0", "--out", "{out}/e3"],
     ("--parallel", "at least 1")),
    (["replay", "{missing}"], ("no trajectory",)),
    (["trajectory", "validate", "{missing}"], ("does not exist",)),
]


async def _run(argv: list[str], sem: asyncio.Semaphore) -> tuple[int, str, str]:
    async with sem:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "cua.cli", *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "COLUMNS": "200"})
        out, err = await asyncio.wait_for(proc.communicate(), 300)
        return proc.returncode or 0, out.decode(), err.decode()


@pytest.mark.slow  # 25 processes of the CLI: a minute of CPU, too much for the fast lane
async def test_bad_input_is_a_message_and_a_non_zero_exit_never_a_traceback(inputs: dict[str, str]) -> None:
    sem = asyncio.Semaphore(2)
    argvs = [[part.format(**inputs) for part in argv] for argv, _ in CASES]
    results = await asyncio.gather(*(_run(argv, sem) for argv in argvs))
    wrong = []
    for argv, (_, says), (rc, out, err) in zip(argvs, CASES, results, strict=True):
        text = out + err
        if rc == 0 or "Traceback" in text or not all(s in text for s in says):
            wrong.append(f"cua {' '.join(argv)} -> rc={rc}\n{text[-1500:]}")
    assert not wrong, "\n\n".join(wrong)
    # nothing was run: no run folder holds an episode
    assert not list(Path(inputs["out"]).rglob("episodes.jsonl"))
