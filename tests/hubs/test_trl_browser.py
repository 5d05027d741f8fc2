"""cua's TRL environment over a real browser sandbox: its tools act in Chromium, and its
Chromium processes are gone when the trainer is done (`ReleaseSandboxes`) or when the
process exits without anyone closing it (the exit hook)."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import psutil
import pytest
from PIL import Image

from cua.hubs.trl import BrowserToolEnv, ReleaseSandboxes
from cua.observation import Size

TASK = "todo.mark_done@1"
FRAME = Size(width=320, height=180)

pytestmark = pytest.mark.slow


def _chromium_under(pid: int) -> set[int]:
    return {p.pid for p in psutil.Process(pid).children(recursive=True) if "chrom" in p.name().lower()}


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.add(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def _until_gone(pids: set[int], timeout: float = 30.0) -> set[int]:
    deadline = time.monotonic() + timeout
    while (left := _alive(pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def test_browser_tools_act_and_the_trainers_end_releases_chromium() -> None:
    from transformers import TrainerControl, TrainerState, TrainingArguments

    before = _chromium_under(psutil.Process().pid)
    env = BrowserToolEnv(frame=FRAME)
    first: Any = env.reset(task=TASK, seed=1)
    assert isinstance(first[0]["image"], Image.Image) and first[0]["image"].size == (320, 180)
    started = _chromium_under(psutil.Process().pid) - before
    assert started, "the sandbox's Chromium runs under this process"
    result: Any = env.scroll(x=160.0, y=90.0, dy=200.0)
    assert result[0]["type"] == "image" and result[-1]["text"].startswith("step 1")
    assert env.goto(url="").startswith("error: goto: url:")
    assert env.get_reward() == 0.0  # nothing done: the judge pays nothing
    ReleaseSandboxes().on_train_end(TrainingArguments(output_dir="/tmp/unused", report_to="none"),
                                    TrainerState(), TrainerControl())
    assert not _until_gone(started), "Chromium outlived the trainer's end"


CHILD = """
import psutil, sys
from cua.hubs.trl import BrowserToolEnv
from cua.observation import Size
env = BrowserToolEnv(frame=Size(width=320, height=180))
env.reset(task=sys.argv[1], seed=0)
print(*[p.pid for p in psutil.Process().children(recursive=True) if "chrom" in p.name().lower()], flush=True)
"""  # exits with the sandbox open: nobody closes it


def test_a_process_that_exits_without_closing_leaves_no_chromium() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD, TASK], capture_output=True, text=True, timeout=180, check=True)
    pids = {int(p) for p in out.stdout.split()}
    assert pids, out.stderr
    assert not _until_gone(pids), "Chromium outlived the process that opened it"
