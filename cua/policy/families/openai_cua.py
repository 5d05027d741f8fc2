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

from cua.actions import Action, Back, Click, Done, Drag, Forward, Key, MouseButton, Move, Scroll, Type, Wait
from cua.observation import Size
from cua.policy.families.base import (
    ActionBuilder,
    Family,
    FamilyParseError,
    ParseContext,
    Parsed,
    RenderContext,
    number,
    render_number,
    spell_key,
)
from cua.policy.imaging import ModelFrame

__all__ = ["OpenAICUA", "load_json_payload"]

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_BUTTONS: dict[str, MouseButton] = {"left": "left", "right": "right", "wheel": "middle", "middle": "middle"}
#: Canonical key name -> the upper-case names OpenAI's computer-use model writes.
_KEY_NAMES = {"Control": "CTRL", "Shift": "SHIFT", "Alt": "ALT", "Meta": "META", "Enter": "ENTER",
              "Escape": "ESC", "Backspace": "BACKSPACE", "Delete": "DELETE", "Insert": "INSERT",
              "Space": "SPACE", "Tab": "TAB", "ArrowUp": "ARROWUP", "ArrowDown": "ARROWDOWN",
              "ArrowLeft": "ARROWLEFT", "ArrowRight": "ARROWRIGHT", "Home": "HOME", "End": "END",
              "PageUp": "PAGEUP", "PageDown": "PAGEDOWN", "CapsLock": "CAPSLOCK",
              **{f"F{i}": f"F{i}" for i in range(1, 13)}}


def render_json_turn(items: list[dict[str, Any]], thought: str | None, ctx: RenderContext) -> str:
    """One JSON object (or a list of them); a thought goes before it, with the JSON fenced."""
    if not items:
        ctx.refuse("a turn without actions")
    body = json.dumps(items[0] if len(items) == 1 else items, ensure_ascii=False)
    if not thought or not thought.strip():
        return body
    if "```" in thought:
        ctx.refuse("a thought that contains a code fence")
    return f"{thought.strip()}\n```json\n{body}\n```"


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

    def model_frame(self, frame: Size) -> ModelFrame:
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
                b.click(xy(), _BUTTONS[button], 1)
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

    # -- rendering -------------------------------------------------------------------
    def render_turn(self, actions: list[Action], thought: str | None, ctx: RenderContext) -> str:
        """Computer actions as JSON in screenshot pixels (exact: no approximations)."""
        return render_json_turn([self.render_action(a, ctx) for a in actions], thought, ctx)

    def render_action(self, action: Action, ctx: RenderContext) -> dict[str, Any]:
        if isinstance(action, Click):
            x, y = ctx.at(action.x, action.y)
            if action.count == 1:
                button = "wheel" if action.button == "middle" else action.button
                return {"type": "click", "x": x, "y": y, "button": button}
            if action.button != "left":
                ctx.refuse(f"OpenAI has no {action.button} multi-click")
            return {"type": "double_click" if action.count == 2 else "triple_click", "x": x, "y": y}
        if isinstance(action, Move):
            x, y = ctx.at(action.x, action.y)
            return {"type": "move", "x": x, "y": y}
        if isinstance(action, Drag):
            if action.button != "left":
                ctx.refuse("OpenAI drags only with the left button")
            return {"type": "drag", "path": [dict(zip("xy", ctx.at(p.x, p.y), strict=True)) for p in action.path]}
        if isinstance(action, Scroll):
            x, y = ctx.at(action.x, action.y)
            return {"type": "scroll", "x": x, "y": y, "scroll_x": render_number(action.dx),
                    "scroll_y": render_number(action.dy)}
        if isinstance(action, Type):
            if not action.text:
                ctx.refuse("typing nothing")
            return {"type": "type", "text": action.text}
        if isinstance(action, Key):
            return {"type": "keypress", "keys": [spell_key(k, _KEY_NAMES) for k in action.keys]}
        if isinstance(action, Wait):
            return {"type": "wait", "ms": round(action.seconds * 1000)}
        if isinstance(action, Done):
            done: dict[str, Any] = {"type": "done"}
            if action.status != "success":
                done["status"] = action.status
            if action.answer is not None:
                done["answer"] = action.answer
            return done
        if isinstance(action, (Back, Forward)):
            return {"type": "click", "button": action.type}
        ctx.refuse(f"OpenAI has no {action.type} action")
        raise AssertionError  # unreachable: refuse raises
