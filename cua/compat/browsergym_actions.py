"""BrowserGym's high-level action strings, parsed into cua's unified actions.

BrowserGym agents answer with Python-looking calls, `click("a51")` or
`fill("12", "Alice")\\npress("12", "Enter")`, which BrowserGym itself runs with `exec`.
Here they are parsed with `ast` and never run: only calls of the functions below, with
literal arguments, are accepted, and each becomes one or more cua actions. Element ids
(`bid`s) are cua's element ids (`ObserveOptions.element_ids`), resolved by the sandbox at
act time through `click_element` / `hover_element`.

What needs the page's current state to decide (whether a checkbox is ticked, where two
elements are for a drag) reads the latest observation's accessibility tree, which the env
passes in as `elements`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cua.actions import (
    Action,
    Back,
    Click,
    ClickElement,
    Done,
    Drag,
    Forward,
    Goto,
    HoverElement,
    Key,
    KeyDown,
    KeyUp,
    MouseDown,
    MouseUp,
    Move,
    Point,
    Scroll,
    Type,
    Wait,
)

__all__ = ["ACTION_SET", "BrowserGymActionError", "Elements", "parse_browsergym_action"]

#: bid -> its accessibility node ({"id", "role", "name", "bbox", "states"}) from the last observation.
Elements = Mapping[str, dict[str, Any]]


class BrowserGymActionError(ValueError):
    """The action string is not a sequence of supported calls with literal arguments.
    The env reports it as `last_action_error`, as BrowserGym does, and the episode goes on."""


@dataclass(frozen=True)
class _Context:
    elements: Elements
    viewport: tuple[int, int]


def _key_combo(combo: str) -> Key:
    # Playwright spells combinations "Control+Shift+a"; cua's Key takes the same.
    return Key.model_validate({"keys": combo})


def _centre(ctx: _Context, bid: str) -> tuple[float, float]:
    node = ctx.elements.get(str(bid))
    if node is None or "bbox" not in node:
        raise BrowserGymActionError(f"no element with bid {bid!r} (and a box) in the last observation")
    box = node["bbox"]
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def _states(ctx: _Context, bid: str) -> list[str]:
    node = ctx.elements.get(str(bid))
    if node is None:
        raise BrowserGymActionError(f"no element with bid {bid!r} in the last observation")
    return list(node.get("states", ()))


def _click(ctx: _Context, bid: str, button: str = "left", modifiers: list[str] | None = None) -> list[Action]:
    mods = [str(m) for m in modifiers or []]
    click = ClickElement.model_validate({"element": str(bid), "button": button})  # the agent's button name, validated
    return [*(KeyDown(key=m) for m in mods), click,
            *(KeyUp(key=m) for m in reversed(mods))]


def _dblclick(ctx: _Context, bid: str, button: str = "left", modifiers: list[str] | None = None) -> list[Action]:
    mods = [str(m) for m in modifiers or []]
    click = ClickElement.model_validate({"element": str(bid), "button": button, "count": 2})
    return [*(KeyDown(key=m) for m in mods), click,
            *(KeyUp(key=m) for m in reversed(mods))]


def _fill(ctx: _Context, bid: str, value: str, enable_autocomplete_menu: bool = False) -> list[Action]:
    # Playwright's fill replaces the content: select it all, then type over it (or delete it).
    return [ClickElement(element=str(bid)), Key(keys=["Control", "a"]),
            Type(text=str(value)) if value else Key(keys=["Backspace"])]


def _clear(ctx: _Context, bid: str) -> list[Action]:
    return [ClickElement(element=str(bid)), Key(keys=["Control", "a"]), Key(keys=["Backspace"])]


def _set_checked(want: bool) -> Callable[..., list[Action]]:
    def run(ctx: _Context, bid: str) -> list[Action]:
        checked = "checked" in _states(ctx, bid)
        return [] if checked == want else [ClickElement(element=str(bid))]
    return run


def _select_option(ctx: _Context, bid: str, options: str | list[str]) -> list[Action]:
    if isinstance(options, list):
        if len(options) != 1:
            raise BrowserGymActionError("select_option with several options (a multi-select) is not supported")
        options = options[0]
    # A focused <select> picks the option whose text starts with what is typed.
    return [ClickElement(element=str(bid)), Key(keys=["Escape"]), Type(text=str(options)), Key(keys=["Enter"])]


def _drag_and_drop(ctx: _Context, from_bid: str, to_bid: str) -> list[Action]:
    (x0, y0), (x1, y1) = _centre(ctx, from_bid), _centre(ctx, to_bid)
    return [Drag(path=[Point(x=x0, y=y0), Point(x=x1, y=y1)])]


def _scroll(ctx: _Context, delta_x: float, delta_y: float) -> list[Action]:
    w, h = ctx.viewport
    return [Scroll(x=w / 2, y=h / 2, dx=float(delta_x), dy=float(delta_y))]


def _noop(ctx: _Context, wait_ms: float = 1000) -> list[Action]:
    return [Wait(seconds=min(60.0, max(0.0, float(wait_ms) / 1000)))]


_FUNCTIONS: dict[str, Callable[..., list[Action]]] = {
    "click": _click,
    "dblclick": _dblclick,
    "hover": lambda ctx, bid: [HoverElement(element=str(bid))],
    "fill": _fill,
    "clear": _clear,
    "check": _set_checked(True),
    "uncheck": _set_checked(False),
    "focus": lambda ctx, bid: [ClickElement(element=str(bid))],
    "press": lambda ctx, bid, key_comb: [ClickElement(element=str(bid)), _key_combo(str(key_comb))],
    "select_option": _select_option,
    "drag_and_drop": _drag_and_drop,
    "scroll": _scroll,
    "scroll_at": lambda ctx, x, y, dx, dy: [Scroll(x=float(x), y=float(y), dx=float(dx), dy=float(dy))],
    "mouse_move": lambda ctx, x, y: [Move(x=float(x), y=float(y))],
    "mouse_click": lambda ctx, x, y, button="left": [Click(x=float(x), y=float(y), button=button)],
    "mouse_dblclick": lambda ctx, x, y, button="left": [Click(x=float(x), y=float(y), button=button, count=2)],
    "mouse_down": lambda ctx, x, y, button="left": [MouseDown(x=float(x), y=float(y), button=button)],
    "mouse_up": lambda ctx, x, y, button="left": [MouseUp(x=float(x), y=float(y), button=button)],
    "mouse_drag_and_drop": lambda ctx, from_x, from_y, to_x, to_y: [
        Drag(path=[Point(x=float(from_x), y=float(from_y)), Point(x=float(to_x), y=float(to_y))])],
    "keyboard_press": lambda ctx, key: [_key_combo(str(key))],
    "keyboard_down": lambda ctx, key: [KeyDown(key=str(key))],
    "keyboard_up": lambda ctx, key: [KeyUp(key=str(key))],
    "keyboard_type": lambda ctx, text: [Type(text=str(text))],
    "keyboard_insert_text": lambda ctx, text: [Type(text=str(text))],
    "goto": lambda ctx, url: [Goto(url=str(url))],
    "go_back": lambda ctx: [Back()],
    "go_forward": lambda ctx: [Forward()],
    "noop": _noop,
    "send_msg_to_user": lambda ctx, text: [Done(status="success", answer=str(text))],
    "report_infeasible": lambda ctx, reason: [Done(status="infeasible", answer=str(reason))],
}
#: BrowserGym functions cua does not offer, and why (reported by name, not as a parse error).
_UNSUPPORTED = {
    "new_tab": "a cua sandbox has one page", "tab_close": "a cua sandbox has one page",
    "tab_focus": "a cua sandbox has one page", "upload_file": "file chooser uploads are not supported",
    "mouse_upload_file": "file chooser uploads are not supported",
}
#: The action set this parser accepts (BrowserGym's "bid", "coord", "nav", "chat" and "infeas" subsets).
ACTION_SET: tuple[str, ...] = tuple(sorted(_FUNCTIONS))


def _literal(node: ast.expr, where: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError) as exc:
        raise BrowserGymActionError(f"{where}: arguments must be literals, got {ast.unparse(node)!r}") from exc


def parse_browsergym_action(text: str, *, elements: Elements | None = None,
                            viewport: tuple[int, int] = (1280, 720)) -> list[Action]:
    """The cua actions for one BrowserGym action string (one or more calls, one per line)."""
    try:
        tree = ast.parse(text.strip(), mode="exec")
    except SyntaxError as exc:
        raise BrowserGymActionError(f"not a valid action: {exc.msg} at line {exc.lineno}") from exc
    if not tree.body:
        raise BrowserGymActionError("empty action")
    ctx = _Context(elements=elements or {}, viewport=viewport)
    out: list[Action] = []
    for statement in tree.body:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            raise BrowserGymActionError(f"only function calls are actions, got {ast.unparse(statement)!r}")
        name = call.func.id
        if name in _UNSUPPORTED:
            raise BrowserGymActionError(f"{name}() is not supported in cua: {_UNSUPPORTED[name]}")
        function = _FUNCTIONS.get(name)
        if function is None:
            raise BrowserGymActionError(f"unknown action {name}(); known: {', '.join(ACTION_SET)}")
        args = [_literal(a, name) for a in call.args]
        kwargs = {k.arg: _literal(k.value, name) for k in call.keywords if k.arg is not None}
        try:
            out.extend(function(ctx, *args, **kwargs))
        except TypeError as exc:
            raise BrowserGymActionError(f"{name}(): {exc}") from exc
        except ValueError as exc:  # a pydantic validation error: a value out of range, a bad key name
            if isinstance(exc, BrowserGymActionError):
                raise
            raise BrowserGymActionError(f"{name}(): {str(exc).splitlines()[0]}") from exc
    return out
