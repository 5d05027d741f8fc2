"""The front every Python product's server puts around the product's WSGI application
(Trac's, Django's for django-oscar and Wagtail), so that its service can hold the app
contract as MediaWiki's single `php -S` worker gives it:

- the page side's rules, those of the bundled apps' host (cua.tasks.apps.base.AppHostGuard,
  whose `page_side_refusal` this mirrors; a test holds the two to the same answers): no
  control endpoints over TCP, a loopback Host only (no DNS-rebound page), no state change
  from a page of another origin, and another origin's page may only navigate here by GET;
- one request at a time (a lock around the application): `GET /.cua-idle` takes the same
  lock, so the service's barrier returns only once the request before it has finished;
- after a request (static files aside), still holding the lock, `POST /__cua/activity` on
  the control socket: the service logs what the request changed.

A product's server subclasses `SerialFront` where it needs more (`before` a request: drop
caches a restore made stale; `unlocked`/`locked`: paths of its own) and calls `serve`.

It runs under the product venv's Python, so it imports the standard library only; the
product's script runs it from its file (`runpy.run_path`), not through cua, and not by
putting the products' folder on `sys.path` (its packages would shadow the venv's: `trac`,
`oscar`, `wagtail`).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["IDLE_PATH", "SerialFront", "arguments", "die_with_parent", "page_side_refusal"]

IDLE_PATH = "/.cua-idle"
CONTROL_PREFIX = "/__cua/"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def page_side_refusal(method: str, path: str, headers: Mapping[str, str]) -> tuple[int, str] | None:
    """Why a page-side request is refused, as (HTTP status, reason); None when it is served.
    `headers` by lower-case name. The same rules, in the same order, as the bundled apps'
    host (cua.tasks.apps.base.page_side_refusal)."""
    if path.startswith(CONTROL_PREFIX):
        return 404, "not found"
    host = headers.get("host")
    if host is not None and _host_name(host) not in LOOPBACK:
        return 403, f"host {host!r} is not loopback"
    origin = headers.get("origin")
    if method not in SAFE_METHODS and origin is not None and \
            (host is None or origin.rstrip("/").lower() != f"http://{host}".lower()):
        return 403, f"a page of origin {origin!r} may not change this app"
    site = headers.get("sec-fetch-site", "").lower()
    if site in ("cross-site", "same-site") and \
            not (headers.get("sec-fetch-mode") == "navigate" and method in ("GET", "HEAD")):
        return 403, "another origin's page may only navigate to this app"
    return None


def _headers(environ: Mapping[str, Any]) -> dict[str, str]:
    out = {key[5:].replace("_", "-").lower(): str(value) for key, value in environ.items() if key.startswith("HTTP_")}
    return out


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=60)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(60)
        sock.connect(self.unix_path)
        self.sock = sock


class SerialFront:
    """The WSGI application a product's server serves (see the module's docstring).

    `app` is the product's WSGI application, `name` how messages name the server,
    `control_socket` the service's socket (empty: no activity log), `quiet` the path
    prefixes of static files (no activity)."""

    def __init__(self, app: WSGIApp, name: str, control_socket: str, quiet: tuple[str, ...] = ("/static/",)) -> None:
        self.app = app
        self.name = name
        self.control_socket = control_socket
        self.quiet = quiet
        self.lock = threading.Lock()

    # --- what a product may add ---

    def unlocked(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes] | None:
        """A response to send without waiting for the lock (the service's own calls made
        while it holds its barrier); None to go on."""
        return None

    def locked(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes] | None:
        """A response of the front's own, under the lock; None to run the application."""
        return None

    def before(self) -> None:
        """Run under the lock before the application (drop what a restore made stale)."""

    def after(self) -> None:
        """Run under the lock after the application and the activity call."""

    # --- the front ---

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        method = str(environ.get("REQUEST_METHOD", "GET"))
        refusal = page_side_refusal(method, path, _headers(environ))
        if refusal is not None:
            status, reason = refusal
            return self.plain(start_response, f"{status} {'Not Found' if status == 404 else 'Forbidden'}", reason)
        early = self.unlocked(environ, start_response)
        if early is not None:
            return early
        with self.lock:
            if path == IDLE_PATH:
                return self.plain(start_response, "200 OK", "idle")
            own = self.locked(environ, start_response)
            if own is not None:
                return own
            self.before()
            result = self.app(environ, start_response)
            try:
                body = b"".join(result)
            finally:
                close = getattr(result, "close", None)  # PEP 3333: the iterable may have close()
                if close is not None:
                    close()
            if not path.startswith(self.quiet):
                self.activity(f"{method} {path}")
            self.after()
            return [body]

    @staticmethod
    def plain(start_response: StartResponse, status: str, text: str) -> list[bytes]:
        body = text.encode()
        start_response(status, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
        return [body]

    def activity(self, request: str) -> None:
        if not self.control_socket:
            return
        conn = _UnixHTTPConnection(self.control_socket)
        try:
            conn.request("POST", "/__cua/activity", json.dumps({"request": request[:300]}),
                         {"Content-Type": "application/json"})
            conn.getresponse().read()
        except OSError as exc:
            print(f"{self.name}: activity log unreachable: {exc}", file=sys.stderr, flush=True)
        finally:
            conn.close()


def die_with_parent() -> None:
    """Stop when the service that started this server dies (Linux's parent-death signal), so
    a killed service leaves no server holding its port."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:
        sys.exit(1)


def arguments(parser: argparse.ArgumentParser | None = None) -> argparse.Namespace:
    """A product server's start: it dies with its service (`die_with_parent`), then reads
    its command line, `--port PORT --socket CONTROL_SOCKET` and what `parser` adds."""
    die_with_parent()
    parser = parser or argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--socket", default="")
    return parser.parse_args()

