"""Maps: Waypoint, a maps-and-places app over Port Alder (`city`) for Maya Lindqvist.

Pages: `/` and `/search` (search by name, category or cuisine; filters open now at the app's
clock, minimum rating, price level, distance from home, work or a place; sort by relevance,
distance or rating; an SVG map of districts, streets, the river and pins), `/places/{id}`
(address, phone, hours per weekday, open now, rating and reviews, photos, popular times,
travel times from home), save to lists, write/edit/delete my review, suggest an edit
(hours of a weekday, phone) that goes to `pending_edits`, share (a link dialog; copy or
email), `/directions` (drive, transit, walk, bike on the street graph: distance, duration,
steps; avoid tolls/highways; leave now or at a time), `/lists` (Favourites, Want to go and
my own with notes; bulk remove), `/contributions` and `/history` (recent searches and
directions, clearable).

The app assigns ids, timestamps and the normal form of what it stores: a phone number as
`+1 AAA-EEE-NNNN`, hours as minutes after midnight, a list's or note's text with its runs of
whitespace made one space. A request the app refuses gets a page that says why (400/404),
never a change. Ratings and review counts are the provider's daily aggregate: my review
shows at once but does not move them. Searches and directions are remembered in `history`
(one JSON list, newest first, at most 12), which judges allow as an incidental change.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import random
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.maps import text
from cua.tasks.apps.maps.city import DISTRICTS, DX, DY, EDGES, LINES, RIVER_X, node_xy
from cua.tasks.apps.maps.routing import MODES, Spot, route
from cua.tasks.apps.maps.routing import Route as Trip
from cua.tasks.apps.maps.seed import HOME, ME_NAME, WORK, seed_maps
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE places (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, category TEXT NOT NULL, cuisine TEXT NOT NULL DEFAULT '',
                     district TEXT NOT NULL, address TEXT NOT NULL, x REAL NOT NULL, y REAL NOT NULL, edge INTEGER NOT NULL,
                     along REAL NOT NULL, phone TEXT NOT NULL, price_level INTEGER NOT NULL DEFAULT 0 CHECK (price_level BETWEEN 0 AND 4),
                     rating REAL NOT NULL, review_count INTEGER NOT NULL, photo_count INTEGER NOT NULL,
                     status TEXT NOT NULL CHECK (status IN ('open', 'temporarily_closed', 'permanently_closed')));
CREATE TABLE hours (id INTEGER PRIMARY KEY, place_id INTEGER NOT NULL REFERENCES places(id), weekday INTEGER NOT NULL
                    CHECK (weekday BETWEEN 0 AND 6), opens INTEGER NOT NULL, closes INTEGER NOT NULL);
CREATE INDEX hours_place ON hours (place_id);
CREATE TABLE reviews (id INTEGER PRIMARY KEY, place_id INTEGER NOT NULL REFERENCES places(id), author TEXT NOT NULL,
                      stars INTEGER NOT NULL CHECK (stars BETWEEN 1 AND 5), body TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL,
                      edited_at TEXT, mine INTEGER NOT NULL DEFAULT 0);
CREATE INDEX reviews_place ON reviews (place_id);
CREATE UNIQUE INDEX one_review_of_mine ON reviews (place_id) WHERE mine = 1;
CREATE TABLE lists (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, kind TEXT NOT NULL CHECK (kind IN ('favourites', 'want_to_go', 'custom')),
                    description TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
CREATE TABLE list_items (id INTEGER PRIMARY KEY, list_id INTEGER NOT NULL REFERENCES lists(id), place_id INTEGER NOT NULL REFERENCES places(id),
                         note TEXT NOT NULL DEFAULT '', added_at TEXT NOT NULL, UNIQUE (list_id, place_id));
CREATE TABLE pending_edits (id INTEGER PRIMARY KEY, place_id INTEGER NOT NULL REFERENCES places(id),
                            field TEXT NOT NULL CHECK (field IN ('hours', 'phone')), weekday INTEGER, opens INTEGER, closes INTEGER,
                            closed INTEGER NOT NULL DEFAULT 0, phone TEXT, note TEXT NOT NULL DEFAULT '',
                            status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'applied', 'withdrawn')),
                            submitted_at TEXT NOT NULL);
CREATE TABLE shares (id INTEGER PRIMARY KEY, place_id INTEGER NOT NULL REFERENCES places(id),
                     channel TEXT NOT NULL CHECK (channel IN ('link', 'email')), recipient TEXT NOT NULL DEFAULT '',
                     message TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
CREATE TABLE history (id INTEGER PRIMARY KEY CHECK (id = 1), entries TEXT NOT NULL);
CREATE TABLE travel_times (place_id INTEGER NOT NULL REFERENCES places(id), origin TEXT NOT NULL, mode TEXT NOT NULL,
                           distance_m INTEGER NOT NULL, duration_s INTEGER NOT NULL, minutes INTEGER NOT NULL, rides INTEGER NOT NULL,
                           PRIMARY KEY (place_id, origin, mode));
"""

CATEGORIES = ("restaurant", "cafe", "bar", "bakery", "pharmacy", "supermarket", "museum", "park", "hotel", "gas", "bookstore",
              "gym", "bank", "cinema", "library", "hospital", "florist", "hardware")
CUISINES = ("american", "chinese", "ethiopian", "french", "greek", "indian", "italian", "japanese", "korean", "lebanese",
            "mexican", "spanish", "thai", "turkish", "vietnamese")
#: words a search for a category matches, beside its name (English and German)
KEYWORDS: dict[str, tuple[str, ...]] = {
    "cafe": ("café", "coffee", "kaffee", "espresso"), "pharmacy": ("chemist", "drugstore", "apotheke", "apotheken"),
    "gas": ("fuel", "petrol", "gas station", "tankstelle"), "restaurant": ("food", "essen", "dinner", "lunch"),
    "supermarket": ("grocery", "groceries", "supermarkt"), "museum": ("gallery", "museen"), "park": ("garden", "grünanlage"),
    "hotel": ("lodging", "inn", "unterkunft"), "bar": ("pub", "kneipe"), "bakery": ("bäckerei", "bread"),
    "bookstore": ("books", "buchhandlung"), "gym": ("fitness", "fitnessstudio"), "bank": ("atm", "geldautomat"),
    "cinema": ("movies", "kino"), "library": ("bibliothek",), "hospital": ("krankenhaus", "emergency"),
    "florist": ("flowers", "blumen"), "hardware": ("baumarkt", "tools"),
}
ORIGINS = {"home": HOME, "work": WORK}
HISTORY_SIZE = 12
NAV = [("Explore", "/"), ("Directions", "/directions"), ("Saved", "/lists"), ("Contributions", "/contributions"),
       ("History", "/history")]
MAX_RESULTS = 40
MAX_TEXT = 2000


class Refused(Exception):
    """A request the app's rules refuse: shown with the reason, nothing changes."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def clean_text(raw: Any, limit: int = MAX_TEXT) -> str:
    """Text as typed, runs of whitespace made one space, at most `limit` characters."""
    value = " ".join(str(raw or "").split())
    if len(value) > limit:
        raise Refused(f"At most {limit} characters.")
    return value


def parse_phone(raw: str) -> str:
    """A North American number as `+1 AAA-EEE-NNNN`; Refused for anything else."""
    digits = "".join(c for c in raw if c.isdigit())
    if len(digits) == 10:
        digits = "1" + digits
    if len(digits) != 11 or digits[0] != "1" or any(c.isalpha() for c in raw):
        raise Refused("Enter a phone number of 10 digits, area code first (e.g. 207-555-0142).")
    return f"+1 {digits[1:4]}-{digits[4:7]}-{digits[7:]}"


def parse_time(raw: str, *, closing: bool = False) -> int:
    """`HH:MM` as minutes after midnight; a closing time of 00:00 is midnight (1440)."""
    try:
        t = dt.time.fromisoformat(raw.strip())
    except ValueError:
        raise Refused("Enter times as HH:MM (24-hour), e.g. 09:30.") from None
    minutes = t.hour * 60 + t.minute
    return 1440 if closing and minutes == 0 else minutes


class MapsApp(WebApp):
    name = "maps"
    title = "Waypoint"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
    #: the app fills these itself: who wrote a review and whether it is mine, a suggestion's
    #: review status, the list kind of a list I make, and the remembered searches
    assigned = {"reviews": ("author", "mine"), "pending_edits": ("status",), "lists": ("kind",), "history": ("entries",)}
    query_params = {
        "q": QueryRule(strip=True), "cat": QueryRule(strip=True, case="lower"), "cuisine": QueryRule(strip=True, case="lower"),
        "open": QueryRule(flag=True), "rating": QueryRule(strip=True), "price": QueryRule(strip=True),
        "dist": QueryRule(strip=True), "near": QueryRule(strip=True, case="lower", default="home"),
        "sort": QueryRule(strip=True, choices=("relevance", "distance", "rating"), default="relevance"),
        "from": QueryRule(strip=True), "to": QueryRule(strip=True),
        "mode": QueryRule(strip=True, case="lower", choices=MODES, default="drive"), "depart": QueryRule(strip=True),
        "avoid_tolls": QueryRule(flag=True), "avoid_highways": QueryRule(flag=True),
        "day": QueryRule(integer=True, minimum=0),
    }

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_maps(db, rng, self.now())

    def state(self) -> dict[str, Any]:
        """Every table an agent can change; not the travel-time cache (computed once at seed)."""
        out = self.db.dump()
        out.pop("travel_times", None)
        return out

    def irreversible(self, change: Change) -> str | None:
        """A place shared by email has left the app: no later request takes it back."""
        steps = change.steps
        if change.kind == "added" and len(steps) == 2 and steps[0].key == "shares":
            return "share"
        return None

    def t(self, text_: str) -> str:
        return text.translate(self.variant.locale, text_)

    def routes(self) -> list[BaseRoute]:
        g = self._guarded
        return [
            Route("/", g(self.explore)),
            Route("/search", g(self.explore)),
            Route("/places/{pid:int}", g(self.place)),
            Route("/places/{pid:int}/photo/{n:int}", g(self.photo)),
            Route("/places/{pid:int}/save", g(self.save), methods=["GET", "POST"]),
            Route("/places/{pid:int}/review", g(self.review), methods=["GET", "POST"]),
            Route("/places/{pid:int}/review/delete", g(self.delete_review), methods=["GET", "POST"]),
            Route("/places/{pid:int}/suggest", g(self.suggest), methods=["GET", "POST"]),
            Route("/places/{pid:int}/share", g(self.share), methods=["GET", "POST"]),
            Route("/directions", g(self.directions)),
            Route("/lists", g(self.lists), methods=["GET", "POST"]),
            Route("/lists/{lid:int}", g(self.one_list)),
            Route("/lists/{lid:int}/remove", g(self.remove_items), methods=["POST"]),
            Route("/lists/{lid:int}/note/{pid:int}", g(self.edit_note), methods=["POST"]),
            Route("/lists/{lid:int}/delete", g(self.delete_list), methods=["GET", "POST"]),
            Route("/contributions", g(self.contributions)),
            Route("/edits/{eid:int}/withdraw", g(self.withdraw_edit), methods=["POST"]),
            Route("/history", g(self.history)),
            Route("/history/clear", g(self.clear_history), methods=["POST"]),
        ]

    # --- furniture ---

    def _guarded(self, handler: Any) -> Any:
        async def run(request: Request) -> Response:
            try:
                result: Response = await handler(request)
                return result
            except Refused as exc:
                return self._page(self.t("Cannot do that"), f'<div class="alert" role="alert" data-error>{esc(self.t(exc.message))}</div>'
                                  f'<p><a href="/" data-action="back">{esc(self.t("Back to the map"))}</a></p>', status=exc.status)
        return run

    def _page(self, title: str, body: str, *, status: int = 200, wide: bool = False) -> HTMLResponse:
        search = (f'<form class="omnibox" role="search" method="get" action="/search"><input type="search" name="q" '
                  f'aria-label="{esc(self.t("Search Waypoint"))}" placeholder="{esc(self.t("Search places, categories, cuisines"))}" '
                  f'data-field="q"><button type="submit" class="primary" data-action="search">{esc(self.t("Search"))}</button></form>')
        resp = html_page(self, title, f'<div class="wp{" wide" if wide else ""}">{search}<h1 class="page-title">{esc(title)}</h1>'
                         f'{body}</div>', nav=NAV)
        resp.status_code = status
        return resp

    def _stamp(self) -> str:
        return self.now().strftime("%Y-%m-%d %H:%M")

    def _place(self, pid: int) -> dict[str, Any]:
        place = self.db.one("SELECT * FROM places WHERE id = ?", (pid,))
        if place is None:
            raise Refused("No such place.", 404)
        return place

    def _loc(self) -> str:
        return self.variant.locale

    def _clock(self, minutes: int) -> str:
        return text.clock(minutes % 1440, self._loc())

    def _hours(self, pid: int) -> dict[int, list[tuple[int, int]]]:
        out: dict[int, list[tuple[int, int]]] = {d: [] for d in range(7)}
        for h in self.db.all("SELECT weekday, opens, closes FROM hours WHERE place_id = ? ORDER BY weekday, opens", (pid,)):
            out[h["weekday"]].append((h["opens"], h["closes"]))
        return out

    def open_at(self, pid: int, when: dt.datetime) -> bool:
        """Open at `when`: within a range of that weekday, or of the day before past midnight."""
        if self.db.scalar("SELECT status FROM places WHERE id = ?", (pid,)) != "open":
            return False
        hours = self._hours(pid)
        day, minute = when.weekday(), when.hour * 60 + when.minute
        if any(o <= minute < c for o, c in hours[day]):
            return True
        return any(c > 1440 and minute < c - 1440 for _, c in hours[(day - 1) % 7])

    def _status_line(self, place: dict[str, Any]) -> tuple[str, str]:
        """(state, text): open | closed | permanently_closed | temporarily_closed, and what to show."""
        if place["status"] == "permanently_closed":
            return "permanently_closed", self.t("Permanently closed")
        if place["status"] == "temporarily_closed":
            return "temporarily_closed", self.t("Temporarily closed")
        now = self.now()
        hours = self._hours(place["id"])
        minute = now.hour * 60 + now.minute
        if self.open_at(place["id"], now):
            ranges = [c for o, c in hours[now.weekday()] if o <= minute < c] or \
                     [c - 1440 for _, c in hours[(now.weekday() - 1) % 7] if c > 1440]
            if hours[now.weekday()] == [(0, 1440)]:
                return "open", self.t("Open 24 hours")
            return "open", f'{self.t("Open")} · {self.t("closes")} {self._clock(ranges[0])}'
        for k in range(8):
            day = (now.weekday() + k) % 7
            later = [o for o, _ in hours[day] if k > 0 or o > minute]
            if later:
                when = self._clock(later[0]) if k == 0 else f"{text.weekday(day, self._loc(), short=True)} {self._clock(later[0])}"
                return "closed", f'{self.t("Closed")} · {self.t("opens")} {when}'
        return "closed", self.t("Closed")

    def _distance(self, place: dict[str, Any], origin: tuple[float, float]) -> float:
        return math.hypot(place["x"] - origin[0], place["y"] - origin[1])

    def _origin(self, near: str) -> tuple[tuple[float, float], str]:
        if near in ORIGINS:
            return ORIGINS[near].xy, self.t("Home") if near == "home" else self.t("Work")
        if near.isdigit():
            p = self._place(int(near))
            return (p["x"], p["y"]), p["name"]
        raise Refused("Choose home, work or a place to measure distances from.")

    def _stars(self, rating: float, count: int | None = None) -> str:
        full = round(rating)
        shown = text.number(rating, self._loc(), 1)
        tail = f' <span class="count">({esc(text.number(count, self._loc()))})</span>' if count is not None else ""
        return (f'<span class="stars" role="img" aria-label="{esc(self.t("Rated"))} {shown} {esc(self.t("of 5"))}">'
                f'<span class="num">{shown}</span> <span class="glyphs" aria-hidden="true">{"★" * full}{"☆" * (5 - full)}</span>{tail}</span>')

    def _label(self, place: dict[str, Any]) -> str:
        cat = self.t(text.CATEGORY_LABELS[place["category"]])
        return f'{self.t(text.CUISINE_LABELS[place["cuisine"]])} · {cat}' if place["cuisine"] else cat

    def _remember(self, entry: dict[str, str]) -> None:
        raw = self.db.scalar("SELECT entries FROM history WHERE id = 1")
        entries = [e for e in json.loads(raw or "[]") if e != entry]
        self.db.execute("UPDATE history SET entries = ? WHERE id = 1", (json.dumps([entry, *entries][:HISTORY_SIZE]),))

    # --- the map ---

    def _map(self, pins: list[dict[str, Any]], *, trip: list[tuple[float, float]] | None = None, home: bool = True,
             label: str = "") -> str:
        w, h = 13 * DX, 9 * DY
        parts = [f'<svg class="map" viewBox="-120 -120 {w + 240} {h + 240}" role="img" '
                 f'aria-label="{esc(label or self.t("Map of Port Alder"))}" data-map>']
        for k, (name, c0, c1, r0, r1) in enumerate(DISTRICTS):
            x0, y0 = max(-120, c0 * DX - DX / 2), max(-120, r0 * DY - DY / 2)
            x1, y1 = min(w + 120, c1 * DX + DX / 2), min(h + 120, r1 * DY + DY / 2)
            parts.append(f'<rect class="district d{k % 4}" x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}"/>'
                         f'<text class="district-name" x="{(x0 + x1) / 2}" y="{max(y0, -60) + 120}">{esc(name)}</text>')
        parts.append(f'<rect class="river" x="{RIVER_X - 70}" y="-120" width="140" height="{h + 240}"/>')
        for e in EDGES:
            (ax, ay), (bx, by) = node_xy(e.a), node_xy(e.b)
            parts.append(f'<line class="street {e.kind}{" bridge" if e.bridge else ""}" x1="{ax}" y1="{ay}" x2="{bx}" y2="{by}"/>')
        for line in LINES:
            if line.kind == "metro":
                pts = " ".join(f"{node_xy(n)[0]},{node_xy(n)[1]}" for n in line.stops)
                parts.append(f'<polyline class="metro" points="{pts}"/>')
        if trip:
            pts = " ".join(f"{x:.0f},{y:.0f}" for x, y in trip)
            parts.append(f'<polyline class="trip" points="{pts}" data-trip/>')
        if home:
            hx, hy = HOME.xy
            parts.append(f'<g class="home" data-home><circle cx="{hx:.0f}" cy="{hy:.0f}" r="55"/><title>{esc(self.t("Home"))}</title></g>')
        for p in pins:
            parts.append(f'<a href="/places/{p["id"]}" aria-label="{esc(p["name"])}" data-pin="{p["id"]}">'
                         f'<path class="pin{" off" if p["status"] != "open" else ""}" d="M{p["x"]:.0f},{p["y"]:.0f} l-40,-90 a45,45 0 1,1 80,0 z"/></a>')
        parts.append("</svg>")
        return "".join(parts)

    # --- explore and search ---

    async def explore(self, request: Request) -> Response:
        q = self.query(request)
        words, cat, cuisine = str(q["q"] or ""), str(q["cat"] or ""), str(q["cuisine"] or "")
        near = str(q["near"] or "home")
        error = ""
        if cat and cat not in CATEGORIES:
            error, cat = "Choose a category from the list.", ""
        if cuisine and cuisine not in CUISINES:
            error, cuisine = "Choose a cuisine from the list.", ""
        try:
            origin, origin_name = self._origin(near)
        except Refused as exc:
            error, near = exc.message, "home"
            origin, origin_name = self._origin("home")
        min_rating = self._number(q["rating"], (3.5, 4.0, 4.5), "rating")
        max_price = self._number(q["price"], (1, 2, 3, 4), "price")
        max_km = self._number(q["dist"], (0.5, 1, 2, 5), "distance")
        searched = bool(words or cat or cuisine) and not error
        rows: list[dict[str, Any]] = []
        if searched:
            rows = self._search(words, cat, cuisine)
            if q["open"]:
                rows = [r for r in rows if self.open_at(r["id"], self.now())]
            if min_rating is not None:
                rows = [r for r in rows if r["rating"] >= min_rating]
            if max_price is not None:
                rows = [r for r in rows if 0 < r["price_level"] <= max_price]
            for r in rows:
                r["distance"] = self._distance(r, origin)
            if max_km is not None:
                rows = [r for r in rows if r["distance"] <= max_km * 1000]
            sort = str(q["sort"])
            if sort == "distance":
                rows.sort(key=lambda r: (r["distance"], r["id"]))
            elif sort == "rating":
                rows.sort(key=lambda r: (-r["rating"], -r["review_count"], r["id"]))
            else:
                rows.sort(key=lambda r: (-(r["rating"] * math.log10(10 + r["review_count"])) + r["distance"] / 2000, r["id"]))
            self._remember({"kind": "search", "q": words, "cat": cat or cuisine})
        filters = self._filter_form(q, words, cat, cuisine, near)
        if error:
            body = f'<div class="alert" role="alert" data-error>{esc(self.t(error))}</div>' + filters
            return self._page(self.t("Explore"), body, status=400)
        if searched:
            shown = rows[:MAX_RESULTS]
            results = "".join(self._card(r) for r in shown) or f'<p class="empty" data-empty>{esc(self.t("No places match."))}</p>'
            count = (f'<p role="status" data-result-count="{len(rows)}">{esc(text.number(len(rows), self._loc()))} '
                     f'{esc(self.t("results"))} · {esc(self.t("distances from"))} {esc(origin_name)}</p>')
            side = f'{filters}{count}<ol class="results" aria-label="{esc(self.t("Results"))}">{results}</ol>'
            pins = shown
        else:
            side = filters + self._chips() + self._recent_block()
            pins = self.db.all("SELECT p.* FROM places p JOIN list_items i ON i.place_id = p.id JOIN lists l ON l.id = i.list_id "
                               "WHERE l.kind = 'favourites' ORDER BY p.id")
        body = f'<div class="explore"><section class="panel" aria-label="{esc(self.t("Places"))}">{side}</section>' \
               f'<section class="mapbox" aria-label="{esc(self.t("Map"))}">{self._map(pins)}</section></div>'
        return self._page(self.t("Search") if searched else self.t("Explore"), body, wide=True)

    def _number(self, raw: Any, allowed: tuple[float, ...], what: str) -> float | None:
        if raw in (None, ""):
            return None
        try:
            value = float(str(raw).replace(",", "."))
        except ValueError:
            raise Refused(f"Choose a {what} from the list.") from None
        if value not in allowed:
            raise Refused(f"Choose a {what} from the list.")
        return value

    def _search(self, words: str, cat: str, cuisine: str) -> list[dict[str, Any]]:
        rows = self.db.all("SELECT * FROM places ORDER BY id")
        if cat:
            rows = [r for r in rows if r["category"] == cat]
        if cuisine:
            rows = [r for r in rows if r["cuisine"] == cuisine]
        terms = [w for w in words.casefold().split() if w]
        if not terms:
            return rows

        def haystack(r: dict[str, Any]) -> str:
            extra = " ".join((r["category"], r["cuisine"], *KEYWORDS.get(r["category"], ()),
                              text.translate("de-DE", text.CATEGORY_LABELS[r["category"]]),
                              text.translate("de-DE", text.CUISINE_LABELS[r["cuisine"]]) if r["cuisine"] else ""))
            return f'{r["name"]} {r["district"]} {r["address"]} {extra}'.casefold()

        whole = words.casefold().strip()
        return [r for r in rows if whole in haystack(r) or all(t in haystack(r) for t in terms)]

    def _filter_form(self, q: dict[str, Any], words: str, cat: str, cuisine: str, near: str) -> str:
        def options(values: list[tuple[str, str]], chosen: str) -> str:
            return "".join(f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>{esc(label)}</option>' for v, label in values)

        cats = options([("", self.t("Any category"))] + [(c, self.t(text.CATEGORY_LABELS[c])) for c in CATEGORIES], cat)
        cuis = options([("", self.t("Any cuisine"))] + [(c, self.t(text.CUISINE_LABELS[c])) for c in CUISINES], cuisine)
        ratings = options([("", self.t("Any rating"))] + [(v, f"{text.number(float(v), self._loc(), 1)}+") for v in ("3.5", "4.0", "4.5")],
                          str(q["rating"] or ""))
        prices = options([("", self.t("Any price"))] + [(str(n), "$" * n) for n in (1, 2, 3, 4)], str(q["price"] or ""))
        dists = options([("", self.t("Any distance"))] + [(v, f"≤ {text.number(float(v), self._loc(), 1 if v == '0.5' else 0)} km")
                                                          for v in ("0.5", "1", "2", "5")], str(q["dist"] or ""))
        nears = options([("home", self.t("Home")), ("work", self.t("Work"))] + ([(near, self._place(int(near))["name"])] if near.isdigit() else []),
                        near)
        sorts = options([("relevance", self.t("Relevance")), ("distance", self.t("Distance")), ("rating", self.t("Rating"))],
                        str(q["sort"] or "relevance"))
        checked = " checked" if q["open"] else ""
        return (f'<form class="filters" method="get" action="/search" data-form="search" aria-label="{esc(self.t("Filters"))}">'
                f'<label>{esc(self.t("What"))}<input name="q" value="{esc(words)}" data-filter="q"></label>'
                f'<label>{esc(self.t("Category"))}<select name="cat" data-filter="cat">{cats}</select></label>'
                f'<label>{esc(self.t("Cuisine"))}<select name="cuisine" data-filter="cuisine">{cuis}</select></label>'
                f'<label class="check"><input type="checkbox" name="open" value="1" data-filter="open"{checked}> {esc(self.t("Open now"))}</label>'
                f'<label>{esc(self.t("Rating"))}<select name="rating" data-filter="rating">{ratings}</select></label>'
                f'<label>{esc(self.t("Price"))}<select name="price" data-filter="price">{prices}</select></label>'
                f'<label>{esc(self.t("Distance"))}<select name="dist" data-filter="dist">{dists}</select></label>'
                f'<label>{esc(self.t("From"))}<select name="near" data-filter="near">{nears}</select></label>'
                f'<label>{esc(self.t("Sort by"))}<select name="sort" data-filter="sort">{sorts}</select></label>'
                f'<button type="submit" class="primary" data-action="apply-filters">{esc(self.t("Apply"))}</button></form>')

    def _chips(self) -> str:
        chips = "".join(f'<a class="chip" href="/search?cat={c}" data-chip="{c}">{text.ICONS.get(c, "")}'
                        f'<span>{esc(self.t(text.CATEGORY_LABELS[c]))}</span></a>'
                        for c in ("restaurant", "cafe", "pharmacy", "museum", "hotel", "gas", "park", "supermarket"))
        return f'<nav class="chips" aria-label="{esc(self.t("Categories"))}">{chips}</nav>'

    def _card(self, r: dict[str, Any]) -> str:
        state, line = self._status_line(r)
        price = f'<span class="price" aria-label="{esc(self.t("Price level"))} {r["price_level"]}">{"$" * r["price_level"]}</span>' \
            if r["price_level"] else ""
        dist = f'<span class="dist">{esc(text.distance(r["distance"], self._loc()))}</span>' if "distance" in r else ""
        distance_attr = f' data-distance-m="{round(r["distance"])}"' if "distance" in r else ""
        return (f'<li class="card place-card" data-place-id="{r["id"]}" data-name="{esc(r["name"])}" data-category="{r["category"]}" '
                f'data-cuisine="{r["cuisine"]}" data-rating="{r["rating"]}" data-reviews="{r["review_count"]}" '
                f'data-price="{r["price_level"]}" data-open="{1 if state == "open" else 0}" data-status="{r["status"]}"'
                f'{distance_attr}>'
                f'<a class="name" href="/places/{r["id"]}">{esc(r["name"])}</a>'
                f'<div class="meta">{self._stars(r["rating"], r["review_count"])} {price} <span>{esc(self._label(r))}</span> {dist}</div>'
                f'<div class="addr">{esc(r["address"])} · {esc(r["district"])}</div>'
                f'<div class="state {state}" data-state="{state}">{esc(line)}</div></li>')

    def _recent_block(self) -> str:
        entries = json.loads(self.db.scalar("SELECT entries FROM history WHERE id = 1") or "[]")[:5]
        if not entries:
            return ""
        return f'<h2>{esc(self.t("Recent"))}</h2><ul class="recent">{"".join(self._history_item(e) for e in entries)}</ul>'

    def _history_item(self, e: dict[str, str]) -> str:
        if e.get("kind") == "directions":
            names = []
            for end in (e.get("from", ""), e.get("to", "")):
                names.append(self._end_name(end))
            href = "/directions?" + urlencode({"from": e.get("from", ""), "to": e.get("to", ""), "mode": e.get("mode", "drive")})
            return (f'<li data-history="directions"><a href="{esc(href)}">{text.ICONS["directions"]}'
                    f'{esc(names[0])} → {esc(names[1])}</a> <span class="muted">{esc(self.t(e.get("mode", "drive").title()))}</span></li>')
        label = e.get("q") or self.t(text.CATEGORY_LABELS.get(e.get("cat", ""), "")) or self.t(text.CUISINE_LABELS.get(e.get("cat", ""), ""))
        params = {"q": e.get("q", "")}
        if e.get("cat") in CATEGORIES:
            params["cat"] = e["cat"]
        elif e.get("cat") in CUISINES:
            params["cuisine"] = e["cat"]
        return f'<li data-history="search"><a href="/search?{esc(urlencode(params))}">{text.ICONS["search"]}{esc(label)}</a></li>'

    def _end_name(self, end: str) -> str:
        if end in ORIGINS:
            return self.t(end.title())
        if end.isdigit():
            row = self.db.one("SELECT name FROM places WHERE id = ?", (int(end),))
            return str(row["name"]) if row else "?"
        return end

    # --- a place ---

    async def place(self, request: Request) -> Response:
        p = self._place(request.path_params["pid"])
        pid = p["id"]
        day = self.query(request)["day"]
        state, line = self._status_line(p)
        hours = self._hours(pid)
        today = self.now().weekday()
        rows = []
        for d in list(range(today, 7)) + list(range(0, today)):
            ranges = hours[d]
            if not ranges:
                shown = self.t("Closed")
            elif ranges == [(0, 1440)]:
                shown = self.t("Open 24 hours")
            else:
                shown = ", ".join(f"{self._clock(o)}–{self._clock(c)}" for o, c in ranges)
            attrs = (f' data-opens="{ranges[0][0]}" data-closes="{ranges[0][1]}"' if ranges else ' data-closed="1"')
            rows.append(f'<tr data-weekday="{d}"{attrs}{" aria-current=date" if d == today else ""}>'
                        f'<th scope="row">{esc(text.weekday(d, self._loc()))}</th><td>{esc(shown)}</td></tr>')
        hours_table = f'<table class="hours" aria-label="{esc(self.t("Opening hours"))}"><tbody>{"".join(rows)}</tbody></table>'
        mine = self.db.one("SELECT * FROM reviews WHERE place_id = ? AND mine = 1", (pid,))
        others = self.db.all("SELECT * FROM reviews WHERE place_id = ? AND mine = 0 ORDER BY created_at DESC", (pid,))
        saved_in = self.db.all("SELECT l.id, l.name FROM lists l JOIN list_items i ON i.list_id = l.id WHERE i.place_id = ? ORDER BY l.id",
                               (pid,))
        price = f' · <span class="price">{"$" * p["price_level"]}</span>' if p["price_level"] else ""
        banner = (f'<div class="alert warn" role="note" data-closed-banner>{esc(line)}</div>'
                  if p["status"] != "open" else "")
        actions = (f'<nav class="actions" aria-label="{esc(self.t("Place actions"))}">'
                   f'<a class="button primary" href="/directions?to={pid}" data-action="directions">{text.ICONS["directions"]}{esc(self.t("Directions"))}</a>'
                   f'<a class="button" href="/places/{pid}/save" data-action="save">{text.ICONS["save"]}{esc(self.t("Save"))}</a>'
                   f'<a class="button" href="/places/{pid}/share" data-action="share">{text.ICONS["share"]}{esc(self.t("Share"))}</a>'
                   f'<a class="button" href="/places/{pid}/review" data-action="review">{text.ICONS["star"]}'
                   f'{esc(self.t("Edit my review") if mine else self.t("Write a review"))}</a>'
                   f'<a class="button" href="/places/{pid}/suggest" data-action="suggest">{text.ICONS["edit"]}{esc(self.t("Suggest an edit"))}</a></nav>')
        saved = (f'<p class="saved" data-saved-in="{",".join(str(s["id"]) for s in saved_in)}">{esc(self.t("Saved in"))}: '
                 + ", ".join(f'<a href="/lists/{s["id"]}">{esc(self._list_name(s))}</a>' for s in saved_in) + "</p>") if saved_in else ""
        travel = self._travel_chips(pid)
        facts = (f'<dl class="facts"><dt>{esc(self.t("Address"))}</dt><dd data-fact="address">{esc(p["address"])}, {esc(p["district"])}, Port Alder</dd>'
                 f'<dt>{esc(self.t("Phone"))}</dt><dd data-fact="phone"><a href="tel:{esc(p["phone"].replace(" ", "").replace("-", ""))}">{esc(p["phone"])}</a></dd>'
                 f'<dt>{esc(self.t("Status"))}</dt><dd class="state {state}" data-fact="status" data-state="{state}">{esc(line)}</dd></dl>')
        photos = "".join(f'<img src="/places/{pid}/photo/{n}" alt="{esc(self.t("Photo"))} {n + 1}: {esc(p["name"])}" width="160" height="110" loading="lazy">'
                         for n in range(min(4, p["photo_count"])))
        my_review = ""
        if mine:
            my_review = (f'<article class="review mine" data-review-id="{mine["id"]}" data-stars="{mine["stars"]}" data-mine="1">'
                         f'<h3>{esc(self.t("Your review"))}</h3>{self._stars(mine["stars"])}<p>{esc(mine["body"])}</p>'
                         f'<p class="muted">{esc(text.date(mine["created_at"], self._loc()))}</p>'
                         f'<a href="/places/{pid}/review" data-action="edit-review">{esc(self.t("Edit"))}</a> · '
                         f'<a href="/places/{pid}/review/delete" data-action="delete-review">{esc(self.t("Delete"))}</a></article>')
        reviews = "".join(f'<article class="review" data-review-id="{r["id"]}" data-stars="{r["stars"]}"><h3>{esc(r["author"])}</h3>'
                          f'{self._stars(r["stars"])}<p>{esc(r["body"])}</p><p class="muted">{esc(text.date(r["created_at"], self._loc()))}</p></article>'
                          for r in others)
        more = (f'<p class="muted" data-review-total="{p["review_count"]}">{esc(self.t("Showing"))} {len(others) + (1 if mine else 0)} '
                f'{esc(self.t("of"))} {esc(text.number(p["review_count"], self._loc()))} {esc(self.t("reviews"))}</p>')
        body = (f'<div class="place" data-place-id="{pid}" data-status="{p["status"]}" data-open="{1 if state == "open" else 0}">'
                f'<p class="sub">{self._stars(p["rating"], p["review_count"])}{price} · {esc(self._label(p))}</p>{banner}{actions}{saved}'
                f'<div class="columns"><div>{facts}{travel}<h2>{esc(self.t("Hours"))}</h2>{hours_table}'
                f'<h2>{esc(self.t("Popular times"))}</h2>{self._popular(p, today if day is None else int(day) % 7)}</div>'
                f'<div><div class="photos" aria-label="{esc(self.t("Photos"))}">{photos}</div>'
                f'<div class="mini">{self._map([p], label=p["name"])}</div></div></div>'
                f'<section class="reviews" aria-label="{esc(self.t("Reviews"))}"><h2>{esc(self.t("Reviews"))}</h2>{my_review}{more}{reviews}</section></div>')
        return self._page(p["name"], body)

    def _travel_chips(self, pid: int) -> str:
        rows = {r["mode"]: r for r in self.db.all("SELECT * FROM travel_times WHERE place_id = ? AND origin = 'home'", (pid,))}
        if not rows:
            return ""
        chips = "".join(f'<a class="chip" href="/directions?from=home&amp;to={pid}&amp;mode={m}" data-travel-mode="{m}" '
                        f'data-minutes="{rows[m]["minutes"]}">{text.ICONS[m]}{esc(self.t(text.MODE_LABELS[m]))} '
                        f'{esc(text.duration(rows[m]["minutes"], self._loc()))}</a>' for m in MODES if m in rows)
        return f'<div class="travel" aria-label="{esc(self.t("From home, leaving now"))}"><h2>{esc(self.t("From home, leaving now"))}</h2>{chips}</div>'

    def _popular(self, place: dict[str, Any], day: int) -> str:
        hours = self._hours(place["id"])[day]
        peak = {"restaurant": 19.5, "bar": 22.0, "cafe": 10.0, "bakery": 8.5, "museum": 14.0, "park": 15.0,
                "supermarket": 17.5}.get(place["category"], 13.0)
        bars = []
        for hour in range(6, 24):
            minute = hour * 60
            is_open = any(o <= minute < c for o, c in hours)
            digest = hashlib.sha256(f"{place['id']}:{day}:{hour}".encode()).digest()
            level = 0 if not is_open else max(5, min(100, int(100 * math.exp(-((hour - peak) ** 2) / 8) + digest[0] % 25)))
            bars.append(f'<rect x="{(hour - 6) * 20}" y="{100 - level}" width="16" height="{level}" data-hour="{hour}" data-level="{level}"/>')
        days = "".join(f'<a href="/places/{place["id"]}?day={d}" data-day="{d}"{" aria-current=true" if d == day else ""}>'
                       f'{esc(text.weekday(d, self._loc(), short=True))}</a>' for d in range(7))
        return (f'<nav class="days" aria-label="{esc(self.t("Day"))}">{days}</nav><svg class="popular" viewBox="0 0 360 110" role="img" '
                f'aria-label="{esc(self.t("Popular times"))}: {esc(text.weekday(day, self._loc()))}">{"".join(bars)}</svg>')

    async def photo(self, request: Request) -> Response:
        p = self._place(request.path_params["pid"])
        n = request.path_params["n"]
        digest = hashlib.sha256(f"{p['id']}:{n}".encode()).digest()
        hue = digest[0] * 360 // 256
        shapes = "".join(f'<rect x="{digest[2 + k] % 120}" y="{40 + digest[5 + k] % 50}" width="{30 + digest[8 + k] % 50}" '
                         f'height="{20 + digest[11 + k] % 40}" fill="hsl({(hue + 40 * k) % 360} 45% {45 + 10 * k}%)"/>' for k in range(3))
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="160" height="110" viewBox="0 0 160 110">'
               f'<rect width="160" height="110" fill="hsl({hue} 35% 82%)"/>{shapes}</svg>')
        return Response(svg, media_type="image/svg+xml")

    # --- saving ---

    def _list_name(self, row: dict[str, Any]) -> str:
        name = str(row["name"])
        return self.t(name) if name in ("Favourites", "Want to go") else name

    async def save(self, request: Request) -> Response:
        p = self._place(request.path_params["pid"])
        lists = self.db.all("SELECT * FROM lists ORDER BY id")
        have = {r["list_id"] for r in self.db.all("SELECT list_id FROM list_items WHERE place_id = ?", (p["id"],))}
        error = ""
        if request.method == "POST":
            form = await request.form()
            chosen = {int(str(v)) for v in form.getlist("list") if str(v).isdigit()}
            try:
                new_name = clean_text(form.get("new_list"), 80)
                note = clean_text(form.get("note"), 500)
                if chosen - {r["id"] for r in lists}:
                    raise Refused("No such list.", 404)
                if new_name and self.db.scalar("SELECT 1 FROM lists WHERE name = ?", (new_name,)):
                    raise Refused("A list with that name exists already: tick it instead.")
            except Refused as exc:
                error = exc.message
            else:
                stamp = self._stamp()
                if new_name:
                    chosen.add(self.db.insert("INSERT INTO lists (name, kind, description, created_at) VALUES (?, 'custom', '', ?)",
                                              (new_name, stamp)))
                for lid in chosen - have:
                    self.db.execute("INSERT INTO list_items (list_id, place_id, note, added_at) VALUES (?,?,?,?)", (lid, p["id"], note, stamp))
                for lid in have - chosen:
                    self.db.execute("DELETE FROM list_items WHERE list_id = ? AND place_id = ?", (lid, p["id"]))
                return RedirectResponse(f"/places/{p['id']}", status_code=303)
        boxes = "".join(f'<label class="check"><input type="checkbox" name="list" value="{r["id"]}" data-list="{r["id"]}"'
                        f'{" checked" if r["id"] in have else ""}> {esc(self._list_name(r))}</label>' for r in lists)
        body = ((f'<div class="alert" role="alert" data-error>{esc(self.t(error))}</div>' if error else "")
                + f'<div class="dialog" role="dialog" aria-modal="true" aria-labelledby="sv-h"><h2 id="sv-h">{esc(self.t("Save to lists"))}</h2>'
                f'<form method="post" action="/places/{p["id"]}/save" class="form" data-form="save"><fieldset><legend>{esc(self.t("Your lists"))}</legend>{boxes}</fieldset>'
                f'<label for="sv-new">{esc(self.t("New list"))}</label><input id="sv-new" name="new_list" maxlength="80" data-field="new-list">'
                f'<label for="sv-note">{esc(self.t("Note (for lists it is added to now)"))}</label>'
                f'<textarea id="sv-note" name="note" rows="3" maxlength="500" data-field="note"></textarea>'
                f'<div class="row"><button type="submit" class="primary" data-action="confirm-save">{esc(self.t("Save"))}</button>'
                f'<a class="button" href="/places/{p["id"]}" data-action="cancel">{esc(self.t("Cancel"))}</a></div></form></div>')
        return self._page(f'{self.t("Save")}: {p["name"]}', body, status=400 if error else 200)

    # --- my review ---

    async def review(self, request: Request) -> Response:
        p = self._place(request.path_params["pid"])
        mine = self.db.one("SELECT * FROM reviews WHERE place_id = ? AND mine = 1", (p["id"],))
        error = ""
        stars = str(mine["stars"]) if mine else ""
        body_text = mine["body"] if mine else ""
        if request.method == "POST":
            form = await request.form()
            stars, body_text = str(form.get("stars", "") or ""), str(form.get("body", "") or "")
            try:
                if stars not in ("1", "2", "3", "4", "5"):
                    raise Refused("Choose from 1 to 5 stars.")
                clean = clean_text(body_text)
            except Refused as exc:
                error = exc.message
            else:
                if mine:
                    if (int(stars), clean) != (mine["stars"], mine["body"]):
                        self.db.execute("UPDATE reviews SET stars = ?, body = ?, edited_at = ? WHERE id = ?",
                                        (int(stars), clean, self._stamp(), mine["id"]))
                else:
                    self.db.execute("INSERT INTO reviews (place_id, author, stars, body, created_at, mine) VALUES (?,?,?,?,?,1)",
                                    (p["id"], ME_NAME, int(stars), clean, self._stamp()))
                return RedirectResponse(f"/places/{p['id']}", status_code=303)
        radios = "".join(f'<label class="star-pick"><input type="radio" name="stars" value="{n}" data-stars="{n}"'
                         f'{" checked" if stars == str(n) else ""} aria-label="{n} {esc(self.t("stars") if n > 1 else self.t("star"))}">'
                         f'<span aria-hidden="true">{"★" * n}</span></label>' for n in range(1, 6))
        body = ((f'<div class="alert" role="alert" data-error>{esc(self.t(error))}</div>' if error else "")
                + f'<div class="dialog" role="dialog" aria-modal="true" aria-labelledby="rv-h"><h2 id="rv-h">{esc(p["name"])}</h2>'
                f'<form method="post" action="/places/{p["id"]}/review" class="form" data-form="review">'
                f'<fieldset role="radiogroup" aria-label="{esc(self.t("Your rating"))}"><legend>{esc(self.t("Your rating"))}</legend>{radios}</fieldset>'
                f'<label for="rv-body">{esc(self.t("Your review"))}</label><textarea id="rv-body" name="body" rows="6" maxlength="{MAX_TEXT}" '
                f'data-field="body">{esc(body_text)}</textarea><p class="muted">{esc(self.t("Posted publicly as"))} {esc(ME_NAME)}.</p>'
                f'<div class="row"><button type="submit" class="primary" data-action="post-review">{esc(self.t("Post"))}</button>'
                f'<a class="button" href="/places/{p["id"]}" data-action="cancel">{esc(self.t("Cancel"))}</a></div></form></div>')
        return self._page(self.t("Edit my review") if mine else self.t("Write a review"), body, status=400 if error else 200)

    async def delete_review(self, request: Request) -> Response:
        p = self._place(request.path_params["pid"])
        mine = self.db.one("SELECT * FROM reviews WHERE place_id = ? AND mine = 1", (p["id"],))
        if mine is None:
            raise Refused("You have not reviewed this place.", 404)
        if request.method == "POST":
            self.db.execute("DELETE FROM reviews WHERE id = ?", (mine["id"],))
            return RedirectResponse(f"/places/{p['id']}", status_code=303)
        body = (f'<div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="dr-h"><h2 id="dr-h">{esc(self.t("Delete your review?"))}</h2>'
                f'<p>{esc(p["name"])}: {self._stars(mine["stars"])}</p><form method="post" action="/places/{p["id"]}/review/delete" class="row">'
                f'<button type="submit" class="danger" data-action="confirm-delete">{esc(self.t("Delete"))}</button>'
                f'<a class="button" href="/places/{p["id"]}" data-action="cancel">{esc(self.t("Cancel"))}</a></form></div>')
        return self._page(self.t("Delete your review?"), body)

    # --- suggest an edit ---

    async def suggest(self, request: Request) -> Response:
        p = self._place(request.path_params["pid"])
        error = ""
        if request.method == "POST":
            form = await request.form()
            field = str(form.get("field", "") or "")
            try:
                note = clean_text(form.get("note"), 500)
                if field == "phone":
                    phone = parse_phone(str(form.get("phone", "") or ""))
                    if phone == p["phone"]:
                        raise Refused("That is the number shown already.")
                    values: tuple[Any, ...] = (None, None, None, 0, phone)
                elif field == "hours":
                    day = str(form.get("weekday", "") or "")
                    if day not in [str(d) for d in range(7)]:
                        raise Refused("Choose the day the hours are for.")
                    if form.get("closed"):
                        values = (int(day), None, None, 1, None)
                    else:
                        opens = parse_time(str(form.get("opens", "") or ""))
                        closes = parse_time(str(form.get("closes", "") or ""), closing=True)
                        if closes <= opens:
                            closes += 1440
                        if closes - opens > 1440:
                            raise Refused("Enter times as HH:MM (24-hour), e.g. 09:30.")
                        values = (int(day), opens, closes, 0, None)
                else:
                    raise Refused("Choose what to correct: hours or phone.")
            except Refused as exc:
                error = exc.message
            else:
                self.db.execute("INSERT INTO pending_edits (place_id, field, weekday, opens, closes, closed, phone, note, status, submitted_at) "
                                "VALUES (?,?,?,?,?,?,?,?, 'pending', ?)", (p["id"], field, *values, note, self._stamp()))
                return RedirectResponse("/contributions?sent=1", status_code=303)
        days = "".join(f'<option value="{d}">{esc(text.weekday(d, self._loc()))}</option>' for d in range(7))
        body = ((f'<div class="alert" role="alert" data-error>{esc(self.t(error))}</div>' if error else "")
                + f'<div class="dialog" role="dialog" aria-modal="true" aria-labelledby="sg-h"><h2 id="sg-h">{esc(self.t("Suggest an edit"))}: {esc(p["name"])}</h2>'
                f'<p class="muted">{esc(self.t("Edits are checked before they show on the map."))}</p>'
                f'<form method="post" action="/places/{p["id"]}/suggest" class="form" data-form="suggest">'
                f'<fieldset><legend>{esc(self.t("What is wrong?"))}</legend>'
                f'<label class="check"><input type="radio" name="field" value="hours" data-field="field-hours" checked> {esc(self.t("Hours"))}</label>'
                f'<label class="check"><input type="radio" name="field" value="phone" data-field="field-phone"> {esc(self.t("Phone"))}</label></fieldset>'
                f'<label for="sg-day">{esc(self.t("Day"))}</label><select id="sg-day" name="weekday" data-field="weekday">{days}</select>'
                f'<label for="sg-open">{esc(self.t("Opens"))}</label><input id="sg-open" type="time" name="opens" data-field="opens">'
                f'<label for="sg-close">{esc(self.t("Closes"))}</label><input id="sg-close" type="time" name="closes" data-field="closes">'
                f'<label class="check"><input type="checkbox" name="closed" value="1" data-field="closed"> {esc(self.t("Closed all day"))}</label>'
                f'<label for="sg-phone">{esc(self.t("Correct phone number"))}</label><input id="sg-phone" type="tel" name="phone" data-field="phone" '
                f'placeholder="207-555-0142">'
                f'<label for="sg-note">{esc(self.t("Note for the reviewers (optional)"))}</label><input id="sg-note" name="note" maxlength="500" data-field="note">'
                f'<div class="row"><button type="submit" class="primary" data-action="send-edit">{esc(self.t("Send"))}</button>'
                f'<a class="button" href="/places/{p["id"]}" data-action="cancel">{esc(self.t("Cancel"))}</a></div></form></div>')
        return self._page(self.t("Suggest an edit"), body, status=400 if error else 200)

    # --- share ---

    async def share(self, request: Request) -> Response:
        p = self._place(request.path_params["pid"])
        link = f"https://waypoint.example/p/{p['id']}"
        error, sent = "", ""
        if request.method == "POST":
            form = await request.form()
            channel = str(form.get("channel", "") or "")
            try:
                if channel == "link":
                    values = ("link", "", "")
                elif channel == "email":
                    to = str(form.get("to", "") or "").strip()
                    local, at, domain = to.partition("@")
                    if not at or not local or "." not in domain or " " in to or len(to) > 200:
                        raise Refused("Enter one email address, e.g. sam@example.com.")
                    values = ("email", to.lower(), clean_text(form.get("message"), 1000))
                else:
                    raise Refused("Choose how to share: copy the link or send it by email.")
            except Refused as exc:
                error = exc.message
            else:
                self.db.insert("INSERT INTO shares (place_id, channel, recipient, message, created_at) VALUES (?,?,?,?,?)",
                               (p["id"], *values, self._stamp()))
                sent = self.t("Link copied.") if values[0] == "link" else f'{self.t("Sent to")} {values[1]}.'
        body = ((f'<div class="alert" role="alert" data-error>{esc(self.t(error))}</div>' if error else "")
                + (f'<div class="flash" role="status" data-shared>{esc(sent)}</div>' if sent else "")
                + f'<div class="dialog" role="dialog" aria-modal="true" aria-labelledby="sh-h"><h2 id="sh-h">{esc(self.t("Share"))}: {esc(p["name"])}</h2>'
                f'<label for="sh-link">{esc(self.t("Link"))}</label><input id="sh-link" readonly value="{esc(link)}" data-field="link">'
                f'<form method="post" action="/places/{p["id"]}/share" class="inline"><input type="hidden" name="channel" value="link">'
                f'<button type="submit" data-action="copy-link" data-copy="{esc(link)}">{esc(self.t("Copy link"))}</button></form>'
                f'<form method="post" action="/places/{p["id"]}/share" class="form" data-form="share-email"><input type="hidden" name="channel" value="email">'
                f'<label for="sh-to">{esc(self.t("Send to (email)"))}</label><input id="sh-to" type="email" name="to" data-field="to">'
                f'<label for="sh-msg">{esc(self.t("Message (optional)"))}</label><textarea id="sh-msg" name="message" rows="2" data-field="message"></textarea>'
                f'<div class="row"><button type="submit" class="primary" data-action="send-share">{esc(self.t("Send"))}</button>'
                f'<a class="button" href="/places/{p["id"]}" data-action="done">{esc(self.t("Done"))}</a></div></form></div>')
        return self._page(self.t("Share"), body, status=400 if error else 200)

    # --- directions ---

    def _end(self, raw: str, which: str) -> tuple[str, Spot, str]:
        """(key, spot, name) of a trip's end: home, work, a place id, or a place's exact name."""
        value = raw.strip()
        low = value.casefold()
        for key in ORIGINS:
            if low in (key, self.t(key.title()).casefold()):
                return key, ORIGINS[key], self.t(key.title())
        row = self.db.one("SELECT * FROM places WHERE id = ?", (int(value),)) if value.isdigit() else \
            next((r for r in self.db.all("SELECT * FROM places") if r["name"].casefold() == low), None)
        if row is None:
            raise Refused(f'No place called “{value}”: pick one from the suggestions ({which}).', 400)
        return str(row["id"]), Spot(row["edge"], row["along"]), row["name"]

    def _depart(self, raw: str) -> dt.datetime:
        if raw in ("", "now"):
            return self.now()
        try:
            when = dt.datetime.fromisoformat(raw)
        except ValueError:
            raise Refused("Enter the departure as a date and time.") from None
        if abs((when - self.now()).days) > 60:
            raise Refused("Timetables reach 60 days from today.")
        return when.replace(second=0, microsecond=0, tzinfo=None)

    async def directions(self, request: Request) -> Response:
        q = self.query(request)
        raw_from, raw_to = str(q["from"] or ""), str(q["to"] or "")
        mode = str(q["mode"] or "drive")
        avoid_tolls, avoid_highways = bool(q["avoid_tolls"]), bool(q["avoid_highways"])
        error, result = "", ""
        trip_line: list[tuple[float, float]] | None = None
        ends: list[tuple[str, Spot, str]] = []
        depart_raw = str(q["depart"] or "")
        if raw_from and raw_to:
            try:
                ends = [self._end(raw_from, self.t("From")), self._end(raw_to, self.t("To"))]
                when = self._depart(depart_raw)
                if ends[0][0] == ends[1][0]:
                    raise Refused("Start and destination are the same place.")
            except Refused as exc:
                error = exc.message
            else:
                minute = when.hour * 60 + when.minute
                trips: dict[str, Trip | None] = {
                    m: route(ends[0][1], ends[1][1], m, weekday=when.weekday(), minute=minute,
                             avoid_tolls=avoid_tolls and m == "drive", avoid_highways=avoid_highways and m == "drive") for m in MODES}
                result = self._trip_html(trips, mode, when, ends, raw_from, raw_to, q)
                self._remember({"kind": "directions", "from": ends[0][0], "to": ends[1][0], "mode": mode})
                shown_trip = trips[mode]
                trip_line = shown_trip.points if shown_trip and shown_trip.points else [ends[0][1].xy, ends[1][1].xy]
        form = self._directions_form(raw_from, raw_to, mode, avoid_tolls, avoid_highways, depart_raw)
        body = ((f'<div class="alert" role="alert" data-error>{esc(self.t(error))}</div>' if error else "")
                + f'<div class="explore"><section class="panel" aria-label="{esc(self.t("Directions"))}">{form}{result}</section>'
                f'<section class="mapbox" aria-label="{esc(self.t("Map"))}">{self._map([], trip=trip_line)}</section></div>')
        return self._page(self.t("Directions"), body, status=400 if error else 200, wide=True)

    def _directions_form(self, raw_from: str, raw_to: str, mode: str, tolls: bool, highways: bool, depart: str) -> str:
        def shown(raw: str) -> str:
            if raw.isdigit():
                row = self.db.one("SELECT name FROM places WHERE id = ?", (int(raw),))
                return str(row["name"]) if row else raw
            return self.t(raw.title()) if raw in ORIGINS else raw

        names = "".join(f'<option value="{esc(r["name"])}"></option>' for r in self.db.all("SELECT name FROM places ORDER BY name"))
        modes = "".join(f'<label class="mode"><input type="radio" name="mode" value="{m}" data-mode-pick="{m}"{" checked" if m == mode else ""}>'
                        f'{text.ICONS[m]}<span>{esc(self.t(text.MODE_LABELS[m]))}</span></label>' for m in MODES)
        return (f'<form class="filters directions" method="get" action="/directions" data-form="directions">'
                f'<datalist id="place-names"><option value="{esc(self.t("Home"))}"></option><option value="{esc(self.t("Work"))}"></option>{names}</datalist>'
                f'<label>{esc(self.t("From"))}<input name="from" list="place-names" value="{esc(shown(raw_from) or self.t("Home"))}" data-field="from" autocomplete="off"></label>'
                f'<label>{esc(self.t("To"))}<input name="to" list="place-names" value="{esc(shown(raw_to))}" data-field="to" autocomplete="off"></label>'
                f'<fieldset class="modes" role="radiogroup" aria-label="{esc(self.t("Travel mode"))}">{modes}</fieldset>'
                f'<label class="check"><input type="checkbox" name="avoid_tolls" value="1" data-field="avoid-tolls"{" checked" if tolls else ""}> '
                f'{esc(self.t("Avoid tolls"))}</label>'
                f'<label class="check"><input type="checkbox" name="avoid_highways" value="1" data-field="avoid-highways"{" checked" if highways else ""}> '
                f'{esc(self.t("Avoid highways"))}</label>'
                f'<label>{esc(self.t("Leave at (empty: now)"))}<input type="datetime-local" name="depart" value="{esc(depart if depart != "now" else "")}" data-field="depart"></label>'
                f'<button type="submit" class="primary" data-action="get-directions">{esc(self.t("Get directions"))}</button></form>')

    def _trip_html(self, trips: dict[str, Trip | None], mode: str, when: dt.datetime, ends: list[tuple[str, Spot, str]],
                   raw_from: str, raw_to: str, q: dict[str, Any]) -> str:
        loc = self._loc()
        tabs = []
        for m in MODES:
            t = trips[m]
            params = {"from": ends[0][0], "to": ends[1][0], "mode": m}
            for k in ("depart", "avoid_tolls", "avoid_highways"):
                if q[k]:
                    params[k] = str(q[k])
            label = esc(text.duration(t.minutes, loc)) if t else esc(self.t("No route"))
            tabs.append(f'<a role="tab" href="/directions?{esc(urlencode(params))}" aria-selected="{"true" if m == mode else "false"}" '
                        f'data-mode="{m}" data-mode-minutes="{t.minutes if t else ""}">{text.ICONS[m]}{esc(self.t(text.MODE_LABELS[m]))} · {label}</a>')
        chosen = trips[mode]
        head = f'<nav class="tabs" role="tablist" aria-label="{esc(self.t("Travel modes"))}">{"".join(tabs)}</nav>'
        if chosen is None:
            return head + f'<p class="alert" role="alert" data-no-route>{esc(self.t("No route with these options."))}</p>'
        start_min = when.hour * 60 + when.minute
        arrive = start_min + chosen.minutes
        notes = []
        if chosen.tolls:
            notes.append(self.t("This route has tolls."))
        if chosen.highway:
            notes.append(self.t("This route uses the expressway."))
        if chosen.parking_s:
            notes.append(f'{self.t("Includes time to find parking")}: {text.duration(round(chosen.parking_s / 60), loc)}')
        summary = (f'<div class="summary" data-route data-mode="{mode}" data-route-minutes="{chosen.minutes}" '
                   f'data-route-distance-m="{round(chosen.distance_m)}" data-tolls="{int(chosen.tolls)}" data-highway="{int(chosen.highway)}">'
                   f'<p class="big">{esc(text.duration(chosen.minutes, loc))}</p><p>{esc(text.distance(chosen.distance_m, loc))} · '
                   f'{esc(self.t("leave"))} {esc(text.weekday(when.weekday(), loc, short=True))} {esc(self._clock(start_min))} · '
                   f'{esc(self.t("arrive"))} {esc(self._clock(arrive))}</p>'
                   + "".join(f'<p class="muted">{esc(n)}</p>' for n in notes) + "</div>")
        items = []
        if mode == "transit":
            for leg in chosen.legs:
                if leg.kind == "walk":
                    items.append(f'<li data-leg="walk">{text.ICONS["walk"]}{esc(self.t("Walk"))} {esc(text.distance(leg.distance_m, loc))} '
                                 f'({esc(text.duration(max(1, round((leg.arrive_s - leg.depart_s) / 60)), loc))})</li>')
                else:
                    items.append(f'<li data-leg="ride" data-line="{esc(leg.line)}">{text.ICONS["transit"]}<strong>{esc(leg.line)}</strong> '
                                 f'{esc(self.t("towards"))} {esc(leg.headsign)}: {esc(leg.board)} {esc(self._clock(int(leg.depart_s // 60)))} → '
                                 f'{esc(leg.alight)} {esc(self._clock(int(leg.arrive_s // 60)))} ({leg.stops} {esc(self.t("stops") if leg.stops > 1 else self.t("stop"))})</li>')
        else:
            for s in chosen.steps:
                verb = {"depart": self.t("Head"), "left": self.t("Turn left onto"), "right": self.t("Turn right onto"),
                        "straight": self.t("Continue onto")}[s.turn]
                what = f'{verb} {self.t(s.heading)} {self.t("on")} {s.street}' if s.turn == "depart" else f"{verb} {s.street}"
                items.append(f'<li data-step="{s.turn}">{esc(what)} · {esc(text.distance(s.distance_m, loc))}</li>')
            items.append(f'<li data-step="arrive">{esc(self.t("Arrive at"))} {esc(ends[1][2])}</li>')
        return head + summary + f'<ol class="steps" aria-label="{esc(self.t("Steps"))}">{"".join(items)}</ol>'

    # --- lists ---

    async def lists(self, request: Request) -> Response:
        error = ""
        if request.method == "POST":
            form = await request.form()
            try:
                name = clean_text(form.get("name"), 80)
                if not name:
                    raise Refused("Give the list a name.")
                if self.db.scalar("SELECT 1 FROM lists WHERE name = ?", (name,)):
                    raise Refused("A list with that name exists already.")
                description = clean_text(form.get("description"), 300)
            except Refused as exc:
                error = exc.message
            else:
                lid = self.db.insert("INSERT INTO lists (name, kind, description, created_at) VALUES (?, 'custom', ?, ?)",
                                     (name, description, self._stamp()))
                return RedirectResponse(f"/lists/{lid}", status_code=303)
        rows = self.db.all("SELECT l.*, (SELECT COUNT(*) FROM list_items i WHERE i.list_id = l.id) AS n FROM lists l ORDER BY l.id")
        cards = "".join(f'<li class="card list-card" data-list-id="{r["id"]}" data-kind="{r["kind"]}">{text.ICONS["save"]}'
                        f'<a href="/lists/{r["id"]}">{esc(self._list_name(r))}</a> <span class="muted">{esc(text.number(r["n"], self._loc()))} '
                        f'{esc(self.t("places"))}</span></li>' for r in rows)
        body = ((f'<div class="alert" role="alert" data-error>{esc(self.t(error))}</div>' if error else "")
                + f'<ul class="cards" aria-label="{esc(self.t("Your lists"))}">{cards}</ul>'
                f'<form method="post" action="/lists" class="form newlist" data-form="new-list"><h2>{esc(self.t("New list"))}</h2>'
                f'<label for="nl-name">{esc(self.t("Name"))}</label><input id="nl-name" name="name" maxlength="80" required data-field="list-name">'
                f'<label for="nl-desc">{esc(self.t("Description (optional)"))}</label><input id="nl-desc" name="description" maxlength="300" data-field="list-description">'
                f'<button type="submit" class="primary" data-action="create-list">{esc(self.t("Create list"))}</button></form>')
        return self._page(self.t("Saved"), body, status=400 if error else 200)

    def _list(self, lid: int) -> dict[str, Any]:
        row = self.db.one("SELECT * FROM lists WHERE id = ?", (lid,))
        if row is None:
            raise Refused("No such list.", 404)
        return row

    async def one_list(self, request: Request) -> Response:
        lst = self._list(request.path_params["lid"])
        items = self.db.all("SELECT i.id AS item_id, i.note, i.added_at, p.* FROM list_items i JOIN places p ON p.id = i.place_id "
                            "WHERE i.list_id = ? ORDER BY i.added_at DESC, i.id DESC", (lst["id"],))

        def row(r: dict[str, Any]) -> str:
            state, line = self._status_line(r)
            return (f'<li class="card place-card" data-place-id="{r["id"]}" data-item-id="{r["item_id"]}" data-status="{r["status"]}" '
                    f'data-open="{1 if state == "open" else 0}"><label class="pick"><input type="checkbox" name="place" value="{r["id"]}" '
                    f'form="bulk" data-select="{r["id"]}" aria-label="{esc(self.t("Select"))} {esc(r["name"])}"></label>'
                    f'<a class="name" href="/places/{r["id"]}">{esc(r["name"])}</a>'
                    f'<div class="meta">{self._stars(r["rating"], r["review_count"])} <span>{esc(self._label(r))}</span></div>'
                    f'<div class="state {state}" data-state="{state}">{esc(line)}</div>'
                    f'<form method="post" action="/lists/{lst["id"]}/note/{r["id"]}" class="note-form">'
                    f'<label>{esc(self.t("Note"))}<input name="note" value="{esc(r["note"])}" maxlength="500" data-note-of="{r["id"]}"></label>'
                    f'<button type="submit" data-action="save-note" aria-label="{esc(self.t("Save note for"))} {esc(r["name"])}">{esc(self.t("Save note"))}</button></form></li>')

        listing = "".join(row(r) for r in items) or f'<li class="empty" data-empty>{esc(self.t("No places in this list yet."))}</li>'
        tools = (f'<form id="bulk" method="post" action="/lists/{lst["id"]}/remove" class="row">'
                 f'<button type="submit" class="danger" data-action="remove-selected">{esc(self.t("Remove selected"))}</button></form>')
        delete = (f'<a class="button" href="/lists/{lst["id"]}/delete" data-action="delete-list">{esc(self.t("Delete list"))}</a>'
                  if lst["kind"] == "custom" else "")
        body = (f'<p class="muted">{esc(lst["description"])}</p><div class="toolbar">{tools}{delete}</div>'
                f'<ul class="cards" data-list="{lst["id"]}" aria-label="{esc(self._list_name(lst))}">{listing}</ul>')
        return self._page(self._list_name(lst), body)

    async def remove_items(self, request: Request) -> Response:
        lst = self._list(request.path_params["lid"])
        form = await request.form()
        chosen = [int(str(v)) for v in form.getlist("place") if str(v).isdigit()]
        if not chosen:
            raise Refused("Select the places to remove first.")
        for pid in chosen:
            self.db.execute("DELETE FROM list_items WHERE list_id = ? AND place_id = ?", (lst["id"], pid))
        return RedirectResponse(f"/lists/{lst['id']}", status_code=303)

    async def edit_note(self, request: Request) -> Response:
        lst = self._list(request.path_params["lid"])
        pid = request.path_params["pid"]
        item = self.db.one("SELECT * FROM list_items WHERE list_id = ? AND place_id = ?", (lst["id"], pid))
        if item is None:
            raise Refused("That place is not in this list.", 404)
        note = clean_text((await request.form()).get("note"), 500)
        if note != item["note"]:
            self.db.execute("UPDATE list_items SET note = ? WHERE id = ?", (note, item["id"]))
        return RedirectResponse(f"/lists/{lst['id']}", status_code=303)

    async def delete_list(self, request: Request) -> Response:
        lst = self._list(request.path_params["lid"])
        if lst["kind"] != "custom":
            raise Refused("Favourites and Want to go cannot be deleted.")
        if request.method == "POST":
            self.db.execute("DELETE FROM list_items WHERE list_id = ?", (lst["id"],))
            self.db.execute("DELETE FROM lists WHERE id = ?", (lst["id"],))
            return RedirectResponse("/lists", status_code=303)
        n = self.db.scalar("SELECT COUNT(*) FROM list_items WHERE list_id = ?", (lst["id"],))
        body = (f'<div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="dl-h"><h2 id="dl-h">{esc(self.t("Delete this list?"))}</h2>'
                f'<p>{esc(lst["name"])}: {n} {esc(self.t("places"))}</p><form method="post" action="/lists/{lst["id"]}/delete" class="row">'
                f'<button type="submit" class="danger" data-action="confirm-delete">{esc(self.t("Delete"))}</button>'
                f'<a class="button" href="/lists/{lst["id"]}" data-action="cancel">{esc(self.t("Cancel"))}</a></form></div>')
        return self._page(self.t("Delete this list?"), body)

    # --- contributions and history ---

    async def contributions(self, request: Request) -> Response:
        reviews = self.db.all("SELECT r.*, p.name FROM reviews r JOIN places p ON p.id = r.place_id WHERE r.mine = 1 ORDER BY r.created_at DESC")
        edits = self.db.all("SELECT e.*, p.name FROM pending_edits e JOIN places p ON p.id = e.place_id ORDER BY e.id DESC")
        flash = (f'<div class="flash" role="status" data-sent>{esc(self.t("Thanks: your edit is pending review."))}</div>'
                 if request.query_params.get("sent") else "")

        def edit_row(e: dict[str, Any]) -> str:
            if e["field"] == "phone":
                what = f'{self.t("Phone")}: {e["phone"]}'
            elif e["closed"]:
                what = f'{self.t("Hours")}: {text.weekday(e["weekday"], self._loc())} {self.t("Closed")}'
            else:
                what = f'{self.t("Hours")}: {text.weekday(e["weekday"], self._loc())} {self._clock(e["opens"])}–{self._clock(e["closes"])}'
            act = (f'<form method="post" action="/edits/{e["id"]}/withdraw" class="inline"><button type="submit" data-action="withdraw">'
                   f'{esc(self.t("Withdraw"))}</button></form>' if e["status"] == "pending" else "")
            return (f'<li class="card" data-edit-id="{e["id"]}" data-status="{e["status"]}"><a href="/places/{e["place_id"]}">{esc(e["name"])}</a> '
                    f'· {esc(what)} · <span class="badge">{esc(self.t(e["status"].title()))}</span> {act}</li>')

        body = (flash + f'<h2>{esc(self.t("Your reviews"))}</h2><ul class="cards" aria-label="{esc(self.t("Your reviews"))}">'
                + "".join(f'<li class="card" data-review-id="{r["id"]}" data-place-id="{r["place_id"]}"><a href="/places/{r["place_id"]}">'
                          f'{esc(r["name"])}</a> {self._stars(r["stars"])}<p>{esc(r["body"])}</p></li>' for r in reviews)
                + f'</ul><h2>{esc(self.t("Your suggested edits"))}</h2><ul class="cards" aria-label="{esc(self.t("Your suggested edits"))}">'
                + "".join(edit_row(e) for e in edits) + "</ul>")
        return self._page(self.t("Contributions"), body)

    async def withdraw_edit(self, request: Request) -> Response:
        e = self.db.one("SELECT * FROM pending_edits WHERE id = ?", (request.path_params["eid"],))
        if e is None:
            raise Refused("No such edit.", 404)
        if e["status"] != "pending":
            raise Refused("Only a pending edit can be withdrawn.")
        self.db.execute("UPDATE pending_edits SET status = 'withdrawn' WHERE id = ?", (e["id"],))
        return RedirectResponse("/contributions", status_code=303)

    async def history(self, _: Request) -> Response:
        entries = json.loads(self.db.scalar("SELECT entries FROM history WHERE id = 1") or "[]")
        items = "".join(self._history_item(e) for e in entries) or f'<li class="empty" data-empty>{esc(self.t("No history."))}</li>'
        body = (f'<ul class="recent" aria-label="{esc(self.t("Recent searches and directions"))}">{items}</ul>'
                f'<form method="post" action="/history/clear"><button type="submit" class="danger" data-action="clear-history">'
                f'{esc(self.t("Clear history"))}</button></form>')
        return self._page(self.t("History"), body)

    async def clear_history(self, _: Request) -> Response:
        self.db.execute("UPDATE history SET entries = '[]' WHERE id = 1")
        return RedirectResponse("/history", status_code=303)


APP = MapsApp
