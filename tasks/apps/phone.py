"""What the phone-only bundled apps (dialer, messages, clock, gallery, phone_settings) share:
a mobile page (viewport meta, a minimal reset; each app brings its own look in its
`app.css`), an app bar, a bottom navigation bar, a confirmation dialog as a phone asks for
one, inline SVG icons (no network, no icon font), and the shape of the `notifications`
that a phone app's `state()` carries for the phone shell's notification shade
(/work/notes contract: `{id, app, title, text, time, link}`; `link` is a path in the app).

Not an app itself (a module, not a package: `app_names()` lists packages only).
"""

from __future__ import annotations

from typing import TypedDict

from starlette.responses import HTMLResponse

from cua.tasks.apps.base import WebApp, esc

__all__ = ["Notification", "app_bar", "bottom_nav", "confirm_dialog", "icon", "icon_button", "phone_page"]


class Notification(TypedDict):
    """One entry of a phone app's `state()["notifications"]`, as the phone shell's shade shows it."""
    id: str
    app: str
    title: str
    text: str
    time: str
    link: str


#: 24x24 path data of the icons the phone apps draw (Material-style shapes).
ICONS: dict[str, str] = {
    "phone": "M6.6 10.8c1.4 2.8 3.8 5.1 6.6 6.6l2.2-2.2c.3-.3.7-.4 1-.2 1.1.4 2.3.6 3.6.6.6 0 1 .4 1 1V20c0 .6-.4 1-1 1"
             "C10.6 21 3 13.4 3 4c0-.6.4-1 1-1h3.5c.6 0 1 .4 1 1 0 1.3.2 2.5.6 3.6.1.3 0 .7-.2 1l-2.3 2.2z",
    "back": "M20 11H7.8l5.6-5.6L12 4l-8 8 8 8 1.4-1.4L7.8 13H20v-2z",
    "add": "M19 13h-6v6h-2v-6H5v-2h6V5h2v6h6v2z",
    "delete": "M6 19c0 1.1.9 2 2 2h8c1.1 0 2-.9 2-2V7H6v12zM19 4h-3.5l-1-1h-5l-1 1H5v2h14V4z",
    "search": "M15.5 14h-.8l-.3-.3A6.5 6.5 0 1 0 9.5 16c1.6 0 3.1-.6 4.2-1.6l.3.3v.8l5 5 1.5-1.5-5-5zm-6 0C7 14 5 12 5 9.5"
              "S7 5 9.5 5 14 7 14 9.5 12 14 9.5 14z",
    "star": "M12 17.3 18.2 21l-1.6-7L22 9.2l-7.2-.6L12 2 9.2 8.6 2 9.2 7.5 14l-1.7 7z",
    "star_outline": "M22 9.2l-7.2-.6L12 2 9.2 8.6 2 9.2 7.5 14l-1.7 7 6.2-3.7 6.2 3.7-1.6-7L22 9.2zM12 15.4l-3.8 2.3 1-4.3"
                    "-3.3-2.9 4.4-.4L12 6.1l1.7 4 4.4.4-3.3 2.9 1 4.3L12 15.4z",
    "history": "M13 3a9 9 0 0 0-9 9H1l4 4 4-4H6a7 7 0 1 1 2.1 5l-1.4 1.4A9 9 0 1 0 13 3zm-1 5v5l4.3 2.5.7-1.2-3.5-2.1V8H12z",
    "dialpad": "M12 19a2 2 0 1 0 0 4 2 2 0 0 0 0-4zM6 1a2 2 0 1 0 0 4 2 2 0 0 0 0-4zm0 6a2 2 0 1 0 0 4 2 2 0 0 0 0-4zm0 6"
               "a2 2 0 1 0 0 4 2 2 0 0 0 0-4zm12-8a2 2 0 1 0 0-4 2 2 0 0 0 0 4zm-6 8a2 2 0 1 0 0 4 2 2 0 0 0 0-4zm6 0a2 2 0 1 0 0 4"
               " 2 2 0 0 0 0-4zm0-6a2 2 0 1 0 0 4 2 2 0 0 0 0-4zm-6 0a2 2 0 1 0 0 4 2 2 0 0 0 0-4zm0-6a2 2 0 1 0 0 4 2 2 0 0 0 0-4z",
    "person": "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zm0 2c-2.7 0-8 1.3-8 4v2h16v-2c0-2.7-5.3-4-8-4z",
    "call_end": "M12 9c-1.6 0-3.1.3-4.6.7v3.1c0 .4-.2.7-.6.9-1 .5-1.9 1.1-2.7 1.8-.2.2-.4.3-.7.3s-.5-.1-.7-.3L.3 13.1"
                "c-.2-.2-.3-.4-.3-.7s.1-.5.3-.7C3.3 8.8 7.4 7 12 7s8.7 1.8 11.7 4.7c.2.2.3.4.3.7s-.1.5-.3.7l-2.5 2.5"
                "c-.2.2-.4.3-.7.3s-.5-.1-.7-.3c-.8-.7-1.7-1.3-2.7-1.8-.3-.2-.6-.5-.6-.9V9.7C15.1 9.3 13.6 9 12 9z",
    "mic_off": "M19 11h-1.7c0 .7-.2 1.4-.4 2l1.2 1.2c.6-.9.9-2 .9-3.2zm-4 .2V5c0-1.7-1.3-3-3-3S9 3.3 9 5v.2l6 6zM4.3 3 3 4.3"
               "l6 6V11c0 1.7 1.3 3 3 3 .2 0 .4 0 .7-.1l1.7 1.7c-.7.3-1.5.5-2.4.5-2.8 0-5.3-2.1-5.3-5H5c0 3.4 2.7 6.2 6 6.7V21"
               "h2v-3.3c.9-.1 1.8-.4 2.5-.9l4.2 4.2 1.3-1.3L4.3 3z",
    "speaker": "M3 9v6h4l5 5V4L7 9H3zm13.5 3A4.5 4.5 0 0 0 14 8v8a4.5 4.5 0 0 0 2.5-4zM14 3.2v2.1a7 7 0 0 1 0 13.4v2.1"
               "A9 9 0 0 0 14 3.2z",
    "backspace": "M22 3H7c-.7 0-1.2.4-1.6.9L0 12l5.4 8.1c.4.5.9.9 1.6.9h15c1.1 0 2-.9 2-2V5c0-1.1-.9-2-2-2zm-3 12.6L17.6 17"
                 " 14 13.4 10.4 17 9 15.6l3.6-3.6L9 8.4 10.4 7l3.6 3.6L17.6 7 19 8.4 15.4 12l3.6 3.6z",
    "message": "M20 2H4c-1.1 0-2 .9-2 2v18l4-4h14c1.1 0 2-.9 2-2V4c0-1.1-.9-2-2-2z",
    "send": "M2 21l21-9L2 3v7l15 2-15 2z",
    "alarm": "M22 5.7 17.4 1.8l-1.3 1.5 4.6 3.9L22 5.7zM7.9 3.4 6.6 1.9 2 5.7l1.3 1.5 4.6-3.8zM12.5 8H11v6l4.7 2.9.8-1.2"
             "-4-2.4V8zM12 4a9 9 0 1 0 0 18 9 9 0 0 0 0-18zm0 16a7 7 0 1 1 0-14 7 7 0 0 1 0 14z",
    "timer": "M6 2v6l4 4-4 4v6h12v-6l-4-4 4-4V2H6zm10 14.5V20H8v-3.5l4-4 4 4zm-4-5-4-4V4h8v3.5l-4 4z",
    "globe": "M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm6.9 6h-2.9a15.7 15.7 0 0 0-1.4-3.6A8 8 0 0 1 18.9 8zM12 4"
             "c.8 1.2 1.5 2.5 1.9 4h-3.8c.4-1.4 1.1-2.8 1.9-4zM4.3 14a8.2 8.2 0 0 1 0-4h3.4a16.5 16.5 0 0 0 0 4H4.3z"
             "m.8 2H8c.3 1.3.8 2.5 1.4 3.6A8 8 0 0 1 5.1 16zM8 8H5.1a8 8 0 0 1 4.3-3.6C8.8 5.5 8.3 6.7 8 8zm4 12"
             "c-.8-1.2-1.5-2.5-1.9-4h3.8c-.4 1.4-1.1 2.8-1.9 4zm2.3-6H9.7a14.7 14.7 0 0 1 0-4h4.6a14.7 14.7 0 0 1 0 4z"
             "m.3 5.6c.6-1.1 1.1-2.3 1.4-3.6h2.9a8 8 0 0 1-4.3 3.6zm1.8-5.6a16.5 16.5 0 0 0 0-4h3.4a8.2 8.2 0 0 1 0 4h-3.4z",
    "image": "M21 19V5c0-1.1-.9-2-2-2H5c-1.1 0-2 .9-2 2v14c0 1.1.9 2 2 2h14c1.1 0 2-.9 2-2zM8.5 13.5l2.5 3 3.5-4.5 4.5 6"
             "H5l3.5-4.5z",
    "album": "M22 16V4c0-1.1-.9-2-2-2H8c-1.1 0-2 .9-2 2v12c0 1.1.9 2 2 2h12c1.1 0 2-.9 2-2zm-11-4 2 2.7 3-3.7 4 5H8l3-4z"
             "M2 6v14c0 1.1.9 2 2 2h14v-2H4V6H2z",
    "restore": "M13 3a9 9 0 0 0-9 9H1l4 4 4-4H6a7 7 0 1 1 7 7c-1.9 0-3.7-.8-4.9-2.1l-1.4 1.4A9 9 0 1 0 13 3z",
    "info": "M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm1 15h-2v-6h2v6zm0-8h-2V7h2v2z",
    "wifi": "M1 9l2 2c5-5 13-5 18 0l2-2C16.9 2.9 7.1 2.9 1 9zm8 8 3 3 3-3a4.2 4.2 0 0 0-6 0zm-4-4 2 2a7.1 7.1 0 0 1 10 0"
            "l2-2a9.9 9.9 0 0 0-14 0z",
    "bluetooth": "M17.7 7.7 12 2h-1v7.6L6.4 5 5 6.4l5.6 5.6L5 17.6 6.4 19l4.6-4.6V22h1l5.7-5.7-4.3-4.3 4.3-4.3zM13 5.8"
                 "l1.9 1.9L13 9.6V5.8zm1.9 10.5L13 18.2v-3.8l1.9 1.9z",
    "brightness": "M20 8.7V4h-4.7L12 .7 8.7 4H4v4.7L.7 12 4 15.3V20h4.7l3.3 3.3 3.3-3.3H20v-4.7l3.3-3.3L20 8.7zM12 18"
                  "a6 6 0 1 1 0-12 6 6 0 0 1 0 12zm0-10a4 4 0 1 0 0 8 4 4 0 0 0 0-8z",
    "apps": "M4 8h4V4H4v4zm6 12h4v-4h-4v4zm-6 0h4v-4H4v4zm0-6h4v-4H4v4zm6 0h4v-4h-4v4zm6-10v4h4V4h-4zm-6 4h4V4h-4v4z"
            "m6 6h4v-4h-4v4zm0 6h4v-4h-4v4z",
    "lock": "M18 8h-1V6A5 5 0 0 0 7 6v2H6c-1.1 0-2 .9-2 2v10c0 1.1.9 2 2 2h12c1.1 0 2-.9 2-2V10c0-1.1-.9-2-2-2zm-6 9"
            "a2 2 0 1 1 0-4 2 2 0 0 1 0 4zm3.1-9H8.9V6a3.1 3.1 0 0 1 6.2 0v2z",
    "chevron": "M10 6 8.6 7.4 13.2 12l-4.6 4.6L10 18l6-6z",
    "close": "M19 6.4 17.6 5 12 10.6 6.4 5 5 6.4 10.6 12 5 17.6 6.4 19 12 13.4 17.6 19 19 17.6 13.4 12z",
    "edit": "M3 17.2V21h3.8L17.8 9.9l-3.7-3.7L3 17.2zM20.7 7c.4-.4.4-1 0-1.4l-2.3-2.3a1 1 0 0 0-1.4 0l-1.8 1.8 3.7 3.7"
            "L20.7 7z",
    "check": "M9 16.2 4.8 12l-1.4 1.4L9 19 21 7l-1.4-1.4z",
    "done_all": "M18 7l-1.4-1.4-6.3 6.3 1.4 1.4L18 7zm4.2-1.4L11.7 16.2 7.5 12l-1.4 1.4 5.6 5.6 12-12-1.5-1.4zM.4 13.4 6 19"
                "l1.4-1.4L1.8 12 .4 13.4z",
    "call_missed": "M19.6 7 12 14.6 7.4 10H11V8H4v7h2v-3.6l6 6 9-9z",
    "call_received": "M20 5.4 18.6 4 7 15.6V9H5v10h10v-2H8.4z",
    "call_made": "M9 5v2h6.6L4 18.6 5.4 20 17 8.4V15h2V5z",
    "dnd": "M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm5 11H7v-2h10v2z",
    "location": "M12 2a7 7 0 0 0-7 7c0 5.3 7 13 7 13s7-7.7 7-13a7 7 0 0 0-7-7zm0 9.5a2.5 2.5 0 1 1 0-5 2.5 2.5 0 0 1 0 5z",
    "camera": "M12 15.2a3.2 3.2 0 1 0 0-6.4 3.2 3.2 0 0 0 0 6.4zM9 2 7.2 4H4c-1.1 0-2 .9-2 2v12c0 1.1.9 2 2 2h16"
              "c1.1 0 2-.9 2-2V6c0-1.1-.9-2-2-2h-3.2L15 2H9zm3 15a5 5 0 1 1 0-10 5 5 0 0 1 0 10z",
    "more": "M12 8a2 2 0 1 0 0-4 2 2 0 0 0 0 4zm0 2a2 2 0 1 0 0 4 2 2 0 0 0 0-4zm0 6a2 2 0 1 0 0 4 2 2 0 0 0 0-4z",
    "pause": "M6 19h4V5H6v14zm8-14v14h4V5h-4z",
    "play": "M8 5v14l11-7z",
    "move": "M20 6h-8l-2-2H4c-1.1 0-2 .9-2 2v12c0 1.1.9 2 2 2h16c1.1 0 2-.9 2-2V8c0-1.1-.9-2-2-2zm-6 12v-3h-4v-4h4V8l5 5"
            "-5 5z",
    "text": "M5 4v3h5.5v12h3V7H19V4z",
}


def icon(name: str, cls: str = "") -> str:
    """An inline SVG icon; decorative (`aria-hidden`): the control around it carries the name."""
    return (f'<svg class="icon{" " + cls if cls else ""}" viewBox="0 0 24 24" width="24" height="24" aria-hidden="true" '
            f'focusable="false"><path d="{ICONS[name]}"/></svg>')


def icon_button(name: str, label: str, *, href: str | None = None, cls: str = "", attrs: str = "") -> str:
    """A 48 px touch target showing only an icon, named by `label` (a link when `href`)."""
    if href is not None:
        return f'<a class="icon-btn {cls}" href="{esc(href)}" aria-label="{esc(label)}" {attrs}>{icon(name)}</a>'
    return f'<button type="button" class="icon-btn {cls}" aria-label="{esc(label)}" {attrs}>{icon(name)}</button>'


def app_bar(title: str, *, back: str | None = None, actions: str = "", cls: str = "") -> str:
    """The top app bar: an optional Back link, the screen's title (its heading) and action buttons."""
    back_html = icon_button("back", "Back", href=back, cls="back") if back is not None else ""
    return (f'<header class="app-bar {cls}">{back_html}<h1 class="app-bar-title">{esc(title)}</h1>'
            f'<div class="app-bar-actions">{actions}</div></header>')


def bottom_nav(items: list[tuple[str, str, str]], active: str, *, label: str) -> str:
    """The bottom navigation bar: (label, href, icon) per destination; `active` is the current label."""
    links = "".join(
        f'<a href="{esc(href)}" class="nav-item{" active" if name == active else ""}"'
        f'{" aria-current=page" if name == active else ""}>{icon(ic)}<span>{esc(name)}</span></a>'
        for name, href, ic in items)
    return f'<nav class="bottom-nav" aria-label="{esc(label)}">{links}</nav>'


def confirm_dialog(ident: str, title: str, text: str, action: str, confirm: str, *, fields: dict[str, str] | None = None,
                   cancel: str = "Cancel") -> str:
    """A phone's confirmation dialog (a native modal `<dialog>`, opened by a control with
    `data-dialog="ident"`): its confirm button posts `fields` to `action`, Cancel closes it."""
    hidden = "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in (fields or {}).items())
    return (f'<dialog id="{esc(ident)}" class="confirm" aria-labelledby="{esc(ident)}-title" '
            f'aria-describedby="{esc(ident)}-text"><h2 id="{esc(ident)}-title">{esc(title)}</h2>'
            f'<p id="{esc(ident)}-text">{esc(text)}</p><form method="post" action="{esc(action)}" class="dialog-actions">{hidden}'
            f'<button type="button" class="text-btn" data-close="{esc(ident)}">{esc(cancel)}</button>'
            f'<button type="submit" class="text-btn danger" id="{esc(ident)}-confirm">{esc(confirm)}</button></form></dialog>')


#: The reset every phone app starts from (its look is its own `app.css`): no desktop chrome.
RESET = ("*,*::before,*::after{box-sizing:border-box}html{-webkit-text-size-adjust:100%;text-size-adjust:100%}"
         "body{margin:0;min-height:100vh}button,input,select,textarea{font:inherit;color:inherit}"
         "img,svg{display:block;max-width:100%}a{color:inherit;text-decoration:none}[hidden]{display:none!important}"
         ".icon{width:24px;height:24px;fill:currentColor;flex:none}"
         ".sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}")


def phone_page(app: WebApp, title: str, body: str, *, nav: str = "", lang: str = "en", body_class: str = "",
               theme: str = "#ffffff", scripts: tuple[str, ...] = ()) -> HTMLResponse:
    """A full-screen phone page: `body` (markup built with `esc`) in `<main>`, then the
    bottom navigation `nav`, the app's own stylesheet and the phone apps' shared script
    (`/static/cua/phone.js`: dialogs, switches that save on change)."""
    script_tags = "".join(f'<script src="{esc(s)}" defer></script>' for s in ("/static/cua/phone.js", *scripts))
    return HTMLResponse(
        f'<!doctype html><html lang="{esc(lang)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">'
        f'<meta name="theme-color" content="{esc(theme)}"><title>{esc(title)} · {esc(app.title)}</title>'
        f'<style>{RESET}</style><link rel="stylesheet" href="/static/app/app.css">{script_tags}</head>'
        f'<body class="{esc(body_class)}"><main id="screen">{body}</main>{nav}</body></html>')
