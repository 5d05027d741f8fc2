"""A scripted oracle on a phone (`kind: mobile`): it acts by touch, on what is in front.

A phone refuses mouse actions, and its apps run in frames of the shell's page, so the
oracle's steps (written as for a browser: `click:`, `fill:`, `scroll_to:`) are carried
out the way a person's finger would: a click is a tap (two clicks a double tap, a right
click a long press), a scroll a swipe inside the app's frame. Where to act is found in
what is in front: the open app's frame, or the shell's own page while its home screen,
drawer, recents, shade or a system dialog shows. An element counts as in view only inside
the app's frame box (not under the status bar, the keyboard or the navigation bar); one the
keyboard hides is reached as a person would, by putting the keyboard away (back) first.
"""

from __future__ import annotations

from typing import Any

from cua.actions import Action, Click, DoubleTap, Drag, Goto, LongPress, Scroll, Swipe, Tap
from cua.observation import Observation
from cua.state import AppStateQuery, DomQuery, StateQuery, StateResult
from cua.task import OracleContext

__all__ = ["SWIPE_SHARE", "PhoneContext", "PhoneError", "phone_context", "to_touch"]

#: The longest swipe an oracle makes, as a share of the app's height or width: the
#: stroke is centred in the app, so the finger stays inside it.
SWIPE_SHARE = 0.8


class PhoneError(RuntimeError):
    """A step that has no phone form (a mouse drag, typing a URL)."""


class PhoneContext:
    """An `OracleContext` whose DOM queries look at what the phone shows in front."""

    def __init__(self, ctx: OracleContext) -> None:
        self._ctx = ctx

    @property
    def observation(self) -> Observation:
        return self._ctx.observation

    async def front_frame(self) -> str | None:
        """The selector of the open app's frame, or None while the shell's page is in front."""
        result = await self._ctx.query(AppStateQuery(service="shell"))
        state = result.value if result.ok and isinstance(result.value, dict) else {}
        app = state.get("open_app")
        if state.get("screen") != "app" or not isinstance(app, str) or state.get("dialog") or state.get("shade_open"):
            return None
        return f'iframe[name="{app}"]'

    async def keyboard_open(self) -> bool:
        """Whether the on-screen keyboard covers the bottom of the app."""
        result = await self._ctx.query(AppStateQuery(service="shell"))
        return bool(result.ok and isinstance(result.value, dict) and result.value.get("keyboard_open"))

    async def query(self, query: StateQuery) -> StateResult:
        if isinstance(query, DomQuery) and query.frame is None:
            frame = await self.front_frame()
            if frame is not None:
                query = query.model_copy(update={"frame": frame})
        return await self._ctx.query(query)

    async def region(self) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) in screen pixels of where the front content shows."""
        screen = self._ctx.observation.screen
        whole = (0.0, 0.0, float(screen.width), float(screen.height))
        frame = await self.front_frame()
        if frame is None:
            return whole
        result = await self._ctx.query(DomQuery(selector=frame, prop="bbox"))
        box = result.value if result.ok and isinstance(result.value, dict) else None
        if not box or box.get("width", 0) <= 0 or box.get("height", 0) <= 0:
            return whole
        x, y = float(box["x"]), float(box["y"])
        return x, y, x + float(box["width"]), y + float(box["height"])


async def phone_context(ctx: OracleContext) -> PhoneContext | None:
    """A PhoneContext when `ctx` is a phone's (its sandbox answers the shell's state), else None."""
    if ctx.observation.url is None:  # desktops and VMs have no page, and no shell
        return None
    result = await ctx.query(AppStateQuery(service="shell"))
    state = result.value if result.ok else None
    if isinstance(state, dict) and "screen" in state and "recents" in state:
        return PhoneContext(ctx)
    return None


def to_touch(action: Action) -> Action:
    """The touch form of an oracle's action: a scroll becomes a swipe of the same length at
    its point, the finger moving against the content (`_into_view` keeps it inside the app)."""
    if isinstance(action, Click):
        if action.button == "right":
            return LongPress(x=action.x, y=action.y)
        return DoubleTap(x=action.x, y=action.y) if action.count == 2 else Tap(x=action.x, y=action.y)
    if isinstance(action, Scroll):
        dx, dy = float(action.dx), float(action.dy)
        direction: Any
        if abs(dy) >= abs(dx):
            distance, direction = abs(dy), ("up" if dy > 0 else "down")
        else:
            distance, direction = abs(dx), ("left" if dx > 0 else "right")
        return Swipe(x=float(action.x), y=float(action.y), direction=direction, distance=max(1.0, distance))
    if isinstance(action, (Drag, Goto)):
        raise PhoneError(f"a {action.type} has no phone form: write the step as touch actions "
                         "(long_press, swipe) or navigate by taps")
    return action
