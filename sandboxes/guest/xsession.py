"""Bringing up the desktop session the agent serves: Xvfb (key autorepeat off), the
window manager proven to manage windows, a D-Bus session bus, steady toolkit settings."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from typing import Any

try:
    from .core import Agent, log
except ImportError:  # run as a script from this folder (inside a VM image)
    from core import Agent, log  # type: ignore[no-redef,import-not-found]

__all__ = ["exited", "keyboard_without_autorepeat", "start_session_bus", "start_xvfb", "steady_toolkit_env",
           "wait_wm", "wm_manages_windows"]


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
    log(f"Xvfb ready after {time.monotonic() - started:.1f} s")
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


def steady_toolkit_env(base_dir: str, theme_lines: tuple[str, str] = ("", "")) -> dict[str, str]:
    """Write GTK 2/3/4 settings under `base_dir` (readable by the apps' user) and return
    the environment that makes the apps read them, before the system's own.
    `theme_lines` (settings.ini lines, gtkrc lines) add a look's themes (session.py)."""
    root = os.path.join(base_dir, "cua-xdg")
    for version in ("gtk-3.0", "gtk-4.0"):
        os.makedirs(os.path.join(root, version), mode=0o755, exist_ok=True)
        with open(os.path.join(root, version, "settings.ini"), "w") as f:
            f.write(_GTK_SETTINGS + theme_lines[0])
    gtk2 = os.path.join(root, "gtkrc-2.0")
    with open(gtk2, "w") as f:
        f.write(_GTK2_RC + theme_lines[1])
    for path in (root, os.path.join(root, "gtk-3.0"), os.path.join(root, "gtk-4.0")):
        os.chmod(path, 0o755)
    system_dirs = os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    return {"XDG_CONFIG_DIRS": f"{root}:{system_dirs}", "GTK2_RC_FILES": gtk2}


def start_session_bus(timeout: float = 10.0, user: dict[str, Any] | None = None, *, accessibility: bool = True,
                      env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A D-Bus session bus (apps' AT-SPI bridges find the accessibility bus through it;
    the XFCE session's programs find xfconfd through it); its address goes into our
    environment, which spawned apps inherit. Without `accessibility`, apps' AT-SPI
    bridges stay off as before. `env`: the bus's own environment, which the services it
    starts (xfconfd) inherit."""
    runtime = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    path = os.path.join(runtime, f"cua-bus-{os.getpid()}")
    proc = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--address=unix:path={path}"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True,
                            env=env, **(user or {}))
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the D-Bus session bus did not start")
        time.sleep(0.01)  # the daemon creates its socket shortly; no event to wait on
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={path}"
    if accessibility:
        os.environ.pop("NO_AT_BRIDGE", None)
    return proc



def exited(proc: subprocess.Popen[bytes]) -> asyncio.Future[int]:
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



async def wm_manages_windows(agent: Agent, timeout: float = 60.0) -> bool:
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
                log(f"the window manager manages windows (probe listed after "
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


async def wait_wm(agent: Agent, timeout: float = 15.0) -> None:
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
            log(f"window manager not ready after {timeout:g} s; serving anyway")
            return
        await asyncio.sleep(0.02)  # no event announces a WM on a fresh display; poll briefly
