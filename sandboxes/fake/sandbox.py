"""`FakeSandbox`: a deterministic in-process sandbox, for tests that need no Chromium.

It is a real sandbox, not a mock: a small form (`FormScreen`) whose state actions change,
drawn as a real image in every format and frame, answering state queries (`app_state`,
`dom`, `title`, `a11y`), with snapshots, restore, forks and a frame stream. The server,
the client, the episode layer and eval run on it end to end in milliseconds, and it
passes `check_sandbox` like every other kind. `FakeConfig` can stage the faults those
layers must survive: slow actions (`act_delay_s`) and a sandbox that dies (`die_at_step`).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel

from cua.actions import BROWSER_ONLY, TOUCH_ONLY, Action
from cua.errors import ActionFailed, BadRequest, SandboxCrashed, UnknownSnapshot
from cua.observation import ActionError, Observation, ObserveOptions, Screenshot, SettleInfo, Size
from cua.sandbox import EventSink, Sandbox, SandboxEvent, SandboxInfo, SnapshotRef, capabilities_of, register_kind, scale_action
from cua.sandboxes.fake.config import FakeConfig
from cua.sandboxes.fake.screen import FormScreen, FormState, Widget
from cua.state import A11yQuery, AppStateQuery, DomQuery, StateQuery, StateResult, TitleQuery

__all__ = ["FAKE_QUERIES", "FakeSandbox"]

#: State query kinds the fake sandbox answers.
FAKE_QUERIES = ("app_state", "dom", "title", "a11y")

#: Snapshots of every fake sandbox of this process: a fork or another sandbox of the same
#: host restores them, as snapshots of the other kinds are restored host-wide.
_SNAPSHOTS: dict[str, tuple[FormState, int]] = {}

_SETTLED = SettleInfo(settled=True, waited_ms=0.0, reason="in-process screen: nothing pending")
_TYPE_ATTR = {"textbox": "text", "checkbox": "checkbox", "button": "button"}


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)


def _dom_value(widget: Widget, query: DomQuery) -> Any:
    prop = query.prop
    if prop in ("text", "inner_text"):
        return widget.label
    if prop == "value":
        return widget.value if widget.role == "textbox" else ("on" if widget.role == "checkbox" else None)
    if prop == "checked":
        return bool(widget.checked)
    if prop == "selected":
        return False
    if prop == "visible":
        return True
    if prop == "bbox":
        x, y, w, h = widget.box
        return {"x": x, "y": y, "width": w, "height": h}
    if prop == "html":
        return f'<{widget.role} id="{widget.id}">{widget.label}</{widget.role}>'
    # attr
    attrs = {"id": widget.id, "role": widget.role, "name": widget.id, "type": _TYPE_ATTR.get(widget.role)}
    return attrs.get(query.attr or "")


@register_kind
class FakeSandbox(Sandbox):
    kind: ClassVar[str] = "fake"
    config_model: ClassVar[type[BaseModel]] = FakeConfig

    def __init__(self, sandbox_id: str, config: FakeConfig, emit: EventSink | None) -> None:
        self.id = sandbox_id
        self.config = config
        self._emit = emit
        self._screen = FormScreen(config.screen, config.title)
        self._frame = config.screen
        self._step = 0
        self._status = "ready"
        self._dead: str | None = None
        self._created = time.time()
        self._last_active = self._created
        self._timings: dict[str, float] = {}
        self._changed = asyncio.Event()

    @classmethod
    async def create(cls, config: BaseModel, *, sandbox_id: str, emit: EventSink | None = None) -> FakeSandbox:
        started = time.perf_counter()
        if not isinstance(config, FakeConfig):
            config = FakeConfig.model_validate(config.model_dump())
        sandbox = cls(sandbox_id, config, emit)
        sandbox._screen.reset(config.seed)
        sandbox._timings["create"] = _ms(started)
        return sandbox

    # --- state of the sandbox itself ---

    @property
    def alive(self) -> bool:
        return self._status == "ready"

    def _check_alive(self) -> None:
        if self._status == "closed":
            raise SandboxCrashed(f"sandbox {self.id} is closed", details={"sandbox": self.id})
        if self._dead is not None:
            raise SandboxCrashed(f"sandbox {self.id} died: {self._dead}", details={"sandbox": self.id,
                                                                                  "reason": self._dead})

    def _die(self, reason: str) -> None:
        self._dead = reason
        self._status = "crashed"
        self._changed.set()
        if self._emit is not None:
            self._emit(SandboxEvent(sandbox_id=self.id, event="died", data={"reason": reason}))

    def _touched(self) -> None:
        self._last_active = time.time()
        self._changed.set()
        self._changed = asyncio.Event()

    def info(self) -> SandboxInfo:
        return SandboxInfo(id=self.id, kind=self.kind, status=self._status,  # type: ignore[arg-type]
                           screen=self.config.screen, capabilities=capabilities_of(self), queries=list(FAKE_QUERIES),
                           created_at=self._created, last_active=self._last_active, timings_ms=dict(self._timings),
                           details={"isolation": "process", "title": self.config.title, "crash_reason": self._dead})

    # --- the Sandbox interface ---

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation:
        self._check_alive()
        if options:
            raise BadRequest(f"fake sandboxes take no reset options (got {', '.join(sorted(options))})",
                             details={"field": "options"})
        self._screen.reset(self.config.seed if seed is None else seed)
        self._step = 0
        self._frame = self.config.screen
        self._touched()
        return await self.observe(observe)

    async def observe(self, options: ObserveOptions | None = None) -> Observation:
        self._check_alive()
        started = time.perf_counter()
        opts = options or ObserveOptions()
        frame = opts.frame or self.config.screen
        self._frame = frame
        screenshot = None
        if opts.screenshot:
            data = self._screen.encode(opts.format, opts.quality, frame)
            screenshot = Screenshot(format=opts.format, width=frame.width, height=frame.height, data=data)
        tree = self._screen.tree() if opts.axtree or opts.element_ids else None
        focused = self._screen.focused() if opts.focused else None
        return Observation(sandbox_id=self.id, frame=frame, screen=self.config.screen, screenshot=screenshot,
                           title=self._title(), axtree=tree, focused=focused, settle=_SETTLED,
                           timings_ms={"observe": _ms(started)}, step=self._step)

    def _title(self) -> str:
        return f"{self.config.title} - {len(self._screen.state.submissions)} submitted"

    async def act(self, action: Action, *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation:
        self._check_alive()
        started = time.perf_counter()
        self._step += 1
        if self.config.die_at_step is not None and self._step >= self.config.die_at_step:
            self._die(f"staged by die_at_step={self.config.die_at_step}")
            self._check_alive()
        error: ActionError | None = None
        try:
            scaled = scale_action(action, frame or self._frame, self.config.screen, foreign=BROWSER_ONLY | TOUCH_ONLY)
        except ActionFailed as exc:
            error = ActionError(reason=exc.reason, message=exc.message)
        else:
            if self.config.act_delay_s:
                # the configured time an action takes here (a stand-in for slow work), not a settle wait
                await asyncio.sleep(self.config.act_delay_s)
                self._check_alive()  # closed while the action took its time
            self._screen.apply(scaled)
            self._touched()
        act_ms = _ms(started)
        obs = await self.observe(observe)
        obs.error = error
        obs.timings_ms.update(act=act_ms, total=_ms(started))
        return obs

    async def close(self) -> None:
        if self._status == "closed":
            return
        self._status = "closed"
        self._changed.set()

    # --- capabilities ---

    async def query(self, queries: Sequence[StateQuery]) -> list[StateResult]:
        self._check_alive()
        return [self._answer(q) for q in queries]

    def _answer(self, query: StateQuery) -> StateResult:
        if isinstance(query, AppStateQuery):
            if query.service != "app":
                return StateResult.failure("not_found", f"the fake sandbox runs one service, 'app', not {query.service!r}")
            return StateResult(value=self._screen.state.app_state())
        if isinstance(query, TitleQuery):
            return StateResult(value=self._title())
        if isinstance(query, A11yQuery):
            return StateResult(value=self._screen.tree())
        if isinstance(query, DomQuery):
            if query.selector_type != "css" or query.frame is not None:
                return StateResult.failure("unsupported", "fake sandboxes read css-like selectors of their own screen")
            try:
                matches = self._screen.select(query.selector)
            except ValueError as exc:
                return StateResult.failure("failed", str(exc))
            if query.prop == "count":
                return StateResult(value=len(matches))
            if query.all:
                return StateResult(value=[_dom_value(w, query) for w in matches])
            return StateResult(value=_dom_value(matches[0], query) if matches else None)
        return StateResult.failure("unsupported", f"fake sandboxes do not answer {query.kind!r} queries")

    async def snapshot(self) -> SnapshotRef:
        self._check_alive()
        ref = SnapshotRef(id=f"fsnap-{uuid.uuid4().hex}", sandbox_id=self.id, kind=self.kind,
                          meta={"step": self._step})
        _SNAPSHOTS[ref.id] = (self._screen.save(), self._step)
        return ref

    def _saved(self, ref: SnapshotRef) -> tuple[FormState, int]:
        saved = _SNAPSHOTS.get(ref.id)
        if saved is None:
            raise UnknownSnapshot(f"no snapshot {ref.id}", details={"snapshot": ref.id})
        return saved

    async def restore(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> Observation:
        self._check_alive()
        state, step = self._saved(ref)
        self._screen.load(state)
        self._step = step
        self._touched()
        return await self.observe(observe)

    async def delete_snapshot(self, ref: SnapshotRef) -> None:
        self._saved(ref)
        del _SNAPSHOTS[ref.id]

    async def fork(self, ref: SnapshotRef, *, sandbox_id: str, emit: EventSink | None = None) -> FakeSandbox:
        self._check_alive()
        state, step = self._saved(ref)
        twin = await FakeSandbox.create(self.config, sandbox_id=sandbox_id, emit=emit)
        twin._screen.load(state)
        twin._step = step
        return twin

    async def frames(self, options: ObserveOptions, *, max_fps: float = 10.0) -> AsyncIterator[Screenshot]:
        """The screen now, then again after every change, at most `max_fps` a second."""
        interval = 1.0 / max_fps if max_fps > 0 else 0.0
        while self.alive:
            changed = self._changed
            shown = time.monotonic()
            obs = await self.observe(options.model_copy(update={"screenshot": True, "axtree": False, "focused": False}))
            assert obs.screenshot is not None
            yield obs.screenshot
            await changed.wait()
            rest = interval - (time.monotonic() - shown)
            if rest > 0:
                await asyncio.sleep(rest)  # the frame-rate cap, not a settle wait
