"""What every test shares: a sandbox server per module (`server`, set by `server_options`), a
headless Chromium per module for tests that drive pages through Playwright (`browser`),
the sandbox `kind` a contract runs over (`fake` fast, `browser` slow), a test that adds a
suite from a path leaves no trace in the next, and in the fast lane (`pytest -m "not slow"`)
a test that starts Chromium, Xvfb, a container, QEMU or Ray without the `slow` marker fails,
naming what it started.

`cua.tasks.registry.use_path` adds a suite to the process's registry and to
`$CUA_SUITE_PATHS` (for child processes), as a command should; in a test session that
would hand one test's suite folder to every later test that walks all templates.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_asyncio

if TYPE_CHECKING:
    from playwright.async_api import Browser

    from cua.server.app import RunningServer


# --- one headless Chromium for a module's tests that drive pages themselves ----------------

@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Browser]:
    """Debian's Chromium, headless, as the sandboxes launch it, for a module whose tests drive
    pages through Playwright themselves (an app served in process, a phone's emulation). The
    tests that use it are marked slow."""
    from playwright.async_api import async_playwright

    from cua.sandboxes.browser.launcher import find_executable

    async with async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=find_executable().path, headless=True)
        yield b
        await b.close()


# --- one sandbox server for a module's tests -------------------------------------------

@pytest.fixture(scope="module")
def server_options() -> dict[str, Any]:
    """The `server` fixture's settings: `ServerSettings` fields (max_sandboxes, idle_timeout,
    tokens_file, ...) and `auth`/`token`. A module that needs others overrides this fixture
    (it may use other fixtures, or skip where the host cannot give what it tests)."""
    return {"max_sandboxes": 4}


@pytest.fixture(scope="module")
def server(server_options: dict[str, Any]) -> Iterator[RunningServer]:
    """A real sandbox server (`cua serve`) on a loopback port, shared by a module's tests.

    It runs on an event loop of its own thread, so blocking tests (the sync facade) and
    async ones, whatever their loop, reach it alike over real sockets; on exit every
    sandbox it made is closed."""
    from cua.server.app import serve_in_thread

    with serve_in_thread(**server_options) as running:
        yield running


@pytest.fixture(scope="module", params=["fake", pytest.param("browser", marks=pytest.mark.slow)])
def kind(request: pytest.FixtureRequest) -> str:
    """The sandbox kind a contract runs over: `fake` in the fast lane (the same protocol in
    milliseconds, no Chromium), `browser` (real Chromium) in the slow one. A test that asks
    for it holds both kinds to one contract; what only one kind does stays a test of its own."""
    return str(request.param)


@pytest.fixture(autouse=True)
def _suite_paths_restored() -> Iterator[None]:
    from cua.tasks.registry import SUITE_PATHS_ENV, reload

    before = os.environ.get(SUITE_PATHS_ENV)
    yield
    if os.environ.get(SUITE_PATHS_ENV) != before:
        if before is None:
            os.environ.pop(SUITE_PATHS_ENV, None)
        else:
            os.environ[SUITE_PATHS_ENV] = before
        reload()


# --- the fast lane's guard: an unmarked test that starts a heavy part fails ---------------

#: Process names (as /proc/PID/comm spells them, cut at 15 characters) of the parts a test
#: may start only under the `slow` marker: Chromium, X, containers, QEMU, Ray.
HEAVY = {"chromium": "Chromium", "chrome": "Chromium", "headless_shell": "Chromium", "Xvfb": "Xvfb",
         "bwrap": "a bubblewrap container", "qemu-system-x86": "QEMU", "qemu-system-aar": "QEMU",
         "raylet": "Ray", "gcs_server": "Ray"}


def _heavy_descendants(root: int) -> dict[int, str]:
    """The heavy parts running below `root` now, by pid: a walk down the process tree
    through /proc/PID/task/TID/children (a few reads, where a scan of /proc is hundreds)."""
    found: dict[int, str] = {}
    todo, seen = [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # exited meanwhile
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo += [int(child) for child in f.read().split()]
            except OSError:
                continue
        if pid == root:
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        if name in HEAVY and not _version_probe(pid):
            found[pid] = HEAVY[name]
    return found


def _version_probe(pid: int) -> bool:
    """`chromium --version`, `qemu-system-x86_64 --version` (a run's manifest asks them):
    a probe that prints a version starts nothing."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return True  # gone already: it was no browser or VM
    return argv == [b""] or b"--version" in argv  # empty: a zombie, exited already


class _HeavyWatch:
    """Samples the process tree while the fast lane runs (a short-lived Chromium is seen
    too), and charges each heavy process to the test running when it was first seen."""

    INTERVAL_S = 0.1

    def __init__(self) -> None:
        self.current: str | None = None
        self.owner: dict[int, str] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heavy-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.INTERVAL_S):
            if self.current is not None:
                self.sample(self.current)

    def sample(self, test: str) -> None:
        heavy = _heavy_descendants(os.getpid())
        with self._lock:
            for pid, part in heavy.items():
                self.owner.setdefault(pid, f"{test}\0{part}")

    def started_by(self, test: str) -> set[str]:
        self.sample(test)
        with self._lock:
            return {entry.partition("\0")[2] for entry in self.owner.values() if entry.partition("\0")[0] == test}

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _fast_lane(config: pytest.Config) -> bool:
    """Whether this run deselects slow tests (`-m "not slow"`), the only run the guard
    watches: in a full run a slow module's browser may outlive its tests."""
    expression = str(config.getoption("markexpr") or "")
    return "not slow" in " ".join(expression.split())


_SLOW_MODULE = re.compile(r"^pytestmark\s*=.*\bpytest\.mark\.slow\b", re.MULTILINE)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the fast lane, a module marked slow as a whole is not even imported: collecting
    it would import Playwright, torch, Inspect AI or Ray only to deselect every test."""
    if not (_fast_lane(config) and collection_path.suffix == ".py" and collection_path.name.startswith("test_")):
        return None
    try:
        return True if _SLOW_MODULE.search(collection_path.read_text(encoding="utf-8")) else None
    except OSError:
        return None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if _fast_lane(config) and sys.platform.startswith("linux"):
        config.stash[_WATCH] = _HeavyWatch()


def pytest_unconfigure(config: pytest.Config) -> None:
    watch = config.stash.get(_WATCH, None)
    if watch is not None:
        watch.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    watch = item.config.stash.get(_WATCH, None)
    if watch is not None:
        watch.current = item.nodeid
    try:
        return (yield)
    finally:
        if watch is not None:
            watch.current = None


@pytest.fixture(autouse=True)
def _no_heavy_parts_in_the_fast_lane(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    watch = request.config.stash.get(_WATCH, None)
    if watch is None or request.node.get_closest_marker("slow") is not None:
        return
    heavy = watch.started_by(request.node.nodeid)
    if heavy:
        pytest.fail(f"{request.node.nodeid} starts {', '.join(sorted(heavy))} but is not marked "
                    "@pytest.mark.slow (the fast lane, `pytest -m 'not slow'`, runs without them)", pytrace=False)


_WATCH = pytest.StashKey[_HeavyWatch]()
