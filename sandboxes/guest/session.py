"""The desktop session beyond a bare window manager: an XFCE session (xfwm4, xfce4-panel,
xfdesktop, xfsettingsd over xfconf) and the GTK and icon themes ("looks") of either session.

Why a module of its own: the openbox session is one process the agent starts; XFCE is four
programs that talk over a session bus and read their settings from xfconf. Their defaults
would put a first-start dialog on the screen (the panel asks which layout to use), a
blinking caret back in every GTK app (xsettings overrides the agent's settings.ini) and
desktop icons of the user's files; so the agent gives them defaults of its own, in a config
folder outside $HOME (the session's state must not show in the user's files, which
snapshots copy and judges read). Standard library only, like the rest of the guest.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

try:
    from .core import Agent, log
except ImportError:  # run as a script from this folder (inside a VM image)
    from core import Agent, log  # type: ignore[no-redef,import-not-found]

__all__ = ["LOOKS", "SESSIONS", "look_themes", "look_toolkit_lines", "session_ready", "start_xfce",
           "xfce_defaults_env"]

SESSIONS = ("openbox", "xfce")
#: look -> (GTK theme, icon themes by preference: the first one installed is used).
LOOKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "light": ("Adwaita", ("Adwaita",)),
    "dark": ("Adwaita-dark", ("Tango", "Adwaita")),
    "contrast": ("HighContrast", ("HighContrast", "Adwaita")),
}
_ICON_DIRS = ("/usr/share/icons", "/usr/local/share/icons")


def look_themes(look: str) -> tuple[str, str]:
    """(GTK theme, icon theme) of a look; the icon theme is the first of its preferences
    installed (HighContrast icons are not packaged everywhere)."""
    gtk, icons = LOOKS[look]
    for name in icons:
        if any(os.path.exists(os.path.join(d, name, "index.theme")) for d in _ICON_DIRS):
            return gtk, name
    return gtk, icons[-1]


def look_toolkit_lines(look: str | None) -> tuple[str, str]:
    """Extra lines for GTK 3/4 settings.ini and for gtkrc-2.0 ("" without a look: the
    toolkit's defaults, as before looks existed)."""
    if not look:
        return "", ""
    gtk, icons = look_themes(look)
    return (f"gtk-theme-name = {gtk}\ngtk-icon-theme-name = {icons}\n",
            f'gtk-theme-name = "{gtk}"\ngtk-icon-theme-name = "{icons}"\n')


def _channel(name: str, body: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<channel name="{name}" version="1.0">\n{body}</channel>\n'


def _xsettings(look: str | None) -> str:
    gtk, icons = look_themes(look) if look else ("Adwaita", "Adwaita")
    return _channel("xsettings", f"""  <property name="Net" type="empty">
    <property name="ThemeName" type="string" value="{gtk}"/>
    <property name="IconThemeName" type="string" value="{icons}"/>
    <property name="CursorBlink" type="bool" value="false"/>
    <property name="EnableEventSounds" type="bool" value="false"/>
  </property>
  <property name="Gtk" type="empty">
    <property name="CursorThemeName" type="string" value=""/>
  </property>
""")


#: One panel at the top: the applications menu and the window buttons. No clock (a screen
#: that changes by itself each minute is not still twice), no launcher, no systray.
_PANEL = _channel("xfce4-panel", """  <property name="configver" type="int" value="2"/>
  <property name="panels" type="array">
    <value type="int" value="1"/>
    <property name="panel-1" type="empty">
      <property name="position" type="string" value="p=6;x=0;y=0"/>
      <property name="length" type="uint" value="100"/>
      <property name="position-locked" type="bool" value="true"/>
      <property name="size" type="uint" value="28"/>
      <property name="plugin-ids" type="array">
        <value type="int" value="1"/>
        <value type="int" value="2"/>
        <value type="int" value="3"/>
      </property>
    </property>
  </property>
  <property name="plugins" type="empty">
    <property name="plugin-1" type="string" value="applicationsmenu"/>
    <property name="plugin-2" type="string" value="tasklist"/>
    <property name="plugin-3" type="string" value="separator">
      <property name="expand" type="bool" value="true"/>
      <property name="style" type="uint" value="0"/>
    </property>
  </property>
""")

#: No desktop icons (they would show the user's files and xfdesktop would make ~/Desktop),
#: a solid background per look, one workspace name.
def _desktop(look: str | None) -> str:
    rgba = {"dark": "0.12;0.12;0.14;1", "contrast": "0;0;0;1"}.get(look or "", "0.23;0.37;0.55;1")
    values = "\n".join(f'          <value type="double" value="{v}"/>' for v in rgba.split(";"))
    return _channel("xfce4-desktop", f"""  <property name="desktop-icons" type="empty">
    <property name="style" type="int" value="0"/>
  </property>
  <property name="desktop-menu" type="empty">
    <property name="show" type="bool" value="false"/>
  </property>
  <property name="backdrop" type="empty">
    <property name="screen0" type="empty">
      <property name="monitorscreen" type="empty">
        <property name="workspace0" type="empty">
          <property name="color-style" type="int" value="0"/>
          <property name="image-style" type="int" value="0"/>
          <property name="rgba1" type="array">
{values}
          </property>
        </property>
      </property>
    </property>
  </property>
""")


def _xfwm4(look: str | None) -> str:
    theme = "Daloa" if look == "contrast" else "Default"
    return _channel("xfwm4", f"""  <property name="general" type="empty">
    <property name="theme" type="string" value="{theme}"/>
    <property name="use_compositing" type="bool" value="false"/>
    <property name="workspace_count" type="int" value="1"/>
    <property name="placement_ratio" type="int" value="0"/>
    <property name="placement_mode" type="string" value="center"/>
    <property name="wrap_windows" type="bool" value="false"/>
  </property>
""")


def xfce_defaults_env(base_dir: str, look: str | None, config_dirs: str,
                      owner: tuple[int, int] | None = None) -> dict[str, str]:
    """Write the session's xfconf defaults under `base_dir` and return the environment
    the session's programs (and the bus that starts xfconfd) run in: the defaults first in
    XDG_CONFIG_DIRS, the session's own state (xfconf's saved channels, caches) in a
    private folder, never $HOME. `config_dirs`: the folders searched after the defaults;
    `owner`: (uid, gid) the session runs as, which owns its state folder."""
    root = os.path.join(base_dir, "cua-xfce")
    channels = os.path.join(root, "defaults", "xfce4", "xfconf", "xfce-perchannel-xml")
    os.makedirs(channels, mode=0o755, exist_ok=True)
    for name, text in (("xsettings", _xsettings(look)), ("xfce4-panel", _PANEL),
                       ("xfce4-desktop", _desktop(look)), ("xfwm4", _xfwm4(look))):
        with open(os.path.join(channels, f"{name}.xml"), "w") as f:
            f.write(text)
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o644)
    state = os.path.join(root, "state")  # written by the session's programs: the desktop user's
    for sub in ("", "config", "cache", "data"):
        os.makedirs(os.path.join(state, sub), mode=0o700, exist_ok=True)
        if owner is not None:
            os.chown(os.path.join(state, sub), *owner)
    return {"XDG_CONFIG_DIRS": f"{os.path.join(root, 'defaults')}:{config_dirs}",
            "XDG_CONFIG_HOME": os.path.join(state, "config"), "XDG_CACHE_HOME": os.path.join(state, "cache"),
            "XDG_DATA_HOME": os.path.join(state, "data"), "XDG_CURRENT_DESKTOP": "XFCE"}


#: The session's programs, in start order: the window manager first (the panel and the
#: desktop wait for one), the settings daemon before any app reads its toolkit settings.
XFCE_PROGRAMS: tuple[tuple[str, ...], ...] = (
    ("xfwm4", "--compositor=off"),
    ("xfsettingsd",),
    ("xfce4-panel",),
    ("xfdesktop",),
)


def start_xfce(agent: Agent, env: dict[str, str]) -> list[subprocess.Popen[bytes]]:
    """Start the XFCE programs as the desktop user, each in its own session (an app kill
    never reaches them); the caller protects their pids and waits with `session_ready`."""
    procs = []
    for argv in XFCE_PROGRAMS:
        procs.append(subprocess.Popen(list(argv), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True, **agent.as_user()))
    return procs


def _xfce_parts(agent: Agent) -> dict[str, bool]:
    """Which parts of an XFCE session are up: the settings manager owns the XSETTINGS
    selection, a dock (the panel) and a desktop window are mapped, xfwm4 owns the screen."""
    from Xlib import X
    from Xlib.error import BadDrawable, BadWindow

    d = agent.screen._disp
    root = d.screen().root
    atom = d.intern_atom
    parts = {"wm": False, "xsettings": d.get_selection_owner(atom("_XSETTINGS_S0")) != X.NONE,
             "panel": False, "desktop": False}
    check = root.get_full_property(atom("_NET_SUPPORTING_WM_CHECK"), X.AnyPropertyType)
    if check is not None and len(check.value):
        name = d.create_resource_object("window", int(check.value[0])).get_full_property(
            atom("_NET_WM_NAME"), X.AnyPropertyType)
        parts["wm"] = name is not None and bytes(name.value).startswith(b"Xfwm4")
    dock, desk = atom("_NET_WM_WINDOW_TYPE_DOCK"), atom("_NET_WM_WINDOW_TYPE_DESKTOP")
    clients = root.get_full_property(atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
    for wid in (clients.value if clients is not None else []):
        win = d.create_resource_object("window", int(wid))
        try:
            kinds = win.get_full_property(atom("_NET_WM_WINDOW_TYPE"), X.AnyPropertyType)
            viewable = win.get_attributes().map_state == X.IsViewable
        except (BadWindow, BadDrawable):  # closed while we looked
            continue
        types = set(int(t) for t in (kinds.value if kinds is not None else []))
        parts["panel"] |= viewable and dock in types
        parts["desktop"] |= viewable and desk in types
    return parts


async def session_ready(agent: Agent, procs: list[subprocess.Popen[bytes]], timeout: float = 60.0) -> bool:
    """Wait until every part of the XFCE session is up (see `_xfce_parts`); False, with
    what was missing logged, when one exited or `timeout` passed. Nothing announces these
    to a client that is not their peer, so the X state is read every 20 ms."""
    if agent.screen._disp is None:
        return True  # nothing to read the X state with: serve as the openbox session does
    started = time.monotonic()
    parts: dict[str, bool] = {}
    while time.monotonic() - started < timeout:
        parts = await agent.on_x(lambda: _xfce_parts(agent))
        if all(parts.values()):
            log(f"the xfce session is up after {(time.monotonic() - started) * 1000:.0f} ms")
            return True
        gone = [" ".join(p.args) for p in procs if p.poll() is not None]  # type: ignore[arg-type]
        if gone:
            log(f"the xfce session did not come up: {', '.join(gone)} exited")
            return False
        await asyncio.sleep(0.02)
    log(f"the xfce session was not up after {timeout:g} s: missing {[k for k, v in parts.items() if not v]}")
    return False

