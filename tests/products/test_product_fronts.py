"""The Python products' shared front (cua.tasks.products.wsgi_front, around Trac's, Oscar's,
Wagtail's and pretix's WSGI applications) holds their pages to the bundled apps' host rules: the
same answers as `AppHostGuard` for every kind of request, and, in a real Chromium, a page
of another origin (another site, or another port of 127.0.0.1) can neither load a
product's files as resources nor submit its forms, a DNS-rebound page is refused, and the
product's own page and a link from another origin still open it.

Before the front held these rules, a foreign page loaded the products' files as images
and submitted Trac's login form (a login from another origin: a session row written)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from _foreign_page import IMAGE_LOAD, NO_CORS_POST, chromium, foreign_site
from _product import Service, image_content, running

from cua.tasks.apps.base import page_side_refusal as app_host_refusal
from cua.tasks.products import wsgi_front
from cua.tasks.products.oscar import build as oscar_build
from cua.tasks.products.pretix import build as pretix_build
from cua.tasks.products.trac import build as trac_build
from cua.tasks.products.wagtail import build as wagtail_build

OWN = "127.0.0.1:8000"


def test_the_front_answers_as_the_app_host_does() -> None:
    hosts = [OWN, "localhost:8000", "[::1]:8000", "rebind.example:8000", "evil.example", None]
    origins = [None, f"http://{OWN}", "http://127.0.0.1:8001", "http://evil.example", "null", f"http://{OWN}/"]
    sites = [None, "same-origin", "same-site", "cross-site", "none"]
    modes = [None, "navigate", "no-cors", "cors"]
    for method, path in (("GET", "/"), ("HEAD", "/x"), ("POST", "/login"), ("PUT", "/a"), ("OPTIONS", "/"),
                         ("GET", "/__cua/state"), ("POST", "/__cua/reset")):
        for host, origin, site, mode in itertools.product(hosts, origins, sites, modes):
            headers = {k: v for k, v in (("host", host), ("origin", origin), ("sec-fetch-site", site),
                                         ("sec-fetch-mode", mode)) if v is not None}
            ours, theirs = wsgi_front.page_side_refusal(method, path, headers), app_host_refusal(method, path, headers)
            assert (ours and ours[0]) == (theirs and theirs[0]), (method, path, headers, ours, theirs)


class Trac(Service):
    app = "trac"


class Oscar(Service):
    app = "oscar"
    ready_timeout_s = 240.0


class Wagtail(Service):
    app = "wagtail"
    ready_timeout_s = 240.0


class Pretix(Service):
    app = "pretix"
    ready_timeout_s = 400.0


#: Per product: its service, a file of its own a page could load, a form a foreign page
#: might submit (path and fields: Trac's login takes no form token) and its login page.
PRODUCTS = {
    "trac": (Trac, trac_build.trac_python, "/chrome/common/asc.png",
             ("/login", f"user=mreyes&password={trac_build.PASSWORD}&referer=/"), "/login"),
    "oscar": (Oscar, oscar_build.oscar_python, "/static/oscar/img/image_not_found.jpg",
              ("/basket/add/1/", "quantity=1"), "/accounts/login/"),
    "wagtail": (Wagtail, wagtail_build.wagtail_python, "/static/wagtailadmin/images/default-user-avatar.png",
                ("/admin/login/", f"username=lrossi&password={wagtail_build.PASSWORD}"), "/admin/login/"),
    "pretix": (Pretix, pretix_build.pretix_python, "/static/pretixbase/img/favicon-32.png",
               ("/control/login", f"email=maren.holt@lakeside-live.example&password={pretix_build.PASSWORD}"),
               "/control/login"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PRODUCTS))
async def test_a_foreign_page_cannot_use_a_product_and_its_own_page_can(name: str, tmp_path: Path) -> None:
    cls, python, image, (form, fields), login = PRODUCTS[name]
    if not python().is_file():
        pytest.skip(f"{name} is not installed (scripts/setup.sh makes its venv)")
    with running(cls, tmp_path) as svc, foreign_site() as other:
        before = svc.snapshot()
        async with chromium() as browser:
            context = await browser.new_context()
            own = f"http://127.0.0.1:{svc.port}"
            for origin in (f"http://evil.example:{other}", f"http://127.0.0.1:{other}"):
                foreign = await context.new_page()
                await foreign.goto(origin + "/")
                assert await foreign.evaluate(IMAGE_LOAD, own + image) == "refused", origin
                await foreign.evaluate(NO_CORS_POST, [own + form, fields])
                await foreign.close()
            assert svc.sql("SELECT count(*) AS n FROM cua_activity") == [{"n": 0}]
            assert image_content(svc.snapshot()) == image_content(before)
            # a link from another origin still opens the product (tasks link apps to each other)
            foreign = await context.new_page()
            await foreign.goto(f"http://evil.example:{other}/")
            await foreign.evaluate(f"location.href = '{own}{login}'")
            await foreign.wait_for_url(own + login)
            assert await foreign.locator("input[type=password]").count() >= 1
            rebound = await (await context.new_page()).goto(f"http://rebind.example:{svc.port}{login}")
            assert rebound is not None and rebound.status == 403
            page = await context.new_page()  # the sandbox's browser on the product's own page
            await page.goto(own + login)
            assert await page.evaluate(IMAGE_LOAD, own + image) == "loaded"
