"""Travel: search flights, pick a seat, pay, and manage trips.

Pages: `/` (search: airport autocomplete comboboxes and a calendar date picker, both
keyboard and mouse), `/flights?from=&to=&date=` (results with filters: stops, airlines,
max price, departure window; sort), `/flights/{id}` (booking: a `<seat-map>` web
component in an open SHADOW DOM, passenger form, checked bags, payment with a saved
card or a new one), `/trips` and `/trips/{ref}` (confirmation, cancel with a confirm
modal). A booking is in SQLite before its confirmation page loads.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule
from cua.tasks.apps.activity import added_row
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page, script_json
from cua.tasks.apps.travel.locale import DE, day, duration, moment, price
from cua.tasks.apps.travel.seed import AIRPORTS, PREMIUM_ROWS, SEAT_LETTERS, SEAT_ROWS, seed_travel
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE airports (code TEXT PRIMARY KEY, city TEXT NOT NULL, name TEXT NOT NULL);
CREATE TABLE flights (
    id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE, airline TEXT NOT NULL,
    origin TEXT NOT NULL REFERENCES airports(code), dest TEXT NOT NULL REFERENCES airports(code),
    depart TEXT NOT NULL, arrive TEXT NOT NULL, duration_min INTEGER NOT NULL, stops INTEGER NOT NULL, price INTEGER NOT NULL
);
CREATE INDEX flights_route ON flights (origin, dest, depart);
CREATE TABLE seats_taken (flight_id INTEGER NOT NULL REFERENCES flights(id), seat TEXT NOT NULL, PRIMARY KEY (flight_id, seat));
CREATE TABLE cards (id INTEGER PRIMARY KEY, brand TEXT NOT NULL, last4 TEXT NOT NULL, label TEXT NOT NULL, expires TEXT NOT NULL);
CREATE TABLE bookings (
    id INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE, flight_id INTEGER NOT NULL REFERENCES flights(id),
    first_name TEXT NOT NULL, last_name TEXT NOT NULL, email TEXT NOT NULL, seat TEXT NOT NULL,
    bags INTEGER NOT NULL DEFAULT 0, card_last4 TEXT NOT NULL, total INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('confirmed', 'cancelled')), created TEXT NOT NULL
);
"""
NAV = [("Search", "/"), ("My trips", "/trips")]
BAG_FEE = 35
PREMIUM_FEE = 45


def _hm(iso: str) -> str:
    return iso[11:16]


def seat_fee(seat: str) -> int:
    return PREMIUM_FEE if int(seat[:-1]) <= PREMIUM_ROWS else 0


#: An airport as the search reads it: "Boston (BOS)", "BOS" or "bos", or a city with one airport.
AIRPORT = QueryRule(strip=True, extract=r"\(([A-Za-z]{3})\)\s*$", case="upper", choices=tuple(a[0] for a in AIRPORTS),
                    aliases=tuple((city.casefold(), code) for code, city, _ in AIRPORTS
                                  if sum(c == city for _, c, _ in AIRPORTS) == 1), otherwise="keep")


class TravelApp(WebApp):
    name = "travel"
    title = "Skyway Travel"
    schema = SCHEMA
    derived = {f"bookings.{f}": ("bookings.flight_id",)
               for f in ("airline", "arrive", "depart", "dest", "fare", "flight_number", "origin")}
    #: the timetable is seeded and no route writes it: a booking's flight is its flight_id
    assigned = {"bookings": ("ref", "total", "status"),
                "flights": ("number", "airline", "origin", "dest", "depart", "arrive", "duration_min", "stops", "price")}
    static_dir = Path(__file__).parent / "static"
    #: sidebar: the results' filters as a left column and the search form beside the page's text;
    #: dense: a compact timetable, one line per flight
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
    query_params = {
        "from": AIRPORT, "to": AIRPORT,
        "date": QueryRule(strip=True),
        "stops": QueryRule(multi=True),
        "airline": QueryRule(multi=True),
        "max_price": QueryRule(strip=True, integer=True),
        "window": QueryRule(default="any", choices=("any", "morning", "afternoon", "evening")),
        "sort": QueryRule(default="price", choices=("price", "depart", "duration")),
        "new": QueryRule(flag=True),
    }

    def t(self, text: str) -> str:
        if self.variant.locale == "de-DE" and text in DE:
            return DE[text]
        return super().t(text)

    def _price(self, dollars: int) -> str:
        return price(dollars, self.variant.locale)

    def _dur(self, minutes: int) -> str:
        return duration(minutes, self.variant.locale)

    def _stops(self, stops: int) -> str:
        return self.t("Nonstop" if stops == 0 else "1 stop")

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_travel(db, rng, self.now())

    def state(self) -> dict[str, Any]:
        bookings = self.db.all(
            "SELECT b.*, f.number AS flight_number, f.airline, f.origin, f.dest, f.depart, f.arrive, f.price AS fare "
            "FROM bookings b JOIN flights f ON f.id = b.flight_id ORDER BY b.id")
        return {"bookings": bookings, "cards": self.db.all("SELECT * FROM cards ORDER BY id"),
                "airports": self.db.all("SELECT * FROM airports ORDER BY code"),
                "flight_count": self.db.scalar("SELECT COUNT(*) FROM flights")}

    def irreversible(self, change: Change) -> str | None:
        """A booking is paid for when it is made: cancelling it afterwards does not undo the payment."""
        return "booking" if added_row(change, "bookings") is not None else None

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.search_page),
            Route("/flights", self.results),
            Route("/flights/{flight_id:int}", self.book_page),
            Route("/bookings", self.create_booking, methods=["POST"]),
            Route("/trips", self.trips),
            Route("/trips/{ref}", self.trip),
            Route("/trips/{ref}/cancel", self.cancel, methods=["POST"]),
        ]

    def _page(self, title: str, body: str, scripts: list[str] | None = None) -> Response:
        return html_page(self, title, body, nav=NAV, scripts=scripts or ["/static/app/travel.js"])

    def _airport_label(self, code: str) -> str:
        a = self.db.one("SELECT * FROM airports WHERE code = ?", (code,))
        return f"{a['city']} ({a['code']})" if a else code

    def resolve_airport(self, text: str) -> str | None:
        """An airport code from what the user typed: 'Boston (BOS)', 'BOS', or a unique city
        (`AIRPORT`, the rule the `url` judge reads the parameter by too)."""
        code = AIRPORT.canonical(text)
        return code if code is not None and self.db.one("SELECT code FROM airports WHERE code = ?", (code,)) else None

    # --- search ---

    def _search_form(self, origin: str = "", dest: str = "", date: str = "") -> str:
        airports = script_json(self.db.all("SELECT code, city, name FROM airports ORDER BY city, code"))
        t = self.t

        def combo(name: str, label: str, value: str) -> str:
            shown = self._airport_label(value) if value else ""
            return (f'<div class="field combo" data-combo><label for="{name}-input">{label}</label>'
                    f'<input id="{name}-input" type="text" name="{name}" value="{esc(shown)}" autocomplete="off" role="combobox" '
                    f'aria-autocomplete="list" aria-expanded="false" aria-controls="{name}-list" placeholder="{t("City or airport")}">'
                    f'<ul class="listbox" id="{name}-list" role="listbox" hidden></ul></div>')

        calendar_words = script_json({"prev": t("Previous month"), "next": t("Next month")})
        return (f"<form class='card search-form' method='get' action='/flights' data-form='search' aria-label='{t('Search form')}'>"
                f"{combo('from', t('From'), origin)}{combo('to', t('To'), dest)}"
                f"<div class='field datepick' data-datepicker><label for='date-input'>{t('Departure date')}</label>"
                f"<div class='row'><input id='date-input' type='text' name='date' value='{esc(date)}' placeholder='{t('YYYY-MM-DD')}' "
                "autocomplete='off' pattern='\\d{4}-\\d{2}-\\d{2}'>"
                f"<button type='button' class='cal-btn' aria-label='{t('Choose date')}' aria-haspopup='dialog'>▦</button></div>"
                f"<div class='calendar' role='dialog' aria-label='{t('Choose date')}' hidden data-min='{self.now().date().isoformat()}'"
                f" data-words='{esc(calendar_words)}'></div></div>"
                f"<button class='primary search-btn' type='submit' data-action='search'>{t('Search flights')}</button></form>"
                f"<script type='application/json' id='airports-data'>{airports}</script>")

    async def search_page(self, request: Request) -> Response:
        routes = self.db.all("SELECT DISTINCT origin, dest FROM flights ORDER BY origin, dest")
        popular = "".join(f"<li>{esc(self._airport_label(r['origin']))} → {esc(self._airport_label(r['dest']))}</li>" for r in routes)
        body = (f"<h1>{self.t('Find a flight')}</h1>{self._search_form()}"
                f"<h2>{self.t('Routes we fly')}</h2><ul class='route-list'>{popular}</ul>")
        return self._page(self.t("Search"), body)

    async def results(self, request: Request) -> Response:
        q = self.query(request)
        origin, dest = self.resolve_airport(q["from"] or ""), self.resolve_airport(q["to"] or "")
        date = q["date"] or ""
        errors = []
        t = self.t
        if origin is None:
            errors.append(t("Choose a departure airport from the list."))
        if dest is None:
            errors.append(t("Choose a destination airport from the list."))
        try:
            dt.date.fromisoformat(date)
        except ValueError:
            errors.append(t("Enter the date as YYYY-MM-DD."))
        if errors:
            msg = "".join(f"<div class='error'>{esc(e)}</div>" for e in errors)
            return self._page(t("Search"), f"<h1>{t('Find a flight')}</h1>{msg}{self._search_form(origin or '', dest or '', date)}")
        flights = self.db.all("SELECT * FROM flights WHERE origin = ? AND dest = ? AND substr(depart, 1, 10) = ?",
                              (origin, dest, date))
        airlines_all = sorted({f["airline"] for f in flights})
        stops: list[str] = q["stops"]
        airlines: list[str] = q["airline"]
        max_price = q["max_price"] or ""
        window, sort = str(q["window"]), str(q["sort"])
        shown = [f for f in flights
                 if (not stops or str(f["stops"]) in stops) and (not airlines or f["airline"] in airlines)
                 and (not max_price.isdigit() or f["price"] <= int(max_price))
                 and {"any": True, "morning": "06:00" <= _hm(f["depart"]) < "12:00",
                      "afternoon": "12:00" <= _hm(f["depart"]) < "18:00", "evening": _hm(f["depart"]) >= "18:00"}.get(window, True)]
        shown.sort(key={"price": lambda f: (f["price"], f["depart"]), "depart": lambda f: (f["depart"], f["price"]),
                        "duration": lambda f: (f["duration_min"], f["price"])}.get(sort, lambda f: (f["price"], f["depart"])))
        hidden = "".join(f"<input type='hidden' name='{k}' value='{esc(v)}'>" for k, v in (("from", origin), ("to", dest), ("date", date)))
        stop_boxes = "".join(f"<label><input type='checkbox' name='stops' value='{v}'{' checked' if v in stops else ''}> {lbl}</label>"
                             for v, lbl in (("0", t("Nonstop")), ("1", t("1 stop"))))
        airline_boxes = "".join(f"<label><input type='checkbox' name='airline' value='{esc(a)}'{' checked' if a in airlines else ''}> {esc(a)}</label>"
                                for a in airlines_all)
        windows = "".join(f"<option value='{v}'{' selected' if v == window else ''}>{t(lbl)}</option>" for v, lbl in
                          (("any", "Any time"), ("morning", "Morning (6–12)"), ("afternoon", "Afternoon (12–18)"), ("evening", "Evening (18+)")))
        sorts = "".join(f"<option value='{v}'{' selected' if v == sort else ''}>{t(lbl)}</option>" for v, lbl in
                        (("price", "Lowest price"), ("depart", "Earliest departure"), ("duration", "Shortest")))
        filters = (f"<form class='card filters' method='get' action='/flights' id='filters' data-form='filters' aria-label='{t('Filters')}'>"
                   f"{hidden}<h2>{t('Filters')}</h2>"
                   f"<fieldset><legend>{t('Stops')}</legend>{stop_boxes}</fieldset><fieldset><legend>{t('Airlines')}</legend>{airline_boxes}</fieldset>"
                   f"<label>{t('Max price ($)')}<br><input type='number' name='max_price' min='0' value='{esc(max_price)}'></label>"
                   f"<label>{t('Departure')}<br><select name='window'>{windows}</select></label>"
                   f"<label>{t('Sort by')}<br><select name='sort'>{sorts}</select></label>"
                   f"<button type='submit' class='primary' data-action='apply'>{t('Apply')}</button></form>")
        cards = "".join(
            f"<li class='card flight' data-flight='{esc(f['number'])}' data-id='{f['id']}'>"
            f"<div class='times'><strong>{_hm(f['depart'])}</strong> → <strong>{_hm(f['arrive'])}</strong>"
            f"{' <sup>+1</sup>' if f['arrive'][:10] != f['depart'][:10] else ''}</div>"
            f"<div class='meta'><span class='airline'>{esc(f['airline'])}</span> · <span class='number'>{esc(f['number'])}</span>"
            f"<br><span class='muted'>{self._dur(f['duration_min'])} · {self._stops(f['stops'])}</span></div>"
            f"<div class='price' data-price='{f['price']}'>{self._price(f['price'])}</div>"
            f"<a class='button primary select' href='/flights/{f['id']}' aria-label='{t('Select')} {esc(f['number'])}' data-action='select'>{t('Select')}</a></li>"
            for f in shown)
        listing = f"<ul class='results'>{cards}</ul>" if shown else f"<p class='muted empty'>{t('No flights match these filters.')}</p>"
        head = (f"<h1>{esc(self._airport_label(origin))} → {esc(self._airport_label(dest))}</h1>"  # type: ignore[arg-type]
                f"<p class='muted'><time datetime='{esc(date)}'>{esc(day(date, self.variant.locale))}</time> · "
                f"{len(shown)} {t('of')} {len(flights)} {t('flights')}</p>")
        body = (f"<details class='modify'><summary>{t('Modify search')}</summary>{self._search_form(origin or '', dest or '', date)}</details>"
                f"{head}<div class='results-layout'>{filters}{listing}</div>")
        return self._page(t("Flights"), body)

    # --- booking ---

    def taken_seats(self, flight_id: int) -> set[str]:
        seats = {r["seat"] for r in self.db.all("SELECT seat FROM seats_taken WHERE flight_id = ?", (flight_id,))}
        seats |= {r["seat"] for r in self.db.all("SELECT seat FROM bookings WHERE flight_id = ? AND status = 'confirmed'", (flight_id,))}
        return seats

    async def book_page(self, request: Request, errors: list[str] | None = None, values: dict[str, str] | None = None) -> Response:
        fid = int(str(request.path_params.get("flight_id") or (values or {}).get("flight_id") or 0))
        f = self.db.one("SELECT * FROM flights WHERE id = ?", (fid,))
        t = self.t
        if f is None:
            return self._page(t("Not found"), f"<div class='error'>{t('No such flight.')}</div>")
        v = values or {}
        taken = ",".join(sorted(self.taken_seats(fid)))
        cards = self.db.all("SELECT * FROM cards ORDER BY id")
        chosen_card = v.get("card", "")
        card_radios = "".join(
            f"<label class='card-opt'><input type='radio' name='card' value='{esc(c['last4'])}'{' checked' if chosen_card == c['last4'] else ''}> "
            f"{esc(c['label'])} — {esc(c['brand'])} {t('ending')} {esc(c['last4'])} <span class='muted'>{t('exp')} {esc(c['expires'])}</span></label>"
            for c in cards)
        card_radios += (f"<label class='card-opt'><input type='radio' name='card' value='new'{' checked' if chosen_card == 'new' else ''}> "
                        f"{t('A new card')}</label><div class='new-card' id='new-card'"
                        f"{'' if chosen_card == 'new' else ' hidden'}><input type='text' name='card_number' placeholder='{t('Card number')}' "
                        f"aria-label='{t('Card number')}' inputmode='numeric' value='{esc(v.get('card_number', ''))}'>"
                        f"<input type='text' name='card_exp' placeholder='{t('MM/YY')}' aria-label='{t('Expiry')}' size='6' value='{esc(v.get('card_exp', ''))}'>"
                        f"<input type='text' name='card_cvc' placeholder='{t('CVC')}' aria-label='{t('CVC')}' size='4'></div>")
        err = "".join(f"<div class='error'>{esc(e)}</div>" for e in errors or [])
        bags = v.get("bags", "0")
        bag_opts = "".join(f"<option value='{n}'{' selected' if str(n) == bags else ''}>{n} {t('checked bags' if n != 1 else 'checked bag')}"
                           f"{f' (+{self._price(n * BAG_FEE)})' if n else ''}</option>" for n in range(3))
        words = script_json({"seats": t("Seats"), "seat": t("Seat"), "legroom": t("extra legroom"), "taken": t("taken")})
        body = (
            f"{err}<div class='card flight-summary'><h1>{esc(f['airline'])} {esc(f['number'])}</h1>"
            f"<p>{esc(self._airport_label(f['origin']))} → {esc(self._airport_label(f['dest']))} · "
            f"<time datetime='{esc(f['depart'][:10])}'>{esc(day(f['depart'], self.variant.locale))}</time> · "
            f"{_hm(f['depart'])}–{_hm(f['arrive'])} · {self._dur(f['duration_min'])} · {self._stops(f['stops'])}</p>"
            f"<p>{t('Fare')} <strong id='fare' data-fare='{f['price']}'>{self._price(f['price'])}</strong></p></div>"
            f"<form method='post' action='/bookings' id='booking-form' class='booking-grid'>"
            f"<input type='hidden' name='flight_id' value='{fid}'>"
            f"<section class='card' data-section='seat'><h2>{t('Choose your seat')}</h2>"
            f"<p class='muted'>{t('Rows')} 1–{PREMIUM_ROWS} {t('have extra legroom')} (+{self._price(PREMIUM_FEE)}).</p>"
            f"<seat-map rows='{SEAT_ROWS}' letters='{SEAT_LETTERS}' premium-rows='{PREMIUM_ROWS}' taken='{taken}' "
            f"value='{esc(v.get('seat', ''))}' aria-label='{t('Seat map')}' data-words='{esc(words)}'></seat-map>"
            f"<input type='hidden' name='seat' id='seat-input' value='{esc(v.get('seat', ''))}'>"
            f"<p>{t('Selected seat')}: <strong id='seat-label'>{esc(v.get('seat') or t('none'))}</strong></p></section>"
            f"<section class='card' data-section='passenger'><h2>{t('Passenger')}</h2>"
            f"<label>{t('First name')}<br><input type='text' name='first_name' required value='{esc(v.get('first_name', ''))}'></label>"
            f"<label>{t('Last name')}<br><input type='text' name='last_name' required value='{esc(v.get('last_name', ''))}'></label>"
            f"<label>{t('Email')}<br><input type='email' name='email' required value='{esc(v.get('email', ''))}'></label>"
            f"<label>{t('Bags')}<br><select name='bags' id='bags'>{bag_opts}</select></label>"
            f"<h2>{t('Payment')}</h2><div class='cards' role='radiogroup' aria-label='{t('Payment card')}'>{card_radios}</div>"
            f"<p class='total'>{t('Total')} <strong id='total' data-locale='{esc(self.variant.locale)}'></strong></p>"
            f"<button type='submit' class='primary' id='pay' data-action='pay'>{t('Pay and book')}</button></section></form>")
        return self._page(t("Book"), body, scripts=["/static/app/seatmap.js", "/static/app/travel.js"])

    async def create_booking(self, request: Request) -> Response:
        form = await request.form()
        v = {k: str(form.get(k, "")).strip() for k in
             ("flight_id", "seat", "first_name", "last_name", "email", "bags", "card", "card_number", "card_exp")}
        f = self.db.one("SELECT * FROM flights WHERE id = ?", (int(v["flight_id"]) if v["flight_id"].isdigit() else 0,))
        t = self.t
        if f is None:
            return self._page(t("Not found"), f"<div class='error'>{t('No such flight.')}</div>")
        errors = []
        seat = v["seat"].upper()
        valid_seat = re.fullmatch(rf"(\d{{1,2}})([{SEAT_LETTERS}])", seat) is not None and 1 <= int(seat[:-1]) <= SEAT_ROWS
        if not valid_seat:
            errors.append(t("Choose a seat on the seat map."))
        elif seat in self.taken_seats(f["id"]):
            errors.append(f"{t('Seat')} {seat} {t('is already taken.')}")
        for key, label in (("first_name", "first name"), ("last_name", "last name")):
            if not v[key]:
                errors.append(t(f"Enter the passenger's {label}."))
        if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", v["email"]):
            errors.append(t("Enter a valid email address."))
        card = v["card"]
        if card == "new":
            digits = re.sub(r"\D", "", v["card_number"])
            if not (13 <= len(digits) <= 19) or not re.fullmatch(r"\d{2}/\d{2}", v["card_exp"]):
                errors.append(t("Enter the new card's number and expiry (MM/YY)."))
            last4 = digits[-4:]
        elif self.db.one("SELECT id FROM cards WHERE last4 = ?", (card,)):
            last4 = card
        else:
            errors.append(t("Choose a payment card."))
            last4 = ""
        bags = int(v["bags"]) if v["bags"] in ("0", "1", "2") else 0
        if errors:
            request.path_params["flight_id"] = f["id"]
            return await self.book_page(request, errors, v)
        total = f["price"] + seat_fee(seat) + bags * BAG_FEE
        count = self.db.scalar("SELECT COUNT(*) FROM bookings")
        ref_rng = random.Random(f"{self.current_seed}:{count}:{f['id']}:{seat}")
        ref = "".join(ref_rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))
        self.db.execute(
            "INSERT INTO bookings (ref, flight_id, first_name, last_name, email, seat, bags, card_last4, total, status, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'confirmed', ?)",
            (ref, f["id"], v["first_name"][:60], v["last_name"][:60], v["email"][:120], seat, bags, last4, total,
             self.now().isoformat(timespec="minutes")))
        return RedirectResponse(f"/trips/{ref}?new=1", status_code=303)

    # --- trips ---

    async def trips(self, request: Request) -> Response:
        rows = self.db.all("SELECT b.*, f.number, f.airline, f.origin, f.dest, f.depart FROM bookings b "
                           "JOIN flights f ON f.id = b.flight_id ORDER BY f.depart")
        t, loc = self.t, self.variant.locale
        trs = "".join(
            f"<tr class='trip {b['status']}' data-ref='{esc(b['ref'])}' data-status='{b['status']}'><td><a href='/trips/{esc(b['ref'])}'>{esc(b['ref'])}</a></td>"
            f"<td>{esc(b['origin'])} → {esc(b['dest'])}</td><td><time datetime='{esc(b['depart'])}'>{esc(moment(b['depart'], loc))}</time></td>"
            f"<td>{esc(b['number'])}</td><td>{esc(b['first_name'])} {esc(b['last_name'])}</td><td>{esc(b['seat'])}</td>"
            f"<td data-total='{b['total']}'>{self._price(b['total'])}</td><td><span class='status {b['status']}'>{t(b['status'])}</span></td></tr>"
            for b in rows)
        heads = "".join(f"<th>{t(h)}</th>" for h in ("Booking", "Route", "Departs", "Flight", "Passenger", "Seat", "Total", "Status"))
        table = (f"<table class='trips'><thead><tr>{heads}</tr></thead><tbody>{trs}</tbody></table>" if rows
                 else f"<p class='muted'>{t('No trips yet.')}</p>")
        return self._page(t("My trips"), f"<h1>{t('My trips')}</h1>{table}")

    async def trip(self, request: Request) -> Response:
        ref = request.path_params["ref"]
        b = self.db.one("SELECT b.*, f.number, f.airline, f.origin, f.dest, f.depart, f.arrive, f.price FROM bookings b "
                        "JOIN flights f ON f.id = b.flight_id WHERE b.ref = ?", (ref,))
        t, loc = self.t, self.variant.locale
        if b is None:
            return self._page(t("Not found"), f"<div class='error'>{t('No such booking.')}</div>")
        flash = f"<div class='flash' role='status'>{t('Booking confirmed. Have a good trip!')}</div>" if self.query(request)["new"] else ""
        cancel = ""
        if b["status"] == "confirmed":
            cancel = (f"<button type='button' class='danger' id='cancel-open' data-action='cancel'>{t('Cancel booking…')}</button>"
                      f"<div class='modal-backdrop' id='cancel-modal' hidden><div class='modal' role='dialog' aria-label='{t('Confirm cancellation')}'>"
                      f"<p>{t('Cancel booking')} {esc(ref)}? {t('The fare is not refundable.')}</p><form method='post' action='/trips/{esc(ref)}/cancel' class='row'>"
                      f"<button type='submit' class='danger' id='cancel-confirm' data-action='confirm-cancel'>{t('Yes, cancel it')}</button>"
                      f"<button type='button' id='cancel-keep' data-action='keep'>{t('Keep booking')}</button></form></div></div>")
        body = (f"{flash}<div class='card confirmation'><h1>{t('Booking')} <span id='booking-ref'>{esc(ref)}</span></h1>"
                f"<p class='status {b['status']}' data-status='{b['status']}'>{t('Status')}: {t(b['status'])}</p><dl>"
                f"<dt>{t('Flight')}</dt><dd>{esc(b['airline'])} {esc(b['number'])}</dd>"
                f"<dt>{t('Route')}</dt><dd>{esc(self._airport_label(b['origin']))} → {esc(self._airport_label(b['dest']))}</dd>"
                f"<dt>{t('Departs')}</dt><dd>{esc(moment(b['depart'], loc))}</dd><dt>{t('Arrives')}</dt><dd>{esc(moment(b['arrive'], loc))}</dd>"
                f"<dt>{t('Passenger')}</dt><dd>{esc(b['first_name'])} {esc(b['last_name'])} ({esc(b['email'])})</dd>"
                f"<dt>{t('Seat')}</dt><dd id='booking-seat'>{esc(b['seat'])}</dd><dt>{t('Bags')}</dt><dd>{b['bags']}</dd>"
                f"<dt>{t('Paid with')}</dt><dd>{t('card ending')} {esc(b['card_last4'])}</dd>"
                f"<dt>{t('Total')}</dt><dd id='booking-total' data-total='{b['total']}'>{self._price(b['total'])}</dd></dl>"
                f"{cancel}</div><p><a href='/trips' data-nav-link='trips'>{t('All trips')}</a></p>")
        return self._page(f"{t('Booking')} {ref}", body)

    async def cancel(self, request: Request) -> Response:
        ref = request.path_params["ref"]
        self.db.execute("UPDATE bookings SET status = 'cancelled' WHERE ref = ?", (ref,))
        return RedirectResponse(f"/trips/{ref}", status_code=303)


def search_url(origin: str, dest: str, date: str) -> str:
    return "/flights?" + urlencode({"from": origin, "to": dest, "date": date})


APP = TravelApp
