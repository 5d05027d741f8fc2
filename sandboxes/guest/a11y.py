"""Dump the AT-SPI accessibility tree as JSON on stdout (run in a child process, so that a
missing or hung accessibility bus costs the agent a time-limited subprocess, not a hang).

Exit status 3 means "unsupported here" (no pyatspi / gi Atspi, or no accessibility bus).
Usage: python3 a11y.py MAX_NODES
"""

from __future__ import annotations

import json
import sys
from typing import Any

UNSUPPORTED = 3


def _load() -> Any:
    try:
        import gi  # type: ignore[import-not-found]

        gi.require_version("Atspi", "2.0")
        from gi.repository import Atspi  # type: ignore[import-not-found]

        return Atspi
    except (ImportError, ValueError) as exc:
        print(f"AT-SPI bindings unavailable: {exc}", file=sys.stderr)
        sys.exit(UNSUPPORTED)


def dump(max_nodes: int) -> dict[str, Any]:
    atspi = _load()
    desktop = atspi.get_desktop(0)
    count = 0
    truncated = False

    def node(acc: Any, depth: int) -> dict[str, Any] | None:
        nonlocal count, truncated
        if count >= max_nodes:
            truncated = True
            return None
        count += 1
        out: dict[str, Any] = {"role": acc.get_role_name(), "name": acc.get_name() or ""}
        try:
            ext = acc.get_extents(atspi.CoordType.SCREEN)
            if ext.x > -(2**31) and ext.width > 1:  # off-screen objects report INT_MIN
                out["bbox"] = {"x": ext.x, "y": ext.y, "width": ext.width, "height": ext.height}
        except Exception:  # objects without the Component interface have no extents
            pass
        if acc.get_text_iface() is not None:
            try:
                n = atspi.Text.get_character_count(acc)
                out["text"] = atspi.Text.get_text(acc, 0, min(n, 100_000))
            except Exception:  # a text object that will not give its text: leave it out
                pass
        states = acc.get_state_set()
        out["states"] = [s.value_nick for s in states.get_states()] if states is not None else []
        children = []
        if depth < 64:
            for i in range(acc.get_child_count()):
                child = acc.get_child_at_index(i)
                if child is not None:
                    sub = node(child, depth + 1)
                    if sub is not None:
                        children.append(sub)
        if children:
            out["children"] = children
        return out

    apps = []
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        if app is not None:
            sub = node(app, 0)
            if sub is not None:
                apps.append(sub)
    return {"role": "desktop", "name": "", "children": apps, "nodes": count, "truncated": truncated}


if __name__ == "__main__":
    try:
        result = dump(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
    except Exception as exc:  # GLib errors when no accessibility bus is running
        print(f"AT-SPI not reachable: {exc}", file=sys.stderr)
        sys.exit(UNSUPPORTED)
    json.dump(result, sys.stdout)
