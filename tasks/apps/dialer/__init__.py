"""Dialer: a phone app with a keypad, a call screen, the call log and favourites.

Pages (bottom navigation as a phone's Phone app has it): `/favourites` (favourite people
as large tiles that call), `/recents?filter=all|missed|incoming|outgoing` (the call log by
day; opening it marks missed calls seen; Clear call history asks first), `/contacts`
(everyone, searchable, a star per person), `/keypad?number=` (the dial pad; matching
contacts are suggested). Calling (`POST /call`, from the keypad, a log entry, a tile or a
contact) writes an outgoing call to the log and opens `/call/{id}`, the call screen,
where Mute and Speaker toggle and End call ends it. Every change is written before the
response; missed calls not yet seen are the app's notifications.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule
from cua.tasks.apps.activity import added_row
from cua.tasks.apps.base import AppDB, WebApp, esc
from cua.tasks.apps.phone import Notification, app_bar, bottom_nav, confirm_dialog, icon, icon_button, phone_page
from cua.tasks.apps.phone_people import digits, phone_book, same_number

SCHEMA = """
CREATE TABLE contacts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    number TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('mobile','home','work')),
    favourite INTEGER NOT NULL DEFAULT 0 CHECK (favourite IN (0, 1))
);
CREATE TABLE calls (
    id INTEGER PRIMARY KEY,
    number TEXT NOT NULL,
    contact_id INTEGER REFERENCES contacts(id) ON DELETE SET NULL,
    direction TEXT NOT NULL CHECK (direction IN ('incoming','outgoing','missed')),
    started_at TEXT NOT NULL,
    duration_s INTEGER NOT NULL DEFAULT 0,
    seen INTEGER NOT NULL DEFAULT 1 CHECK (seen IN (0, 1)),
    status TEXT NOT NULL DEFAULT 'ended' CHECK (status IN ('active','ended')),
    muted INTEGER NOT NULL DEFAULT 0 CHECK (muted IN (0, 1)),
    speaker INTEGER NOT NULL DEFAULT 0 CHECK (speaker IN (0, 1))
);
"""

FILTERS = ("all", "missed", "incoming", "outgoing")
NAV = [("Favourites", "/favourites", "star"), ("Recents", "/recents", "history"), ("Contacts", "/contacts", "person"),
       ("Keypad", "/keypad", "dialpad")]
KEYS = [("1", ""), ("2", "ABC"), ("3", "DEF"), ("4", "GHI"), ("5", "JKL"), ("6", "MNO"), ("7", "PQRS"), ("8", "TUV"),
        ("9", "WXYZ"), ("*", ""), ("0", "+"), ("#", "")]
ALLOWED = set("0123456789+*# ()-.")
AVATAR_COLOURS = ["#1b6ef3", "#d93025", "#188038", "#e37400", "#a142f4", "#12858a", "#c5221f", "#5f6368"]


def avatar(name: str, ident: int) -> str:
    initial = next((ch for ch in name if ch.isalpha()), "#").upper()
    return (f'<span class="avatar" style="background:{AVATAR_COLOURS[ident % len(AVATAR_COLOURS)]}" aria-hidden="true">'
            f'{esc(initial)}</span>')


class DialerApp(WebApp):
    name = "dialer"
    title = "Phone"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    assigned = {"calls": ("contact_id", "direction", "duration_s", "seen", "status")}
    derived = {"calls.name": ("calls.contact_id",)}
    query_params = {"filter": QueryRule(default="all", choices=FILTERS), "number": QueryRule(strip=True),
                    "q": QueryRule(strip=True)}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        people = phone_book(seed)
        for p in people:
            db.execute("INSERT INTO contacts (name, number, label) VALUES (?, ?, ?)", (p.name, p.number, p.label))
        for fav in rng.sample(range(1, 41), 8):
            db.execute("UPDATE contacts SET favourite = 1 WHERE id = ?", (fav,))
        frequent = rng.sample(range(1, len(people) + 1), 30)  # a few people call often
        when = self.now()
        rows: list[tuple[str, int | None, str, str, int]] = []
        for _ in range(320):
            when -= dt.timedelta(minutes=rng.randint(20, 420))
            cid: int | None = None
            if rng.random() < 0.12:
                number = f"+44 20 7946 {rng.randint(0, 9999):04d}"  # unknown callers
            else:
                cid = rng.choice(frequent) if rng.random() < 0.7 else rng.randint(1, len(people))
                number = people[cid - 1].number
            direction = rng.choices(["incoming", "outgoing", "missed"], [4, 5, 2])[0]
            duration = 0 if direction == "missed" else rng.choice([rng.randint(5, 90), rng.randint(60, 2400)])
            rows.append((number, cid, direction, when.strftime("%Y-%m-%d %H:%M"), duration))
        latest_missed = [i for i, row in enumerate(rows) if row[2] == "missed"][:3]  # new since the log was last opened
        rows.reverse()  # oldest first: ids grow with time
        for i, (number, who, direction, started, duration) in enumerate(rows):
            seen = 0 if len(rows) - 1 - i in latest_missed else 1
            db.execute("INSERT INTO calls (number, contact_id, direction, started_at, duration_s, seen) VALUES (?,?,?,?,?,?)",
                       (number, who, direction, started, duration, seen))

    def state(self) -> dict[str, Any]:
        calls = self.db.all("SELECT c.*, k.name AS name FROM calls c LEFT JOIN contacts k ON k.id = c.contact_id ORDER BY c.id")
        notes: list[Notification] = [
            {"id": f"missed-{c['id']}", "app": self.name, "title": "Missed call", "text": c["name"] or c["number"],
             "time": c["started_at"], "link": "/recents?filter=missed"}
            for c in calls if c["direction"] == "missed" and not c["seen"]]
        return {"contacts": self.db.all("SELECT * FROM contacts ORDER BY id"), "calls": calls, "notifications": notes}

    def irreversible(self, change: Change) -> str | None:
        """A call placed has rung the other phone: clearing it from the log does not take it back."""
        row = added_row(change, "calls")
        return "call" if row is not None and row.get("direction") == "outgoing" else None

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", lambda r: RedirectResponse("/keypad", status_code=302)),
            Route("/keypad", self.keypad),
            Route("/favourites", self.favourites),
            Route("/recents", self.recents),
            Route("/recents/clear", self.clear, methods=["POST"]),
            Route("/recents/{call_id:int}/delete", self.delete_call, methods=["POST"]),
            Route("/contacts", self.contacts),
            Route("/contacts/{cid:int}/favourite", self.favourite, methods=["POST"]),
            Route("/call", self.call, methods=["POST"]),
            Route("/call/{call_id:int}", self.call_screen),
            Route("/call/{call_id:int}/{what:str}", self.call_control, methods=["POST"]),
        ]

    def _page(self, title: str, body: str, active: str = "") -> Response:
        nav = bottom_nav(NAV, active, label="Phone") if active else ""
        return phone_page(self, title, body, nav=nav, body_class="with-nav" if active else "in-call",
                          theme="#f1f4fb", scripts=("/static/app/dialer.js",))

    def _contact_for(self, number: str) -> dict[str, Any] | None:
        return next((c for c in self.db.all("SELECT * FROM contacts ORDER BY id") if same_number(c["number"], number)), None)

    @staticmethod
    def _call_form(number: str, label: str, cls: str = "call-btn") -> str:
        return (f'<form method="post" action="/call" class="inline"><input type="hidden" name="number" value="{esc(number)}">'
                f'<button type="submit" class="icon-btn {cls}" aria-label="{esc(label)}">{icon("phone")}</button></form>')

    # --- keypad and calls ---

    async def keypad(self, request: Request) -> Response:
        number = str(self.query(request)["number"] or "")
        want = digits(number).lstrip("+")
        suggestions = ""
        if len(want) >= 3:
            hits = [c for c in self.db.all("SELECT * FROM contacts ORDER BY name") if want in digits(c["number"])][:3]
            suggestions = "".join(
                f'<li class="suggestion">{avatar(c["name"], c["id"])}<span class="who"><strong>{esc(c["name"])}</strong>'
                f'<span class="sub">{esc(c["number"])}</span></span>{self._call_form(c["number"], "Call " + c["name"])}</li>'
                for c in hits)
        keys = "".join(
            f'<button type="button" class="key" data-key="{esc(k)}" aria-label="{esc(k)}"><span class="digit">{esc(k)}</span>'
            f'<span class="letters" aria-hidden="true">{esc(letters)}</span></button>' for k, letters in KEYS)
        body = (f'<h1 class="sr-only">Keypad</h1><ul class="suggestions" aria-label="Matching contacts">{suggestions}</ul>'
                '<form method="post" action="/call" class="dialpad" id="dialpad">'
                f'<div class="display"><input type="tel" name="number" id="number" value="{esc(number)}" aria-label="Phone number" '
                'inputmode="tel" autocomplete="off">'
                f'<button type="button" class="icon-btn" id="backspace" aria-label="Backspace">{icon("backspace")}</button></div>'
                f'<div class="keys" role="group" aria-label="Dial pad">{keys}</div>'
                f'<button type="submit" class="dial" id="dial" aria-label="Call">{icon("phone")}</button></form>')
        return self._page("Keypad", body, "Keypad")

    async def call(self, request: Request) -> Response:
        form = await request.form()
        number = " ".join(str(form.get("number", "")).split())[:32]
        if not digits(number).lstrip("+") or not set(number) <= ALLOWED:
            return RedirectResponse("/keypad?" + urlencode({"number": number}) if number else "/keypad", status_code=303)
        self.db.execute("UPDATE calls SET status = 'ended' WHERE status = 'active'")  # one call at a time
        contact = self._contact_for(number)
        call_id = self.db.insert(
            "INSERT INTO calls (number, contact_id, direction, started_at, status) VALUES (?, ?, 'outgoing', ?, 'active')",
            (contact["number"] if contact else number, contact["id"] if contact else None, self.now().strftime("%Y-%m-%d %H:%M")))
        return RedirectResponse(f"/call/{call_id}", status_code=303)

    async def call_screen(self, request: Request) -> Response:
        c = self.db.one("SELECT c.*, k.name FROM calls c LEFT JOIN contacts k ON k.id = c.contact_id WHERE c.id = ?",
                        (request.path_params["call_id"],))
        if c is None:
            return RedirectResponse("/recents", status_code=303)
        if c["status"] != "active":
            return RedirectResponse("/recents", status_code=303)
        who = c["name"] or c["number"]

        def toggle(what: str, label: str, ic: str, on: bool) -> str:
            return (f'<form method="post" action="/call/{c["id"]}/{what}" class="inline"><button type="submit" '
                    f'class="round{" on" if on else ""}" aria-pressed="{"true" if on else "false"}" id="{what}">'
                    f'{icon(ic)}<span>{esc(label)}</span></button></form>')

        body = (f'<section class="call" aria-label="Call with {esc(who)}"><div class="call-who">'
                f'{avatar(who, c["contact_id"] or 0)}<h1>{esc(who)}</h1>'
                f'<p class="sub">{esc(c["number"]) if c["name"] else "Mobile"}</p><p class="status" role="status">Calling…</p></div>'
                f'<div class="call-controls">{toggle("mute", "Mute", "mic_off", bool(c["muted"]))}'
                f'{toggle("speaker", "Speaker", "speaker", bool(c["speaker"]))}</div>'
                f'<form method="post" action="/call/{c["id"]}/end" class="end-form"><button type="submit" class="end" id="end-call" '
                f'aria-label="End call">{icon("call_end")}</button></form></section>')
        return self._page("Call", body)

    async def call_control(self, request: Request) -> Response:
        call_id, what = request.path_params["call_id"], request.path_params["what"]
        active = self.db.one("SELECT id FROM calls WHERE id = ? AND status = 'active'", (call_id,))
        if active is None:
            return RedirectResponse("/recents", status_code=303)
        if what == "end":
            self.db.execute("UPDATE calls SET status = 'ended' WHERE id = ?", (call_id,))
            return RedirectResponse("/recents", status_code=303)
        column = {"mute": "muted", "speaker": "speaker"}.get(what)
        if column is not None:
            self.db.execute(f"UPDATE calls SET {column} = 1 - {column} WHERE id = ?", (call_id,))
        return RedirectResponse(f"/call/{call_id}", status_code=303)

    # --- the call log ---

    async def recents(self, request: Request) -> Response:
        flt = str(self.query(request)["filter"])
        self.db.execute("UPDATE calls SET seen = 1 WHERE direction = 'missed' AND seen = 0")  # as a phone clears them
        where = "" if flt == "all" else "WHERE c.direction = ?"
        calls = self.db.all(f"SELECT c.*, k.name FROM calls c LEFT JOIN contacts k ON k.id = c.contact_id {where} "
                            "ORDER BY c.started_at DESC, c.id DESC LIMIT 200", () if flt == "all" else (flt,))
        chips = "".join(
            f'<a class="chip{" on" if f == flt else ""}" href="/recents{"" if f == "all" else "?filter=" + f}"'
            f'{" aria-current=page" if f == flt else ""}>{f.capitalize()}</a>' for f in FILTERS)
        out, day = [], ""
        today = self.now().date()
        dir_icon = {"incoming": "call_received", "outgoing": "call_made", "missed": "call_missed"}
        for c in calls:
            d = dt.date.fromisoformat(c["started_at"][:10])
            label = "Today" if d == today else "Yesterday" if d == today - dt.timedelta(days=1) else d.strftime("%a %-d %b")
            if label != day:
                out.append(f'<li class="day" role="presentation"><h2>{esc(label)}</h2></li>')
                day = label
            who = c["name"] or c["number"]
            mins, secs = divmod(c["duration_s"], 60)
            length = f" · {mins} min {secs} s" if c["duration_s"] else ""
            out.append(
                f'<li class="entry {c["direction"]}" data-id="{c["id"]}">{avatar(who, c["contact_id"] or 0)}'
                f'<span class="who"><strong>{esc(who)}</strong><span class="sub">{icon(dir_icon[c["direction"]], "dir")}'
                f'{c["direction"].capitalize()} · {c["started_at"][11:]}{length}</span></span>'
                f'{self._call_form(c["number"], "Call back " + who)}'
                f'<form method="post" action="/recents/{c["id"]}/delete" class="inline"><input type="hidden" name="filter" '
                f'value="{flt}"><button type="submit" class="icon-btn subtle" aria-label="Delete call with {esc(who)} at '
                f'{c["started_at"]}">{icon("delete")}</button></form></li>')
        listing = f'<ul class="log">{"".join(out)}</ul>' if calls else '<p class="empty">No calls</p>'
        clear = icon_button("delete", "Clear call history", attrs='data-dialog="clear-dialog"')
        body = (app_bar("Recents", actions=clear) + f'<nav class="chips" aria-label="Filter calls">{chips}</nav>{listing}'
                + confirm_dialog("clear-dialog", "Clear call history?", "All calls will be deleted from your call history.",
                                 "/recents/clear", "Clear"))
        return self._page("Recents", body, "Recents")

    async def clear(self, request: Request) -> Response:
        self.db.execute("DELETE FROM calls WHERE status = 'ended'")
        return RedirectResponse("/recents", status_code=303)

    async def delete_call(self, request: Request) -> Response:
        form = await request.form()
        self.db.execute("DELETE FROM calls WHERE id = ? AND status = 'ended'", (request.path_params["call_id"],))
        flt = str(form.get("filter", "all"))
        return RedirectResponse("/recents" + (f"?filter={flt}" if flt in FILTERS[1:] else ""), status_code=303)

    # --- favourites and contacts ---

    async def favourites(self, request: Request) -> Response:
        favs = self.db.all("SELECT * FROM contacts WHERE favourite = 1 ORDER BY name")
        tiles = "".join(
            f'<li class="tile"><form method="post" action="/call"><input type="hidden" name="number" value="{esc(c["number"])}">'
            f'<button type="submit" class="tile-btn" aria-label="Call {esc(c["name"])}">{avatar(c["name"], c["id"])}'
            f'<span class="tile-name">{esc(c["name"])}</span><span class="sub">{esc(c["label"].capitalize())}</span></button>'
            f'</form></li>' for c in favs)
        add = icon_button("add", "Add a favourite", href="/contacts")
        listing = (f'<ul class="tiles">{tiles}</ul>' if favs else
                   '<p class="empty">No favourites yet. Star people in Contacts to see them here.</p>')
        return self._page("Favourites", app_bar("Favourites", actions=add) + listing, "Favourites")

    async def contacts(self, request: Request) -> Response:
        q = str(self.query(request)["q"] or "")
        rows = self.db.all("SELECT * FROM contacts ORDER BY name COLLATE NOCASE")
        if q:
            low, want = q.casefold(), digits(q).lstrip("+")
            rows = [c for c in rows if low in c["name"].casefold() or (want and want in digits(c["number"]))]
        out, letter = [], ""
        for c in rows:
            first = c["name"][:1].upper()
            if first != letter:
                out.append(f'<li class="letter" role="presentation"><h2>{esc(first)}</h2></li>')
                letter = first
            star = "star" if c["favourite"] else "star_outline"
            out.append(
                f'<li class="entry" data-id="{c["id"]}">{avatar(c["name"], c["id"])}<span class="who"><strong>{esc(c["name"])}'
                f'</strong><span class="sub">{esc(c["label"].capitalize())} · {esc(c["number"])}</span></span>'
                f'<form method="post" action="/contacts/{c["id"]}/favourite" class="inline"><input type="hidden" name="q" '
                f'value="{esc(q)}"><button type="submit" class="icon-btn star{" on" if c["favourite"] else ""}" '
                f'aria-pressed="{"true" if c["favourite"] else "false"}" aria-label="Favourite {esc(c["name"])}">'
                f'{icon(star)}</button></form>{self._call_form(c["number"], "Call " + c["name"])}</li>')
        search = (f'<form method="get" action="/contacts" class="search" role="search">{icon("search")}'
                  f'<input type="search" name="q" value="{esc(q)}" placeholder="Search contacts" aria-label="Search contacts">'
                  '</form>')
        listing = f'<ul class="log">{"".join(out)}</ul>' if rows else '<p class="empty">No contacts found</p>'
        return self._page("Contacts", app_bar("Contacts") + search + listing, "Contacts")

    async def favourite(self, request: Request) -> Response:
        form = await request.form()
        self.db.execute("UPDATE contacts SET favourite = 1 - favourite WHERE id = ?", (request.path_params["cid"],))
        q = str(form.get("q", "")).strip()
        return RedirectResponse("/contacts" + ("?" + urlencode({"q": q}) if q else ""), status_code=303)


APP = DialerApp
