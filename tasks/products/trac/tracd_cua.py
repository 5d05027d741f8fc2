"""tracd for one sandbox instance: Trac's own standalone server (`trac.web.standalone`,
the classes `tracd` runs) serving one environment, with what the app contract needs around
Trac's WSGI application. Runs under the Trac venv's Python (build.trac_python()), so it
imports nothing of cua.

    python tracd_cua.py --env ENV --port PORT --socket CONTROL_SOCKET

- one request at a time (a lock around Trac's application): `GET /.cua-idle` takes the
  same lock, so the service's barrier returns only once the request before it has
  finished, as MediaWiki's single `php -S` worker gives it;
- after a request, while still holding the lock, `POST /__cua/activity` on the control
  socket: the service logs what the request changed (the activity log);
- `POST /.cua-flush` with the instance's token (`CUA_TRAC_FLUSH_TOKEN`): Trac's in-process
  caches (its cache generations, the permission caches) are dropped after the service put
  a database image back, so no cache outlives a reset; the attachments folder is emptied
  (no seed has attachments);
- the login page: Trac authenticates the user its web server names (REMOTE_USER); this
  server is that front, with a login form over the seeded accounts (a `session` row with
  `authenticated = 1`) and their shared password (`CUA_TRAC_PASSWORD`), as an account
  plugin would. On success Trac's own `/login` runs and sets its `trac_auth` cookie;
- pages are served only for loopback Host names (as the MediaWiki router does).
"""

from __future__ import annotations

import argparse
import html
import http.client
import json
import os
import shutil
import socket
import sqlite3
import sys
import threading
import urllib.parse
from typing import Any, Callable, Iterable

from trac.cache import CacheManager  # type: ignore[import-not-found]  # the Trac venv's
from trac.env import open_environment  # type: ignore[import-not-found]  # the Trac venv's
from trac.perm import DefaultPermissionPolicy, PermissionSystem  # type: ignore[import-not-found]  # the Trac venv's
from trac.web.main import dispatch_request  # type: ignore[import-not-found]  # the Trac venv's
from trac.web.standalone import TracEnvironMiddleware, TracHTTPServer  # type: ignore[import-not-found]  # the Trac venv's

IDLE_PATH = "/.cua-idle"
FLUSH_PATH = "/.cua-flush"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")

StartResponse = Callable[..., Any]

_LOGIN_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Login – {project}</title>
<link rel="stylesheet" href="/chrome/common/css/trac.css" type="text/css"></head>
<body><div id="banner"><div id="header"><h1><a href="/">{project}</a></h1></div>
<div id="mainnav" class="nav"><ul><li class="first"><a href="/wiki">Wiki</a></li><li><a href="/roadmap">Roadmap</a></li>
<li class="last"><a href="/report">View Tickets</a></li></ul></div></div>
<div id="main"><div id="content" class="login"><h1>Login</h1>{error}
<form method="post" id="acctmgr_loginform" action="/login">
<input type="hidden" name="referer" value="{referer}">
<div><label for="user">Username:</label><br><input type="text" id="user" name="user" class="textwidget" size="20" autofocus></div>
<div><label for="password">Password:</label><br>
<input type="password" id="password" name="password" class="textwidget" size="20"></div>
<div class="buttons"><input type="submit" name="login" value="Login"></div>
</form></div></div></body></html>
"""


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=60)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(60)
        sock.connect(self.unix_path)
        self.sock = sock


class CuaFront:
    """The WSGI application tracd serves (see the module's docstring)."""

    def __init__(self, env_path: str, control_socket: str, project: str) -> None:
        self.env_path = env_path
        self.control_socket = control_socket
        self.project = project
        self.lock = threading.Lock()
        self.trac = TracEnvironMiddleware(dispatch_request, None, [env_path], True)
        self.password = os.environ.get("CUA_TRAC_PASSWORD", "")
        self.flush_token = os.environ.get("CUA_TRAC_FLUSH_TOKEN", "")

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        host = environ.get("HTTP_HOST", "").rsplit(":", 1)[0] if environ.get("HTTP_HOST") else "127.0.0.1"
        if host not in LOOPBACK:
            return self._plain(start_response, "403 Forbidden", "this server answers loopback host names only")
        path = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET")
        if path == FLUSH_PATH:  # outside the lock: the service calls it while it holds its own loop
            return self._flush(environ, start_response)
        with self.lock:
            if path == IDLE_PATH:
                return self._plain(start_response, "200 OK", "idle")
            if path.rstrip("/") == "/login" and not environ.get("REMOTE_USER"):
                page = self._login(environ, start_response)
                if page is not None:
                    return page
            status: list[str] = []

            def capture(s: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
                status.append(s)
                return start_response(s, headers, exc_info) if exc_info else start_response(s, headers)

            result = self.trac(environ, capture)
            try:
                body = b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
            if not path.startswith("/chrome/"):
                self._activity(f"{method} {path}")
            return [body]

    # --- the pieces ---

    @staticmethod
    def _plain(start_response: StartResponse, status: str, text: str) -> list[bytes]:
        body = text.encode()
        start_response(status, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
        return [body]

    def _activity(self, request: str) -> None:
        if not self.control_socket:
            return
        conn = UnixHTTPConnection(self.control_socket)
        try:
            conn.request("POST", "/__cua/activity", json.dumps({"request": request[:300]}),
                         {"Content-Type": "application/json"})
            conn.getresponse().read()
        except OSError as exc:
            print(f"tracd_cua: activity log unreachable: {exc}", file=sys.stderr, flush=True)
        finally:
            conn.close()

    def _flush(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
        if environ.get("REQUEST_METHOD") != "POST" or not self.flush_token or \
                environ.get("HTTP_X_CUA_FLUSH") != self.flush_token:
            return self._plain(start_response, "404 Not Found", "not found")
        env = open_environment(self.env_path, use_cache=True)
        cache = CacheManager(env)
        with cache._lock:
            cache._cache.clear()
        cache.reset_metadata()
        DefaultPermissionPolicy(env).permission_cache = {}
        PermissionSystem(env).permission_cache = {}
        attachments = os.path.join(self.env_path, "files", "attachments")
        if os.path.isdir(attachments):
            shutil.rmtree(attachments, ignore_errors=True)
            os.makedirs(attachments, exist_ok=True)
        return self._plain(start_response, "200 OK", "flushed")

    def _known_user(self, user: str) -> bool:
        db = sqlite3.connect(f"file:{os.path.join(self.env_path, 'db', 'trac.db')}?mode=ro", uri=True, timeout=30)
        try:
            row = db.execute("SELECT 1 FROM session WHERE sid = ? AND authenticated = 1", (user,)).fetchone()
        finally:
            db.close()
        return row is not None

    def _login(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes] | None:
        """The login form (GET), or its check (POST): None when the user is known and the
        password right, with the request turned into Trac's own GET /login for that user."""
        query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
        referer = (query.get("referer") or [environ.get("HTTP_REFERER", "") or "/"])[0]
        error = ""
        if environ.get("REQUEST_METHOD") == "POST":
            try:
                size = int(environ.get("CONTENT_LENGTH") or 0)
            except ValueError:
                size = 0
            form = urllib.parse.parse_qs(environ["wsgi.input"].read(min(size, 65536)).decode("utf-8", "replace"))
            user = (form.get("user") or [""])[0].strip()
            password = (form.get("password") or [""])[0]
            referer = (form.get("referer") or ["/"])[0] or "/"
            if user and self.password and password == self.password and self._known_user(user):
                environ["REMOTE_USER"] = user
                environ["REQUEST_METHOD"] = "GET"
                environ["CONTENT_LENGTH"] = "0"
                environ["QUERY_STRING"] = urllib.parse.urlencode({"referer": referer})
                return None
            error = '<div class="system-message"><p>Invalid username or password</p></div>'
        if urllib.parse.urlsplit(referer).path.rstrip("/") == "/login":
            referer = "/"
        page = _LOGIN_PAGE.format(project=html.escape(self.project), error=error,
                                  referer=html.escape(referer, quote=True)).encode()
        start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(page))),
                                  ("Cache-Control", "no-store")])
        return [page]


def _die_with_parent() -> None:
    """Stop when the service that started this server dies (Linux's parent-death signal),
    so a killed service leaves no tracd holding its port."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:
        sys.exit(1)


def main() -> int:
    _die_with_parent()
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--socket", default="")
    parser.add_argument("--project", default="Trac")
    args = parser.parse_args()
    app = CuaFront(args.env, args.socket, args.project)
    open_environment(args.env, use_cache=True)  # load it now: the first page is not the slow one
    httpd = TracHTTPServer(("127.0.0.1", args.port), app, None, [args.env], use_http_11=False)
    print(f"tracd_cua: serving {args.env} on 127.0.0.1:{args.port}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
