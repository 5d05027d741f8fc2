"""Phone settings: the phone's own Settings app (not the desktop admin `settings` app).

Pages: `/` (the categories), `/wifi` (a Wi-Fi switch, the connected, saved and nearby
networks) and `/wifi/{id}` (connect: a password for a secured network not saved, checked
against the network's key; disconnect; Forget asks first), `/bluetooth` (a switch, paired
devices: connect, disconnect, forget) and `/bluetooth/pair` (nearby devices to pair),
`/display` (brightness, adaptive brightness, dark theme, font size, screen timeout),
`/sound` (ring volume, ringtone, vibrate for calls, Do Not Disturb and its schedule),
`/language`, `/apps` and `/apps/{id}` (an app's camera, location, contacts and microphone
permissions: allow, ask every time or don't allow), `/about` (device name, number, model).
Switches, sliders and choices save the moment they change (`data-autosubmit`), as a
phone's settings do; forms with several fields (a password, a schedule) save on their
button. The app itself follows the dark theme and font size it sets.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.tasks.apps.base import AppDB, WebApp, esc
from cua.tasks.apps.phone import Notification, app_bar, confirm_dialog, icon, phone_page
from cua.tasks.apps.phone_people import OWNER_NUMBER

SCHEMA = """
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE networks (
    id INTEGER PRIMARY KEY,
    ssid TEXT NOT NULL UNIQUE,
    security TEXT NOT NULL CHECK (security IN ('open','wpa2','wpa3')),
    signal INTEGER NOT NULL CHECK (signal BETWEEN 1 AND 4),
    band TEXT NOT NULL,
    key TEXT NOT NULL DEFAULT '',
    saved INTEGER NOT NULL DEFAULT 0 CHECK (saved IN (0, 1)),
    saved_password TEXT NOT NULL DEFAULT '',
    connected INTEGER NOT NULL DEFAULT 0 CHECK (connected IN (0, 1))
);
CREATE TABLE bt_devices (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('headphones','speaker','car','watch','keyboard','phone')),
    paired INTEGER NOT NULL DEFAULT 0 CHECK (paired IN (0, 1)),
    connected INTEGER NOT NULL DEFAULT 0 CHECK (connected IN (0, 1))
);
CREATE TABLE apps (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, package TEXT NOT NULL UNIQUE, version TEXT NOT NULL);
CREATE TABLE permissions (
    app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    permission TEXT NOT NULL CHECK (permission IN ('camera','location','contacts','microphone')),
    grant_state TEXT NOT NULL CHECK (grant_state IN ('allow','ask','deny')),
    PRIMARY KEY (app_id, permission)
);
"""

FONT_SIZES = {"small": "Small", "default": "Default", "large": "Large", "largest": "Largest"}
FONT_SCALE = {"small": 0.875, "default": 1.0, "large": 1.15, "largest": 1.3}
TIMEOUTS = {"15": "15 seconds", "30": "30 seconds", "60": "1 minute", "120": "2 minutes", "300": "5 minutes", "600": "10 minutes"}
RINGTONES = ["Pixel Sounds", "Copycat", "Crackle", "Flutterby", "Leaps and Bounces", "Lollipop", "Spaceship", "Zen Garden"]
LANGUAGES = {"en-GB": "English (United Kingdom)", "en-US": "English (United States)", "de-DE": "Deutsch (Deutschland)",
             "fr-FR": "Français (France)", "es-ES": "Español (España)", "pt-BR": "Português (Brasil)", "pl-PL": "Polski (Polska)",
             "ja-JP": "日本語 (日本)", "hi-IN": "हिन्दी (भारत)"}
PERMISSIONS = {"camera": "Camera", "location": "Location", "contacts": "Contacts", "microphone": "Microphone"}
GRANTS = {"allow": "Allow", "ask": "Ask every time", "deny": "Don't allow"}
TIME_RE = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
#: setting -> its seed value (the form each page writes back, validated by `_valid`).
DEFAULTS = {"wifi": "1", "bluetooth": "1", "brightness": "62", "adaptive_brightness": "1", "dark_theme": "0", "font_size": "default",
            "screen_timeout": "60", "ring_volume": "70", "ringtone": "Pixel Sounds", "vibrate_calls": "1", "dnd": "0",
            "dnd_schedule": "1", "dnd_start": "22:30", "dnd_end": "07:00", "language": "en-GB", "device_name": "Sam's Pixel"}
NETWORKS = [("HomeHub-5G", "wpa2", "5 GHz"), ("HomeHub", "wpa2", "2.4 GHz"), ("Costa Coffee Free", "open", "2.4 GHz"),
            ("BTWi-fi", "open", "2.4 GHz"), ("Flat 3B", "wpa3", "5 GHz"), ("VM7731902", "wpa2", "2.4 GHz"),
            ("TP-Link_8E21", "wpa2", "2.4 GHz"), ("DIRECT-HP-LaserJet", "wpa2", "2.4 GHz"), ("Library_Guest", "open", "5 GHz"),
            ("EE-Hub-Q7XK", "wpa3", "5 GHz")]
DEVICES = [("Pixel Buds Pro", "headphones", 1), ("Car Multimedia", "car", 1), ("Galaxy Watch6", "watch", 1),
           ("JBL Flip 6", "speaker", 0), ("Sony WH-1000XM5", "headphones", 0), ("Logitech K380", "keyboard", 0),
           ("Bose SoundLink Mini", "speaker", 0)]
APPS = [("Phone", "com.android.dialer"), ("Messages", "com.android.messages"), ("Camera", "com.android.camera"),
        ("Maps", "com.android.maps"), ("WhatsApp", "com.whatsapp"), ("Instagram", "com.instagram.android"),
        ("Uber", "com.ubercab"), ("Spotify", "com.spotify.music"), ("Zoom", "us.zoom.videomeetings"),
        ("Citymapper", "com.citymapper.app"), ("Duolingo", "com.duolingo"), ("Strava", "com.strava"),
        ("Banking", "uk.co.northwaybank"), ("Deliveroo", "com.deliveroo.orderapp")]
KIND_ICON = {"headphones": "speaker", "speaker": "speaker", "car": "bluetooth", "watch": "alarm", "keyboard": "text", "phone": "phone"}
CATEGORIES = [("Network & internet", "Wi-Fi", "/wifi", "wifi"), ("Connected devices", "Bluetooth", "/bluetooth", "bluetooth"),
              ("Apps", "Permissions", "/apps", "apps"), ("Display", "Brightness, dark theme, font size", "/display", "brightness"),
              ("Sound & vibration", "Volume, ringtone, Do Not Disturb", "/sound", "speaker"),
              ("Languages", "System language", "/language", "globe"), ("About phone", "Device name, number", "/about", "info")]


def _int_in(value: str, low: int, high: int) -> bool:
    return value.isdigit() and low <= int(value) <= high


def _valid(key: str, value: str) -> bool:
    """Whether `value` is one the page offers for setting `key` (anything else is refused)."""
    if key not in DEFAULTS:
        return False
    if key in ("brightness", "ring_volume"):
        return _int_in(value, 0, 100)
    if key in ("dnd_start", "dnd_end"):
        return bool(TIME_RE.match(value))
    if key == "device_name":
        return 0 < len(value) <= 40
    choices: dict[str, Collection[str]] = {"font_size": FONT_SIZES, "screen_timeout": TIMEOUTS, "ringtone": RINGTONES,
                                           "language": LANGUAGES}
    return value in choices.get(key, ("0", "1"))


class PhoneSettingsApp(WebApp):
    name = "phone_settings"
    title = "Settings"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    assigned = {"networks": ("ssid", "security", "signal", "band", "key"), "bt_devices": ("name", "kind"),
                "apps": ("name", "package", "version")}
    derived = {"permissions.app": ("permissions.app_id",)}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        for key, value in DEFAULTS.items():
            db.execute("INSERT INTO settings (key, value) VALUES (?, ?)", (key, value))
        db.execute("UPDATE settings SET value = ? WHERE key = 'brightness'", (str(rng.randint(35, 85)),))
        words = ["maple", "orbit", "tiger", "copper", "violet", "harbor", "pebble", "lantern", "cobalt", "meadow"]
        home = rng.randrange(2)
        for i, (ssid, security, band) in enumerate(NETWORKS):
            key = "" if security == "open" else f"{rng.choice(words)}-{rng.choice(words)}-{rng.randint(10, 99)}"
            saved = int(i == home or ssid == "Costa Coffee Free")
            db.execute("INSERT INTO networks (ssid, security, signal, band, key, saved, saved_password, connected) VALUES (?,?,?,?,?,?,?,?)",
                       (ssid, security, 4 if i < 2 else rng.randint(1, 4), band, key, saved, key if saved else "", int(i == home)))
        for name, kind, paired in DEVICES:
            db.execute("INSERT INTO bt_devices (name, kind, paired, connected) VALUES (?, ?, ?, ?)",
                       (name, kind, paired, int(paired and rng.random() < 0.4)))
        wants = {"Phone": ("contacts", "microphone"), "Messages": ("contacts", "camera"), "Camera": ("camera", "location", "microphone"),
                 "Maps": ("location",), "WhatsApp": ("camera", "contacts", "microphone", "location"), "Instagram": ("camera", "microphone", "location"),
                 "Uber": ("location", "contacts"), "Spotify": ("microphone",), "Zoom": ("camera", "microphone", "contacts"),
                 "Citymapper": ("location",), "Duolingo": ("microphone",), "Strava": ("location", "camera", "contacts"),
                 "Banking": ("camera", "location", "contacts"), "Deliveroo": ("location",)}
        for name, package in APPS:
            app_id = db.insert("INSERT INTO apps (name, package, version) VALUES (?, ?, ?)",
                               (name, package, f"{rng.randint(1, 30)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}"))
            for perm in wants[name]:
                db.execute("INSERT INTO permissions (app_id, permission, grant_state) VALUES (?, ?, ?)",
                           (app_id, perm, rng.choices(["allow", "ask", "deny"], [5, 2, 2])[0]))

    def state(self) -> dict[str, Any]:
        notes: list[Notification] = []
        return {"settings": self.db.all("SELECT * FROM settings ORDER BY key"),
                "networks": self.db.all("SELECT * FROM networks ORDER BY id"),
                "bt_devices": self.db.all("SELECT * FROM bt_devices ORDER BY id"),
                "apps": self.db.all("SELECT * FROM apps ORDER BY id"),
                "permissions": self.db.all("SELECT p.*, a.name AS app FROM permissions p JOIN apps a ON a.id = p.app_id "
                                           "ORDER BY p.app_id, p.permission"),
                "notifications": notes}

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/set", self.set_values, methods=["POST"]),
            Route("/wifi", self.wifi),
            Route("/wifi/{nid:int}", self.network, methods=["GET", "POST"]),
            Route("/wifi/{nid:int}/{op:str}", self.network_op, methods=["POST"]),
            Route("/bluetooth", self.bluetooth),
            Route("/bluetooth/pair", self.pair, methods=["GET", "POST"]),
            Route("/bluetooth/{did:int}/{op:str}", self.device_op, methods=["POST"]),
            Route("/display", self.display),
            Route("/sound", self.sound),
            Route("/language", self.language),
            Route("/apps", self.apps),
            Route("/apps/{aid:int}", self.app_page, methods=["GET", "POST"]),
            Route("/about", self.about),
        ]

    # --- helpers ---

    def _settings(self) -> dict[str, str]:
        return {r["key"]: r["value"] for r in self.db.all("SELECT key, value FROM settings")}

    def _page(self, title: str, body: str) -> Response:
        s = self._settings()
        cls = ("dark " if s.get("dark_theme") == "1" else "") + f"font-{s.get('font_size', 'default')}"
        return phone_page(self, title, body, body_class=cls, lang=s.get("language", "en-GB"),
                          theme="#101510" if s.get("dark_theme") == "1" else "#f6fbf1")

    @staticmethod
    def _switch(key: str, label: str, on: bool, back: str, hint: str = "") -> str:
        """A setting's switch row that saves itself when flipped (`POST /set`)."""
        sub = f'<span class="sub">{esc(hint)}</span>' if hint else ""
        return (f'<form method="post" action="/set" class="row-form"><input type="hidden" name="back" value="{esc(back)}">'
                f'<input type="hidden" name="{key}" value="0"><label class="row switch-row"><span class="row-text">'
                f'<span class="row-title">{esc(label)}</span>{sub}</span><span class="switch"><input type="checkbox" role="switch" '
                f'name="{key}" value="1" data-autosubmit{" checked" if on else ""}><span class="track" aria-hidden="true"></span>'
                f'</span></label></form>')

    @staticmethod
    def _choices(key: str, legend: str, options: dict[str, str], current: str, back: str) -> str:
        radios = "".join(f'<label class="choice"><input type="radio" name="{key}" value="{esc(v)}" data-autosubmit'
                         f'{" checked" if v == current else ""}><span>{esc(text)}</span></label>' for v, text in options.items())
        return (f'<form method="post" action="/set" class="group"><input type="hidden" name="back" value="{esc(back)}">'
                f'<fieldset><legend class="group-title">{esc(legend)}</legend>{radios}</fieldset></form>')

    @staticmethod
    def _slider(key: str, label: str, value: str, back: str) -> str:
        return (f'<form method="post" action="/set" class="group slider-form"><input type="hidden" name="back" value="{esc(back)}">'
                f'<label class="slider"><span class="row-title">{esc(label)}</span><input type="range" name="{key}" min="0" max="100" '
                f'step="1" value="{esc(value)}" data-autosubmit aria-valuetext="{esc(value)}%"></label></form>')

    async def set_values(self, request: Request) -> Response:
        """Save every known setting the form carries (a switch's hidden 0 then its checked 1: the last value wins)."""
        form = await request.form()
        for key in DEFAULTS:
            values = [str(v) for v in form.getlist(key)]
            if values:
                value = " ".join(values[-1].split()) if key == "device_name" else values[-1].strip()
                if _valid(key, value):
                    self.db.execute("UPDATE settings SET value = ? WHERE key = ?", (value, key))
                    if key == "wifi" and value == "0":
                        self.db.execute("UPDATE networks SET connected = 0")
                    if key == "bluetooth" and value == "0":
                        self.db.execute("UPDATE bt_devices SET connected = 0")
        back = str(form.get("back", "/"))
        return RedirectResponse(back if back in {c[2] for c in CATEGORIES} | {"/"} else "/", status_code=303)

    # --- pages ---

    async def home(self, request: Request) -> Response:
        s = self._settings()
        connected = self.db.scalar("SELECT ssid FROM networks WHERE connected = 1")
        subs = {"/wifi": connected or ("Off" if s["wifi"] == "0" else "Not connected"),
                "/bluetooth": "On" if s["bluetooth"] == "1" else "Off", "/language": LANGUAGES[s["language"]],
                "/about": s["device_name"]}
        rows = "".join(
            f'<li><a class="row" href="{href}"><span class="row-icon">{icon(ic)}</span><span class="row-text">'
            f'<span class="row-title">{esc(title)}</span><span class="sub">{esc(subs.get(href, sub))}</span></span></a></li>'
            for title, sub, href, ic in CATEGORIES)
        return self._page("Settings", app_bar("Settings") + f'<ul class="list">{rows}</ul>')

    async def wifi(self, request: Request) -> Response:
        s = self._settings()
        on = s["wifi"] == "1"
        nets = self.db.all("SELECT * FROM networks ORDER BY connected DESC, saved DESC, signal DESC, ssid")

        def row(n: dict[str, Any]) -> str:
            status = "Connected" if n["connected"] else "Saved" if n["saved"] else ("Open" if n["security"] == "open" else "Secured")
            lock = f'<span class="lock">{icon("lock")}</span>' if n["security"] != "open" else ""
            return (f'<li><a class="row{" current" if n["connected"] else ""}" href="/wifi/{n["id"]}" data-id="{n["id"]}">'
                    f'<span class="row-icon signal-{n["signal"]}">{icon("wifi")}</span><span class="row-text"><span class="row-title">'
                    f'{esc(n["ssid"])}</span><span class="sub">{status}</span></span>{lock}</a></li>')

        listing = (f'<ul class="list">{"".join(row(n) for n in nets)}</ul>' if on
                   else '<p class="empty">Turn on Wi-Fi to see available networks</p>')
        body = app_bar("Wi-Fi", back="/") + self._switch("wifi", "Use Wi-Fi", on, "/wifi") + listing
        return self._page("Wi-Fi", body)

    async def network(self, request: Request) -> Response:
        n = self.db.one("SELECT * FROM networks WHERE id = ?", (request.path_params["nid"],))
        if n is None or self._settings()["wifi"] != "1":
            return RedirectResponse("/wifi", status_code=303)
        error = ""
        if request.method == "POST":  # connect
            form = await request.form()
            password = str(form.get("password", ""))
            if n["security"] == "open" or (n["saved"] and not password) or password == n["key"]:
                self.db.execute("UPDATE networks SET connected = 0")
                self.db.execute("UPDATE networks SET connected = 1, saved = 1, saved_password = ? WHERE id = ?",
                                (n["key"], n["id"]))
                return RedirectResponse("/wifi", status_code=303)
            error = '<p class="error" role="alert" id="pw-error">Incorrect password. Check it and try again.</p>'
        security = {"open": "None", "wpa2": "WPA2-Personal", "wpa3": "WPA3-Personal"}[n["security"]]
        info = (f'<dl class="details"><dt>Status</dt><dd>{"Connected" if n["connected"] else "Saved" if n["saved"] else "Not saved"}'
                f'</dd><dt>Signal strength</dt><dd>{["Weak", "Fair", "Good", "Excellent"][n["signal"] - 1]}</dd>'
                f'<dt>Frequency</dt><dd>{esc(n["band"])}</dd><dt>Security</dt><dd>{security}</dd></dl>')
        buttons = ""
        if n["connected"]:
            buttons += (f'<form method="post" action="/wifi/{n["id"]}/disconnect" class="inline"><button type="submit" class="tonal-btn">'
                        'Disconnect</button></form>')
        elif n["security"] == "open" or n["saved"]:
            buttons += f'<form method="post" action="/wifi/{n["id"]}" class="inline"><button type="submit" class="filled-btn">Connect</button></form>'
        if n["saved"]:
            buttons += ('<button type="button" class="tonal-btn" data-dialog="forget-dialog">Forget</button>'
                        + confirm_dialog("forget-dialog", f"Forget {n['ssid']}?", "Its saved password will be removed from this phone.",
                                         f"/wifi/{n['id']}/forget", "Forget"))
        password_form = ""
        if not n["connected"] and not n["saved"] and n["security"] != "open":
            password_form = (f'<form method="post" action="/wifi/{n["id"]}" class="group pw-form"><label class="field"><span>Password</span>'
                             f'<input type="password" name="password" id="password" autocomplete="off" required minlength="8" '
                             f'aria-describedby="pw-error"></label>{error}<label class="check"><input type="checkbox" id="show-password">'
                             '<span>Show password</span></label><div class="actions"><a class="text-btn" href="/wifi">Cancel</a>'
                             '<button type="submit" class="filled-btn">Connect</button></div></form>')
        body = (app_bar(n["ssid"], back="/wifi") + f'<section class="group">{info}<div class="actions">{buttons}</div></section>'
                + password_form + '<script src="/static/app/settings.js" defer></script>')
        return self._page(n["ssid"], body)

    async def network_op(self, request: Request) -> Response:
        nid, op = request.path_params["nid"], request.path_params["op"]
        if op == "disconnect":
            self.db.execute("UPDATE networks SET connected = 0 WHERE id = ?", (nid,))
        elif op == "forget":
            self.db.execute("UPDATE networks SET connected = 0, saved = 0, saved_password = '' WHERE id = ?", (nid,))
        return RedirectResponse("/wifi", status_code=303)

    async def bluetooth(self, request: Request) -> Response:
        on = self._settings()["bluetooth"] == "1"
        devices = self.db.all("SELECT * FROM bt_devices WHERE paired = 1 ORDER BY connected DESC, name")

        def row(d: dict[str, Any]) -> str:
            op = "disconnect" if d["connected"] else "connect"
            return (f'<li class="device" data-id="{d["id"]}"><span class="row-icon">{icon(KIND_ICON[d["kind"]])}</span>'
                    f'<span class="row-text"><span class="row-title">{esc(d["name"])}</span><span class="sub">'
                    f'{"Connected" if d["connected"] else "Paired"}</span></span>'
                    f'<form method="post" action="/bluetooth/{d["id"]}/{op}" class="inline"><button type="submit" class="tonal-btn small" '
                    f'aria-label="{op.capitalize()} {esc(d["name"])}">{op.capitalize()}</button></form>'
                    f'<button type="button" class="icon-btn" data-dialog="forget-{d["id"]}" aria-label="Forget {esc(d["name"])}">'
                    f'{icon("delete")}</button>'
                    + confirm_dialog(f"forget-{d['id']}", f"Forget {d['name']}?", "You will need to pair it again to use it.",
                                     f"/bluetooth/{d['id']}/forget", "Forget device") + "</li>")

        listing = ((f'<a class="row" href="/bluetooth/pair"><span class="row-icon">{icon("add")}</span><span class="row-text">'
                    '<span class="row-title">Pair new device</span></span></a><h2 class="group-title">Saved devices</h2>'
                    f'<ul class="list">{"".join(row(d) for d in devices)}</ul>') if on
                   else '<p class="empty">Turn on Bluetooth to connect to devices</p>')
        body = app_bar("Bluetooth", back="/") + self._switch("bluetooth", "Use Bluetooth", on, "/bluetooth") + listing
        return self._page("Bluetooth", body)

    async def pair(self, request: Request) -> Response:
        if self._settings()["bluetooth"] != "1":
            return RedirectResponse("/bluetooth", status_code=303)
        if request.method == "POST":
            form = await request.form()
            did = str(form.get("device", ""))
            if did.isdigit() and len(did) <= 9:  # an id, not a number SQLite cannot hold
                self.db.execute("UPDATE bt_devices SET paired = 1, connected = 1 WHERE id = ? AND paired = 0", (int(did),))
            return RedirectResponse("/bluetooth", status_code=303)
        nearby = self.db.all("SELECT * FROM bt_devices WHERE paired = 0 ORDER BY name")
        rows = "".join(
            f'<li><form method="post" action="/bluetooth/pair"><input type="hidden" name="device" value="{d["id"]}">'
            f'<button type="submit" class="row" aria-label="Pair {esc(d["name"])}"><span class="row-icon">{icon(KIND_ICON[d["kind"]])}'
            f'</span><span class="row-text"><span class="row-title">{esc(d["name"])}</span></span></button></form></li>' for d in nearby)
        body = (app_bar("Pair new device", back="/bluetooth") + '<h2 class="group-title">Available devices</h2>'
                + (f'<ul class="list">{rows}</ul>' if nearby else '<p class="empty">No devices nearby</p>'))
        return self._page("Pair new device", body)

    async def device_op(self, request: Request) -> Response:
        did, op = request.path_params["did"], request.path_params["op"]
        if op == "connect":
            self.db.execute("UPDATE bt_devices SET connected = 1 WHERE id = ? AND paired = 1", (did,))
        elif op == "disconnect":
            self.db.execute("UPDATE bt_devices SET connected = 0 WHERE id = ?", (did,))
        elif op == "forget":
            self.db.execute("UPDATE bt_devices SET paired = 0, connected = 0 WHERE id = ?", (did,))
        return RedirectResponse("/bluetooth", status_code=303)

    async def display(self, request: Request) -> Response:
        s = self._settings()
        body = (app_bar("Display", back="/") + self._slider("brightness", "Brightness level", s["brightness"], "/display")
                + self._switch("adaptive_brightness", "Adaptive brightness", s["adaptive_brightness"] == "1", "/display",
                               "Adjust to your surroundings")
                + self._switch("dark_theme", "Dark theme", s["dark_theme"] == "1", "/display")
                + self._choices("font_size", "Font size", FONT_SIZES, s["font_size"], "/display")
                + self._choices("screen_timeout", "Screen timeout", TIMEOUTS, s["screen_timeout"], "/display"))
        return self._page("Display", body)

    async def sound(self, request: Request) -> Response:
        s = self._settings()
        schedule = (f'<form method="post" action="/set" class="group"><input type="hidden" name="back" value="/sound">'
                    '<fieldset><legend class="group-title">Do Not Disturb schedule</legend>'
                    '<input type="hidden" name="dnd_schedule" value="0"><label class="check"><input type="checkbox" name="dnd_schedule" '
                    f'value="1"{" checked" if s["dnd_schedule"] == "1" else ""}><span>Turn on automatically</span></label>'
                    f'<div class="times"><label class="field"><span>Start</span><input type="time" name="dnd_start" value="{esc(s["dnd_start"])}">'
                    f'</label><label class="field"><span>End</span><input type="time" name="dnd_end" value="{esc(s["dnd_end"])}"></label></div>'
                    '<div class="actions"><button type="submit" class="filled-btn">Save schedule</button></div></fieldset></form>')
        body = (app_bar("Sound & vibration", back="/") + self._slider("ring_volume", "Ring volume", s["ring_volume"], "/sound")
                + self._switch("vibrate_calls", "Vibrate for calls", s["vibrate_calls"] == "1", "/sound")
                + self._switch("dnd", "Do Not Disturb", s["dnd"] == "1", "/sound", "Only priority interruptions")
                + schedule + self._choices("ringtone", "Phone ringtone", {r: r for r in RINGTONES}, s["ringtone"], "/sound"))
        return self._page("Sound & vibration", body)

    async def language(self, request: Request) -> Response:
        s = self._settings()
        body = app_bar("Languages", back="/") + self._choices("language", "System language", LANGUAGES, s["language"], "/language")
        return self._page("Languages", body)

    async def apps(self, request: Request) -> Response:
        rows = self.db.all("SELECT a.*, (SELECT COUNT(*) FROM permissions p WHERE p.app_id = a.id AND p.grant_state = 'allow') AS allowed "
                           "FROM apps a ORDER BY a.name COLLATE NOCASE")
        items = "".join(
            f'<li><a class="row" href="/apps/{a["id"]}"><span class="app-icon" aria-hidden="true">{esc(a["name"][0])}</span>'
            f'<span class="row-text"><span class="row-title">{esc(a["name"])}</span><span class="sub">{a["allowed"]} permission'
            f'{"" if a["allowed"] == 1 else "s"} allowed</span></span></a></li>' for a in rows)
        return self._page("Apps", app_bar("Apps", back="/") + f'<ul class="list">{items}</ul>')

    async def app_page(self, request: Request) -> Response:
        a = self.db.one("SELECT * FROM apps WHERE id = ?", (request.path_params["aid"],))
        if a is None:
            return RedirectResponse("/apps", status_code=303)
        if request.method == "POST":
            form = await request.form()
            for perm in PERMISSIONS:
                value = str(form.get(perm, ""))
                if value in GRANTS:
                    self.db.execute("UPDATE permissions SET grant_state = ? WHERE app_id = ? AND permission = ?", (value, a["id"], perm))
            return RedirectResponse(f"/apps/{a['id']}", status_code=303)
        perms = self.db.all("SELECT * FROM permissions WHERE app_id = ? ORDER BY permission", (a["id"],))
        groups = "".join(
            f'<form method="post" action="/apps/{a["id"]}" class="group"><fieldset><legend class="group-title">'
            f'{esc(PERMISSIONS[p["permission"]])} access for {esc(a["name"])}</legend>'
            + "".join(f'<label class="choice"><input type="radio" name="{p["permission"]}" value="{g}" data-autosubmit'
                      f'{" checked" if g == p["grant_state"] else ""}><span>{esc(text)}</span></label>' for g, text in GRANTS.items())
            + "</fieldset></form>" for p in perms)
        body = (app_bar(a["name"], back="/apps") + f'<p class="app-meta">{esc(a["package"])} · version {esc(a["version"])}</p>'
                + '<h2 class="section-title">App permissions</h2>'
                + (groups or '<p class="empty">This app has asked for no permissions</p>'))
        return self._page(a["name"], body)

    async def about(self, request: Request) -> Response:
        s = self._settings()
        name = (f'<form method="post" action="/set" class="group"><input type="hidden" name="back" value="/about">'
                f'<label class="field"><span>Device name</span><input type="text" name="device_name" value="{esc(s["device_name"])}" '
                'maxlength="40" required></label><div class="actions"><button type="submit" class="filled-btn">Rename</button></div></form>')
        info = (f'<dl class="details group"><dt>Phone number</dt><dd>{esc(OWNER_NUMBER)}</dd><dt>Model</dt><dd>Pixel 8</dd>'
                '<dt>Android version</dt><dd>15</dd><dt>Build number</dt><dd>AP4A.250205.002</dd>'
                '<dt>Storage</dt><dd>74.3 GB used of 128 GB</dd></dl>')
        return self._page("About phone", app_bar("About phone", back="/") + name + info)


APP = PhoneSettingsApp
