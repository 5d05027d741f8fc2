"""A bundled app served in process for its tests (test_apps_a, test_apps_b, test_<app>_app): the
page's side through Starlette's TestClient, whose requests carry a `client` address the framework
treats as TCP, and the control side called without one, as the unix socket does; and the checks
every app's tests make alike (a seeded reset, a table of refused forms, a legible navigation)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, TypeVar

import pytest
import pytest_asyncio
from _app_server import open_tab, serving_bundled
from playwright.async_api import Browser
from starlette.testclient import TestClient

from cua.tasks.apps import load_app
from cua.tasks.apps.base import WebApp, build_asgi
from cua.variant import Variant

__all__ = ["NAV_COLOURS_JS", "Control", "Running", "assert_legible", "assert_refusals", "check_nav_legible", "check_reset_is_seeded",
           "contrast", "nav_colours", "open_app", "running_fixture", "served_fixture"]

A = TypeVar("A", bound=WebApp)


class Control:
    """Calls the control endpoints (`/__cua/...`) the way the unix socket does: with no client address."""

    def __init__(self, asgi: Any) -> None:
        async def no_client(scope: Any, receive: Any, send: Any) -> None:
            await asgi({**scope, "client": None}, receive, send)

        self.client = TestClient(no_client)

    def get(self, path: str) -> Any:
        return self.client.get(path)

    def post(self, path: str, **kwargs: Any) -> Any:
        return self.client.post(path, **kwargs)

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.get("/__cua/state").json()
        return state

    def reset(self, seed: int = 0) -> None:
        assert self.post("/__cua/reset", json={"seed": seed}).status_code == 200

    def sql(self, query: str, params: list[Any] | None = None) -> Any:
        return self.post("/__cua/sql", json={"query": query, "params": params or []})

    def rows(self, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.sql(query, params).json()["rows"]
        return rows

    def value(self, query: str, params: list[Any] | None = None) -> Any:
        """The first column of the first row `query` reads."""
        return next(iter(self.rows(query, params)[0].values()))


def open_app(name: str) -> tuple[Any, TestClient, Control]:
    """(the app object, the page's client, the control side) of bundled app `name`, fresh."""
    app = load_app(name)
    asgi = build_asgi(app)
    # the page side as the sandbox's browser reaches it: the app host refuses a non-loopback Host
    return app, TestClient(asgi, base_url="http://127.0.0.1"), Control(asgi)


Running = tuple[Any, TestClient, Control]


def running_fixture(name: str, kind: type[WebApp] = WebApp) -> Callable[[], Running]:
    """The fixture `running`: bundled app `name` (a `kind`) opened fresh for each test (`open_app`)."""

    @pytest.fixture(name="running")
    def running() -> Running:
        opened = open_app(name)
        assert isinstance(opened[0], kind)
        return opened

    return running


def served_fixture(name: str, kind: type[A]) -> Callable[[], AsyncIterator[tuple[A, str]]]:
    """The module-wide fixture `served`: bundled app `name` (a `kind`) served over TCP for Chromium."""

    @pytest_asyncio.fixture(loop_scope="module", name="served")
    async def served() -> AsyncIterator[tuple[A, str]]:
        async with serving_bundled(name, kind) as pair:
            yield pair

    return served


def check_reset_is_seeded(ctl: Control) -> None:
    """A reset to a seed always gives that seed's data, and another seed other data."""
    ctl.reset(3)
    first = ctl.state()
    ctl.reset(4)
    assert ctl.state() != first
    ctl.reset(3)
    assert ctl.state() == first


def assert_refusals(web: TestClient, cases: Iterable[tuple[str, dict[str, str], int | tuple[int, ...], str]], *,
                    shows: str = "", hides: str = "", follow_redirects: bool = True) -> None:
    """Posts each (path, form, status or statuses, reason): each is refused with that status and
    its reason on the page, which also `shows` and does not `hides` (where given)."""
    for path, data, status, reason in cases:
        resp = web.post(path, data=data, follow_redirects=follow_redirects)
        allowed = status if isinstance(status, tuple) else (status,)
        assert resp.status_code in allowed and reason in resp.text, (path, data, resp.status_code, resp.text[-500:])
        assert shows in resp.text and not (hides and hides in resp.text), (path, data, resp.text[-500:])


# the app bar's link colour on the bar's background; color-mix() computes to color(srgb r g b) in 0..1
NAV_COLOURS_JS = """() => {
  const rgb = (s) => s.match(/[\\d.]+/g).slice(0, 3).map(Number).map((v) => s.startsWith('color(') ? v * 255 : v);
  const bar = document.querySelector('header.appbar');
  const link = bar.querySelector('nav a');
  return {fg: rgb(getComputedStyle(link).color), bg: rgb(getComputedStyle(bar).backgroundColor)};
}"""


def _luminance(rgb: list[float]) -> float:
    def channel(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.03928 else float(((v + 0.055) / 1.055) ** 2.4)
    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: list[float], b: list[float]) -> float:
    """WCAG's contrast ratio of two colours (0-255 channels): 1 to 21."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def assert_legible(fg: list[float], bg: list[float], why: object) -> None:
    """Text `fg` on `bg` (0-255 channels) meets WCAG AA's 4.5:1 contrast."""
    assert contrast(fg, bg) >= 4.5, why


async def check_nav_legible(browser: Browser, served: tuple[WebApp, str], path: str, theme: str) -> None:
    """The app bar's links on page `path` of the `served` app meet AA contrast in `theme`."""
    app, base = served
    colours = await nav_colours(browser, app, base + path, theme)
    assert_legible(colours["fg"], colours["bg"], (theme, colours))


async def nav_colours(browser: Browser, app: Any, url: str, theme: str, js: str = NAV_COLOURS_JS) -> dict[str, Any]:
    """What `js` reads from `url` with `app` in `theme`; the app is back in its default look after."""
    app.variant = Variant(theme=theme)
    try:
        tab = await open_tab(browser, url)
        colours: dict[str, Any] = await tab.evaluate(js)
    finally:
        app.variant = Variant()
    return colours


def judge_state(control: Control, instance: Any) -> dict[str, Any]:
    """A template's app queries answered as the sandbox answers them (the control socket):
    its judge's final (or initial) state, for judging an app served in process."""
    from cua.state import AppStateQuery, SqlQuery, StateResult
    from cua.task import query_key

    out: dict[str, Any] = {}
    for q in instance.judge.queries():
        if isinstance(q, AppStateQuery):
            out[query_key(q)] = StateResult(value=control.state())
        elif isinstance(q, SqlQuery):
            reply = control.sql(q.query, list(q.params))
            out[query_key(q)] = (StateResult(value=reply.json()["rows"]) if reply.status_code == 200
                                 else StateResult.failure("failed", reply.text))
    return out
