"""Qwen3-VL: the same `computer_use` tool as Qwen2.5-VL, on a relative 0..1000 grid.

Coordinates are relative (0..999 across each axis, whatever the image size), images
are resized with factor 32, and the tool adds `triple_click`, `hscroll` and `answer`.
Tool calls arrive as ``<tool_call>`` text or, from servers with a tool parser, as
OpenAI `tool_calls` on the message; both are accepted.
"""

from __future__ import annotations

from typing import ClassVar

from cua.observation import Size
from cua.policy.families.qwen25vl import Qwen25VL
from cua.policy.imaging import ModelFrame

__all__ = ["Qwen3VL"]


class Qwen3VL(Qwen25VL):
    name: ClassVar[str] = "qwen3-vl"
    factor: int = 32
    grid: ClassVar[float] = 1000.0
    actions_offered: ClassVar[tuple[str, ...]] = (
        "key", "type", "mouse_move", "left_click", "left_click_drag", "right_click",
        "middle_click", "double_click", "triple_click", "scroll", "hscroll", "wait",
        "answer", "terminate",
    )

    def model_frame(self, frame: Size) -> ModelFrame:
        return ModelFrame.relative(frame, self.image_size(frame), self.grid)

    def coordinate_help(self, model: ModelFrame) -> str:
        return (
            "* The screen's resolution is 1000x1000: coordinates are relative, from (0, 0) at the "
            "top left to (999, 999) at the bottom right."
        )
