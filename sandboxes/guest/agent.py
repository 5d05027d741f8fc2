"""The cua guest agent: serves one desktop (an X display) to the host over a stream.

Runs inside a desktop container or a VM on the guest's system Python 3 with the
standard library only; python3-xlib, Pillow, mss, xdotool, xclip and AT-SPI are used
when present (see screen.py). It imports nothing from `cua`.

    python3 agent.py --listen unix:/run/cua/agent.sock [--display :1]
    python3 agent.py --listen tcp:127.0.0.1:7000 --start-x 1280x720 --wm openbox
    python3 agent.py --listen serial:/dev/virtio-ports/cua.agent --start-x 1280x720

Requests and replies: see wire.py. Operations:
  ping, info, act, screenshot, windows, query, spawn, kill, apps, wait_window, write_file, run.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

if not __package__:  # run as a script: find the sibling modules even under `python3 -I`
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    from . import queries, wire
    from .faults import BadRequestFault, GuestFault, UnsupportedFault
    from .screen import Screen
except ImportError:  # run as a script from this folder (inside a VM image)
    import queries  # type: ignore[no-redef,import-not-found]
    import wire  # type: ignore[no-redef,import-not-found]
    from faults import BadRequestFault, GuestFault, UnsupportedFault  # type: ignore[no-redef,import-not-found]
    from screen import Screen  # type: ignore[no-redef,import-not-found]

AGENT_VERSION = "1.0"

#: Default settle bounds (ms): how long to wait for the first screen update after an
#: action, how long the screen must then stay still, and the overall cap.
DEFAULT_SETTLE = {"first_ms": 15.0, "quiet_ms": 25.0, "timeout_ms": 2000.0}

Handler = Callable[["Agent", dict[str, Any], list[bytes]], Awaitable[tuple[dict[str, Any], list[bytes]]]]


def _log(msg: str) -> None:
    print(f"[cua-guest] {msg}", file=sys.stderr, flush=True)


def start_xvfb(size: str, display: str | None, *, stall_s: float = 60.0,
               wait_s: float = 900.0) -> tuple[subprocess.Popen[bytes], str]:
    """Start Xvfb and return once it accepts clients (it writes its number to -displayfd).

    No fixed short limit: on an emulated CPU of a loaded host Xvfb took over 30 s to get
    ready. The wait fails when Xvfb exits, when it used no CPU for `stall_s` seconds (it
    is stuck), or after `wait_s`, the outer bound."""
    try:
        w, h = (int(v) for v in size.lower().split("x"))
    except ValueError as exc:
        raise SystemExit(f"--start-x wants WIDTHxHEIGHT, got {size!r}") from exc
    read_fd, write_fd = os.pipe()
    argv = ["Xvfb", *([display] if display else []), "-screen", "0", f"{w}x{h}x24", "-nolisten", "tcp",
            "-displayfd", str(write_fd), "-noreset", "+extension", "DAMAGE", "+extension", "XTEST"]
    proc = subprocess.Popen(argv, pass_fds=(write_fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    os.close(write_fd)
    started = time.monotonic()
    cpu, progressed = -1.0, started
    data = b""
    import select

    while not data.endswith(b"\n"):
        ready, _, _ = select.select([read_fd], [], [], 1.0)
        if not ready:
            now = time.monotonic()
            used = _process_cpu(proc.pid)
            if used > cpu:
                cpu, progressed = used, now
            elif now - progressed >= stall_s or now - started >= wait_s:
                proc.kill()
                why = (f"it used no CPU in the last {stall_s:g} s" if now - progressed >= stall_s
                       else f"the outer bound is {wait_s:g} s")
                raise SystemExit(f"Xvfb was not ready after {now - started:.0f} s: {why} ({cpu:.1f} s of CPU in all)")
            continue
        chunk = os.read(read_fd, 64)
        if not chunk:
            raise SystemExit(f"Xvfb exited before it was ready (status {proc.wait()})")
        data += chunk
    os.close(read_fd)
    _log(f"Xvfb ready after {time.monotonic() - started:.1f} s")
    name = f":{int(data.strip())}"
    keyboard_without_autorepeat(name)
    return proc, name


def keyboard_without_autorepeat(display_name: str) -> None:
    """Turn the X server's key autorepeat off, so that a key action is one key press
    however loaded the machine is.

    The server repeats a key held past its autorepeat delay (660 ms), XTest's fake keys
    included, and counts the hold until it reads the release. The press and its release
    are sent together, but a server held up between the two for longer than the delay (an
    emulated CPU on a loaded host) would type the key again. A key held on purpose
    (KeyDown, Wait, KeyUp) is one press too. Without python-xlib, xset."""
    try:
        from Xlib import X, display  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        env = {**os.environ, "DISPLAY": display_name}
        try:
            done = subprocess.run(["xset", "r", "off"], env=env, capture_output=True, timeout=30, check=False)
        except FileNotFoundError:
            raise SystemExit("cannot turn key autorepeat off: neither python-xlib nor xset is installed") from None
        if done.returncode != 0:
            raise SystemExit(f"xset r off failed: {done.stderr.decode(errors='replace').strip()}")
        return
    conn = display.Display(display_name)
    try:
        conn.change_keyboard_control(auto_repeat_mode=X.AutoRepeatModeOff)
        conn.sync()
    finally:
        conn.close()


def _process_cpu(pid: int) -> float:
    """CPU seconds one process used (user + system); 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: Toolkit settings for every app the agent starts: no blinking text caret, so that a
#: still screen reads the same twice (a blinking caret made a restored screen differ
#: from the snapshot's by one 1x18 px caret, and screenshots flicker between steps).
_GTK_SETTINGS = "[Settings]\ngtk-cursor-blink = false\n"
_GTK2_RC = "gtk-cursor-blink = 0\n"


def steady_toolkit_env(base_dir: str) -> dict[str, str]:
    """Write GTK 2/3/4 settings under `base_dir` (readable by the apps' user) and return
    the environment that makes the apps read them, before the system's own."""
    root = os.path.join(base_dir, "cua-xdg")
    for version in ("gtk-3.0", "gtk-4.0"):
        os.makedirs(os.path.join(root, version), mode=0o755, exist_ok=True)
        with open(os.path.join(root, version, "settings.ini"), "w") as f:
            f.write(_GTK_SETTINGS)
    gtk2 = os.path.join(root, "gtkrc-2.0")
    with open(gtk2, "w") as f:
        f.write(_GTK2_RC)
    for path in (root, os.path.join(root, "gtk-3.0"), os.path.join(root, "gtk-4.0")):
        os.chmod(path, 0o755)
    system_dirs = os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    return {"XDG_CONFIG_DIRS": f"{root}:{system_dirs}", "GTK2_RC_FILES": gtk2}


def start_session_bus(timeout: float = 10.0, user: dict[str, Any] | None = None) -> subprocess.Popen[bytes]:
    """A D-Bus session bus (apps' AT-SPI bridges find the accessibility bus through it);
    its address goes into our environment, which spawned apps inherit."""
    runtime = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    path = os.path.join(runtime, f"cua-bus-{os.getpid()}")
    proc = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--address=unix:path={path}"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True,
                            **(user or {}))
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the D-Bus session bus did not start")
        time.sleep(0.01)  # the daemon creates its socket shortly; no event to wait on
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={path}"
    os.environ.pop("NO_AT_BRIDGE", None)
    return proc


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
        if self._screen is not None:
            self._x.submit(self._screen.close).result(timeout=5)
        self._x.shutdown(wait=False)


# --- operations ---

def _settle_opts(req: dict[str, Any]) -> dict[str, float]:
    opts = dict(DEFAULT_SETTLE)
    given = req.get("settle") or {}
    if not isinstance(given, dict):
        raise BadRequestFault("settle must be an object")
    for key in opts:
        if key in given:
            value = float(given[key])
            if not 0 <= value <= 60_000:
                raise BadRequestFault(f"settle.{key} must be within 0..60000 ms")
            opts[key] = value
    return opts


def _shot_opts(obs: dict[str, Any]) -> tuple[str, int, tuple[int, int] | None]:
    size = None
    if obs.get("width") is not None or obs.get("height") is not None:
        w, h = int(obs.get("width") or 0), int(obs.get("height") or 0)
        if not (0 < w <= 16384 and 0 < h <= 16384):
            raise BadRequestFault("screenshot width and height must both be within 1..16384")
        size = (w, h)
    return str(obs.get("format", "jpeg")), int(obs.get("quality", 80)), size


async def op_ping(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    return {"pong": True, "time": time.time()}, []


async def op_info(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    s = agent.screen

    def versions() -> dict[str, Any]:
        out: dict[str, Any] = {"agent": AGENT_VERSION, "wire": wire.WIRE_VERSION, "python": platform.python_version()}
        for mod in ("Xlib", "PIL", "mss", "pyatspi"):
            try:
                m = __import__(mod)
                out[mod] = str(getattr(m, "__version__", getattr(m, "VERSION", "present")))
            except Exception:  # absent or broken: reported as None
                out[mod] = None
        for tool in ("xdotool", "xclip", "wmctrl"):
            out[tool] = shutil.which(tool) is not None
        return out

    return {"screen": {"width": s.width, "height": s.height}, "display": agent.display, "home": agent.home,
            "input": s.input_method, "capture": s.capture_method, "settle": s.settle_method,
            "queries": queries.KINDS, "versions": versions(), "pid": os.getpid(),
            "uptime_s": round(time.time() - agent.started, 3)}, []


async def op_act(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Perform one action (screen pixels), wait for the screen to settle, optionally grab it."""
    action = req.get("action")
    if not isinstance(action, dict):
        raise BadRequestFault("act needs an action object")
    settle = _settle_opts(req)
    observe = req.get("observe")
    shot = _shot_opts(observe) if isinstance(observe, dict) else None
    s = agent.screen

    def run() -> tuple[dict[str, Any], list[bytes]]:
        result, data = s.act(action, settle, shot)
        if req.get("focused"):
            result["focused"] = _focused(s, req["focused"])
        return result, ([data] if data is not None else [])

    result: tuple[dict[str, Any], list[bytes]] = await agent.on_x(run)
    return result


def _focused(screen: Screen, what: Any) -> dict[str, Any] | None:
    """The focused window for a reply's `focused` field: `"title"` asks only {id, title}
    (cheap enough for every step), anything else true the whole description."""
    return screen.focused_title() if what == "title" else screen.focused_window()


async def op_screenshot(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """The screen as an image; with `focused`, the focused window too (what an observation's
    title comes from), read on the same X turn."""
    fmt, quality, size = _shot_opts(req)
    s = agent.screen

    def run() -> tuple[bytes, dict[str, Any]]:
        data, meta = s.screenshot(fmt, quality, size)
        if req.get("focused"):
            meta["focused"] = _focused(s, req["focused"])
        return data, meta

    data, meta = await agent.on_x(run)
    return meta, [data]


async def op_windows(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    return await agent.on_x(agent.screen.windows), []


async def op_query(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Answer a list of state queries; the X-bound ones on the X thread, others in parallel."""
    items = req.get("queries")
    if not isinstance(items, list):
        raise BadRequestFault("query needs a list of queries")
    loop = asyncio.get_running_loop()
    contexts = [queries.QueryContext(agent.home, agent.env, agent.screen.windows, run_as=agent.as_user())
                for _ in items]

    async def one(q: Any, ctx: queries.QueryContext) -> dict[str, Any]:
        if isinstance(q, dict) and q.get("kind") == "windows":
            answer: dict[str, Any] = await agent.on_x(lambda: queries.answer(q, ctx))
            return answer
        return await loop.run_in_executor(None, queries.answer, q, ctx)

    results = await asyncio.gather(*(one(q, c) for q, c in zip(items, contexts)))
    out: list[bytes] = []
    for result, ctx in zip(results, contexts):
        if "blob" in result:
            out.append(ctx.blobs[result["blob"]])
            result["blob"] = len(out) - 1
    return {"results": list(results)}, out


async def op_spawn(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    argv = req.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise BadRequestFault("spawn needs argv, a non-empty list of strings")
    if shutil.which(argv[0], path=agent.env.get("PATH")) is None and not os.path.isfile(argv[0]):
        raise UnsupportedFault(f"{argv[0]!r} is not installed in the guest", reason="not_found")
    env = req.get("env") or {}
    if not isinstance(env, dict):
        raise BadRequestFault("env must be an object")
    pid = agent.spawn(argv, {str(k): str(v) for k, v in env.items()}, req.get("cwd"), req.get("name"))
    return {"pid": pid}, []


async def op_kill(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Kill processes: `pids` (their process groups), or `all: true` for every process that
    owns a window or was spawned (the apps; not the X server, the window manager, or us)."""
    agent.reap()
    targets: set[int] = set()
    if req.get("all"):
        targets |= set(agent.children)
        listing = await agent.on_x(agent.screen.windows)
        targets |= {w["pid"] for w in listing["windows"] if w.get("pid")}
    targets |= {int(p) for p in req.get("pids") or []}
    targets.discard(os.getpid())
    targets -= agent_protected
    killed = [pid for pid in sorted(targets) if agent.kill(pid) or agent.kill(pid, group=False)]
    if req.get("wait_windows_gone", True) and killed:
        await _wait_until(agent, lambda listing: not any(w.get("pid") in killed for w in listing["windows"]),
                          float(req.get("wait_s", 5.0)))
    return {"killed": killed}, []


async def op_apps(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """The processes that own top-level windows, then the apps this agent started that
    own none (a background helper: a task's mail server), with what restarting them needs."""
    agent.reap()
    listing = await agent.on_x(agent.screen.windows)
    apps: dict[int, dict[str, Any]] = {}
    owned: set[int] = set()  # spawned apps accounted for by a window
    for win in listing["windows"]:
        pid = win.get("pid")
        if not pid or pid in agent_protected:
            continue
        app = apps.get(pid)
        if app is None:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue  # exited, or not in our pid namespace
            # a window of a process the app started (LibreOffice's soffice.bin under its
            # launcher) is the app's: restarting it means running what was spawned
            spawned = agent.children.get(pid) or agent.children.get(_session_of(pid) or -1)
            if spawned:
                owned.add(spawned["pid"])
            app = apps[pid] = {"pid": pid, "argv": spawned["argv"] if spawned else argv, "cwd": cwd,
                               "name": spawned["name"] if spawned else os.path.basename(argv[0]) if argv else "",
                               "env": spawned["env"] if spawned else {}, "windows": []}
        app["windows"].append({k: win[k] for k in ("id", "title", "class", "x", "y", "width", "height")})
    for pid, child in agent.children.items():
        if pid in owned or pid in apps:
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue  # exited since the reap
        apps[pid] = {"pid": pid, "argv": child["argv"], "cwd": cwd, "name": child["name"], "env": child["env"],
                     "windows": []}
    return {"apps": sorted(apps.values(), key=lambda a: a["pid"])}, []


async def _wait_until(agent: Agent, predicate: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any]:
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


async def op_wait_window(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Wait until a window of process `pid`, or of `class` (case-insensitive substring of
    class or instance), is mapped; returns it. With both, a window that names its process
    (_NET_WM_PID) must be that process's; `class` matches the others.

    No fixed short limit (a loaded machine starts apps slowly): with a `pid`, the wait
    fails early only when the app's session has no process left, or when it used no CPU
    for `stall_s` seconds; `wait_s` is the generous outer bound. Errors say what was
    waited for, for how long, and what the app did meanwhile."""
    pid = req.get("pid")
    klass = str(req.get("class") or "").lower()
    if pid is None and not klass:
        raise BadRequestFault("wait_window needs pid or class")
    wait_s = float(req.get("wait_s", 600.0))
    stall_s = float(req.get("stall_s", 120.0))

    def match(w: dict[str, Any]) -> bool:
        if pid is not None and (w.get("pid") is not None or not klass):
            # the app's own process, or one it started (LibreOffice's launcher starts soffice.bin)
            return bool(w.get("pid") == pid or (w.get("pid") and _session_of(int(w["pid"])) == pid))
        return klass in (w.get("class") or "").lower() or klass in (w.get("instance") or "").lower()

    what = " and ".join(x for x in (f"process {pid}" if pid is not None else "",
                                    f"class {klass!r}" if klass else "") if x)
    started = time.monotonic()
    cpu, progressed, checked = -1.0, started, 0.0
    while True:
        listing = await agent.on_x(agent.screen.windows)
        found = next((w for w in listing["windows"] if match(w) and w["mapped"]), None)
        if found is not None:
            return {"window": found, "waited_s": round(time.monotonic() - started, 3)}, []
        now = time.monotonic()
        waited = now - started
        if pid is not None and now - checked >= 1.0:
            checked = now
            alive, used = _session_cpu(int(pid))
            if not alive:
                child = agent.children.get(int(pid))
                status = child["proc"].poll() if child else None
                raise GuestFault(f"no window of {what}: the app exited (status {status}) after {waited:.1f} s "
                                 "without mapping one", reason="exited")
            if used > cpu:
                cpu, progressed = used, now
            elif now - progressed >= stall_s:
                raise GuestFault(f"no window of {what} after {waited:.0f} s: the app used no CPU in the last "
                                 f"{stall_s:g} s ({cpu:.1f} s in all); it is stuck", reason="timeout")
        if waited >= wait_s:
            raise GuestFault(f"no window of {what} within {wait_s:g} s"
                             + (f" (the app used {cpu:.1f} s of CPU)" if cpu >= 0 else ""), reason="timeout")
        # The window list changes without a cheap portable notification here (the EWMH
        # property events need a second connection per waiter); poll at a short interval.
        await asyncio.sleep(0.03)


def _session_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split()[3])


def _session_cpu(sid: int) -> tuple[bool, float]:
    """Whether any process of session `sid` (an app started in its own session) lives, and
    the CPU seconds its processes used (the leader's count includes its reaped children)."""
    tick = os.sysconf("SC_CLK_TCK")
    alive, total = False, 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # exited while we looked
        fields = stat[stat.rindex(b")") + 2:].split()
        # fields: state ppid pgrp session ... utime(11) stime(12) cutime(13) cstime(14)
        if int(fields[3]) != sid or fields[0] in (b"Z", b"X"):
            continue
        alive = True
        total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    return alive, total / tick


async def op_write_file(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Write the one blob sent with the request to `path` (relative to $HOME): atomically,
    or appended to the file with `append` (a chunked upload). Returns the path and the
    file's size after the write."""
    if len(blobs) != 1:
        raise BadRequestFault("write_file needs exactly one blob")
    path = os.path.normpath(os.path.join(agent.home, os.path.expanduser(str(req.get("path", "")))))
    os.makedirs(os.path.dirname(path) or "/", exist_ok=True)
    if req.get("append"):
        with open(path, "ab") as f:
            f.write(blobs[0])
        agent.give_to_user(path)
    else:
        tmp = f"{path}.cua-tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(blobs[0])
        if req.get("mode") is not None:
            os.chmod(tmp, int(req["mode"]))
        agent.give_to_user(tmp)
        os.replace(tmp, path)
    return {"path": path, "bytes": len(blobs[0]), "size": os.path.getsize(path)}, []


async def op_run(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Run one command as the app user, bounded in time and kept output; the optional
    blob is its stdin."""
    argv = req.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise BadRequestFault("run needs argv, a non-empty list of strings")
    if shutil.which(argv[0], path=agent.env.get("PATH")) is None and not os.path.isfile(argv[0]):
        raise UnsupportedFault(f"{argv[0]!r} is not installed in the guest", reason="not_found")
    cwd = os.path.normpath(os.path.join(agent.home, str(req["cwd"]))) if req.get("cwd") else agent.home
    t0 = time.monotonic()
    result = await asyncio.get_running_loop().run_in_executor(None, lambda: queries.bounded_run(
        argv, timeout=float(req.get("time_limit", 30.0)), max_bytes=int(req.get("max_bytes", 100_000)), cwd=cwd,
        env=agent.env, stdin=blobs[0] if blobs else None, run_as=agent.as_user()))
    result["duration_ms"] = round((time.monotonic() - t0) * 1000, 1)
    if result["timed_out"]:
        result["returncode"] = None
    return result, []


async def op_place_windows(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Move/resize windows (`places`: [{id, x, y, width, height}]) and focus `focus` (an id),
    through the window manager; waits (bounded) until the window list shows it done."""
    places = req.get("places")
    if not isinstance(places, list):
        raise BadRequestFault("place_windows needs a list of places")
    focus = req.get("focus")
    wanted = {int(p["id"]): (int(p["x"]), int(p["y"]), int(p["width"]), int(p["height"])) for p in places}
    # Windows already in place get no request: a request the window manager answers late
    # could move them after we found them in place.
    current = await agent.on_x(agent.screen.windows)
    now = {w["id"]: (w["x"], w["y"], w["width"], w["height"]) for w in current["windows"]}
    wanted = {wid: g for wid, g in wanted.items() if now.get(wid) != g}
    if focus is not None and current["focused"] == int(focus):
        focus = None
    if not wanted and focus is None:
        return {"placed": True, "windows": current["windows"]}, []

    def send() -> None:
        ox, oy = agent.place_offset
        for wid, (x, y, w, h) in wanted.items():
            agent.screen.place_window(wid, x - ox, y - oy, w, h)
        if focus is not None:
            agent.screen.activate_window(int(focus))

    def placed(listing: dict[str, Any]) -> bool:
        geometry = {w["id"]: (w["x"], w["y"], w["width"], w["height"]) for w in listing["windows"]}
        return all(geometry.get(wid) == g for wid, g in wanted.items()) and \
            (focus is None or listing["focused"] == int(focus))

    def correct(listing: dict[str, Any]) -> None:
        # Window managers differ by a border width in how they read the requested
        # position: learn what the request missed by (kept for later requests), ask again.
        geometry = {w["id"]: (w["x"], w["y"]) for w in listing["windows"]}
        missed = [(geometry[wid][0] - x, geometry[wid][1] - y) for wid, (x, y, _, _) in wanted.items()
                  if wid in geometry]
        if missed:
            ox, oy = agent.place_offset
            agent.place_offset = (ox + missed[0][0], oy + missed[0][1])
        ox, oy = agent.place_offset
        for wid, (x, y, w, h) in wanted.items():
            agent.screen.place_window(wid, x - ox, y - oy, w, h)

    wait_s = float(req.get("wait_s", 3.0))
    await agent.on_x(send)
    for attempt in range(2):
        try:
            # the window manager acts within milliseconds; a first miss is a position offset
            listing = await _wait_until(agent, placed, min(0.3, wait_s) if attempt == 0 else wait_s)
            return {"placed": True, "windows": listing["windows"]}, []
        except GuestFault:
            if attempt == 0:
                listing = await agent.on_x(agent.screen.windows)
                await agent.on_x(lambda: correct(listing))
    # The window manager may refuse (a size below a window's minimum): report, not fail.
    return {"placed": False, "windows": (await agent.on_x(agent.screen.windows))["windows"]}, []


OPS: dict[str, Handler] = {
    "ping": op_ping,
    "info": op_info,
    "act": op_act,
    "screenshot": op_screenshot,
    "windows": op_windows,
    "query": op_query,
    "spawn": op_spawn,
    "kill": op_kill,
    "apps": op_apps,
    "wait_window": op_wait_window,
    "write_file": op_write_file,
    "run": op_run,
    "place_windows": op_place_windows,
}

#: Pids of the X server and window manager, which `kill all` and `apps` leave alone.
agent_protected: set[int] = set()
#: The X server's pid, when we started it: its CPU time does not count as app activity.
agent_protected_xserver: set[int] = set()


# --- serving a stream ---

async def serve_stream(agent: Agent, reader: asyncio.StreamReader, write: Callable[[bytes], None]) -> None:
    decoder = wire.Decoder()
    pending_blobs: dict[int, list[bytes]] = {}
    tasks: set[asyncio.Task[None]] = set()
    write(wire.encode_message(agent.hello()))

    async def handle(body: dict[str, Any], blobs: list[bytes]) -> None:
        msg_id = body.get("id")
        op = OPS.get(str(body.get("op")))
        try:
            if not isinstance(msg_id, int):
                raise BadRequestFault("request needs an integer id")
            if op is None:
                raise BadRequestFault(f"unknown op {body.get('op')!r}")
            result, out = await op(agent, body, blobs)
            write(wire.encode_reply(wire.ok_reply(msg_id, result), out))
        except GuestFault as exc:
            write(wire.encode_message(wire.error_reply(msg_id if isinstance(msg_id, int) else None,
                                                       exc.code, exc.message, exc.reason)))
        except (ValueError, TypeError, KeyError) as exc:
            write(wire.encode_message(wire.error_reply(msg_id if isinstance(msg_id, int) else None,
                                                       "bad_request", f"{type(exc).__name__}: {exc}")))
        except Exception as exc:  # keep serving: one failed request must not end the session
            if await agent.xserver_died():
                return  # no answer: the session ends (see main), which the host reports as a crash
            _log(f"op {body.get('op')!r} failed: {type(exc).__name__}: {exc}")
            write(wire.encode_message(wire.error_reply(msg_id if isinstance(msg_id, int) else None,
                                                       "internal", f"{type(exc).__name__}: {exc}")))

    try:
        while True:
            chunk = await reader.read(1 << 20)
            if not chunk:
                break
            for frame in decoder.feed(chunk):
                if isinstance(frame, wire.Blob):
                    pending_blobs.setdefault(frame.id, []).append(frame.data)
                    continue
                msg_id = frame.body.get("id")
                blobs = pending_blobs.pop(msg_id, []) if isinstance(msg_id, int) else []
                task = asyncio.create_task(handle(frame.body, blobs))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
    except wire.ProtocolError as exc:
        _log(f"dropping connection: {exc}")
    finally:
        for task in tasks:
            task.cancel()


async def serve(agent: Agent, listen: str) -> None:
    scheme, _, where = listen.partition(":")

    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await serve_stream(agent, reader, writer.write)
        finally:
            writer.close()

    if scheme == "unix":
        if os.path.exists(where):
            os.unlink(where)
        tmp = f"{where}.tmp"
        if os.path.exists(tmp):
            os.unlink(tmp)
        # Bind under a temporary name and rename: the host treats the socket's appearance
        # as "the agent is ready", so it must never see a socket that does not accept yet.
        server = await asyncio.start_unix_server(on_conn, path=tmp, limit=1 << 20)
        os.chmod(tmp, 0o600)
        os.rename(tmp, where)
        async with server:
            await server.serve_forever()
    elif scheme == "tcp":
        host, _, port = where.rpartition(":")
        server = await asyncio.start_server(on_conn, host=host or "127.0.0.1", port=int(port))
        async with server:
            await server.serve_forever()
    elif scheme in ("serial", "stdio"):
        await _serve_pipe(agent, where if scheme == "serial" else None)
    else:
        raise SystemExit(f"--listen wants unix:PATH, tcp:HOST:PORT, serial:DEVICE or stdio, got {listen!r}")


async def _serve_pipe(agent: Agent, device: str | None) -> None:
    """Serve a character device (virtio-serial) or stdin/stdout: one stream, no accept."""
    loop = asyncio.get_running_loop()
    while True:
        if device is None:
            rfd, wfd = os.dup(0), os.dup(1)
        else:
            rfd = os.open(device, os.O_RDWR | os.O_NONBLOCK)
            wfd = os.dup(rfd)
        reader = asyncio.StreamReader(limit=1 << 20)
        rtransport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                     os.fdopen(rfd, "rb", buffering=0))
        wtransport, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(wfd, "wb", buffering=0))
        try:
            await serve_stream(agent, reader, wtransport.write)
        finally:
            rtransport.close()
            wtransport.close()
        if device is None:
            return
        # A virtio-serial port reads EOF while no host is attached, and no event says when
        # one attaches again: reopen after a short pause instead of spinning.
        await asyncio.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cua-guest", description=__doc__.split("\n")[0])
    parser.add_argument("--listen", required=True, help="unix:PATH | tcp:HOST:PORT | serial:DEVICE | stdio")
    parser.add_argument("--display", default=os.environ.get("DISPLAY"), help="X display (default $DISPLAY)")
    parser.add_argument("--start-x", metavar="WxH", help="start Xvfb with this screen size first")
    parser.add_argument("--wm", help="window manager command to start after X (e.g. openbox)")
    parser.add_argument("--home", default=os.environ.get("HOME", "/root"))
    parser.add_argument("--input", default="auto", choices=["auto", "xtest", "xdotool", "pyautogui"])
    parser.add_argument("--app-log", help="append the output of spawned apps to this file")
    parser.add_argument("--app-user", metavar="UID:GID",
                        help="run apps, the window manager, the session bus and state commands as this user "
                             "(when the agent runs as root)")
    parser.add_argument("--dbus", action="store_true",
                        help="start a D-Bus session bus for the apps (needed for AT-SPI accessibility)")
    args = parser.parse_args(argv)

    xvfb = None
    display = args.display
    if args.start_x:
        xvfb, display = start_xvfb(args.start_x, display)
        agent_protected.add(xvfb.pid)
        agent_protected_xserver.add(xvfb.pid)
    if not display:
        raise SystemExit("no X display: give --display, set DISPLAY, or use --start-x")
    os.environ["DISPLAY"] = display
    app_user = _parse_user(args.app_user)
    if app_user is not None and os.environ.get("XDG_RUNTIME_DIR"):
        os.chown(os.environ["XDG_RUNTIME_DIR"], *app_user)  # the bus and the apps keep sockets there
    agent = Agent(display, home=args.home, input_backend=args.input, app_log=args.app_log, app_user=app_user)
    agent.xserver = xvfb
    bus = start_session_bus(user=agent.as_user()) if args.dbus else None
    if bus is not None:
        agent_protected.add(bus.pid)
        agent.env = {**os.environ, "DISPLAY": display, "HOME": args.home}
    agent.env.update(steady_toolkit_env(os.environ.get("XDG_RUNTIME_DIR") or "/tmp"))
    wm = None

    def start_wm(replace: bool = False) -> subprocess.Popen[bytes]:
        nonlocal wm
        if wm is not None and wm.poll() is None:
            agent_protected.discard(wm.pid)
            wm.kill()
            wm.wait()
        wm = subprocess.Popen([*args.wm.split(), *(["--replace"] if replace else [])], env=agent.env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True, **agent.as_user())
        agent_protected.add(wm.pid)
        return wm

    if args.wm:
        start_wm()

    async def run() -> None:
        await agent.start()
        if wm is not None:
            await _wait_wm(agent)
            # Owning the screen is not yet managing windows: an openbox that came up on a
            # loaded machine was seen to own it and never map an app's window. Prove it
            # manages one; else start it again.
            for attempt in range(3):
                if await _wm_manages_windows(agent):
                    break
                _log(f"the window manager did not manage a probe window; restarting it (attempt {attempt + 1})")
                start_wm(replace=True)
                await _wait_wm(agent)
        loop = asyncio.get_running_loop()
        stop = loop.create_future()
        def request_stop() -> None:
            if not stop.done():
                stop.set_result(None)

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, request_stop)
        server = asyncio.create_task(serve(agent, args.listen))
        waits: list[asyncio.Future[Any]] = [server, stop]
        # The X server this agent started is the desktop: when it dies, no request can be
        # answered any more, so the session ends (the host sees the agent go: a crash,
        # with this log line) rather than answering each request with an X library's error.
        x_gone = _exited(xvfb) if xvfb is not None else None
        if x_gone is not None:
            waits.append(x_gone)
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if x_gone is not None and x_gone.done() and not stop.done():
            # said before the connection closes, so the host's report of the death has it
            _log(f"Xvfb exited (status {x_gone.result()}): the X display is gone; ending the session")
            server.cancel()
            raise SystemExit(1)
        server.cancel()
        if server.done() and not server.cancelled() and server.exception():
            raise server.exception()  # type: ignore[misc]

    try:
        asyncio.run(run())
    finally:
        agent.shutdown()
        for proc in (wm, bus, xvfb):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=5)
    return 0


def _exited(proc: subprocess.Popen[bytes]) -> asyncio.Future[int]:
    """A future of `proc`'s exit status, set when it exits (a pidfd read by the loop: no
    thread that shutdown would wait on, no polling)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[int] = loop.create_future()
    fd = os.pidfd_open(proc.pid)

    def on_exit() -> None:
        loop.remove_reader(fd)
        os.close(fd)
        if not done.done():
            done.set_result(proc.wait())

    loop.add_reader(fd, on_exit)
    return done


def _parse_user(value: str | None) -> tuple[int, int] | None:
    if not value:
        return None
    try:
        uid, gid = (int(v) for v in value.split(":"))
    except ValueError as exc:
        raise SystemExit(f"--app-user wants UID:GID, got {value!r}") from exc
    if os.geteuid() != 0 or uid == 0:
        return None  # not root: everything runs as us already
    return uid, gid


async def _wm_manages_windows(agent: Agent, timeout: float = 60.0) -> bool:
    """Map a small probe window until the window manager manages it (reparents it, or
    lists it in _NET_CLIENT_LIST); True when it did.

    Openbox owns the screen (_NET_SUPPORTING_WM_CHECK) before it has finished starting,
    and a window mapped in between is never managed: it stays unmapped, and an app
    waiting on it (xterm) never shows. Seen every time in a container and at random in a
    loaded VM. The probe's map request is repeated until one is managed, so apps start
    only once the window manager is really up. Without Xlib there is nothing to probe with.
    """
    d = agent.screen._disp
    if d is None:
        return True
    from Xlib import X

    def make() -> Any:
        root = d.screen().root
        win = root.create_window(0, 0, 16, 16, 0, d.screen().root_depth, X.InputOutput, X.CopyFromParent)
        win.set_wm_class("cua-wm-probe", "cua-wm-probe")
        win.set_wm_name("cua-wm-probe")
        win.map()
        d.sync()
        return win

    def managed(win: Any) -> bool:
        root = d.screen().root
        if win.query_tree().parent.id != root.id:
            return True  # reparented into a frame
        prop = root.get_full_property(d.intern_atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
        return prop is not None and win.id in [int(v) for v in prop.value]

    def remap(win: Any) -> None:
        win.unmap()
        win.map()
        d.sync()

    win = await agent.on_x(make)
    try:
        started = last_map = time.monotonic()
        maps = 1
        while time.monotonic() < started + timeout:
            if await agent.on_x(lambda: managed(win)):
                _log(f"the window manager manages windows (probe listed after "
                     f"{(time.monotonic() - started) * 1000:.0f} ms, {maps} map request(s))")
                return True
            if time.monotonic() - last_map >= 0.25:
                await agent.on_x(lambda: remap(win))
                last_map, maps = time.monotonic(), maps + 1
            await asyncio.sleep(0.02)  # the window manager answers a map request without an event to us
        return False
    finally:
        def destroy() -> None:
            win.destroy()
            d.sync()

        await agent.on_x(destroy)


async def _wait_wm(agent: Agent, timeout: float = 15.0) -> None:
    """Wait until the window manager owns the screen (EWMH _NET_SUPPORTING_WM_CHECK)."""
    def has_wm() -> bool:
        d = agent.screen._disp
        if d is None:
            return shutil.which("wmctrl") is None or subprocess.run(
                ["wmctrl", "-m"], env=agent.env, capture_output=True, timeout=5).returncode == 0
        prop = d.screen().root.get_full_property(d.intern_atom("_NET_SUPPORTING_WM_CHECK"), 0)
        return prop is not None

    deadline = time.monotonic() + timeout
    while not await agent.on_x(has_wm):
        if time.monotonic() > deadline:
            _log(f"window manager not ready after {timeout:g} s; serving anyway")
            return
        await asyncio.sleep(0.02)  # no event announces a WM on a fresh display; poll briefly


if __name__ == "__main__":
    sys.exit(main())
