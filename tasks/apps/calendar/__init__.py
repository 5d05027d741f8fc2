"""Calendar: month and week views over ~200 events, recurring series, invitations.

Pages: `/month/{YYYY-MM}` (a 6-week grid; recurring events expanded), `/week/{YYYY-MM-DD}`
(hour grid for the week holding that day), `/day/{YYYY-MM-DD}` (the agenda of one day),
`/event/{id}` (details, attendees and their answers, RSVP when someone else organizes
it, delete with a confirm), `/event/new` and `/event/{id}/edit` (a date-picker widget, a
time-picker widget, recurrence none/daily/weekly with an end date, invitees),
`/invites` (invitations waiting for my answer). Forms post and redirect.

Method evidence (`cua.tasks.apps.activity.used_method`): an event's date, when set (a new
event, or an edit that changes it), is `date_picker` where the date picker made the value
and `form` where it was typed or came prefilled (a day's "+" link).
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
from cua.tasks.apps.activity import used_method
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.calendar.locale_de import DE, SHORT_DAYS, long_day, month_year, short_date
from cua.tasks.apps.calendar.seed import seed_calendar
from cua.tasks.apps.i18n import format_day
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE);
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    date TEXT NOT NULL,
    start TEXT,
    end TEXT,
    all_day INTEGER NOT NULL DEFAULT 0,
    location TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    calendar TEXT NOT NULL DEFAULT 'Personal' CHECK (calendar IN ('Work','Personal','Family')),
    recur TEXT NOT NULL DEFAULT 'none' CHECK (recur IN ('none','daily','weekly')),
    recur_until TEXT,
    organizer_id INTEGER REFERENCES people(id),
    my_status TEXT NOT NULL DEFAULT 'accepted' CHECK (my_status IN ('accepted','declined','pending'))
);
CREATE TABLE attendees (
    event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    person_id INTEGER NOT NULL REFERENCES people(id),
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('accepted','declined','pending')),
    PRIMARY KEY (event_id, person_id)
);
"""

CALENDARS = {"Work": "#1f6feb", "Personal": "#2da44e", "Family": "#bf3989"}
TIME_RE = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
DAY_START, DAY_END = 7, 22
HOUR_PX = 40


def _mini_month(today: dt.date, locale: str) -> str:
    """The sidebar's small month, as calendar apps show it: each day links to its day view.
    Its links are out of the tab order and named by ISO date, so that the main grid's
    day links stay the only ones named by weekday and day."""
    first = today.replace(day=1)
    start = first - dt.timedelta(days=first.weekday())
    rows = []
    for week in range(6):
        cells = []
        for i in range(7):
            d = start + dt.timedelta(days=7 * week + i)
            cls = "mm-day" + (" mm-other" if d.month != first.month else "") + (" mm-today" if d == today else "")
            cells.append(f'<td><a class="{cls}" href="/day/{d.isoformat()}" tabindex="-1" aria-label="{d.isoformat()}">{d.day}</a></td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    heads = "".join(f'<th scope="col" abbr="{n}">{n[0]}</th>' for n in SHORT_DAYS[locale])
    return (f'<table class="minimonth"><caption>{month_year(first, locale)}</caption>'
            f'<thead><tr>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _date(value: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value)
    except (TypeError, ValueError):
        return None


def normalize_time(value: str) -> str:
    """Accept the ways people type times ("9:30", "0930", "930") as HH:MM; leave the rest for validation."""
    m = re.fullmatch(r"(\d{1,2}):?(\d{2})", value.strip())
    return f"{int(m.group(1)):02d}:{m.group(2)}" if m else value.strip()


def occurrences(event: dict[str, Any], start: dt.date, end: dt.date) -> list[dt.date]:
    """Dates in [start, end] on which an event (or its daily/weekly series) happens."""
    first = dt.date.fromisoformat(event["date"])
    if event["recur"] == "none":
        return [first] if start <= first <= end else []
    step = dt.timedelta(days=1 if event["recur"] == "daily" else 7)
    last = min(end, dt.date.fromisoformat(event["recur_until"])) if event["recur_until"] else end
    day = first
    if day < start:
        skip = (start - day).days // step.days
        day += step * skip
        if day < start:
            day += step
    out = []
    while day <= last:
        out.append(day)
        day += step
    return out


class CalendarApp(WebApp):
    name = "calendar"
    title = "Calendar"
    schema = SCHEMA
    derived = {"events.organizer": ("events.organizer_id",),
               "events.occurrences": ("events.date", "events.recur", "events.recur_until"),
               "events.attendees": ("attendees.person_id", "attendees.status")}
    records = {"events.attendees": ("person_id", "status")}  # a guest's name and email are the person's
    assigned = {"events": ("organizer_id", "my_status"), "attendees": ("status",)}
    static_dir = Path(__file__).parent / "static"
    query_params = {"date": QueryRule()}
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_calendar(db, rng, self.now())

    def t(self, text: str) -> str:
        if self.variant.locale == "de-DE" and text in DE:
            return DE[text]
        return super().t(text)

    def _iso(self, iso: str) -> str:
        """A stored date as the locale writes it in lists and details (en-US: ISO, as stored; de-DE: `03.03.2026`)."""
        day = _date(iso)
        if day is None or self.variant.locale == "en-US":
            return iso
        return format_day(day, self.variant.locale, with_year=True)

    def state(self) -> dict[str, Any]:
        att: dict[int, list[dict[str, Any]]] = {}
        for a in self.db.all("SELECT a.event_id, p.id, p.name, p.email, a.status FROM attendees a JOIN people p ON p.id = a.person_id "
                             "ORDER BY a.event_id, p.name"):
            att.setdefault(a["event_id"], []).append({"person_id": a["id"], "name": a["name"], "email": a["email"], "status": a["status"]})
        events = []
        window = (self.now().date().replace(day=1) - dt.timedelta(days=31), self.now().date() + dt.timedelta(days=92))
        for e in self.db.all("SELECT e.*, p.name AS organizer FROM events e LEFT JOIN people p ON p.id = e.organizer_id ORDER BY e.id"):
            events.append({**e, "all_day": bool(e["all_day"]), "organizer": e["organizer"] or "me",
                           "attendees": att.get(e["id"], []),
                           "occurrences": [d.isoformat() for d in occurrences(e, *window)] if e["recur"] != "none" else [e["date"]]})
        return {"today": self.now().date().isoformat(), "people": self.db.all("SELECT * FROM people ORDER BY id"), "events": events}

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", lambda r: RedirectResponse(f"/month/{self.now():%Y-%m}", status_code=302)),
            Route("/month/{ym}", self.month),
            Route("/week/{day}", self.week),
            Route("/day/{day}", self.day),
            Route("/invites", self.invites),
            Route("/event/new", self.new_event, methods=["GET", "POST"]),
            Route("/event/{eid:int}", self.event),
            Route("/event/{eid:int}/edit", self.edit_event, methods=["GET", "POST"]),
            Route("/event/{eid:int}/delete", self.delete_event, methods=["POST"]),
            Route("/event/{eid:int}/rsvp", self.rsvp, methods=["POST"]),
        ]

    def _page(self, title: str, body: str) -> Response:
        pending = self.db.scalar("SELECT COUNT(*) FROM events WHERE organizer_id IS NOT NULL AND my_status = 'pending'")
        today = self.now().date()
        body = (f'<div class="cal-layout"><aside class="cal-side" aria-label="{self.t("This month")}" data-region="this-month">'
                f'{_mini_month(today, self.variant.locale)}</aside><section class="cal-main">{body}</section></div>')
        return html_page(self, title, body, nav=[
            ("Month", f"/month/{today:%Y-%m}"), ("Week", f"/week/{today.isoformat()}"), ("Day", f"/day/{today.isoformat()}"),
            (self.t("Invitations ({n})").format(n=pending), "/invites"), ("New event", "/event/new")],
            scripts=["/static/cua/modal.js", "/static/cua/datepicker.js", "/static/app/pickers.js", "/static/app/calendar.js"], head=f'<meta name="today" content="{today.isoformat()}">')

    def _in_range(self, start: dt.date, end: dt.date) -> dict[dt.date, list[dict[str, Any]]]:
        by_day: dict[dt.date, list[dict[str, Any]]] = {}
        rows = self.db.all(
            "SELECT * FROM events WHERE (recur = 'none' AND date BETWEEN ? AND ?) OR "
            "(recur != 'none' AND date <= ? AND (recur_until IS NULL OR recur_until >= ?))",
            (start.isoformat(), end.isoformat(), end.isoformat(), start.isoformat()))
        for e in rows:
            for d in occurrences(e, start, end):
                by_day.setdefault(d, []).append(e)
        for events in by_day.values():
            events.sort(key=lambda e: (not e["all_day"], e["start"] or "", e["title"]))
        return by_day

    def _chip(self, e: dict[str, Any], d: dt.date) -> str:
        when = "" if e["all_day"] else f'<span class="t">{e["start"]}</span> '
        cls = " declined" if e["my_status"] == "declined" else " pending" if e["my_status"] == "pending" else ""
        return (f'<a class="ev{cls}" href="/event/{e["id"]}" style="--c:{CALENDARS[e["calendar"]]}" data-id="{e["id"]}" '
                f'data-date="{d.isoformat()}" title="{esc(e["title"])}">{when}{esc(e["title"])}{" ↻" if e["recur"] != "none" else ""}</a>')

    async def month(self, request: Request) -> Response:
        m = re.fullmatch(r"(\d{4})-(\d{2})", request.path_params["ym"])
        if not m or not 1 <= int(m.group(2)) <= 12:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('Use /month/YYYY-MM.')}</div>")
        first = dt.date(int(m.group(1)), int(m.group(2)), 1)
        grid_start = first - dt.timedelta(days=first.weekday())
        grid_end = grid_start + dt.timedelta(days=41)
        by_day = self._in_range(grid_start, grid_end)
        prev_m = (first - dt.timedelta(days=1)).replace(day=1)
        next_m = (first + dt.timedelta(days=32)).replace(day=1)
        today = self.now().date()
        t, loc = self.t, self.variant.locale
        cells = []
        for i in range(42):
            d = grid_start + dt.timedelta(days=i)
            events = by_day.get(d, [])
            shown = "".join(self._chip(e, d) for e in events[:3])
            more = f'<a class="more" href="/day/{d.isoformat()}">{t("+{n} more").format(n=len(events) - 3)}</a>' if len(events) > 3 else ""
            cls = "day" + (" other" if d.month != first.month else "") + (" today" if d == today else "")
            cells.append(f'<div class="{cls}" data-date="{d.isoformat()}"><div class="dhead"><a class="dnum" href="/day/{d.isoformat()}" '
                         f'aria-label="{self._day_label(d)}">{d.day}</a><a class="add" href="/event/new?date={d.isoformat()}" '
                         f'data-action="new-on-day" aria-label="{t("New event on {day}").format(day=self._iso(d.isoformat()))}">+</a></div>'
                         f'{shown}{more}</div>')
        heads = "".join(f"<div class='wd'>{n}</div>" for n in SHORT_DAYS[loc])
        body = (f'<div class="calbar"><a class="button" href="/month/{prev_m:%Y-%m}" aria-label="{t("Previous month")}" data-action="prev">‹</a>'
                f'<a class="button" href="/month/{today:%Y-%m}" data-action="today">{t("Today")}</a>'
                f'<a class="button" href="/month/{next_m:%Y-%m}" aria-label="{t("Next month")}" data-action="next">›</a>'
                f'<h1>{month_year(first, loc)}</h1>'
                f'<a class="button" href="/week/{first.isoformat()}" data-action="week-view">{t("Week view")}</a>{self._legend()}</div>'
                f'<div class="month">{heads}{"".join(cells)}</div>')
        return self._page(month_year(first, loc), body)

    def _day_label(self, d: dt.date) -> str:
        """A grid day's name: `Tuesday March 3` / `Dienstag, 3. März`."""
        if self.variant.locale == "en-US":
            return f"{d:%A %B} {d.day}"
        return long_day(d, self.variant.locale).rsplit(" ", 1)[0]

    def _legend(self) -> str:
        return '<span class="legend">' + "".join(f'<span data-calendar="{n}"><i style="background:{c}"></i>{self.t(n)}</span>'
                                                 for n, c in CALENDARS.items()) + "</span>"

    async def week(self, request: Request) -> Response:
        day = _date(request.path_params["day"])
        if day is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('Use /week/YYYY-MM-DD.')}</div>")
        start = day - dt.timedelta(days=day.weekday())
        end = start + dt.timedelta(days=6)
        by_day = self._in_range(start, end)
        today = self.now().date()
        hours = "".join(f'<div class="hour" style="top:{(h - DAY_START) * HOUR_PX}px">{h:02d}:00</div>' for h in range(DAY_START, DAY_END))
        cols = []
        for i in range(7):
            d = start + dt.timedelta(days=i)
            events = by_day.get(d, [])
            all_day = "".join(self._chip(e, d) for e in events if e["all_day"])
            timed = []
            spans = []
            for e in events:
                if e["all_day"]:
                    continue
                sh, sm = map(int, e["start"].split(":"))
                eh, em = map(int, e["end"].split(":"))
                spans.append((sh * 60 + sm, eh * 60 + em, e))
            lane_ends: list[int] = []
            placed = []
            for s_min, e_min, e in spans:
                lane = next((i for i, end_min in enumerate(lane_ends) if end_min <= s_min), len(lane_ends))
                if lane == len(lane_ends):
                    lane_ends.append(e_min)
                else:
                    lane_ends[lane] = e_min
                placed.append((s_min, e_min, lane, e))
            lanes = max(1, len(lane_ends))
            for s_min, e_min, lane, e in placed:
                top = max(0, (s_min - DAY_START * 60) * HOUR_PX // 60)
                height = max(18, (e_min - s_min) * HOUR_PX // 60)
                cls = " declined" if e["my_status"] == "declined" else " pending" if e["my_status"] == "pending" else ""
                timed.append(f'<a class="wev{cls}" href="/event/{e["id"]}" data-id="{e["id"]}" data-date="{d.isoformat()}" '
                             f'style="top:{top}px;height:{height}px;left:calc({lane * 100 / lanes:.2f}% + 2px);'
                             f'width:calc({100 / lanes:.2f}% - 4px);--c:{CALENDARS[e["calendar"]]}">'
                             f'<b>{e["start"]}–{e["end"]}</b> {esc(e["title"])}</a>')
            cols.append(f'<div class="wcol{" today" if d == today else ""}" data-date="{d.isoformat()}">'
                        f'<div class="whead"><a href="/day/{d.isoformat()}">{SHORT_DAYS[self.variant.locale][d.weekday()]} {d.day}</a></div>'
                        f'<div class="allday">{all_day}</div>'
                        f'<div class="wbody" style="height:{(DAY_END - DAY_START) * HOUR_PX}px" data-date="{d.isoformat()}">{"".join(timed)}</div></div>')
        t = self.t
        body = (f'<div class="calbar"><a class="button" href="/week/{(start - dt.timedelta(days=7)).isoformat()}" '
                f'aria-label="{t("Previous week")}" data-action="prev">‹</a>'
                f'<a class="button" href="/week/{today.isoformat()}" data-action="today">{t("Today")}</a>'
                f'<a class="button" href="/week/{(start + dt.timedelta(days=7)).isoformat()}" aria-label="{t("Next week")}" data-action="next">›</a>'
                f'<h1>{t("Week of {day}").format(day=short_date(start, self.variant.locale))}</h1>'
                f'<a class="button" href="/month/{start:%Y-%m}" data-action="month-view">{t("Month view")}</a>{self._legend()}</div>'
                f'<div class="week"><div class="hours"><div class="whead"></div><div class="allday"></div>'
                f'<div class="hbody" style="height:{(DAY_END - DAY_START) * HOUR_PX}px">{hours}</div></div>{"".join(cols)}</div>')
        return self._page(t("Week of {day}").format(day=self._iso(start.isoformat())), body)

    async def day(self, request: Request) -> Response:
        d = _date(request.path_params["day"])
        if d is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('Use /day/YYYY-MM-DD.')}</div>")
        events = self._in_range(d, d).get(d, [])
        t = self.t
        rows = "".join(
            f'<tr data-id="{e["id"]}"><td>{t("All day") if e["all_day"] else e["start"] + "–" + e["end"]}</td>'
            f'<td><a href="/event/{e["id"]}">{esc(e["title"])}</a>{" ↻" if e["recur"] != "none" else ""}</td>'
            f'<td>{esc(e["location"])}</td><td data-calendar="{e["calendar"]}">{t(e["calendar"])}</td>'
            f'<td data-status="{e["my_status"]}">{t(e["my_status"])}</td></tr>' for e in events)
        body = (f'<div class="calbar"><a class="button" href="/day/{(d - dt.timedelta(days=1)).isoformat()}" aria-label="{t("Previous day")}" '
                f'data-action="prev">‹</a><a class="button" href="/day/{(d + dt.timedelta(days=1)).isoformat()}" aria-label="{t("Next day")}" '
                f'data-action="next">›</a><h1>{long_day(d, self.variant.locale)}</h1>'
                f'<a class="button primary" href="/event/new?date={d.isoformat()}" data-action="new-event">{t("New event")}</a></div>'
                + (f"<table class='agenda'><thead><tr><th>{t('Time')}</th><th>{t('Event')}</th><th>{t('Where')}</th><th>{t('Calendar')}</th>"
                   f"<th>{t('My answer')}</th></tr></thead><tbody>{rows}</tbody></table>" if rows
                   else f"<p class='card muted'>{t('Nothing scheduled.')}</p>"))
        return self._page(self._iso(d.isoformat()), body)

    async def invites(self, request: Request) -> Response:
        rows = self.db.all("SELECT e.*, p.name AS organizer FROM events e JOIN people p ON p.id = e.organizer_id "
                           "WHERE e.my_status = 'pending' ORDER BY e.date, e.start")
        t = self.t
        trs = "".join(
            f'<tr data-id="{e["id"]}"><td>{self._iso(e["date"])} {e["start"] or t("all day")}</td>'
            f'<td><a href="/event/{e["id"]}">{esc(e["title"])}</a></td>'
            f'<td>{esc(e["organizer"])}</td><td><form method="post" action="/event/{e["id"]}/rsvp" class="row">'
            f'<input type="hidden" name="back" value="/invites">'
            f'<button type="submit" name="status" value="accepted" aria-label="{esc(t("Accept {title}").format(title=e["title"]))}">{t("Accept")}</button>'
            f'<button type="submit" name="status" value="declined" aria-label="{esc(t("Decline {title}").format(title=e["title"]))}">{t("Decline")}</button>'
            '</form></td></tr>' for e in rows)
        body = (f"<h1>{t('Invitations')}</h1>"
                + (f"<table class='invites'><thead><tr><th>{t('When')}</th><th>{t('Event')}</th><th>{t('Organizer')}</th><th>{t('Answer')}</th></tr>"
                   f"</thead><tbody>{trs}</tbody></table>" if rows else f"<p class='card muted'>{t('No invitations waiting.')}</p>"))
        return self._page(t("Invitations"), body)

    async def event(self, request: Request) -> Response:
        e = self.db.one("SELECT e.*, p.name AS organizer FROM events e LEFT JOIN people p ON p.id = e.organizer_id WHERE e.id = ?",
                        (request.path_params["eid"],))
        if e is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such event.')}</div>")
        att = self.db.all("SELECT p.name, p.email, a.status FROM attendees a JOIN people p ON p.id = a.person_id WHERE a.event_id = ? "
                          "ORDER BY p.name", (e["id"],))
        t = self.t
        att_html = "".join(f'<li class="att {a["status"]}" data-status="{a["status"]}">{esc(a["name"])} <span class="muted">&lt;{esc(a["email"])}&gt;</span> '
                           f'<span class="status">{t(a["status"])}</span></li>' for a in att) or f"<li class='muted'>{t('No guests.')}</li>"
        day = self._iso(e["date"])
        when = (t("{day}, all day").format(day=day) if e["all_day"] else f'{day}, {e["start"]}–{e["end"]}')
        rec = ""
        if e["recur"] != "none":
            rec = (f'<p data-recur="{e["recur"]}">{t("Repeats " + e["recur"])}'
                   + (t(" until {day}").format(day=self._iso(e["recur_until"])) if e["recur_until"] else "") + "</p>")
        mine = e["organizer_id"] is None
        if mine:
            question = "Delete “{title}” and all its repeats?" if e["recur"] != "none" else "Delete “{title}”?"
            actions = (f'<p class="row"><a class="button primary" href="/event/{e["id"]}/edit" data-action="edit">{t("Edit")}</a>'
                       f'<button type="button" class="danger" data-open="delete-modal" data-action="delete">{t("Delete…")}</button></p>'
                       f'<div class="modal-backdrop" id="delete-modal" hidden><div class="modal" role="dialog" aria-label="{t("Confirm delete")}">'
                       f'<p>{esc(t(question).format(title=e["title"]))}</p>'
                       f'<form method="post" action="/event/{e["id"]}/delete" class="row">'
                       f'<button class="danger" type="submit" id="delete-confirm">{t("Delete")}</button>'
                       f'<button type="button" data-close="delete-modal" data-action="keep">{t("Cancel")}</button></form></div></div>')
        else:
            going = t("Going? (now: {answer})").format(answer=f"<strong>{t(e['my_status'])}</strong>")
            actions = (f'<form method="post" action="/event/{e["id"]}/rsvp" class="row rsvp" data-status="{e["my_status"]}"><span>{going}</span>'
                       f'<button type="submit" name="status" value="accepted"{" class=primary" if e["my_status"] == "accepted" else ""}>{t("Accept")}</button>'
                       f'<button type="submit" name="status" value="declined"{" class=danger" if e["my_status"] == "declined" else ""}>{t("Decline")}</button></form>')
        back = e["date"][:7] if self.variant.locale == "en-US" else month_year(dt.date.fromisoformat(e["date"]), self.variant.locale)
        body = (f'<article class="card event" data-id="{e["id"]}" style="--c:{CALENDARS[e["calendar"]]}"><h1>{esc(e["title"])}</h1>'
                f'<p class="when">{when}</p>{rec}<p>{t("Calendar:")} <span class="calname" data-calendar="{e["calendar"]}">{t(e["calendar"])}</span></p>'
                + (f'<p>{t("Where:")} {esc(e["location"])}</p>' if e["location"] else "")
                + f'<p>{t("Organizer:")} {esc(e["organizer"] or t("me"))}</p>'
                + (f'<p class="desc">{esc(e["description"])}</p>' if e["description"] else "")
                + f'<h2>{t("Guests")}</h2><ul class="guests">{att_html}</ul>{actions}'
                f'<p><a href="/month/{e["date"][:7]}" data-action="back">{t("Back to {month}").format(month=back)}</a></p></article>')
        return self._page(e["title"], body)

    async def rsvp(self, request: Request) -> Response:
        form = await request.form()
        status = str(form.get("status", ""))
        eid = request.path_params["eid"]
        if status in ("accepted", "declined"):
            self.db.execute("UPDATE events SET my_status = ? WHERE id = ? AND organizer_id IS NOT NULL", (status, eid))
        back = str(form.get("back", ""))
        return RedirectResponse(back if back.startswith("/") else f"/event/{eid}", status_code=303)

    async def delete_event(self, request: Request) -> Response:
        e = self.db.one("SELECT date FROM events WHERE id = ? AND organizer_id IS NULL", (request.path_params["eid"],))
        if e is None:
            return RedirectResponse("/", status_code=303)
        self.db.execute("DELETE FROM events WHERE id = ?", (request.path_params["eid"],))
        return RedirectResponse(f"/month/{e['date'][:7]}", status_code=303)

    # --- create / edit ---

    def _form(self, values: dict[str, Any], guests: set[int], errors: list[str], action: str, heading: str) -> Response:
        t = self.t
        people = self.db.all("SELECT * FROM people ORDER BY name")
        guest_html = "".join(
            f'<label class="guest" data-name="{esc(p["name"].lower())}"><input type="checkbox" name="guests" value="{p["id"]}"'
            f'{" checked" if p["id"] in guests else ""}> {esc(p["name"])}</label>' for p in people)
        cal_opts = "".join(f'<option value="{c}"{" selected" if c == values.get("calendar") else ""}>{t(c)}</option>' for c in CALENDARS)
        rec_opts = "".join(f'<option value="{k}"{" selected" if k == values.get("recur", "none") else ""}>{t(label)}</option>'
                           for k, label in (("none", "Does not repeat"), ("daily", "Daily"), ("weekly", "Weekly")))
        err = "".join(f"<div class='error' role='alert'>{esc(t(x))}</div>" for x in errors)

        def time_field(name: str, label: str) -> str:
            return (f'<label class="field">{t(label)}<span class="timepicker"><input type="text" name="{name}" id="{name}" '
                    f'value="{esc(values.get(name) or "")}" placeholder="HH:MM" autocomplete="off" role="combobox" '
                    f'aria-autocomplete="list" aria-expanded="false" aria-controls="{name}-list" size="6">'
                    f'<ul class="tp-list" id="{name}-list" role="listbox" hidden></ul></span></label>')

        def date_field(name: str, label: str) -> str:
            return (f'<label class="field">{t(label)}<span class="datepicker"><input type="text" name="{name}" id="{name}" '
                    f'value="{esc(values.get(name) or "")}" placeholder="YYYY-MM-DD" autocomplete="off" size="11">'
                    f'<button type="button" class="dp-toggle" aria-label="{t("Choose {label}").format(label=t(label).lower() if self.variant.locale == "en-US" else t(label))}" '
                    'aria-haspopup="dialog">▦</button>'
                    f'<input type="hidden" name="{name}_via" class="dp-via" value="{esc(values.get(name + "_via") or "")}">'
                    f'</span></label>')

        body = (f"<h1>{heading}</h1>{err}<form method='post' action='{action}' class='card evform' id='event-form'>"
                f"<label class='field wide'>{t('Title')} <input type='text' name='title' value='{esc(values.get('title', ''))}' size='50'></label>"
                f"<div class='row'>{date_field('date', 'Date')}"
                f"<label class='field'><span><input type='checkbox' name='all_day' value='1' id='all_day'"
                f"{' checked' if values.get('all_day') else ''}> {t('All day')}</span></label></div>"
                f"<div class='row times'>{time_field('start', 'Start')}{time_field('end', 'End')}</div>"
                f"<div class='row'><label class='field'>{t('Repeat')} <select name='recur' id='recur'>{rec_opts}</select></label>"
                f"{date_field('recur_until', 'Repeat until')}</div>"
                f"<label class='field'>{t('Calendar')} <select name='calendar'>{cal_opts}</select></label>"
                f"<label class='field wide'>{t('Location')} <input type='text' name='location' value='{esc(values.get('location', ''))}' size='50'></label>"
                f"<label class='field wide'>{t('Description')} <textarea name='description' rows='3' cols='60'>{esc(values.get('description', ''))}</textarea></label>"
                f"<fieldset class='guests-box'><legend>{t('Invite guests')}</legend><input type='search' id='guest-filter' "
                f"placeholder='{t('Filter people')}' aria-label='{t('Filter people')}'><div class='guest-list'>{guest_html}</div></fieldset>"
                f"<p class='row'><button type='submit' class='primary' id='save-event'>{t('Save')}</button>"
                f"<a class='button' href='javascript:history.back()' data-action='cancel'>{t('Cancel')}</a></p></form>")
        return self._page(heading, body)

    def _parse(self, form: Any) -> tuple[dict[str, Any], set[int], list[str]]:
        v: dict[str, Any] = {k: str(form.get(k, "") or "").strip()
                             for k in ("title", "date", "start", "end", "recur", "recur_until", "calendar", "location", "description")}
        v["all_day"] = bool(form.get("all_day"))
        for key in ("date_via", "recur_until_via"):  # set by the date picker's script (method evidence)
            v[key] = "date_picker" if form.get(key) == "date_picker" else ""
        for key in ("start", "end"):
            v[key] = normalize_time(v[key])
        guests = {int(str(g)) for g in form.getlist("guests") if str(g).isdigit()}
        errors = []
        if not v["title"]:
            errors.append("Give the event a title.")
        if _date(v["date"]) is None:
            errors.append("Date must be YYYY-MM-DD.")
        if not v["all_day"]:
            if not TIME_RE.match(v["start"]) or not TIME_RE.match(v["end"]):
                errors.append("Start and end times must be HH:MM (24-hour).")
            elif v["end"] <= v["start"]:
                errors.append("The end time must be after the start time.")
        if v["recur"] not in ("none", "daily", "weekly"):
            v["recur"] = "none"
        if v["recur"] != "none" and v["recur_until"]:
            until = _date(v["recur_until"])
            if until is None:
                errors.append("Repeat-until must be YYYY-MM-DD.")
            elif _date(v["date"]) and until < _date(v["date"]):  # type: ignore[operator]
                errors.append("Repeat-until must not be before the date.")
        if v["calendar"] not in CALENDARS:
            v["calendar"] = "Personal"
        return v, guests, errors

    def _save(self, eid: int | None, v: dict[str, Any], guests: set[int]) -> int:
        row = (v["title"][:200], v["date"], None if v["all_day"] else v["start"], None if v["all_day"] else v["end"], int(v["all_day"]),
               v["location"][:200], v["description"][:2000], v["calendar"], v["recur"],
               (v["recur_until"] or None) if v["recur"] != "none" else None)
        if eid is None:
            eid = self.db.insert("INSERT INTO events (title, date, start, end, all_day, location, description, calendar, recur, recur_until)"
                                  " VALUES (?,?,?,?,?,?,?,?,?,?)", row)
        else:
            self.db.execute("UPDATE events SET title=?, date=?, start=?, end=?, all_day=?, location=?, description=?, calendar=?, recur=?,"
                            " recur_until=? WHERE id = ?", (*row, eid))
        current = {r["person_id"] for r in self.db.all("SELECT person_id FROM attendees WHERE event_id = ?", (eid,))}
        valid = {r["id"] for r in self.db.all("SELECT id FROM people")}
        for pid in (guests & valid) - current:
            self.db.execute("INSERT INTO attendees (event_id, person_id, status) VALUES (?, ?, 'pending')", (eid, pid))
        for pid in current - guests:
            self.db.execute("DELETE FROM attendees WHERE event_id = ? AND person_id = ?", (eid, pid))
        assert eid is not None
        return eid

    async def new_event(self, request: Request) -> Response:
        if request.method == "GET":
            d = _date(self.query(request)["date"] or "") or self.now().date()
            return self._form({"date": d.isoformat(), "start": "09:00", "end": "10:00", "calendar": "Personal"}, set(), [],
                              "/event/new", self.t("New event"))
        v, guests, errors = self._parse(await request.form())
        if errors:
            return self._form(v, guests, errors, "/event/new", self.t("New event"))
        eid = self._save(None, v, guests)
        used_method(request.scope, v["date_via"] or "form", f"events[id={eid}].date")
        return RedirectResponse(f"/event/{eid}", status_code=303)

    async def edit_event(self, request: Request) -> Response:
        eid = request.path_params["eid"]
        e = self.db.one("SELECT * FROM events WHERE id = ?", (eid,))
        if e is None or e["organizer_id"] is not None:
            return self._page(self.t("Not allowed"), f"<div class='error'>{self.t('Only events you organize can be edited.')}</div>")
        if request.method == "GET":
            guests = {r["person_id"] for r in self.db.all("SELECT person_id FROM attendees WHERE event_id = ?", (eid,))}
            return self._form({**e, "all_day": bool(e["all_day"])}, guests, [], f"/event/{eid}/edit", self.t("Edit event"))
        v, guests, errors = self._parse(await request.form())
        if errors:
            return self._form(v, guests, errors, f"/event/{eid}/edit", self.t("Edit event"))
        self._save(eid, v, guests)
        if v["date"] != e["date"]:
            used_method(request.scope, v["date_via"] or "form", f"events[id={eid}].date")
        return RedirectResponse(f"/event/{eid}", status_code=303)


APP = CalendarApp
