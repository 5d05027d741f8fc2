"""The agent's state, which every operation works on: the display and its one X thread,
the screen, the processes the host asked for, and the pids the agent protects."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

try:
    from . import wire
    from .faults import GuestFault
    from .file_events import FileEvents
    from .screen import Screen
except ImportError:  # run as a script from this folder (inside a VM image)
    import wire  # type: ignore[no-redef,import-not-found]
    from faults import GuestFault  # type: ignore[no-redef,import-not-found]
    from file_events import FileEvents  # type: ignore[no-redef,import-not-found]
    from screen import Screen  # type: ignore[no-redef,import-not-found]

__all__ = ["AGENT_VERSION", "Agent", "Handler", "agent_protected", "agent_protected_xserver", "log", "wait_until"]

AGENT_VERSION = "1.0"

Handler = Callable[["Agent", dict[str, Any], list[bytes]], Awaitable[tuple[dict[str, Any], list[bytes]]]]


def log(msg: str) -> None:
    print(f"[cua-guest] {msg}", file=sys.stderr, flush=True)


#: Pids of the X server and window manager, which `kill all` and `apps` leave alone.
agent_protected: set[int] = set()
#: The X server's pid, when we started it: its CPU time does not count as app activity.
agent_protected_xserver: set[int] = set()


class Agent:
    def __init__(self, display: str, *, home: str, input_backend: str = "auto", app_log: str | None = None,
                 app_user: tuple[int, int] | None = None) -> None:
        self.display = display
        self.app_log = app_log
        self.home = home
        #: (uid, gid) the apps, the window manager and state commands run as, when the
        #: agent itself runs as root (a container): apps never see a root account.
        self.app_user = app_user
        self.env = {**os.environ, "DISPLAY": display, "HOME": home}
        # All X work happens on this one thread: Xlib connections are not thread-safe.
        self._x = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="x")
        self._screen: Screen | None = None
        self._input_backend = input_backend
        self.children: dict[int, dict[str, Any]] = {}
        #: What the window manager adds to a requested window position (learnt once).
        self.place_offset: tuple[int, int] = (0, 0)
        self.started = time.time()
        #: The X server this agent started (--start-x), whose death ends the session.
        self.xserver: subprocess.Popen[bytes] | None = None
        #: What happens to the user's files, from the start (the `files` query's `events`).
        self.file_events = FileEvents(home)

    async def xserver_died(self) -> bool:
        """Whether the X server this agent started has exited (waiting a moment for one
        that is exiting: its connections close before it can be reaped)."""
        if self.xserver is None:
            return False
        try:
            await asyncio.to_thread(self.xserver.wait, 2.0)
        except subprocess.TimeoutExpired:
            return False
        return True

    async def start(self) -> None:
        self._screen = await self.on_x(lambda: Screen(self.display, input_backend=self._input_backend))
        # The X server works for whoever draws (damage covers that) and for our own grabs.
        self._screen.ignore_cpu_of(agent_protected_xserver)
        await asyncio.to_thread(self.file_events.start)

    @property
    def screen(self) -> Screen:
        assert self._screen is not None
        return self._screen

    async def on_x(self, fn: Callable[[], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._x, fn)

    def hello(self) -> dict[str, Any]:
        return {"hello": {"agent": "cua-guest", "version": AGENT_VERSION, "wire": wire.WIRE_VERSION,
                          "display": self.display, "pid": os.getpid()}}

    # --- processes the host asked for ---

    def spawn(self, argv: list[str], env: dict[str, str] | None, cwd: str | None, name: str | None) -> int:
        log = open(self.app_log, "ab") if self.app_log else None
        try:
            out = log if log is not None else subprocess.DEVNULL
            proc = subprocess.Popen(argv, env={**self.env, **(env or {})},
                                    cwd=os.path.join(self.home, cwd) if cwd else self.home,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
                                    **self.as_user())
        finally:
            if log is not None:
                log.close()
        self.children[proc.pid] = {"pid": proc.pid, "argv": argv, "name": name or os.path.basename(argv[0]),
                                   "env": env or {}, "cwd": cwd, "proc": proc}
        return proc.pid

    def as_user(self) -> dict[str, Any]:
        """Popen arguments that run a child as the app user (none when there is none)."""
        if self.app_user is None:
            return {}
        uid, gid = self.app_user
        return {"user": uid, "group": gid, "extra_groups": []}

    def give_to_user(self, path: str) -> None:
        if self.app_user is not None:
            os.chown(path, *self.app_user)

    def reap(self) -> None:
        for pid, child in list(self.children.items()):
            if child["proc"].poll() is not None:
                del self.children[pid]

    def kill(self, pid: int, *, group: bool = True) -> bool:
        try:
            if group:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return False
        child = self.children.pop(pid, None)
        if child is not None:
            child["proc"].wait()
        return True

    def shutdown(self) -> None:
        for pid in list(self.children):
            self.kill(pid)
        self.file_events.stop()
        if self._screen is not None:
            self._x.submit(self._screen.close).result(timeout=5)
        self._x.shutdown(wait=False)



async def wait_until(agent: Agent, predicate: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        listing: dict[str, Any] = await agent.on_x(agent.screen.windows)
        if predicate(listing):
            return listing
        if time.monotonic() >= deadline:
            raise GuestFault(f"condition not met within {timeout:g} s", reason="timeout")
        # The window list changes without a cheap portable notification here (the EWMH
        # property events need a second connection per waiter); poll at a short interval.
        await asyncio.sleep(0.03)
