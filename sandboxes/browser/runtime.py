"""Process-wide Playwright resources: one driver per event loop, one shared browser.

The Playwright driver (a Node process) is started once per event loop and shared by
every sandbox on it, reference counted. Shared-isolation sandboxes also share a browser
(one per scrollbar setting), launched lazily and closed when the last of them closes.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from dataclasses import dataclass, field

from playwright.async_api import Browser, Playwright, async_playwright

from cua.sandboxes.browser.launcher import Executable, find_executable, switches
from cua.sandboxes.browser.wire import install_fast_decoder

__all__ = ["Runtime", "SharedBrowser", "runtime", "find_browser_pid"]


@dataclass
class SharedBrowser:
    """One browser that shared-isolation sandboxes of the same browser-wide settings share."""

    browser: Browser
    executable: Executable
    marker: str
    users: int = 0


@dataclass
class Runtime:
    playwright: Playwright
    users: int = 0
    #: The shared browsers, by whether they draw scrollbars (`BrowserConfig.scrollbars`):
    #: the one browser-wide setting a shared sandbox may choose.
    shared: dict[bool, SharedBrowser] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def release(self) -> None:
        self.users -= 1
        if self.users <= 0:
            _runtimes.pop(asyncio.get_running_loop(), None)
            await self.playwright.stop()

    async def acquire_shared_browser(self, *, scrollbars: bool = False) -> tuple[Browser, Executable, str]:
        """The process's shared browser for this setting, launched on first use."""
        async with self.lock:
            shared = self.shared.get(scrollbars)
            if shared is None or not shared.browser.is_connected():
                exe = find_executable()
                marker = f"shared-{os.getpid()}-{id(self):x}-{'bars' if scrollbars else 'nobars'}"
                browser = await self.playwright.chromium.launch(
                    executable_path=exe.path, headless=True, **switches([], marker, scrollbars=scrollbars),
                    handle_sigint=False, handle_sigterm=False, handle_sighup=False)
                shared = self.shared[scrollbars] = SharedBrowser(browser, exe, marker, users=shared.users if shared else 0)
            shared.users += 1
            return shared.browser, shared.executable, shared.marker

    async def release_shared_browser(self, *, scrollbars: bool = False) -> None:
        async with self.lock:
            shared = self.shared.get(scrollbars)
            if shared is None:
                return
            shared.users -= 1
            if shared.users <= 0:
                del self.shared[scrollbars]
                if shared.browser.is_connected():
                    await shared.browser.close()


_runtimes: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Runtime]" = weakref.WeakKeyDictionary()
_start_lock: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]" = weakref.WeakKeyDictionary()


async def runtime() -> Runtime:
    """The running loop's Runtime, started on first use; the caller must `release()` it."""
    loop = asyncio.get_running_loop()
    lock = _start_lock.setdefault(loop, asyncio.Lock())
    async with lock:
        rt = _runtimes.get(loop)
        if rt is None:
            install_fast_decoder()
            rt = Runtime(await async_playwright().start())
            _runtimes[loop] = rt
        rt.users += 1
        return rt


def find_browser_pid(marker: str) -> int | None:
    """Host pid of the Chromium browser process started with `--cua-sandbox=<marker>`."""
    needle = f"--cua-sandbox={marker}".encode()
    with os.scandir("/proc") as entries:  # closed on the early return too (else a ResourceWarning)
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if needle in argv and not any(a.startswith(b"--type=") for a in argv):
                # The wrapper and bwrap carry the marker too ("$@"); the browser is the one
                # whose argv[0] is not the wrapper script or bwrap or the supervisor.
                head = argv[0].rsplit(b"/", 1)[-1]
                if head in (b"sh", b"bwrap", b"chromium-in-bwrap") or any(a.endswith(b"_supervisor.py") for a in argv):
                    continue
                return int(entry.name)
    return None
