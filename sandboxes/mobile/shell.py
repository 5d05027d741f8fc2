"""The sandbox's side of the phone shell (shell/shell.js): the page's configuration, the
script every app frame runs, the notifications the shade shows, and the shell's state.

- The shell page learns its apps (ids, labels, origins), the clock and its options from
  `window.__cuaPhone`, set by an init script once the services' ports are known.
- Every app frame (a child of the shell page) runs `FRAME_SCRIPT` at document start: it
  tells the shell its URL (Android's back walks it), whether an editable field has focus
  (the keyboard area), that its DOM changed or it scrolled (so the sandbox's settling,
  which watches the shell's document, waits for the app too, and for a fling to stop),
  types the on-screen keyboard's keys, and gives the app
  `window.cuaPhone.requestPermission(name)` and `.share(text)`, promises the shell's
  system dialogs answer.
- The shade asks for notifications through a binding: the sandbox reads every app's
  `state()["notifications"]` over its control socket (the contract in README.md).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cua.errors import CuaError
from cua.sandboxes.browser.services import ServiceControl
from cua.sandboxes.mobile.config import SHELL, MobileConfig

__all__ = ["FRAME_SCRIPT", "NOTIFICATION_FIELDS", "config_script", "notifications"]

#: How many apps the home screen shows (the drawer shows them all).
HOME_COUNT = 12
NOTIFICATION_FIELDS = ("id", "app", "title", "text", "time", "link")

FRAME_SCRIPT = r"""
(() => {
  if (window === window.top || window.parent !== window.top || window.__cuaPhoneFrame) return;
  Object.defineProperty(window, "__cuaPhoneFrame", { value: true });
  const parent = window.parent;
  const post = (m) => { try { parent.postMessage({ __cuaPhone: true, ...m }, "*"); } catch (e) {} };
  const where = () => post({ kind: "url", url: location.href });
  where();
  for (const name of ["pushState", "replaceState"]) {
    const orig = history[name];
    history[name] = function (...args) { const r = orig.apply(this, args); where(); return r; };
  }
  addEventListener("popstate", where);
  addEventListener("hashchange", where);
  const editable = (el) => !!el && (el.isContentEditable || el.tagName === "TEXTAREA" ||
    (el.tagName === "INPUT" && !["button", "checkbox", "radio", "submit", "reset", "file", "image", "range", "color",
      "hidden"].includes((el.type || "").toLowerCase())));
  let shown = false;
  const focus = () => {
    const now = document.hasFocus() && editable(document.activeElement);
    if (now !== shown) { shown = now; post({ kind: "focus", editable: now }); }
  };
  addEventListener("focusin", focus, true);
  addEventListener("focusout", () => queueMicrotask(focus), true);
  addEventListener("blur", () => queueMicrotask(focus));
  let ticking = false;
  const tick = () => {
    if (ticking) return;
    ticking = true;
    queueMicrotask(() => { ticking = false; post({ kind: "tick" }); });
  };
  new MutationObserver(tick).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  addEventListener("scroll", tick, { capture: true, passive: true });  // a fling is settled once it stops
  let req = 0;
  const waiting = new Map();
  const ask = (msg) => new Promise((done) => { req += 1; waiting.set(req, done); post({ ...msg, req }); });
  Object.defineProperty(window, "cuaPhone", { value: Object.freeze({
    requestPermission: (permission) => ask({ kind: "permission", permission: String(permission) }).then((m) => !!m.granted),
    share: (text) => ask({ kind: "share", text: String(text) }).then((m) => m.target || null),
  }) });
  addEventListener("message", (e) => {
    const d = e.data;
    if (e.source !== parent || !d || d.__cuaPhone !== true) return;
    if (d.kind === "key") {
      const el = document.activeElement;
      if (!editable(el)) return;
      if (d.key === "\u232b") document.execCommand("delete");
      else if (d.key === "\u21b5") {
        if (el.tagName === "TEXTAREA" || el.isContentEditable) document.execCommand("insertText", false, "\n");
        else if (el.form) el.form.requestSubmit();
      } else document.execCommand("insertText", false, d.key);
    } else if (d.kind === "blur") {
      if (document.activeElement) document.activeElement.blur();
    } else if ((d.kind === "permission_result" || d.kind === "share_result") && waiting.has(d.req)) {
      const done = waiting.get(d.req); waiting.delete(d.req); done(d);
    }
  });
})();
"""


def _color(app: str) -> str:
    hue = int(hashlib.sha256(app.encode()).hexdigest()[:4], 16) % 360
    return f"hsl({hue} 55% 42%)"


def config_script(config: MobileConfig, ports: dict[str, int]) -> str:
    """The init script that gives the shell page (the top frame of the shell's origin) its configuration."""
    data: dict[str, Any] = {
        "apps": [{"id": app, "label": config.label(app), "origin": f"http://127.0.0.1:{ports[app]}", "color": _color(app)}
                 for app in config.app_names],
        "start_app": config.start_app, "clock": config.clock.isoformat(), "home_count": HOME_COUNT,
        "share_paths": dict(config.share_paths), "device": config.device, "orientation": config.orientation,
        "keep_keyboard": False,
    }
    origin = f"http://127.0.0.1:{ports[SHELL]}"
    return (f"(() => {{ if (window === window.top && location.origin === {json.dumps(origin)}) "
            f"Object.defineProperty(window, '__cuaPhone', {{ value: {json.dumps(data)} }}); }})();")


async def notifications(controls: dict[str, ServiceControl], apps: list[str]) -> list[dict[str, Any]]:
    """Every app's notifications (`state()["notifications"]`), each with the contract's
    fields as strings and `app` set to the app it came from; an app that cannot answer
    shows none (the shade is the phone's, not the judge's)."""
    out: list[dict[str, Any]] = []
    for app in apps:
        control = controls.get(app)
        if control is None:
            continue
        try:
            state = await control.state()
        except CuaError:
            continue
        items = state.get("notifications") if isinstance(state, dict) else None
        if not isinstance(items, list):
            continue
        for item in items[:50]:
            if isinstance(item, dict):
                n = {key: str(item.get(key) or "")[:500] for key in NOTIFICATION_FIELDS}
                n["app"] = app
                out.append(n)
    return out
