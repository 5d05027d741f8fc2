"""The shop's and travel's seeded data reads as a real store's and a real timetable's (issue 32, item 3).

A policy trained on filler learns filler: a power bank at $1,095.99, every category exactly 50 products,
one flight a day on one airline. These read the seeded databases over several seeds, in process.
"""

from __future__ import annotations

import statistics

import pytest

from cua.tasks.apps.shop import ShopApp
from cua.tasks.apps.travel import TravelApp
from cua.tasks.apps.travel.seed import AIRLINES, ROUTES

SEEDS = [0, 1, 7]


@pytest.mark.parametrize("seed", SEEDS)
def test_shop_prices_fit_the_kind_and_end_like_store_prices(seed: int) -> None:
    app = ShopApp()
    app.reset(seed)

    def band(pattern: str) -> tuple[float, float]:
        row = app.db.one("SELECT MIN(price_cents) lo, MAX(price_cents) hi FROM products WHERE name LIKE ?", (pattern,))
        assert row is not None and row["lo"] is not None, pattern
        return row["lo"] / 100, row["hi"] / 100

    assert band("%Power Bank%")[1] < 100
    assert band("%Phone Case%")[1] < 60
    lo, hi = band("% Laptop%")
    assert lo >= 200 and 900 <= hi <= 3000
    assert band("%Smartphone%")[0] >= 100
    cents = [r["c"] for r in app.db.all("SELECT price_cents % 100 AS c FROM products")]
    assert cents.count(99) / len(cents) > 0.5, "most prices end in .99"
    assert set(cents) <= {99, 95, 49, 0}


@pytest.mark.parametrize("seed", SEEDS)
def test_shop_categories_have_a_long_tail_and_fitting_brands(seed: int) -> None:
    app = ShopApp()
    app.reset(seed)
    sizes = [r["n"] for r in app.db.all("SELECT COUNT(*) n FROM products GROUP BY category_id ORDER BY n")]
    assert len(sizes) == 8 and sizes[-1] >= 3 * sizes[0]
    brands = {(r["c"], r["b"]) for r in app.db.all(
        "SELECT c.slug c, b.name b FROM products p JOIN categories c ON c.id = p.category_id JOIN brands b ON b.id = p.brand_id")}
    assert ("laptops", "Zentek") in brands
    assert not {b for c, b in brands if c == "laptops"} & {"Cookwell", "Playbrite", "Penwright", "Trailhead"}
    reviews = [r["reviews"] for r in app.db.all("SELECT reviews FROM products")]
    assert statistics.median(reviews) < 100 and max(reviews) > 10 * statistics.median(reviews), "review counts are long-tailed"
    ratings = [r["rating"] for r in app.db.all("SELECT rating FROM products")]
    assert 4.0 <= statistics.median(ratings) <= 4.6


@pytest.mark.parametrize("seed", SEEDS)
def test_travel_airlines_number_their_flights_and_price_at_their_level(seed: int) -> None:
    app = TravelApp()
    app.reset(seed)
    prefix = {name: code for code, name, _ in AIRLINES}
    rows = app.db.all("SELECT number, airline FROM flights")
    assert len({r["airline"] for r in rows}) >= 4
    assert all(r["number"].split()[0] == prefix[r["airline"]] for r in rows)
    # on the same routes, the low-cost carrier undercuts the premium one
    fares = app.db.one(
        "SELECT AVG(CASE WHEN airline = 'BlueLine' THEN price END) low, AVG(CASE WHEN airline = 'Aurora Air' THEN price END) high "
        "FROM flights WHERE origin IN ('JFK', 'LAX', 'BOS', 'SFO', 'ORD', 'SEA') AND dest IN ('JFK', 'LAX', 'BOS', 'SFO', 'ORD', 'SEA')")
    assert fares is not None and fares["low"] * 1.2 < fares["high"]


@pytest.mark.parametrize("seed", SEEDS)
def test_travel_timetable_has_banks_stops_and_fitting_durations(seed: int) -> None:
    app = TravelApp()
    app.reset(seed)
    per_day = [r["n"] for r in app.db.all("SELECT COUNT(*) n FROM flights GROUP BY origin, dest, substr(depart, 1, 10)")]
    assert statistics.mean(per_day) >= 4
    hours = [int(r["h"]) for r in app.db.all("SELECT substr(depart, 12, 2) h FROM flights")]
    morning, midday = sum(6 <= h < 10 for h in hours), sum(10 <= h < 14 for h in hours)
    assert morning > 1.5 * midday, "departures come in a morning bank"
    for origin, dest, minutes, _ in ROUTES:
        nonstop = app.db.one("SELECT MIN(duration_min) lo, MAX(duration_min) hi FROM flights WHERE origin = ? AND dest = ? AND stops = 0",
                             (origin, dest))
        assert nonstop is not None and minutes * 0.85 <= nonstop["lo"] and nonstop["hi"] <= minutes * 1.15
        connecting = app.db.scalar("SELECT MIN(duration_min) FROM flights WHERE origin = ? AND dest = ? AND stops = 1", (origin, dest))
        assert connecting is None or connecting > nonstop["hi"]
    assert app.db.scalar("SELECT COUNT(*) FROM flights WHERE stops = 1") > 0.1 * len(hours)
    # fares rise as the date nears
    first, last = (app.db.scalar(f"SELECT AVG(price) FROM flights WHERE substr(depart, 1, 10) = (SELECT {f}(substr(depart, 1, 10)) FROM flights)")
                   for f in ("MIN", "MAX"))
    assert first > 1.2 * last
