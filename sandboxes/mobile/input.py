"""The mobile sandbox's input: touch gestures (touch.py), the phone's buttons and its
launcher (the shell's page), and the browser's keyboard for `type` and `key`.

A phone has no mouse: mouse actions are refused as `unsupported_action`, and so is the
browser's `goto`/`forward` (the phone's own navigation is `nav`; the browser's `back` is
the phone's back button). The pointer never moves: a mouse move on a touch page would
give it `mousemove` events no phone sends.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from cua.actions import MOUSE_ONLY, Action, ActionAdapter, Back, DoubleTap, Fling, LongPress, Nav, OpenApp, Pinch, Swipe, Tap
from cua.errors import ActionFailed
from cua.observation import ActionError, Size
from cua.sandbox import scale_action
from cua.sandboxes.browser.elements import ElementIds
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.input import Input
from cua.sandboxes.browser.origins import OwnOrigins
from cua.sandboxes.browser.pages import Pages
from cua.sandboxes.mobile.touch import TouchAction, gesture

__all__ = ["MobileInput", "REFUSED"]

#: What a phone cannot do: the mouse's actions and the browser's address bar.
REFUSED = MOUSE_ONLY | {"goto", "forward"}

_TOUCH = (Tap, DoubleTap, LongPress, Swipe, Fling, Pinch)
_OPEN_APP_JS = "(name) => window.__cuaShell ? window.__cuaShell.openApp(name) : null"
_NAV_JS = "(button) => window.__cuaShell ? window.__cuaShell.nav(button) : null"


class MobileInput(Input):
    """Touch, the phone's buttons and the keyboard on the shell's page."""

    def __init__(self, guard: Guard, pages: Pages, elements: ElementIds, screen: Size, *,
                 navigation_timeout_ms: int, own: OwnOrigins | None = None) -> None:
        super().__init__(guard, pages, elements, screen, navigation_timeout_ms=navigation_timeout_ms, own=own,
                         foreign=REFUSED)

    async def act(self, action: Action | dict[str, Any], frame: Size) -> tuple[ActionError | None, dict[str, Any] | None]:
        try:
            parsed: Action = action if isinstance(action, BaseModel) else ActionAdapter.validate_python(action)
        except ValidationError as exc:
            return ActionError(reason="malformed", message=f"malformed action: {exc.errors(include_url=False)[0]['msg']}"), None
        if parsed.type in REFUSED:
            return ActionError(reason="unsupported_action",
                               message=f"action {parsed.type!r}: the mobile sandbox takes touch input only "
                                       "(tap, double_tap, long_press, swipe, fling, pinch, open_app, nav, type, key)"), None
        if isinstance(parsed, Back):
            parsed = Nav(button="back")
        try:
            if isinstance(parsed, OpenApp):
                await self._shell(_OPEN_APP_JS, parsed.name, f"no app named {parsed.name!r} on this phone", "unknown_app")
            elif isinstance(parsed, Nav):
                await self._shell(_NAV_JS, parsed.button, f"no button {parsed.button!r}", "failed")
            elif isinstance(parsed, _TOUCH):
                scaled = scale_action(parsed, frame, self._screen)
                assert isinstance(scaled, _TOUCH)
                await self._touch(scaled)
            else:
                return await super().act(parsed, frame)
        except ActionFailed as exc:
            return ActionError(reason=exc.reason, message=exc.message), None
        return None, None

    async def _touch(self, action: TouchAction) -> None:
        cdp = self._pages.cdp
        assert cdp is not None
        seconds = action.duration_ms / 1000 if isinstance(action, (LongPress, Swipe, Pinch)) else 1.0
        await self._guard.call(gesture(cdp, action, self._screen), f"action {action.type}",
                               timeout=self._guard.call_timeout_s + seconds)

    async def _shell(self, script: str, arg: str, refusal: str, reason: str) -> None:
        done = await self._guard.call(self._pages.page.evaluate(script, arg), "phone shell")
        if done is None:
            raise ActionFailed("the phone shell is not on the screen", reason="failed")
        if done is not True:
            raise ActionFailed(refusal, reason=reason)

    async def move_pointer(self, x: float, y: float) -> None:
        """No pointer on a phone (see the module docstring)."""
