"""An agent's input: unified actions -> Playwright mouse and keyboard.

`perform` does one action whose coordinates are already screen pixels. `Input` is the
sandbox's side of `act`: it parses the action, grounds element ids to points, maps the
agent's frame to the screen, bounds the action in time, and turns the agent's and the
page's refusals into an `ActionError` (only infrastructure faults raise).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from pydantic import BaseModel, ValidationError

from cua.actions import (
    TOUCH_ONLY,
    Action,
    ActionAdapter,
    Back,
    Click,
    ClickElement,
    Done,
    Drag,
    Forward,
    Goto,
    HoverElement,
    Key,
    KeyDown,
    KeyUp,
    MouseDown,
    MouseUp,
    Move,
    Scroll,
    Type,
    Wait,
)
from cua.errors import ActionFailed
from cua.observation import ActionError, Size
from cua.sandbox import scale_action
from cua.sandboxes.browser.elements import ElementIds, element_centre
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.origins import OwnOrigins, check_scheme
from cua.sandboxes.browser.pages import Pages
from cua.sandboxes.browser.pwerrors import target_closed
from cua.sandboxes.browser.settle import navigation_race

__all__ = ["Input", "Pointer", "check_url", "perform"]

#: Longer ASCII text is inserted in one go; real key events per character would take seconds.
_KEYSTROKE_LIMIT = 256
#: Pixels between synthetic mouse moves along a drag path, so pages see a real motion.
_DRAG_STEP_PX = 12


@dataclass
class Pointer:
    """Where the mouse is, so that restore can put it back (hover styles are screen state)."""

    x: float = 0.0
    y: float = 0.0


#: Refuses a URL of a scheme no sandbox page may be sent to (`bad_url`).
check_url = check_scheme


async def _move(page: Page, pointer: Pointer, x: float, y: float, *, steps: int = 1) -> None:
    await page.mouse.move(x, y, steps=steps)
    pointer.x, pointer.y = x, y


async def _type(page: Page, text: str) -> None:
    """Real key events for ordinary text, so pages see keydown/keypress/input/keyup;
    insert_text (one IME-style input event) for characters no US key produces, and for bulk."""
    if len(text) > _KEYSTROKE_LIMIT and "\n" not in text and "\t" not in text:
        await page.keyboard.insert_text(text)
        return
    run: list[str] = []
    for ch in text:
        if ch.isascii() and (ch.isprintable() or ch in "\n\t"):
            run.append(ch)
            continue
        if run:
            await page.keyboard.type("".join(run))
            run = []
        await page.keyboard.insert_text(ch)
    if run:
        await page.keyboard.type("".join(run))


async def _navigate(page: Page, action: Goto | Back | Forward, timeout_ms: int) -> None:
    try:
        if isinstance(action, Goto):
            check_url(action.url)
            await page.goto(action.url, wait_until="load", timeout=timeout_ms)
        elif isinstance(action, Back):
            await page.go_back(wait_until="load", timeout=timeout_ms)
        else:
            await page.go_forward(wait_until="load", timeout=timeout_ms)
    except PlaywrightError as exc:
        if page.is_closed():
            raise
        if target_closed(exc):
            raise
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ActionFailed(f"navigation failed: {first_line}", reason="navigation_failed") from exc


#: Keys whose default action scrolls the page.
_SCROLLING_KEYS = frozenset({"PageUp", "PageDown", "Home", "End", "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight",
                             "Space", " "})
#: Resolves after two animation frames (bounded: a hidden or frozen page never runs them).
_TWO_FRAMES = """() => new Promise((done) => {
  const t = setTimeout(done, 200);
  requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(t); done(); }));
})"""


async def _scrolled(page: Page) -> None:
    """Chromium applies wheel and keyboard scrolling asynchronously, on a later frame: a scroll
    action returns only once that frame ran, so settling and observing see the page scrolled
    (scroll events fired, offsets and boxes updated) even when no screenshot forces a frame."""
    try:
        await page.evaluate(_TWO_FRAMES)
    except PlaywrightError as exc:
        if not navigation_race(exc):
            raise
        # The key started a navigation (Space on a submit button): the settle that follows waits for it.


async def perform(page: Page, action: Action, pointer: Pointer, *, navigation_timeout_ms: int) -> None:
    """Do one action. Agent faults raise ActionFailed; browser failures raise PlaywrightError."""
    mouse, keyboard = page.mouse, page.keyboard
    if isinstance(action, Click):
        await mouse.click(action.x, action.y, button=action.button, click_count=action.count)  # moves there first
        pointer.x, pointer.y = action.x, action.y
    elif isinstance(action, Move):
        await _move(page, pointer, action.x, action.y)
    elif isinstance(action, Drag):
        first = action.path[0]
        await _move(page, pointer, first.x, first.y)
        await mouse.down(button=action.button)
        prev = first
        for point in action.path[1:]:
            steps = max(1, math.ceil(math.hypot(point.x - prev.x, point.y - prev.y) / _DRAG_STEP_PX))
            await _move(page, pointer, point.x, point.y, steps=steps)
            prev = point
        await mouse.up(button=action.button)
    elif isinstance(action, MouseDown):
        if action.x is not None and action.y is not None:
            await _move(page, pointer, action.x, action.y)
        await mouse.down(button=action.button)
    elif isinstance(action, MouseUp):
        if action.x is not None and action.y is not None:
            await _move(page, pointer, action.x, action.y)
        await mouse.up(button=action.button)
    elif isinstance(action, Scroll):
        await _move(page, pointer, action.x, action.y)
        await mouse.wheel(action.dx, action.dy)
        await _scrolled(page)
    elif isinstance(action, Type):
        await _type(page, action.text)
    elif isinstance(action, Key):
        try:
            for key in action.keys:
                await keyboard.down(key)
        finally:
            for key in reversed(action.keys):
                await keyboard.up(key)
        if _SCROLLING_KEYS.intersection(action.keys):
            await _scrolled(page)
    elif isinstance(action, KeyDown):
        await keyboard.down(action.key)
    elif isinstance(action, KeyUp):
        await keyboard.up(action.key)
    elif isinstance(action, Wait):
        await asyncio.sleep(action.seconds)  # the agent asked for time to pass: a sleep is the action
    elif isinstance(action, Done):
        return
    elif isinstance(action, (Goto, Back, Forward)):
        await _navigate(page, action, navigation_timeout_ms)
    else:
        raise ActionFailed(f"action {action.type!r} is not supported by browser sandboxes",
                           reason="unsupported_action")


class Input:
    """The agent's mouse and keyboard on the sandbox's page, and where its pointer is."""

    def __init__(self, guard: Guard, pages: Pages, elements: ElementIds, screen: Size, *,
                 navigation_timeout_ms: int, own: OwnOrigins | None = None,
                 foreign: frozenset[str] = TOUCH_ONLY) -> None:
        self._guard = guard
        #: Action types refused before anything reaches the page (a mouse page takes no touch).
        self._foreign = foreign
        #: Where the agent's `goto` may go (None: any allowed scheme).
        self._own = own
        self._pages = pages
        self._elements = elements
        self._screen = screen
        self.navigation_timeout_ms = navigation_timeout_ms
        self.pointer = Pointer()

    async def act(self, action: Action | dict[str, Any], frame: Size) -> tuple[ActionError | None, dict[str, Any] | None]:
        """Do `action`, given in `frame`'s pixels. Returns the agent's or the page's refusal
        (None when it was done) and, for an action on an element id that was found, the
        pointer action it became, in `frame`'s pixels."""
        resolved: dict[str, Any] | None = None
        try:
            parsed: Action = action if isinstance(action, BaseModel) else ActionAdapter.validate_python(action)
            scaled: Action
            if isinstance(parsed, (ClickElement, HoverElement)):
                scaled = await self._element_action(parsed)
                resolved = scale_action(scaled, self._screen, frame).model_dump(mode="json")
            else:
                scaled = scale_action(parsed, frame, self._screen, foreign=self._foreign)
            if isinstance(scaled, Goto) and self._own is not None:
                self._own.check_goto(scaled.url)
            budget = self._guard.call_timeout_s + (scaled.seconds if isinstance(scaled, Wait) else 0.0) + \
                (self.navigation_timeout_ms / 1000 if isinstance(scaled, (Goto, Back, Forward)) else 0.0)
            navigates = isinstance(scaled, (Goto, Back, Forward))
            if navigates:  # the commits it makes were the agent's `goto`/`back`/`forward` (history.py)
                self._pages.history.expect(scaled.type)
            try:
                await self._guard.call(perform(self._pages.page, scaled, self.pointer,
                                               navigation_timeout_ms=self.navigation_timeout_ms),
                                       f"action {scaled.type}", timeout=budget)
            finally:
                if navigates:
                    self._pages.history.expect(None)
        except ValidationError as exc:
            message = f"malformed action: {exc.errors(include_url=False)[0]['msg']}"
            return ActionError(reason="malformed", message=message), resolved
        except ActionFailed as exc:
            return ActionError(reason=exc.reason, message=exc.message), resolved
        except PlaywrightError as exc:
            # The browser is alive (else the guard raised SandboxCrashed): the page refused the input.
            return ActionError(reason="failed", message=str(exc).splitlines()[0]), resolved
        return None, resolved

    async def _element_action(self, action: ClickElement | HoverElement) -> Click | Move:
        """The pointer action at the element's centre, in screen pixels (`ElementIds`)."""
        assert self._pages.cdp is not None
        backend = self._elements.backend_of(action.element)
        x, y = await self._guard.call(element_centre(self._pages.cdp, backend, action.element), f"find {action.element}")
        if isinstance(action, HoverElement):
            return Move(x=x, y=y)
        return Click(x=x, y=y, button=action.button, count=action.count)

    async def move_pointer(self, x: float, y: float) -> None:
        """Put the pointer at (x, y) in screen pixels (home on reset, where it was on restore)."""
        await self._guard.call(_move(self._pages.page, self.pointer, x, y), "mouse move")
