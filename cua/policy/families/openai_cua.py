"""OpenAI computer-use actions: ``{"type": "click", "x": .., "y": .., "button": ..}``.

Coordinates are pixels of the screenshot as sent (the observation frame). The parser
takes one action object, a list of them, a ``computer_call`` item (``{"action": {...}}``),
or a whole Responses API ``output`` list whose ``message`` items become the thought
(and, when no computer call follows, the final answer). JSON may sit in a fenced block.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from cua.policy.families.base import ActionBuilder, Family, FamilyParseError, ParseContext, Parsed, number
from cua.policy.imaging import ModelFrame

__all__ = ["OpenAICUA", "load_json_payload"]

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_BUTTONS = {"left": "left", "right": "right", "wheel": "middle", "middle": "middle"}


def load_json_payload(raw: str) -> tuple[Any, str]:
    """The JSON value in `raw` (bare, or in a ```json fence), and the prose around it."""
    text = raw.strip()
    fence = _FENCE.search(text)
    if fence:
        body, prose = fence.group(1).strip(), (text[: fence.start()] + text[fence.end() :]).strip()
    else:
        starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
        if not starts:
            raise FamilyParseError("no JSON action in the output")
        body, prose = text[min(starts) :], text[: min(starts)].strip()
    try:
        value, end = json.JSONDecoder().raw_decode(body)
    except json.JSONDecodeError as exc:
        raise FamilyParseError(f"invalid JSON ({exc.msg} at {exc.pos})") from None
    trailing = body[end:].strip()
    return value, "\n".join(t for t in (prose, trailing) if t)


def _message_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict) and p.get("text"))


class OpenAICUA(Family):
    name: ClassVar[str] = "openai"

    def model_frame(self, frame: Any) -> ModelFrame:
        return ModelFrame.identity(frame)

    def system_prompt(self, model: ModelFrame) -> str:
        return (
            "You operate a computer through screenshots. The display is "
            f"{model.image.width}x{model.image.height} pixels. Answer with the next action(s) as JSON, "
            "one object or a list, each with a `type` of: click {x, y, button: left|right|wheel|back|forward}, "
            "double_click {x, y}, drag {path: [{x, y}, ...]}, keypress {keys: [...]}, move {x, y}, "
            "scroll {x, y, scroll_x, scroll_y} (pixels; positive scroll_y scrolls down), type {text}, "
            "wait {}, screenshot {}. When the task is complete, answer with plain text instead "
            'or with {"type": "done", "answer": "..."}.'
        )

    def parse(self, raw: str, ctx: ParseContext) -> Parsed:
        try:
            value, prose = load_json_payload(raw)
        except FamilyParseError:
            if raw.strip() and "{" not in raw:  # a plain message: the model is finished
                builder = ActionBuilder(ctx)
                builder.done("success", raw.strip())
                return Parsed(actions=builder.actions, thought=raw.strip())
            raise
        items = value if isinstance(value, list) else [value]
        builder = ActionBuilder(ctx)
        thoughts = [prose] if prose else []
        messages: list[str] = []
        for item in items:
            if not isinstance(item, dict):
                raise FamilyParseError(f"an action must be an object, got {item!r}")
            kind = item.get("type")
            if kind == "message":
                messages.append(_message_text(item))
            elif kind == "reasoning":
                summary = item.get("summary") or []
                thoughts += [str(s.get("text", "")) for s in summary if isinstance(s, dict)]
            elif kind == "computer_call" or ("action" in item and isinstance(item["action"], dict)):
                self._apply(item["action"], builder)
            else:
                self._apply(item, builder)
        if not builder.actions and messages:
            builder.done("success", "\n".join(messages).strip() or None)
        elif messages:
            thoughts += messages
        if not builder.actions:
            raise FamilyParseError("no computer action in the output")
        return Parsed(actions=builder.actions, thought="\n".join(t for t in thoughts if t) or None)

    def _apply(self, action: dict[str, Any], b: ActionBuilder) -> None:
        kind = action.get("type")

        def xy() -> tuple[float, float]:
            if "x" not in action or "y" not in action:
                raise FamilyParseError(f"{kind} needs x and y")
            return b.at(number(action["x"], "x"), number(action["y"], "y"))

        if kind == "click":
            button = str(action.get("button", "left"))
            if button in ("back", "forward"):
                from cua.actions import Back, Forward

                b.add(Back() if button == "back" else Forward())
            elif button in _BUTTONS:
                b.click(xy(), _BUTTONS[button], 1)  # type: ignore[arg-type]
            else:
                raise FamilyParseError(f"unknown mouse button {button!r}")
        elif kind in ("double_click", "triple_click"):
            b.click(xy(), "left", 2 if kind == "double_click" else 3)
        elif kind == "move":
            b.move(xy())
        elif kind == "drag":
            path = action.get("path")
            if not isinstance(path, list):
                raise FamilyParseError("drag needs a path")
            points = []
            for p in path:
                if not isinstance(p, dict):
                    raise FamilyParseError("drag path points must be {x, y}")
                points.append(b.at(number(p.get("x"), "x"), number(p.get("y"), "y")))
            b.drag_path(points)
        elif kind == "keypress":
            keys = action.get("keys")
            if isinstance(keys, str):
                keys = [keys]
            if not isinstance(keys, list) or not keys:
                raise FamilyParseError("keypress needs keys")
            b.key([str(k) for k in keys])
        elif kind == "type":
            b.type(action.get("text", ""))
        elif kind == "scroll":
            b.scroll(xy(), number(action.get("scroll_x", 0), "scroll_x"), number(action.get("scroll_y", 0), "scroll_y"))
        elif kind == "wait":
            b.wait(number(action.get("ms", 1000), "ms") / 1000 if "ms" in action else 1.0)
        elif kind == "screenshot":
            b.wait(0.0)
        elif kind == "done":
            b.done(str(action.get("status", "success")), action.get("answer"))
        else:
            raise FamilyParseError(f"unknown OpenAI computer action type {kind!r}")
