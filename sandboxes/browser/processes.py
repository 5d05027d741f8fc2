"""`Processes`: one browser sandbox's Chromium and services, started in its isolation and stopped.

- `container`: its own Chromium inside a bubblewrap namespace (own network with only
  loopback, own pids, own /tmp), its services inside the same namespace; the host talks
  to the services over unix sockets (container.py).
- `shared`: the process's shared browser (runtime.py), its services on host loopback
  ports, each its own process or an instance inside the app host its spec names
  (services.py).

Either way the sandbox gets a connected browser, the ports its services' pages are
served on and a control per service; stopping closes all of it, each step bounded.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext
from playwright.async_api import Error as PlaywrightError

from cua.errors import InfraError
from cua.sandbox import ServiceSpec
from cua.sandboxes.browser.config import BrowserConfig
from cua.sandboxes.browser.container import Container
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.launcher import Executable, find_executable, switches
from cua.sandboxes.browser.runtime import Runtime, find_browser_pid, runtime
from cua.sandboxes.browser.services import HostedApp, HostService, ServiceControl, start_host_service

__all__ = ["Processes"]

#: How long one step of stopping may take before it is given up (and reported).
STOP_STEP_S = 10.0


class Processes:
    """The browser and services of one sandbox, in its config's isolation."""

    def __init__(self, config: BrowserConfig, guard: Guard, ports: dict[str, int],
                 controls: dict[str, ServiceControl]) -> None:
        self.config = config
        self._guard = guard
        #: Filled in by `start`: service name -> port of its pages, and -> its control.
        self._ports = ports
        self._controls = controls
        self.rt: Runtime | None = None
        self.container: Container | None = None
        self.host_services: list[HostService | HostedApp] = []
        self.executable: Executable | None = None
        self._host_dir: Path | None = None
        self._shared = False

    async def start(self, sandbox_id: str) -> Browser:
        """Start the services and the browser; the browser's death is the guard's to report."""
        self.rt = await runtime()
        if self.config.isolation == "container":
            await self._start_container(self.rt, sandbox_id)
        else:
            await self._start_shared(self.rt, sandbox_id)
        browser = self._guard.browser
        assert browser is not None
        browser.on("disconnected", self._guard.on_disconnected)
        return browser

    async def _start_container(self, rt: Runtime, sandbox_id: str) -> None:
        cfg = self.config
        self.executable = find_executable()
        marker = f"{sandbox_id[:40]}-{uuid.uuid4().hex[:12]}"
        self.container = self._guard.container = Container.prepare(
            sandbox_id=sandbox_id, chromium=self.executable.path, services=cfg.services, seed=cfg.seed,
            extra_ro_binds=cfg.extra_ro_binds, memory_mb=cfg.memory_limit_mb, pids=cfg.pids_limit)
        try:
            self._guard.browser = await rt.playwright.chromium.launch(
                executable_path=str(self.container.wrapper), headless=True,
                **switches(cfg.extra_args, marker, scrollbars=cfg.scrollbars), timeout=_launch_timeout_ms(cfg),
                handle_sigint=False, handle_sigterm=False, handle_sighup=False)
        except PlaywrightError as exc:
            status = self.container.status()
            why = status.get("error") or str(exc).splitlines()[0]
            raise InfraError(f"browser container failed to start: {why}", details={"status": status}) from exc
        self._guard.browser_pid = find_browser_pid(marker)
        self._ports.update(self.container.ports)
        self._controls.update({name: ServiceControl(name, path, cfg.call_timeout_s)
                               for name, path in self.container.sockets.items()})

    async def _start_shared(self, rt: Runtime, sandbox_id: str) -> None:
        cfg = self.config
        if cfg.services:
            self._host_dir = Path(tempfile.mkdtemp(prefix=f"cua-browser-{sandbox_id[:24]}-"))
            # each service joins host_services as soon as it runs, so that a start cancelled
            # half way (a spare no longer wanted) leaves none of them running after `stop`
            started = await asyncio.gather(*(self._start_host_service(s) for s in cfg.services), return_exceptions=True)
            self.host_services = [s for s in started if isinstance(s, (HostService, HostedApp))]  # in the config's order
            failures = [s for s in started if isinstance(s, BaseException)]
            if failures:
                raise failures[0]
            self._ports.update({s.spec.name: s.port for s in self.host_services})
            self._controls.update({s.spec.name: ServiceControl(s.spec.name, s.socket_path, cfg.call_timeout_s)
                                   for s in self.host_services})
        self._guard.browser, self.executable, marker = await rt.acquire_shared_browser(scrollbars=cfg.scrollbars)
        self._shared = True
        self._guard.browser_pid = find_browser_pid(marker)

    async def _start_host_service(self, spec: ServiceSpec) -> HostService | HostedApp:
        assert self._host_dir is not None
        service = await start_host_service(spec, str(self._host_dir / f"{spec.name}.sock"), self.config.seed,
                                           self._guard.on_service_died, use_app_host=self.config.shared_app_host)
        self.host_services.append(service)
        return service

    async def stop(self, context: BrowserContext | None) -> list[str]:
        """Close the sandbox's browser context, then all that `start` started (whatever
        part of it did start); the problems met on the way, each step bounded."""
        problems: list[str] = []

        async def step(what: str, aw: Awaitable[Any]) -> None:
            try:
                await asyncio.wait_for(aw, STOP_STEP_S)
            except (PlaywrightError, OSError, asyncio.TimeoutError, InfraError) as exc:
                problems.append(f"{what}: {type(exc).__name__}: {exc}")

        browser = self._guard.browser
        if browser is not None:
            browser.remove_listener("disconnected", self._guard.on_disconnected)
        if context is not None:
            await step("close context", context.close())
        if browser is not None and not self._shared:
            await step("close browser", browser.close())
        if self._shared and self.rt is not None:
            await step("release shared browser", self.rt.release_shared_browser(scrollbars=self.config.scrollbars))
        for control in self._controls.values():
            await step(f"close control {control.name}", control.aclose())
        for svc in self.host_services:
            await step(f"stop service {svc.spec.name}", svc.stop())
        if self.container is not None:
            await step("remove container", self.container.cleanup())
        if self._host_dir is not None:
            shutil.rmtree(self._host_dir, ignore_errors=True)
        if self.rt is not None:
            rt, self.rt = self.rt, None
            await step("release playwright", rt.release())
        return problems


def _launch_timeout_ms(cfg: BrowserConfig) -> float:
    return (30 + sum(s.ready_timeout for s in cfg.services)) * 1000
