"""Qwen2.5-VL: the `computer_use` function tool, absolute pixels of the resized image.

The model answers with ``<tool_call>{"name": "computer_use", "arguments": {...}}</tool_call>``
blocks (Hermes/Qwen-Agent function calling). Coordinates are pixels of the image after
qwen-vl-utils' smart_resize (factor 28); `left_click_drag` names only the end point and
starts where the pointer is; `scroll` counts pixels, positive scrolls up.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from cua.actions import Action, Click, Done, Drag, Key, Move, Scroll, Type, Wait
from cua.observation import Size
from cua.policy.families.base import (
    CLICK_ACTION_NAMES,
    CLICK_ACTIONS,
    LOWER_KEY_NAMES,
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
from cua.policy.imaging import ModelFrame, smart_resize

__all__ = ["Qwen25VL", "extract_tool_calls"]

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def _decode_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in `text` (models sometimes add prose or a stray brace)."""
    start = text.find("{")
    if start < 0:
        raise FamilyParseError(f"no JSON object in tool call {text[:200]!r}")
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        if text[start:].startswith("{{"):  # a template's doubled brace, copied by the model
            return _decode_json_object(text[start + 1 :])
        raise FamilyParseError(f"tool call is not valid JSON ({exc.msg} at {exc.pos}): {text[:200]!r}") from None
    if not isinstance(value, dict):
        raise FamilyParseError(f"tool call must be a JSON object, got {type(value).__name__}")
    return value


def extract_tool_calls(raw: str) -> tuple[list[dict[str, Any]], str]:
    """Hermes-style tool calls in `raw`, and the text before the first one (the thought)."""
    blocks = list(_TOOL_CALL.finditer(raw))
    if blocks:
        calls = [_decode_json_object(m.group(1)) for m in blocks if m.group(1).strip()]
        prose = raw[: blocks[0].start()]
    else:  # some servers strip the tags but leave the JSON
        start = raw.find('{"name"')
        if start < 0:
            start = raw.find("{")
        if start < 0 or '"arguments"' not in raw[start:]:
            raise FamilyParseError("no <tool_call> in the output")
        calls = [_decode_json_object(raw[start:])]
        prose = raw[:start]
    if not calls:
        raise FamilyParseError("empty <tool_call> block")
    return calls, prose


def _split_thought(prose: str) -> str | None:
    thinking = " ".join(m.group(1).strip() for m in _THINK.finditer(prose))
    rest = _THINK.sub("", prose).replace("</think>", "").strip()
    thought = "\n".join(t for t in (thinking, rest) if t)
    return thought or None


class Qwen25VL(Family):
    name: ClassVar[str] = "qwen2.5-vl"
    #: The smart_resize patch factor; an instance may override it (``factor=``).
    factor: int = 28
    #: The tool the prompt offers and rendered turns call (the phone families: `mobile_use`).
    tool_name: ClassVar[str] = "computer_use"
    #: Actions the tool description offers (and the parser accepts).
    actions_offered: ClassVar[tuple[str, ...]] = (
        "key", "type", "mouse_move", "left_click", "left_click_drag", "right_click",
        "middle_click", "double_click", "scroll", "wait", "terminate",
    )

    def __init__(
        self,
        *,
        min_pixels: int | None = None,
        max_pixels: int | None = None,
        factor: int | None = None,
        tool_api: bool = False,
        **kw: Any,
    ) -> None:
        """`tool_api`: send the tool in the request's `tools` field and let the server's
        chat template describe it (vLLM ``--enable-auto-tool-choice``), instead of
        describing it in our system prompt."""
        super().__init__(**kw)
        self.tool_api = tool_api
        if factor is not None:
            self.factor = factor
        self.min_pixels = min_pixels
        self.max_pixels = max_pixels

    # -- geometry --------------------------------------------------------------------
    def image_size(self, frame: Size) -> Size:
        height, width = smart_resize(frame.height, frame.width, self.factor, self.min_pixels, self.max_pixels)
        return Size(width=width, height=height)

    def model_frame(self, frame: Size) -> ModelFrame:
        return ModelFrame.pixels(frame, self.image_size(frame))

    # -- prompt ----------------------------------------------------------------------
    def coordinate_help(self, model: ModelFrame) -> str:
        return (
            f"* The screen's resolution is {model.image.width}x{model.image.height}; coordinates are "
            "pixels (x from the left, y from the top)."
        )

    def action_descriptions(self) -> dict[str, str]:
        return {
            "key": "press keys together, e.g. keys=['ctrl', 'c']",
            "type": "type a string of text",
            "mouse_move": "move the pointer to `coordinate`",
            "left_click": "click the left button at `coordinate`",
            "left_click_drag": "press the left button where the pointer is and drag to `coordinate`",
            "right_click": "click the right button at `coordinate`",
            "middle_click": "click the middle button at `coordinate`",
            "double_click": "double-click the left button at `coordinate`",
            "triple_click": "triple-click the left button at `coordinate`",
            "scroll": "scroll the wheel by `pixels` (positive up, negative down)",
            "hscroll": "scroll horizontally by `pixels` (positive right, negative left)",
            "wait": "wait `time` seconds",
            "answer": "give the final answer `text` to the user",
            "terminate": "end the task with `status` success or failure",
        }

    def tool_schema(self, model: ModelFrame) -> dict[str, Any]:
        return self.function_tool(
            "computer_use", model,
            "Use a mouse and keyboard to interact with a computer, and take screenshots.\n"
            "* This is a graphical interface; act only through these actions.\n"
            "* Wait for slow applications to respond before acting again.",
            "* Aim at the centre of the element you mean to click.",
            {
                "keys": {"type": "array", "description": "keys, for action=key"},
                "text": {"type": "string", "description": "for action=type and action=answer"},
                "coordinate": {"type": "array", "description": "(x, y) for pointer actions"},
                "pixels": {"type": "number", "description": "scroll amount, for action=scroll"},
                "time": {"type": "number", "description": "seconds, for action=wait"},
                "status": {"type": "string", "enum": ["success", "failure"]},
            })

    def function_tool(self, name: str, model: ModelFrame, lead: str, aim: str,
                      properties: dict[str, Any]) -> dict[str, Any]:
        """The one function tool Qwen's prompts offer: `lead` says what it drives, then the
        coordinate system, `aim`, and each offered action's description; `action` is required
        and its enum is the offered actions, beside `properties`."""
        described = self.action_descriptions()
        description = (f"{lead}\n{self.coordinate_help(model)}\n{aim}\nThe action parameter is one of:\n"
                       + "\n".join(f"* `{a}`: {described[a]}" for a in self.actions_offered))
        return {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": {
                    "type": "object",
                    "required": ["action"],
                    "properties": {"action": {"type": "string", "enum": list(self.actions_offered)}, **properties},
                },
            },
        }

    def tools(self, model: ModelFrame) -> list[dict[str, Any]] | None:
        return [self.tool_schema(model)]

    def system_prompt(self, model: ModelFrame) -> str:
        if self.tool_api:
            return "You are a helpful assistant."
        return (
            "You are a helpful assistant.\n\n# Tools\n\n"
            "You may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
            f"{json.dumps(self.tool_schema(model))}\n</tools>\n\n"
            "For each function call, return a json object with function name and arguments within "
            "<tool_call></tool_call> XML tags:\n<tool_call>\n"
            '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
        )

    # -- parsing ---------------------------------------------------------------------
    def parse(self, raw: str, ctx: ParseContext) -> Parsed:
        calls, prose = extract_tool_calls(raw)
        builder = ActionBuilder(ctx)
        for call in calls:
            self._apply(call, builder)
        return Parsed(actions=builder.actions, thought=_split_thought(prose))

    def parse_tool_calls(self, tool_calls: list[dict[str, Any]], content: str, ctx: ParseContext) -> Parsed:
        builder = ActionBuilder(ctx)
        calls: list[dict[str, Any]] = []
        for call in tool_calls:
            function = call.get("function", call)
            arguments = function.get("arguments", {})
            if isinstance(arguments, str):
                arguments = _decode_json_object(arguments) if arguments.strip() else {}
            calls.append({"name": function.get("name"), "arguments": arguments})
        for call in calls:
            self._apply(call, builder)
        history = (content.strip() + "\n" if content.strip() else "") + "\n".join(
            f"<tool_call>\n{json.dumps(c)}\n</tool_call>" for c in calls
        )
        return Parsed(actions=builder.actions, thought=_split_thought(content), history_text=history)

    def _apply(self, call: dict[str, Any], b: ActionBuilder) -> None:
        name = call.get("name")
        if name not in ("computer_use", "mobile_use"):
            raise FamilyParseError(f"unknown tool {name!r} (expected computer_use)")
        args = call.get("arguments")
        if isinstance(args, str):
            args = _decode_json_object(args)
        if not isinstance(args, dict):
            raise FamilyParseError("tool call has no arguments object")
        action = args.get("action")
        if name == "mobile_use":
            self.apply_mobile_action(str(action), args, b)
            return
        if action not in self.actions_offered:
            raise FamilyParseError(f"unknown computer_use action {action!r}")
        self.apply_action(str(action), args, b)

    def apply_mobile_action(self, action: str, args: dict[str, Any], b: ActionBuilder) -> None:
        """Qwen's `mobile_use` tool (same coordinates): taps and swipes become mouse
        actions, so a phone-trained checkpoint can drive a touch-sized browser."""
        if action == "click":
            b.click(self.point(args, b), "left", 1)
        elif action == "long_press":
            b.mouse_down(self.point(args, b))
            b.wait(number(args.get("time", 1), "time"))
            b.mouse_up(None)
        elif action == "swipe":
            start, end = self.point(args, b), args.get("coordinate2")
            if end is None:
                raise FamilyParseError("swipe needs coordinate2")
            b.drag(start, b.at(*pair(end, "coordinate2")))
        elif action == "system_button":
            button = str(args.get("button", ""))
            if button == "Back":
                from cua.actions import Back

                b.add(Back())
            elif button == "Enter":
                b.key(["Enter"])
            else:
                raise FamilyParseError(f"system button {button!r} has no desktop or browser equivalent")
        elif action in ("type", "wait", "terminate", "answer"):
            self.apply_action(action, args, b)
        elif action == "key":
            self.apply_action("key", {"keys": [args.get("text", "")]}, b)
        else:
            raise FamilyParseError(f"mobile_use action {action!r} has no desktop or browser equivalent")

    def point(self, args: dict[str, Any], b: ActionBuilder, required: bool = True) -> tuple[float, float] | None:
        if args.get("coordinate") is None:
            if required:
                raise FamilyParseError(f"action {args.get('action')!r} needs a coordinate")
            return None
        x, y = pair(args["coordinate"], "coordinate")
        return b.at(x, y)

    def apply_action(self, action: str, args: dict[str, Any], b: ActionBuilder) -> None:
        if action == "key":
            keys = args.get("keys", args.get("key", args.get("text")))
            if isinstance(keys, str):
                keys = keys.replace("+", " ").split() if len(keys) > 1 else [keys]
            if not isinstance(keys, list):
                raise FamilyParseError("action key needs `keys`")
            b.key([str(k) for k in keys])
        elif action == "type":
            b.type(args.get("text", ""))
        elif action == "mouse_move":
            point = self.point(args, b)
            assert point is not None
            b.move(point)
        elif action in CLICK_ACTIONS:
            button, count = CLICK_ACTIONS[action]
            b.click(self.point(args, b, required=False), button, count)
        elif action == "left_click_drag":
            end = self.point(args, b)
            assert end is not None
            start = None
            if args.get("start_coordinate") is not None:
                start = b.at(*pair(args["start_coordinate"], "start_coordinate"))
            b.drag(start, end)
        elif action in ("scroll", "hscroll"):
            pixels = number(args.get("pixels", 0), "pixels")
            if action == "scroll":
                b.scroll(self.point(args, b, required=False), 0.0, -pixels)
            else:
                b.scroll(self.point(args, b, required=False), pixels, 0.0)
        elif action == "wait":
            b.wait(number(args.get("time", 1), "time"))
        elif action == "answer":
            b.done("success", str(args.get("text", "")))
        elif action == "terminate":
            status = args.get("status", "success")
            previous = b.actions[-1] if b.actions else None
            if previous is not None and previous.type == "done":  # answer, then terminate
                b.actions.pop()
                b.done(status, previous.answer)
            else:
                b.done(status)
        else:  # pragma: no cover - guarded by actions_offered
            raise FamilyParseError(f"unsupported action {action!r}")

    # -- rendering -------------------------------------------------------------------
    def render_turn(self, actions: list[Action], thought: str | None, ctx: RenderContext) -> str:
        """The thought as prose, then one ``<tool_call>`` block per call.

        Approximations (``approximate=True``): a drag through several points becomes a
        straight drag between its ends; a diagonal scroll keeps its larger axis; where the
        tool has no `answer` (Qwen2.5-VL) a final answer is dropped; `infeasible` is
        written as status failure."""
        if thought is not None and any(tag in thought for tag in ("<tool_call>", "<think>", "</think>")):
            ctx.refuse("a thought that contains the format's own tags")
        calls: list[dict[str, Any]] = []
        for action in actions:
            for arguments in self.render_action(action, ctx):
                if arguments["action"] not in self.actions_offered:
                    ctx.refuse(f"{self.name} offers no {arguments['action']} action")
                calls.append({"name": self.tool_name, "arguments": arguments})
        if not calls:
            ctx.refuse("a turn without actions")
        # "<" never occurs in JSON syntax, only in strings, where \u003c reads back the same
        blocks = ["<tool_call>\n" + json.dumps(c, ensure_ascii=False).replace("<", "\\u003c") + "\n</tool_call>"
                  for c in calls]
        prose = thought.strip() + "\n" if thought and thought.strip() else ""
        return prose + "\n".join(blocks)

    def render_action(self, action: Action, ctx: RenderContext) -> list[dict[str, Any]]:
        if isinstance(action, Click):
            name = CLICK_ACTION_NAMES.get((action.button, action.count))
            if name is None:
                ctx.refuse(f"{self.name} cannot click the {action.button} button {action.count} times")
            return [{"action": name, "coordinate": list(ctx.at(action.x, action.y))}]
        if isinstance(action, Move):
            return [{"action": "mouse_move", "coordinate": list(ctx.at(action.x, action.y))}]
        if isinstance(action, Drag):
            if action.button != "left":
                ctx.refuse(f"{self.name} drags only with the left button")
            start, end = ctx.endpoints(action)
            return [{"action": "left_click_drag", "start_coordinate": list(start), "coordinate": list(end)}]
        if isinstance(action, Scroll):
            dx, dy = ctx.dominant_scroll(action)
            at = list(ctx.at(action.x, action.y))
            if dx:
                return [{"action": "hscroll", "coordinate": at, "pixels": render_number(dx)}]
            return [{"action": "scroll", "coordinate": at, "pixels": render_number(-dy)}]
        if isinstance(action, Type):
            if not action.text:
                ctx.refuse("typing nothing")
            return [{"action": "type", "text": action.text}]
        if isinstance(action, Key):
            return [{"action": "key", "keys": [spell_key(k, LOWER_KEY_NAMES) for k in action.keys]}]
        if isinstance(action, Wait):
            return [{"action": "wait", "time": render_number(action.seconds)}]
        if isinstance(action, Done):
            status = action.status
            if status == "infeasible":
                ctx.lossy("infeasible is written as status failure")
                status = "failure"
            calls: list[dict[str, Any]] = []
            if action.answer is not None:
                if "answer" in self.actions_offered:
                    calls.append({"action": "answer", "text": action.answer})
                else:
                    ctx.lossy(f"{self.name} has no answer action: the answer is dropped")
            return [*calls, {"action": "terminate", "status": status}]
        ctx.refuse(f"{self.name} has no {action.type} action")
        raise AssertionError  # unreachable: refuse raises
