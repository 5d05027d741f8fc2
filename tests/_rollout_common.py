"""What the rollout service's tests share: waiting on another task's work with a deadline, a
test model held mid-answer, and the request body of one small group (todo.mark_done@1, two steps)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from _model_server import DONE, MODEL, ModelServer

__all__ = ["held_model", "todo_group", "until"]


async def until(condition: Callable[[], object], seconds: float, what: str) -> None:
    """Returns once `condition()` holds; fails naming `what` when `seconds` pass first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        await asyncio.sleep(0.05)  # a condition of another task's work: polled, with a deadline


def todo_group(model_url: str, group_size: int) -> dict[str, Any]:
    """`POST /rollouts`'s body: `group_size` rollouts of todo.mark_done@1 by the model at `model_url`."""
    return {"policy": {"base_url": model_url, "model": MODEL}, "tasks": ["todo.mark_done@1"],
            "group_size": group_size, "max_steps": 2, "isolation": "shared"}


def held_model(on_call: Callable[[], object]) -> tuple[ModelServer, threading.Event]:
    """A test model that calls `on_call` on each request, then "thinks" until the returned gate is
    set (at most 120 s) and answers DONE: what a test checks while rollouts are in flight."""
    gate = threading.Event()

    def respond(_: dict[str, Any]) -> str:
        on_call()
        gate.wait(120)
        return DONE

    model = ModelServer()
    model.respond = respond
    return model, gate
