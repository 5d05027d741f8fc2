"""`cua report --serve`: the report folder over HTTP, rebuilt while the run goes on.

A tiny stdlib server (no framework: the report is static files) plus one thread that brings
the folder up to date every `interval` seconds; rebuilds are incremental (only episodes whose
trajectory changed are rewritten). The page sees it is served over HTTP and polls its index.

Who may read it (`cua.gate`, the rules `cua serve` follows): the report holds every
episode's instruction, actions, answers and verdicts, and its data are script files a page
of any origin could include, so it is not left open to the browser it runs next to, nor to
a sandbox's browser on the same host. It needs a token (generated unless given, printed in
the URL the person opens); the page opened with it gets the token as an HttpOnly,
SameSite=Strict cookie for the files it loads next, accepted only on requests the browser
marks as the page's own. A foreign Origin and, on loopback, a non-loopback Host (DNS
rebinding) are refused with or without the token, and serving off loopback without a token
is refused unless `unsafe_public_no_auth` says so.
"""

from __future__ import annotations

import http.server
import logging
import secrets
import socket
import sys
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from cua.exposure import OriginPolicy, check_bind, is_loopback
from cua.gate import PageGate
from cua.report.build import ReportBuilder

__all__ = ["TOKEN_PARAM", "ReportServer", "serve_report"]
log = logging.getLogger(__name__)

#: The query parameter of the printed URL that carries the token (the page's own polls use `t`).
TOKEN_PARAM = "token"


class _Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args: Any, gate: PageGate, **kwargs: Any) -> None:
        self.gate = gate
        self._set_cookie: str | None = None
        super().__init__(*args, **kwargs)

    def parse_request(self) -> bool:
        """Admit the request by the gate before any method runs; a refusal is answered here."""
        if not super().parse_request():
            return False
        headers = {name.lower(): value for name, value in self.headers.items()}
        admission = self.gate.check(urlsplit(self.path).query, headers)
        if not admission.ok:
            self.send_error(admission.status, None, admission.reason)
            return False
        self._set_cookie = admission.set_cookie
        return True

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        if self._set_cookie is not None:
            self.send_header("Set-Cookie", self._set_cookie)
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        log.debug(format, *args)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


class _Server6(_Server):
    address_family = socket.AF_INET6


class ReportServer:
    """Serves `builder.out` on `host` and rebuilds it in a thread until `close()`.

    `auth=False` serves without a token (loopback only unless `unsafe_public_no_auth`);
    otherwise `token`, or a generated one, is required. Raises ValueError for a bind the
    rules refuse or a malformed allowed origin."""

    def __init__(self, builder: ReportBuilder, *, host: str = "127.0.0.1", port: int = 0, interval: float = 1.0,
                 auth: bool = True, token: str | None = None, allowed_origins: Iterable[str] = (),
                 unsafe_public_no_auth: bool = False) -> None:
        check_bind(host, auth=auth, unsafe_public_no_auth=unsafe_public_no_auth)
        origins = OriginPolicy.for_bind(host, allowed_origins)
        self.builder = builder
        self.interval = interval
        self.host = host
        self.token = (token or secrets.token_urlsafe(24)) if auth else None
        builder.out.mkdir(parents=True, exist_ok=True)
        server = _Server6 if ":" in host else _Server
        self.httpd = server((host.strip("[]"), port), self._handler)
        #: The folder served: the run's, when the report is inside it (the default RUN/report),
        #: since the report then points at the run's own frames (../trajectories/...) as it does
        #: from disk; otherwise the report folder, which then holds its frames itself.
        out = builder.out.resolve()
        self.root = next((run.resolve() for run in builder.runs if out.is_relative_to(run.resolve())), out)
        self._index = (out.relative_to(self.root) / "index.html").as_posix()
        self.gate = PageGate(origins, self.token, param=TOKEN_PARAM, cookie=f"cua_report_{self.port}")
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self.httpd.serve_forever, name="report-http", daemon=True),
                         threading.Thread(target=self._rebuild, name="report-build", daemon=True)]

    def _handler(self, *args: Any) -> _Handler:
        return _Handler(*args, gate=self.gate, directory=str(self.root))

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        """The URL a person opens: with the token, which the page then keeps in a cookie."""
        host = self.host if self.host not in ("0.0.0.0", "::", "[::]") else "127.0.0.1"
        host = f"[{host.strip('[]')}]" if ":" in host else host
        query = f"?{TOKEN_PARAM}={self.token}" if self.token else ""
        return f"http://{host}:{self.port}/{self._index}{query}"

    def start(self) -> ReportServer:
        self.builder.build()
        for t in self._threads:
            t.start()
        return self

    def _rebuild(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.builder.build()
            except Exception as exc:  # a half-written run file: the next tick sees it whole
                log.warning("rebuilding the report failed: %s: %s", type(exc).__name__, exc)

    def wait(self) -> None:
        """Block until `close()` (or Ctrl-C in the calling thread)."""
        self._stop.wait()

    def close(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        for t in self._threads:
            if t.is_alive():
                t.join(timeout=10)


def serve_report(builder: ReportBuilder, *, host: str = "127.0.0.1", port: int = 0, interval: float = 1.0,
                 auth: bool = True, token: str | None = None, allowed_origins: Iterable[str] = (),
                 unsafe_public_no_auth: bool = False) -> int:
    """Serve until Ctrl-C. Prints the URL to open first (with its token), then the token as
    `cua serve` prints its own; exits 2 for a bind or origin the rules refuse."""
    try:
        server = ReportServer(builder, host=host, port=port, interval=interval, auth=auth, token=token,
                              allowed_origins=allowed_origins, unsafe_public_no_auth=unsafe_public_no_auth).start()
    except ValueError as exc:
        print(f"cua report: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"cua report: cannot serve on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(server.url, flush=True)
    if server.token is None:
        where = "anyone who can reach the port reads the report" if not is_loopback(host) \
            else "any program on this machine reads the report"
        print(f"(auth DISABLED: {where})", flush=True)
    elif token is None:
        print(f"token: {server.token}\n(the page keeps it in a cookie; scripts send Authorization: Bearer TOKEN; "
              "pass --token to choose one)", flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.close()
    return 0
