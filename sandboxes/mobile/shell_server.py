"""The phone shell's service: serves the shell's page (shell/) to the sandbox's browser and
speaks the app contract (tasks/apps/CONTRACT.md) on its control socket.

The shell keeps its state in its page (sessionStorage, which a browser snapshot already
holds), so the control side has no data: reset, snapshot and restore are no-ops and its
state is empty; the sandbox answers the shell's own state from the page
(`MobileSandbox`, pseudo-app `shell`). Standard library only: it starts in tens of
milliseconds beside every mobile sandbox.

Run: `python -P -m cua.sandboxes.mobile.shell_server` with $CUA_APP_PORT and $CUA_APP_SOCKET.
"""

from __future__ import annotations

import http.server
import json
import os
import socketserver
import sys
import threading
from pathlib import Path
from typing import Any

__all__ = ["Files", "main", "serve"]

SHELL_DIR = Path(__file__).parent / "shell"
#: URL path -> (body, content type)
Files = dict[str, tuple[bytes, str]]


def shell_files() -> Files:
    """The shell's page with its script and style inlined: one request, not three, in the
    load every reset and restore makes before the app frames can start loading."""
    page = (SHELL_DIR / "index.html").read_text()
    page = page.replace('<link rel="stylesheet" href="/shell.css">', f"<style>{(SHELL_DIR / 'shell.css').read_text()}</style>")
    page = page.replace('<script src="/shell.js"></script>', f"<script>{(SHELL_DIR / 'shell.js').read_text()}</script>")
    return {"/": (page.encode(), "text/html; charset=utf-8")}
EX_USAGE = 64


class _Pages(http.server.BaseHTTPRequestHandler):
    """Static files on TCP; nothing else (no data, so no writes to refuse)."""

    files: Files = {}
    #: What `GET /__cua/state` answers.
    state: dict[str, Any] = {}

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        path = self.path.split("?", 1)[0]
        found = self.files.get(path)
        if found is None:
            self._send(404, b"not found", "text/plain")
            return
        self._send(200, found[0], found[1])

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's signature)
        pass  # quiet: a phone's every page load is not worth a line


class _Control(_Pages):
    """The app contract's control endpoints, on the unix socket only."""

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/__cua/health":
            self._json({"ok": True, "app": "shell", "seed": 0})
        elif self.path == "/__cua/state":
            self._json(self.state)
        elif self.path == "/__cua/snapshot":
            self._send(200, b"", "application/octet-stream")
        else:
            self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if self.path in ("/__cua/reset", "/__cua/restore"):
            self._json({"ok": True})
        elif self.path == "/__cua/sql":
            self._send(400, json.dumps({"error": "the shell has no database"}).encode(), "application/json")
        else:
            self._send(404, b"not found", "text/plain")

    def _json(self, value: Any) -> None:
        self._send(200, json.dumps(value).encode(), "application/json")

    def address_string(self) -> str:
        return "unix"


class _Quiet:
    """A browser that drops a connection mid-answer (a page left while loading) is no error."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)  # type: ignore[misc]


class _TCP(_Quiet, http.server.ThreadingHTTPServer):
    daemon_threads = True


class _Unix(_Quiet, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main() -> int:
    return serve(shell_files(), {})


def serve(files: Files, state: dict[str, Any]) -> int:
    """Serve `files` on $CUA_APP_PORT and the contract, answering `state`, on $CUA_APP_SOCKET
    (a service without data: the shell, or a test's page)."""
    pages_handler = type("Pages", (_Pages,), {"files": files, "state": state})
    control_handler = type("Control", (_Control,), {"files": files, "state": state})
    try:
        port, sock = int(os.environ["CUA_APP_PORT"]), os.environ["CUA_APP_SOCKET"]
    except (KeyError, ValueError) as exc:
        print(f"shell_server: needs CUA_APP_PORT and CUA_APP_SOCKET: {exc}", file=sys.stderr)
        return EX_USAGE
    pages = _TCP(("127.0.0.1", port), pages_handler)
    if os.path.exists(sock):
        os.unlink(sock)
    control = _Unix(sock, control_handler)
    threading.Thread(target=control.serve_forever, daemon=True).start()
    print("ready", flush=True)
    try:
        pages.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
