"""Process-wide Playwright resources: one driver per event loop, one shared browser.

The Playwright driver (a Node process) is started once per event loop and shared by
every sandbox on it, reference counted. Shared-isolation sandboxes also share one
browser, launched lazily and closed when the last of them closes.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from dataclasses import dataclass, field

from playwright.async_api import Browser, Playwright, async_playwright

from cua.sandboxes.browser.launcher import Executable, chromium_args, find_executable

__all__ = ["Runtime", "runtime", "find_browser_pid"]


@dataclass
class Runtime:
    playwright: Playwright
    users: int = 0
    shared_browser: Browser | None = None
    shared_executable: Executable | None = None
    shared_marker: str = ""
    shared_users: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def release(self) -> None:
        self.users -= 1
        if self.users <= 0:
            _runtimes.pop(asyncio.get_running_loop(), None)
            await self.playwright.stop()

    async def acquire_shared_browser(self, extra_args: list[str]) -> tuple[Browser, Executable, str]:
        """The process's shared browser (launched on first use). The first caller's extra args win."""
        async with self.lock:
            if self.shared_browser is None or not self.shared_browser.is_connected():
                exe = find_executable()
                marker = f"shared-{os.getpid()}-{id(self):x}"
                self.shared_browser = await self.playwright.chromium.launch(
                    executable_path=exe.path, headless=True, args=chromium_args(extra_args, marker),
                    handle_sigint=False, handle_sigterm=False, handle_sighup=False)
                self.shared_executable, self.shared_marker = exe, marker
            self.shared_users += 1
            assert self.shared_executable is not None
            return self.shared_browser, self.shared_executable, self.shared_marker

    async def release_shared_browser(self) -> None:
        async with self.lock:
            self.shared_users -= 1
            if self.shared_users <= 0 and self.shared_browser is not None:
                browser, self.shared_browser = self.shared_browser, None
                if browser.is_connected():
                    await browser.close()


_runtimes: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Runtime]" = weakref.WeakKeyDictionary()
_start_lock: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]" = weakref.WeakKeyDictionary()


async def runtime() -> Runtime:
    """The running loop's Runtime, started on first use; the caller must `release()` it."""
    loop = asyncio.get_running_loop()
    lock = _start_lock.setdefault(loop, asyncio.Lock())
    async with lock:
        rt = _runtimes.get(loop)
        if rt is None:
            rt = Runtime(await async_playwright().start())
            _runtimes[loop] = rt
        rt.users += 1
        return rt


def find_browser_pid(marker: str) -> int | None:
    """Host pid of the Chromium browser process started with `--cua-sandbox=<marker>`."""
    needle = f"--cua-sandbox={marker}".encode()
    for entry in os.scandir("/proc"):
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
