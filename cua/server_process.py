"""`cua serve` as a child process: the deployment shape where the server has its own
process and core, for the episode layer's opener (a run with no `--server` starts one),
benchmarks, and callers whose own event loop is busy.

It knows the server only by its command line (`python -m cua.server`) and its health URL,
so the episode layer starts a server without importing it (ARCHITECTURE.md: the episode
layer and the server meet only at the protocol). `cua.server.app` re-exports these names.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from collections.abc import AsyncIterator, Callable
from typing import NamedTuple

__all__ = ["RunningServer", "die_with_parent", "free_port", "serve_in_subprocess"]


class RunningServer(NamedTuple):
    url: str
    token: str | None


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def die_with_parent(parent: int) -> Callable[[], None] | None:
    """A preexec function asking Linux to SIGTERM the child when its parent dies. libc and
    prctl are resolved here, before the fork: the child only calls them."""
    import ctypes
    import ctypes.util
    import os
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


@contextlib.asynccontextmanager
async def serve_in_subprocess(*, token: str | None = None, max_sandboxes: int = 16,
                              idle_timeout: float | None = 900.0, startup_timeout: float = 60.0,
                              log_level: str = "warning") -> AsyncIterator[RunningServer]:
    """Run `python -m cua.server` as a child process on a free loopback port.

    The deployment shape (the server has its own process and core), for benchmarks
    and for callers whose own event loop is busy. Yields `(url, token)`; on exit the
    server is stopped (SIGINT, then SIGKILL) and has closed its sandboxes.

    The child dies with its parent: it gets SIGTERM (and shuts down, closing its sandboxes)
    when this process ends in any way, SIGKILL included (Linux `PR_SET_PDEATHSIG`). It runs
    in its own session, so a Ctrl-C at the terminal reaches only the parent, which then
    stops it in order instead of losing its episodes to a server that quit first.
    """
    import os
    import signal
    import sys

    import httpx

    token = token or secrets.token_urlsafe(24)
    port = free_port()
    argv = [sys.executable, "-m", "cua.server", "--port", str(port),
            "--max-sandboxes", str(max_sandboxes), "--idle-timeout", str(idle_timeout or 0), "--log-level", log_level]
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.DEVNULL,
                                                env={**os.environ, "CUA_TOKEN": token},  # not on argv, where `ps` shows it
                                                start_new_session=True, preexec_fn=die_with_parent(os.getpid()))
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + startup_timeout
        async with httpx.AsyncClient() as http:
            while True:
                if proc.returncode is not None:
                    raise RuntimeError(f"the server exited with code {proc.returncode} during startup")
                try:
                    if (await http.get(f"http://127.0.0.1:{port}/v1/health", timeout=2)).status_code == 200:
                        break
                except httpx.TransportError:
                    pass  # not listening yet
                if loop.time() > deadline:
                    raise RuntimeError(f"the server did not answer on port {port} within {startup_timeout}s")
                await asyncio.sleep(0.1)  # polling a starting process: nothing else to wait on
        yield RunningServer(f"ws://127.0.0.1:{port}/v1/ws", token)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(proc.wait(), timeout=30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
