"""cua's TRL environment over a real desktop sandbox (Xvfb, a window manager, xterm): the
template's oracle, played through the tools as a model would call them, is paid 1 by the judge;
no Xvfb is left when the trainer is done."""

from __future__ import annotations

import time
from typing import Any

import psutil
import pytest
from _openenv import oracle_actions

from cua.actions import Action, Click, Done, Key, Type, Wait
from cua.hubs.trl import DesktopToolEnv, ReleaseSandboxes

pytestmark = pytest.mark.slow

TASK = "desktop.create_file@1"
SEED = 1


def _call(env: DesktopToolEnv, action: Action) -> Any:
    """The tool call a model would make for an oracle's action."""
    if isinstance(action, Click):
        return env.click(x=action.x, y=action.y, button=action.button, count=action.count)
    if isinstance(action, Type):
        return env.type(text=action.text)
    if isinstance(action, Key):
        return env.key(keys="+".join(action.keys))
    if isinstance(action, Wait):
        return env.wait(seconds=action.seconds)
    if isinstance(action, Done):
        return env.done(status=action.status, answer=action.answer)
    raise AssertionError(f"no tool for {action!r}")


def _xvfb_under(pid: int) -> set[int]:
    return {p.pid for p in psutil.Process(pid).children(recursive=True) if p.name() == "Xvfb"}


async def test_the_desktop_oracle_through_the_tools_is_paid_and_released() -> None:
    from transformers import TrainerControl, TrainerState, TrainingArguments

    actions = await oracle_actions(TASK, SEED)
    before = _xvfb_under(psutil.Process().pid)
    env = DesktopToolEnv()
    first: Any = env.reset(task=TASK, seed=SEED)
    assert first[1]["text"].startswith("Create a file")
    started = _xvfb_under(psutil.Process().pid) - before
    assert started, "the sandbox's Xvfb runs under this process"
    for action in actions:
        result = _call(env, action)
        assert isinstance(result, list) and result[0]["type"] == "image", result
    assert env.get_reward() == 1.0
    env.reset(task=TASK, seed=SEED)  # the same sandbox, reset: doing nothing is paid 0
    assert env.get_reward() == 0.0
    ReleaseSandboxes().on_train_end(TrainingArguments(output_dir="/tmp/unused", report_to="none"),
                                    TrainerState(), TrainerControl())
    deadline = time.monotonic() + 30
    while _alive(started):
        assert time.monotonic() < deadline, "Xvfb outlived the trainer's end"
        time.sleep(0.1)


def _alive(pids: set[int]) -> bool:
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            pass
    return False
