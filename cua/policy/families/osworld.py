"""OSWorld agents: `computer_13` action dicts, or pyautogui code read with `ast`.

pyautogui code is never executed. Each statement is matched against the pyautogui
calls an agent may use (click, moveTo, dragTo, scroll, typewrite/write, press, hotkey,
keyDown/keyUp, mouseDown/mouseUp, ...) and `time.sleep`; arguments may be literals,
simple arithmetic, or names bound earlier to literals. Anything else (loops, other
modules, locateOnScreen) is a parse error naming the line. ``DONE``, ``FAIL`` and
``WAIT`` are OSWorld's special answers. Coordinates are pixels of the screenshot;
scrolling counts wheel notches (positive up).
"""

from __future__ import annotations

import ast
import operator
import re
from typing import Any, ClassVar

from cua.actions import MouseButton
from cua.observation import Size
from cua.policy.families.base import ActionBuilder, Family, FamilyParseError, ParseContext, Parsed, number
from cua.policy.imaging import ModelFrame

__all__ = ["OSWorld"]

_CODE_FENCE = re.compile(r"```(?:python|py|json)?\s*\n?(.*?)```", re.DOTALL)
_SPECIAL = {"DONE", "FAIL", "WAIT"}
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv}
_BUTTONS: dict[str, MouseButton] = {"left": "left", "right": "right", "middle": "middle", "primary": "left",
                                    "secondary": "right"}

# The parameters of each pyautogui function, in positional order.
_SIGNATURES: dict[str, tuple[str, ...]] = {
    "click": ("x", "y", "clicks", "interval", "button", "duration"),
    "leftClick": ("x", "y", "interval", "duration"),
    "doubleClick": ("x", "y", "interval", "button", "duration"),
    "tripleClick": ("x", "y", "interval", "button", "duration"),
    "rightClick": ("x", "y", "interval", "duration"),
    "middleClick": ("x", "y", "interval", "duration"),
    "moveTo": ("x", "y", "duration"),
    "moveRel": ("xOffset", "yOffset", "duration"),
    "move": ("xOffset", "yOffset", "duration"),
    "dragTo": ("x", "y", "duration", "button"),
    "dragRel": ("xOffset", "yOffset", "duration", "button"),
    "drag": ("xOffset", "yOffset", "duration", "button"),
    "mouseDown": ("x", "y", "button", "duration"),
    "mouseUp": ("x", "y", "button", "duration"),
    "scroll": ("clicks", "x", "y"),
    "vscroll": ("clicks", "x", "y"),
    "hscroll": ("clicks", "x", "y"),
    "typewrite": ("message", "interval"),
    "write": ("message", "interval"),
    "press": ("keys", "presses", "interval"),
    "keyDown": ("key",),
    "keyUp": ("key",),
    "hotkey": (),  # *keys
}


def _line(node: ast.AST) -> int | str:
    return node.lineno if isinstance(node, (ast.stmt, ast.expr)) else "?"


class OSWorld(Family):
    name: ClassVar[str] = "osworld"

    def model_frame(self, frame: Size) -> ModelFrame:
        return ModelFrame.identity(frame)

    def system_prompt(self, model: ModelFrame) -> str:
        return (
            "You are an agent which follows my instruction and performs desktop computer tasks as instructed. "
            "For each step, you will get a screenshot of the computer, and you will predict the next action "
            "with python code using pyautogui. Use screen coordinates from the screenshot "
            f"({model.image.width}x{model.image.height}); do not use pyautogui.locateCenterOnScreen or "
            "pyautogui.screenshot(). Return one line or several lines of python code wrapped in ```python```. "
            "Answer ```WAIT``` to wait, ```FAIL``` if the task cannot be done, ```DONE``` when it is done."
        )

    # -- parsing ---------------------------------------------------------------------
    def parse(self, raw: str, ctx: ParseContext) -> Parsed:
        text = raw.strip()
        blocks = [b.strip() for b in _CODE_FENCE.findall(text)]
        thought = _CODE_FENCE.sub("", text).strip() or None if blocks else None
        body = "\n".join(blocks) if blocks else text
        builder = ActionBuilder(ctx)
        stripped = body.strip()
        if stripped.startswith(("{", "[")):
            self._parse_computer13(stripped, builder)
            return Parsed(actions=builder.actions, thought=thought)
        if stripped in _SPECIAL:
            self._special(stripped, builder)
            return Parsed(actions=builder.actions, thought=thought)
        if not blocks:  # prose around unfenced code: keep the lines that look like code
            lines = [ln for ln in text.splitlines() if ln.strip().startswith(("pyautogui.", "time.", "import "))
                     or ln.strip() in _SPECIAL]
            if not lines:
                raise FamilyParseError("no pyautogui code, computer_13 action or DONE/FAIL/WAIT in the output")
            thought = "\n".join(ln for ln in text.splitlines() if ln not in lines).strip() or None
            body = "\n".join(ln.strip() for ln in lines)
        self._run_code(body, builder)
        if not builder.actions:
            raise FamilyParseError("the code performs no action")
        return Parsed(actions=builder.actions, thought=thought)

    def _special(self, word: str, b: ActionBuilder) -> None:
        if word == "DONE":
            b.done("success")
        elif word == "FAIL":
            b.done("infeasible")
        else:
            b.wait(1.0)

    # -- computer_13 -----------------------------------------------------------------
    def _parse_computer13(self, text: str, b: ActionBuilder) -> None:
        from cua.policy.families.openai_cua import load_json_payload

        value, _ = load_json_payload(text)
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict) or "action_type" not in item:
                raise FamilyParseError(f"a computer_13 action needs action_type: {item!r}")
            params = item.get("parameters") or {k: v for k, v in item.items() if k != "action_type"}
            if not isinstance(params, dict):
                raise FamilyParseError("computer_13 parameters must be an object")
            self._computer13(str(item["action_type"]).upper(), params, b)

    def _computer13(self, kind: str, p: dict[str, Any], b: ActionBuilder) -> None:
        def xy(required: bool = True) -> tuple[float, float] | None:
            if p.get("x") is None or p.get("y") is None:
                if required:
                    raise FamilyParseError(f"{kind} needs x and y")
                return None
            return b.at(number(p["x"], "x"), number(p["y"], "y"))

        button = _BUTTONS.get(str(p.get("button", "left")))
        if button is None:
            raise FamilyParseError(f"unknown button {p.get('button')!r}")
        if kind == "MOVE_TO":
            point = xy()
            assert point is not None
            b.move(point)
        elif kind == "CLICK":
            b.click(xy(required=False), button, int(number(p.get("num_clicks", 1), "num_clicks")))
        elif kind == "RIGHT_CLICK":
            b.click(xy(required=False), "right", 1)
        elif kind == "DOUBLE_CLICK":
            b.click(xy(required=False), "left", 2)
        elif kind == "MOUSE_DOWN":
            b.mouse_down(None, button)
        elif kind == "MOUSE_UP":
            b.mouse_up(None, button)
        elif kind == "DRAG_TO":
            end = xy()
            assert end is not None
            b.drag(None, end)
        elif kind == "SCROLL":
            unit = b.ctx.scroll_unit_px
            b.scroll(None, number(p.get("dx", 0), "dx") * unit, -number(p.get("dy", 0), "dy") * unit)
        elif kind == "TYPING":
            b.type(str(p.get("text", "")))
        elif kind == "PRESS":
            b.key([str(p.get("key", ""))])
        elif kind == "KEY_DOWN":
            b.key_down(str(p.get("key", "")))
        elif kind == "KEY_UP":
            b.key_up(str(p.get("key", "")))
        elif kind == "HOTKEY":
            keys = p.get("keys")
            if not isinstance(keys, list):
                raise FamilyParseError("HOTKEY needs keys")
            b.key([str(k) for k in keys])
        elif kind in ("WAIT", "DONE", "FAIL"):
            self._special(kind, b)
        else:
            raise FamilyParseError(f"unknown computer_13 action_type {kind!r}")

    # -- pyautogui code --------------------------------------------------------------
    def _run_code(self, code: str, b: ActionBuilder) -> None:
        try:
            module = ast.parse(code)
        except SyntaxError as exc:
            raise FamilyParseError(f"not valid python (line {exc.lineno}): {exc.msg}") from None
        env: dict[str, Any] = {}
        for stmt in module.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass)):
                continue
            if isinstance(stmt, ast.Assign):
                value = self._eval(stmt.value, env, stmt)
                for target in stmt.targets:
                    self._bind(target, value, env, stmt)
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                self._call(stmt.value, env, b)
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name) and stmt.value.id in _SPECIAL:
                self._special(stmt.value.id, b)
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # a docstring or comment-like string
            raise FamilyParseError(f"unsupported statement on line {stmt.lineno}: {ast.unparse(stmt)[:120]!r}")

    def _bind(self, target: ast.expr, value: Any, env: dict[str, Any], stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (tuple, list)) and len(value) == len(target.elts):
            for sub, item in zip(target.elts, value):
                self._bind(sub, item, env, stmt)
        else:
            raise FamilyParseError(f"unsupported assignment on line {stmt.lineno}")

    def _eval(self, node: ast.expr, env: dict[str, Any], where: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.Tuple, ast.List)):
            return [self._eval(e, env, where) for e in node.elts]
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            raise FamilyParseError(f"unknown name {node.id!r} on line {_line(where)}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self._eval(node.operand, env, where)
            return -number(value, "operand") if isinstance(node.op, ast.USub) else number(value, "operand")
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            left, right = self._eval(node.left, env, where), self._eval(node.right, env, where)
            if isinstance(left, str) and isinstance(right, str) and isinstance(node.op, ast.Add):
                return left + right
            try:
                return _BINOPS[type(node.op)](number(left, "operand"), number(right, "operand"))
            except ZeroDivisionError:
                raise FamilyParseError("division by zero in an argument") from None
        raise FamilyParseError(
            f"unsupported expression on line {_line(where)}: {ast.unparse(node)[:80]!r}"
        )

    def _call(self, call: ast.Call, env: dict[str, Any], b: ActionBuilder) -> None:
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            raise FamilyParseError(f"unsupported call on line {call.lineno}: {ast.unparse(call)[:120]!r}")
        module, name = func.value.id, func.attr
        args = [self._eval(a, env, call) for a in call.args if not isinstance(a, ast.Starred)]
        kwargs = {k.arg: self._eval(k.value, env, call) for k in call.keywords if k.arg is not None}
        if module == "time" and name == "sleep":
            b.wait(number(args[0] if args else kwargs.get("secs", 0), "seconds"))
            return
        if module != "pyautogui" or name not in _SIGNATURES:
            raise FamilyParseError(f"unsupported call {module}.{name}() on line {call.lineno}")
        if name == "hotkey":
            b.key([str(k) for k in args])
            return
        params = _SIGNATURES[name]
        if len(args) > len(params):
            raise FamilyParseError(f"too many arguments to pyautogui.{name}() on line {call.lineno}")
        values: dict[str, Any] = dict(zip(params, args))
        values.update(kwargs)
        if isinstance(values.get("x"), (list, tuple)) and values.get("y") is None:  # click((x, y))
            values["x"], values["y"] = values["x"][:2] if len(values["x"]) >= 2 else (None, None)
        self._pyautogui(name, values, b)

    def _pyautogui(self, name: str, v: dict[str, Any], b: ActionBuilder) -> None:
        def point() -> tuple[float, float] | None:
            if v.get("x") is None and v.get("y") is None:
                return None
            if v.get("x") is None or v.get("y") is None:
                raise FamilyParseError(f"pyautogui.{name}() got only one coordinate")
            return b.at(number(v["x"], "x"), number(v["y"], "y"))

        def offset() -> tuple[float, float]:
            if b.ctx.pointer is None:
                raise FamilyParseError(f"pyautogui.{name}() moves relative to an unknown pointer position")
            dx, dy = b.at(number(v.get("xOffset", 0), "xOffset"), number(v.get("yOffset", 0), "yOffset"))
            return b.ctx.pointer[0] + dx, b.ctx.pointer[1] + dy

        button = _BUTTONS.get(str(v.get("button", "left")))
        if button is None:
            raise FamilyParseError(f"unknown button {v.get('button')!r}")
        if name in ("click", "leftClick"):
            b.click(point(), button, int(number(v.get("clicks", 1), "clicks")))
        elif name == "doubleClick":
            b.click(point(), button, 2)
        elif name == "tripleClick":
            b.click(point(), button, 3)
        elif name == "rightClick":
            b.click(point(), "right", 1)
        elif name == "middleClick":
            b.click(point(), "middle", 1)
        elif name == "moveTo":
            target = point()
            if target is None:
                raise FamilyParseError("pyautogui.moveTo() needs x and y")
            b.move(target)
        elif name in ("moveRel", "move"):
            b.move(offset())
        elif name == "dragTo":
            end = point()
            if end is None:
                raise FamilyParseError("pyautogui.dragTo() needs x and y")
            b.drag(None, end, button)
        elif name in ("dragRel", "drag"):
            b.drag(None, offset(), button)
        elif name == "mouseDown":
            b.mouse_down(point(), button)
        elif name == "mouseUp":
            b.mouse_up(point(), button)
        elif name in ("scroll", "vscroll", "hscroll"):
            notches = number(v.get("clicks", 0), "clicks") * b.ctx.scroll_unit_px
            if name == "hscroll":
                b.scroll(point(), notches, 0.0)
            else:
                b.scroll(point(), 0.0, -notches)
        elif name in ("typewrite", "write"):
            message = v.get("message", "")
            if isinstance(message, list):
                for key in message:
                    b.key([str(key)])
            else:
                b.type(str(message))
        elif name == "press":
            keys = v.get("keys")
            keys = keys if isinstance(keys, list) else [keys]
            for _ in range(max(1, int(number(v.get("presses", 1), "presses")))):
                for key in keys:
                    b.key([str(key)])
        elif name == "keyDown":
            b.key_down(str(v.get("key")))
        elif name == "keyUp":
            b.key_up(str(v.get("key")))
        else:  # pragma: no cover - guarded by _SIGNATURES
            raise FamilyParseError(f"unsupported pyautogui.{name}()")
