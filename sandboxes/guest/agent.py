"""The cua guest agent: serves one desktop (an X display) to the host over a stream.

Runs inside a desktop container or a VM on the guest's system Python 3 with the
standard library only; python3-xlib, Pillow, mss, xdotool, xclip and AT-SPI are used
when present (see screen.py). It imports nothing from `cua`.

    python3 agent.py --listen unix:/run/cua/agent.sock [--display :1]
    python3 agent.py --listen tcp:127.0.0.1:7000 --start-x 1280x720 --wm openbox
    python3 agent.py --listen serial:/dev/virtio-ports/cua.agent --start-x 1280x720

Requests and replies: see wire.py. Operations:
  ping, info, act, screenshot, windows, query, spawn, kill, apps, wait_window, write_file, run,
  place_windows.

The agent is composed of: `core.py` (its state: display, X thread, processes), `xsession.py`
(Xvfb, the window manager, the session bus), `ops_screen.py` and `ops_apps.py` (the
operations), `serving.py` (the operation table and the listeners), `screen.py` (the
display: input, capture, settle, windows) and `queries.py` (state queries).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
from typing import Any

if not __package__:  # run as a script: find the sibling modules even under `python3 -I`
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    from .core import Agent, agent_protected, agent_protected_xserver, log
    from .serving import serve
    from .session import LOOKS, SESSIONS, look_toolkit_lines, session_ready, start_xfce, xfce_defaults_env
    from .xsession import exited, start_session_bus, start_xvfb, steady_toolkit_env, wait_wm, wm_manages_windows
except ImportError:  # run as a script from this folder (inside a VM image)
    from core import Agent, agent_protected, agent_protected_xserver, log  # type: ignore[no-redef,import-not-found]
    from serving import serve  # type: ignore[no-redef,import-not-found]
    from session import LOOKS, SESSIONS, look_toolkit_lines, session_ready, start_xfce, xfce_defaults_env  # type: ignore[no-redef,import-not-found]
    from xsession import exited, start_session_bus, start_xvfb, steady_toolkit_env, wait_wm, wm_manages_windows  # type: ignore[no-redef,import-not-found]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cua-guest", description=__doc__.split("\n")[0])
    parser.add_argument("--listen", required=True, help="unix:PATH | tcp:HOST:PORT | serial:DEVICE | stdio")
    parser.add_argument("--display", default=os.environ.get("DISPLAY"), help="X display (default $DISPLAY)")
    parser.add_argument("--start-x", metavar="WxH", help="start Xvfb with this screen size first")
    parser.add_argument("--wm", help="window manager command to start after X (e.g. openbox)")
    parser.add_argument("--session", choices=SESSIONS,
                        help="xfce: start an XFCE session (xfwm4, panel, desktop, settings) instead of --wm")
    parser.add_argument("--look", choices=sorted(LOOKS), help="GTK and icon themes (default: the toolkit's own)")
    parser.add_argument("--home", default=os.environ.get("HOME", "/root"))
    parser.add_argument("--input", default="auto", choices=["auto", "xtest", "xdotool", "pyautogui"])
    parser.add_argument("--app-log", help="append the output of spawned apps to this file")
    parser.add_argument("--app-user", metavar="UID:GID",
                        help="run apps, the window manager, the session bus and state commands as this user "
                             "(when the agent runs as root)")
    parser.add_argument("--dbus", action="store_true",
                        help="start a D-Bus session bus for the apps (needed for AT-SPI accessibility)")
    args = parser.parse_args(argv)
    xfce = args.session == "xfce"
    if xfce and args.wm:
        raise SystemExit("--session xfce starts its own window manager (xfwm4); leave out --wm")

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
    runtime = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    toolkit = steady_toolkit_env(runtime, look_toolkit_lines(args.look))
    # XFCE's programs and the xfconfd its bus starts read the session's defaults
    session_env = xfce_defaults_env(runtime, args.look, toolkit["XDG_CONFIG_DIRS"], app_user) if xfce else {}
    bus = start_session_bus(user=agent.as_user(), accessibility=args.dbus,
                            env={**os.environ, "DISPLAY": display, "HOME": args.home, **toolkit, **session_env}
                            if xfce else None) if args.dbus or xfce else None
    if bus is not None:
        agent_protected.add(bus.pid)
        agent.env = {**os.environ, "DISPLAY": display, "HOME": args.home}
    agent.env.update(toolkit)
    session = start_xfce(agent, {**agent.env, **session_env}) if xfce else []
    agent_protected.update(p.pid for p in session)
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
        if session:
            agent.screen.hide_session_windows()
            # ready when xfwm4 owns the screen, the panel and desktop are mapped and the
            # settings manager serves the look; then, as for openbox, proven to manage a window
            if await session_ready(agent, session) and not await wm_manages_windows(agent):
                log("xfwm4 did not manage a probe window; serving anyway")
        if wm is not None:
            await wait_wm(agent)
            # Owning the screen is not yet managing windows: an openbox that came up on a
            # loaded machine was seen to own it and never map an app's window. Prove it
            # manages one; else start it again.
            for attempt in range(3):
                if await wm_manages_windows(agent):
                    break
                log(f"the window manager did not manage a probe window; restarting it (attempt {attempt + 1})")
                start_wm(replace=True)
                await wait_wm(agent)
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
        x_gone = exited(xvfb) if xvfb is not None else None
        if x_gone is not None:
            waits.append(x_gone)
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if x_gone is not None and x_gone.done() and not stop.done():
            # said before the connection closes, so the host's report of the death has it
            log(f"Xvfb exited (status {x_gone.result()}): the X display is gone; ending the session")
            server.cancel()
            raise SystemExit(1)
        server.cancel()
        if server.done() and not server.cancelled() and server.exception():
            raise server.exception()  # type: ignore[misc]

    try:
        asyncio.run(run())
    finally:
        agent.shutdown()
        for proc in (*session, wm, bus, xvfb):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=5)
    return 0



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



if __name__ == "__main__":
    sys.exit(main())
