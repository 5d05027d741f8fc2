"""The agent's view of the X display: input, capture, settle detection and the window list.

Standard library plus whatever the guest has, each optional and probed once:
- python3-xlib: input through XTest (in-process: no fork per click, no built-in
  delays), settle detection through the DAMAGE extension, the window list through
  EWMH properties. This is the mechanism pyautogui uses on X11, minus its 100 ms PAUSE
  and its keymap bugs (it types '<' as '>': pyautogui #198).
- pyautogui, on request (`--input pyautogui`): pointer and keys through it, with PAUSE=0
  and FAILSAFE off; XTest directly is the default (the same mechanism, no extra layer).
- xdotool: the input fallback when Xlib is absent, and always the way text is typed
  (`type --delay 0` looks each character up in the live keymap, remapping a spare
  keycode for characters the keymap lacks).
- mss (or else Xlib's GetImage) to grab the screen; Pillow (or else a PNG writer built
  on zlib) to encode it.

One `Screen` belongs to one thread: Xlib connections are not thread-safe.
"""

from __future__ import annotations

import io
import os
import select
import shutil
import struct
import subprocess
import time
import zlib
from typing import Any

try:
    from . import keysyms
    from .faults import ActionFault, BadRequestFault, UnsupportedFault
except ImportError:  # run as a script from this folder (inside a VM image)
    import keysyms  # type: ignore[no-redef,import-not-found]
    from faults import ActionFault, BadRequestFault, UnsupportedFault  # type: ignore[no-redef,import-not-found]

__all__ = ["Screen", "encode_image"]

_BUTTONS = {"left": 1, "middle": 2, "right": 3}
#: Pixels of scroll per wheel notch (one X button-4/5 click), the unit Chromium and GTK
#: use for a notch on X11; a request for 250 px scrolls 3 notches.
SCROLL_NOTCH_PX = 100.0
#: Pacing of a drag (see Screen.steps_for): after the press and before the release, and
#: between intermediate motion events.
DRAG_PAUSE_S = 0.04
DRAG_STEP_S = 0.008
#: An app using more CPU than this share of a settle window is still working.
BUSY_FRACTION = 0.1
#: Bound on the time any helper program (xdotool, xclip, wmctrl) may take.
_TOOL_TIMEOUT = 10.0


def _optional(name: str) -> Any:
    try:
        return __import__(name, fromlist=["_"])
    except Exception:  # any import failure (missing, broken, no DISPLAY) means "not available"
        return None


def _mss_factory() -> Any:
    """mss's screenshot class: `mss.MSS` since 10.2 (`mss.mss` before, now deprecated)."""
    try:
        from mss import MSS

        return MSS
    except ImportError:
        pass
    try:
        from mss import mss

        return mss
    except ImportError:
        return None


def _run_tool(argv: list[str], *, env: dict[str, str] | None = None, stdin: bytes | None = None,
              timeout: float = _TOOL_TIMEOUT) -> subprocess.CompletedProcess[bytes]:
    if shutil.which(argv[0]) is None:
        raise UnsupportedFault(f"{argv[0]} is not installed in the guest", reason="missing_tool")
    try:
        return subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ActionFault(f"{argv[0]} did not finish within {timeout:g} s", reason="timeout") from exc


# --- image encoding ---

def _png_stdlib(rgb: bytes, width: int, height: int) -> bytes:
    """A PNG from packed RGB rows, for guests without Pillow."""
    stride = width * 3
    raw = b"".join(b"\x00" + rgb[y * stride:(y + 1) * stride] for y in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")


def _bgrx_to_rgb(bgrx: bytes) -> bytes:
    out = bytearray(len(bgrx) // 4 * 3)
    out[0::3] = bgrx[2::4]
    out[1::3] = bgrx[1::4]
    out[2::3] = bgrx[0::4]
    return bytes(out)


def encode_image(bgrx: bytes, width: int, height: int, fmt: str, quality: int,
                 out_size: tuple[int, int] | None) -> tuple[bytes, int, int]:
    """Encode a BGRX grab as png/jpeg/webp, resized to `out_size` when given."""
    pil = _optional("PIL.Image")
    if pil is None:
        if fmt != "png":
            raise UnsupportedFault(f"{fmt} needs Pillow in the guest; only png is available", reason="no_pillow")
        if out_size and out_size != (width, height):
            raise UnsupportedFault("resizing needs Pillow in the guest", reason="no_pillow")
        return _png_stdlib(_bgrx_to_rgb(bgrx), width, height), width, height
    image = pil.frombuffer("RGB", (width, height), bgrx, "raw", "BGRX", 0, 1)
    if out_size and out_size != (width, height):
        fw, fh = out_size
        if width % fw == 0 and height % fh == 0 and width // fw == height // fh:
            image = image.reduce(width // fw)  # exact integer downscale: fast box filter
        else:
            image = image.resize(out_size, pil.Resampling.BILINEAR)
    buf = io.BytesIO()
    if fmt == "jpeg":
        image.save(buf, "JPEG", quality=quality)
    elif fmt == "png":
        image.save(buf, "PNG", compress_level=1)
    elif fmt == "webp":
        image.save(buf, "WEBP", quality=quality, method=0)
    else:
        raise BadRequestFault(f"unknown image format {fmt!r}")
    return buf.getvalue(), image.width, image.height


# --- input backends: each runs a list of primitive steps ---
# A step is ("move", x, y) | ("button", n, down) | ("key", name, down) | ("type", text)
# | ("pause", seconds).

class _XTestInput:
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
        proc = _run_tool(argv, env=env)
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
    proc = _run_tool(["xdotool", "type", "--delay", delay, "--", text], env=env,
                     timeout=_TOOL_TIMEOUT + len(text) * 0.01)
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


class _PyautoguiInput:
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


class _XdotoolInput:
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


# --- settle detection ---

_PF_KTHREAD = 0x00200000


class _CpuWatch:
    """CPU time used by the desktop's processes (not the agent, not the X server), from
    /proc/PID/schedstat (nanoseconds, main threads). An app that is still computing its
    response (building a dialog, starting up) has not settled even before it draws."""

    def __init__(self) -> None:
        self.ignore: set[int] = {os.getpid()}
        self._kernel: dict[int, bool] = {}
        self.available = os.path.exists(f"/proc/{os.getpid()}/schedstat")

    def _is_kernel(self, pid: int) -> bool:
        known = self._kernel.get(pid)
        if known is None:
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                known = bool(int(fields[6]) & _PF_KTHREAD)
            except (OSError, IndexError, ValueError):
                known = True  # gone, or unreadable: leave it out
            self._kernel[pid] = known
        return known

    def sample(self) -> dict[int, int]:
        out: dict[int, int] = {}
        if not self.available:
            return out
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            if pid in self.ignore or self._is_kernel(pid):
                continue
            try:
                with open(f"/proc/{name}/schedstat", "rb") as f:
                    out[pid] = int(f.read().split()[0])
            except (OSError, IndexError, ValueError):
                continue  # exited between listing and reading
        return out

    @staticmethod
    def used_ns(before: dict[int, int], after: dict[int, int]) -> int:
        """CPU used between two samples; a process born in between counts in full."""
        return sum(max(0, ns - before.get(pid, 0)) for pid, ns in after.items())


class _DamageWatch:
    """Counts screen updates through the X DAMAGE extension on the root window."""

    def __init__(self, display_name: str) -> None:
        from Xlib import display
        from Xlib.ext import damage

        self._d = display.Display(display_name)
        if not self._d.has_extension("DAMAGE"):
            self._d.close()
            raise UnsupportedFault("the X server lacks the DAMAGE extension", reason="no_damage")
        self._d.damage_query_version()
        self._damage = self._d.screen().root.damage_create(damage.DamageReportRawRectangles)
        self._d.sync()

    def drain(self) -> int:
        n = 0
        while self._d.pending_events():
            self._d.next_event()
            n += 1
        return n

    def wait(self, seconds: float) -> bool:
        """True if any update arrives within `seconds` (all pending ones are consumed)."""
        if self.drain():
            return True
        if seconds > 0:
            ready, _, _ = select.select([self._d.fileno()], [], [], seconds)
            if ready:
                return self.drain() > 0 or self._d.pending_events() > 0
        return False

    def close(self) -> None:
        self._d.close()


# --- the screen ---

class Screen:
    """Input, capture, settle and windows for one X display. Use from one thread only."""

    def __init__(self, display_name: str, *, input_backend: str = "auto") -> None:
        self.display_name = display_name
        self.env = {**os.environ, "DISPLAY": display_name}
        self._xlib = _optional("Xlib.display")
        self._disp: Any = None
        if self._xlib is not None:
            try:
                self._disp = self._xlib.Display(display_name)
            except Exception as exc:  # Xlib raises its own DisplayError/ConnectionClosedError kinds
                raise UnsupportedFault(f"cannot open X display {display_name}: {exc}", reason="no_display") from exc
        self.width, self.height = self._size()
        self._input = self._pick_input(input_backend)
        self._cpu = _CpuWatch()
        self._damage: _DamageWatch | None = None
        self.settle_method = "poll"
        if self._disp is not None:
            try:
                self._damage = _DamageWatch(display_name)
                self.settle_method = "damage"
            except UnsupportedFault:
                self._damage = None
        self._mss: Any = None
        self.capture_method = "xlib"
        mss_factory = _mss_factory()
        if mss_factory is not None:
            try:
                self._mss = mss_factory(display=display_name)
                self.capture_method = "mss"
            except Exception:  # mss present but unusable here (no XShm, no libX11): use Xlib
                self._mss = None
        if self._mss is None and self._disp is None:
            self.capture_method = "none"

    def _size(self) -> tuple[int, int]:
        if self._disp is not None:
            root = self._disp.screen()
            return int(root.width_in_pixels), int(root.height_in_pixels)
        proc = _run_tool(["xdotool", "getdisplaygeometry"], env=self.env)
        if proc.returncode != 0:
            raise UnsupportedFault(f"cannot read the screen size: {proc.stderr.decode(errors='replace')}")
        w, h = proc.stdout.split()
        return int(w), int(h)

    def _pick_input(self, wanted: str) -> Any:
        if wanted in ("auto", "xtest") and self._disp is not None and self._disp.has_extension("XTEST"):
            return _XTestInput(self._xlib, self._disp, self.env)
        if wanted == "xtest":
            raise UnsupportedFault("XTest input needs python3-xlib and the XTEST extension")
        if wanted == "pyautogui":
            try:
                return _PyautoguiInput(self.env)
            except Exception as exc:  # pyautogui raises its own kinds when it cannot start
                raise UnsupportedFault(f"pyautogui is not usable here: {exc}") from exc
        return _XdotoolInput(self.env)

    def ignore_cpu_of(self, pids: set[int]) -> None:
        self._cpu.ignore |= pids

    @property
    def input_method(self) -> str:
        return str(self._input.name)

    # --- actions ---

    def _point(self, a: dict[str, Any], key_x: str = "x", key_y: str = "y") -> tuple[int, int]:
        try:
            x, y = float(a[key_x]), float(a[key_y])
        except (KeyError, TypeError, ValueError) as exc:
            raise BadRequestFault(f"action needs numeric {key_x} and {key_y}") from exc
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise ActionFault(f"point ({x:g}, {y:g}) is outside the {self.width}x{self.height} screen",
                              reason="out_of_bounds")
        return int(x), int(y)

    @staticmethod
    def _button(a: dict[str, Any]) -> int:
        name = a.get("button", "left")
        if name not in _BUTTONS:
            raise BadRequestFault(f"unknown button {name!r}")
        return _BUTTONS[name]

    def steps_for(self, a: dict[str, Any]) -> list[tuple[Any, ...]]:
        """The primitive input steps of one unified action (screen pixels)."""
        kind = a.get("type")
        if kind == "click":
            x, y = self._point(a)
            b = self._button(a)
            count = int(a.get("count", 1))
            if not 1 <= count <= 3:
                raise BadRequestFault("click count must be 1..3")
            return [("move", x, y), *([("button", b, True), ("button", b, False)] * count)]
        if kind == "move":
            return [("move", *self._point(a))]
        if kind in ("mouse_down", "mouse_up"):
            steps: list[tuple[Any, ...]] = []
            if a.get("x") is not None or a.get("y") is not None:
                steps.append(("move", *self._point(a)))
            return [*steps, ("button", self._button(a), kind == "mouse_down")]
        if kind == "drag":
            path = a.get("path")
            if not isinstance(path, list) or len(path) < 2:
                raise BadRequestFault("drag needs a path of at least two points")
            points = [self._point(p) for p in path]
            b = self._button(a)
            # A drag is a conversation: on the press, a window manager or toolkit grabs the
            # pointer and starts tracking only after it has seen motion past a threshold;
            # a burst of press-motion-release arriving at once is read as a click (openbox
            # moves nothing). So the steps are paced like a quick human drag (~0.2 s).
            steps = [("move", *points[0]), ("button", b, True), ("pause", DRAG_PAUSE_S)]
            for (x0, y0), (x1, y1) in zip(points, points[1:]):
                n = max(1, min(20, int(max(abs(x1 - x0), abs(y1 - y0)) // 8)))
                for i in range(1, n + 1):
                    steps += [("move", x0 + (x1 - x0) * i // n, y0 + (y1 - y0) * i // n), ("pause", DRAG_STEP_S)]
            return [*steps, ("pause", DRAG_PAUSE_S), ("button", b, False)]
        if kind == "scroll":
            x, y = self._point(a)
            steps = [("move", x, y)]
            for delta, neg, pos in ((float(a.get("dy", 0)), 4, 5), (float(a.get("dx", 0)), 6, 7)):
                if delta:
                    notches = max(1, round(abs(delta) / SCROLL_NOTCH_PX))
                    b = pos if delta > 0 else neg
                    steps += [("button", b, True), ("button", b, False)] * notches
            return steps
        if kind == "type":
            text = a.get("text")
            if not isinstance(text, str):
                raise BadRequestFault("type needs text")
            # xdotool types "\n" as the Linefeed keysym, which GTK apps ignore: newlines
            # are pressed as Return between the typed segments.
            steps = []
            for i, segment in enumerate(text.replace("\r\n", "\n").split("\n")):
                if i:
                    steps += [("key", "Enter", True), ("key", "Enter", False)]
                if segment:
                    steps.append(("type", segment))
            return steps
        if kind == "key":
            keys = a.get("keys")
            if isinstance(keys, str):
                keys = [k for k in keys.split("+") if k] or ["+"]
            if not isinstance(keys, list) or not keys:
                raise BadRequestFault("key needs a list of keys")
            try:
                names = [keysyms.canonical(str(k)) for k in keys]
            except ValueError as exc:
                raise ActionFault(str(exc), reason="unknown_key") from exc
            return [*(("key", k, True) for k in names), *(("key", k, False) for k in reversed(names))]
        if kind in ("key_down", "key_up"):
            try:
                name = keysyms.canonical(str(a.get("key")))
            except ValueError as exc:
                raise ActionFault(str(exc), reason="unknown_key") from exc
            return [("key", name, kind == "key_down")]
        if kind in ("wait", "done"):
            return []
        if kind in ("goto", "back", "forward"):
            raise ActionFault(f"action {kind!r} is not available on a desktop", reason="unsupported_action")
        raise BadRequestFault(f"unknown action type {kind!r}")

    def perform(self, action: dict[str, Any]) -> None:
        steps = self.steps_for(action)
        if self._damage is not None:
            self._damage.drain()  # updates from before the action say nothing about its effect
        if steps:
            self._input.run(steps)
        if action.get("type") == "wait":
            seconds = float(action.get("seconds", 1.0))
            if not 0 <= seconds <= 60:
                raise BadRequestFault("wait seconds must be within 0..60")
            time.sleep(seconds)  # the action itself asks for time to pass

    def settle(self, *, first_ms: float, quiet_ms: float, timeout_ms: float,
               since: float | None = None, changed: bool = False,
               cpu_before: dict[int, int] | None = None) -> dict[str, Any]:
        """Wait until the screen stops changing and the apps stop working, bounded by
        `timeout_ms`.

        No screen update within `first_ms` of the action (at `since`), with the apps idle
        meanwhile, means it changed nothing: settled. Otherwise wait for a window of
        `quiet_ms` with no update and the apps idle (CPU under BUSY_FRACTION of the
        window). Updates are X DAMAGE events when the server has the extension, else grabs
        compared every `quiet_ms`. The CPU check is what lets `first_ms` be short: a
        toolkit that has done its work but paints on its next frame-clock tick (GTK: up to
        ~17 ms later) used CPU in the window and is waited for.
        """
        t0 = time.monotonic() if since is None else since
        deadline = t0 + timeout_ms / 1000
        busy_seen = False

        def done(settled: bool, reason: str) -> dict[str, Any]:
            return {"settled": settled, "waited_ms": round((time.monotonic() - t0) * 1000, 2), "reason": reason}

        def idle(before: dict[int, int], start: float) -> bool:
            nonlocal busy_seen
            used = self._cpu.used_ns(before, self._cpu.sample())
            quiet = used <= BUSY_FRACTION * (time.monotonic() - start) * 1e9
            busy_seen = busy_seen or not quiet
            return quiet

        if self._damage is not None:
            if not changed:
                before = cpu_before if cpu_before is not None else self._cpu.sample()
                if not self._damage.wait(max(0.0, t0 + first_ms / 1000 - time.monotonic())) and idle(before, t0):
                    return done(True, "no_change")
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return done(False, "timeout")
                start, before = time.monotonic(), self._cpu.sample()
                if not self._damage.wait(min(quiet_ms / 1000, left)) and idle(before, start):
                    return done(True, "quiet_after_busy" if busy_seen else "quiet")
        previous = zlib.crc32(self.grab()[0])
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return done(False, "timeout")
            # No change notifications without DAMAGE: compare grabs one quiet window apart.
            start, before = time.monotonic(), self._cpu.sample()
            time.sleep(min(quiet_ms / 1000, left))
            current = zlib.crc32(self.grab()[0])
            if current == previous and idle(before, start):
                return done(True, "quiet")
            previous = current

    def act(self, action: dict[str, Any], settle: dict[str, float],
            shot: tuple[str, int, tuple[int, int] | None] | None) -> tuple[dict[str, Any], bytes | None]:
        """Perform an action, settle, and grab the screen if `shot` asks for it.

        When the action has drawn nothing yet, the grab is taken speculatively while the
        settle window runs, and kept only if the window then passes with no update at
        all (the screen is exactly what was grabbed); any update discards it, and the
        screen is grabbed again once it is quiet. A step that changes nothing thus costs
        max(first_ms, grab+encode), not their sum.
        """
        t0 = time.monotonic()
        cpu_before = self._cpu.sample()
        self.perform(action)
        t1 = time.monotonic()
        timings: dict[str, float] = {"input": round((t1 - t0) * 1000, 2)}
        data: bytes | None = None
        meta: dict[str, Any] | None = None
        changed = False
        if shot is not None and self._damage is not None and action.get("type") != "wait":
            changed = self._damage.drain() > 0
            if not changed:
                data, meta = self.screenshot(*shot)
                changed = self._damage.drain() > 0
        result = self.settle(**settle, since=t1, changed=changed, cpu_before=cpu_before)
        if result["reason"] != "no_change":
            data = None
        t2 = time.monotonic()
        if shot is not None and data is None:
            data, meta = self.screenshot(*shot)
        t3 = time.monotonic()
        timings.update(settle=round((t2 - t1) * 1000, 2), screenshot=round((t3 - t2) * 1000, 2))
        out: dict[str, Any] = {"settle": result, "timings_ms": timings}
        if meta is not None:
            out["screenshot"] = meta
        return out, data

    # --- capture ---

    def grab(self) -> tuple[bytes, int, int]:
        """The whole screen as BGRX bytes."""
        if self._mss is not None:
            shot = self._mss.grab({"left": 0, "top": 0, "width": self.width, "height": self.height})
            return bytes(shot.bgra), shot.width, shot.height
        if self._disp is not None:
            from Xlib import X

            image = self._disp.screen().root.get_image(0, 0, self.width, self.height, X.ZPixmap, 0xFFFFFFFF)
            return bytes(image.data), self.width, self.height
        raise UnsupportedFault("screenshots need mss or python3-xlib in the guest", reason="no_capture")

    def screenshot(self, fmt: str = "jpeg", quality: int = 80,
                   size: tuple[int, int] | None = None) -> tuple[bytes, dict[str, Any]]:
        if fmt not in ("png", "jpeg", "webp"):
            raise BadRequestFault(f"unknown image format {fmt!r}")
        if not 1 <= int(quality) <= 100:
            raise BadRequestFault("quality must be within 1..100")
        raw, w, h = self.grab()
        data, ow, oh = encode_image(raw, w, h, fmt, int(quality), size)
        return data, {"format": fmt, "width": ow, "height": oh}

    # --- windows ---

    def windows(self) -> dict[str, Any]:
        """{"windows": [{id, title, class, instance, pid, x, y, width, height}], "focused": id | None}."""
        if self._disp is not None:
            return self._windows_xlib()
        return self._windows_wmctrl()

    def focused_window(self) -> dict[str, Any] | None:
        """The window that has the input focus, in the shape `windows` lists it, or None.

        Cheaper than `windows`: one window's properties are read, not every client's, so
        it can ride along with every action's and screenshot's reply (the title an
        observation carries)."""
        if self._disp is None:
            listing = self._windows_wmctrl()
            return next((w for w in listing["windows"] if w["id"] == listing["focused"]), None)
        focused = self._active_xlib()
        return self._window_xlib(focused) if focused is not None else None

    def focused_title(self) -> dict[str, Any] | None:
        """{id, title} of the focused window, or None: what every observation carries, read
        with two X round trips (the whole description, `focused_window`, takes about ten)."""
        if self._disp is None:
            window = self.focused_window()
            return {"id": window["id"], "title": window["title"]} if window is not None else None
        from Xlib import X, Xatom
        from Xlib.error import BadDrawable, BadWindow

        wid = self._active_xlib()
        if wid is None:
            return None
        d = self._disp
        win = d.create_resource_object("window", wid)
        try:
            name = win.get_full_property(d.intern_atom("_NET_WM_NAME"), d.intern_atom("UTF8_STRING"))
            if name is not None:
                title = name.value.decode("utf-8", "replace") if isinstance(name.value, bytes) else str(name.value)
            else:
                legacy = win.get_full_property(Xatom.WM_NAME, X.AnyPropertyType)
                title = legacy.value.decode("latin-1") if legacy is not None and isinstance(legacy.value, bytes) else ""
        except (BadWindow, BadDrawable):
            return None  # closed while we looked
        return {"id": wid, "title": title}

    def _active_xlib(self) -> int | None:
        from Xlib import X

        root = self._disp.screen().root
        active = root.get_full_property(self._disp.intern_atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
        return int(active.value[0]) if active is not None and len(active.value) and active.value[0] else None

    def _windows_xlib(self) -> dict[str, Any]:
        from Xlib import X

        root = self._disp.screen().root
        client_list = root.get_full_property(self._disp.intern_atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
        focused = self._active_xlib()
        out = [w for w in (self._window_xlib(int(wid)) for wid in (client_list.value if client_list is not None else []))
               if w is not None]
        return {"windows": out, "focused": focused}

    def _window_xlib(self, wid: int) -> dict[str, Any] | None:
        """One top-level window's description; None when it closed while we looked."""
        from Xlib import X, Xatom
        from Xlib.error import BadDrawable, BadWindow, XError

        d = self._disp
        root = d.screen().root
        atom = d.intern_atom
        utf8 = atom("UTF8_STRING")
        win = d.create_resource_object("window", wid)
        try:
            name = win.get_full_property(atom("_NET_WM_NAME"), utf8)
            title = (name.value.decode("utf-8", "replace") if isinstance(name.value, bytes) else str(name.value)) \
                if name is not None else None
            if title is None:
                legacy = win.get_full_property(Xatom.WM_NAME, X.AnyPropertyType)
                title = legacy.value.decode("latin-1") if legacy is not None and isinstance(legacy.value, bytes) else ""
            wm_class = win.get_wm_class() or ("", "")
            pid_prop = win.get_full_property(atom("_NET_WM_PID"), X.AnyPropertyType)
            geom = win.get_geometry()
            pos = root.translate_coords(win, 0, 0)
            attrs = win.get_attributes()
            state = win.get_full_property(atom("_NET_WM_STATE"), X.AnyPropertyType)
            states = [d.get_atom_name(int(s)).removeprefix("_NET_WM_STATE_").lower()
                      for s in (state.value if state is not None else [])]
        except (BadWindow, BadDrawable):
            return None  # closed while we looked
        except XError as exc:
            raise ActionFault(f"reading window 0x{wid:x} failed: {exc}", reason="x_error") from exc
        return {
            "id": wid, "title": title, "instance": wm_class[0], "class": wm_class[1],
            "pid": int(pid_prop.value[0]) if pid_prop is not None and len(pid_prop.value) else None,
            "x": int(pos.x), "y": int(pos.y), "width": int(geom.width), "height": int(geom.height),
            "mapped": attrs.map_state == X.IsViewable, "states": states,
        }

    def place_window(self, wid: int, x: int, y: int, width: int, height: int) -> None:
        """Ask the window manager (EWMH) to put a window's client area at this geometry;
        the caller checks the outcome."""
        if self._disp is None:
            _run_tool(["xdotool", "windowsize", str(wid), str(width), str(height),
                       "windowmove", str(wid), str(x), str(y)], env=self.env)
            return
        # flags: StaticGravity (10: the client area's position), x/y/width/height given
        # (bits 8-11), sent by a pager-like tool (source 2, bits 12-13).
        self._wm_message(wid, "_NET_MOVERESIZE_WINDOW", [10 | (0xF << 8) | (2 << 12), x, y, width, height])

    def activate_window(self, wid: int) -> None:
        """Ask the window manager to raise and focus a window."""
        if self._disp is None:
            _run_tool(["xdotool", "windowactivate", str(wid)], env=self.env)
            return
        self._wm_message(wid, "_NET_ACTIVE_WINDOW", [2, 0, 0, 0, 0])  # source 2: a pager-like tool

    def _wm_message(self, wid: int, message: str, data: list[int]) -> None:
        from Xlib import X
        from Xlib.protocol import event

        d = self._disp
        win = d.create_resource_object("window", wid)
        d.screen().root.send_event(event.ClientMessage(window=win, client_type=d.intern_atom(message), data=(32, data)),
                                   event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        d.sync()

    def _windows_wmctrl(self) -> dict[str, Any]:
        proc = _run_tool(["wmctrl", "-lpGx"], env=self.env)
        if proc.returncode != 0:
            raise ActionFault(f"wmctrl failed: {proc.stderr.decode(errors='replace')}", reason="tool_failed")
        out = []
        for line in proc.stdout.decode("utf-8", "replace").splitlines():
            parts = line.split(None, 8)
            if len(parts) < 8:
                continue
            wid, _desk, pid, x, y, w, h, klass = parts[:8]
            title = parts[8].split(None, 1)[1] if len(parts) > 8 and " " in parts[8] else ""
            instance, _, cls = klass.partition(".")
            out.append({"id": int(wid, 16), "title": title, "instance": instance, "class": cls,
                        "pid": int(pid) or None, "x": int(x), "y": int(y), "width": int(w), "height": int(h),
                        "mapped": True, "states": []})
        active = _run_tool(["xdotool", "getactivewindow"], env=self.env)
        focused = int(active.stdout) if active.returncode == 0 and active.stdout.strip() else None
        return {"windows": out, "focused": focused}

    def close(self) -> None:
        if self._damage is not None:
            self._damage.close()
        if self._mss is not None:
            self._mss.close()
        if self._disp is not None:
            self._disp.close()
