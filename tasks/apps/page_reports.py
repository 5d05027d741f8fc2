"""Reports a page makes to its service (MiniWoB's start and end of episode), taken only
from the task's own page.

A service that stores what its page reports (a reward, an end of episode) must not
store what another page claims: a `data:` or `blob:` page, a page of another origin, a
form the agent built. Its own page's script cannot be impersonated from those, because
the browser itself stamps every request with where it comes from, in headers no page
script can set (the fetch metadata, `Origin`, `Referer`):

- `Sec-Fetch-Site: same-origin`: sent by a page of the service's own origin (a `data:`
  page's request says `cross-site`, another port's `same-site`);
- `Sec-Fetch-Dest: empty`: a script's request (fetch or XHR), not a form's navigation
  (`document`) or a frame's load;
- `Origin` equal to the service's own origin, and `Referer` naming the one page that
  reports (its path), so a report comes from the task's page, not any page served there.

Chromium sends fetch metadata to potentially trustworthy URLs, which every service's
`http://127.0.0.1:port` and `http://localhost:port` are. A request without them is
refused: only a browser page of the service reports.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request

__all__ = ["foreign_report"]


def foreign_report(request: Request, page_path: str) -> str | None:
    """Why `request` is not a report of the page at `page_path` on this service's own
    origin (None: it is one)."""
    headers = request.headers
    site, dest = headers.get("sec-fetch-site"), headers.get("sec-fetch-dest")
    if site != "same-origin":
        return f"the report comes from a page of another origin or none (Sec-Fetch-Site: {site or 'absent'})"
    if dest != "empty":
        return f"the report is not a script's request of the page (Sec-Fetch-Dest: {dest or 'absent'})"
    own = f"{request.url.scheme}://{headers.get('host', '')}"
    origin = headers.get("origin")
    if origin != own:
        return f"the report's Origin {origin or '(absent)'} is not the service's own {own}"
    referer = urlsplit(headers.get("referer", ""))
    if f"{referer.scheme}://{referer.netloc}" != own or referer.path != page_path:
        return f"the report does not come from the task's page {page_path} (Referer: {referer.geturl() or 'absent'})"
    return None
