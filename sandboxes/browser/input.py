"""Unified actions -> Playwright mouse and keyboard (coordinates already in screen pixels)."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from cua.actions import (
    Action,
    Back,
    Click,
    Done,
    Drag,
    Forward,
    Goto,
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
from cua.sandboxes.browser.pwerrors import target_closed
from cua.sandboxes.browser.settle import navigation_race

__all__ = ["ALLOWED_SCHEMES", "Pointer", "perform"]

ALLOWED_SCHEMES = frozenset({"http", "https", "about", "data"})
#: Longer ASCII text is inserted in one go; real key events per character would take seconds.
_KEYSTROKE_LIMIT = 256
#: Pixels between synthetic mouse moves along a drag path, so pages see a real motion.
_DRAG_STEP_PX = 12


@dataclass
class Pointer:
    """Where the mouse is, so that restore can put it back (hover styles are screen state)."""

    x: float = 0.0
    y: float = 0.0


def check_url(url: str) -> None:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise ActionFailed(f"url scheme {scheme or '(none)'!r} is not allowed; use one of "
                           f"{', '.join(sorted(ALLOWED_SCHEMES))}", reason="bad_url", details={"url": url})


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
