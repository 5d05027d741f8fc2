"""A phone app (tasks/apps: dialer, messages, clock, gallery, phone_settings) in real Chromium
under Playwright's mobile emulation with touch (`has_touch`, `is_mobile`), for
tests/phone_apps: the app serves its pages on a loopback port from this process (as the
app host does), the test taps through them and reads the app's state as a judge does
(`WebApp.state()`).

The page checks every phone app is held to: no horizontal overflow, touch targets of at
least 44 CSS px, and a name in the accessibility tree (Chromium's own, over CDP) for every
control.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from _app_server import start_server, stop_server
from playwright.async_api import Browser, BrowserContext, Page

from cua.tasks.apps import load_app
from cua.tasks.apps.base import WebApp, build_asgi

__all__ = ["LANDSCAPE", "PHONE", "TABLET", "Phone", "control_names_missing", "horizontal_overflow", "open_phone", "small_targets"]

#: A small phone (360 CSS px wide, the narrowest the apps are designed for), it in landscape, and a tablet.
PHONE: dict[str, Any] = {
    "user_agent": "Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36",
    "viewport": {"width": 360, "height": 740}, "device_scale_factor": 3, "is_mobile": True, "has_touch": True}
#: The small phone turned sideways.
LANDSCAPE: dict[str, Any] = {**PHONE, "viewport": {"width": 740, "height": 360}}
TABLET: dict[str, Any] = {
    "user_agent": "Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
    "viewport": {"width": 800, "height": 1280}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


@dataclass
class Phone:
    app: WebApp
    page: Page
    context: BrowserContext
    base: str

    async def open(self, path: str) -> None:
        response = await self.page.goto(self.base + path, wait_until="load")
        assert response is not None and response.ok, (path, response and response.status)

    def path(self) -> str:
        return self.page.url.removeprefix(self.base)


@asynccontextmanager
async def open_phone(browser: Browser, app_name: str, device: dict[str, Any] = PHONE, seed: int = 0) -> AsyncIterator[Phone]:
    """App `app_name` at `seed`, served on a loopback port, and a page of a fresh mobile context."""
    app = load_app(app_name)
    app.reset(seed)
    server, task, port = await start_server(build_asgi(app))
    context = await browser.new_context(**device)
    try:
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        yield Phone(app, page, context, f"http://127.0.0.1:{port}")
        assert not errors, errors
    finally:
        await context.close()
        await stop_server(server, task)


async def horizontal_overflow(page: Page) -> int:
    """How many CSS px the page is wider than its viewport (0: no sideways scrolling). The
    layout viewport's width, not `innerWidth`: a mobile browser widens `innerWidth` to fit
    content that overflows (and zooms out), so only `clientWidth` keeps the device's width."""
    return int(await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))


#: Controls a finger must hit: visible ones smaller than 44 x 44 CSS px are reported.
_SMALL_TARGETS = """() => [...document.querySelectorAll('button, a[href], input:not([type=hidden]), select, textarea, [role=switch]')]
  .filter((el) => el.checkVisibility() && !el.closest('dialog:not([open])'))
  .map((el) => {
    const target = el.matches('input[type=checkbox], input[type=radio]') && el.closest('label') ? el.closest('label') : el;
    const r = target.getBoundingClientRect();
    return {what: el.outerHTML.slice(0, 90), w: Math.round(r.width), h: Math.round(r.height)};
  })
  .filter((t) => t.w < 44 || t.h < 44)"""


async def small_targets(page: Page) -> list[dict[str, Any]]:
    """The visible controls smaller than a fingertip's 44 x 44 CSS px (a checkbox counts its label)."""
    found: list[dict[str, Any]] = await page.evaluate(_SMALL_TARGETS)
    return found


#: Roles of what a person operates: each must have a name a screen reader (and an agent) reads.
CONTROL_ROLES = {"button", "link", "textbox", "searchbox", "checkbox", "switch", "radio", "combobox", "slider",
                 "spinbutton", "tab", "menuitem", "option", "listbox"}


async def control_names_missing(page: Page) -> list[str]:
    """Controls in Chromium's accessibility tree (CDP `Accessibility.getFullAXTree`) with no name."""
    cdp = await page.context.new_cdp_session(page)
    try:
        tree = await cdp.send("Accessibility.getFullAXTree")
    finally:
        await cdp.detach()
    missing = []
    for node in tree["nodes"]:
        role = node.get("role", {}).get("value", "")
        if node.get("ignored") or role not in CONTROL_ROLES:
            continue
        if not str(node.get("name", {}).get("value", "")).strip():
            missing.append(f"{role} (backend node {node.get('backendDOMNodeId')})")
    return missing
