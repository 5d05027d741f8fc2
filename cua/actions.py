"""The unified action schema: what an agent may do in any sandbox.

Actions are plain data (pydantic models in one discriminated union), never code
strings, so that a trajectory can be stored, replayed, validated and diffed.

Coordinates are pixels of the observation the agent last saw. Every observation
states its size, and a sandbox rescales from that frame to its real screen, so an
agent that receives a downscaled screenshot clicks where it meant to.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, field_validator

__all__ = [
    "BROWSER_ONLY",
    "FLING_DURATION_MS",
    "KEY_NAMES",
    "MAX_COORDINATE",
    "MAX_SCROLL",
    "MOUSE_ONLY",
    "POINTER_ACTIONS",
    "TOUCH_ONLY",
    "Action",
    "ActionAdapter",
    "Back",
    "Click",
    "ClickElement",
    "Coordinate",
    "Done",
    "DoubleTap",
    "Drag",
    "ElementId",
    "Fling",
    "Forward",
    "Goto",
    "HoverElement",
    "Key",
    "KeyDown",
    "KeyUp",
    "LongPress",
    "MouseButton",
    "MouseDown",
    "MouseUp",
    "Move",
    "Nav",
    "NavButton",
    "OpenApp",
    "Pinch",
    "Point",
    "Scroll",
    "Swipe",
    "SwipeDirection",
    "Tap",
    "Type",
    "Wait",
    "normalize_key",
    "parse_action",
    "parse_actions",
    "points_of",
]

MouseButton = Literal["left", "right", "middle"]

# Canonical key names (the DOM `KeyboardEvent.key` spelling, which Playwright uses),
# plus every alias the model families emit. Single printable characters are keys too.
KEY_NAMES: frozenset[str] = frozenset(
    {
        "Enter", "Tab", "Escape", "Backspace", "Delete", "Insert", "Space",
        "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight",
        "Home", "End", "PageUp", "PageDown",
        "Shift", "Control", "Alt", "Meta", "CapsLock",
        *(f"F{i}" for i in range(1, 13)),
    }
)

_KEY_ALIASES: dict[str, str] = {
    "enter": "Enter", "return": "Enter", "kp_enter": "Enter",
    "tab": "Tab",
    "esc": "Escape", "escape": "Escape",
    "backspace": "Backspace", "back_space": "Backspace",
    "delete": "Delete", "del": "Delete",
    "insert": "Insert", "ins": "Insert",
    "space": "Space", " ": "Space", "spacebar": "Space",
    "up": "ArrowUp", "arrowup": "ArrowUp",
    "down": "ArrowDown", "arrowdown": "ArrowDown",
    "left": "ArrowLeft", "arrowleft": "ArrowLeft",
    "right": "ArrowRight", "arrowright": "ArrowRight",
    "home": "Home", "end": "End",
    "pageup": "PageUp", "page_up": "PageUp", "pgup": "PageUp", "prior": "PageUp",
    "pagedown": "PageDown", "page_down": "PageDown", "pgdn": "PageDown", "next": "PageDown",
    "shift": "Shift", "shift_l": "Shift", "shift_r": "Shift",
    "ctrl": "Control", "control": "Control", "control_l": "Control", "control_r": "Control",
    "alt": "Alt", "alt_l": "Alt", "alt_r": "Alt", "option": "Alt",
    "meta": "Meta", "cmd": "Meta", "command": "Meta", "super": "Meta", "super_l": "Meta",
    "win": "Meta", "windows": "Meta",
    "capslock": "CapsLock", "caps_lock": "CapsLock",
    **{f"f{i}": f"F{i}" for i in range(1, 13)},
}


def normalize_key(name: str) -> str:
    """Map any common spelling of a key (xdotool, pyautogui, DOM) to its canonical name.

    Raises ValueError for names that are neither canonical, an alias, nor one character.
    """
    if name in KEY_NAMES:
        return name
    if len(name) == 1:
        return "Space" if name == " " else name
    canonical = _KEY_ALIASES.get(name.lower())
    if canonical is None:
        raise ValueError(f"unknown key name {name!r}")
    return canonical


#: One key, by any spelling `normalize_key` takes; validated to its canonical name.
KeyName = Annotated[str, AfterValidator(normalize_key)]


#: Largest |coordinate| accepted, in frame pixels (frames are at most 16384 wide). Points
#: off the frame are the agent's fault and come back in the observation; values past
#: this bound never reach a browser or X server, which misbehave on them (Chromium
#: stops taking pointer input after a wheel delta beyond float32).
MAX_COORDINATE = 100_000.0
#: Largest |dx| or |dy| of one scroll, in pixels (500 wheel notches on X).
MAX_SCROLL = 50_000.0

#: A finite, bounded number of pixels; numbers only (no strings, no booleans).
Coordinate = Annotated[float, Field(ge=-MAX_COORDINATE, le=MAX_COORDINATE, allow_inf_nan=False, strict=True)]
ScrollDelta = Annotated[float, Field(ge=-MAX_SCROLL, le=MAX_SCROLL, allow_inf_nan=False, strict=True)]


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Point(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    x: Coordinate
    y: Coordinate


class Click(_Action):
    type: Literal["click"] = "click"
    x: Coordinate
    y: Coordinate
    button: MouseButton = "left"
    count: int = Field(1, ge=1, le=3, strict=True)


class Move(_Action):
    type: Literal["move"] = "move"
    x: Coordinate
    y: Coordinate


class Drag(_Action):
    """Press at the first point, move through the rest, release at the last."""

    type: Literal["drag"] = "drag"
    path: list[Point] = Field(min_length=2, max_length=512)
    button: MouseButton = "left"


class MouseDown(_Action):
    """Press a button; at (x, y) when given, else where the pointer is."""

    type: Literal["mouse_down"] = "mouse_down"
    button: MouseButton = "left"
    x: Coordinate | None = None
    y: Coordinate | None = None


class MouseUp(_Action):
    type: Literal["mouse_up"] = "mouse_up"
    button: MouseButton = "left"
    x: Coordinate | None = None
    y: Coordinate | None = None


class Scroll(_Action):
    """Scroll by (dx, dy) pixels with the pointer at (x, y); positive dy scrolls down."""

    type: Literal["scroll"] = "scroll"
    x: Coordinate
    y: Coordinate
    dx: ScrollDelta = 0
    dy: ScrollDelta = 0


class Type(_Action):
    type: Literal["type"] = "type"
    text: str = Field(max_length=100_000)


class Key(_Action):
    """Press a combination together, e.g. ["Control", "s"]; "ctrl+s" is accepted too."""

    type: Literal["key"] = "key"
    keys: list[str] = Field(min_length=1, max_length=8)

    @field_validator("keys", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.endswith("++") or text == "+":
                return [*(p.strip() for p in text[:-2].split("+") if p.strip()), "+"]
            return [part.strip() for part in text.split("+")]
        return value

    @field_validator("keys")
    @classmethod
    def _normalize(cls, value: list[str]) -> list[str]:
        return [normalize_key(k) for k in value]


class KeyDown(_Action):
    type: Literal["key_down"] = "key_down"
    key: KeyName


class KeyUp(_Action):
    type: Literal["key_up"] = "key_up"
    key: KeyName


class Wait(_Action):
    """Let time pass (the sandbox still settles and observes afterwards)."""

    type: Literal["wait"] = "wait"
    seconds: float = Field(1.0, ge=0, le=60, allow_inf_nan=False, strict=True)


class Done(_Action):
    """End the episode. `infeasible` declares that the task cannot be done."""

    type: Literal["done"] = "done"
    status: Literal["success", "failure", "infeasible"] = "success"
    answer: str | None = Field(None, max_length=100_000)


class Goto(_Action):
    type: Literal["goto"] = "goto"
    url: str = Field(min_length=1, max_length=8192)


class Back(_Action):
    type: Literal["back"] = "back"


class Forward(_Action):
    type: Literal["forward"] = "forward"


#: An element id from an observation's accessibility tree (`ObserveOptions.element_ids`).
ElementId = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")]


class ClickElement(_Action):
    """Click the centre of the element with this id, as the sandbox finds it at act time.

    For agents that ground by accessibility ids or set-of-marks. The sandbox resolves the
    id to a point (scrolling the element into view first) and reports the pointer action it
    performed in `Observation.resolved_action`, so a trajectory replays in pixels.
    """

    type: Literal["click_element"] = "click_element"
    element: ElementId
    button: MouseButton = "left"
    count: int = Field(1, ge=1, le=3, strict=True)


class HoverElement(_Action):
    """Move the pointer to the centre of the element with this id (see `ClickElement`)."""

    type: Literal["hover_element"] = "hover_element"
    element: ElementId


# --- touch (the mobile sandbox): one finger's gestures, two for a pinch, and the phone's buttons ---

#: The way the finger moves (so "up" scrolls the content down, as on a phone).
SwipeDirection = Literal["up", "down", "left", "right"]
#: The phone's navigation buttons.
NavButton = Literal["back", "home", "recents"]

#: Longest press or gesture, in ms (as long as the longest `Wait`).
MAX_GESTURE_MS = 60_000
#: How long a fling's finger is down, in ms: short enough that every page takes it as a fling.
FLING_DURATION_MS = 50

#: A gesture's duration in whole ms, > 0.
GestureMs = Annotated[int, Field(gt=0, le=MAX_GESTURE_MS, strict=True)]
#: How far a finger travels, in frame pixels, > 0.
Distance = Annotated[float, Field(gt=0, le=MAX_COORDINATE, allow_inf_nan=False, strict=True)]


class Tap(_Action):
    type: Literal["tap"] = "tap"
    x: Coordinate
    y: Coordinate


class DoubleTap(_Action):
    type: Literal["double_tap"] = "double_tap"
    x: Coordinate
    y: Coordinate


class LongPress(_Action):
    """Touch (x, y) and hold for `duration_ms` without moving (a context menu, a drag handle)."""

    type: Literal["long_press"] = "long_press"
    x: Coordinate
    y: Coordinate
    duration_ms: GestureMs = 800


class Swipe(_Action):
    """Put a finger down at (x, y) and move it `distance` pixels towards `direction` in
    `duration_ms`, then lift it. Slow enough by default that content follows without flinging."""

    type: Literal["swipe"] = "swipe"
    x: Coordinate
    y: Coordinate
    direction: SwipeDirection
    distance: Distance
    duration_ms: GestureMs = 300


class Fling(_Action):
    """A swipe fast enough (`FLING_DURATION_MS`) that scrolling content keeps going after the lift."""

    type: Literal["fling"] = "fling"
    x: Coordinate
    y: Coordinate
    direction: SwipeDirection
    distance: Distance = 600.0


class Pinch(_Action):
    """Two fingers centred on (x, y) move apart or together until their spread is `scale`
    times what it was: < 1 pinches in (zooms out), > 1 spreads (zooms in)."""

    type: Literal["pinch"] = "pinch"
    x: Coordinate
    y: Coordinate
    scale: float = Field(gt=0, le=100, allow_inf_nan=False, strict=True)
    duration_ms: GestureMs = 400


#: An app's name as the home screen shows it, or its id: letters, digits, spaces and a few marks.
#: An app's name as its launcher shows it: no surrounding whitespace, which no label has and
#: which a model's reply loses when it is parsed.
AppName = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^\w(?:[\w .&'+-]*[\w.&'+-])?$")]


class OpenApp(_Action):
    """Open an app by name (a launcher action: the phone finds its icon, the agent need not)."""

    type: Literal["open_app"] = "open_app"
    name: AppName


class Nav(_Action):
    """Press one of the phone's navigation buttons (Android's back, home and recents)."""

    type: Literal["nav"] = "nav"
    button: NavButton


Action = Annotated[
    Click | Move | Drag | MouseDown | MouseUp | Scroll | Type | Key | KeyDown | KeyUp | Wait | Done | Goto | Back
    | Forward | ClickElement | HoverElement | Tap | DoubleTap | LongPress | Swipe | Fling | Pinch | OpenApp | Nav,
    Field(discriminator="type"),
]

ActionAdapter: TypeAdapter[Action] = TypeAdapter(Action)
_ActionListAdapter: TypeAdapter[list[Action]] = TypeAdapter(list[Action])

#: Action types that only a browser sandbox can perform.
BROWSER_ONLY: frozenset[str] = frozenset({"goto", "back", "forward", "click_element", "hover_element"})
#: Action types that only a touch screen (the mobile sandbox) takes.
TOUCH_ONLY: frozenset[str] = frozenset({"tap", "double_tap", "long_press", "swipe", "fling", "pinch", "open_app", "nav"})
#: Action types of a mouse, which a touch-only screen refuses.
MOUSE_ONLY: frozenset[str] = frozenset(
    {"click", "move", "drag", "mouse_down", "mouse_up", "scroll", "click_element", "hover_element"})
#: Action types that carry screen coordinates.
POINTER_ACTIONS: frozenset[str] = frozenset(
    {"click", "move", "drag", "mouse_down", "mouse_up", "scroll", "tap", "double_tap", "long_press", "swipe", "fling",
     "pinch"})


def parse_action(data: Any) -> Action:
    """Validate one action from JSON-like data; raises pydantic.ValidationError."""
    return ActionAdapter.validate_python(data)


def parse_actions(data: Any) -> list[Action]:
    return _ActionListAdapter.validate_python(data)


def points_of(action: Action) -> list[tuple[float, float]]:
    """The frame points an action puts a pointer or finger on (a drag's whole path; where a
    swipe starts), [] for one without any. One place for everything that checks or maps them."""
    if isinstance(action, Drag):
        return [(p.x, p.y) for p in action.path]
    if isinstance(action, (MouseDown, MouseUp)):
        return [] if action.x is None or action.y is None else [(action.x, action.y)]
    if isinstance(action, (Click, Move, Scroll, Tap, DoubleTap, LongPress, Swipe, Fling, Pinch)):
        return [(action.x, action.y)]
    return []
