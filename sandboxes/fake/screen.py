"""The fake kind's screen: a small form drawn with PIL, and what input does to it.

Sans-I/O: `FormScreen` holds the state (a counter, a text field, a checkbox, a submit
button and the submissions made), applies screen-pixel actions to it, draws it and
answers element queries. It never sleeps, never reads a clock and never draws
randomness of its own (a reset's seed decides the starting count), so the same actions
give the same pixels and the same state on every machine. `FakeSandbox` wraps it in
the `Sandbox` interface.

Where widgets sit is a function of the screen size only (fractions of it), so every
screen size lays the same form out.
"""

from __future__ import annotations

import copy
import functools
import io
import random
from dataclasses import dataclass, field
from typing import Any, Literal

from PIL import Image, ImageDraw, ImageFont

from cua.actions import Action, Click, Drag, Key, KeyDown, KeyUp, MouseDown, MouseUp, Move, Scroll, Type, Wait
from cua.observation import ImageFormat, Size

__all__ = ["MAX_NAME_LENGTH", "TAB_ORDER", "FormScreen", "FormState", "Widget", "parse_selector"]

Role = Literal["form", "text", "button", "textbox", "checkbox"]

#: Like an input's maxlength: typing past it is dropped, as a browser drops it.
MAX_NAME_LENGTH = 200
#: Focusable widgets in Tab order.
TAB_ORDER = ("dec", "inc", "name", "subscribe", "submit")
_MODIFIERS = frozenset({"Shift", "Control", "Alt", "Meta"})

_INK = (33, 37, 41)
_MUTED = (108, 117, 125)
_FOCUS = (13, 110, 253)
_BUTTON = (222, 226, 230)
_SELECTION = (180, 210, 255)


@dataclass
class FormState:
    """Everything that decides the screen: what a snapshot keeps and a judge reads."""

    count: int = 0
    name: str = ""
    subscribe: bool = False
    submissions: list[dict[str, Any]] = field(default_factory=list)
    #: The focused widget's id.
    focus: str | None = None
    #: The text field's content is selected (Ctrl+A, a double click): typing replaces it.
    selected: bool = False
    #: The widget a pressed left button went down on.
    pressed: str | None = None
    held: set[str] = field(default_factory=set)
    pointer: tuple[float, float] = (0.0, 0.0)

    def app_state(self) -> dict[str, Any]:
        """The state a judge reads (`app_state` query): the form's data, not its input details."""
        return {"count": self.count, "name": self.name, "subscribe": self.subscribe,
                "submissions": copy.deepcopy(self.submissions), "focus": self.focus}


@dataclass(frozen=True)
class Widget:
    id: str
    role: Role
    label: str
    box: tuple[int, int, int, int]  # x, y, width, height in screen pixels
    value: str | None = None
    checked: bool | None = None
    focusable: bool = False

    def contains(self, x: float, y: float) -> bool:
        bx, by, bw, bh = self.box
        return bx <= x < bx + bw and by <= y < by + bh

    def element(self, focused: bool) -> dict[str, Any]:
        """The widget as an accessibility-tree node."""
        x, y, w, h = self.box
        node: dict[str, Any] = {"id": self.id, "role": self.role, "name": self.label,
                                "bbox": {"x": x, "y": y, "width": w, "height": h}}
        if self.value is not None:
            node["value"] = self.value
        if self.checked is not None:
            node["checked"] = self.checked
        if self.focusable:
            node["focused"] = focused
        return node


def parse_selector(selector: str) -> tuple[str | None, str | None]:
    """(role, id) of a selector the fake screen understands: `ROLE`, `#ID` or `ROLE#ID`
    (`*` and `body` match every widget). Raises ValueError for anything else."""
    text = selector.strip()
    if text in ("*", "body"):
        return None, None
    role, _, ident = text.partition("#")
    if (role and not role.isidentifier()) or (_ and not ident.replace("-", "_").isidentifier()) or not (role or ident):
        raise ValueError(f"fake screens understand selectors ROLE, #ID or ROLE#ID, not {selector!r}")
    return role or None, ident or None


@functools.lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


class FormScreen:
    """The form, its state and its input rules. `size` is the screen in pixels."""

    def __init__(self, size: Size, title: str) -> None:
        self.size = size
        self.title = title
        self.state = FormState()

    # --- lifecycle ---

    def reset(self, seed: int) -> None:
        """The initial state of `seed`: the counter starts at 0..9, the rest empty."""
        self.state = FormState(count=random.Random(f"fake-form#{seed}").randint(0, 9))

    def save(self) -> FormState:
        return copy.deepcopy(self.state)

    def load(self, state: FormState) -> None:
        self.state = copy.deepcopy(state)

    # --- layout ---

    def widgets(self) -> list[Widget]:
        w, h = self.size.width, self.size.height
        row = h / 7
        s = self.state

        def box(column: float, width: float, index: int) -> tuple[int, int, int, int]:
            top = row * index + row * 0.15
            return round(w * column), round(top), max(1, round(w * width)), max(1, round(row * 0.7))

        submitted = f"{len(s.submissions)} submitted"
        return [
            Widget("title", "text", self.title, box(0.05, 0.9, 0)),
            Widget("count", "text", f"Count: {s.count}", box(0.05, 0.4, 1)),
            Widget("dec", "button", "-", box(0.5, 0.1, 1), focusable=True),
            Widget("inc", "button", "+", box(0.65, 0.1, 1), focusable=True),
            Widget("name", "textbox", "Name", box(0.05, 0.7, 2), value=s.name, focusable=True),
            Widget("subscribe", "checkbox", "Subscribe", box(0.05, 0.4, 3), checked=s.subscribe, focusable=True),
            Widget("submit", "button", "Submit", box(0.05, 0.25, 4), focusable=True),
            Widget("status", "text", submitted, box(0.05, 0.9, 5)),
        ]

    def widget(self, ident: str) -> Widget:
        return next(w for w in self.widgets() if w.id == ident)

    def hit(self, x: float, y: float) -> Widget | None:
        return next((w for w in self.widgets() if w.focusable and w.contains(x, y)), None)

    def select(self, selector: str) -> list[Widget]:
        """The widgets a selector matches, in screen order (see `parse_selector`)."""
        role, ident = parse_selector(selector)
        return [w for w in self.widgets() if (role is None or w.role == role) and (ident is None or w.id == ident)]

    def tree(self) -> list[dict[str, Any]]:
        focus = self.state.focus
        children = [w.element(w.id == focus) for w in self.widgets()]
        return [{"id": "form", "role": "form", "name": self.title, "children": children}]

    def focused(self) -> dict[str, Any] | None:
        focus = self.state.focus
        return self.widget(focus).element(True) if focus is not None else None

    # --- input (screen pixels; the sandbox has scaled and bounds-checked them) ---

    def apply(self, action: Action) -> None:
        s = self.state
        if isinstance(action, Click):
            s.pointer = (action.x, action.y)
            if action.button == "left":
                self._click(self.hit(action.x, action.y), action.count)
        elif isinstance(action, Move):
            s.pointer = (action.x, action.y)
        elif isinstance(action, MouseDown):
            if action.x is not None and action.y is not None:
                s.pointer = (action.x, action.y)
            if action.button == "left":
                s.pressed = self._press_target()
        elif isinstance(action, MouseUp):
            if action.x is not None and action.y is not None:
                s.pointer = (action.x, action.y)
            if action.button == "left":
                self._release()
        elif isinstance(action, Drag):
            start, end = action.path[0], action.path[-1]
            s.pointer = (start.x, start.y)
            if action.button == "left":
                s.pressed = self._press_target()
            s.pointer = (end.x, end.y)
            if action.button == "left":
                self._release()
        elif isinstance(action, Scroll):
            s.pointer = (action.x, action.y)  # the form fits its screen: nothing scrolls
        elif isinstance(action, Type):
            self._type(action.text)
        elif isinstance(action, Key):
            self._press(action.keys)
        elif isinstance(action, KeyDown):
            if action.key in _MODIFIERS:
                s.held.add(action.key)
            else:
                self._press([*sorted(s.held), action.key])
        elif isinstance(action, KeyUp):
            s.held.discard(action.key)
        elif isinstance(action, Wait):
            pass  # the form has no clock: nothing changes while time passes
        # Done is the episode's business; browser-only actions were refused before this.

    def _press_target(self) -> str:
        target = self.hit(*self.state.pointer)
        return target.id if target is not None else ""

    def _release(self) -> None:
        s = self.state
        target = self.hit(*s.pointer)
        pressed, s.pressed = s.pressed, None
        if target is not None and target.id == pressed:
            self._click(target, 1)
        elif pressed == "" and target is None:
            self._click(None, 1)

    def _click(self, target: Widget | None, count: int) -> None:
        s = self.state
        s.focus = target.id if target is not None else None
        s.selected = False
        if target is None:
            return
        if target.role == "textbox":
            s.selected = count >= 2 and bool(s.name)
            return
        for _ in range(count):  # each click of a double click activates a button once
            self._activate(target.id)

    def _activate(self, ident: str) -> None:
        s = self.state
        if ident == "inc":
            s.count += 1
        elif ident == "dec":
            s.count -= 1
        elif ident == "subscribe":
            s.subscribe = not s.subscribe
        elif ident == "submit":
            s.submissions.append({"name": s.name, "subscribe": s.subscribe, "count": s.count})

    def _type(self, text: str) -> None:
        s = self.state
        if s.focus != "name":
            return
        kept = "" if s.selected else s.name
        s.name = (kept + text.replace("\n", ""))[:MAX_NAME_LENGTH]
        s.selected = False
        if "\n" in text:
            self._activate("submit")

    def _press(self, keys: list[str]) -> None:
        s = self.state
        mods = {k for k in keys if k in _MODIFIERS}
        main = next((k for k in reversed(keys) if k not in _MODIFIERS), None)
        if main is None:
            return
        if main == "Tab":
            order = list(TAB_ORDER)
            here = order.index(s.focus) if s.focus in order else -1
            step = -1 if "Shift" in mods else 1
            s.focus = order[(here + step) % len(order)] if here >= 0 else order[0 if step > 0 else -1]
            s.selected = s.focus == "name" and bool(s.name)  # tabbing into a field selects its text
        elif main == "Escape":
            s.selected = False
        elif main in ("Enter", "Space"):
            if s.focus in ("inc", "dec", "submit") or (main == "Space" and s.focus == "subscribe"):
                self._activate(s.focus)
            elif s.focus == "name":
                self._type(" ") if main == "Space" else self._activate("submit")
        elif s.focus == "name":
            self._edit(main, mods)

    def _edit(self, key: str, mods: set[str]) -> None:
        s = self.state
        if mods & {"Control", "Meta"}:
            if key.lower() == "a":
                s.selected = bool(s.name)
            return
        if key in ("Backspace", "Delete"):
            s.name = "" if s.selected else (s.name[:-1] if key == "Backspace" else s.name)
            s.selected = False
        elif len(key) == 1 and not mods & {"Alt"}:
            self._type(key.upper() if "Shift" in mods else key)

    # --- drawing ---

    def render(self) -> Image.Image:
        w, h = self.size.width, self.size.height
        image = Image.new("RGB", (w, h), (255, 255, 255))
        draw = ImageDraw.Draw(image)
        font = _font(max(8, round(h / 7 * 0.35)))
        s = self.state
        for widget in self.widgets():
            x, y, bw, bh = widget.box
            x1, y1 = x + bw - 1, y + bh - 1
            ring = max(1, round(bh / 24))
            focused = widget.id == s.focus
            if widget.role == "button":
                draw.rectangle((x, y, x1, y1), fill=_BUTTON, outline=_FOCUS if focused else _MUTED,
                               width=ring * (2 if focused else 1))
                draw.text((x + bw / 2, y + bh / 2), widget.label, fill=_INK, font=font, anchor="mm")
            elif widget.role == "textbox":
                draw.rectangle((x, y, x1, y1), fill=(255, 255, 255), outline=_FOCUS if focused else _MUTED,
                               width=ring * (2 if focused else 1))
                shown = widget.value or ""
                text_x = x + bh / 4
                if shown:
                    if s.selected and focused:
                        left, top, right, bottom = draw.textbbox((text_x, y + bh / 2), shown, font=font, anchor="lm")
                        draw.rectangle((left, top, right, bottom), fill=_SELECTION)
                    draw.text((text_x, y + bh / 2), shown, fill=_INK, font=font, anchor="lm")
                else:
                    draw.text((text_x, y + bh / 2), widget.label, fill=_MUTED, font=font, anchor="lm")
                if focused and not s.selected:
                    caret = text_x + draw.textlength(shown, font=font) + 1
                    draw.line((caret, y + bh / 5, caret, y1 - bh / 5), fill=_INK, width=ring)
            elif widget.role == "checkbox":
                side = bh
                draw.rectangle((x, y, x + side - 1, y1), fill=(255, 255, 255), outline=_FOCUS if focused else _MUTED,
                               width=ring * (2 if focused else 1))
                if widget.checked:
                    pad = side / 4
                    draw.line((x + pad, y + pad, x + side - pad, y + side - pad), fill=_INK, width=ring * 2)
                    draw.line((x + pad, y + side - pad, x + side - pad, y + pad), fill=_INK, width=ring * 2)
                draw.text((x + side * 1.3, y + bh / 2), widget.label, fill=_INK, font=font, anchor="lm")
            else:
                draw.text((x, y + bh / 2), widget.label, fill=_INK if widget.id != "status" else _MUTED,
                          font=font, anchor="lm")
        return image

    def encode(self, fmt: ImageFormat, quality: int, frame: Size) -> bytes:
        image = self.render()
        if (frame.width, frame.height) != image.size:
            image = image.resize((frame.width, frame.height), Image.Resampling.BILINEAR)
        out = io.BytesIO()
        if fmt == "png":
            image.save(out, format="PNG")
        else:
            image.save(out, format="JPEG" if fmt == "jpeg" else "WEBP", quality=quality)
        return out.getvalue()
