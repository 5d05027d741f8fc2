"""Input backends: each runs a list of primitive steps on the X display.

A step is ("move", x, y) | ("button", n, down) | ("key", name, down) | ("type", text)
| ("pause", seconds). XTest (python3-xlib) is the default; xdotool the fallback without
Xlib and always the way text is typed; pyautogui on request.
"""

from __future__ import annotations

import os
import time
from typing import Any

try:
    from . import keysyms
    from .faults import ActionFault, UnsupportedFault
    from .tools import TOOL_TIMEOUT, run_tool
except ImportError:  # run as a script from this folder (inside a VM image)
    import keysyms  # type: ignore[no-redef,import-not-found]
    from faults import ActionFault, UnsupportedFault  # type: ignore[no-redef,import-not-found]
    from tools import TOOL_TIMEOUT, run_tool  # type: ignore[no-redef,import-not-found]

__all__ = ["PyautoguiInput", "XTestInput", "XdotoolInput", "pick_input"]


class XTestInput:
    name = "xtest"

    def __init__(self, xlib: Any, disp: Any, env: dict[str, str]) -> None:
        from Xlib import XK, X
        from Xlib.ext import xtest

        self._X, self._XK, self._xtest, self._d, self._env = X, XK, xtest, disp, env
        self._shift = disp.keysym_to_keycode(XK.string_to_keysym("Shift_L"))

    def run(self, steps: list[tuple[Any, ...]]) -> None:
        X, fake, d = self._X, self._xtest.fake_input, self._d
        for step in steps:
            op = step[0]
            if op == "move":
                fake(d, X.MotionNotify, x=int(step[1]), y=int(step[2]))
            elif op == "button":
                fake(d, X.ButtonPress if step[2] else X.ButtonRelease, step[1])
            elif op == "key":
                self._key(step[1], step[2])
            elif op == "type":
                d.sync()  # our events must reach the server before xdotool's
                _type_with_xdotool(step[1], self._env)
            elif op == "pause":
                d.sync()
                time.sleep(step[1])
        d.sync()

    def _key(self, name: str, down: bool) -> None:
        keysym = keysyms.keysym_for(name, self._XK.string_to_keysym)
        keycode = self._d.keysym_to_keycode(keysym)
        if not keycode:
            # Not in the keymap (e.g. a non-Latin character): xdotool remaps a spare keycode.
            self._d.sync()
            _xdotool_chain([("key", name, down)], self._env)
            return
        shifted = self._d.keycode_to_keysym(keycode, 0) != keysym and self._d.keycode_to_keysym(keycode, 1) == keysym
        event = self._X.KeyPress if down else self._X.KeyRelease
        if shifted and down:
            self._xtest.fake_input(self._d, self._X.KeyPress, self._shift)
        self._xtest.fake_input(self._d, event, keycode)
        if shifted and not down:
            self._xtest.fake_input(self._d, self._X.KeyRelease, self._shift)


def _xdotool_chain(steps: list[tuple[Any, ...]], env: dict[str, str]) -> None:
    argv = ["xdotool"]
    for step in steps:
        op = step[0]
        if op == "move":
            argv += ["mousemove", str(int(step[1])), str(int(step[2]))]
        elif op == "button":
            argv += ["mousedown" if step[2] else "mouseup", str(step[1])]
        elif op == "key":
            argv += ["keydown" if step[2] else "keyup", keysyms.key_keysym_name(step[1])]
        elif op == "pause":
            argv += ["sleep", f"{step[1]:.3f}"]
    if len(argv) > 1:
        proc = run_tool(argv, env=env)
        if proc.returncode != 0:
            raise ActionFault(f"xdotool failed: {proc.stderr.decode(errors='replace').strip()}", reason="input_failed")


def _type_with_xdotool(text: str, env: dict[str, str]) -> None:
    # Characters outside the keymap make xdotool remap a keycode per character; with no
    # delay the app may read the event after the mapping is reverted and see the wrong
    # character, so such text gets a small per-character delay. Plain text types at 0.
    # A key released and pressed again within the same server millisecond reads as key
    # autorepeat to toolkits that filter it (LibreOffice's X11 backend drops the second
    # letter: "week" arrives as "wek"), so text with a doubled character gets 3 ms.
    doubled = any(a == b for a, b in zip(text, text[1:]))
    delay = "8" if not all(c.isascii() for c in text) else "3" if doubled else "0"
    proc = run_tool(["xdotool", "type", "--delay", delay, "--", text], env=env,
                     timeout=TOOL_TIMEOUT + len(text) * 0.01)
    if proc.returncode != 0:
        raise ActionFault(f"xdotool type failed: {proc.stderr.decode(errors='replace').strip()}", reason="input_failed")


#: Canonical key names -> pyautogui's names (single characters pass through).
_PYAUTOGUI_KEYS = {
    "Enter": "enter", "Tab": "tab", "Escape": "esc", "Backspace": "backspace", "Delete": "delete",
    "Insert": "insert", "Space": "space", "ArrowUp": "up", "ArrowDown": "down", "ArrowLeft": "left",
    "ArrowRight": "right", "Home": "home", "End": "end", "PageUp": "pageup", "PageDown": "pagedown",
    "Shift": "shift", "Control": "ctrl", "Alt": "alt", "Meta": "win", "CapsLock": "capslock",
    **{f"F{i}": f"f{i}" for i in range(1, 13)},
}


class PyautoguiInput:
    """pyautogui for pointer and keys (with its 100 ms PAUSE and the fail-safe corner off),
    xdotool for text: pyautogui types some characters wrong on X11 ('<' as '>', #198)."""

    name = "pyautogui"

    def __init__(self, env: dict[str, str]) -> None:
        os.environ["DISPLAY"] = env["DISPLAY"]  # pyautogui reads it once, at import
        import pyautogui

        pyautogui.PAUSE = 0
        pyautogui.FAILSAFE = False
        self._p = pyautogui
        self._env = env

    def run(self, steps: list[tuple[Any, ...]]) -> None:
        p = self._p
        buttons = {1: "left", 2: "middle", 3: "right"}
        for step in steps:
            op = step[0]
            if op == "move":
                p.moveTo(step[1], step[2], _pause=False)
            elif op == "button" and step[1] in buttons:
                (p.mouseDown if step[2] else p.mouseUp)(button=buttons[step[1]], _pause=False)
            elif op == "button":  # wheel: 4 up, 5 down, 6 left, 7 right
                if step[2]:
                    if step[1] in (4, 5):
                        p.scroll(1 if step[1] == 4 else -1, _pause=False)
                    else:
                        p.hscroll(-1 if step[1] == 6 else 1, _pause=False)
            elif op == "key":
                name = _PYAUTOGUI_KEYS.get(step[1], step[1])
                (p.keyDown if step[2] else p.keyUp)(name, _pause=False)
            elif op == "type":
                _type_with_xdotool(step[1], self._env)
            elif op == "pause":
                time.sleep(step[1])


class XdotoolInput:
    name = "xdotool"

    def __init__(self, env: dict[str, str]) -> None:
        self._env = env

    def run(self, steps: list[tuple[Any, ...]]) -> None:
        chain: list[tuple[Any, ...]] = []
        for step in steps:
            if step[0] == "type":
                _xdotool_chain(chain, self._env)
                chain = []
                _type_with_xdotool(step[1], self._env)
            else:
                chain.append(step)
        _xdotool_chain(chain, self._env)



def pick_input(wanted: str, xlib: Any, disp: Any, env: dict[str, str]) -> Any:
    """The backend `wanted` names ("auto": XTest when the display has it, else xdotool)."""
    if wanted in ("auto", "xtest") and disp is not None and disp.has_extension("XTEST"):
        return XTestInput(xlib, disp, env)
    if wanted == "xtest":
        raise UnsupportedFault("XTest input needs python3-xlib and the XTEST extension")
    if wanted == "pyautogui":
        try:
            return PyautoguiInput(env)
        except Exception as exc:  # pyautogui raises its own kinds when it cannot start
            raise UnsupportedFault(f"pyautogui is not usable here: {exc}") from exc
    return XdotoolInput(env)
