"""Clock: alarms, timers and a world clock, as a phone's Clock app has them.

Pages (bottom navigation): `/alarms` (each alarm's time, label and days, a switch that
turns it on or off as soon as it is flipped; Add alarm), `/alarms/new` and
`/alarms/{id}` (a time picker, a label, the days it repeats as toggle chips; Delete asks
first), `/world` (the local time, the chosen cities with their time and difference;
remove one) and `/world/add?q=` (search the city catalogue, add one), `/timers` (set a
timer of hours, minutes and seconds with a label; start, pause, reset, delete). The app's
clock is the apps' fixed clock, so a timer's remaining time changes only when a person
pauses or resets it. Running timers are the app's notifications.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.values.web import QueryRule
from cua.tasks.apps.base import AppDB, WebApp, esc
from cua.tasks.apps.phone import Notification, app_bar, bottom_nav, confirm_dialog, icon, icon_button, phone_page

SCHEMA = """
CREATE TABLE alarms (
    id INTEGER PRIMARY KEY,
    time TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    days TEXT NOT NULL DEFAULT '',
    enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    vibrate INTEGER NOT NULL DEFAULT 1 CHECK (vibrate IN (0, 1))
);
CREATE TABLE timers (
    id INTEGER PRIMARY KEY,
    label TEXT NOT NULL DEFAULT '',
    duration_s INTEGER NOT NULL CHECK (duration_s > 0),
    remaining_s INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'ready' CHECK (state IN ('ready','running','paused'))
);
CREATE TABLE cities (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    country TEXT NOT NULL,
    utc_offset_min INTEGER NOT NULL
);
"""

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
#: The catalogue the world clock adds from: (city, country, UTC offset in minutes on the apps' fixed date, 2 March 2026).
CATALOGUE: list[tuple[str, str, int]] = [
    ("London", "United Kingdom", 0), ("Dublin", "Ireland", 0), ("Lisbon", "Portugal", 0), ("Reykjavík", "Iceland", 0),
    ("Paris", "France", 60), ("Berlin", "Germany", 60), ("Madrid", "Spain", 60), ("Rome", "Italy", 60),
    ("Warsaw", "Poland", 60), ("Stockholm", "Sweden", 60), ("Lagos", "Nigeria", 60), ("Cairo", "Egypt", 120),
    ("Athens", "Greece", 120), ("Helsinki", "Finland", 120), ("Johannesburg", "South Africa", 120),
    ("Istanbul", "Türkiye", 180), ("Moscow", "Russia", 180), ("Nairobi", "Kenya", 180), ("Dubai", "United Arab Emirates", 240),
    ("Tehran", "Iran", 210), ("Karachi", "Pakistan", 300), ("Mumbai", "India", 330), ("Kathmandu", "Nepal", 345),
    ("Dhaka", "Bangladesh", 360), ("Bangkok", "Thailand", 420), ("Jakarta", "Indonesia", 420), ("Singapore", "Singapore", 480),
    ("Beijing", "China", 480), ("Hong Kong", "China", 480), ("Seoul", "South Korea", 540), ("Tokyo", "Japan", 540),
    ("Adelaide", "Australia", 630), ("Sydney", "Australia", 660), ("Auckland", "New Zealand", 780),
    ("Honolulu", "United States", -600), ("Anchorage", "United States", -540), ("Los Angeles", "United States", -480),
    ("Vancouver", "Canada", -480), ("Denver", "United States", -420), ("Mexico City", "Mexico", -360),
    ("Chicago", "United States", -360), ("New York", "United States", -300), ("Toronto", "Canada", -300),
    ("Bogotá", "Colombia", -300), ("Santiago", "Chile", -180), ("São Paulo", "Brazil", -180),
    ("Buenos Aires", "Argentina", -180), ("St. John's", "Canada", -210),
]
CATALOGUE_BY_NAME = {name: (country, offset) for name, country, offset in CATALOGUE}
TIME_RE = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
LABELS = ["Work", "Gym", "Meds", "School run", "Wake up", "Bins out", "Yoga", "Call Mum", "", "", ""]
NAV = [("Alarm", "/alarms", "alarm"), ("World clock", "/world", "globe"), ("Timer", "/timers", "timer")]


def hms(seconds: int) -> str:
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def days_text(days: str) -> str:
    chosen = [d for d in days.split(",") if d]
    if not chosen:
        return "Not scheduled"
    if len(chosen) == 7:
        return "Every day"
    if chosen == list(DAYS[:5]):
        return "Weekdays"
    if chosen == list(DAYS[5:]):
        return "Weekends"
    return ", ".join(DAY_NAMES[DAYS.index(d)][:3] for d in chosen)


class ClockApp(WebApp):
    name = "clock"
    title = "Clock"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    assigned = {"cities": ("country", "utc_offset_min"), "timers": ("remaining_s",)}
    query_params = {"q": QueryRule(strip=True)}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        times = sorted(rng.sample([f"{h:02d}:{m:02d}" for h in range(5, 23) for m in (0, 15, 30, 45)], 9))
        patterns = [",".join(DAYS[:5]), ",".join(DAYS[5:]), ",".join(DAYS), "", "mon,wed,fri", "tue,thu", "sat"]
        for t in times:
            db.execute("INSERT INTO alarms (time, label, days, enabled, vibrate) VALUES (?, ?, ?, ?, ?)",
                       (t, rng.choice(LABELS), rng.choice(patterns), int(rng.random() < 0.6), int(rng.random() < 0.8)))
        for name in ["London", *rng.sample([c[0] for c in CATALOGUE if c[0] != "London"], 4)]:
            country, offset = CATALOGUE_BY_NAME[name]
            db.execute("INSERT INTO cities (name, country, utc_offset_min) VALUES (?, ?, ?)", (name, country, offset))
        for label, minutes in rng.sample([("Pasta", 11), ("Eggs", 7), ("Laundry", 45), ("Tea", 4), ("Focus", 25)], 2):
            total = minutes * 60
            db.execute("INSERT INTO timers (label, duration_s, remaining_s, state) VALUES (?, ?, ?, ?)",
                       (label, total, total - rng.randint(0, total - 30), rng.choice(["running", "paused"])))

    def state(self) -> dict[str, Any]:
        alarms = [{**a, "days": [d for d in a["days"].split(",") if d]} for a in self.db.all("SELECT * FROM alarms ORDER BY id")]
        timers = self.db.all("SELECT * FROM timers ORDER BY id")
        notes: list[Notification] = [
            {"id": f"timer-{t['id']}", "app": self.name, "title": f"Timer{' · ' + t['label'] if t['label'] else ''}",
             "text": f"{hms(t['remaining_s'])} left", "time": self.now().strftime("%Y-%m-%d %H:%M"), "link": "/timers"}
            for t in timers if t["state"] == "running"]
        return {"alarms": alarms, "timers": timers, "cities": self.db.all("SELECT * FROM cities ORDER BY id"),
                "notifications": notes}

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", lambda r: RedirectResponse("/alarms", status_code=302)),
            Route("/alarms", self.alarms),
            Route("/alarms/new", self.edit_alarm, methods=["GET", "POST"]),
            Route("/alarms/{aid:int}", self.edit_alarm, methods=["GET", "POST"]),
            Route("/alarms/{aid:int}/toggle", self.toggle_alarm, methods=["POST"]),
            Route("/alarms/{aid:int}/delete", self.delete_alarm, methods=["POST"]),
            Route("/world", self.world),
            Route("/world/add", self.add_city, methods=["GET", "POST"]),
            Route("/world/{cid:int}/delete", self.delete_city, methods=["POST"]),
            Route("/timers", self.timers),
            Route("/timers/new", self.new_timer, methods=["POST"]),
            Route("/timers/{tid:int}/{op:str}", self.timer_op, methods=["POST"]),
        ]

    def _page(self, title: str, body: str, active: str = "") -> Response:
        nav = bottom_nav(NAV, active, label="Clock") if active else ""
        return phone_page(self, title, body, nav=nav, body_class="with-nav" if active else "", theme="#101418")

    # --- alarms ---

    async def alarms(self, request: Request) -> Response:
        rows = self.db.all("SELECT * FROM alarms ORDER BY time, id")
        cards = "".join(
            f'<li class="alarm{" on" if a["enabled"] else ""}" data-id="{a["id"]}">'
            f'<a class="alarm-main" href="/alarms/{a["id"]}" aria-label="Edit alarm {a["time"]}'
            f'{(" " + esc(a["label"])) if a["label"] else ""}"><span class="alarm-label">{esc(a["label"]) or "Alarm"}</span>'
            f'<span class="alarm-time">{a["time"]}</span><span class="alarm-days">{esc(days_text(a["days"]))}</span></a>'
            f'<form method="post" action="/alarms/{a["id"]}/toggle" class="switch-form"><input type="hidden" name="enabled" value="0">'
            f'<label class="switch"><input type="checkbox" role="switch" name="enabled" value="1" data-autosubmit '
            f'aria-label="Alarm {a["time"]}{(" " + esc(a["label"])) if a["label"] else ""}"{" checked" if a["enabled"] else ""}>'
            f'<span class="track" aria-hidden="true"></span></label><noscript><button type="submit">Save</button></noscript></form></li>'
            for a in rows)
        body = (app_bar("Alarm") + (f'<ul class="cards">{cards}</ul>' if rows else '<p class="empty">No alarms</p>')
                + f'<a class="fab" href="/alarms/new" aria-label="Add alarm">{icon("add")}</a>')
        return self._page("Alarms", body, "Alarm")

    async def toggle_alarm(self, request: Request) -> Response:
        form = await request.form()
        enabled = 1 if "1" in form.getlist("enabled") else 0
        self.db.execute("UPDATE alarms SET enabled = ? WHERE id = ?", (enabled, request.path_params["aid"]))
        return RedirectResponse("/alarms", status_code=303)

    async def edit_alarm(self, request: Request) -> Response:
        aid = request.path_params.get("aid")
        alarm = self.db.one("SELECT * FROM alarms WHERE id = ?", (aid,)) if aid is not None else None
        if aid is not None and alarm is None:
            return RedirectResponse("/alarms", status_code=303)
        error = ""
        values = alarm or {"time": "07:00", "label": "", "days": "", "enabled": 1, "vibrate": 1}
        if request.method == "POST":
            form = await request.form()
            time = str(form.get("time", "")).strip()[:5]
            days = ",".join(d for d in DAYS if d in form.getlist("days"))
            label = " ".join(str(form.get("label", "")).split())[:60]
            vibrate = 1 if form.get("vibrate") else 0
            if TIME_RE.match(time):
                if alarm is None:
                    self.db.execute("INSERT INTO alarms (time, label, days, enabled, vibrate) VALUES (?, ?, ?, 1, ?)",
                                    (time, label, days, vibrate))
                else:  # saving an alarm turns it on, as a phone does
                    self.db.execute("UPDATE alarms SET time = ?, label = ?, days = ?, vibrate = ?, enabled = 1 WHERE id = ?",
                                    (time, label, days, vibrate, aid))
                return RedirectResponse("/alarms", status_code=303)
            error = '<p class="error" role="alert" id="time-error">Enter a time as hours and minutes, like 07:30.</p>'
            values = {**values, "time": time, "label": label, "days": days, "vibrate": vibrate}
        chosen = set(values["days"].split(","))
        chips = "".join(
            f'<label class="day-chip"><input type="checkbox" name="days" value="{d}"{" checked" if d in chosen else ""} '
            f'aria-label="{DAY_NAMES[i]}"><span aria-hidden="true">{DAY_NAMES[i][0]}</span></label>' for i, d in enumerate(DAYS))
        action = f"/alarms/{aid}" if alarm else "/alarms/new"
        delete = (icon_button("delete", "Delete alarm", attrs='data-dialog="delete-dialog"')
                  + confirm_dialog("delete-dialog", "Delete this alarm?", f"The {values['time']} alarm will be deleted.",
                                   f"/alarms/{aid}/delete", "Delete")) if alarm else ""
        body = (app_bar("Edit alarm" if alarm else "Add alarm", back="/alarms", actions=delete)
                + f'<form method="post" action="{action}" class="sheet" id="alarm-form">'
                  f'<label class="time-field"><span class="sr-only">Alarm time</span><input type="time" name="time" '
                  f'value="{esc(values["time"])}" required aria-describedby="time-error"></label>{error}'
                  f'<fieldset class="days"><legend>Repeat</legend><div class="chips">{chips}</div></fieldset>'
                  f'<label class="row-field">{icon("text")}<span class="sr-only">Label</span><input type="text" name="label" '
                  f'value="{esc(values["label"])}" placeholder="Add label" maxlength="60"></label>'
                  f'<label class="row-field switch-row"><span>Vibrate</span><span class="switch"><input type="checkbox" role="switch" '
                  f'name="vibrate" value="1"{" checked" if values["vibrate"] else ""}><span class="track" aria-hidden="true"></span>'
                  f'</span></label><div class="sheet-actions"><a class="text-btn" href="/alarms">Cancel</a>'
                  f'<button type="submit" class="filled-btn">Save</button></div></form>')
        return self._page("Edit alarm" if alarm else "Add alarm", body)

    async def delete_alarm(self, request: Request) -> Response:
        self.db.execute("DELETE FROM alarms WHERE id = ?", (request.path_params["aid"],))
        return RedirectResponse("/alarms", status_code=303)

    # --- world clock ---

    def _local(self, offset_min: int) -> dt.datetime:
        return self.now() + dt.timedelta(minutes=offset_min)  # the fixed clock is London time, UTC+0 in March

    @staticmethod
    def _difference(offset_min: int) -> str:
        if offset_min == 0:
            return "Same time"
        h, m = divmod(abs(offset_min), 60)
        span = f"{h} hr" + (f" {m} min" if m else "")
        return f"{span} ahead" if offset_min > 0 else f"{span} behind"

    async def world(self, request: Request) -> Response:
        now = self.now()
        cities = self.db.all("SELECT * FROM cities ORDER BY utc_offset_min, name")
        rows = "".join(
            f'<li class="city" data-id="{c["id"]}"><span class="city-text"><strong>{esc(c["name"])}</strong>'
            f'<span class="sub">{esc(self._local(c["utc_offset_min"]).strftime("%a"))} · {esc(self._difference(c["utc_offset_min"]))}'
            f'</span></span><span class="city-time">{self._local(c["utc_offset_min"]).strftime("%H:%M")}</span>'
            f'<form method="post" action="/world/{c["id"]}/delete" class="inline"><button type="submit" class="icon-btn" '
            f'aria-label="Remove {esc(c["name"])}">{icon("close")}</button></form></li>' for c in cities)
        body = (app_bar("World clock") + f'<section class="now" aria-label="Local time"><p class="big-time">{now:%H:%M}</p>'
                f'<p class="sub">{now:%a, %-d %B}</p></section>'
                + (f'<ul class="cities">{rows}</ul>' if cities else '<p class="empty">No cities</p>')
                + f'<a class="fab" href="/world/add" aria-label="Add city">{icon("add")}</a>')
        return self._page("World clock", body, "World clock")

    async def add_city(self, request: Request) -> Response:
        if request.method == "POST":
            form = await request.form()
            name = str(form.get("city", ""))
            if name in CATALOGUE_BY_NAME:
                country, offset = CATALOGUE_BY_NAME[name]
                self.db.execute("INSERT OR IGNORE INTO cities (name, country, utc_offset_min) VALUES (?, ?, ?)", (name, country, offset))
            return RedirectResponse("/world", status_code=303)
        q = str(self.query(request)["q"] or "")
        have = {c["name"] for c in self.db.all("SELECT name FROM cities")}
        hits = [c for c in CATALOGUE if not q or q.casefold() in f"{c[0]} {c[1]}".casefold()]
        rows = "".join(
            f'<li><form method="post" action="/world/add"><input type="hidden" name="city" value="{esc(name)}">'
            f'<button type="submit" class="pick"{" disabled" if name in have else ""}><span class="city-text"><strong>{esc(name)}'
            f'</strong><span class="sub">{esc(country)}{" · added" if name in have else ""}</span></span>'
            f'<span class="city-time">{self._local(offset).strftime("%H:%M")}</span></button></form></li>'
            for name, country, offset in sorted(hits))
        body = (app_bar("Add city", back="/world")
                + f'<form method="get" action="/world/add" class="search" role="search">{icon("search")}<input type="search" name="q" '
                  f'value="{esc(q)}" placeholder="Search for a city" aria-label="Search for a city"></form>'
                + (f'<ul class="picks">{rows}</ul>' if hits else '<p class="empty">No matching cities</p>'))
        return self._page("Add city", body)

    async def delete_city(self, request: Request) -> Response:
        self.db.execute("DELETE FROM cities WHERE id = ?", (request.path_params["cid"],))
        return RedirectResponse("/world", status_code=303)

    # --- timers ---

    async def timers(self, request: Request) -> Response:
        rows = self.db.all("SELECT * FROM timers ORDER BY id")

        def op(t: dict[str, Any], name: str, label: str, ic: str, cls: str = "") -> str:
            return (f'<form method="post" action="/timers/{t["id"]}/{name}" class="inline"><button type="submit" '
                    f'class="round {cls}" aria-label="{esc(label)} timer {esc(t["label"] or hms(t["duration_s"]))}">{icon(ic)}'
                    f'</button></form>')

        cards = "".join(
            f'<li class="timer {t["state"]}" data-id="{t["id"]}"><div class="timer-head"><span>{esc(t["label"]) or "Timer"}</span>'
            f'<span class="sub">{hms(t["duration_s"])}</span></div><p class="timer-left">{hms(t["remaining_s"])}</p>'
            f'<p class="sub" role="status">{t["state"].capitalize()}</p><div class="timer-ops">'
            + (op(t, "pause", "Pause", "pause", "primary") if t["state"] == "running" else op(t, "start", "Start", "play", "primary"))
            + op(t, "reset", "Reset", "restore") + op(t, "delete", "Delete", "delete") + "</div></li>"
            for t in rows)
        form = ('<form method="post" action="/timers/new" class="sheet new-timer" aria-label="New timer"><h2>New timer</h2>'
                '<div class="hms"><label>Hours<input type="number" name="h" min="0" max="99" value="0" inputmode="numeric"></label>'
                '<label>Minutes<input type="number" name="m" min="0" max="59" value="5" inputmode="numeric"></label>'
                '<label>Seconds<input type="number" name="s" min="0" max="59" value="0" inputmode="numeric"></label></div>'
                f'<label class="row-field">{icon("text")}<span class="sr-only">Timer label</span><input type="text" name="label" '
                'placeholder="Add label" maxlength="40"></label>'
                '<div class="sheet-actions"><button type="submit" class="filled-btn">Start</button></div></form>')
        body = app_bar("Timer") + (f'<ul class="cards timers">{cards}</ul>' if rows else "") + form
        return self._page("Timers", body, "Timer")

    async def new_timer(self, request: Request) -> Response:
        form = await request.form()
        parts = []
        for key, top in (("h", 99), ("m", 59), ("s", 59)):
            raw = str(form.get(key, "0")).strip() or "0"
            parts.append(min(int(raw), top) if raw.isdigit() else -1)
        total = parts[0] * 3600 + parts[1] * 60 + parts[2]
        if min(parts) >= 0 and total > 0:
            label = " ".join(str(form.get("label", "")).split())[:40]
            self.db.execute("INSERT INTO timers (label, duration_s, remaining_s, state) VALUES (?, ?, ?, 'running')",
                            (label, total, total))
        return RedirectResponse("/timers", status_code=303)

    async def timer_op(self, request: Request) -> Response:
        tid, op = request.path_params["tid"], request.path_params["op"]
        if op == "start":
            self.db.execute("UPDATE timers SET state = 'running' WHERE id = ?", (tid,))
        elif op == "pause":
            self.db.execute("UPDATE timers SET state = 'paused' WHERE id = ? AND state = 'running'", (tid,))
        elif op == "reset":
            self.db.execute("UPDATE timers SET state = 'ready', remaining_s = duration_s WHERE id = ?", (tid,))
        elif op == "delete":
            self.db.execute("DELETE FROM timers WHERE id = ?", (tid,))
        return RedirectResponse("/timers", status_code=303)


APP = ClockApp
