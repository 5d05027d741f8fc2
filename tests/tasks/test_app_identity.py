"""Each bundled app has a look of its own (issue 32), built on its design tokens.

The apps once shared one stylesheet and one dark top bar, so an agent trained on one app
learned one look. Now base.css is a reset and each app's app.css opens with its design
tokens on :root (the style contract: tasks/apps/CONTRACT.md's bundled apps, themes.css).

In Chromium: no two apps render body, header and primary button alike (font family or
palette), their text and primary buttons keep WCAG AA contrast, and no page of theirs
overflows sideways on a 390 px phone. In the stylesheets: every colour comes from a token
(a literal colour outside :root would escape a theme), and every token used is declared.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import uvicorn
from _apps_common import contrast
from playwright.async_api import Browser, Page

from cua.tasks.apps import load_app
from cua.tasks.apps.base import SHARED_STATIC, WebApp, build_asgi

APPS_DIR = SHARED_STATIC.parent
#: The bundled apps with an identity of their own, and pages that show it (the first has a
#: primary button). The phone apps (tasks/apps/phone.py) and real products style themselves.
PAGES: dict[str, list[str]] = {
    "todo": ["/", "/lists/1", "/todos/1", "/search?q=call"],
    "shop": ["/p/1", "/", "/c/laptops", "/cart", "/checkout", "/orders"],
    "mail": ["/compose", "/folder/inbox", "/message/1", "/contacts"],
    "travel": ["/", "/flights?from=BOS&to=SFO&date=2026-03-10", "/flights/1", "/trips"],
    "forum": ["/submit", "/", "/posts/1", "/search?q=python"],
    "calendar": ["/event/new", "/month/2026-03", "/week/2026-03-02", "/day/2026-03-02", "/event/1", "/invites"],
    "kanban": ["/b/1", "/"],
    "contacts": ["/contacts", "/contacts/1", "/contacts/new", "/companies", "/deals"],
    "notes": ["/notes/1", "/", "/search?q=plan"],
    "sheets": ["/sheets/1", "/"],
    "settings": ["/general", "/notifications", "/security", "/users", "/api-keys", "/audit"],
    "chat": ["/channels/new", "/", "/people", "/people/2", "/search?q=deploy", "/channels"],
    "bank": ["/transfer", "/", "/accounts/1", "/cards", "/scheduled", "/security", "/payees/new"],
    "drive": ["/folders/1/upload", "/folders/1", "/folders/2?view=grid", "/items/40", "/search?type=pdf", "/trash", "/shared"],
    "review": ["/r/ledger-api/pull/302", "/", "/pulls", "/r/ledger-api/pull/302/files", "/issues", "/u/noor", "/notifications",
               "/r/ledger-api/blob/go.mod", "/repos"],
    "hr": ["/expenses", "/", "/expenses/48", "/time-off", "/approvals", "/approvals/expenses/11", "/people", "/people/2", "/org",
           "/pay", "/pay/2026-01", "/profile", "/receipts"],
    "health": ["/claims/new", "/", "/coverage", "/coverage/card", "/care?specialty=dermatology", "/appointments", "/prescriptions",
               "/claims/1", "/messages/1", "/labs", "/profile"],
    "maps": ["/search?cat=pharmacy", "/", "/places/9", "/places/9/save", "/places/9/suggest", "/directions?from=home&to=9&mode=transit",
             "/lists/2", "/contributions", "/history"],
    "social": ["/", "/explore", "/p/42", "/u/ines_duarte", "/u/ines_duarte/following", "/notifications", "/messages",
               "/lists/1", "/settings", "/search?q=coffee&type=people"],
}
TOKENS = ("--bg", "--surface", "--surface-2", "--text", "--text-muted", "--border", "--accent", "--on-accent",
          "--danger", "--success", "--warning", "--focus", "--font-ui", "--font-display", "--radius", "--gap")
NAMED_COLOURS = ("white", "black", "red", "green", "blue", "gray", "grey", "silver", "yellow", "orange", "purple",
                 "navy", "teal", "maroon", "olive", "lime", "aqua", "fuchsia", "pink", "brown", "gold")
PHONE_WIDTH = 390

# --- the stylesheets (no browser) ---


def _strip(css: str) -> str:
    """CSS without comments and without url(...) contents (an icon's SVG path is no colour)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    return re.sub(r'url\((["\']).*?\1\)|url\([^)"\']*\)', "url()", css, flags=re.S)


def _root_blocks(css: str) -> list[str]:
    return re.findall(r"(?<![\w\]-]):root\s*\{([^}]*)\}", css)


def _colour_literals(css: str) -> list[str]:
    """Every literal colour in `css` outside its :root blocks."""
    body = re.sub(r"(?<![\w\]-]):root\s*\{[^}]*\}", "", css)
    named = "|".join(NAMED_COLOURS)
    pattern = rf"#[0-9a-fA-F]{{3,8}}\b|\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch)\(|(?<![\w-])(?:{named})(?![\w-])"
    # a property value only: selectors and property names may hold these words (.green, white-space)
    values = re.findall(r":\s*([^;{}]*)(?=[;}])", re.sub(r"[^{}]*\{", "{", body))
    return [m for v in values for m in re.findall(pattern, v)]


def test_the_colour_finder_finds_colours() -> None:
    """The finder this file relies on sees each form of literal colour, and only values."""
    css = ":root{--a:#fff}.x{color:#1a2b3c;background:rgb(1,2,3)}.white-space{white-space:nowrap;border:1px solid white}"
    assert _colour_literals(_strip(css)) == ["#1a2b3c", "rgb(", "white"]
    assert _colour_literals(_strip('.i{mask:url("data:image/svg+xml,<svg fill=\'red\'/>")}')) == []


@pytest.mark.parametrize("app_name", sorted(PAGES))
def test_every_colour_of_an_app_comes_from_its_tokens(app_name: str) -> None:
    css = _strip((APPS_DIR / app_name / "static" / "app.css").read_text())
    roots = _root_blocks(css)
    assert roots, f"{app_name}/app.css declares no design tokens on :root"
    declared = {m for block in roots for m in re.findall(r"(--[\w-]+)\s*:", block)}
    assert not set(TOKENS) - declared, f"{app_name}: tokens of the contract missing: {set(TOKENS) - declared}"
    assert not _colour_literals(css), f"{app_name}: colours outside :root tokens: {_colour_literals(css)}"
    used = set(re.findall(r"var\((--[\w-]+)", css))
    inline = {"--c", "--icon"}  # set per element: a record's own colour (its style attribute), an icon's mask
    assert not used - declared - inline, f"{app_name}: tokens used but never declared: {used - declared - inline}"


#: (foreground token, background token) pairs every app's default look reads at body size.
TEXT_PAIRS = [("--text", "--bg"), ("--text", "--surface"), ("--text", "--surface-2"), ("--text-muted", "--bg"),
              ("--text-muted", "--surface"), ("--text-muted", "--surface-2"), ("--on-accent", "--accent"),
              ("--danger", "--surface")]


def _hex_rgb(value: str) -> list[float]:
    digits = value.strip().lstrip("#")
    digits = "".join(c * 2 for c in digits) if len(digits) == 3 else digits
    return [float(int(digits[i:i + 2], 16)) for i in (0, 2, 4)]


@pytest.mark.parametrize("app_name", sorted(PAGES))
def test_the_default_tokens_keep_text_legible(app_name: str) -> None:
    """WCAG AA (4.5:1) for the token pairs the pages put text on: muted captions on the
    canvas as much as body text on a card (the forum's grey canvas once took its muted
    comment headers to 4.0:1)."""
    root = _root_blocks(_strip((APPS_DIR / app_name / "static" / "app.css").read_text()))[0]
    tokens = dict(re.findall(r"(--[\w-]+)\s*:\s*(#[0-9a-fA-F]{3,6})\b", root))
    for fg, bg in TEXT_PAIRS:
        ratio = contrast(_hex_rgb(tokens[fg]), _hex_rgb(tokens[bg]))
        assert ratio >= 4.5, f"{app_name}: {fg} on {bg} is {ratio:.2f}:1"


def test_the_shared_stylesheet_is_a_reset_with_no_look_of_its_own() -> None:
    css = _strip((SHARED_STATIC / "base.css").read_text())
    assert not _colour_literals(css), _colour_literals(css)
    assert "font-family:var(--font-ui)" in css and not re.search(r'font(-family)?:[^;}]*"', css)
    assert not set(re.findall(r"var\((--[\w-]+)", css)) - set(TOKENS)


# --- in Chromium ---


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def ports() -> AsyncIterator[dict[str, int]]:
    """Every app of PAGES served as a sandbox serves it (TCP, its seed-0 data)."""
    servers: list[tuple[uvicorn.Server, asyncio.Task[None]]] = []
    found: dict[str, int] = {}
    try:
        for name in PAGES:
            app: WebApp = load_app(name)
            app.reset(0)
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            server = uvicorn.Server(uvicorn.Config(build_asgi(app), log_level="warning", lifespan="off", access_log=False))
            servers.append((server, asyncio.create_task(server.serve(sockets=[sock]))))
            found[name] = int(sock.getsockname()[1])
        for server, task in servers:
            while not server.started:
                assert not task.done(), "an app server stopped while starting"
                await asyncio.sleep(0.01)  # uvicorn offers no started event, only this flag
        yield found
    finally:
        for server, _ in servers:
            server.should_exit = True
        for _, task in servers:
            await task


#: Colours as the page paints them: any CSS colour (color-mix, color(srgb ...)) through a
#: canvas to RGBA, the background an element shows composited over its ancestors'.
LOOK_JS = """() => {
  const ctx = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
  const rgba = (c) => { ctx.clearRect(0, 0, 1, 1); ctx.fillStyle = '#000'; ctx.fillStyle = c; ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data; return [d[0], d[1], d[2], d[3] / 255]; };
  const over = (top, under) => top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3])).concat([1]);
  const bg = (el) => { const layers = []; for (let e = el; e; e = e.parentElement) layers.push(rgba(getComputedStyle(e).backgroundColor));
    return layers.reverse().reduce((acc, c) => over(c, acc), [255, 255, 255, 1]); };
  const fg = (el) => over(rgba(getComputedStyle(el).color), bg(el));
  const part = (el) => el && {font: getComputedStyle(el).fontFamily, bg: bg(el).slice(0, 3), fg: fg(el).slice(0, 3)};
  const button = document.querySelector('button.primary, .button.primary');
  const header = document.querySelector('header.appbar');
  return {body: part(document.body), header: part(header), brand: part(header && header.querySelector('.brand')),
          button: part(button)};
}"""


async def _look(page: Page, url: str) -> dict[str, Any]:
    response = await page.goto(url, wait_until="load")
    assert response is not None and response.ok, (url, response and response.status)
    look: dict[str, Any] = await page.evaluate(LOOK_JS)
    return look


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_no_two_apps_look_alike_and_their_text_is_legible(browser: Browser, ports: dict[str, int]) -> None:
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = await context.new_page()
        looks = {name: await _look(page, f"http://127.0.0.1:{ports[name]}{pages[0]}") for name, pages in PAGES.items()}
    finally:
        await context.close()
    for name, look in looks.items():
        assert look["header"] and look["button"], f"{name} {PAGES[name][0]}: no app bar or no primary button"
        for part, least in (("body", 4.5), ("brand", 3.0), ("button", 4.5)):  # the brand is large text: 3:1
            ratio = contrast(look[part]["fg"], look[part]["bg"])
            assert ratio >= least, f"{name}: {part} text contrast {ratio:.2f} < {least} ({look[part]})"

    def fonts(look: dict[str, Any]) -> tuple[str, ...]:
        return tuple(look[p]["font"] for p in ("body", "header", "button"))

    def palette(look: dict[str, Any]) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(round(v) for v in look[p][k]) for p in ("body", "header", "button") for k in ("bg", "fg"))

    for a, b in itertools.combinations(looks, 2):
        assert fonts(looks[a]) != fonts(looks[b]) or palette(looks[a]) != palette(looks[b]), f"{a} and {b} look alike"
        # the primary action is each product's own colour: no two apps share it
        assert looks[a]["button"]["bg"] != looks[b]["button"]["bg"], f"{a} and {b} share a primary button colour"


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("app_name", sorted(PAGES))
async def test_no_page_overflows_sideways_on_a_phone(browser: Browser, ports: dict[str, int], app_name: str) -> None:
    context = await browser.new_context(viewport={"width": PHONE_WIDTH, "height": 844})
    try:
        page = await context.new_page()
        for path in PAGES[app_name]:
            response = await page.goto(f"http://127.0.0.1:{ports[app_name]}{path}", wait_until="load")
            assert response is not None and response.ok, (path, response and response.status)
            width = await page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE_WIDTH, f"{app_name} {path}: {width} px wide on a {PHONE_WIDTH} px phone"
    finally:
        await context.close()


def test_the_pages_named_here_exist() -> None:
    assert all((APPS_DIR / name / "static" / "app.css").is_file() for name in PAGES)
    assert Path(SHARED_STATIC / "base.css").is_file()


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_the_calendar_rail_shows_this_month_without_taking_the_grid_s_names(browser: Browser,
                                                                                 ports: dict[str, int]) -> None:
    """The mini-month a calendar app keeps in its rail: every day of the month's six weeks
    links to its day, today is marked, and its links stay out of the tab order with ISO
    names, so the main grid's day links remain the only ones named "Monday March 2"."""
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = await context.new_page()
        await page.goto(f"http://127.0.0.1:{ports['calendar']}/month/2026-04", wait_until="load")
        rail = page.get_by_role("complementary", name="This month")
        assert await rail.get_by_role("link").count() == 42
        assert await rail.locator("a:not([tabindex='-1'])").count() == 0
        assert await rail.locator(".mm-today").get_attribute("aria-label") == "2026-03-02"
        assert await page.get_by_role("link", name="Monday March 30", exact=True).count() == 1
        await rail.get_by_role("link", name="2026-03-17").click()
        await page.wait_for_url("**/day/2026-03-17")
    finally:
        await context.close()
