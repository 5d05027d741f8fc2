"""`MobileSandbox` (`kind: mobile`): a browser sandbox with a phone's device emulation,
touch input only, its apps as services and the phone shell in front of them.

It is the browser sandbox with small overrides: the context emulates the device
(`is_mobile`, `has_touch`, its size, pixel ratio and user agent) and runs the shell's
scripts (shell.py); input is touch through CDP, the phone's buttons and the launcher
(input.py); the queries answer the shell's own state as the app state of the pseudo-app
`shell`, and `url` as the open app's page. Snapshots, restore, fork and reset are the
browser's: the shell keeps its state in its page's sessionStorage, which a browser
snapshot holds, and its apps' data are services like any browser sandbox's.
"""

from __future__ import annotations

import contextlib
from typing import Any

from playwright.async_api import BrowserContext
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, ValidationError

from cua.errors import BadRequest
from cua.sandbox import EventSink, SandboxInfo
from cua.sandboxes.browser.queries import Queries
from cua.sandboxes.browser.sandbox import BrowserSandbox
from cua.sandboxes.browser.settle import INIT_SCRIPT
from cua.sandboxes.browser.snapshot import Snapshots
from cua.sandboxes.mobile.config import SHELL, MobileConfig
from cua.sandboxes.mobile.devices import device
from cua.sandboxes.mobile.input import MobileInput
from cua.sandboxes.mobile.shell import FRAME_SCRIPT, config_script, notifications
from cua.state import AppStateQuery, StateQuery, StateResult, UrlQuery

__all__ = ["MobileSandbox"]

_SHELL_STATE_JS = "() => window.__cuaShell ? window.__cuaShell.state() : null"


class MobileSandbox(BrowserSandbox):
    """A phone (or tablet) an agent sees and touches. See the module docstring."""

    kind = "mobile"
    config_model = MobileConfig
    config: MobileConfig

    def __init__(self, config: MobileConfig, sandbox_id: str, emit: EventSink | None) -> None:
        super().__init__(config, sandbox_id, emit)
        self._input = MobileInput(self._guard, self._pages, self._elements, self._screen,
                                  navigation_timeout_ms=config.navigation_timeout_ms, own=self._own)
        self._snapshots = Snapshots(self._guard, self._pages, self._navigator, self._input, self._elements,
                                    self._controls, self._ports, kind=self.kind)
        self._queries = _MobileQueries(self, self._guard, self._pages, self._controls, self._own)

    @classmethod
    async def create(cls, config: BaseModel | dict[str, Any], *, sandbox_id: str,
                     emit: EventSink | None = None) -> "MobileSandbox":
        if not isinstance(config, MobileConfig):
            try:
                config = MobileConfig.model_validate(config if isinstance(config, dict) else config.model_dump())
            except ValidationError as exc:
                raise BadRequest(f"invalid mobile config: {exc.error_count()} error(s): "
                                 f"{exc.errors(include_url=False)[0]['msg']}",
                                 details={"errors": exc.errors(include_url=False, include_context=False)}) from exc
        created = await super().create(config, sandbox_id=sandbox_id, emit=emit)
        assert isinstance(created, MobileSandbox)
        return created

    async def _new_context(self) -> BrowserContext:
        cfg, browser = self.config, self._guard.browser
        assert browser is not None
        profile = device(cfg.device)
        context = await self._guard.call(browser.new_context(
            viewport={"width": self._screen.width, "height": self._screen.height},
            screen={"width": self._screen.width, "height": self._screen.height},
            device_scale_factor=profile.device_scale_factor, is_mobile=True, has_touch=True,
            user_agent=profile.user_agent, locale=cfg.locale, timezone_id=cfg.timezone,
            service_workers="block"), "new_context")
        try:
            for script in (INIT_SCRIPT, FRAME_SCRIPT, config_script(cfg, self._ports)):
                await self._guard.call(context.add_init_script(script), "init script")
            await self._guard.call(context.expose_binding("__cuaPhoneNotifications", self._notifications),
                                   "notifications binding")
        except BaseException:
            with contextlib.suppress(PlaywrightError):
                await context.close()
            raise
        return context

    async def _notifications(self, source: Any) -> list[dict[str, Any]]:
        """The shade's notifications (shell.py), asked for by the shell page only."""
        frame = source.get("frame") if isinstance(source, dict) else None
        if frame is None or frame.parent_frame is not None:
            return []
        return await notifications(self._controls, self.config.app_names)

    async def shell_state(self) -> dict[str, Any]:
        """The shell's state: which screen shows, the open app and its page's URL, recents
        (most recent first), each running app's back stack, the shade, keyboard and dialog,
        the permissions given and the shares made."""
        page = self._pages.page
        state = await self._guard.call(page.evaluate(_SHELL_STATE_JS), "shell state")
        if not isinstance(state, dict):
            return {"screen": None, "open_app": None, "url": None, "recents": []}
        frames = {f.name: f.url for f in page.main_frame.child_frames}
        state["url"] = frames.get(state["open_app"]) if state.get("open_app") else None
        stacks = state.get("stacks") or {}
        # an app in recents whose page is not loaded (after a restore) shows the top of its stack when reopened
        state["app_urls"] = {app: frames.get(app) or (stacks.get(app) or [None])[-1] for app in state.get("recents", [])}
        return state

    def info(self) -> SandboxInfo:
        base = super().info()
        profile = device(self.config.device)
        details = {**base.details, "device": profile.id, "device_title": profile.title,
                   "orientation": self.config.orientation, "device_scale_factor": profile.device_scale_factor,
                   "apps": self.config.app_names}
        return base.model_copy(update={"details": details})


class _MobileQueries(Queries):
    """The browser's queries, plus the shell's state as app `shell` and `url` as the open app's page."""

    def __init__(self, sandbox: MobileSandbox, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sandbox = sandbox

    async def _one(self, q: StateQuery) -> StateResult:
        if isinstance(q, AppStateQuery) and q.service == SHELL:
            return StateResult(value=await self._sandbox.shell_state())
        if isinstance(q, UrlQuery):
            state = await self._sandbox.shell_state()
            return StateResult(value=state["url"] or self._pages.page.url)
        return await super()._one(q)
