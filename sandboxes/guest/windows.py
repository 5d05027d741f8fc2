"""The window list and the window manager: EWMH properties through python3-xlib, else
wmctrl and xdotool. Used from the X thread only, like the Screen that holds it."""

from __future__ import annotations

from typing import Any

try:
    from .faults import ActionFault
    from .tools import run_tool
except ImportError:  # run as a script from this folder (inside a VM image)
    from faults import ActionFault  # type: ignore[no-redef,import-not-found]
    from tools import run_tool  # type: ignore[no-redef,import-not-found]

__all__ = ["Windows"]


class Windows:
    """Top-level windows of one display (`disp`: an Xlib connection, or None for the tools)."""

    def __init__(self, disp: Any, env: dict[str, str]) -> None:
        self._disp = disp
        self.env = env
        #: Leave the session's own windows (panel, desktop) out of the listing: set in a
        #: session that has them (xfce); the openbox session lists exactly as before.
        self.hide_session_windows = False

    def listing(self) -> dict[str, Any]:
        """{"windows": [{id, title, class, instance, pid, x, y, width, height}], "focused": id | None}."""
        if self._disp is not None:
            return self._windows_xlib()
        return self._windows_wmctrl()

    def focused_window(self) -> dict[str, Any] | None:
        """The window that has the input focus, in the shape `windows` lists it, or None.

        Cheaper than `windows`: one window's properties are read, not every client's, so
        it can ride along with every action's and screenshot's reply (the title an
        observation carries)."""
        if self._disp is None:
            listing = self._windows_wmctrl()
            return next((w for w in listing["windows"] if w["id"] == listing["focused"]), None)
        focused = self._active_xlib()
        return self._window_xlib(focused) if focused is not None else None

    def focused_title(self) -> dict[str, Any] | None:
        """{id, title} of the focused window, or None: what every observation carries, read
        with two X round trips (the whole description, `focused_window`, takes about ten)."""
        if self._disp is None:
            window = self.focused_window()
            return {"id": window["id"], "title": window["title"]} if window is not None else None
        from Xlib import X, Xatom
        from Xlib.error import BadDrawable, BadWindow

        wid = self._active_xlib()
        if wid is None:
            return None
        d = self._disp
        win = d.create_resource_object("window", wid)
        try:
            name = win.get_full_property(d.intern_atom("_NET_WM_NAME"), d.intern_atom("UTF8_STRING"))
            if name is not None:
                title = name.value.decode("utf-8", "replace") if isinstance(name.value, bytes) else str(name.value)
            else:
                legacy = win.get_full_property(Xatom.WM_NAME, X.AnyPropertyType)
                title = legacy.value.decode("latin-1") if legacy is not None and isinstance(legacy.value, bytes) else ""
        except (BadWindow, BadDrawable):
            return None  # closed while we looked
        return {"id": wid, "title": title}

    def _active_xlib(self) -> int | None:
        from Xlib import X

        root = self._disp.screen().root
        active = root.get_full_property(self._disp.intern_atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
        return int(active.value[0]) if active is not None and len(active.value) and active.value[0] else None

    def _windows_xlib(self) -> dict[str, Any]:
        from Xlib import X

        root = self._disp.screen().root
        client_list = root.get_full_property(self._disp.intern_atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
        focused = self._active_xlib()
        wids = [int(wid) for wid in (client_list.value if client_list is not None else [])
                if not (self.hide_session_windows and self._session_furniture(int(wid)))]
        out = [w for w in (self._window_xlib(wid) for wid in wids) if w is not None]
        return {"windows": out, "focused": focused}

    def _session_furniture(self, wid: int) -> bool:
        """Whether a managed window is the session's own (an XFCE panel or desktop window:
        types DOCK and DESKTOP), not an app's: listing it would make the panel an app to
        kill and restart, and the full-screen desktop window a cover over every point."""
        from Xlib import X
        from Xlib.error import BadDrawable, BadWindow

        atom = self._disp.intern_atom
        try:
            kinds = self._disp.create_resource_object("window", wid).get_full_property(
                atom("_NET_WM_WINDOW_TYPE"), X.AnyPropertyType)
        except (BadWindow, BadDrawable):
            return False  # closed while we looked: _window_xlib skips it
        furniture = {atom("_NET_WM_WINDOW_TYPE_DOCK"), atom("_NET_WM_WINDOW_TYPE_DESKTOP")}
        return kinds is not None and any(int(k) in furniture for k in kinds.value)

    def _window_xlib(self, wid: int) -> dict[str, Any] | None:
        """One top-level window's description; None when it closed while we looked."""
        from Xlib import X, Xatom
        from Xlib.error import BadDrawable, BadWindow, XError

        d = self._disp
        root = d.screen().root
        atom = d.intern_atom
        utf8 = atom("UTF8_STRING")
        win = d.create_resource_object("window", wid)
        try:
            name = win.get_full_property(atom("_NET_WM_NAME"), utf8)
            title = (name.value.decode("utf-8", "replace") if isinstance(name.value, bytes) else str(name.value)) \
                if name is not None else None
            if title is None:
                legacy = win.get_full_property(Xatom.WM_NAME, X.AnyPropertyType)
                title = legacy.value.decode("latin-1") if legacy is not None and isinstance(legacy.value, bytes) else ""
            wm_class = win.get_wm_class() or ("", "")
            pid_prop = win.get_full_property(atom("_NET_WM_PID"), X.AnyPropertyType)
            geom = win.get_geometry()
            pos = root.translate_coords(win, 0, 0)
            attrs = win.get_attributes()
            state = win.get_full_property(atom("_NET_WM_STATE"), X.AnyPropertyType)
            states = [d.get_atom_name(int(s)).removeprefix("_NET_WM_STATE_").lower()
                      for s in (state.value if state is not None else [])]
        except (BadWindow, BadDrawable):
            return None  # closed while we looked
        except XError as exc:
            raise ActionFault(f"reading window 0x{wid:x} failed: {exc}", reason="x_error") from exc
        return {
            "id": wid, "title": title, "instance": wm_class[0], "class": wm_class[1],
            "pid": int(pid_prop.value[0]) if pid_prop is not None and len(pid_prop.value) else None,
            "x": int(pos.x), "y": int(pos.y), "width": int(geom.width), "height": int(geom.height),
            "mapped": attrs.map_state == X.IsViewable, "states": states,
        }

    def place(self, wid: int, x: int, y: int, width: int, height: int) -> None:
        """Ask the window manager (EWMH) to put a window's client area at this geometry;
        the caller checks the outcome."""
        if self._disp is None:
            run_tool(["xdotool", "windowsize", str(wid), str(width), str(height),
                       "windowmove", str(wid), str(x), str(y)], env=self.env)
            return
        # flags: StaticGravity (10: the client area's position), x/y/width/height given
        # (bits 8-11), sent by a pager-like tool (source 2, bits 12-13).
        self._wm_message(wid, "_NET_MOVERESIZE_WINDOW", [10 | (0xF << 8) | (2 << 12), x, y, width, height])

    def activate(self, wid: int) -> None:
        """Ask the window manager to raise and focus a window."""
        if self._disp is None:
            run_tool(["xdotool", "windowactivate", str(wid)], env=self.env)
            return
        self._wm_message(wid, "_NET_ACTIVE_WINDOW", [2, 0, 0, 0, 0])  # source 2: a pager-like tool

    def _wm_message(self, wid: int, message: str, data: list[int]) -> None:
        from Xlib import X
        from Xlib.protocol import event

        d = self._disp
        win = d.create_resource_object("window", wid)
        d.screen().root.send_event(event.ClientMessage(window=win, client_type=d.intern_atom(message), data=(32, data)),
                                   event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        d.sync()

    def _windows_wmctrl(self) -> dict[str, Any]:
        proc = run_tool(["wmctrl", "-lpGx"], env=self.env)
        if proc.returncode != 0:
            raise ActionFault(f"wmctrl failed: {proc.stderr.decode(errors='replace')}", reason="tool_failed")
        out = []
        for line in proc.stdout.decode("utf-8", "replace").splitlines():
            parts = line.split(None, 8)
            if len(parts) < 8:
                continue
            wid, _desk, pid, x, y, w, h, klass = parts[:8]
            title = parts[8].split(None, 1)[1] if len(parts) > 8 and " " in parts[8] else ""
            instance, _, cls = klass.partition(".")
            out.append({"id": int(wid, 16), "title": title, "instance": instance, "class": cls,
                        "pid": int(pid) or None, "x": int(x), "y": int(y), "width": int(w), "height": int(h),
                        "mapped": True, "states": []})
        active = run_tool(["xdotool", "getactivewindow"], env=self.env)
        focused = int(active.stdout) if active.returncode == 0 and active.stdout.strip() else None
        return {"windows": out, "focused": focused}
