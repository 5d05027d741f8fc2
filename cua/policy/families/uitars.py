"""UI-TARS-1.5: ``Thought: ...`` / ``Action: click(start_box='(x,y)')`` text.

Coordinates are pixels of the smart_resized image (factor 28, at least 100 tokens).
Points are written as ``'(x,y)'``, ``'<|box_start|>(x,y)<|box_end|>'``, ``<point>x y</point>``
or a box ``(x1,y1,x2,y2)`` (its centre counts). The action call is read with `ast`
(never evaluated); a `type(content=...)` whose quotes the model failed to escape is
recovered by position.
"""

from __future__ import annotations

import ast
import re
from typing import Any, ClassVar

from cua.actions import Action, Click, Done, Drag, Key, KeyDown, KeyUp, Move, Scroll, Type, Wait
from cua.observation import Size
from cua.policy.families.base import (
    LOWER_KEY_NAMES,
    ActionBuilder,
    Family,
    FamilyParseError,
    ParseContext,
    Parsed,
    RenderContext,
    pair,
    spell_key,
)
from cua.policy.imaging import ModelFrame, smart_resize

__all__ = ["UITars15"]

_POINT_TAG = re.compile(r"<point>\s*(-?[\d.]+)[\s,]+(-?[\d.]+)\s*</point>")
_BBOX_TAG = re.compile(r"<bbox>\s*(-?[\d.]+)[\s,]+(-?[\d.]+)[\s,]+(-?[\d.]+)[\s,]+(-?[\d.]+)\s*</bbox>")
_THOUGHT = re.compile(r"(?:Thought|Reflection|Action_Summary):\s*(.*?)(?=\s*Action:|\Z)", re.DOTALL)
_CALL_START = re.compile(r"(?m)(?:^|\s|\))\s*([a-z_]+)\(")
_TYPE_CONTENT = re.compile(r"^type\(\s*content\s*=\s*(['\"])(.*)\1\s*\)\s*$", re.DOTALL)
_FINISHED_CONTENT = re.compile(r"^finished\(\s*content\s*=\s*(['\"])(.*)\1\s*\)\s*$", re.DOTALL)
_SCROLL_SIGN = {"down": (0, 1), "up": (0, -1), "right": (1, 0), "left": (-1, 0)}


def _normalize(text: str) -> str:
    text = text.replace("<|box_start|>", "").replace("<|box_end|>", "").replace("[EOS]", "")
    text = _POINT_TAG.sub(r"(\1,\2)", text)
    text = _BBOX_TAG.sub(r"(\1,\2,\3,\4)", text)
    text = re.sub(r"\bstart_point=", "start_box=", text)
    text = re.sub(r"\bend_point=", "end_box=", text)
    text = re.sub(r"(?<![_a-z])point=", "start_box=", text)
    return text


_ESCAPE = re.compile(r"\\([n'\"\\])")
_UNESCAPED = {"n": "\n", "'": "'", '"': '"', "\\": "\\"}


def _unescape(text: str) -> str:
    """One pass, so an escaped backslash before an ``n`` stays a backslash and an ``n``;
    a backslash before any other character is kept as the model wrote it (``C:\\Users``)."""
    return _ESCAPE.sub(lambda m: _UNESCAPED[m.group(1)], text)


def _escape(text: str) -> str:
    """The inverse of `_unescape`, escaping a backslash only where it would otherwise be
    read as an escape (before ``n``, a newline, a quote, a backslash, or the closing quote)."""
    text = re.sub(r"\\(?=[n'\"\\\n]|\Z)", r"\\\\", text)
    return text.replace("\n", "\\n").replace("'", "\\'")


class UITars15(Family):
    name: ClassVar[str] = "ui-tars-1.5"
    #: The smart_resize patch factor; an instance may override it (``factor=``).
    factor: int = 28
    #: Wheel notches per `scroll(...)`, as in the UI-TARS desktop runtime.
    scroll_notches: ClassVar[int] = 5

    def __init__(
        self,
        *,
        min_pixels: int | None = 100 * 28 * 28,
        max_pixels: int | None = 16384 * 28 * 28,
        language: str = "English",
        factor: int | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        if factor is not None:
            self.factor = factor
        self.min_pixels = min_pixels
        self.max_pixels = max_pixels
        self.language = language

    def model_frame(self, frame: Size) -> ModelFrame:
        height, width = smart_resize(frame.height, frame.width, self.factor, self.min_pixels, self.max_pixels)
        return ModelFrame.pixels(frame, Size(width=width, height=height))

    def system_prompt(self, model: ModelFrame) -> str | None:
        return None  # UI-TARS takes its whole prompt in the first user message

    def instruction_text(self, instruction: str) -> str:
        return (
            "You are a GUI agent. You are given a task and your action history, with screenshots. "
            "You need to perform the next action to complete the task.\n\n"
            "## Output Format\n```\nThought: ...\nAction: ...\n```\n\n"
            "## Action Space\n"
            "click(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
            "left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
            "right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
            "drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')\n"
            "hotkey(key='ctrl c') # keys separated by spaces, lower case\n"
            "type(content='') # end content with \\n to submit\n"
            "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')\n"
            "wait() # sleep 5s and take a new screenshot\n"
            "finished(content='xxx') # escape \\', \\\" and \\n in content\n\n"
            f"## Note\n- Use {self.language} in the `Thought` part.\n"
            "- Write a small plan and finally summarize your next action (with its target element) "
            "in one sentence in the `Thought` part.\n\n"
            f"## User Instruction\n{instruction}"
        )

    # -- parsing ---------------------------------------------------------------------
    def parse(self, raw: str, ctx: ParseContext) -> Parsed:
        text = _normalize(raw.strip())
        if "Action:" not in text:
            raise FamilyParseError("no `Action:` in the output")
        marker = re.search(r"(?m)^\s*Action:", text) or re.search(r"Action:", text)
        assert marker is not None
        head, action_part = text[: marker.start()], text[marker.end() :]
        thought_match = _THOUGHT.search(head + "Action:")
        thought = thought_match.group(1).strip() if thought_match else (head.strip() or None)
        calls = self._split_calls(action_part.strip())
        if not calls:
            raise FamilyParseError("empty `Action:`")
        builder = ActionBuilder(ctx)
        for call in calls:
            name, kwargs = self._read_call(call)
            self._apply(name, kwargs, builder)
        return Parsed(actions=builder.actions, thought=thought or None)

    @staticmethod
    def _split_calls(text: str) -> list[str]:
        """Split `a(...)\\n\\nb(...)` into calls; content of type()/finished() may itself
        contain blank lines, so those run to the end of the text."""
        calls: list[str] = []
        rest = text
        while rest:
            rest = rest.lstrip()
            if re.match(r"(type|finished)\(", rest):
                calls.append(rest.rstrip())
                break
            cut = rest.find(")\n\n")
            if cut < 0:
                calls.append(rest.rstrip())
                break
            calls.append(rest[: cut + 1])
            rest = rest[cut + 3 :]
        return [c if c.endswith(")") else c + ")" for c in calls if c]

    @staticmethod
    def _read_call(call: str) -> tuple[str, dict[str, Any]]:
        for pattern, name in ((_TYPE_CONTENT, "type"), (_FINISHED_CONTENT, "finished")):
            match = pattern.match(call)
            if match:  # read by position: models often leave inner quotes unescaped
                return name, {"content": _unescape(match.group(2))}
        try:
            node = ast.parse(call.replace("\n", "\\n"), mode="eval").body
        except SyntaxError as exc:
            raise FamilyParseError(f"cannot read action {call[:200]!r}: {exc.msg}") from None
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise FamilyParseError(f"action is not a call: {call[:200]!r}")
        if node.args:
            raise FamilyParseError(f"action arguments must be named: {call[:200]!r}")
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None or not isinstance(keyword.value, ast.Constant):
                raise FamilyParseError(f"action arguments must be literals: {call[:200]!r}")
            kwargs[keyword.arg] = keyword.value.value
        return node.func.id, kwargs

    def _apply(self, name: str, kw: dict[str, Any], b: ActionBuilder) -> None:
        def box(key: str, required: bool = True) -> tuple[float, float] | None:
            value = kw.get(key)
            if value in (None, ""):
                if required:
                    raise FamilyParseError(f"{name}() needs {key}")
                return None
            return b.at(*pair(str(value), key))

        if name in ("click", "left_single"):
            b.click(box("start_box"), "left", 1)
        elif name == "left_double":
            b.click(box("start_box"), "left", 2)
        elif name == "left_triple":
            b.click(box("start_box"), "left", 3)
        elif name == "right_single":
            b.click(box("start_box"), "right", 1)
        elif name in ("drag", "select"):
            end = box("end_box")
            assert end is not None
            b.drag(box("start_box"), end)
        elif name in ("hover", "mouse_move", "move_to"):
            point = box("start_box")
            assert point is not None
            b.move(point)
        elif name == "hotkey":
            keys = str(kw.get("key", kw.get("hotkey", ""))).strip()
            if not keys:
                raise FamilyParseError("hotkey() needs key")
            b.key(keys.replace("+", " ").split() if len(keys) > 1 else [keys])
        elif name in ("press", "keydown", "keyup", "release"):
            key = str(kw.get("key", kw.get("press", ""))).strip()
            if not key:
                raise FamilyParseError(f"{name}() needs key")
            if name == "press":
                b.key([key])
            elif name == "keydown":
                b.key_down(key)
            else:
                b.key_up(key)
        elif name == "type":
            content = str(kw.get("content", ""))
            submit = content.endswith("\n")
            b.type(content.rstrip("\n") if submit else content)
            if submit:
                b.key(["Enter"])
        elif name == "scroll":
            direction = str(kw.get("direction", "down")).strip().lower()
            if direction not in _SCROLL_SIGN:
                raise FamilyParseError(f"unknown scroll direction {direction!r}")
            sx, sy = _SCROLL_SIGN[direction]
            step = self.scroll_notches * b.ctx.scroll_unit_px
            b.scroll(box("start_box", required=False), sx * step, sy * step)
        elif name == "wait":
            b.wait(5.0)
        elif name == "finished":
            answer = kw.get("content")
            b.done("success", str(answer) if answer not in (None, "") else None)
        elif name == "call_user":
            b.done("failure", "the agent asked for a human (call_user)")
        else:
            raise FamilyParseError(f"unknown UI-TARS action {name}()")

    # -- rendering -------------------------------------------------------------------
    def render_turn(self, actions: list[Action], thought: str | None, ctx: RenderContext) -> str:
        """``Thought: ...`` then ``Action: `` and the calls, separated by blank lines; a
        typed text followed by Enter is one ``type(content='...\\n')``.

        Approximations (``approximate=True``): a scroll of another amount than the fixed
        step becomes one step in its direction (the larger axis of a diagonal one); any
        wait becomes ``wait()`` (5 s); a drag through several points a straight drag;
        giving up (failure or infeasible) becomes ``call_user()``; an empty answer none."""
        if thought is not None and "Action:" in thought:
            ctx.refuse("a thought that contains `Action:`")
        calls: list[str] = []
        index = 0
        while index < len(actions):
            action = actions[index]
            following = actions[index + 1] if index + 1 < len(actions) else None
            if isinstance(action, Type) and isinstance(following, Key) and following.keys == ["Enter"] \
                    and not action.text.endswith("\n"):
                calls.append(self._content_call("type", action.text + "\n", ctx))
                index += 2
                continue
            calls.append(self.render_action(action, ctx))
            index += 1
        if not calls:
            ctx.refuse("a turn without actions")
        if any(c.startswith(("type(", "finished(")) for c in calls[:-1]):
            ctx.refuse("UI-TARS reads type() and finished() to the end of the output: they must come last")
        head = f"Thought: {thought.strip()}\n" if thought and thought.strip() else ""
        return head + "Action: " + "\n\n".join(calls)

    @staticmethod
    def _box(point: tuple[int, int]) -> str:
        return f"'<|box_start|>({point[0]},{point[1]})<|box_end|>'"

    @staticmethod
    def _content_call(name: str, content: str, ctx: RenderContext) -> str:
        escaped = _escape(content)
        call = f"{name}(content='{escaped}')"
        if _unescape(escaped) != content or _normalize(call) != call or "\r" in content:
            ctx.refuse(f"{name}() content that UI-TARS' escaping cannot carry: {content[:80]!r}")
        return call

    def render_action(self, action: Action, ctx: RenderContext) -> str:
        if isinstance(action, Click):
            names = {("left", 1): "click", ("left", 2): "left_double", ("left", 3): "left_triple",
                     ("right", 1): "right_single"}
            name = names.get((action.button, action.count))
            if name is None:
                ctx.refuse(f"UI-TARS cannot click the {action.button} button {action.count} times")
            return f"{name}(start_box={self._box(ctx.at(action.x, action.y))})"
        if isinstance(action, Move):
            return f"hover(start_box={self._box(ctx.at(action.x, action.y))})"
        if isinstance(action, Drag):
            if action.button != "left":
                ctx.refuse("UI-TARS drags only with the left button")
            start, end = ctx.endpoints(action)
            return f"drag(start_box={self._box(start)}, end_box={self._box(end)})"
        if isinstance(action, Scroll):
            step = self.scroll_notches * self.scroll_unit_px
            dx, dy = ctx.dominant_scroll(action)
            amount = dx or dy
            if amount == 0:
                ctx.refuse("UI-TARS cannot scroll by nothing")
            if abs(abs(amount) - step) > 1e-6:
                ctx.lossy(f"a scroll of {abs(amount):g} px becomes UI-TARS' fixed step of {step:g} px")
            direction = ("right" if amount > 0 else "left") if dx else ("down" if amount > 0 else "up")
            return f"scroll(start_box={self._box(ctx.at(action.x, action.y))}, direction='{direction}')"
        if isinstance(action, Type):
            if not action.text:
                ctx.refuse("typing nothing")
            if action.text.endswith("\n"):
                ctx.refuse("a text ending in a newline (UI-TARS reads it as type-then-Enter)")
            return self._content_call("type", action.text, ctx)
        if isinstance(action, Key):
            spelled = [spell_key(k, LOWER_KEY_NAMES) for k in action.keys]
            if len(spelled) > 1 and "+" in spelled:
                ctx.refuse("UI-TARS separates keys with spaces or '+': a combination with '+' cannot be written")
            return f"hotkey(key={' '.join(spelled)!r})"
        if isinstance(action, (KeyDown, KeyUp)):
            name = "keydown" if isinstance(action, KeyDown) else "keyup"
            return f"{name}(key={spell_key(action.key, LOWER_KEY_NAMES)!r})"
        if isinstance(action, Wait):
            if action.seconds != 5.0:
                ctx.lossy(f"a wait of {action.seconds:g} s becomes wait() (5 s)")
            return "wait()"
        if isinstance(action, Done):
            if action.status != "success":
                ctx.lossy("giving up becomes call_user()")
                return "call_user()"
            if action.answer is None:
                return "finished()"
            if action.answer == "":
                ctx.lossy("an empty answer becomes none")
                return "finished()"
            return self._content_call("finished", action.answer, ctx)
        ctx.refuse(f"UI-TARS has no {action.type} action")
        raise AssertionError  # unreachable: refuse raises
