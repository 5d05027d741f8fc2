"""tracd for one sandbox instance: Trac's own standalone server (`trac.web.standalone`,
the classes `tracd` runs) serving one environment, Trac's WSGI application behind the
products' shared front (../wsgi_front.py: the page side's rules, one request at a time, the
activity log). Runs under the Trac venv's Python (build.trac_python()), so it imports
nothing of cua.

    python tracd_cua.py --env ENV --port PORT --socket CONTROL_SOCKET

What Trac adds to the front:
- `POST /.cua-flush` with the instance's token (`CUA_TRAC_FLUSH_TOKEN`): Trac's in-process
  caches (its cache generations, the permission caches) are dropped after the service put
  a database image back, so no cache outlives a reset; the attachments folder is emptied
  (no seed has attachments);
- the login page: Trac authenticates the user its web server names (REMOTE_USER); this
  server is that front, with a login form over the seeded accounts (a `session` row with
  `authenticated = 1`) and their shared password (`CUA_TRAC_PASSWORD`), as an account
  plugin would. On success Trac's own `/login` runs and sets its `trac_auth` cookie;
- the heap as loaded at start (Trac, its plugins, the environment) is frozen out of the
  garbage collector (`gc.freeze`): Trac runs a full `gc.collect()` after every request
  (trac.web.main.dispatch_request), which walked all of it each time -- over half of a
  page's CPU (a wiki page and the roadmap: 27 -> 12 ms CPU; 207 -> 80 ms a pair on a busy
  machine). Objects made by requests are collected as before.
"""

from __future__ import annotations

import argparse
import gc
import html
import os
import runpy
import shutil
import sqlite3
import sys
import urllib.parse
from typing import TYPE_CHECKING, Any

from trac.cache import CacheManager  # type: ignore[import-not-found]  # the Trac venv's
from trac.env import open_environment  # type: ignore[import-not-found]  # the Trac venv's
from trac.perm import DefaultPermissionPolicy, PermissionSystem  # type: ignore[import-not-found]  # the Trac venv's
from trac.web.main import dispatch_request  # type: ignore[import-not-found]  # the Trac venv's
from trac.web.standalone import TracEnvironMiddleware, TracHTTPServer  # type: ignore[import-not-found]  # the Trac venv's

if TYPE_CHECKING:  # (read by its package's name; run, from its file: see wsgi_front's docstring)
    from cua.tasks.products.wsgi_front import SerialFront, StartResponse, arguments
else:  # (not by sys.path: the products' folder would shadow packages of the venv)
    _front = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                         "wsgi_front.py"))
    SerialFront, StartResponse, arguments = _front["SerialFront"], _front["StartResponse"], _front["arguments"]

FLUSH_PATH = "/.cua-flush"

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


class TracFront(SerialFront):
    """The shared front with Trac's cache flush and login form (see the module's docstring)."""

    def __init__(self, env_path: str, control_socket: str, project: str) -> None:
        super().__init__(TracEnvironMiddleware(dispatch_request, None, [env_path], True), "tracd_cua", control_socket,
                         quiet=("/chrome/",))
        self.env_path = env_path
        self.project = project
        self.password = os.environ.get("CUA_TRAC_PASSWORD", "")
        self.flush_token = os.environ.get("CUA_TRAC_FLUSH_TOKEN", "")

    def unlocked(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes] | None:
        if environ.get("PATH_INFO", "") == FLUSH_PATH:  # outside the lock: the service calls it while it holds its own loop
            return self._flush(environ, start_response)
        return None

    def locked(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes] | None:
        if str(environ.get("PATH_INFO", "")).rstrip("/") == "/login" and not environ.get("REMOTE_USER"):
            return self._login(environ, start_response)
        return None

    def _flush(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
        if environ.get("REQUEST_METHOD") != "POST" or not self.flush_token or \
                environ.get("HTTP_X_CUA_FLUSH") != self.flush_token:
            return self.plain(start_response, "404 Not Found", "not found")
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
        return self.plain(start_response, "200 OK", "flushed")

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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", required=True)
    parser.add_argument("--project", default="Trac")
    args = arguments(parser)
    app = TracFront(args.env, args.socket, args.project)
    open_environment(args.env, use_cache=True)  # load it now: the first page is not the slow one
    gc.freeze()  # see the module's docstring: Trac's per-request collection skips the startup heap
    httpd = TracHTTPServer(("127.0.0.1", args.port), app, None, [args.env], use_http_11=False)
    print(f"tracd_cua: serving {args.env} on 127.0.0.1:{args.port}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
