"""UI-TARS on a phone: the mobile action space, parsed to touch actions.

The family `ui-tars-1.5-mobile` prompts with UI-TARS' phone actions (``click``,
``long_press``, ``type``, ``scroll`` with a direction, ``drag``, ``open_app``,
``press_home``, ``press_back``, ``finished``) in the desktop family's geometry (pixels of
the smart-resized screenshot) and its text layout (``Thought: ...`` / ``Action: ...``).

A ``scroll(direction=...)`` moves the content, so it is a swipe the other way: from its
point (the screen's centre when it names none) across half the screen. A ``drag`` (and
UI-TARS-1.0's ``scroll(start_box, end_box)``) is a swipe from one point to the other.
"""

from __future__ import annotations

from typing import Any, ClassVar

from cua.actions import (
    Action,
    Done,
    Fling,
    Key,
    LongPress,
    Nav,
    OpenApp,
    Swipe,
    SwipeDirection,
    Tap,
    Type,
    Wait,
)
from cua.observation import Size
from cua.policy.families.base import ActionBuilder, FamilyParseError, RenderContext, number, pair
from cua.policy.families.qwen_mobile import built, swipe_end, swipe_from_points
from cua.policy.families.uitars import UITars15

__all__ = ["OPPOSITE", "UITars15Mobile", "scroll_swipe"]

#: The way content moves -> the way the finger moves to move it so.
OPPOSITE: dict[str, SwipeDirection] = {"up": "down", "down": "up", "left": "right", "right": "left"}
_SWIPE_MS = Swipe.model_fields["duration_ms"].default
_LONG_PRESS_MS = LongPress.model_fields["duration_ms"].default


def scroll_swipe(frame: Size, point: tuple[float, float] | None, content: str) -> Swipe:
    """Scrolling the content towards `content` from `point` (default: the screen's centre):
    a swipe the other way across half the screen."""
    if content not in OPPOSITE:
        raise FamilyParseError(f"unknown scroll direction {content!r}")
    direction = OPPOSITE[content]
    x, y = point if point is not None else (frame.width / 2, frame.height / 2)
    half = frame.height / 2 if direction in ("up", "down") else frame.width / 2
    return Swipe(x=x, y=y, direction=direction, distance=half)


def is_scroll(action: Swipe, frame: Size) -> bool:
    """Whether `action` is exactly what a scroll reads as (half the screen, default duration)."""
    half = frame.height / 2 if action.direction in ("up", "down") else frame.width / 2
    return action.duration_ms == _SWIPE_MS and abs(action.distance - half) < 1e-6


class UITars15Mobile(UITars15):
    name: ClassVar[str] = "ui-tars-1.5-mobile"

    def instruction_text(self, instruction: str) -> str:
        return (
            "You are a GUI agent. You are given a task and your action history, with screenshots. "
            "You need to perform the next action to complete the task.\n\n"
            "## Output Format\n```\nThought: ...\nAction: ...\n```\n\n"
            "## Action Space\n"
            "click(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
            "long_press(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
            "type(content='') # end content with \\n to submit\n"
            "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')\n"
            "drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')\n"
            "open_app(app_name='')\n"
            "press_home()\n"
            "press_back()\n"
            "wait() # sleep 5s and take a new screenshot\n"
            "finished(content='xxx') # escape \\', \\\" and \\n in content\n\n"
            f"## Note\n- Use {self.language} in the `Thought` part.\n"
            "- Write a small plan and finally summarize your next action (with its target element) "
            "in one sentence in the `Thought` part.\n\n"
            f"## User Instruction\n{instruction}"
        )

    # -- parsing ---------------------------------------------------------------------
    def _apply(self, name: str, kw: dict[str, Any], b: ActionBuilder) -> None:
        def raw_box(key: str) -> tuple[float, float] | None:
            value = kw.get(key)
            return None if value in (None, "") else pair(str(value), key)

        def box(key: str) -> tuple[float, float]:
            point = raw_box(key)
            if point is None:
                raise FamilyParseError(f"{name}() needs {key}")
            return b.at(*point)

        model = b.ctx.model
        if name in ("click", "left_single", "tap"):
            x, y = box("start_box")
            b.add(Tap(x=x, y=y))
        elif name == "long_press":
            x, y = box("start_box")
            time = kw.get("time")
            ms = _LONG_PRESS_MS if time in (None, "") else round(number(time, "time") * 1000)
            b.add(built(LongPress, "long_press", x=x, y=y, duration_ms=ms))
        elif name in ("drag", "swipe") or (name == "scroll" and raw_box("end_box") is not None):
            start, end = raw_box("start_box"), raw_box("end_box")
            if start is None or end is None:
                raise FamilyParseError(f"{name}() needs start_box and end_box")
            b.add(swipe_from_points(start, end, model))
        elif name == "scroll":
            point = raw_box("start_box")
            b.add(scroll_swipe(model.frame, None if point is None else b.at(*point),
                               str(kw.get("direction", "down")).strip().lower()))
        elif name == "open_app":
            b.add(built(OpenApp, "app name", name=str(kw.get("app_name", "")).strip()))
        elif name in ("press_home", "home"):
            b.add(Nav(button="home"))
        elif name in ("press_back", "back"):
            b.add(Nav(button="back"))
        elif name in ("type", "hotkey", "press", "wait", "finished", "call_user"):
            super()._apply(name, kw, b)
        else:
            raise FamilyParseError(f"unknown UI-TARS phone action {name}()")

    # -- rendering -------------------------------------------------------------------
    def render_action(self, action: Action, ctx: RenderContext) -> str:
        """Approximations (``approximate=True``), beside the desktop family's: a long press
        of another duration than the default, a swipe of another duration, and a fling,
        become the plain gesture. A double tap, a pinch, recents and mouse actions cannot
        be said."""
        if isinstance(action, Tap):
            return f"click(start_box={self._box(ctx.at(action.x, action.y))})"
        if isinstance(action, LongPress):
            if action.duration_ms != _LONG_PRESS_MS:
                ctx.lossy(f"a long press of {action.duration_ms} ms becomes one of {_LONG_PRESS_MS} ms")
            return f"long_press(start_box={self._box(ctx.at(action.x, action.y))})"
        if isinstance(action, (Swipe, Fling)):
            if isinstance(action, Fling):
                ctx.lossy("a fling is written as a drag")
            elif action.duration_ms != _SWIPE_MS:
                ctx.lossy(f"a swipe of {action.duration_ms} ms is written without its duration")
            if isinstance(action, Swipe) and is_scroll(action, ctx.model.frame):
                content = OPPOSITE[action.direction]
                return f"scroll(start_box={self._box(ctx.at(action.x, action.y))}, direction='{content}')"
            start, end = swipe_end(action, ctx)
            return f"drag(start_box={self._box(start)}, end_box={self._box(end)})"
        if isinstance(action, Nav):
            if action.button == "recents":
                ctx.refuse("UI-TARS has no recent-apps button")
            return "press_home()" if action.button == "home" else "press_back()"
        if isinstance(action, OpenApp):
            return f"open_app(app_name={action.name!r})"
        if isinstance(action, (Type, Key, Wait, Done)):
            return super().render_action(action, ctx)
        ctx.refuse(f"UI-TARS on a phone has no {action.type} action")
        raise AssertionError  # unreachable: refuse raises
