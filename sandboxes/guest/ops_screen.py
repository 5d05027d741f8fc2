"""Operations on the screen: ping, info, act, screenshot, windows, query, place_windows."""

from __future__ import annotations

import asyncio
import os
import platform
import shutil
import time
from typing import Any

try:
    from . import queries, wire
    from .core import AGENT_VERSION, Agent, wait_until
    from .faults import BadRequestFault, GuestFault
    from .screen import Screen
except ImportError:  # run as a script from this folder (inside a VM image)
    import queries  # type: ignore[no-redef,import-not-found]
    import wire  # type: ignore[no-redef,import-not-found]
    from core import AGENT_VERSION, Agent, wait_until  # type: ignore[no-redef,import-not-found]
    from faults import BadRequestFault, GuestFault  # type: ignore[no-redef,import-not-found]
    from screen import Screen  # type: ignore[no-redef,import-not-found]

__all__ = ["op_act", "op_info", "op_ping", "op_place_windows", "op_query", "op_screenshot", "op_windows"]

#: Default settle bounds (ms): how long to wait for the first screen update after an
#: action, how long the screen must then stay still, and the overall cap.
DEFAULT_SETTLE = {"first_ms": 15.0, "quiet_ms": 25.0, "timeout_ms": 2000.0}
#: A file written and still open counts as saved once its writes have paused this long.
WRITE_QUIET_S = 0.5
#: How long a state read waits for files being written before it reads them as they are.
WRITE_WAIT_LIMIT_S = 10.0
#: Reads of the user's files a save keeps overlapping, before the last one is the answer.
READS_WHILE_WRITTEN = 3


def _settle_opts(req: dict[str, Any]) -> dict[str, float]:
    opts = dict(DEFAULT_SETTLE)
    given = req.get("settle") or {}
    if not isinstance(given, dict):
        raise BadRequestFault("settle must be an object")
    for key in opts:
        if key in given:
            value = float(given[key])
            if not 0 <= value <= 60_000:
                raise BadRequestFault(f"settle.{key} must be within 0..60000 ms")
            opts[key] = value
    return opts


def _shot_opts(obs: dict[str, Any]) -> tuple[str, int, tuple[int, int] | None]:
    size = None
    if obs.get("width") is not None or obs.get("height") is not None:
        w, h = int(obs.get("width") or 0), int(obs.get("height") or 0)
        if not (0 < w <= 16384 and 0 < h <= 16384):
            raise BadRequestFault("screenshot width and height must both be within 1..16384")
        size = (w, h)
    return str(obs.get("format", "jpeg")), int(obs.get("quality", 80)), size


async def op_ping(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    return {"pong": True, "time": time.time()}, []


async def op_info(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    s = agent.screen

    def versions() -> dict[str, Any]:
        out: dict[str, Any] = {"agent": AGENT_VERSION, "wire": wire.WIRE_VERSION, "python": platform.python_version()}
        for mod in ("Xlib", "PIL", "mss", "pyatspi"):
            try:
                m = __import__(mod)
                out[mod] = str(getattr(m, "__version__", getattr(m, "VERSION", "present")))
            except Exception:  # absent or broken: reported as None
                out[mod] = None
        for tool in ("xdotool", "xclip", "wmctrl"):
            out[tool] = shutil.which(tool) is not None
        return out

    return {"screen": {"width": s.width, "height": s.height}, "display": agent.display, "home": agent.home,
            "input": s.input_method, "capture": s.capture_method, "settle": s.settle_method,
            "queries": queries.KINDS, "versions": versions(), "pid": os.getpid(),
            "uptime_s": round(time.time() - agent.started, 3)}, []


async def op_act(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Perform one action (screen pixels), wait for the screen to settle, optionally grab it."""
    action = req.get("action")
    if not isinstance(action, dict):
        raise BadRequestFault("act needs an action object")
    settle = _settle_opts(req)
    observe = req.get("observe")
    shot = _shot_opts(observe) if isinstance(observe, dict) else None
    s = agent.screen

    def run() -> tuple[dict[str, Any], list[bytes]]:
        result, data = s.act(action, settle, shot)
        if req.get("focused"):
            result["focused"] = _focused(s, req["focused"])
        return result, ([data] if data is not None else [])

    result: tuple[dict[str, Any], list[bytes]] = await agent.on_x(run)
    return result


def _focused(screen: Screen, what: Any) -> dict[str, Any] | None:
    """The focused window for a reply's `focused` field: `"title"` asks only {id, title}
    (cheap enough for every step), anything else true the whole description."""
    return screen.focused_title() if what == "title" else screen.focused_window()


async def op_screenshot(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """The screen as an image; with `focused`, the focused window too (what an observation's
    title comes from), read on the same X turn."""
    fmt, quality, size = _shot_opts(req)
    s = agent.screen

    def run() -> tuple[bytes, dict[str, Any]]:
        data, meta = s.screenshot(fmt, quality, size)
        if req.get("focused"):
            meta["focused"] = _focused(s, req["focused"])
        return data, meta

    data, meta = await agent.on_x(run)
    return meta, [data]


async def op_windows(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    return await agent.on_x(agent.screen.windows), []


async def op_query(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Answer a list of state queries; the X-bound ones on the X thread, others in parallel."""
    items = req.get("queries")
    if not isinstance(items, list):
        raise BadRequestFault("query needs a list of queries")
    loop = asyncio.get_running_loop()
    reads_files = any(isinstance(q, dict) and q.get("kind") in queries.FILE_KINDS for q in items)
    events = agent.file_events

    async def one(q: Any, ctx: queries.QueryContext) -> dict[str, Any]:
        if isinstance(q, dict) and q.get("kind") == "windows":
            answer: dict[str, Any] = await agent.on_x(lambda: queries.answer(q, ctx))
            return answer
        return await loop.run_in_executor(None, queries.answer, q, ctx)

    for _ in range(READS_WHILE_WRITTEN):
        if reads_files:
            # a document its application is still saving would be read half-written
            await asyncio.to_thread(events.wait_quiet, WRITE_QUIET_S, WRITE_WAIT_LIMIT_S)
        before = await asyncio.to_thread(events.sequence) if reads_files else 0
        contexts = [queries.QueryContext(agent.home, agent.env, agent.screen.windows, run_as=agent.as_user(),
                                         events=events) for _ in items]
        results = await asyncio.gather(*(one(q, c) for q, c in zip(items, contexts)))
        # a save that began while the files were read: what was read may be half of it
        if not reads_files or await asyncio.to_thread(events.sequence) == before:
            break
    out: list[bytes] = []
    for result, ctx in zip(results, contexts):
        if "blob" in result:
            out.append(ctx.blobs[result["blob"]])
            result["blob"] = len(out) - 1
    return {"results": list(results)}, out



async def op_place_windows(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Move/resize windows (`places`: [{id, x, y, width, height}]) and focus `focus` (an id),
    through the window manager; waits (bounded) until the window list shows it done."""
    places = req.get("places")
    if not isinstance(places, list):
        raise BadRequestFault("place_windows needs a list of places")
    focus = req.get("focus")
    wanted = {int(p["id"]): (int(p["x"]), int(p["y"]), int(p["width"]), int(p["height"])) for p in places}
    # Windows already in place get no request: a request the window manager answers late
    # could move them after we found them in place.
    current = await agent.on_x(agent.screen.windows)
    now = {w["id"]: (w["x"], w["y"], w["width"], w["height"]) for w in current["windows"]}
    wanted = {wid: g for wid, g in wanted.items() if now.get(wid) != g}
    if focus is not None and current["focused"] == int(focus):
        focus = None
    if not wanted and focus is None:
        return {"placed": True, "windows": current["windows"]}, []

    def send() -> None:
        ox, oy = agent.place_offset
        for wid, (x, y, w, h) in wanted.items():
            agent.screen.place_window(wid, x - ox, y - oy, w, h)
        if focus is not None:
            agent.screen.activate_window(int(focus))

    def placed(listing: dict[str, Any]) -> bool:
        geometry = {w["id"]: (w["x"], w["y"], w["width"], w["height"]) for w in listing["windows"]}
        return all(geometry.get(wid) == g for wid, g in wanted.items()) and \
            (focus is None or listing["focused"] == int(focus))

    def correct(listing: dict[str, Any]) -> None:
        # Window managers differ by a border width in how they read the requested
        # position: learn what the request missed by (kept for later requests), ask again.
        geometry = {w["id"]: (w["x"], w["y"]) for w in listing["windows"]}
        missed = [(geometry[wid][0] - x, geometry[wid][1] - y) for wid, (x, y, _, _) in wanted.items()
                  if wid in geometry]
        if missed:
            ox, oy = agent.place_offset
            agent.place_offset = (ox + missed[0][0], oy + missed[0][1])
        ox, oy = agent.place_offset
        for wid, (x, y, w, h) in wanted.items():
            agent.screen.place_window(wid, x - ox, y - oy, w, h)

    wait_s = float(req.get("wait_s", 3.0))
    await agent.on_x(send)
    for attempt in range(2):
        try:
            # the window manager acts within milliseconds; a first miss is a position offset
            listing = await wait_until(agent, placed, min(0.3, wait_s) if attempt == 0 else wait_s)
            return {"placed": True, "windows": listing["windows"]}, []
        except GuestFault:
            if attempt == 0:
                listing = await agent.on_x(agent.screen.windows)
                await agent.on_x(lambda: correct(listing))
    # The window manager may refuse (a size below a window's minimum): report, not fail.
    return {"placed": False, "windows": (await agent.on_x(agent.screen.windows))["windows"]}, []
