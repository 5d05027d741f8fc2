"""Anthropic computer tool: ``{"action": "left_click", "coordinate": [x, y]}``.

Claude sees the screenshot scaled down (the API shrinks images past 1568 px on the long
edge or about 1.15 megapixels, and the reference implementation scales to a standard
XGA/WXGA/FWXGA size of the same aspect); the tool declares that size as the display and
the model's coordinates are its pixels. Keys are xdotool names ("ctrl+s", "Return");
several space-separated combos are pressed one after another. Scrolling counts wheel
notches. `text` on a click or scroll names modifier keys held during it.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from cua.actions import Action, Click, Done, Drag, Key, MouseDown, MouseUp, Move, Scroll, Type, Wait
from cua.observation import Size
from cua.policy.families.base import (
    CLICK_ACTION_NAMES,
    CLICK_ACTIONS,
    ActionBuilder,
    Family,
    FamilyParseError,
    ParseContext,
    Parsed,
    RenderContext,
    number,
    pair,
    render_number,
    spell_key,
)
from cua.policy.families.openai_cua import load_json_payload, render_json_turn
from cua.policy.imaging import ModelFrame

__all__ = ["Anthropic", "api_image_size"]

#: Standard displays the reference implementation scales to when the aspect matches.
SCALING_TARGETS: tuple[Size, ...] = (
    Size(width=1024, height=768),
    Size(width=1280, height=800),
    Size(width=1366, height=768),
)
MAX_LONG_EDGE = 1568
MAX_PIXELS = 1_150_000
_DIRECTIONS = {"down": (0, 1), "up": (0, -1), "right": (1, 0), "left": (-1, 0)}
#: Canonical key name -> its xdotool keysym (what Claude writes).
_XDOTOOL = {"Control": "ctrl", "Shift": "shift", "Alt": "alt", "Meta": "super", "Enter": "Return",
            "Escape": "Escape", "Backspace": "BackSpace", "Delete": "Delete", "Insert": "Insert",
            "Space": "space", "Tab": "Tab", "ArrowUp": "Up", "ArrowDown": "Down", "ArrowLeft": "Left",
            "ArrowRight": "Right", "Home": "Home", "End": "End", "PageUp": "Page_Up",
            "PageDown": "Page_Down", "CapsLock": "Caps_Lock", "+": "plus",
            **{f"F{i}": f"F{i}" for i in range(1, 13)}}
#: What a finished turn says when the episode ends without an answer (approximate only).
DONE_TEXT = "The task is complete."


def api_image_size(frame: Size) -> Size:
    """The size Claude sees a screenshot of `frame` at."""
    ratio = frame.width / frame.height
    for target in SCALING_TARGETS:
        if abs(target.width / target.height - ratio) < 0.02 and target.width < frame.width:
            return target
    scale = min(1.0, MAX_LONG_EDGE / max(frame.width, frame.height), math.sqrt(MAX_PIXELS / (frame.width * frame.height)))
    return Size(width=max(1, math.floor(frame.width * scale)), height=max(1, math.floor(frame.height * scale)))


class Anthropic(Family):
    name: ClassVar[str] = "anthropic"

    def model_frame(self, frame: Size) -> ModelFrame:
        return ModelFrame.pixels(frame, api_image_size(frame))

    def system_prompt(self, model: ModelFrame) -> str:
        return (
            "You control a computer with the `computer` tool. The display is "
            f"{model.image.width}x{model.image.height} pixels. Answer with the tool input as JSON, one "
            'object or a list: {"action": "left_click", "coordinate": [x, y]}. Actions: key {text: xdotool '
            "keys like ctrl+s}, hold_key {text, duration}, type {text}, mouse_move {coordinate}, left_click, "
            "right_click, middle_click, double_click, triple_click {coordinate, text: modifiers}, "
            "left_click_drag {start_coordinate, coordinate}, left_mouse_down, left_mouse_up, scroll "
            "{coordinate, scroll_direction: up|down|left|right, scroll_amount}, wait {duration}, screenshot. "
            "When the task is done, answer with plain text."
        )

    def tools(self, model: ModelFrame) -> list[dict[str, Any]] | None:
        return [
            {
                "type": "computer_20250124",
                "name": "computer",
                "display_width_px": model.image.width,
                "display_height_px": model.image.height,
            }
        ]

    def parse(self, raw: str, ctx: ParseContext) -> Parsed:
        try:
            value, prose = load_json_payload(raw)
        except FamilyParseError:
            if raw.strip() and "{" not in raw:  # text only: Claude ends its turn
                builder = ActionBuilder(ctx)
                builder.done("success", raw.strip())
                return Parsed(actions=builder.actions, thought=raw.strip())
            raise
        if isinstance(value, dict) and isinstance(value.get("content"), list):
            value = value["content"]  # a whole assistant message
        items = value if isinstance(value, list) else [value]
        builder = ActionBuilder(ctx)
        texts = [prose] if prose else []
        for item in items:
            if not isinstance(item, dict):
                raise FamilyParseError(f"a tool input must be an object, got {item!r}")
            if item.get("type") == "text":
                texts.append(str(item.get("text", "")))
            elif item.get("type") == "thinking":
                texts.append(str(item.get("thinking", "")))
            elif item.get("type") == "tool_use":
                tool_input = item.get("input")
                if not isinstance(tool_input, dict):
                    raise FamilyParseError("tool_use without an input object")
                self._apply(tool_input, builder)
            else:
                self._apply(item, builder)
        thought = "\n".join(t for t in texts if t).strip() or None
        if not builder.actions:
            if thought is None:
                raise FamilyParseError("no computer action in the output")
            builder.done("success", thought)
        return Parsed(actions=builder.actions, thought=thought)

    def _apply(self, args: dict[str, Any], b: ActionBuilder) -> None:
        action = args.get("action")

        def coordinate(key: str = "coordinate", required: bool = True) -> tuple[float, float] | None:
            if args.get(key) is None:
                if required:
                    raise FamilyParseError(f"{action} needs {key}")
                return None
            return b.at(*pair(args[key], key))

        modifiers = [m for m in str(args.get("text") or "").replace("+", " ").split()] if action in (
            "left_click", "right_click", "middle_click", "double_click", "triple_click", "scroll",
        ) else []
        for modifier in modifiers:
            b.key_down(modifier)
        if action == "key":
            combos = str(args.get("text", "")).split()
            if not combos:
                raise FamilyParseError("key needs text")
            for combo in combos:
                b.key(combo.split("+") if combo != "+" and len(combo) > 1 else [combo])
        elif action == "hold_key":
            combo = str(args.get("text", ""))
            keys = combo.split("+") if len(combo) > 1 else [combo]
            for key in keys:
                b.key_down(key)
            b.wait(number(args.get("duration", 1), "duration"))
            for key in reversed(keys):
                b.key_up(key)
        elif action == "type":
            b.type(args.get("text", ""))
        elif action == "mouse_move":
            point = coordinate()
            assert point is not None
            b.move(point)
        elif action in CLICK_ACTIONS:
            button, count = CLICK_ACTIONS[action]
            b.click(coordinate(required=False), button, count)
        elif action == "left_click_drag":
            end = coordinate()
            assert end is not None
            b.drag(coordinate("start_coordinate", required=False), end)
        elif action == "left_mouse_down":
            b.mouse_down(coordinate(required=False))
        elif action == "left_mouse_up":
            b.mouse_up(coordinate(required=False))
        elif action == "scroll":
            direction = str(args.get("scroll_direction", "down")).lower()
            if direction not in _DIRECTIONS:
                raise FamilyParseError(f"unknown scroll_direction {direction!r}")
            amount = number(args.get("scroll_amount", 3), "scroll_amount") * b.ctx.scroll_unit_px
            sx, sy = _DIRECTIONS[direction]
            b.scroll(coordinate(required=False), sx * amount, sy * amount)
        elif action == "wait":
            b.wait(number(args.get("duration", 1), "duration"))
        elif action in ("screenshot", "cursor_position"):
            b.wait(0.0)
        else:
            raise FamilyParseError(f"unknown computer tool action {action!r}")
        for modifier in reversed(modifiers):
            b.key_up(modifier)

    # -- rendering -------------------------------------------------------------------
    def render_turn(self, actions: list[Action], thought: str | None, ctx: RenderContext) -> str:
        """Tool inputs as JSON in the scaled display's pixels; the end of the task is a
        plain-text turn (the answer).

        Approximations (``approximate=True``): the end without an answer says
        `DONE_TEXT`; the thought of a final turn is dropped (its text is the answer); a
        drag through several points becomes a straight drag; a diagonal scroll keeps its
        larger axis."""
        if actions and isinstance(actions[-1], Done):
            done = actions[-1]
            if len(actions) > 1:
                ctx.refuse("Claude ends its turn in plain text: the end must be a turn of its own")
            if done.status != "success":
                ctx.refuse("Claude's computer tool has no way to give up")
            answer = done.answer
            if answer is None or not answer.strip():
                ctx.lossy(f"the end without an answer says {DONE_TEXT!r}")
                answer = DONE_TEXT
            if answer != answer.strip() or "{" in answer:
                ctx.refuse("an answer with surrounding spaces or a brace (it would read as a tool call)")
            if thought and thought.strip():
                ctx.lossy("the thought of the final turn is dropped")
            return answer
        return render_json_turn([self.render_action(a, ctx) for a in actions], thought, ctx)

    def render_action(self, action: Action, ctx: RenderContext) -> dict[str, Any]:
        if isinstance(action, Click):
            name = CLICK_ACTION_NAMES.get((action.button, action.count))
            if name is None:
                ctx.refuse(f"Claude cannot click the {action.button} button {action.count} times")
            return {"action": name, "coordinate": list(ctx.at(action.x, action.y))}
        if isinstance(action, Move):
            return {"action": "mouse_move", "coordinate": list(ctx.at(action.x, action.y))}
        if isinstance(action, Drag):
            if action.button != "left":
                ctx.refuse("Claude drags only with the left button")
            start, end = ctx.endpoints(action)
            return {"action": "left_click_drag", "start_coordinate": list(start), "coordinate": list(end)}
        if isinstance(action, (MouseDown, MouseUp)):
            if action.button != "left":
                ctx.refuse("Claude presses and releases only the left button")
            item: dict[str, Any] = {"action": "left_mouse_down" if isinstance(action, MouseDown) else "left_mouse_up"}
            if action.x is not None and action.y is not None:
                item["coordinate"] = list(ctx.at(action.x, action.y))
            return item
        if isinstance(action, Scroll):
            dx, dy = ctx.dominant_scroll(action)
            if dx:
                direction = "right" if dx > 0 else "left"
            else:
                direction = "down" if dy >= 0 else "up"
            return {"action": "scroll", "coordinate": list(ctx.at(action.x, action.y)),
                    "scroll_direction": direction,
                    "scroll_amount": render_number(abs(dx or dy) / self.scroll_unit_px)}
        if isinstance(action, Type):
            if not action.text:
                ctx.refuse("typing nothing")
            return {"action": "type", "text": action.text}
        if isinstance(action, Key):
            return {"action": "key", "text": "+".join(spell_key(k, _XDOTOOL) for k in action.keys)}
        if isinstance(action, Wait):
            return {"action": "wait", "duration": render_number(action.seconds)}
        ctx.refuse(f"Claude's computer tool has no {action.type} action")
        raise AssertionError  # unreachable: refuse raises
