"""What the rollout service's tests share: waiting on another task's work with a deadline, and
the request body of one small group (todo.mark_done@1, two steps) against a test model."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from _model_server import MODEL

__all__ = ["todo_group", "until"]


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
