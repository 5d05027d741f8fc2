"""`OwnOrigins`: the origins a task's pages live on, and the navigation policy around them.

A judge that reads the page (its URL, title, DOM, storage) or a service that takes a
page's report (MiniWoB's end of episode) trusts what the task's own pages say. A page
the agent makes itself (a `data:`, `javascript:`, `blob:` or `file:` URL whose script it
wrote, or a page of a foreign origin) could say anything: a forged end report, a copy
of the finished page. So, where the sandbox has origins of its own (its services', and
the episode's start URL's when that is http(s)):

- the agent's `goto` may go only to them (or to `about:blank`, which holds nothing);
  every other scheme and every other origin is refused (`ActionError` reason `bad_url`);
- the page reads a judge makes are answered only while the page (or the frame read) is
  on one of them; elsewhere they fail with error `foreign_page`, so a page the agent
  reached some other way (a link an app shows) is never read as the task's.

A sandbox with no origin of its own (no service, an `about:` or `data:` start URL) has
no task page to protect and keeps navigation open, as does one configured with
`navigation: open`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from cua.errors import ActionFailed
from cua.sandboxes.browser.config import ALLOWED_SCHEMES
from cua.sandboxes.browser.pages import origin_of

__all__ = ["FOREIGN_PAGE", "OwnOrigins", "check_scheme"]

#: The `StateResult.error` of a page read refused because the page is not the task's.
FOREIGN_PAGE = "foreign_page"
#: The one non-http(s) page a sandbox with own origins may be sent to: it holds nothing.
_BLANK = "about:blank"


def check_scheme(url: str) -> None:
    """Refuse a URL of a scheme no sandbox page may be sent to (`bad_url`)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise ActionFailed(f"url scheme {scheme or '(none)'!r} is not allowed; use one of "
                           f"{', '.join(sorted(ALLOWED_SCHEMES))}", reason="bad_url", details={"url": url[:500]})


class OwnOrigins:
    """The sandbox's own origins: its services' (filled in as they start) and its start URL's."""

    def __init__(self, ports: dict[str, int], *, enforced: bool = True) -> None:
        #: service name -> port (the sandbox's map, shared: filled in when the services start).
        self._ports = ports
        self.enforced = enforced
        #: The origin of the URL the sandbox itself last started an episode on, when http(s).
        self.start: str | None = None
        #: That URL itself when it has no origin (a client's `data:` start page): that page,
        #: which the client chose, is the task's own too.
        self.start_page: str | None = None

    def origins(self) -> frozenset[str]:
        hosts = ("127.0.0.1", "localhost")
        own = {f"http://{host}:{port}" for port in self._ports.values() for host in hosts}
        return frozenset(own | ({self.start} if self.start else set()))

    @property
    def active(self) -> bool:
        """Whether the policy binds: enforced, and there is an own origin to bind to."""
        return self.enforced and bool(self._ports or self.start)

    def started_at(self, url: str) -> None:
        """The sandbox (not the agent) loads `url` to start an episode: its origin is the task's."""
        self.start = origin_of(url)
        self.start_page = None if self.start else url

    def owns(self, url: str) -> bool:
        """Whether a page at `url` is one of the task's own (always, where the policy is off)."""
        if not self.active or url == self.start_page:
            return True
        origin = origin_of(url)
        return origin is not None and origin in self.origins()

    def check_goto(self, url: str) -> None:
        """Refuse the agent's `goto` to `url` unless the policy allows it (`bad_url`)."""
        check_scheme(url)
        if not self.active or url == _BLANK or self.owns(url):
            return
        own = ", ".join(sorted(self.origins()))
        raise ActionFailed(f"url {url[:200]!r} is outside this task's own origins ({own}); the agent may go only "
                           "to them or to about:blank", reason="bad_url", details={"url": url[:500]})

    def refusal(self, url: str) -> str | None:
        """Why a page read of a page at `url` is refused (None: it is answered)."""
        if self.owns(url):
            return None
        shown = url if len(url) <= 120 else url[:117] + "..."
        return (f"the page ({shown}) is not one of this task's own (origins {', '.join(sorted(self.origins()))}): "
                "a page the agent made or reached elsewhere is never read as the task's")
