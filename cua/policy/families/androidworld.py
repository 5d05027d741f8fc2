"""AndroidWorld's JSON actions: ``Reason: ...`` then ``Action: {"action_type": ...}``.

The action format of AndroidWorld's agents (its `JSONAction`): one JSON object a turn,
coordinates in pixels of the screenshot. Each action type is read as AndroidWorld's
own actuation performs it, so a trajectory means here what it meant on an emulator:

- ``click`` / ``double_tap`` / ``long_press`` at ``x``, ``y``: the touch actions;
- ``input_text``: tap the field at ``x``, ``y`` (when given), type ``text``, press Enter;
- ``keyboard_enter``, ``navigate_home``, ``navigate_back``, ``open_app`` (``app_name``), ``wait`` (1 s);
- ``scroll`` with a ``direction`` moves the content: a swipe the other way from the
  screen's centre across half the screen;
- ``swipe`` with a ``direction``: edge to edge in 500 ms (down from the top, up from the
  bottom; "left" starts at the left edge and "right" at the right edge, as AndroidWorld
  swipes them);
- ``status`` with ``goal_status`` complete or infeasible, and ``answer`` with ``text``, end the task.

The ``index`` form names a mark drawn on the screenshot; cua's observations number no
marks, so this family's prompt asks for coordinates and an index is a parse error.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from cua.actions import (
    Action,
    Done,
    DoubleTap,
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
from cua.policy.families.base import (
    ActionBuilder,
    Family,
    FamilyParseError,
    ParseContext,
    Parsed,
    RenderContext,
    number,
)
from cua.policy.families.qwen_mobile import built
from cua.policy.families.uitars_mobile import OPPOSITE, is_scroll, scroll_swipe
from cua.policy.imaging import ModelFrame

__all__ = ["AndroidWorld", "edge_swipe"]

_ACTION = re.compile(r"(?m)^\s*Action\s*:")
_REASON = re.compile(r"^\s*Reason\s*:\s*", re.IGNORECASE)
#: AndroidWorld's swipe direction -> the way its finger moves.
_SWIPE_FINGER: dict[str, SwipeDirection] = {"down": "down", "up": "up", "left": "right", "right": "left"}
_FINGER_SWIPE: dict[str, str] = {finger: name for name, finger in _SWIPE_FINGER.items()}
#: How long AndroidWorld's edge-to-edge swipe takes.
EDGE_SWIPE_MS = 500
_LONG_PRESS_MS = LongPress.model_fields["duration_ms"].default
_WAIT_S = 1.0


def edge_swipe(frame: Size, name: str) -> Swipe:
    """AndroidWorld's ``swipe`` towards `name`: across the whole screen from one edge."""
    if name not in _SWIPE_FINGER:
        raise FamilyParseError(f"unknown swipe direction {name!r}")
    finger = _SWIPE_FINGER[name]
    w, h = frame.width - 1, frame.height - 1
    start = {"down": (frame.width / 2, 0.0), "up": (frame.width / 2, float(h)),
             "right": (0.0, frame.height / 2), "left": (float(w), frame.height / 2)}[finger]
    distance = h if finger in ("up", "down") else w
    return Swipe(x=start[0], y=start[1], direction=finger, distance=distance, duration_ms=EDGE_SWIPE_MS)


def _same_swipe(a: Swipe, b: Swipe) -> bool:
    return (a.direction == b.direction and a.duration_ms == b.duration_ms and abs(a.distance - b.distance) < 1e-6
            and abs(a.x - b.x) <= 0.5 and abs(a.y - b.y) <= 0.5)


class AndroidWorld(Family):
    name: ClassVar[str] = "androidworld"

    # -- prompt ----------------------------------------------------------------------
    def system_prompt(self, model: ModelFrame) -> str:
        return (
            "You are an agent who can operate an Android phone on behalf of a user. Each turn you see "
            "the screen and answer with one action, in this format:\n"
            "Reason: <why this action>\nAction: <one JSON object>\n\n"
            f"The screen is {model.image.width}x{model.image.height} pixels; x runs from the left, y from the top.\n"
            "The actions:\n"
            '- tap: {"action_type": "click", "x": <x>, "y": <y>}\n'
            '- double tap: {"action_type": "double_tap", "x": <x>, "y": <y>}\n'
            '- long press: {"action_type": "long_press", "x": <x>, "y": <y>}\n'
            '- type into the field at a point, then press Enter: '
            '{"action_type": "input_text", "text": <text>, "x": <x>, "y": <y>}\n'
            '- press Enter: {"action_type": "keyboard_enter"}\n'
            '- go home: {"action_type": "navigate_home"}\n'
            '- go back: {"action_type": "navigate_back"}\n'
            '- scroll the screen\'s content: {"action_type": "scroll", "direction": <up, down, left, right>}\n'
            '- swipe across the whole screen: {"action_type": "swipe", "direction": <up, down, left, right>}\n'
            '- open an app: {"action_type": "open_app", "app_name": <name>}\n'
            '- wait for the screen to update: {"action_type": "wait"}\n'
            '- answer the user\'s question: {"action_type": "answer", "text": <answer>}\n'
            '- finish: {"action_type": "status", "goal_status": "complete"}, or '
            '{"action_type": "status", "goal_status": "infeasible"} when the task cannot be done'
        )

    # -- parsing ---------------------------------------------------------------------
    def parse(self, raw: str, ctx: ParseContext) -> Parsed:
        marker = _ACTION.search(raw)
        head, body = (raw[: marker.start()], raw[marker.end():]) if marker else ("", raw)
        start = body.find("{")
        if start < 0:
            raise FamilyParseError("no JSON action in the output")
        try:
            value, _ = json.JSONDecoder().raw_decode(body[start:])
        except json.JSONDecodeError as exc:
            raise FamilyParseError(f"the action is not valid JSON ({exc.msg} at {exc.pos})") from None
        if not isinstance(value, dict):
            raise FamilyParseError(f"the action must be a JSON object, got {type(value).__name__}")
        builder = ActionBuilder(ctx)
        self.apply(value, builder)
        thought = _REASON.sub("", head).strip()
        return Parsed(actions=builder.actions, thought=thought or None)

    def apply(self, data: dict[str, Any], b: ActionBuilder) -> None:
        kind = data.get("action_type")
        frame = b.ctx.model.frame
        if data.get("index") is not None:
            raise FamilyParseError("an element index needs marks on the screenshot, which this prompt does not draw: "
                                   "give x and y")

        def point(required: bool = True) -> tuple[float, float] | None:
            if data.get("x") is None or data.get("y") is None:
                if required:
                    raise FamilyParseError(f"{kind} needs x and y")
                return None
            return b.at(number(data["x"], "x"), number(data["y"], "y"))

        if kind in ("click", "double_tap", "long_press"):
            at = point()
            assert at is not None
            if kind == "click":
                b.add(Tap(x=at[0], y=at[1]))
            elif kind == "double_tap":
                b.add(DoubleTap(x=at[0], y=at[1]))
            else:
                b.add(LongPress(x=at[0], y=at[1]))
        elif kind == "input_text":
            text = data.get("text")
            if not isinstance(text, str) or not text:
                raise FamilyParseError("input_text needs a text")
            at = point(required=False)
            if at is not None:
                b.add(Tap(x=at[0], y=at[1]))
            b.add(built(Type, "text", text=text))
            b.add(Key(keys=["Enter"]))
        elif kind == "keyboard_enter":
            b.add(Key(keys=["Enter"]))
        elif kind in ("navigate_home", "navigate_back"):
            b.add(Nav(button="home" if kind == "navigate_home" else "back"))
        elif kind == "scroll":
            b.add(scroll_swipe(frame, None, str(data.get("direction", "")).strip().lower()))
        elif kind == "swipe":
            b.add(edge_swipe(frame, str(data.get("direction", "")).strip().lower()))
        elif kind == "open_app":
            b.add(built(OpenApp, "app name", name=str(data.get("app_name", "")).strip()))
        elif kind == "wait":
            b.add(Wait(seconds=_WAIT_S))
        elif kind == "status":
            status = str(data.get("goal_status", "")).strip().lower()
            if status not in ("complete", "infeasible"):
                raise FamilyParseError(f"unknown goal_status {data.get('goal_status')!r} (complete or infeasible)")
            b.done("success" if status == "complete" else "infeasible")
        elif kind == "answer":
            text = data.get("text")
            if not isinstance(text, str):
                raise FamilyParseError("answer needs a text")
            b.done("success", text)
        else:
            raise FamilyParseError(f"unknown AndroidWorld action_type {kind!r}")

    # -- rendering -------------------------------------------------------------------
    def render_turn(self, actions: list[Action], thought: str | None, ctx: RenderContext) -> str:
        """``Reason: <thought>`` (when there is one) and ``Action: <JSON>``: one action a
        turn, except a tap, a text and Enter, which are one ``input_text``.

        Approximations (``approximate=True``): a long press of another duration, a wait of
        another length than 1 s, a swipe that is neither AndroidWorld's scroll nor its edge
        swipe, and a fling, become the nearest of those; a text typed without the tap before
        it and the Enter after it becomes an ``input_text`` (which presses Enter); giving up
        (failure) becomes infeasible, and an answer with it is dropped."""
        if thought is not None and re.search(r"Action\s*:", thought):
            ctx.refuse("a thought that contains `Action:`")
        data = self._one(actions, ctx)
        head = f"Reason: {thought.strip()}\n" if thought and thought.strip() else ""
        return head + "Action: " + json.dumps(data, ensure_ascii=False)

    def _one(self, actions: list[Action], ctx: RenderContext) -> dict[str, Any]:
        if len(actions) == 3 and isinstance(actions[0], Tap) and isinstance(actions[1], Type) \
                and isinstance(actions[2], Key) and actions[2].keys == ["Enter"]:
            x, y = ctx.at(actions[0].x, actions[0].y)
            return {"action_type": "input_text", "text": self._text(actions[1], ctx), "x": x, "y": y}
        if len(actions) == 2 and isinstance(actions[0], Type) and isinstance(actions[1], Key) \
                and actions[1].keys == ["Enter"]:
            return {"action_type": "input_text", "text": self._text(actions[0], ctx)}
        if len(actions) != 1:
            ctx.refuse(f"AndroidWorld takes one action a turn, not {len(actions)}")
        return self.render_action(actions[0], ctx)

    @staticmethod
    def _text(action: Type, ctx: RenderContext) -> str:
        if not action.text:
            ctx.refuse("typing nothing")
        return action.text

    def render_action(self, action: Action, ctx: RenderContext) -> dict[str, Any]:
        frame = ctx.model.frame
        if isinstance(action, (Tap, DoubleTap, LongPress)):
            if isinstance(action, LongPress) and action.duration_ms != _LONG_PRESS_MS:
                ctx.lossy(f"a long press of {action.duration_ms} ms becomes one of {_LONG_PRESS_MS} ms")
            x, y = ctx.at(action.x, action.y)
            return {"action_type": "click" if isinstance(action, Tap) else action.type, "x": x, "y": y}
        if isinstance(action, Type):
            ctx.lossy("a text without its tap and Enter becomes input_text, which presses Enter")
            return {"action_type": "input_text", "text": self._text(action, ctx)}
        if isinstance(action, Key):
            if action.keys != ["Enter"]:
                ctx.refuse("AndroidWorld presses no key but Enter")
            return {"action_type": "keyboard_enter"}
        if isinstance(action, Nav):
            if action.button == "recents":
                ctx.refuse("AndroidWorld has no recent-apps button")
            return {"action_type": f"navigate_{action.button}"}
        if isinstance(action, (Swipe, Fling)):
            return self._swipe(action, frame, ctx)
        if isinstance(action, OpenApp):
            return {"action_type": "open_app", "app_name": action.name}
        if isinstance(action, Wait):
            if action.seconds != _WAIT_S:
                ctx.lossy(f"a wait of {action.seconds:g} s becomes AndroidWorld's wait (1 s)")
            return {"action_type": "wait"}
        if isinstance(action, Done):
            if action.status == "success":
                if action.answer is not None:
                    return {"action_type": "answer", "text": action.answer}
                return {"action_type": "status", "goal_status": "complete"}
            if action.status == "failure":
                ctx.lossy("giving up is written as infeasible")
            if action.answer is not None:
                ctx.lossy("an answer given with infeasible is dropped")
            return {"action_type": "status", "goal_status": "infeasible"}
        ctx.refuse(f"AndroidWorld has no {action.type} action")
        raise AssertionError  # unreachable: refuse raises

    @staticmethod
    def _swipe(action: Swipe | Fling, frame: Size, ctx: RenderContext) -> dict[str, Any]:
        if isinstance(action, Swipe):
            if _same_swipe(action, edge_swipe(frame, _FINGER_SWIPE[action.direction])):
                return {"action_type": "swipe", "direction": _FINGER_SWIPE[action.direction]}
            centred = abs(action.x - frame.width / 2) <= 0.5 and abs(action.y - frame.height / 2) <= 0.5
            if centred and is_scroll(action, frame):
                return {"action_type": "scroll", "direction": OPPOSITE[action.direction]}
        ctx.lossy(f"a {action.type} that is neither AndroidWorld's scroll nor its swipe becomes a scroll")
        return {"action_type": "scroll", "direction": OPPOSITE[action.direction]}
