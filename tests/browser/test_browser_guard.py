"""The browser sandbox's guard (sandboxes/browser/guard.py): bounded calls, death, events.

No browser is needed: the guard's rules hold for any awaitable, and a death is what the
guard is told (by the browser's disconnect, a page crash, a service's exit).
"""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from playwright.async_api import Error as PlaywrightError

from cua.errors import SandboxCrashed, Timeout
from cua.info import SandboxEvent
from cua.sandboxes.browser.guard import Guard, process_alive
from cua.sandboxes.browser.runtime import find_browser_pid


def guard_with_events(timeout: float = 5.0) -> tuple[Guard, list[SandboxEvent]]:
    events: list[SandboxEvent] = []
    return Guard("g-1", timeout, events.append), events


async def test_a_call_returns_its_value_and_a_slow_one_is_a_typed_timeout() -> None:
    guard, _ = guard_with_events(timeout=0.05)
    assert await guard.call(asyncio.sleep(0, result=7), "quick") == 7
    with pytest.raises(Timeout) as caught:
        await guard.call(asyncio.sleep(5), "slow thing")
    err = caught.value
    assert err.details == {"sandbox": "g-1", "operation": "slow thing"}
    assert "slow thing" in err.message and "0.05" in err.message
    # a per-call limit overrides the guard's
    assert await guard.call(asyncio.sleep(0.1, result="ok"), "longer", timeout=5) == "ok"


async def test_a_page_error_of_a_live_browser_passes_through_untouched() -> None:
    """A page that refuses (a selector, a click) is not the sandbox dying: the guard
    re-raises Playwright's error for its caller to turn into the agent's error."""
    guard, events = guard_with_events()

    async def refuses() -> None:
        raise PlaywrightError("Element is not attached to the DOM")

    with pytest.raises(PlaywrightError):
        await guard.call(refuses(), "click")
    assert guard.dead is None and events == []


async def test_death_is_reported_once_and_refuses_every_later_call() -> None:
    guard, events = guard_with_events()
    guard.on_service_died("app", 9)
    guard.on_crash(None)  # type: ignore[arg-type]  # a second death keeps the first reason
    assert guard.dead == "service 'app' died (exit code 9)"
    assert [(e.event, e.data) for e in events] == [("died", {"reason": "service 'app' died (exit code 9)"})]
    assert events[0].sandbox_id == "g-1"
    with pytest.raises(SandboxCrashed) as caught:
        guard.check_alive()
    assert caught.value.details == {"sandbox": "g-1", "reason": guard.dead}
    pending = asyncio.sleep(0)
    with pytest.raises(SandboxCrashed):
        await guard.call(pending, "anything")
    # the refused call's coroutine is closed, not left for the collector to warn of
    assert pending.cr_frame is None  # type: ignore[attr-defined]
    assert not guard.alive


async def test_a_closed_sandbox_refuses_calls_without_a_death_event() -> None:
    guard, events = guard_with_events()
    guard.closed = True
    guard.die("browser process exited")  # what the disconnect of a closing browser says
    assert guard.dead is None and events == []
    with pytest.raises(SandboxCrashed, match="is closed"):
        guard.check_alive()


async def test_a_faulty_listener_does_not_break_the_sandbox(caplog: pytest.LogCaptureFixture) -> None:
    def broken(_event: SandboxEvent) -> None:
        raise RuntimeError("listener bug")

    guard = Guard("g-2", 5.0, broken)
    guard.emit("navigated", {"url": "about:blank"})  # logged, not raised
    assert "event sink failed for navigated event of sandbox g-2" in caplog.text
    guard.sink = None
    guard.emit("navigated", {"url": "about:blank"})  # no listener: nothing to do


async def test_events_carry_the_id_the_sandbox_has_now() -> None:
    """A spare taken by a create or a fork is renamed: its events name the new id."""
    guard, events = guard_with_events()
    guard.sandbox_id = "taken"
    guard.emit("dialog", {"type": "alert", "message": "hi"})
    assert events[0].sandbox_id == "taken"


def test_process_alive_tells_running_gone_and_zombie_processes() -> None:
    assert process_alive(os.getpid())
    assert process_alive(None)  # unknown pid: counted as alive, the connection decides
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    for _ in range(200):  # exited but not reaped: a zombie is not a running browser
        with open(f"/proc/{child.pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    assert not process_alive(child.pid)
    child.wait()
    assert not process_alive(child.pid)  # reaped: gone


def test_finding_the_browser_pid_closes_its_scan_of_proc() -> None:
    """`find_browser_pid` returns at its first match: the scan of /proc it stops is closed
    there and then, not left open for the collector to warn of (a ResourceWarning)."""
    marker = f"guard-test-{os.getpid()}"
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", f"--cua-sandbox={marker}"]) as proc:
        try:
            deadline = time.monotonic() + 30
            while f"--cua-sandbox={marker}".encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes():
                assert time.monotonic() < deadline, "the child never showed its argv"
                time.sleep(0.01)  # polling another process's /proc entry; nothing to wait on
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                found = find_browser_pid(marker)
                gc.collect()
        finally:
            proc.kill()
    assert found == proc.pid
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
