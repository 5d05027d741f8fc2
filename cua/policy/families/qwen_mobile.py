"""Qwen2.5-VL and Qwen3-VL on a phone: the `mobile_use` tool, parsed to touch actions.

A family knows its target is a phone by its name: `qwen2.5-vl-mobile` and `qwen3-vl-mobile`
offer only the `mobile_use` tool in their prompt (Qwen's phone-agent tool: click,
long_press, swipe from `coordinate` to `coordinate2`, type, system_button Back / Home /
Menu / Enter, open an app, wait, terminate; Qwen3-VL adds answer), and read it as the touch
actions of `cua.actions`. The desktop families (`qwen2.5-vl`, `qwen3-vl`) still map a stray
`mobile_use` call to mouse actions, for a phone-trained checkpoint driving a browser.

Coordinates are those of the base family: Qwen2.5-VL absolute pixels of the smart-resized
image, Qwen3-VL 0..999 relative. A swipe is written as its two end points: it is read as
the axis it mostly moves along, and its distance is measured in the model's own units so
that a swipe off the screen's edge keeps its length.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ValidationError

from cua.actions import (
    Action,
    Done,
    DoubleTap,
    Fling,
    Key,
    LongPress,
    Nav,
    OpenApp,
    Pinch,
    Swipe,
    SwipeDirection,
    Tap,
    Type,
    Wait,
)
from cua.policy.families.base import (
    LOWER_KEY_NAMES,
    ActionBuilder,
    FamilyParseError,
    RenderContext,
    number,
    pair,
    spell_key,
)
from cua.policy.families.qwen3vl import Qwen3VL
from cua.policy.families.qwen25vl import Qwen25VL, _decode_json_object
from cua.policy.imaging import ModelFrame

__all__ = ["Qwen3VLMobile", "Qwen25VLMobile", "swipe_from_points", "swipe_end"]

#: system_button's buttons (as Qwen's tool spells them) and what each is on the phone.
_BUTTONS: dict[str, Action] = {"back": Nav(button="back"), "home": Nav(button="home"),
                               "menu": Nav(button="recents"), "enter": Key(keys=["Enter"])}
_BUTTON_NAMES: dict[str, str] = {"back": "Back", "home": "Home", "recents": "Menu"}
#: A swipe's default duration: what a `mobile_use` swipe, which names none, is read as.
_SWIPE_MS = Swipe.model_fields["duration_ms"].default
_LONG_PRESS_MS = LongPress.model_fields["duration_ms"].default


def built(cls: type[Action], what: str, **fields: Any) -> Action:
    """A touch action from model-written values, its validation error a parse error."""
    try:
        action: Action = cls(**fields)
    except ValidationError as exc:
        raise FamilyParseError(f"bad {what}: {exc.errors(include_url=False)[0]['msg']}") from None
    return action


def swipe_from_points(start: tuple[float, float], end: tuple[float, float], model: ModelFrame,
                      duration_ms: int = _SWIPE_MS) -> Swipe:
    """A swipe from model point `start` to model point `end`: the axis it mostly moves along
    (vertical on a tie), its length in frame pixels measured in model units."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    if dx == 0 and dy == 0:
        raise FamilyParseError("a swipe that ends where it starts")
    sx, sy = model.scale
    direction: SwipeDirection
    if abs(dy) >= abs(dx):
        direction, distance = ("down" if dy > 0 else "up"), abs(dy) * sy
    else:
        direction, distance = ("right" if dx > 0 else "left"), abs(dx) * sx
    x, y = model.to_frame(*start)
    swipe = built(Swipe, "swipe", x=x, y=y, direction=direction, distance=round(distance, 2), duration_ms=duration_ms)
    assert isinstance(swipe, Swipe)
    return swipe


def swipe_end(action: Swipe | Fling, ctx: RenderContext) -> tuple[tuple[int, int], tuple[int, int]]:
    """Where a swipe starts and ends in the model's units: the end is counted from the
    written start, so that reading both back gives the distance within half a unit."""
    start = ctx.at(action.x, action.y)
    sx, sy = ctx.model.scale
    vertical = action.direction in ("up", "down")
    units = round(action.distance / (sy if vertical else sx))
    if units == 0:
        ctx.refuse(f"a swipe of {action.distance:g} px is shorter than the model's unit")
    sign = -1 if action.direction in ("up", "left") else 1
    end = (start[0], start[1] + sign * units) if vertical else (start[0] + sign * units, start[1])
    return start, end


class _MobileUse(Qwen25VL):
    """The `mobile_use` tool over a Qwen family's geometry (see the module docstring)."""

    tool_name: ClassVar[str] = "mobile_use"
    actions_offered: ClassVar[tuple[str, ...]] = (
        "key", "click", "long_press", "swipe", "type", "system_button", "open", "wait", "terminate",
    )

    # -- prompt ----------------------------------------------------------------------
    def action_descriptions(self) -> dict[str, str]:
        return {
            "key": "press a key, named in `text` (e.g. 'enter', 'backspace')",
            "click": "tap the point `coordinate`",
            "long_press": "press the point `coordinate` for `time` seconds",
            "swipe": "swipe from `coordinate` to `coordinate2` (the finger's path: swiping up scrolls down)",
            "type": "input `text` into the focused input box",
            "system_button": "press the system button `button`: Back, Home, Menu (recent apps) or Enter",
            "open": "open the app named `text`",
            "wait": "wait `time` seconds",
            "answer": "give the final answer `text` to the user",
            "terminate": "end the task with `status` success or failure",
        }

    def tool_schema(self, model: ModelFrame) -> dict[str, Any]:
        return self.function_tool(
            self.tool_name, model,
            "Use a touchscreen to interact with a mobile device, and take screenshots.\n"
            "* This is an interface to a mobile device with touchscreen: tap, type, swipe.\n"
            "* Apps may take time to start or respond; wait and look again.",
            "* Tap the centre of the element you mean.",
            {
                "coordinate": {"type": "array", "description": "(x, y): for click, long_press, swipe"},
                "coordinate2": {"type": "array", "description": "(x, y): where a swipe ends"},
                "text": {"type": "string", "description": "for key, type, open and answer"},
                "time": {"type": "number", "description": "seconds, for long_press and wait"},
                "button": {"type": "string", "enum": ["Back", "Home", "Menu", "Enter"]},
                "status": {"type": "string", "enum": ["success", "failure"]},
            })

    # -- parsing ---------------------------------------------------------------------
    def _apply(self, call: dict[str, Any], b: ActionBuilder) -> None:
        name = call.get("name")
        if name != self.tool_name:
            raise FamilyParseError(f"unknown tool {name!r} (expected {self.tool_name}: the target is a phone)")
        args = call.get("arguments")
        if isinstance(args, str):
            args = _decode_json_object(args)
        if not isinstance(args, dict):
            raise FamilyParseError("tool call has no arguments object")
        action = args.get("action")
        if action not in self.actions_offered:
            raise FamilyParseError(f"unknown {self.tool_name} action {action!r}")
        self.apply_touch_action(str(action), args, b)

    def apply_touch_action(self, action: str, args: dict[str, Any], b: ActionBuilder) -> None:
        model = b.ctx.model
        if action == "click":
            x, y = self._at(args, "coordinate", b)
            b.add(Tap(x=x, y=y))
        elif action == "long_press":
            x, y = self._at(args, "coordinate", b)
            time = number(args["time"], "time") if args.get("time") is not None else _LONG_PRESS_MS / 1000
            b.add(built(LongPress, "long_press", x=x, y=y, duration_ms=round(time * 1000)))
        elif action == "swipe":
            for key in ("coordinate", "coordinate2"):
                if args.get(key) is None:
                    raise FamilyParseError(f"swipe needs {key}")
            b.add(swipe_from_points(pair(args["coordinate"], "coordinate"), pair(args["coordinate2"], "coordinate2"),
                                    model))
        elif action == "system_button":
            button = _BUTTONS.get(str(args.get("button", "")).strip().lower())
            if button is None:
                raise FamilyParseError(f"unknown system button {args.get('button')!r} (Back, Home, Menu or Enter)")
            b.add(button)
        elif action == "open":
            b.add(built(OpenApp, "app name", name=str(args.get("text", "")).strip()))
        elif action == "key":
            b.key([str(args.get("text", ""))])
        else:  # type, wait, answer, terminate: as the desktop tool has them
            self.apply_action(action, args, b)

    @staticmethod
    def _at(args: dict[str, Any], key: str, b: ActionBuilder) -> tuple[float, float]:
        if args.get(key) is None:
            raise FamilyParseError(f"action {args.get('action')!r} needs {key}")
        return b.at(*pair(args[key], key))

    # -- rendering -------------------------------------------------------------------
    def render_action(self, action: Action, ctx: RenderContext) -> list[dict[str, Any]]:
        """Touch actions as `mobile_use` calls. Approximations (``approximate=True``), beside
        the desktop tool's: a swipe of another duration than the default, and a fling, become
        a plain swipe. A double tap, a pinch and mouse actions cannot be said."""
        if isinstance(action, Tap):
            return [{"action": "click", "coordinate": list(ctx.at(action.x, action.y))}]
        if isinstance(action, LongPress):
            seconds = action.duration_ms / 1000
            return [{"action": "long_press", "coordinate": list(ctx.at(action.x, action.y)),
                     "time": int(seconds) if seconds.is_integer() else seconds}]
        if isinstance(action, (Swipe, Fling)):
            if isinstance(action, Fling):
                ctx.lossy("a fling is written as a swipe")
            elif action.duration_ms != _SWIPE_MS:
                ctx.lossy(f"a swipe of {action.duration_ms} ms is written without its duration ({_SWIPE_MS} ms)")
            start, end = swipe_end(action, ctx)
            return [{"action": "swipe", "coordinate": list(start), "coordinate2": list(end)}]
        if isinstance(action, Nav):
            return [{"action": "system_button", "button": _BUTTON_NAMES[action.button]}]
        if isinstance(action, OpenApp):
            return [{"action": "open", "text": action.name}]
        if isinstance(action, Key):
            if action.keys == ["Enter"]:
                return [{"action": "system_button", "button": "Enter"}]
            if len(action.keys) > 1:
                ctx.refuse(f"{self.name} presses one key at a time")
            return [{"action": "key", "text": spell_key(action.keys[0], LOWER_KEY_NAMES)}]
        if isinstance(action, (Type, Wait, Done)):
            return super().render_action(action, ctx)
        if isinstance(action, (DoubleTap, Pinch)):
            ctx.refuse(f"{self.name} has no {action.type} gesture")
        ctx.refuse(f"{self.name} drives a touch screen: it has no {action.type} action")
        raise AssertionError  # unreachable: refuse raises


class Qwen25VLMobile(_MobileUse):
    """Qwen2.5-VL's `mobile_use` tool, in absolute pixels of the smart-resized screenshot."""

    name: ClassVar[str] = "qwen2.5-vl-mobile"


class Qwen3VLMobile(_MobileUse, Qwen3VL):
    """Qwen3-VL's `mobile_use` tool, on the 0..999 grid. Its published tool has `answer` and
    no `key`; `open` is offered as well, for the phone's launcher."""

    name: ClassVar[str] = "qwen3-vl-mobile"
    actions_offered: ClassVar[tuple[str, ...]] = (
        "click", "long_press", "swipe", "type", "answer", "system_button", "open", "wait", "terminate",
    )
