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

import os
import time
import zlib
from typing import Any

try:
    from . import keysyms
    from .faults import ActionFault, BadRequestFault, UnsupportedFault
    from .imaging import encode_image, mss_factory
    from .inputs import pick_input
    from .settle import BUSY_FRACTION, CpuWatch, DamageWatch
    from .tools import optional, run_tool
    from .windows import Windows
except ImportError:  # run as a script from this folder (inside a VM image)
    import keysyms  # type: ignore[no-redef,import-not-found]
    from faults import ActionFault, BadRequestFault, UnsupportedFault  # type: ignore[no-redef,import-not-found]
    from imaging import encode_image, mss_factory  # type: ignore[no-redef,import-not-found]
    from inputs import pick_input  # type: ignore[no-redef,import-not-found]
    from settle import BUSY_FRACTION, CpuWatch, DamageWatch  # type: ignore[no-redef,import-not-found]
    from tools import optional, run_tool  # type: ignore[no-redef,import-not-found]
    from windows import Windows  # type: ignore[no-redef,import-not-found]

__all__ = ["Screen", "encode_image"]

_BUTTONS = {"left": 1, "middle": 2, "right": 3}
#: Pixels of scroll per wheel notch (one X button-4/5 click), the unit Chromium and GTK
#: use for a notch on X11; a request for 250 px scrolls 3 notches.
SCROLL_NOTCH_PX = 100.0
#: Pacing of a drag (see Screen.steps_for): after the press and before the release, and
#: between intermediate motion events.
DRAG_PAUSE_S = 0.04
DRAG_STEP_S = 0.008


# --- the screen ---

class Screen:
    """Input, capture, settle and windows for one X display. Use from one thread only."""

    def __init__(self, display_name: str, *, input_backend: str = "auto") -> None:
        self.display_name = display_name
        self.env = {**os.environ, "DISPLAY": display_name}
        self._xlib = optional("Xlib.display")
        self._disp: Any = None
        if self._xlib is not None:
            try:
                self._disp = self._xlib.Display(display_name)
            except Exception as exc:  # Xlib raises its own DisplayError/ConnectionClosedError kinds
                raise UnsupportedFault(f"cannot open X display {display_name}: {exc}", reason="no_display") from exc
        self.width, self.height = self._size()
        self._input = pick_input(input_backend, self._xlib, self._disp, self.env)
        self._windows = Windows(self._disp, self.env)
        self._cpu = CpuWatch()
        self._damage: DamageWatch | None = None
        self.settle_method = "poll"
        if self._disp is not None:
            try:
                self._damage = DamageWatch(display_name)
                self.settle_method = "damage"
            except UnsupportedFault:
                self._damage = None
        self._mss: Any = None
        self.capture_method = "xlib"
        factory = mss_factory()
        if factory is not None:
            try:
                self._mss = factory(display=display_name)
                self.capture_method = "mss"
            except Exception:  # mss present but unusable here (no XShm, no libX11): use Xlib
                self._mss = None
        if self._mss is None and self._disp is None:
            self.capture_method = "none"

    def _size(self) -> tuple[int, int]:
        if self._disp is not None:
            root = self._disp.screen()
            return int(root.width_in_pixels), int(root.height_in_pixels)
        proc = run_tool(["xdotool", "getdisplaygeometry"], env=self.env)
        if proc.returncode != 0:
            raise UnsupportedFault(f"cannot read the screen size: {proc.stderr.decode(errors='replace')}")
        w, h = proc.stdout.split()
        return int(w), int(h)

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

    # --- windows (see windows.py) ---

    def windows(self) -> dict[str, Any]:
        """{"windows": [{id, title, class, instance, pid, x, y, width, height}], "focused": id | None}."""
        return self._windows.listing()

    def focused_window(self) -> dict[str, Any] | None:
        return self._windows.focused_window()

    def focused_title(self) -> dict[str, Any] | None:
        return self._windows.focused_title()

    def hide_session_windows(self) -> None:
        """Leave the session's panel and desktop windows out of every window listing."""
        self._windows.hide_session_windows = True

    def place_window(self, wid: int, x: int, y: int, width: int, height: int) -> None:
        self._windows.place(wid, x, y, width, height)

    def activate_window(self, wid: int) -> None:
        self._windows.activate(wid)

    def close(self) -> None:
        if self._damage is not None:
            self._damage.close()
        if self._mss is not None:
            self._mss.close()
        if self._disp is not None:
            self._disp.close()
