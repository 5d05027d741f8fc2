"""`BrowserSandbox`: Chromium driven by Playwright, with its services, in one of two isolations.

- `container` (default): its own Chromium inside a bubblewrap namespace (own network
  with only loopback, own pids, own /tmp), its services inside the same namespace; the
  host talks to the services over unix sockets (see container.py).
- `shared`: a new browser context in one browser shared by the process, services on
  host loopback ports. Cheaper and faster to create, but WEAKER: pages can reach any
  host port, and the sandboxes share one browser process (a crash kills them all).

Every browser call is bounded by `call_timeout_s` (raising `cua.errors.Timeout`);
after the browser or a service dies, every call raises `cua.errors.SandboxCrashed`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from playwright.async_api import Browser, BrowserContext, Dialog, Frame, Page
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, ValidationError

from cua.actions import Action, ActionAdapter, Back, Click, ClickElement, Forward, Goto, HoverElement, Move, Wait
from cua.errors import ActionFailed, BadRequest, InfraError, InternalError, SandboxCrashed, Timeout
from cua.observation import ActionError, Observation, ObserveOptions, Screenshot, SettleInfo, Size
from cua.sandbox import EventSink, Sandbox, SandboxEvent, SandboxInfo, ServiceSpec, SnapshotRef, capabilities_of, scale_action
from cua.sandboxes.browser import input as browser_input
from cua.sandboxes.browser.cdp import Cdp
from cua.sandboxes.browser.config import BrowserConfig, check_start_url
from cua.sandboxes.browser.container import Container
from cua.sandboxes.browser.elements import ElementIds, element_centre
from cua.sandboxes.browser.launcher import Executable, chromium_args, find_executable
from cua.sandboxes.browser.observe import accessibility_tree, accessibility_tree_nested, capture_screenshot, focused_element
from cua.sandboxes.browser.pwerrors import target_closed
from cua.sandboxes.browser.queries import cookies_query, dom_query, local_storage_query
from cua.sandboxes.browser.runtime import Runtime, find_browser_pid, runtime
from cua.sandboxes.browser.services import HostedApp, HostService, ServiceControl, bundled_app_name
from cua.sandboxes.browser.settle import INIT_SCRIPT, PageActivity, navigation_race
from cua.sandboxes.browser.snapshot import PAGE_STATE_JS, RESTORE_VIEW_JS, SEED_STORAGE_JS, STORE, BrowserSnapshot, rebase_url
from cua.sandboxes.browser.spares import ForkSpares, pool_size
from cua.sandboxes.browser.stream import screencast
from cua.state import (
    A11yQuery,
    AppStateQuery,
    CookiesQuery,
    DomQuery,
    LocalStorageQuery,
    SqlQuery,
    StateQuery,
    StateQueryAdapter,
    StateResult,
    TitleQuery,
    UrlQuery,
)

__all__ = ["BrowserSandbox", "QUERY_KINDS"]

log = logging.getLogger(__name__)
T = TypeVar("T")

QUERY_KINDS = ["app_state", "sql", "url", "title", "dom", "local_storage", "cookies", "a11y"]
#: A page's in-page restart, where it offers one (`_restart_in_page`). sessionStorage lives
#: with the tab, so it is cleared here (a load clears it with the `_seed_storage` script).
_RESTART_IN_PAGE_JS = """(url) => {
  const restart = window.__cuaRestart;
  if (typeof restart !== "function") return false;
  try { window.sessionStorage.clear(); } catch (e) { /* no storage for this origin */ }
  return restart(url) === true;
}"""
#: The page's content version (settle.py's init script): DOM, form values, scroll, viewport.
_CONTENT_VERSION_JS = "() => window.__cuaSettle ? window.__cuaSettle.version : null"
_STORAGE_TYPES = "local_storage,session_storage,indexeddb,websql,cache_storage,service_workers,file_systems"

class BrowserSandbox(Sandbox):
    """A browser an agent sees and acts in. See the module docstring for the isolations."""

    kind = "browser"
    config_model = BrowserConfig

    def __init__(self, config: BrowserConfig, sandbox_id: str, emit: EventSink | None) -> None:
        self.id = sandbox_id
        self.config = config
        self._emit_sink = emit
        self._screen = config.viewport
        self._frame: Size = config.viewport
        self._rt: Runtime | None = None
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._cdp: Cdp | None = None
        self._activity: PageActivity | None = None
        self._pointer = browser_input.Pointer()
        self._container: Container | None = None
        self._host_services: list[HostService | HostedApp] = []
        self._host_dir: Path | None = None
        self._controls: dict[str, ServiceControl] = {}
        self._ports: dict[str, int] = {}
        self._executable: Executable | None = None
        self._browser_pid: int | None = None
        self._axtree_cache: tuple[tuple[int, int, int, str, bool], list[dict[str, Any]]] | None = None
        self._elements = ElementIds()
        self._uses_shared = False
        self._origins: set[str] = set()
        self._adopting: asyncio.Future[None] | None = None
        self._new_page = asyncio.Event()
        self._replacing = False
        self._step = 0
        self._dead: str | None = None
        self._closed = False
        self._timings: dict[str, float] = {}
        self._created_at = time.time()
        self._last_active = time.time()
        #: Counted among the sandboxes the loop's fork spares serve (a spare is not, until taken).
        self._counted = False
        #: A fork's restore observation, with the page's load count then: the host's first
        #: observe of the new sandbox gets it instead of a second capture of the same screen.
        self._fork_observation: tuple[Observation, int] | None = None
        #: A warm spare's observation taken when it was pre-started, with the page's load count
        #: and content version then: the first observe after a create that took the spare gets it
        #: if the page has not changed since (one evaluate instead of a capture).
        self._warm_observation: tuple[Observation, int, int | None] | None = None

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
        self = _fork_spares().take_warm(config, keep) if keep else None
        if self is not None:  # a warm spare (spares.py): started and loaded in the background
            self.id, self._emit_sink, self._created_at = sandbox_id, emit, time.time()
            if self._warm_observation is not None:
                obs, loads, version = self._warm_observation
                self._warm_observation = (obs.model_copy(update={"sandbox_id": sandbox_id}), loads, version)
            self._timings["create"] = _ms(started)
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
            await self._goto(self._start_url(), chosen_by_client=True)
            await self._settle()
        except BaseException:
            await self.close()
            raise
        self._timings["create"] = _ms(started)
        return self

    def _count_live(self) -> None:
        self._counted = True
        loop = asyncio.get_running_loop()
        _live[loop] = _live.get(loop, 0) + 1

    @classmethod
    async def _spawn(cls, config: BrowserConfig, *, sandbox_id: str, emit: EventSink | None) -> "BrowserSandbox":
        """A started sandbox whose page has loaded nothing yet: for a fork, whose first
        load is the snapshot's page (loading the start URL first was a third of its cost)."""
        self = cls(config, sandbox_id, emit)
        started = time.perf_counter()
        try:
            await self._start()
        except BaseException:
            await self.close()
            raise
        self._timings["create"] = _ms(started)
        return self

    async def _start(self) -> None:
        cfg = self.config
        self._rt = await runtime()
        if cfg.isolation == "container":
            await self._start_container()
        else:
            await self._start_shared()
        assert self._browser is not None
        self._browser.on("disconnected", self._on_disconnected)
        self._context = await self._guard(self._browser.new_context(
            viewport={"width": self._screen.width, "height": self._screen.height}, device_scale_factor=1,
            locale=cfg.locale, timezone_id=cfg.timezone, service_workers="block"), "new_context")
        await self._guard(self._context.add_init_script(INIT_SCRIPT), "init script")
        self._context.on("page", self._on_new_page)
        page = await self._guard(self._context.new_page(), "new_page")
        if self._page is not page:  # the "page" event may already have adopted it
            await self._adopt(page)

    async def _start_container(self) -> None:
        assert self._rt is not None
        cfg = self.config
        self._executable = find_executable()
        marker = f"{self.id[:40]}-{uuid.uuid4().hex[:12]}"
        self._container = Container.prepare(
            sandbox_id=self.id, chromium=self._executable.path, services=cfg.services, seed=cfg.seed,
            extra_ro_binds=cfg.extra_ro_binds, memory_mb=cfg.memory_limit_mb, pids=cfg.pids_limit)
        try:
            self._browser = await self._rt.playwright.chromium.launch(
                executable_path=str(self._container.wrapper), headless=True,
                args=chromium_args(cfg.extra_args, marker), timeout=_launch_timeout_ms(cfg),
                handle_sigint=False, handle_sigterm=False, handle_sighup=False)
        except PlaywrightError as exc:
            status = self._container.status()
            why = status.get("error") or str(exc).splitlines()[0]
            raise InfraError(f"browser container failed to start: {why}", details={"status": status}) from exc
        self._browser_pid = find_browser_pid(marker)
        self._ports = dict(self._container.ports)
        self._controls = {name: ServiceControl(name, path, cfg.call_timeout_s)
                          for name, path in self._container.sockets.items()}

    async def _start_shared(self) -> None:
        assert self._rt is not None
        cfg = self.config
        if cfg.services:
            self._host_dir = Path(tempfile.mkdtemp(prefix=f"cua-browser-{self.id[:24]}-"))
            started = await asyncio.gather(*(self._start_host_service(s) for s in cfg.services), return_exceptions=True)
            self._host_services = [s for s in started if isinstance(s, (HostService, HostedApp))]
            failures = [s for s in started if isinstance(s, BaseException)]
            if failures:
                raise failures[0]
            self._ports = {s.spec.name: s.port for s in self._host_services}
            self._controls = {s.spec.name: ServiceControl(s.spec.name, s.socket_path, cfg.call_timeout_s)
                              for s in self._host_services}
        self._browser, self._executable, marker = await self._rt.acquire_shared_browser(cfg.extra_args)
        self._uses_shared = True
        self._browser_pid = find_browser_pid(marker)

    async def _start_host_service(self, spec: ServiceSpec) -> HostService | HostedApp:
        assert self._host_dir is not None
        socket_path = str(self._host_dir / f"{spec.name}.sock")
        app = bundled_app_name(spec) if self.config.shared_app_host else None
        if app is not None:
            return await HostedApp.start(spec, app, socket_path, self.config.seed, self._on_service_died)
        return await HostService.start(spec, socket_path, self.config.seed, self._on_service_died)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        problems: list[str] = []

        async def step(what: str, aw: Awaitable[Any]) -> None:
            try:
                await asyncio.wait_for(aw, 10)
            except (PlaywrightError, OSError, asyncio.TimeoutError, InfraError) as exc:
                problems.append(f"{what}: {type(exc).__name__}: {exc}")

        if self._browser is not None:
            self._browser.remove_listener("disconnected", self._on_disconnected)
        if self._context is not None:
            await step("close context", self._context.close())
        if self._browser is not None and not self._uses_shared:
            await step("close browser", self._browser.close())
        if self._uses_shared and self._rt is not None:
            await step("release shared browser", self._rt.release_shared_browser())
        for control in self._controls.values():
            await step(f"close control {control.name}", control.aclose())
        for svc in self._host_services:
            await step(f"stop service {svc.spec.name}", svc.stop())
        if self._container is not None:
            await step("remove container", self._container.cleanup())
        if self._host_dir is not None:
            shutil.rmtree(self._host_dir, ignore_errors=True)
        if self._rt is not None:
            rt, self._rt = self._rt, None
            await step("release playwright", rt.release())
        if problems:
            log.warning("browser sandbox %s closed with problems: %s", self.id, "; ".join(problems))
        self._emit("closed", {})
        if self._counted:
            self._counted = False
            loop = asyncio.get_running_loop()
            _live[loop] = _live.get(loop, 1) - 1
            if _live[loop] <= 0 and loop in _spares:
                await _spares[loop].close()

    @property
    def alive(self) -> bool:
        return (not self._closed and self._dead is None and self._browser is not None
                and self._browser.is_connected())

    def info(self) -> SandboxInfo:
        status = "closed" if self._closed else "crashed" if self._dead else "ready"
        details: dict[str, Any] = {
            "isolation": self.config.isolation,
            "executable": self._executable.path if self._executable else None,
            "executable_source": self._executable.source if self._executable else None,
            "browser_pid": self._browser_pid,
            "browser_version": self._browser.version if self._browser is not None else None,
            "services": {name: {"port": port} for name, port in self._ports.items()},
            "url": self._page.url if self._page is not None and not self._page.is_closed() else None,
            "fork_spares": _spares_ready(self.config),
            "create_spares": _spares_warm(self.config),
        }
        if self._container is not None:
            cg = self._container.cgroup
            details["cgroup"] = {"applied": cg.applied and cg.populated(), "reason": cg.reason,
                                 "memory_limit_mb": self.config.memory_limit_mb, "pids_limit": self.config.pids_limit}
        else:
            details["cgroup"] = {"applied": False, "reason": "shared isolation"}
        if self._dead:
            details["died"] = self._dead
        return SandboxInfo(id=self.id, kind=self.kind, status=status, screen=self._screen,
                           capabilities=capabilities_of(self), queries=list(QUERY_KINDS),
                           created_at=self._created_at, last_active=self._last_active,
                           timings_ms=dict(self._timings), details=details)

    # --- events and death ---

    def _emit(self, event: str, data: dict[str, Any]) -> None:
        if self._emit_sink is None:
            return
        try:
            self._emit_sink(SandboxEvent(sandbox_id=self.id, event=event, data=data))  # type: ignore[arg-type]
        except Exception:  # a faulty listener must not break the sandbox; it is logged, not hidden
            log.exception("event sink failed for %s event of sandbox %s", event, self.id)

    def _die(self, reason: str) -> None:
        if self._dead is not None or self._closed:
            return
        verdict = self._container.cgroup.verdict() if self._container is not None else None
        self._dead = f"{reason} ({verdict})" if verdict else reason
        self._emit("died", {"reason": self._dead})

    def _on_disconnected(self, _browser: Browser) -> None:
        status = self._container.status() if self._container is not None else {}
        if status.get("state") == "service_died":
            self._die(f"service {status.get('service')!r} died (exit code {status.get('returncode')})")
        else:
            self._die("browser process exited")

    def _on_service_died(self, name: str, code: int | None) -> None:
        self._die(f"service {name!r} died (exit code {code})")

    def _on_crash(self, _page: Page) -> None:
        self._die("page renderer crashed")

    def _check_alive(self) -> None:
        if self._closed:
            raise SandboxCrashed(f"sandbox {self.id} is closed", details={"sandbox": self.id})
        if self._browser is not None and not self._browser.is_connected():
            self._on_disconnected(self._browser)
        if self._dead is not None:
            raise SandboxCrashed(f"sandbox {self.id} died: {self._dead}", details={"sandbox": self.id,
                                                                                  "reason": self._dead})

    async def _guard(self, aw: Awaitable[T], what: str, timeout: float | None = None) -> T:
        """Run one browser call: bounded in time, with browser death turned into SandboxCrashed."""
        self._check_alive()
        limit = timeout if timeout is not None else self.config.call_timeout_s
        try:
            return await asyncio.wait_for(aw, limit)
        except asyncio.TimeoutError as exc:
            self._check_alive()
            raise Timeout(f"browser sandbox {self.id}: {what} took longer than {limit:g} s",
                          details={"sandbox": self.id, "operation": what}) from exc
        except PlaywrightError as exc:
            # "closed" errors also come from a page the page itself closed: the sandbox is dead
            # only when the browser is (its process gone, or its connection).
            if (self._browser is not None and not self._browser.is_connected()) or \
                    (target_closed(exc) and not _process_alive(self._browser_pid)):
                self._check_alive()
                self._die(f"browser connection lost: {str(exc).splitlines()[0]}")
                self._check_alive()
            raise

    # --- pages ---

    async def _adopt(self, page: Page) -> None:
        """Make `page` the one the agent sees (the first page, or a popup it opened)."""
        assert self._context is not None
        activity = PageActivity(page)
        activity.attach()
        page.on("framenavigated", self._on_navigated)
        page.on("crash", self._on_crash)
        page.on("dialog", self._on_dialog)
        page.on("close", self._on_page_close)
        self._cdp = Cdp(await self._guard(self._context.new_cdp_session(page), "cdp session"))
        # Scripts added through this session (storage seeding) only run while its Page domain is on.
        await self._guard(self._cdp.send("Page.enable"), "page domain")
        self._page, self._activity = page, activity

    def _on_new_page(self, page: Page) -> None:
        if self._page is None or page is self._page or self._replacing:
            return
        self._adopting = asyncio.ensure_future(self._adopt_popup(page))
        self._new_page.set()

    async def _adopt_popup(self, page: Page) -> None:
        try:
            await self._adopt(page)
        except (PlaywrightError, SandboxCrashed, Timeout) as exc:
            log.warning("could not switch sandbox %s to its new page: %s", self.id, exc)

    def _on_page_close(self, page: Page) -> None:
        if page is not self._page or self._context is None or self._closed or not self.alive:
            return
        others = [p for p in self._context.pages if not p.is_closed()]
        self._adopting = asyncio.ensure_future(self._adopt_popup(others[-1]) if others else self._replace_page())

    async def _replace_page(self) -> None:
        """The page closed and no other is open: give the agent a blank one. (When the whole
        browser went away, this fails and the death is reported by the disconnect.)"""
        assert self._context is not None
        self._replacing = True
        try:
            page = await self._guard(self._context.new_page(), "new_page")
            await self._adopt(page)
        except (PlaywrightError, SandboxCrashed, Timeout) as exc:
            log.info("sandbox %s could not open a page in place of the closed one: %s", self.id, exc)
        finally:
            self._replacing = False

    def _on_navigated(self, frame: Frame) -> None:
        if self._page is None or frame is not self._page.main_frame:
            return
        url = frame.url
        origin = _origin(url)
        if origin:
            self._origins.add(origin)
        self._emit("navigated", {"url": url})

    def _on_dialog(self, dialog: Dialog) -> None:
        """Native dialogs block the page and cannot be clicked in a headless screen:
        accept them (prompts get their default) and tell listeners."""
        self._emit("dialog", {"type": dialog.type, "message": dialog.message})
        asyncio.ensure_future(_accept(dialog))

    @property
    def page(self) -> Page:
        self._check_alive()
        assert self._page is not None
        return self._page

    def _start_url(self) -> str:
        try:
            return self.config.resolve_start_url(self._ports)
        except ValueError as exc:
            raise BadRequest(str(exc)) from exc

    async def _seed_storage(self, storage: dict[str, dict[str, dict[str, str]]]) -> str:
        """Register a one-shot script that replaces the tab's web storage ({origin: {"local": ...,
        "session": ...}}) before any script of the next document runs; `_goto` removes it."""
        assert self._cdp is not None
        source = SEED_STORAGE_JS.replace("__DATA__", json.dumps(storage))
        added = await self._guard(self._cdp.send("Page.addScriptToEvaluateOnNewDocument", {"source": source}),
                                  "seed storage")
        return str(added["identifier"])

    async def _prepare_navigation(self, storage: dict[str, dict[str, dict[str, str]]], *work: Awaitable[Any]) -> str:
        """Run `work` (app and cookie state) alongside seeding the storage for the next load.
        If anything fails, the seeding script is withdrawn so no later page is touched."""
        *results, seeded = await asyncio.gather(*work, self._seed_storage(storage), return_exceptions=True)
        failures = [r for r in (*results, seeded) if isinstance(r, BaseException)]
        if failures:
            if isinstance(seeded, str) and self.alive:
                assert self._cdp is not None
                await self._guard(self._cdp.send("Page.removeScriptToEvaluateOnNewDocument",
                                                 {"identifier": seeded}), "unseed storage")
            raise failures[0]
        return str(seeded)

    async def _unseed(self, seeded: str) -> None:
        if self.alive:
            assert self._cdp is not None
            await self._guard(self._cdp.send("Page.removeScriptToEvaluateOnNewDocument", {"identifier": seeded}),
                              "unseed storage")

    async def _goto(self, url: str, *, seeded: str | None = None,
                    then: Sequence[Callable[[], Awaitable[Any]]] = (), chosen_by_client: bool = False) -> None:
        """Load `url` and wait for its load event; then drop the `_seed_storage` script
        `seeded` while running `then` (pointer, view) alongside. A start URL the client
        chose outside the sandbox's own services that does not load is its mistake
        (`bad_request`); one of the sandbox's own pages that does not load is infra's."""
        browser_input.check_url(url)
        page = self.page
        try:
            await self._guard(page.goto(url, wait_until="load", timeout=self.config.navigation_timeout_ms),
                              f"goto {url}", timeout=self.config.navigation_timeout_ms / 1000 + 5)
        except PlaywrightError as exc:
            if seeded is not None:
                await self._unseed(seeded)
            why = f"sandbox {self.id} could not load {url}: {str(exc).splitlines()[0]}"
            if chosen_by_client and not self._serves(url):
                raise BadRequest(f"start_url: {why}", details={"field": "start_url", "url": url}) from exc
            raise InfraError(why) from exc
        await asyncio.gather(*([self._unseed(seeded)] if seeded is not None else []), *(step() for step in then))

    def _serves(self, url: str) -> bool:
        """Whether `url` is a page of one of this sandbox's services."""
        return any(url.startswith((f"http://127.0.0.1:{port}/", f"http://localhost:{port}/"))
                   or url in (f"http://127.0.0.1:{port}", f"http://localhost:{port}") for port in self._ports.values())

    async def _settle(self) -> SettleInfo:
        assert self._activity is not None
        activity = self._activity
        info = await self._guard(
            activity.settle(timeout_ms=self.config.settle_timeout_ms, quiet_ms=self.config.settle_quiet_ms),
            "settle", timeout=self.config.settle_timeout_ms / 1000 + self.config.call_timeout_s)
        if not activity.popup_requested:
            return info
        activity.popup_requested = False
        # The page opened a window: wait (event-driven, bounded) for it, then settle it instead.
        try:
            await asyncio.wait_for(self._new_page.wait(), self.config.settle_timeout_ms / 1000)
        except asyncio.TimeoutError:
            return info.model_copy(update={"reason": info.reason + "+popup_not_opened"})
        self._new_page.clear()
        if self._adopting is not None:
            adopting, self._adopting = self._adopting, None
            await self._guard(adopting, "switch page")
        popup = await self._settle()
        return popup.model_copy(update={"waited_ms": round(info.waited_ms + popup.waited_ms, 2),
                                        "reason": "popup+" + popup.reason})

    # --- observe and act ---

    async def observe(self, options: ObserveOptions | None = None) -> Observation:
        self._check_alive()
        fresh, self._fork_observation = self._fork_observation, None
        if fresh is not None and options is None and self._activity is not None and self._activity.loads == fresh[1]:
            return fresh[0]
        warm, self._warm_observation = self._warm_observation, None
        if warm is not None and options is None and self._activity is not None and self._activity.loads == warm[1] \
                and await self._guard(self.page.evaluate(_CONTENT_VERSION_JS), "content version") == warm[2]:
            return warm[0]  # a warm spare's screen, unchanged since it was taken (no load, same DOM)
        return await self._observe(options, {})

    async def _observe(self, options: ObserveOptions | None, timings: dict[str, float], *,
                       settle: SettleInfo | None = None, error: ActionError | None = None) -> Observation:
        opts = options or ObserveOptions()
        started = time.perf_counter()
        if self._adopting is not None:  # a popup opened or the page closed: show the page the agent now has
            adopting, self._adopting = self._adopting, None
            self._new_page.clear()
            await self._guard(adopting, "switch page")
            await self._settle()
        page, cdp = self.page, self._cdp
        assert cdp is not None
        shot_task = self._screenshot(opts) if opts.screenshot else None
        title_task = self._guard(page.title(), "title") if settle is None or not settle.settled or \
            self._activity is None or self._activity.settled_title is None else _ready(self._activity.settled_title)
        ax_key = self._axtree_key(settle, opts.element_ids)
        cached = self._axtree_cache[1] if ax_key is not None and self._axtree_cache and self._axtree_cache[0] == ax_key \
            else None
        ids = self._elements if opts.element_ids else None
        ax_task = (_ready(cached) if cached is not None else
                   self._guard(accessibility_tree(cdp, element_ids=ids), "axtree")) \
            if opts.axtree or opts.element_ids else None
        focus_task = self._guard(focused_element(page), "focused") if opts.focused else None
        tasks = [t for t in (shot_task, title_task, ax_task, focus_task) if t is not None]
        try:
            results = await asyncio.gather(*tasks)
        except PlaywrightError as exc:
            if not navigation_race(exc):
                raise
            # The page navigated while we read it: settle on the new document and read again.
            await self._settle()
            return await self._observe(options, timings, settle=settle, error=error)
        it = iter(results)
        shot: Screenshot | None = next(it) if shot_task is not None else None
        title: str = next(it)
        axtree = next(it) if ax_task is not None else None
        if axtree is not None and cached is None:
            self._axtree_cache = (ax_key, axtree) if ax_key is not None else None
        focused = next(it) if focus_task is not None else None
        self._frame = opts.frame or self._screen
        timings["observe"] = _ms(started)
        self._last_active = time.time()
        return Observation(sandbox_id=self.id, frame=self._frame, screen=self._screen, screenshot=shot,
                           url=page.url, title=title, axtree=axtree, focused=focused, settle=settle, error=error,
                           timings_ms=timings, step=self._step)

    def _axtree_key(self, settle: SettleInfo | None, element_ids: bool) -> tuple[int, int, int, str, bool] | None:
        """Identifies the page content the accessibility tree reflects, when a quiet settle
        just read it: same document, same loads, same content version, same URL."""
        activity = self._activity
        if settle is None or not settle.settled or activity is None or activity.version is None:
            return None
        return (id(activity), activity.loads, activity.version, self.page.url, element_ids)

    async def _screenshot(self, opts: ObserveOptions) -> Screenshot:
        """A capture requested while a document is being replaced can go unanswered; such a
        capture is bounded tighter than other calls and taken again once the page settles."""
        assert self._cdp is not None
        first_try = min(self.config.call_timeout_s, 10.0)
        try:
            return await self._guard(capture_screenshot(self._cdp, opts, self._screen), "screenshot", timeout=first_try)
        except Timeout:
            log.warning("screenshot of %s unanswered after %g s; settling and retrying", self.id, first_try)
        except PlaywrightError as exc:  # "Unable to capture screenshot": the surface was being replaced
            log.warning("screenshot of %s failed (%s); settling and retrying", self.id, str(exc).splitlines()[0])
        await self._settle()
        try:
            return await self._guard(capture_screenshot(self._cdp, opts, self._screen), "screenshot")
        except PlaywrightError as exc:
            raise InternalError(f"browser sandbox {self.id}: screenshot failed twice: {str(exc).splitlines()[0]}",
                                details={"sandbox": self.id}) from exc

    async def act(self, action: Action | dict[str, Any], *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation:
        self._check_alive()
        started = time.perf_counter()
        timings: dict[str, float] = {}
        error: ActionError | None = None
        resolved: dict[str, Any] | None = None
        self._step += 1
        self._fork_observation = self._warm_observation = None
        try:
            parsed = action if isinstance(action, BaseModel) else ActionAdapter.validate_python(action)
            if isinstance(parsed, (ClickElement, HoverElement)):
                scaled = await self._resolve_element(parsed)
                resolved = scale_action(scaled, self._screen, frame or self._frame).model_dump(mode="json")
            else:
                scaled = scale_action(parsed, frame or self._frame, self._screen)  # type: ignore[arg-type]
            budget = self.config.call_timeout_s + (scaled.seconds if isinstance(scaled, Wait) else 0.0) + \
                (self.config.navigation_timeout_ms / 1000 if isinstance(scaled, (Goto, Back, Forward)) else 0.0)
            await self._guard(browser_input.perform(self.page, scaled, self._pointer,
                                                    navigation_timeout_ms=self.config.navigation_timeout_ms),
                              f"action {scaled.type}", timeout=budget)
        except ValidationError as exc:
            error = ActionError(reason="malformed", message=f"malformed action: {exc.errors(include_url=False)[0]['msg']}")
        except ActionFailed as exc:
            error = ActionError(reason=exc.reason, message=exc.message)
        except PlaywrightError as exc:
            # The browser is alive (else _guard raised SandboxCrashed): the page refused the input.
            error = ActionError(reason="failed", message=str(exc).splitlines()[0])
        timings["act"] = _ms(started)
        obs = await self._settle_and_observe(observe, timings, error=error)
        timings["total"] = _ms(started)
        return obs.model_copy(update={"resolved_action": resolved}) if resolved is not None else obs

    async def _resolve_element(self, action: ClickElement | HoverElement) -> Click | Move:
        """The pointer action at the element's centre, in screen pixels (`ElementIds`)."""
        assert self._cdp is not None
        backend = self._elements.backend_of(action.element)
        x, y = await self._guard(element_centre(self._cdp, backend, action.element), f"find {action.element}")
        if isinstance(action, HoverElement):
            return Move(x=x, y=y)
        return Click(x=x, y=y, button=action.button, count=action.count)

    async def _settle_and_observe(self, observe: ObserveOptions | None, timings: dict[str, float], *,
                                  error: ActionError | None = None) -> Observation:
        """Settle, then observe.

        The screen is captured only once the page has settled. Capturing during the settle
        check and keeping the capture when the check found the page quiet saved a few
        milliseconds on actions that changed nothing, but threw a full capture away on
        every action that did (a navigation, a re-render): CPU a busy machine runs short of.
        """
        settle_started = time.perf_counter()
        settle = await self._settle()
        timings["settle"] = _ms(settle_started)
        return await self._observe(observe, timings, settle=settle, error=error)

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation:
        self._check_alive()
        started = time.perf_counter()
        options = dict(options or {})
        start_url = options.pop("start_url", None)
        reload = options.pop("reload", False)
        if options:
            raise BadRequest(f"unknown reset option(s): {', '.join(sorted(options))}; known: start_url, reload")
        if not isinstance(reload, bool):
            raise BadRequest("options.reload: true or false", details={"field": "options.reload"})
        if start_url is not None:
            try:
                check_start_url(start_url, has_service=bool(self.config.services))
            except ValueError as exc:
                raise BadRequest(f"options.start_url: {exc}", details={"field": "options.start_url"}) from exc
        seed = self.config.seed if seed is None else seed
        url = self._start_url() if start_url is None else (
            self.config.model_copy(update={"start_url": start_url}).resolve_start_url(self._ports))
        if reload or not self._same_page(url) or not await self._restart_in_page(url, seed):
            seeded = await self._prepare_navigation(
                {}, *(self._guard(c.reset(seed), f"reset {c.name}") for c in self._controls.values()),
                self._clear_browser_state())
            await self._goto(url, seeded=seeded, then=[lambda: self._move_pointer(0, 0)], chosen_by_client=True)
        self._elements = ElementIds()  # a reset numbers elements afresh, as a new episode sees them
        self._step = 0
        self._fork_observation = self._warm_observation = None
        timings: dict[str, float] = {}
        obs = await self._settle_and_observe(observe, timings)
        timings["reset"] = _ms(started)
        self._timings["reset_last"] = timings["reset"]
        return obs

    def _same_page(self, url: str) -> bool:
        """Whether the page shows `url`'s document (origin and path), served by a service of
        this sandbox: only then may the page restart its task in place."""
        if self._page is None or self._adopting is not None or not self._serves(url):
            return False
        here, there = urlsplit(self._page.url), urlsplit(url)
        return (here.scheme, here.netloc, here.path) == (there.scheme, there.netloc, there.path)

    async def _restart_in_page(self, url: str, seed: int) -> bool:
        """Reset by the page's own in-page restart, where it offers one (`window.__cuaRestart`,
        as MiniWoB's tasks start a new episode in the loaded page: tasks/miniwob/shim.js).

        The services are reset, cookies and storage cleared and the pointer moved home, then
        the page starts its task afresh from `url` (its seed in the query) without a reload:
        a script call instead of a page load. False when the page offers none or the restart
        failed; the caller then resets everything again and loads `url` (so nothing a failed
        restart stored survives)."""
        await asyncio.gather(*(self._guard(c.reset(seed), f"reset {c.name}") for c in self._controls.values()),
                             self._clear_browser_state(), self._move_pointer(0, 0))
        try:
            restarted = await self._guard(self.page.evaluate(_RESTART_IN_PAGE_JS, url), "restart in page")
        except PlaywrightError as exc:
            log.warning("in-page restart of %s failed (%s); loading the page", self.id, str(exc).splitlines()[0])
            return False
        return restarted is True

    async def _move_pointer(self, x: float, y: float) -> None:
        await self._guard(self.page.mouse.move(x, y), "mouse move")
        self._pointer.x, self._pointer.y = x, y

    async def _clear_browser_state(self) -> None:
        assert self._context is not None and self._cdp is not None
        page_origin = _origin(self.page.url)
        origins = self._origins | ({page_origin} if page_origin else set())
        cdp = self._cdp
        # sessionStorage lives with the tab, not the origin: the `_seed_storage` script clears it.
        await asyncio.gather(self._guard(self._context.clear_cookies(), "clear cookies"),
                             *(self._guard(cdp.send("Storage.clearDataForOrigin",
                                                    {"origin": o, "storageTypes": _STORAGE_TYPES}), "clear storage")
                               for o in origins))

    # --- snapshots ---

    async def snapshot(self) -> SnapshotRef:
        self._check_alive()
        started = time.perf_counter()
        assert self._context is not None
        page = self.page
        cookies, page_state, *images = await asyncio.gather(
            self._guard(self._context.cookies(), "cookies"),
            self._guard(page.evaluate(PAGE_STATE_JS), "page storage"),
            *(self._guard(c.snapshot(), f"snapshot {c.name}") for c in self._controls.values()))
        origin = page_state["origin"]
        storage = {origin: {"local": page_state["local"], "session": page_state["session"]}} if _origin(page.url) else {}
        blob = BrowserSnapshot(url=page.url, scroll=tuple(page_state["scroll"]), pointer=(self._pointer.x, self._pointer.y),
                               cookies=[dict(c) for c in cookies], storage=storage,
                               services=dict(zip(self._controls, images, strict=True)), ports=dict(self._ports),
                               forms=page_state.get("forms") or {}, scrollers=page_state.get("scrollers") or {},
                               element_ids=self._elements.export())
        ref = SnapshotRef(id=f"bsnap-{uuid.uuid4().hex}", sandbox_id=self.id, kind=self.kind,
                          size_bytes=blob.size_bytes, meta={"url": page.url, "step": self._step,
                                                            "services": sorted(self._controls)})
        STORE.put(ref.id, blob)
        self._timings["snapshot_last"] = _ms(started)
        return ref

    async def restore(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> Observation:
        self._check_alive()
        started = time.perf_counter()
        blob = STORE.get(ref)
        if set(blob.services) != set(self._controls):
            raise BadRequest(f"snapshot {ref.id} has services {sorted(blob.services)}, this sandbox has "
                             f"{sorted(self._controls)}")
        storage = {_origin(rebase_url(o + "/", blob.ports, self._ports)) or o: areas for o, areas in blob.storage.items()}
        seeded = await self._prepare_navigation(
            storage, *(self._guard(self._controls[name].restore(image), f"restore {name}")
                       for name, image in blob.services.items()),
            self._restore_cookies(blob))
        after: list[Callable[[], Awaitable[Any]]] = [lambda: self._move_pointer(*blob.pointer)]
        if blob.forms.get("fields") or blob.forms.get("focus") is not None or blob.scroll != (0, 0) \
                or blob.scrollers.get("items"):
            after.append(lambda: self._guard(
                self.page.evaluate(RESTORE_VIEW_JS, [blob.forms, list(blob.scroll), blob.scrollers]), "restore view"))
        await self._goto(rebase_url(blob.url, blob.ports, self._ports), seeded=seeded, then=after)
        self._elements.load(blob.element_ids)
        self._step = int(ref.meta.get("step", 0))
        self._fork_observation = self._warm_observation = None
        timings: dict[str, float] = {}
        obs = await self._settle_and_observe(observe, timings)
        timings["restore"] = _ms(started)
        self._timings["restore_last"] = timings["restore"]
        return obs

    async def _restore_cookies(self, blob: BrowserSnapshot) -> None:
        assert self._context is not None
        await self._clear_browser_state()
        if blob.cookies:
            await self._guard(self._context.add_cookies(blob.cookies), "add cookies")  # type: ignore[arg-type]

    async def delete_snapshot(self, ref: SnapshotRef) -> None:
        STORE.delete(ref)

    async def fork(self, ref: SnapshotRef, *, sandbox_id: str, emit: EventSink | None = None) -> "BrowserSandbox":
        """A new sandbox restored from `ref`: a pre-started spare when one is ready
        (see spares.py), else one started now."""
        STORE.get(ref)  # fail fast, before starting a browser, when the snapshot is unknown
        spares = _fork_spares()
        started = time.perf_counter()
        child = spares.begin(self.config)
        try:
            if child is None:
                child = await type(self)._spawn(self.config, sandbox_id=sandbox_id, emit=emit)
            else:
                child.id, child._emit_sink, child._created_at = sandbox_id, emit, time.time()
            child._count_live()
            try:
                obs = await child.restore(ref)
                assert child._activity is not None
                child._fork_observation = (obs, child._activity.loads)
            except BaseException:
                await child.close()
                raise
        finally:
            spares.end(self.config)
        child._timings["fork"] = _ms(started)
        return child

    # --- queries ---

    async def query(self, queries: Sequence[StateQuery | dict[str, Any]]) -> list[StateResult]:
        """Answer `queries` at once, in their order: they only read, so the page's reads and
        the services' run side by side (a judge's reads cost one round trip, not one each)."""
        self._check_alive()
        return list(await asyncio.gather(*(self._answer(raw) for raw in queries)))

    async def _answer(self, raw: StateQuery | dict[str, Any]) -> StateResult:
        try:
            q = raw if isinstance(raw, BaseModel) else StateQueryAdapter.validate_python(raw)
        except ValidationError as exc:
            return StateResult.failure("failed", f"malformed query: {exc.errors(include_url=False)[0]['msg']}")
        try:
            return await self._guard(self._query_one(q), f"query {q.kind}")  # type: ignore[arg-type]
        except Timeout as exc:
            return StateResult.failure("timeout", exc.message)
        except InfraError as exc:
            if isinstance(exc, SandboxCrashed):
                raise
            self._check_alive()
            return StateResult.failure("failed", exc.message)

    async def _query_one(self, q: StateQuery) -> StateResult:
        page = self.page
        if isinstance(q, (AppStateQuery, SqlQuery)):
            control = self._controls.get(q.service)
            if control is None:
                return StateResult.failure("not_found", f"no service {q.service!r}; services: {sorted(self._controls)}")
            if isinstance(q, AppStateQuery):
                return StateResult(value=await control.state())
            ok, value = await control.sql(q.query, q.params)
            return StateResult(value=value) if ok else StateResult.failure("failed", str(value))
        if isinstance(q, UrlQuery):
            return StateResult(value=page.url)
        if isinstance(q, TitleQuery):
            return StateResult(value=await page.title())
        if isinstance(q, DomQuery):
            return await dom_query(page, q)
        if isinstance(q, LocalStorageQuery):
            return await local_storage_query(page, q)
        if isinstance(q, CookiesQuery):
            assert self._context is not None
            return await cookies_query(self._context, q)
        if isinstance(q, A11yQuery):
            assert self._cdp is not None
            return StateResult(value=await accessibility_tree_nested(self._cdp, q.max_nodes))
        return StateResult.failure("unsupported", f"browser sandboxes do not answer {q.kind!r} queries; "
                                                  f"they answer {', '.join(QUERY_KINDS)}")

    # --- streaming ---

    async def frames(self, options: ObserveOptions, *, max_fps: float = 10.0) -> AsyncIterator[Screenshot]:
        """Screencast frames as the screen changes, at most `max_fps` a second (see stream.py);
        the screencast stops when the iterator is closed."""
        self._check_alive()
        assert self._context is not None
        cdp = Cdp(await self._guard(self._context.new_cdp_session(self.page), "screencast session"))
        try:
            async for shot in screencast(cdp, options, self._screen, max_fps=max_fps, check_alive=self._check_alive):
                yield shot
        finally:
            if self.alive:
                try:
                    await asyncio.wait_for(cdp.send("Page.stopScreencast"), 5)
                    await asyncio.wait_for(cdp.detach(), 5)
                except (PlaywrightError, asyncio.TimeoutError) as exc:
                    log.warning("stopping the screencast of %s failed: %s", self.id, exc)


_live: dict[asyncio.AbstractEventLoop, int] = {}
_spares: dict[asyncio.AbstractEventLoop, ForkSpares] = {}


async def _spawn_spare(config: BrowserConfig, sandbox_id: str) -> BrowserSandbox:
    return await BrowserSandbox._spawn(config, sandbox_id=sandbox_id, emit=None)


async def _create_spare(config: BrowserConfig, sandbox_id: str) -> BrowserSandbox:
    spare = await BrowserSandbox._create_loaded(config, sandbox_id=sandbox_id, emit=None)
    try:
        obs = await spare._observe(None, {})
        version = await spare._guard(spare.page.evaluate(_CONTENT_VERSION_JS), "content version")
    except BaseException:
        await spare.close()
        raise
    assert spare._activity is not None
    spare._warm_observation = (obs, spare._activity.loads, version)
    return spare


def _spares_ready(config: BrowserConfig) -> int:
    """Spares ready for forks of this config (0 outside an event loop)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return 0
    return _spares[loop].ready(config) if loop in _spares else 0


def _spares_warm(config: BrowserConfig) -> int:
    """Warm spares ready for creates of this config (`CUA_BROWSER_POOL`; 0 outside an event loop)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return 0
    return _spares[loop].warm(config) if loop in _spares else 0


def _fork_spares() -> ForkSpares:
    loop = asyncio.get_running_loop()
    if loop not in _spares:
        _spares[loop] = ForkSpares(_spawn_spare, _create_spare)
    return _spares[loop]


async def _ready(value: T) -> T:
    return value


async def _accept(dialog: Dialog) -> None:
    try:
        await dialog.accept()
    except PlaywrightError as exc:
        log.debug("dialog already handled: %s", exc)


def _process_alive(pid: int | None) -> bool:
    """Whether `pid` runs (not gone, not a zombie). Unknown pids count as alive."""
    if pid is None:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _origin(url: str) -> str | None:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"
    return None


def _launch_timeout_ms(cfg: BrowserConfig) -> float:
    return (30 + sum(s.ready_timeout for s in cfg.services)) * 1000


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
