"""Which Chromium to run, and with which switches."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from cua.errors import InfraError

__all__ = ["BASE_ARGS", "Executable", "Switches", "find_executable", "switches"]

#: Switches for a quiet, deterministic, container-friendly headless browser.
BASE_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--force-device-scale-factor=1",
    "--font-render-hinting=none",
    "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
    "--disable-breakpad",
    "--mute-audio",
    # Repaint whole tiles: partial raster can anti-alias an edge differently from a fresh
    # paint, and a restored page must look exactly like the page that was saved.
    "--disable-partial-raster",
    # Wheel scrolls land at once: a screenshot never catches a scroll animation half way.
    "--disable-smooth-scrolling",
)

_HEADLESS_SHELL = ("/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium-headless-shell")
_CHROMIUM_REAL = "/usr/lib/chromium/chromium"


@dataclass(frozen=True)
class Executable:
    path: str
    #: "env", "headless-shell", "chromium" or "playwright".
    source: str


def _real_binary(path: str) -> str:
    """Debian's /usr/bin/chromium* are shell wrappers; run the ELF binary they exec when we can
    find it, so that the process Playwright starts is the browser itself (its pid is the
    browser's pid) and no shell sits between."""
    resolved = os.path.realpath(path)
    if resolved == "/usr/bin/chromium" and os.access(_CHROMIUM_REAL, os.X_OK):
        return _CHROMIUM_REAL
    if resolved == "/usr/bin/chromium-headless-shell" and os.access(_HEADLESS_SHELL[0], os.X_OK):
        return _HEADLESS_SHELL[0]
    return resolved


def _playwright_bundled() -> str | None:
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache" / "ms-playwright"))
    patterns = ("chromium_headless_shell-*/chrome-*/chrome-headless-shell", "chromium_headless_shell-*/chrome-*/headless_shell",
                "chromium-*/chrome-linux*/chrome")
    for pattern in patterns:
        found = sorted(root.glob(pattern), reverse=True)
        if found:
            return str(found[0])
    return None


def find_executable() -> Executable:
    """`$CUA_CHROMIUM`, else chromium-headless-shell, else chromium on PATH, else Playwright's own."""
    env = os.environ.get("CUA_CHROMIUM")
    if env:
        path = shutil.which(env) or env
        if not os.access(path, os.X_OK):
            raise InfraError(f"CUA_CHROMIUM={env!r} is not an executable file", details={"path": env})
        return Executable(_real_binary(path), "env")
    for candidate in (*_HEADLESS_SHELL, shutil.which("chromium-headless-shell")):
        if candidate and os.access(candidate, os.X_OK):
            return Executable(_real_binary(candidate), "headless-shell")
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return Executable(_real_binary(found), "chromium")
    bundled = _playwright_bundled()
    if bundled:
        return Executable(bundled, "playwright")
    raise InfraError("no Chromium found: install chromium-headless-shell or chromium, or set CUA_CHROMIUM")


class Switches(TypedDict):
    """Playwright `launch` keywords for Chromium's switches: pass as `**switches(...)`."""

    args: list[str]
    ignore_default_args: list[str]


def switches(extra: list[str], marker: str, *, scrollbars: bool = False) -> Switches:
    """All switches; `marker` is a switch Chromium ignores, by which we find the browser's pid.

    Without `scrollbars` the browser draws none, so a page's width is the viewport's
    whether or not it scrolls (`BrowserConfig.scrollbars`). Playwright hides scrollbars
    in every headless browser, and its `ignore_default_args` filter also takes the same
    switch out of the caller's own, so its default is dropped only where they are wanted."""
    hide = ["--hide-scrollbars"]
    return Switches(args=[*BASE_ARGS, *([] if scrollbars else hide), *extra, f"--cua-sandbox={marker}"],
                    ignore_default_args=hide if scrollbars else [])
