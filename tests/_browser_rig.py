"""The parts of a browser sandbox over a real Chromium, without the sandbox around them.

The per-concern tests (tests/browser/test_browser_<concern>.py) drive one part at a time, the
way `BrowserSandbox` composes them, against pages a loopback HTTP server serves (`Site`).
The browser is the process's shared one (`Runtime.acquire_shared_browser`); each rig has
a browser context of its own.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

from cua.info import SandboxEvent
from cua.observation import Size
from cua.sandboxes.browser.elements import ElementIds
from cua.sandboxes.browser.guard import Guard
from cua.sandboxes.browser.input import Input
from cua.sandboxes.browser.navigation import Navigator
from cua.sandboxes.browser.observe import Observer
from cua.sandboxes.browser.pages import Pages
from cua.sandboxes.browser.queries import Queries
from cua.sandboxes.browser.runtime import find_browser_pid, runtime
from cua.sandboxes.browser.services import ServiceControl
from cua.sandboxes.browser.settle import INIT_SCRIPT
from cua.sandboxes.browser.snapshot import Snapshots

__all__ = ["Rig", "Site", "browser_kept", "open_rig", "serve"]

#: A route: the body, or a function of the request path giving it (for slow answers).
Route = str | Callable[[str], str]


class Site:
    """Pages on a loopback port: path -> HTML (`/hang?s=N` answers after N seconds)."""

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                if path == "/hang":
                    time.sleep(float(query.partition("=")[2] or 5))
                    body = "late"
                else:
                    route = site.routes.get(path)
                    if route is None:
                        self.send_error(404)
                        return
                    body = route(self.path) if callable(route) else route
                data = body.encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8" if path != "/hang" else "text/plain")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the page went away before its answer (a closed context's long poll)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def serve(routes: dict[str, Route]) -> Iterator[Site]:
    site = Site(routes)
    try:
        yield site
    finally:
        site.close()


@dataclass
class Rig:
    """One sandbox's parts, wired as `BrowserSandbox` wires them."""

    guard: Guard
    pages: Pages
    elements: ElementIds
    navigator: Navigator
    input: Input
    observer: Observer
    snapshots: Snapshots
    queries: Queries
    ports: dict[str, int]
    controls: dict[str, ServiceControl]
    screen: Size
    events: list[SandboxEvent] = field(default_factory=list)


@asynccontextmanager
async def open_rig(site: Site | None = None, *, screen: Size = Size(width=640, height=400),
                   settle_timeout_ms: int = 3000, settle_quiet_ms: int = 40) -> AsyncIterator[Rig]:
    """A rig in a new context of the shared browser; `site`'s port counts as the rig's service."""
    events: list[SandboxEvent] = []
    rt = await runtime()
    try:
        browser, _exe, marker = await rt.acquire_shared_browser()
        try:
            guard = Guard("rig", 30.0, events.append)
            guard.browser, guard.browser_pid = browser, find_browser_pid(marker)
            pages = Pages(guard, settle_timeout_ms=settle_timeout_ms, settle_quiet_ms=settle_quiet_ms)
            pages.context = await browser.new_context(
                viewport={"width": screen.width, "height": screen.height}, device_scale_factor=1,
                service_workers="block")
            try:
                await pages.context.add_init_script(INIT_SCRIPT)
                await pages.open()
                ports: dict[str, int] = {"app": site.port} if site is not None else {}
                controls: dict[str, ServiceControl] = {}
                elements = ElementIds()
                navigator = Navigator(guard, pages, ports, navigation_timeout_ms=10_000)
                pointer = Input(guard, pages, elements, screen, navigation_timeout_ms=10_000)
                yield Rig(guard=guard, pages=pages, elements=elements, navigator=navigator, input=pointer,
                          observer=Observer(guard, pages, elements, screen),
                          snapshots=Snapshots(guard, pages, navigator, pointer, elements, controls, ports, kind="browser"),
                          queries=Queries(guard, pages, controls), ports=ports, controls=controls, screen=screen,
                          events=events)
            finally:
                guard.closed = True
                await pages.context.close()
        finally:
            await rt.release_shared_browser()
    finally:
        await rt.release()


@asynccontextmanager
async def browser_kept() -> AsyncIterator[None]:
    """Hold the shared browser (and the Playwright driver) for a test module, so that its
    rigs, each in a context of its own, do not start a browser each."""
    rt = await runtime()
    try:
        await rt.acquire_shared_browser()
        try:
            yield
        finally:
            await rt.release_shared_browser()
    finally:
        await rt.release()
