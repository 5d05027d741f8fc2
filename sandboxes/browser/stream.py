"""Live frames for watching a browser sandbox (human demonstrations, dashboards):
CDP `Page.startScreencast`, rate limited, newest frame first."""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError

from cua.observation import ObserveOptions, Screenshot, Size
from cua.sandboxes.browser.cdp import Cdp
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.pages import Pages
from cua.sandboxes.browser.pwerrors import target_closed

__all__ = ["frames", "screencast"]

log = logging.getLogger(__name__)


async def frames(guard: Guard, pages: Pages, options: ObserveOptions, screen: Size, *,
                 max_fps: float) -> AsyncIterator[Screenshot]:
    """The screencast of the agent's page, on a CDP session of its own; it stops when the
    iterator is closed."""
    guard.check_alive()
    assert pages.context is not None
    cdp = Cdp(await guard.call(pages.context.new_cdp_session(pages.page), "screencast session"))
    pages.watchers += 1  # the page is not recycled under its screencast
    try:
        async for shot in screencast(cdp, options, screen, max_fps=max_fps, check_alive=guard.check_alive):
            yield shot
    finally:
        pages.watchers -= 1
        if guard.alive:
            try:
                await asyncio.wait_for(cdp.send("Page.stopScreencast"), 5)
                await asyncio.wait_for(cdp.detach(), 5)
            except (PlaywrightError, asyncio.TimeoutError) as exc:
                # a sandbox closing (its client gone) takes the screencast's page with it:
                # nothing is left to stop, and nothing went wrong
                gone = not guard.alive or target_closed(exc) or pages.current is None or pages.current.is_closed()
                (log.debug if gone else log.warning)("stopping the screencast of %s failed: %s", guard.sandbox_id, exc)


def _image_size(data: bytes, fallback: tuple[int, int]) -> tuple[int, int]:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            return img.size
    except OSError:
        return fallback


async def _ack(cdp: Cdp, session_id: int) -> None:
    try:
        await cdp.send("Page.screencastFrameAck", {"sessionId": session_id})
    except PlaywrightError:
        pass  # the screencast was stopped or the page closed meanwhile: there is nothing to acknowledge


async def screencast(cdp: Cdp, options: ObserveOptions, screen: Size, *, max_fps: float,
                     check_alive: Callable[[], None]) -> AsyncIterator[Screenshot]:
    """Frames as the screen changes, at most `max_fps` a second; when frames come faster, the
    newest is sent. The caller stops the screencast (`Page.stopScreencast`) and detaches.

    WebP is not a screencast format; such requests get JPEG frames (the format says so).
    """
    fmt: Literal["png", "jpeg"] = "png" if options.format == "png" else "jpeg"
    frame = options.frame or screen
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=4)

    def on_frame(params: dict[str, Any]) -> None:
        asyncio.ensure_future(_ack(cdp, params["sessionId"]))
        if queue.full():
            queue.get_nowait()  # drop the oldest: a live view wants the newest frame
        queue.put_nowait(params)

    cdp.on("Page.screencastFrame", on_frame)
    params: dict[str, Any] = {"format": fmt, "maxWidth": frame.width, "maxHeight": frame.height, "everyNthFrame": 1}
    if fmt == "jpeg":
        params["quality"] = options.quality
    await cdp.send("Page.startScreencast", params)
    interval = 1.0 / max_fps if max_fps > 0 else 0.0
    last = float("-inf")
    while True:
        check_alive()
        try:
            item = await asyncio.wait_for(queue.get(), 1.0)
        except asyncio.TimeoutError:
            continue  # no change on screen; check liveness and keep waiting
        early = last + interval - time.monotonic()
        if early > 0:
            await asyncio.sleep(early)  # the rate limit itself: at most max_fps frames a second
            while not queue.empty():
                item = queue.get_nowait()
        last = time.monotonic()
        data = base64.b64decode(item["data"])
        width, height = _image_size(data, (frame.width, frame.height))
        yield Screenshot(format=fmt, width=width, height=height, data=data)
