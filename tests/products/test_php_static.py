"""The PHP products' static files (tasks/products/static.php, used by MediaWiki's and
Roundcube's routers) carry the validators and expiry a real install's Apache sends, so a
browser keeps them between pages: `php -S` alone sends neither, and drops a router's
headers, so every page load fetched every stylesheet, script and font again, one at a time
through the single worker (bench/realapp_step.py). The bytes and Content-Type are unchanged;
the routers' refusals (a path out of the docroot, a file that is not static) still hold.

The HTTP checks run each product's own router under `php -S` on its install (no product
service); the browser check loads a MediaWiki page twice in Chromium."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cua.tasks.products.mediawiki import build as mediawiki_build
from cua.tasks.products.roundcube import build as roundcube_build

PRODUCTS = Path(__file__).resolve().parents[2] / "tasks" / "products"
#: product -> (router, docroot, a static file under it, its Content-Type as `php -S` sends it)
CASES = {
    "mediawiki": (PRODUCTS / "mediawiki" / "router.php", mediawiki_build.INSTALL_PATH,
                  "/resources/assets/poweredby_mediawiki_88x31.png", "image/png"),
    "roundcube": (PRODUCTS / "roundcube" / "router.php", roundcube_build.DOCROOT,
                  "/program/js/app.min.js", "application/javascript"),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(params=sorted(CASES))
def router(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, Path, str, str]]:
    """(product, base URL, docroot, static path, content type) of a `php -S` running the product's router."""
    product = str(request.param)
    script, docroot, path, content_type = CASES[product]
    if not (docroot / path.lstrip("/")).is_file():
        pytest.skip(f"{product} is not installed here (scripts/setup.sh installs it)")
    port = _free_port()
    proc = subprocess.Popen(["php", "-S", f"127.0.0.1:{port}", "-t", str(docroot), str(script)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "MW_INSTALL_PATH": str(docroot)})
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"{base}/.cua-idle", timeout=5)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"php -S with the {product} router did not start") from None
                time.sleep(0.02)
        yield product, base, docroot, path, content_type
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_static_file_comes_with_validators_and_the_products_expiry(router: tuple[str, str, Path, str, str]) -> None:
    product, base, docroot, path, content_type = router
    r = httpx.get(base + path + "?s=1")
    assert r.status_code == 200
    assert r.content == (docroot / path.lstrip("/")).read_bytes()
    assert r.headers["content-type"] == content_type
    assert r.headers["last-modified"].endswith(" GMT") and r.headers["etag"].startswith('"')
    assert "x-powered-by" not in r.headers
    if product == "roundcube":  # its .htaccess: ExpiresDefault "access plus 1 month"
        assert r.headers["cache-control"] == "max-age=2592000" and "expires" in r.headers
    else:  # Debian's Apache for MediaWiki sets no expiry: validators only
        assert "cache-control" not in r.headers
    head = httpx.head(base + path)
    assert head.status_code == 200 and head.content == b"" and head.headers["etag"] == r.headers["etag"]


def test_a_conditional_request_for_an_unchanged_file_is_answered_304(router: tuple[str, str, Path, str, str]) -> None:
    _, base, _, path, _ = router
    first = httpx.get(base + path)
    same = httpx.get(base + path, headers={"If-None-Match": first.headers["etag"]})
    assert same.status_code == 304 and same.content == b""
    since = httpx.get(base + path, headers={"If-Modified-Since": first.headers["last-modified"]})
    assert since.status_code == 304
    other = httpx.get(base + path, headers={"If-None-Match": '"0-0"'})
    assert other.status_code == 200 and other.content == first.content
    older = httpx.get(base + path, headers={"If-Modified-Since": "Thu, 01 Jan 1998 00:00:00 GMT"})
    assert older.status_code == 200 and older.content == first.content


def test_the_routers_refusals_still_hold_for_static_paths(router: tuple[str, str, Path, str, str]) -> None:
    _, base, _, path, _ = router
    top = path.split("/")[1]
    for probe in (f"/{top}/%2e%2e/%2e%2e/etc/passwd.css", f"/{top}/../../etc/passwd.css", f"/{top}/no-such-file.css"):
        r = httpx.get(base + probe)
        assert r.status_code in (403, 404), (probe, r.status_code)
        assert b"root:" not in r.content
    assert httpx.get(base + path, headers={"Host": "evil.example"}).status_code == 403


@pytest.mark.slow
def test_a_browser_keeps_mediawikis_static_files_between_pages(tmp_path: Path) -> None:
    """A second load of a wiki page takes its images from the browser's cache (transferSize 0),
    as behind Apache; before, each load fetched them again."""
    if not Path("/usr/share/mediawiki/includes/Defines.php").is_file():
        pytest.skip("MediaWiki is not installed (scripts/setup.sh installs it)")
    from playwright.async_api import async_playwright

    from cua.sandboxes.browser.launcher import find_executable

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", "mediawiki", "--port", str(port),
                             "--socket", str(tmp_path / "mw.sock")], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "ready":
                break
        else:
            raise AssertionError("the mediawiki service did not start")

        async def sizes() -> dict[str, int]:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=find_executable().path)
                try:
                    page = await browser.new_page()
                    for title in ("Main_Page", "Special:SpecialPages", "Main_Page"):
                        await page.goto(f"http://127.0.0.1:{port}/wiki/{title}", wait_until="load")
                    entries: dict[str, int] = await page.evaluate(
                        "() => Object.fromEntries(performance.getEntriesByType('resource')"
                        ".filter((e) => /\\.(png|svg)/.test(e.name)).map((e) => [e.name, e.transferSize]))")
                    return entries
                finally:
                    await browser.close()

        entries = asyncio.run(sizes())
        assert any("poweredby_mediawiki" in name for name in entries), entries
        assert entries and all(size == 0 for size in entries.values()), entries  # all from the cache
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()
