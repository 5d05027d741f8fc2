"""The apps page: a sandbox's own start page listing the apps its services run.

A workflow task spans several apps, each a service on its own origin (its own port). The
agent cannot guess a port, so a browser sandbox started at `about:apps` (`LAUNCHER`) opens
on a page of links, one per service, as a browser's new-tab page lists bookmarks: the agent
clicks one, or goes back to the page (it stays one of the task's own pages) and picks
another. The page is a `data:` URL the sandbox writes from its ports; a task's oracle
reads the app origins back from it (`origins`), as the agent reads them from the links.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping

__all__ = ["LAUNCHER", "label", "origins", "page_url"]

#: The start URL that asks a sandbox for its apps page.
LAUNCHER = "about:apps"
_PREFIX = "data:text/html;base64,"
_LINK = re.compile(r'<a href="(http://[^"]+)/" data-app="([a-z][a-z0-9_]*)">')


def label(name: str) -> str:
    """What the page calls a service: its name as a title ("phone_settings": "Phone Settings")."""
    return name.replace("_", " ").title()


def page_url(apps: Mapping[str, str]) -> str:
    """The apps page for `apps` (app name -> origin, in the order shown), as a `data:`
    URL (base64, so the browser reports it back byte for byte)."""
    items = "".join(f'<li><a href="{html.escape(origin)}/" data-app="{html.escape(name)}">{html.escape(label(name))}</a></li>'
                    for name, origin in apps.items())
    page = ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Apps</title>"
            "<style>body{font:16px system-ui,sans-serif;margin:40px}ul{list-style:none;padding:0;display:flex;"
            "gap:16px;flex-wrap:wrap}a{display:block;padding:16px 24px;border:1px solid #999;border-radius:8px}"
            "</style></head><body><main><h1>Apps</h1><nav aria-label=\"Apps\"><ul>"
            f"{items}</ul></nav></main></body></html>")
    return _PREFIX + base64.b64encode(page.encode()).decode()


def origins(url: str) -> dict[str, str]:
    """The app origins an apps page at `url` links to (app name -> origin); empty for
    any other URL."""
    if not url.startswith(_PREFIX):
        return {}
    try:
        page = base64.b64decode(url[len(_PREFIX):], validate=True).decode()
    except ValueError:
        return {}
    return {name: html.unescape(origin) for origin, name in _LINK.findall(page)}
