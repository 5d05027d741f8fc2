"""`BrowserSandbox`: Chromium driven by Playwright, with its services, in one of two isolations.

- `container` (default): its own Chromium and services inside a bubblewrap namespace
  (own network with only loopback, own pids, own /tmp).
- `shared`: a new browser context in one browser shared by the process, services on
  host loopback ports. Cheaper and faster to create, but WEAKER: pages can reach any
  host port, and the sandboxes share one browser process (a crash kills them all).

Every browser call is bounded by `call_timeout_s` (raising `cua.errors.Timeout`);
after the browser or a service dies, every call raises `cua.errors.SandboxCrashed`.

This module is the sandbox's lifecycle (create, spares, reset, fork, close) and the
composition of its parts, each a module of one concern: where the browser and services
run (processes.py), liveness and events (guard.py), the agent's page and settling
(pages.py, settle.py), loads with prepared web state (navigation.py), input (input.py),
observation (observe.py), element ids (elements.py), snapshots (snapshot.py), state
queries (queries.py) and live frames (stream.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Any, Literal

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, ValidationError

from cua.actions import Action
from cua.errors import BadRequest
from cua.observation import ActionError, Observation, ObserveOptions, Screenshot, Size
from cua.sandbox import EventSink, Sandbox, SandboxInfo, SnapshotRef, capabilities_of
from cua.sandboxes.browser import stream
from cua.sandboxes.browser.config import BrowserConfig, plant_option, reset_options, variant_option
from cua.sandboxes.browser.elements import ElementIds
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.input import Input
from cua.sandboxes.browser.navigation import Navigator
from cua.sandboxes.browser.observe import Observer, ms_since
from cua.sandboxes.browser.origins import OwnOrigins
from cua.sandboxes.browser.pages import Pages
from cua.sandboxes.browser.processes import Processes
from cua.sandboxes.browser.queries import QUERY_KINDS, Queries
from cua.sandboxes.browser.services import ServiceControl
from cua.sandboxes.browser.settle import INIT_SCRIPT
from cua.sandboxes.browser.snapshot import STORE, Snapshots
from cua.sandboxes.browser.spares import ForkSpares, pool_size
from cua.state import StateQuery, StateResult

__all__ = ["BrowserSandbox", "QUERY_KINDS"]

log = logging.getLogger(__name__)


class BrowserSandbox(Sandbox):
    """A browser an agent sees and acts in. See the module docstring for the isolations."""

    kind = "browser"
    config_model = BrowserConfig

    def __init__(self, config: BrowserConfig, sandbox_id: str, emit: EventSink | None) -> None:
        self.id = sandbox_id
        self.config = config
        self._screen = config.screen
        self._guard = Guard(sandbox_id, config.call_timeout_s, emit)
        self._pages = Pages(self._guard, settle_timeout_ms=config.settle_timeout_ms,
                            settle_quiet_ms=config.settle_quiet_ms)
        #: The services' control sockets and the ports their pages are served on, filled in
        #: by the start; the parts below share these two maps.
        self._controls: dict[str, ServiceControl] = {}
        self._ports: dict[str, int] = {}
        self._elements = ElementIds()
        #: The task's own origins: where the agent may go, and which pages the reads trust.
        self._own = OwnOrigins(self._ports, enforced=config.navigation == "own_origins")
        self._navigator = Navigator(self._guard, self._pages, self._ports,
                                    navigation_timeout_ms=config.navigation_timeout_ms)
        self._input = Input(self._guard, self._pages, self._elements, self._screen,
                            navigation_timeout_ms=config.navigation_timeout_ms, own=self._own)
        self._observer = Observer(self._guard, self._pages, self._elements, self._screen,
                                  reuse_unchanged=not config.scrollbars)
        self._snapshots = Snapshots(self._guard, self._pages, self._navigator, self._input, self._elements,
                                    self._controls, self._ports, kind=self.kind)
        self._queries = Queries(self._guard, self._pages, self._controls, self._own)
        self._processes = Processes(config, self._guard, self._ports, self._controls)
        #: The episode's step count: actions since the last reset (a restore takes the snapshot's).
        self._step = 0
        self._timings: dict[str, float] = {}
        self._created_at = time.time()
        #: Counted among the sandboxes the loop's fork spares serve (a spare is not, until taken).
        self._counted = False

    # --- lifecycle ---

    @classmethod
    async def create(cls, config: BaseModel | dict[str, Any], *, sandbox_id: str,
                     emit: EventSink | None = None) -> "BrowserSandbox":
        if not isinstance(config, BrowserConfig):
            try:
                config = BrowserConfig.model_validate(config if isinstance(config, dict) else config.model_dump())
            except ValidationError as exc:
                raise BadRequest(f"invalid browser config: {exc.error_count()} error(s)",
                                 details={"errors": exc.errors(include_url=False, include_context=False)}) from exc
        started = time.perf_counter()
        keep = pool_size()
        self = await _fork_spares().take_warm(config, keep) if keep else None
        if self is not None:  # a warm spare (spares.py): started and loaded in the background
            self._taken(sandbox_id, emit)
            self._timings["create"] = ms_since(started)
        else:
            self = await cls._create_loaded(config, sandbox_id=sandbox_id, emit=emit)
        self._count_live()
        return self

    @classmethod
    async def _create_loaded(cls, config: BrowserConfig, *, sandbox_id: str,
                             emit: EventSink | None) -> "BrowserSandbox":
        """A started sandbox with its start page loaded and settled (not yet counted live)."""
        self = cls(config, sandbox_id, emit)
        started = time.perf_counter()
        try:
            await self._start()
            await self._navigator.goto(self._start_url(), chosen_by_client=True)
            await self._pages.settle()
        except BaseException:
            await self.close()
            raise
        self._timings["create"] = ms_since(started)
        return self

    @classmethod
    async def _spawn(cls, config: BrowserConfig, *, sandbox_id: str, emit: EventSink | None) -> "BrowserSandbox":
        """A started sandbox whose page has loaded nothing yet: for a fork that found no
        spare, whose first load is the snapshot's page (loading the start URL first was a
        third of its cost; a spare loads it beforehand, see `_spawn_spare`)."""
        self = cls(config, sandbox_id, emit)
        started = time.perf_counter()
        try:
            await self._start()
        except BaseException:
            await self.close()
            raise
        self._timings["create"] = ms_since(started)
        return self

    def _taken(self, sandbox_id: str, emit: EventSink | None) -> None:
        """A spare becomes the sandbox `sandbox_id`, whose events go to `emit`."""
        self.id = self._guard.sandbox_id = sandbox_id
        self._guard.sink = emit
        self._created_at = time.time()
        self._observer.renamed(sandbox_id)

    def _count_live(self) -> None:
        self._counted = True
        loop = asyncio.get_running_loop()
        _live[loop] = _live.get(loop, 0) + 1

    async def _start(self) -> None:
        await self._processes.start(self.id)
        self._own.started_at(self._start_url())
        self._pages.context = await self._new_context()
        await self._pages.open()

    async def _new_context(self) -> BrowserContext:
        """A browser context of the sandbox's browser, as the config asks for (the first one,
        or a fresh one when the pages recycle theirs: pages.py)."""
        cfg, browser = self.config, self._guard.browser
        assert browser is not None
        context = await self._guard.call(browser.new_context(
            viewport={"width": self._screen.width, "height": self._screen.height}, device_scale_factor=1,
            locale=cfg.locale, timezone_id=cfg.timezone, service_workers="block"), "new_context")
        try:
            await self._guard.call(context.add_init_script(INIT_SCRIPT), "init script")
        except BaseException:
            with contextlib.suppress(PlaywrightError):
                await context.close()
            raise
        return context

    async def close(self) -> None:
        if self._guard.closed:
            return
        self._guard.closed = True
        problems = await self._processes.stop(self._pages.context)
        if problems:
            log.warning("browser sandbox %s closed with problems: %s", self.id, "; ".join(problems))
        self._guard.emit("closed", {})
        if self._counted:
            self._counted = False
            loop = asyncio.get_running_loop()
            _live[loop] = _live.get(loop, 1) - 1
            if _live[loop] <= 0 and loop in _spares:
                spares = _spares[loop]
                await (spares.close_forks() if pool_size() else spares.close())

    @classmethod
    async def close_pools(cls) -> None:
        """Close this event loop's warm spares (`cua.sandbox.PooledKind`): a server with
        `--pool N` keeps them past its last sandbox, and closes them when it stops."""
        spares = _spares.get(asyncio.get_running_loop())
        if spares is not None:
            await spares.close()

    @property
    def alive(self) -> bool:
        return self._guard.alive

    @property
    def page(self) -> Page:
        """The page the agent sees (SandboxCrashed once the sandbox has died or closed)."""
        return self._pages.page

    def info(self) -> SandboxInfo:
        guard, exe, page, container = self._guard, self._processes.executable, self._pages.current, self._processes.container
        status: Literal["ready", "crashed", "closed"] = "closed" if guard.closed else "crashed" if guard.dead else "ready"
        details: dict[str, Any] = {
            "isolation": self.config.isolation,
            "executable": exe.path if exe else None,
            "executable_source": exe.source if exe else None,
            "browser_pid": guard.browser_pid,
            "browser_version": guard.browser.version if guard.browser is not None else None,
            "services": {name: {"port": port} for name, port in self._ports.items()},
            "url": page.url if page is not None and not page.is_closed() else None,
            "fork_spares": _spares_count(ForkSpares.ready, self.config),
            "create_spares": _spares_count(ForkSpares.warm, self.config),
        }
        if container is not None:
            cg = container.cgroup
            details["cgroup"] = {"applied": cg.applied and cg.populated(), "reason": cg.reason,
                                 "memory_limit_mb": self.config.memory_limit_mb, "pids_limit": self.config.pids_limit}
        else:
            details["cgroup"] = {"applied": False, "reason": "shared isolation"}
        if guard.dead:
            details["died"] = guard.dead
        return SandboxInfo(id=self.id, kind=self.kind, status=status, screen=self._screen,
                           capabilities=capabilities_of(self), queries=list(QUERY_KINDS),
                           created_at=self._created_at, last_active=self._observer.last_active,
                           timings_ms=dict(self._timings), details=details)

    def _start_url(self) -> str:
        try:
            return self.config.resolve_start_url(self._ports)
        except ValueError as exc:
            raise BadRequest(str(exc)) from exc

    # --- episode: reset, act, observe ---

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation:
        obs, _ = await self._reset(seed, options, observe, None)
        return obs

    async def reset_query(self, queries: Sequence[StateQuery | dict[str, Any]], *, seed: int | None = None,
                          options: dict[str, Any] | None = None, observe: ObserveOptions | None = None
                          ) -> tuple[Observation, list[StateResult]]:
        """`reset`, and `queries` answered on the settled start state while the screen is
        captured (`cua.sandbox.ResetQueryable`)."""
        obs, results = await self._reset(seed, options, observe, queries)
        assert results is not None
        return obs, results

    async def _reset(self, seed: int | None, options: dict[str, Any] | None, observe: ObserveOptions | None,
                     queries: Sequence[StateQuery | dict[str, Any]] | None
                     ) -> tuple[Observation, list[StateResult] | None]:
        self._guard.check_alive()
        started = time.perf_counter()
        options, variant = variant_option(options)
        variant = variant or self.config.variant
        if variant is not None and variant.viewport != self._screen:
            raise BadRequest(f"options.variant.viewport: this sandbox's screen is {self._screen.width}x"
                             f"{self._screen.height}, fixed at create (a config's variant sets it)",
                             details={"field": "options.variant.viewport"})
        start_url, reload = reset_options(options, has_service=bool(self.config.services))
        plant = plant_option(options)
        first = next(iter(self._controls), None)
        seed = self.config.seed if seed is None else seed
        url = self._start_url() if start_url is None else (
            self.config.model_copy(update={"start_url": start_url}).resolve_start_url(self._ports))
        self._own.started_at(url)

        def services_reset() -> list[Awaitable[None]]:
            return [self._guard.call(c.reset(seed, plant if name == first else None, variant=variant), f"reset {c.name}")
                    for name, c in self._controls.items()]

        if self._pages.worn():  # a fresh context; the page is then loaded below, as after any reset
            await self._pages.recycle(await self._new_context())
        nav = self._navigator
        if reload or not nav.same_page(url) or \
                not await nav.restart_in_page(url, *services_reset(), alongside=[self._input.move_pointer(0, 0)]):
            seeded = await nav.prepare({}, *services_reset(), nav.clear_state())
            await nav.goto(url, seeded=seeded, then=[lambda: self._input.move_pointer(0, 0)], chosen_by_client=True)
        self._pages.history.start(self._pages.page.url)
        self._elements.clear()
        self._step = 0
        self._observer.forget_kept()
        timings: dict[str, float] = {}
        obs, results = await self._settle_and_observe(observe, timings, queries=queries)
        timings["reset"] = ms_since(started)
        self._timings["reset_last"] = timings["reset"]
        return obs, results

    async def observe(self, options: ObserveOptions | None = None) -> Observation:
        self._guard.check_alive()
        kept = await self._observer.kept(options)
        return kept if kept is not None else await self._observer.observe(options, {}, step=self._step)

    async def act(self, action: Action | dict[str, Any], *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation:
        obs, _ = await self._act(action, frame, observe, None)
        return obs

    async def act_query(self, action: Action | dict[str, Any], queries: Sequence[StateQuery | dict[str, Any]], *,
                        frame: Size | None = None, observe: ObserveOptions | None = None
                        ) -> tuple[Observation, list[StateResult]]:
        """`act`, and `queries` answered once the action has settled, while the screen is
        captured (`cua.sandbox.ActQueryable`)."""
        obs, results = await self._act(action, frame, observe, queries)
        assert results is not None
        return obs, results

    async def _act(self, action: Action | dict[str, Any], frame: Size | None, observe: ObserveOptions | None,
                   queries: Sequence[StateQuery | dict[str, Any]] | None) -> tuple[Observation, list[StateResult] | None]:
        self._guard.check_alive()
        started = time.perf_counter()
        timings: dict[str, float] = {}
        self._step += 1
        self._observer.forget_kept()
        error, resolved = await self._input.act(action, frame or self._observer.frame)
        timings["act"] = ms_since(started)
        obs, results = await self._settle_and_observe(observe, timings, error=error, queries=queries)
        timings["total"] = ms_since(started)
        return (obs.model_copy(update={"resolved_action": resolved}) if resolved is not None else obs), results

    async def _settle_and_observe(self, observe: ObserveOptions | None, timings: dict[str, float], *,
                                  error: ActionError | None = None,
                                  queries: Sequence[StateQuery | dict[str, Any]] | None = None
                                  ) -> tuple[Observation, list[StateResult] | None]:
        """Settle, then observe, and answer `queries` (if any) on the settled state.

        The screen is captured only once the page has settled. Capturing during the settle
        check and keeping the capture when the check found the page quiet saved a few
        milliseconds on actions that changed nothing, but threw a full capture away on
        every action that did (a navigation, a re-render): CPU a busy machine runs short of.
        The queries are read while the screen is captured (the capture changes no state),
        unless the page is being switched (a popup): then after the observation, on the
        page it shows.
        """
        settle_started = time.perf_counter()
        settle = await self._pages.settle()
        timings["settle"] = ms_since(settle_started)
        observing = self._observer.observe(observe, timings, step=self._step, settle=settle, error=error)
        if queries is None:
            return await observing, None
        if self._pages.switching:
            obs = await observing
            return obs, await self._queries.answer(queries)
        done = await asyncio.gather(observing, self._queries.answer(queries), return_exceptions=True)
        for outcome in done:  # both awaited to the end; the first failure is raised
            if isinstance(outcome, BaseException):
                raise outcome
        observed, results = done
        assert isinstance(observed, Observation) and isinstance(results, list)
        return observed, results

    # --- snapshots and forks ---

    async def snapshot(self) -> SnapshotRef:
        self._guard.check_alive()
        started = time.perf_counter()
        ref = await self._snapshots.take(step=self._step)
        self._timings["snapshot_last"] = ms_since(started)
        return ref

    async def restore(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> Observation:
        self._guard.check_alive()
        started = time.perf_counter()
        self._step = await self._snapshots.restore(ref)
        self._observer.forget_kept()
        timings: dict[str, float] = {}
        obs, _ = await self._settle_and_observe(observe, timings)
        timings["restore"] = ms_since(started)
        self._timings["restore_last"] = timings["restore"]
        return obs

    async def delete_snapshot(self, ref: SnapshotRef) -> None:
        STORE.delete(ref)

    async def put_service_image(self, service: str, image: bytes) -> None:
        """Replace `service`'s database with `image` (`cua.sandbox.ServiceImages`); the page
        is not reloaded."""
        self._guard.check_alive()
        control = self._controls.get(service)
        if control is None:
            raise BadRequest(f"no service {service!r} in this sandbox (it has {sorted(self._controls)})",
                             details={"service": service})
        await self._guard.call(control.restore(image), f"restore {service}")

    async def fork(self, ref: SnapshotRef, *, sandbox_id: str, emit: EventSink | None = None) -> "BrowserSandbox":
        """A new sandbox restored from `ref`: a pre-started spare when one is ready
        (see spares.py), else one started now."""
        STORE.get(ref)  # fail fast, before starting a browser, when the snapshot is unknown
        spares = _fork_spares()
        started = time.perf_counter()
        child: BrowserSandbox | None = spares.begin(self.config)
        try:
            if child is None:
                child = await type(self)._spawn(self.config, sandbox_id=sandbox_id, emit=emit)
            else:
                child._taken(sandbox_id, emit)
            child._count_live()
            try:
                child._observer.keep_forked(await child.restore(ref))
            except BaseException:
                await child.close()
                raise
        finally:
            spares.end(self.config)
        child._timings["fork"] = ms_since(started)
        return child

    # --- queries and streaming ---

    async def query(self, queries: Sequence[StateQuery | dict[str, Any]]) -> list[StateResult]:
        """Answer `queries` at once, in their order (see queries.py)."""
        return await self._queries.answer(queries)

    def frames(self, options: ObserveOptions, *, max_fps: float = 10.0) -> AsyncIterator[Screenshot]:
        """Screencast frames as the screen changes, at most `max_fps` a second (see stream.py);
        the screencast stops when the iterator is closed."""
        return stream.frames(self._guard, self._pages, options, self._screen, max_fps=max_fps)


# --- spares: pre-started sandboxes of this event loop (spares.py) ---

_live: dict[asyncio.AbstractEventLoop, int] = {}
_spares: dict[asyncio.AbstractEventLoop, ForkSpares] = {}


async def _spawn_spare(config: BrowserConfig, sandbox_id: str) -> BrowserSandbox:
    """A fork target with its start page loaded, in the background: the fork's restore is
    then a same-origin load into a renderer that has loaded the app before (its process,
    code and font caches and first layout are paid before the fork, not during it)."""
    return await _class_of(config)._create_loaded(config, sandbox_id=sandbox_id, emit=None)


async def _create_spare(config: BrowserConfig, sandbox_id: str) -> BrowserSandbox:
    spare = await _class_of(config)._create_loaded(config, sandbox_id=sandbox_id, emit=None)
    try:
        await spare._observer.keep_warm(await spare._observer.observe(None, {}, step=spare._step))
    except BaseException:
        await spare.close()
        raise
    return spare


def _class_of(config: BrowserConfig) -> type[BrowserSandbox]:
    """The sandbox class whose config `config` is: a kind built on this one (the mobile
    kind) has a config model of its own, and its spares must be of its own class."""
    for cls in BrowserSandbox.__subclasses__():
        if type(config) is cls.config_model:
            return cls
    return BrowserSandbox


def _spares_count(count: Any, config: BrowserConfig) -> int:
    """Spares of this config that `count` (ForkSpares.ready: for forks; ForkSpares.warm: for
    creates, `CUA_BROWSER_POOL`) finds ready; 0 outside an event loop."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return 0
    return int(count(_spares[loop], config)) if loop in _spares else 0


def _fork_spares() -> ForkSpares:
    loop = asyncio.get_running_loop()
    if loop not in _spares:
        _spares[loop] = ForkSpares(_spawn_spare, _create_spare)
    return _spares[loop]
