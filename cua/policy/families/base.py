"""What every model family provides: a model frame, a prompt, and a parser.

A family is the contract between cua and one model's habits: which size the
screenshot is sent at and in which coordinates the model answers (`model_frame`), how
the conversation is laid out (`build_messages`), and how its text (or tool calls) turn
into unified actions (`parse`). Parsers are pure functions of the text and a
`ParseContext`; they raise `FamilyParseError` and never execute anything.

Messages use a neutral shape that every backend can render: ``{"role": ..., "content":
[{"type": "text", "text": ...} | {"type": "image", "image": PreparedImage}]}``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import ValidationError

from cua.actions import (
    Action,
    Click,
    Done,
    Drag,
    Key,
    KeyDown,
    KeyUp,
    MouseButton,
    MouseDown,
    MouseUp,
    Move,
    Point,
    Scroll,
    Type,
    Wait,
)
from cua.observation import Size
from cua.policy.imaging import ModelFrame

__all__ = [
    "ActionBuilder",
    "Family",
    "FamilyParseError",
    "Message",
    "ParseContext",
    "Parsed",
    "PreparedImage",
    "RenderContext",
    "Turn",
    "UnrenderableAction",
    "keys_from_names",
]

Message = dict[str, Any]

#: Pixels per mouse-wheel notch, for families that count scrolling in notches
#: (pyautogui clicks, Anthropic's scroll_amount, UI-TARS' fixed scroll step).
DEFAULT_SCROLL_UNIT_PX = 100.0


class FamilyParseError(ValueError):
    """The model's output does not follow the family's format."""


class UnrenderableAction(ValueError):
    """The family's output format cannot express this action (exactly, unless approximating).

    Rendering is the inverse of parsing: a rendered action parses back to itself. What the
    format cannot say (Qwen2.5-VL has no triple click, UI-TARS scrolls by a fixed step) is
    refused rather than silently changed."""


@dataclass
class PreparedImage:
    """A screenshot at the size the model sees it: encoded bytes, and the decoded image
    when a local backend needs pixels. Backends that only forward bytes never decode."""

    size: Size
    data: bytes
    format: str
    _pil: Any = None

    @property
    def dropped(self) -> bool:
        """Whether the bytes were let go (a screenshot older than any prompt shows)."""
        return not self.data

    def pil(self) -> Any:
        if self._pil is None:
            from cua.policy.imaging import decode_image

            self._pil = decode_image(self.data)
        return self._pil


@dataclass
class Turn:
    """One past step of a session, as the prompt needs it."""

    image: PreparedImage | None
    raw: str
    text_state: str | None = None


@dataclass
class ParseContext:
    """What a parser needs beyond the text: the frame mapping and the pointer.

    `pointer` is where the mouse is in observation-frame pixels, when known: families
    whose drags name only the end point (Qwen's left_click_drag, pyautogui's dragTo)
    start there. Parsing updates it as actions move the mouse.
    """

    model: ModelFrame
    pointer: tuple[float, float] | None = None
    scroll_unit_px: float = DEFAULT_SCROLL_UNIT_PX


@dataclass
class Parsed:
    actions: list[Action]
    thought: str | None = None
    #: Text the family wants stored as this turn's assistant message, when the raw
    #: output is not it (e.g. tool calls that arrived as structured data).
    history_text: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# Key names the families write that `cua.actions.normalize_key` does not know:
# xdotool keysyms (Anthropic), pyautogui names (OSWorld), OpenAI's upper-case names.
_EXTRA_KEYS: dict[str, str] = {
    "minus": "-", "plus": "+", "equal": "=", "comma": ",", "period": ".", "slash": "/",
    "backslash": "\\", "semicolon": ";", "colon": ":", "apostrophe": "'", "quotedbl": '"',
    "grave": "`", "asciitilde": "~", "exclam": "!", "at": "@", "numbersign": "#",
    "dollar": "$", "percent": "%", "asciicircum": "^", "ampersand": "&", "asterisk": "*",
    "parenleft": "(", "parenright": ")", "bracketleft": "[", "bracketright": "]",
    "braceleft": "{", "braceright": "}", "less": "<", "greater": ">", "question": "?",
    "underscore": "_", "bar": "|", "linefeed": "Enter", "newline": "Enter",
    "super_r": "Meta", "meta_l": "Meta", "meta_r": "Meta", "hyper": "Meta", "winleft": "Meta",
    "winright": "Meta", "optionleft": "Alt", "optionright": "Alt", "altleft": "Alt",
    "altright": "Alt", "ctrlleft": "Control", "ctrlright": "Control", "shiftleft": "Shift",
    "shiftright": "Shift", "cmd_l": "Meta", "escape_key": "Escape", "arrow_up": "ArrowUp", "arrow_down": "ArrowDown",
    "arrow_left": "ArrowLeft", "arrow_right": "ArrowRight", "kp_up": "ArrowUp",
    "kp_down": "ArrowDown", "kp_left": "ArrowLeft", "kp_right": "ArrowRight",
}


def canonical_key(name: str) -> str:
    from cua.actions import normalize_key

    text = name if len(name) == 1 else name.strip()
    try:
        return normalize_key(text)
    except ValueError:
        mapped = _EXTRA_KEYS.get(text.lower())
        if mapped is None:
            raise FamilyParseError(f"unknown key name {name!r}") from None
        return mapped


def keys_from_names(names: Sequence[str]) -> list[str]:
    keys = [canonical_key(n) for n in names if n != ""]
    if not keys:
        raise FamilyParseError("a key action names no key")
    return keys


def number(value: Any, what: str) -> float:
    """A finite float from a model-written number (int, float or numeric string)."""
    if isinstance(value, bool):
        raise FamilyParseError(f"{what} must be a number, got {value!r}")
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise FamilyParseError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(result):
        raise FamilyParseError(f"{what} must be finite, got {value!r}")
    return result


def pair(value: Any, what: str) -> tuple[float, float]:
    if isinstance(value, dict) and "x" in value and "y" in value:
        return number(value["x"], what), number(value["y"], what)
    if isinstance(value, str):
        parts = value.replace("(", " ").replace(")", " ").replace("[", " ").replace("]", " ").replace(",", " ").split()
        value = parts
    if not isinstance(value, (list, tuple)) or len(value) not in (2, 4):
        raise FamilyParseError(f"{what} must be [x, y], got {value!r}")
    if len(value) == 4:  # a box: its centre
        x1, y1, x2, y2 = (number(v, what) for v in value)
        return (x1 + x2) / 2, (y1 + y2) / 2
    return number(value[0], what), number(value[1], what)


class ActionBuilder:
    """Collects unified actions while mapping model coordinates to the frame and
    keeping the pointer position up to date."""

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.actions: list[Action] = []

    # -- coordinates ---------------------------------------------------------------
    def at(self, x: float, y: float) -> tuple[float, float]:
        return self.ctx.model.to_frame(x, y)

    def here(self) -> tuple[float, float]:
        """Where the pointer is; the frame's centre when nothing moved it yet."""
        if self.ctx.pointer is not None:
            return self.ctx.pointer
        frame = self.ctx.model.frame
        return (frame.width - 1) / 2, (frame.height - 1) / 2

    def _moved(self, point: tuple[float, float]) -> None:
        self.ctx.pointer = point

    # -- actions ---------------------------------------------------------------------
    def add(self, action: Action) -> None:
        self.actions.append(action)

    def click(self, point: tuple[float, float] | None, button: MouseButton = "left", count: int = 1) -> None:
        x, y = point if point is not None else self.here()
        while count > 0:
            self.add(Click(x=x, y=y, button=button, count=min(count, 3)))
            count -= 3
        self._moved((x, y))

    def move(self, point: tuple[float, float]) -> None:
        self.add(Move(x=point[0], y=point[1]))
        self._moved(point)

    def drag(self, start: tuple[float, float] | None, end: tuple[float, float], button: MouseButton = "left") -> None:
        """Drag to `end`, from `start` or, when the model names no start, from where the
        pointer is. An unknown pointer is pressed where it really is (a MouseDown
        without coordinates) rather than at a guessed point."""
        start = start if start is not None else self.ctx.pointer
        if start is not None:
            self.drag_path([start, end], button)
            return
        self.add(MouseDown(button=button))
        self.add(Move(x=end[0], y=end[1]))
        self.add(MouseUp(button=button))
        self._moved(end)

    def drag_path(self, path: Sequence[tuple[float, float]], button: MouseButton = "left") -> None:
        if len(path) < 2:
            raise FamilyParseError("a drag path needs at least two points")
        if len(path) > 512:
            raise FamilyParseError(f"a drag path may have at most 512 points, got {len(path)}")
        self.add(Drag(path=[Point(x=x, y=y) for x, y in path], button=button))
        self._moved(path[-1])

    def scroll(self, point: tuple[float, float] | None, dx: float, dy: float) -> None:
        x, y = point if point is not None else self.here()
        self.add(Scroll(x=x, y=y, dx=dx, dy=dy))
        if point is not None:
            self._moved(point)

    def mouse_down(self, point: tuple[float, float] | None, button: MouseButton = "left") -> None:
        self._press(MouseDown, point, button)

    def mouse_up(self, point: tuple[float, float] | None, button: MouseButton = "left") -> None:
        self._press(MouseUp, point, button)

    def _press(self, kind: type[MouseDown] | type[MouseUp], point: tuple[float, float] | None,
               button: MouseButton) -> None:
        if point is None:
            self.add(kind(button=button))
        else:
            self.add(kind(button=button, x=point[0], y=point[1]))
            self._moved(point)

    def key(self, names: Sequence[str]) -> None:
        keys = keys_from_names(names)
        try:
            self.add(Key(keys=keys))
        except ValidationError as exc:
            raise FamilyParseError(f"bad key combination {list(names)!r}: {exc.errors()[0]['msg']}") from None

    def key_down(self, name: str) -> None:
        self.add(KeyDown(key=canonical_key(name)))

    def key_up(self, name: str) -> None:
        self.add(KeyUp(key=canonical_key(name)))

    def type(self, text: str) -> None:
        if not isinstance(text, str):
            raise FamilyParseError(f"text to type must be a string, got {text!r}")
        if text:
            self.add(Type(text=text))

    def wait(self, seconds: float) -> None:
        self.add(Wait(seconds=min(max(seconds, 0.0), 60.0)))

    def done(self, status: str = "success", answer: str | None = None) -> None:
        if status not in ("success", "failure", "infeasible"):
            raise FamilyParseError(f"unknown termination status {status!r}")
        self.add(Done.model_validate({"status": status, "answer": answer}))


#: The click actions of the computer tools Anthropic and Qwen-Agent define (the same
#: names in both), as the (button, count) each one is.
CLICK_ACTIONS: dict[str, tuple[MouseButton, int]] = {
    "left_click": ("left", 1), "right_click": ("right", 1), "middle_click": ("middle", 1),
    "double_click": ("left", 2), "triple_click": ("left", 3),
}
#: The other way: (button, count) -> the click action's name.
CLICK_ACTION_NAMES: dict[tuple[str, int], str] = {click: name for name, click in CLICK_ACTIONS.items()}

#: Canonical key name -> the lower-case names Qwen-Agent and UI-TARS models write.
LOWER_KEY_NAMES: dict[str, str] = {
    "Control": "ctrl", "Shift": "shift", "Alt": "alt", "Meta": "meta", "Enter": "enter",
    "Escape": "esc", "Backspace": "backspace", "Delete": "delete", "Insert": "insert",
    "Space": "space", "Tab": "tab", "ArrowUp": "up", "ArrowDown": "down", "ArrowLeft": "left",
    "ArrowRight": "right", "Home": "home", "End": "end", "PageUp": "pageup", "PageDown": "pagedown",
    "CapsLock": "capslock", **{f"F{i}": f"f{i}" for i in range(1, 13)},
}


def spell_key(key: str, names: dict[str, str]) -> str:
    """A canonical key name (`cua.actions.normalize_key`) in a family's spelling; single
    characters stay as they are (their case is the key)."""
    return names.get(key, key)


def render_number(value: float) -> int | float:
    """A number as a model writes it: an integer when it is one, else two decimals."""
    rounded = round(value, 2)
    return int(rounded) if rounded == int(rounded) else rounded


class RenderContext:
    """What rendering one turn needs: the model frame (observation pixels -> the model's
    coordinates) and whether lossy approximations are allowed.

    With ``approximate=False`` (the round-trip contract) anything the format cannot say
    exactly raises `UnrenderableAction`. With ``approximate=True`` the documented nearest
    expression is used instead (each family's `render` docstring lists them), and
    `approximations` names each one, so an exporter can flag the row."""

    def __init__(self, model: ModelFrame, approximate: bool = False) -> None:
        self.model = model
        self.approximate = approximate
        self.approximations: list[str] = []

    def at(self, x: float, y: float) -> tuple[int, int]:
        return self.model.from_frame(x, y)

    def lossy(self, what: str) -> None:
        """Allow an approximation, or refuse it."""
        if not self.approximate:
            raise UnrenderableAction(what)
        self.approximations.append(what)

    def refuse(self, what: str) -> None:
        raise UnrenderableAction(what)

    def endpoints(self, action: Drag) -> tuple[tuple[int, int], tuple[int, int]]:
        """A drag's start and end, for formats that name only those two points."""
        if len(action.path) > 2:
            self.lossy(f"a drag through {len(action.path)} points becomes a straight drag between its ends")
        first, last = action.path[0], action.path[-1]
        return self.at(first.x, first.y), self.at(last.x, last.y)

    def dominant_scroll(self, action: Scroll) -> tuple[float, float]:
        """(dx, dy) with only one axis, for formats that scroll one axis per action."""
        if action.dx and action.dy:
            self.lossy("a diagonal scroll keeps only its larger axis")
            return (action.dx, 0.0) if abs(action.dx) >= abs(action.dy) else (0.0, action.dy)
        return action.dx, action.dy


class Family(ABC):
    """One model family's prompt layout and output parser. Instances are stateless
    apart from their configuration; sessions live in the engine."""

    name: ClassVar[str]
    #: Format the screenshot is re-encoded in when it must be resized.
    image_format: ClassVar[str] = "png"
    #: Whether tools go in the request's `tools` field rather than in the prompt.
    tool_api: bool = False

    def __init__(self, *, scroll_unit_px: float = DEFAULT_SCROLL_UNIT_PX) -> None:
        self.scroll_unit_px = scroll_unit_px

    # -- geometry --------------------------------------------------------------------
    def model_frame(self, frame: Size) -> ModelFrame:
        """How the screenshot is resized for the model and what its coordinates mean."""
        return ModelFrame.identity(frame)

    def context(self, frame: Size, pointer: tuple[float, float] | None = None) -> ParseContext:
        return ParseContext(model=self.model_frame(frame), pointer=pointer, scroll_unit_px=self.scroll_unit_px)

    # -- prompt ----------------------------------------------------------------------
    @abstractmethod
    def system_prompt(self, model: ModelFrame) -> str | None: ...

    def instruction_text(self, instruction: str) -> str:
        return instruction

    def tools(self, model: ModelFrame) -> list[dict[str, Any]] | None:
        """OpenAI-style tool definitions, for families whose servers take tools."""
        return None

    def request_tools(self, model: ModelFrame) -> list[dict[str, Any]] | None:
        """Tools to send in the request's `tools` field: only for families told to use
        the server's tool calling (``tool_api=True``) instead of describing the tools in
        the prompt."""
        return self.tools(model) if self.tool_api else None

    def build_messages(
        self,
        instruction: str,
        history: Sequence[Turn],
        current: PreparedImage | None,
        text_state: str | None,
        model: ModelFrame,
        max_images: int,
    ) -> list[Message]:
        """The conversation: system prompt, the task, then alternating screenshots and
        the model's past answers, keeping only the last `max_images` screenshots
        (older ones become a short placeholder, so the text history stays whole)."""
        messages: list[Message] = []
        system = self.system_prompt(model)
        if system:
            messages.append({"role": "system", "content": [{"type": "text", "text": system}]})
        images = [t.image for t in history] + [current]
        keep_from = max(0, len(images) - max_images)
        task = {"type": "text", "text": self.instruction_text(instruction)}
        for index, turn in enumerate([*history, None]):
            image = images[index]
            state = text_state if turn is None else turn.text_state
            content: list[dict[str, Any]] = [task] if index == 0 else []
            if image is not None and not image.dropped and index >= keep_from:
                content.append({"type": "image", "image": image})
            elif image is not None:
                content.append({"type": "text", "text": "(earlier screenshot omitted)"})
            if state:
                content.append({"type": "text", "text": state})
            messages.append({"role": "user", "content": content})
            if turn is not None:
                messages.append({"role": "assistant", "content": [{"type": "text", "text": turn.raw}]})
        return messages

    # -- parsing ---------------------------------------------------------------------
    @abstractmethod
    def parse(self, raw: str, ctx: ParseContext) -> Parsed:
        """Turn the model's text into actions in the observation frame."""

    def parse_tool_calls(self, tool_calls: list[dict[str, Any]], content: str, ctx: ParseContext) -> Parsed:
        """Turn OpenAI-style `tool_calls` of a chat completion into actions. Families
        whose models answer in plain text only fall back to parsing the text."""
        return self.parse(content, ctx)

    # -- rendering (the inverse of parsing) --------------------------------------------
    def render(
        self,
        actions: Sequence[Action],
        frame: Size,
        *,
        thought: str | None = None,
        approximate: bool = False,
    ) -> str:
        """The text this family's model would write for one turn: `thought`, then
        `actions` (observation-frame pixels of `frame`) in the model's own coordinates.

        `parse` of the result gives `actions` back within one model coordinate unit
        (under 1 px for frames up to about 2000 px), and the same thought. Raises
        `UnrenderableAction` for what the format cannot express."""
        ctx = RenderContext(self.model_frame(frame), approximate)
        return self.render_turn(list(actions), thought, ctx)

    def render_turn(self, actions: list[Action], thought: str | None, ctx: RenderContext) -> str:
        raise UnrenderableAction(f"the {self.name} family has no renderer")
