"""`GuestSandbox`: a screen, its input and its state behind the cua guest agent.

The desktop kind (an X desktop in a bubblewrap container) and the VM kind (the same
desktop in QEMU) drive one agent over one wire (`client.py`); everything that goes
through that agent lives here once: act (coordinates scaled and bounds-checked,
browser-only actions refused as agent faults), observe (screenshot, the focused window
and its title, the accessibility tree), settling, state queries, files, commands, live
frames and the step count. A kind keeps only its lifecycle (how the guest is started,
snapshotted and stopped) and tells this class through a few hooks:

- `_agent()`: the live agent connection, or SandboxCrashed;
- `_fault(exc)`: a kind's reading of an agent error (a VM's timeout is a crash once
  QEMU has died);
- `_status()` and `_details()`: what `info()` reports beyond the shared fields.

Step counting is the browser kind's: every `act` counts (an agent fault too), `reset`
starts at 0, a snapshot records the count and a restore or fork resumes from it.
"""

from __future__ import annotations

import abc
import asyncio
import base64
import binascii
import hashlib
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Any, ClassVar, Literal, TypeVar

from cua.actions import BROWSER_ONLY, TOUCH_ONLY, Action, Done, Wait
from cua.errors import ActionFailed, BadRequest, CuaError
from cua.info import CommandOutput
from cua.observation import ActionError, Observation, ObserveOptions, Screenshot, SettleInfo, Size
from cua.sandbox import EventSink, Sandbox, SandboxEvent, SandboxInfo, SnapshotRef, capabilities_of, scale_action
from cua.sandboxes.guest.client import FocusedPart, GuestClient, command_output, home_relative
from cua.state import StateQuery, StateResult

__all__ = ["A11Y_MAX_NODES", "GUEST_HOME", "GuestSandbox", "Settle", "decode_base64_file", "snapshot_step"]

#: The desktop user's home in every guest (the container's and the VM images').
GUEST_HOME = "/home/user"
#: Nodes of an observation's accessibility tree (the `a11y` query's bound).
A11Y_MAX_NODES = 5000
#: How the guest decides the screen settled after an action: {first_ms, quiet_ms, timeout_ms}.
Settle = dict[str, float]
Status = Literal["starting", "ready", "crashed", "closed"]

_RESULT_KEYS = frozenset(StateResult.model_fields)
_T = TypeVar("_T")


def decode_base64_file(path: str, text: str) -> bytes:
    """A config's `binary_files[path]` (base64) as bytes, or BadRequest naming the file."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadRequest(f"binary_files[{path!r}] is not valid base64: {exc}", details={"path": path}) from exc


def snapshot_step(ref: SnapshotRef) -> int:
    """The step count a snapshot was taken at (what a restore or fork resumes from)."""
    return int(ref.meta.get("step", 0))


class GuestSandbox(Sandbox):
    """The guest-agent half of a desktop-like sandbox; subclasses add the lifecycle."""

    #: Paths given to upload, run_command and state queries are read relative to this.
    home: ClassVar[str] = GUEST_HOME

    def __init__(self, sandbox_id: str, *, screen: Size, settle: Settle, agent_timeout: float,
                 a11y_time_limit: float = 20.0, emit: EventSink | None) -> None:
        self.id = sandbox_id
        self._emit = emit
        self._screen = screen
        #: The frame of the last observation: what an action's coordinates refer to by default.
        self._frame = screen
        self._settle_bounds = settle
        #: Upper bound of one agent request (an action also gets its own wait's length).
        self._agent_timeout = agent_timeout
        #: How long the guest may take to read the accessibility tree (within `agent_timeout`).
        self._a11y_time_limit = min(a11y_time_limit, agent_timeout * 0.9)
        self._step = 0
        self._queries: list[str] = []
        self._agent_info: dict[str, Any] = {}
        self._crash_reason: str | None = None
        self._closed = False
        self._created = time.time()
        self._last_active = time.time()
        self.timings_ms: dict[str, float] = {}

    # ------------------------------------------------------------------ hooks

    @abc.abstractmethod
    def _agent(self) -> GuestClient:
        """The connection to the running guest agent; SandboxCrashed when there is none."""

    def _fault(self, exc: CuaError) -> CuaError:
        """The error a failed agent call stands for (by default, itself)."""
        return exc

    @abc.abstractmethod
    def _status(self) -> Status: ...

    @abc.abstractmethod
    def _details(self) -> dict[str, Any]: ...

    # ------------------------------------------------------------------ shared lifecycle parts

    async def _read_agent_info(self) -> None:
        """Learn the guest's real screen size and the state queries it answers."""
        info = await self._guarded(self._agent().info())
        screen = info.get("screen") or {}
        self._screen = self._frame = Size(width=int(screen["width"]), height=int(screen["height"]))
        self._queries = sorted(info.get("queries") or [])
        self._agent_info = info

    def _report_death(self, reason: str, **data: Any) -> None:
        """The guest died on its own (not closed by us): later calls fail with this reason,
        and a `died` event says so once."""
        if self._closed or self._crash_reason is not None:
            return
        self._crash_reason = reason
        if self._emit is not None:
            self._emit(SandboxEvent(sandbox_id=self.id, event="died", data={"reason": reason, **data}))

    async def _guarded(self, call: Awaitable[_T]) -> _T:
        try:
            return await call
        except CuaError as exc:
            fault = self._fault(exc)
            if fault is exc:
                raise
            raise fault from exc

    async def _start_apps(self, apps: Sequence[dict[str, Any]], *, timeout_cap: float = float("inf"),
                          stall_s: float = 120.0) -> None:
        """Start apps (AppSpec dicts) and wait for each one's first window, in parallel (they
        start independently). Apps recorded by a snapshot carry their windows' geometry
        (`windows`): those windows get it back, and the one that had the focus gets it again."""
        agent = self._agent()

        async def one(app: dict[str, Any]) -> dict[str, Any] | None:
            try:
                pid = await agent.spawn(list(app["argv"]), env=dict(app.get("env") or {}), cwd=app.get("cwd"),
                                        name=app.get("name"))
                if not app.get("wait_window", True):
                    return None
                return await agent.wait_window(pid=pid, klass=app.get("window_class"), stall_s=stall_s,
                                               timeout=min(float(app.get("start_timeout", timeout_cap)), timeout_cap))
            except CuaError as exc:
                raise type(exc)(f"starting {app.get('name')!r} in {self.kind} {self.id}: {exc.message}",
                                details=exc.details) from exc

        windows = await self._guarded(asyncio.gather(*(one(a) for a in apps)))
        places, focus = [], None
        for app, window in zip(apps, windows, strict=True):
            recorded = (app.get("windows") or [None])[0]
            if window is None or recorded is None:
                continue
            places.append({"id": window["id"], **{k: recorded[k] for k in ("x", "y", "width", "height")}})
            if recorded.get("focused"):
                focus = window["id"]
        if places:
            await self._guarded(agent.place_windows(places, focus=focus))

    # ------------------------------------------------------------------ observing

    @staticmethod
    def _shot(options: ObserveOptions) -> dict[str, Any] | None:
        """The agent's screenshot arguments for `options` (None: no screenshot)."""
        if not options.screenshot:
            return None
        frame = options.frame
        return {"format": options.format, "quality": options.quality,
                "width": frame.width if frame else None, "height": frame.height if frame else None}

    async def observe(self, options: ObserveOptions | None = None) -> Observation:
        options = options or ObserveOptions()
        agent = self._agent()
        t0 = time.perf_counter()
        shot = self._shot(options)
        meta: dict[str, Any] | None = None
        data: bytes | None = None
        if shot is not None:
            shot_meta, data = await self._guarded(agent.screenshot(shot["format"], shot["quality"], shot["width"],
                                                                   shot["height"], focused=_focused_part(options),
                                                                   timeout=self._agent_timeout))
            meta, focused = shot_meta, shot_meta.get("focused")
        else:
            focused = await self._focused_window()
        obs = await self._observation(options, meta, data, focused)
        obs.timings_ms["observe"] = _ms(t0)
        return obs

    async def _settled_observe(self, options: ObserveOptions | None) -> Observation:
        """Observe once the screen is still (after apps were restarted: they draw late)."""
        options = options or ObserveOptions()
        result, data = await self._guarded(self._agent().act(
            {"type": "wait", "seconds": 0}, settle=self._settle_bounds, observe=self._shot(options),
            focused=_focused_part(options), timeout=self._agent_timeout))
        return await self._observation(options, result.get("screenshot"), data, result.get("focused"),
                                       settle=result.get("settle"))

    async def _focused_window(self) -> dict[str, Any] | None:
        [answer] = await self._guarded(self._agent().query([{"kind": "windows"}], timeout=self._agent_timeout))
        if not answer.get("ok"):
            return None
        listing = answer["value"]
        return next((w for w in listing["windows"] if w["id"] == listing["focused"]), None)

    async def _observation(self, options: ObserveOptions, meta: dict[str, Any] | None, data: bytes | None,
                           focused: dict[str, Any] | None, *, settle: dict[str, Any] | None = None) -> Observation:
        """The observation of what the agent returned; the accessibility tree is fetched here
        when asked for (a query of its own: AT-SPI is read outside the X thread).

        A guest without an accessibility bus (a desktop without `accessibility: true`, an
        image without AT-SPI) gives no tree: `axtree` stays None, and `info().queries`
        still lists `a11y`, whose query says why."""
        screenshot = None
        frame = options.frame or self._screen
        if meta is not None and data is not None:
            screenshot = Screenshot(format=meta["format"], width=int(meta["width"]), height=int(meta["height"]), data=data)
            frame = Size(width=screenshot.width, height=screenshot.height)
        self._frame = frame
        self._last_active = time.time()
        axtree = None
        if options.axtree:
            [tree] = await self._guarded(self._agent().query([self._wire_query({"kind": "a11y",
                                                                                "max_nodes": A11Y_MAX_NODES})],
                                                             timeout=self._agent_timeout))
            axtree = [tree["value"]] if tree.get("ok") else None
        return Observation(sandbox_id=self.id, frame=frame, screen=self._screen, screenshot=screenshot,
                           title=focused.get("title") if focused else None,
                           focused=focused if options.focused else None, axtree=axtree,
                           settle=SettleInfo(**settle) if settle else None, step=self._step)

    # ------------------------------------------------------------------ acting

    async def act(self, action: Action, *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation:
        options = observe or ObserveOptions()
        agent = self._agent()
        t0 = time.perf_counter()
        self._step += 1
        try:
            scaled = scale_action(action, frame or self._frame, self._screen, foreign=BROWSER_ONLY | TOUCH_ONLY)
            if isinstance(scaled, Done):
                return await self.observe(options)
            result, data = await self._guarded(agent.act(
                scaled.model_dump(mode="json"), settle=self._settle_bounds, observe=self._shot(options),
                focused=_focused_part(options),
                timeout=self._agent_timeout + (scaled.seconds if isinstance(scaled, Wait) else 0.0)))
        except ActionFailed as exc:  # an agent fault: reported in the observation, the episode goes on
            obs = await self.observe(options)
            return obs.model_copy(update={"error": ActionError(reason=exc.reason, message=exc.message)})
        obs = await self._observation(options, result.get("screenshot"), data, result.get("focused"),
                                      settle=result.get("settle"))
        obs.timings_ms.update({k: float(v) for k, v in (result.get("timings_ms") or {}).items()})
        obs.timings_ms["act"] = _ms(t0)
        return obs

    # ------------------------------------------------------------------ state, files, commands, frames

    async def query(self, queries: Sequence[StateQuery]) -> list[StateResult]:
        asked = [q for q in queries if q.kind in self._queries]
        answers: list[dict[str, Any]] = []
        if asked:
            answers = await self._guarded(self._agent().query([self._wire_query(q.model_dump(mode="json"))
                                                               for q in asked], timeout=self._agent_timeout))
        it = iter(answers)
        out: list[StateResult] = []
        for q in queries:
            if q.kind not in self._queries:
                out.append(StateResult.failure("unsupported", f"{self.kind} sandboxes do not answer {q.kind!r} queries"))
                continue
            item = next(it, None)
            out.append(StateResult.model_validate({k: v for k, v in item.items() if k in _RESULT_KEYS})
                       if item is not None else StateResult.failure("failed", "the guest agent gave no answer"))
        return out

    def _wire_query(self, query: dict[str, Any]) -> dict[str, Any]:
        """A query as the agent takes it: an `a11y` one with this guest's time limit."""
        return {**query, "time_limit": self._a11y_time_limit} if query.get("kind") == "a11y" else query

    async def upload(self, path: str, data: bytes, *, append: bool = False, mode: int | None = None) -> tuple[str, int]:
        result = await self._guarded(self._agent().write_file(home_relative(path, self.home), data, mode=mode,
                                                              append=append, timeout=self._agent_timeout))
        return str(result["path"]), int(result["size"])

    async def run_command(self, argv: Sequence[str], *, time_limit: float = 30.0, max_output_bytes: int = 100_000,
                          cwd: str | None = None, stdin: bytes | None = None) -> CommandOutput:
        result = await self._guarded(self._agent().run(
            argv, time_limit=time_limit, max_bytes=max_output_bytes,
            cwd=home_relative(cwd, self.home, folder=True) if cwd else None, stdin=stdin))
        return command_output(result)

    async def frames(self, options: ObserveOptions, *, max_fps: float = 10.0) -> AsyncIterator[Screenshot]:
        """Screenshots whenever the screen changed, at most `max_fps` per second."""
        interval = 1.0 / max(0.1, min(max_fps, 60.0))
        shot = self._shot(options.model_copy(update={"screenshot": True}))
        assert shot is not None
        last = b""
        while self.alive:
            t0 = time.monotonic()
            meta, data = await self._guarded(self._agent().screenshot(
                shot["format"], shot["quality"], shot["width"], shot["height"], timeout=self._agent_timeout))
            digest = hashlib.blake2b(data, digest_size=16).digest()
            if digest != last:
                last = digest
                yield Screenshot(format=meta["format"], width=meta["width"], height=meta["height"], data=data)
            # A frame rate cap: the next grab is due one interval after this one began.
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - t0)))

    # ------------------------------------------------------------------ info

    def info(self) -> SandboxInfo:
        agent = {k: self._agent_info.get(k) for k in ("input", "capture", "settle", "versions", "pid")}
        return SandboxInfo(id=self.id, kind=self.kind, status=self._status(), screen=self._screen,
                           capabilities=capabilities_of(self), queries=list(self._queries),
                           created_at=self._created, last_active=self._last_active, timings_ms=dict(self.timings_ms),
                           details={**self._details(), "agent": agent, "crash_reason": self._crash_reason})


def _focused_part(options: ObserveOptions) -> FocusedPart:
    """How much of the focused window an agent reply carries: the title always (every
    observation has one), the whole window when the observation shows it."""
    return "window" if options.focused else "title"


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
