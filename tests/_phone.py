"""A mobile sandbox for tests (tests/mobile/): the probe app (tests/mobile/probe_app.py,
which logs the events its pad receives) and the bundled todo app, in shared isolation,
and small reads of the probe's page and the shell's state."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from playwright.async_api import Frame

from cua.sandboxes.mobile import MobileSandbox
from cua.tasks.apps import service

__all__ = ["PROBE", "frame_of", "phone", "probe_log", "probe_service"]

PROBE = Path(__file__).parent / "mobile" / "probe_app.py"


def probe_service() -> dict[str, Any]:
    return {"name": "probe", "argv": [sys.executable, str(PROBE)]}


@asynccontextmanager
async def phone(**config: Any) -> AsyncIterator[MobileSandbox]:
    """A mobile sandbox with the probe and todo apps (config's keys override)."""
    full: dict[str, Any] = {"isolation": "shared", "services": [probe_service(), service("todo", "todo")], **config}
    sb = await MobileSandbox.create(full, sandbox_id="phone-test")
    try:
        yield sb
    finally:
        await sb.close()


def frame_of(sb: MobileSandbox, app: str) -> Frame:
    """The app's frame in the shell page."""
    for frame in sb.page.main_frame.child_frames:
        if frame.name == app:
            return frame
    raise AssertionError(f"no frame of {app!r}: {[f.name for f in sb.page.main_frame.child_frames]}")


async def probe_log(sb: MobileSandbox) -> list[dict[str, Any]]:
    log: list[dict[str, Any]] = await frame_of(sb, "probe").evaluate("window.log.splice(0)")
    return log
