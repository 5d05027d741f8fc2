"""The real products the realapp benchmarks measure (`cua.tasks.products`), each with where
a sandbox starts, two links on every page of it that an agent clicks in turn (each click
loads the other page), and a login where the pages need one; and a browser sandbox in
shared isolation running one of them (or a bundled app, the reference)."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from cua.actions import Click, Key, Type
from cua.observation import ObserveOptions
from cua.sandbox import ServiceSpec
from cua.sandboxes.browser import BrowserConfig, BrowserSandbox
from cua.state import DomQuery
from cua.tasks.apps import service as app_service
from cua.tasks.products.errors import ProductMissing

#: An agent's observation: a JPEG screenshot, as `bench/browser_step.py` takes it.
OBSERVE = ObserveOptions(format="jpeg", quality=80)


@dataclass(frozen=True)
class Site:
    app: str
    start_url: str
    #: CSS selectors of two links found on both pages they lead to; the first to the start page.
    links: tuple[str, str]
    #: (user field, password field, user, password): typed in, then Enter, before the links.
    login: tuple[str, str, str, str] | None = None


#: The bundled app the real products are compared with (a folder list and a note list:
#: each click a full page load from the app framework's server).
REFERENCE = Site("notes", "/folders/1", ('a[href="/folders/1"]', 'a[href="/folders/2"]'))
PRODUCTS = (
    Site("mediawiki", "/wiki/Main_Page", ("#n-mainpage-description a", "#t-specialpages a")),
    Site("trac", "/wiki", ('#mainnav a[href="/wiki"]', '#mainnav a[href="/roadmap"]')),
    Site("roundcube", "/", ("#taskmenu a.mail", "#taskmenu a.settings"),
         login=("#rcmloginuser", "#rcmloginpwd", "alice.morgan@harborview.test", "harbor-2026")),
    Site("oscar", "/catalogue/", ('a[href="/catalogue/"]', "#login_link")),
    Site("wagtail", "/", ('a[href="/blog/"]', 'a[href="/events/"]')),
    Site("pretix", "/control/login", ('#side-menu a[href="/control/"]', '#side-menu a[href="/control/events/"]'),
         login=("#id_email", "#id_password", "maren.holt@lakeside-live.example", "lakeside-2026")),
)


def missing(app: str) -> str | None:
    """Why product `app` cannot run here (its installer's ProductMissing), or None."""
    build = importlib.import_module(f"cua.tasks.products.{app}.build")
    try:
        build.version()
    except ProductMissing as exc:
        return str(exc)
    return None


async def centre(sandbox: BrowserSandbox, selector: str) -> tuple[float, float]:
    """The middle of the first element `selector` matches, in screen pixels."""
    (box,) = await sandbox.query([DomQuery(selector=selector, prop="bbox")])
    if not isinstance(box.value, dict):
        raise RuntimeError(f"no {selector!r} on {sandbox.id}'s page")
    return box.value["x"] + box.value["width"] / 2, box.value["y"] + box.value["height"] / 2


@contextlib.asynccontextmanager
async def site_sandbox(site: Site, sandbox_id: str) -> AsyncIterator[BrowserSandbox]:
    """A shared-isolation browser sandbox running the site's app, logged in where it needs to be."""
    config = BrowserConfig(isolation="shared", services=[ServiceSpec.model_validate(app_service(site.app))],
                           start_url=site.start_url)
    sandbox = await BrowserSandbox.create(config, sandbox_id=sandbox_id)
    try:
        if site.login is not None:
            user_field, password_field, user, password = site.login
            for field, text in ((user_field, user), (password_field, password)):
                x, y = await centre(sandbox, field)
                await sandbox.act(Click(x=x, y=y))
                await sandbox.act(Type(text=text))
            await sandbox.act(Key(keys=["Enter"]))
        yield sandbox
    finally:
        await sandbox.close()
