"""`Guard`: one browser sandbox's liveness, and the events it raises on its own.

Every browser call of the sandbox goes through `Guard.call`: bounded in time (raising
`cua.errors.Timeout`), and refused with `cua.errors.SandboxCrashed` once the browser, its
page's renderer or a service has died. The guard keeps the death's reason (with the
cgroup's verdict when a container limit killed it) and tells listeners once.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable
from typing import Any, TypeVar

from playwright.async_api import Browser, Page
from playwright.async_api import Error as PlaywrightError

from cua.errors import SandboxCrashed, Timeout
from cua.info import SandboxEvent, SandboxEventName
from cua.sandbox import EventSink
from cua.sandboxes.browser.container import Container
from cua.sandboxes.browser.pwerrors import target_closed

__all__ = ["Guard", "process_alive"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class Guard:
    """Liveness and events of the sandbox `sandbox_id`."""

    def __init__(self, sandbox_id: str, call_timeout_s: float, sink: EventSink | None) -> None:
        self.sandbox_id = sandbox_id
        self.call_timeout_s = call_timeout_s
        #: Where events go; a spare taken by a create or fork gets its new owner's sink.
        self.sink = sink
        self.browser: Browser | None = None
        #: The browser's host pid (None: unknown), read when a call fails as if it had closed.
        self.browser_pid: int | None = None
        #: The sandbox's container, whose status and cgroup say why the browser went away.
        self.container: Container | None = None
        self.dead: str | None = None
        self.closed = False

    @property
    def alive(self) -> bool:
        return not self.closed and self.dead is None and self.browser is not None and self.browser.is_connected()

    def emit(self, event: SandboxEventName, data: dict[str, Any]) -> None:
        if self.sink is None:
            return
        try:
            self.sink(SandboxEvent(sandbox_id=self.sandbox_id, event=event, data=data))
        except Exception:  # a faulty listener must not break the sandbox; it is logged, not hidden
            log.exception("event sink failed for %s event of sandbox %s", event, self.sandbox_id)

    def die(self, reason: str) -> None:
        if self.dead is not None or self.closed:
            return
        verdict = self.container.cgroup.verdict() if self.container is not None else None
        self.dead = f"{reason} ({verdict})" if verdict else reason
        self.emit("died", {"reason": self.dead})

    def on_disconnected(self, _browser: Browser) -> None:
        status = self.container.status() if self.container is not None else {}
        if status.get("state") == "service_died":
            self.die(f"service {status.get('service')!r} died (exit code {status.get('returncode')})")
        else:
            self.die("browser process exited")

    def on_service_died(self, name: str, code: int | None) -> None:
        self.die(f"service {name!r} died (exit code {code})")

    def on_crash(self, _page: Page) -> None:
        self.die("page renderer crashed")

    def check_alive(self) -> None:
        if self.closed:
            raise SandboxCrashed(f"sandbox {self.sandbox_id} is closed", details={"sandbox": self.sandbox_id})
        if self.browser is not None and not self.browser.is_connected():
            self.on_disconnected(self.browser)
        if self.dead is not None:
            raise SandboxCrashed(f"sandbox {self.sandbox_id} died: {self.dead}",
                                 details={"sandbox": self.sandbox_id, "reason": self.dead})

    async def call(self, aw: Awaitable[T], what: str, timeout: float | None = None) -> T:
        """Run one browser call: bounded in time, with browser death turned into SandboxCrashed."""
        try:
            self.check_alive()
        except BaseException:
            if inspect.iscoroutine(aw):
                aw.close()  # never to be awaited: close it rather than leave it for the collector to warn of
            raise
        limit = timeout if timeout is not None else self.call_timeout_s
        try:
            return await asyncio.wait_for(aw, limit)
        except asyncio.TimeoutError as exc:
            self.check_alive()
            raise Timeout(f"browser sandbox {self.sandbox_id}: {what} took longer than {limit:g} s",
                          details={"sandbox": self.sandbox_id, "operation": what}) from exc
        except PlaywrightError as exc:
            # "closed" errors also come from a page the page itself closed: the sandbox is dead
            # only when the browser is (its process gone, or its connection).
            if (self.browser is not None and not self.browser.is_connected()) or \
                    (target_closed(exc) and not process_alive(self.browser_pid)):
                self.check_alive()
                self.die(f"browser connection lost: {str(exc).splitlines()[0]}")
                self.check_alive()
            raise


def process_alive(pid: int | None) -> bool:
    """Whether `pid` runs (not gone, not a zombie). Unknown pids count as alive."""
    if pid is None:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
