"""Touch gestures as real touch input: CDP `Input.dispatchTouchEvent` (a long press:
`Input.synthesizeTapGesture` from a touch source), never mouse events.

Chromium turns these into the page's `touchstart`/`touchmove`/`touchend` and touch
pointer events (`pointerType == "touch"`), then into gestures of its own: a tap's
compatibility click (after `touchend`, as on a phone), scrolling and flinging, a long
press's context menu, a pinch. Points are CSS pixels of the viewport (the screen); a
gesture's timing is the gesture, so it sleeps between moves as a finger takes time.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from cua.actions import FLING_DURATION_MS, DoubleTap, Fling, LongPress, Pinch, Swipe, SwipeDirection, Tap
from cua.observation import Size
from cua.sandboxes.browser.cdp import Cdp

__all__ = ["DOUBLE_TAP_GAP_MS", "MOVE_INTERVAL_MS", "SWIPE_REST_MS", "TouchAction", "gesture", "swipe_path"]

TouchAction = Tap | DoubleTap | LongPress | Swipe | Fling | Pinch
#: Time between one move of a finger and the next (one frame at 60 Hz).
MOVE_INTERVAL_MS = 16.0
#: Between the two taps of a double tap: well inside Chromium's double-tap window (300 ms).
DOUBLE_TAP_GAP_MS = 80.0
#: How long a swipe's finger rests at its end before it lifts, so that it does not fling
#: (measured: a 100 px swipe in 150 ms scrolled 146 px lifted at once, 127 after 60 ms at
#: rest, 100 after 150 ms).
SWIPE_REST_MS = 150.0
#: Two fingers' spread at the start of a pinch that spreads them (scale > 1), in CSS px.
PINCH_START_SPREAD = 80.0

_UNIT: dict[SwipeDirection, tuple[int, int]] = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def _point(x: float, y: float, touch_id: int, screen: Size) -> dict[str, Any]:
    # a finger stays on the glass: points past the edge are held at it
    return {"x": min(max(x, 0.0), screen.width - 1.0), "y": min(max(y, 0.0), screen.height - 1.0),
            "id": touch_id, "radiusX": 1, "radiusY": 1, "force": 1}


class _Finger:
    """Sends one gesture's touch events, each step at its due time."""

    def __init__(self, cdp: Cdp, screen: Size) -> None:
        self._cdp = cdp
        self._screen = screen
        self._start = time.perf_counter()

    async def send(self, kind: str, points: list[tuple[float, float]]) -> None:
        touch_points = [_point(x, y, i, self._screen) for i, (x, y) in enumerate(points)]
        await self._cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": touch_points})

    async def until(self, at_ms: float) -> None:
        """Sleep until `at_ms` after the gesture began (no wait when already past it)."""
        left = at_ms / 1000 - (time.perf_counter() - self._start)
        if left > 0:
            await asyncio.sleep(left)

    async def path(self, paths: list[list[tuple[float, float]]], duration_ms: float, *, rest_ms: float = 0.0) -> None:
        """Fingers down at their paths' first points, moved along them over `duration_ms`,
        held still for `rest_ms`, lifted."""
        await self.send("touchStart", [p[0] for p in paths])
        steps = len(paths[0]) - 1
        for i in range(1, steps + 1):
            await self.until(duration_ms * i / steps)
            await self.send("touchMove", [p[i] for p in paths])
        if rest_ms:  # still: moves to where it is, until the velocity Chromium reckons is nil
            for i in range(1, 4):
                await self.until(duration_ms + rest_ms * i / 3)
                await self.send("touchMove", [p[-1] for p in paths])
        await self.send("touchEnd", [])


def _steps(duration_ms: float) -> int:
    return max(2, math.ceil(duration_ms / MOVE_INTERVAL_MS))


def swipe_path(x: float, y: float, direction: SwipeDirection, distance: float, steps: int) -> list[tuple[float, float]]:
    """A straight finger path from (x, y), `distance` px towards `direction`, in `steps` moves."""
    dx, dy = _UNIT[direction]
    return [(x + dx * distance * i / steps, y + dy * distance * i / steps) for i in range(steps + 1)]


async def gesture(cdp: Cdp, action: TouchAction, screen: Size) -> None:
    """Perform one touch action whose points are already screen (CSS) pixels."""
    finger = _Finger(cdp, screen)
    if isinstance(action, Tap):
        await finger.send("touchStart", [(action.x, action.y)])
        await finger.send("touchEnd", [])
    elif isinstance(action, DoubleTap):
        await finger.send("touchStart", [(action.x, action.y)])
        await finger.send("touchEnd", [])
        await finger.until(DOUBLE_TAP_GAP_MS)
        await finger.send("touchStart", [(action.x, action.y)])
        await finger.send("touchEnd", [])
    elif isinstance(action, LongPress):
        # Chromium's synthetic tap with a duration: the same touch events as a finger held
        # down, but, like a phone, no compatibility click after the lift (a touchStart and a
        # touchEnd sent apart are taken as a slow tap, and clicked)
        at = _point(action.x, action.y, 0, screen)
        await cdp.send("Input.synthesizeTapGesture", {"x": at["x"], "y": at["y"], "duration": action.duration_ms,
                                                      "tapCount": 1, "gestureSourceType": "touch"})
    elif isinstance(action, Swipe):
        steps = _steps(action.duration_ms)
        # the finger stops before it lifts: lifted while moving, the content would fling on,
        # and the phone would take the next tap as the one that stops the fling (no click)
        await finger.path([swipe_path(action.x, action.y, action.direction, action.distance, steps)], action.duration_ms,
                          rest_ms=SWIPE_REST_MS)
    elif isinstance(action, Fling):
        steps = max(3, _steps(FLING_DURATION_MS))
        await finger.path([swipe_path(action.x, action.y, action.direction, action.distance, steps)], FLING_DURATION_MS)
    else:
        await finger.path(_pinch_paths(action, screen), action.duration_ms)


def _pinch_paths(action: Pinch, screen: Size) -> list[list[tuple[float, float]]]:
    """Two fingers on a horizontal line through (x, y), their spread going from `start` to
    `start * scale`: pinching in starts wide (half the screen's smaller side), spreading starts close."""
    side = min(screen.width, screen.height)
    start = side / 2 if action.scale < 1 else PINCH_START_SPREAD
    end = start * action.scale
    steps = _steps(action.duration_ms)
    paths: list[list[tuple[float, float]]] = [[], []]
    for i in range(steps + 1):
        half = (start + (end - start) * i / steps) / 2
        paths[0].append((action.x - half, action.y))
        paths[1].append((action.x + half, action.y))
    return paths
