"""Deterministic airports, ~1,500 flights with seat occupancy, saved cards and past trips.

Five airlines, each with its own flight-number prefix and fare level, fly daily timetables on every
route: several departures a day in morning and evening banks, nonstop and 1-stop, block times that fit
the distance and the wind, fares that move with the airline, hour, stops and how soon the date is.
"""

from __future__ import annotations

import datetime as dt
import random

from cua.tasks.apps.base import AppDB

AIRPORTS = [
    ("JFK", "New York", "John F. Kennedy International"), ("LGA", "New York", "LaGuardia"),
    ("BOS", "Boston", "Logan International"), ("ORD", "Chicago", "O'Hare International"),
    ("SFO", "San Francisco", "San Francisco International"), ("LAX", "Los Angeles", "Los Angeles International"),
    ("SEA", "Seattle", "Seattle-Tacoma International"), ("DEN", "Denver", "Denver International"),
    ("MIA", "Miami", "Miami International"), ("ATL", "Atlanta", "Hartsfield-Jackson Atlanta International"),
    ("LHR", "London", "Heathrow"), ("CDG", "Paris", "Charles de Gaulle"), ("AMS", "Amsterdam", "Schiphol"),
    ("FRA", "Frankfurt", "Frankfurt am Main"),
]
#: (origin, destination, minutes, base fare): each flown both ways; the minutes are the nonstop block time.
ROUTES = [("JFK", "LAX", 370, 240), ("BOS", "SFO", 395, 260), ("ORD", "SEA", 265, 180), ("JFK", "MIA", 190, 130),
          ("DEN", "ATL", 175, 140), ("JFK", "LHR", 415, 520), ("BOS", "CDG", 420, 560), ("LGA", "ORD", 150, 110),
          ("SFO", "SEA", 125, 95), ("LHR", "AMS", 75, 90), ("CDG", "FRA", 80, 85), ("LAX", "DEN", 150, 120)]
#: (code, name, fare level): each airline numbers its flights after its own code and prices at its own level.
AIRLINES = [("SJ", "SkyJet", 1.0), ("AU", "Aurora Air", 1.18), ("BL", "BlueLine", 0.78), ("NM", "Nimbus", 0.9),
            ("MR", "Meridian", 1.1)]
#: Who flies where: the long-haul and European routes are served by fewer carriers than the US trunks.
_EUROPE = {"LHR", "CDG", "AMS", "FRA"}
#: The minutes lost flying west (into the jet stream), gained flying east.
_WIND = {"JFK-LAX": 1, "BOS-SFO": 1, "ORD-SEA": 1, "LGA-ORD": 1, "DEN-ATL": -1, "LAX-DEN": -1, "JFK-LHR": -1,
         "BOS-CDG": -1, "LHR-AMS": -1, "CDG-FRA": -1, "JFK-MIA": 0, "SFO-SEA": 0}
#: Departure banks (earliest and latest minute after midnight) and how busy each is.
_BANKS = [(6 * 60, 9 * 60 + 30, 4), (10 * 60, 14 * 60 + 30, 2), (15 * 60, 17 * 60 + 30, 2), (17 * 60 + 30, 21 * 60 + 45, 3)]
SEAT_ROWS = 24
SEAT_LETTERS = "ABCDEF"
PREMIUM_ROWS = 4
CARDS = [("Visa", "4242", "Personal Visa", "08/28"), ("Mastercard", "5454", "Work Mastercard", "11/27"),
         ("Amex", "1005", "Travel Amex", "03/29")]
FIRST = ["Alex", "Sam", "Jordan", "Taylor", "Robin", "Jamie", "Chris", "Pat"]
LAST = ["Rivera", "Chen", "Okafor", "Novak", "Silva", "Haddad", "Kowalski", "Larsen"]
DAYS = 14


def _carriers(origin: str, dest: str) -> list[tuple[str, str, float]]:
    transatlantic = (origin in _EUROPE) != (dest in _EUROPE)
    if transatlantic:
        return [a for a in AIRLINES if a[0] in ("SJ", "AU", "MR")]
    if origin in _EUROPE:
        return [a for a in AIRLINES if a[0] in ("MR", "BL")]
    return [a for a in AIRLINES if a[0] != "MR"]


def _schedule(rng: random.Random, origin: str, dest: str, minutes: int) -> list[tuple[int, str, float, int]]:
    """One direction's daily timetable: (departure minute, airline code, airline fare level, stops).

    Transatlantic flights leave the US in the evening and Europe in the morning; other routes run banks
    of morning and evening departures with thinner middays. A long route also sells 1-stop connections.
    """
    carriers = _carriers(origin, dest)
    transatlantic = (origin in _EUROPE) != (dest in _EUROPE)
    count = rng.randint(3, 5) if transatlantic else rng.randint(4, 7) if minutes < 200 else rng.randint(5, 9)
    out: list[tuple[int, str, float, int]] = []
    for n in range(count):
        if transatlantic:
            lo, hi = (17 * 60, 22 * 60 + 30) if origin not in _EUROPE else (7 * 60, 14 * 60)
        else:
            lo, hi, _ = rng.choices(_BANKS, weights=[b[2] for b in _BANKS])[0]
        minute = rng.randint(lo // 5, hi // 5) * 5
        code, _name, level = carriers[n % len(carriers)] if n < len(carriers) else rng.choice(carriers)
        stops = 1 if minutes >= 180 and rng.random() < 0.35 else 0
        out.append((minute, code, level, stops))
    return sorted(out)


def _fare(rng: random.Random, base: int, level: float, minute: int, stops: int, days_out: int) -> int:
    """Whole dollars: the route's base fare by airline, time of day, stops and how soon the flight leaves."""
    hour = minute // 60
    time_factor = 0.88 if hour < 7 else 1.15 if hour < 10 or 16 <= hour < 20 else 0.82 if hour >= 20 else 0.97
    soon = 1.55 if days_out <= 1 else 1.3 if days_out <= 3 else 1.12 if days_out <= 7 else 1.0
    fare = base * level * time_factor * (0.8 if stops else 1.0) * soon * rng.uniform(0.9, 1.12)
    return max(39, int(fare) // 10 * 10 + rng.choice([9, 9, 9, 4, 7]))  # $249, $184, $307


def seed_travel(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    for code, city, name in AIRPORTS:
        db.execute("INSERT INTO airports (code, city, name) VALUES (?, ?, ?)", (code, city, name))
    for brand, last4, label, exp in CARDS:
        db.execute("INSERT INTO cards (brand, last4, label, expires) VALUES (?, ?, ?, ?)", (brand, last4, label, exp))
    numbers: set[str] = set()
    airline_names = {code: name for code, name, _ in AIRLINES}
    start = now.date() + dt.timedelta(days=1)
    for origin, dest, minutes, fare in ROUTES:
        for a, b in ((origin, dest), (dest, origin)):
            wind = _WIND[f"{origin}-{dest}"] * (1 if a == origin else -1)
            block = round(minutes * (1 + 0.04 * wind))
            timetable = _schedule(rng, a, b, block)
            for day in range(DAYS):
                date = start + dt.timedelta(days=day)
                for minute, code, level, stops in timetable:
                    if rng.random() < 0.12:  # not every flight runs every day
                        continue
                    number = f"{code} {rng.randint(100, 2999)}"
                    while number in numbers:
                        number = f"{code} {rng.randint(100, 2999)}"
                    numbers.add(number)
                    duration = block + (rng.randint(70, 170) if stops else rng.randint(-8, 12))
                    depart = dt.datetime.combine(date, dt.time(minute // 60, minute % 60))
                    arrive = depart + dt.timedelta(minutes=duration)
                    price = _fare(rng, fare, level, minute, stops, day + 1)
                    fid = db.insert(
                        "INSERT INTO flights (number, airline, origin, dest, depart, arrive, duration_min, stops, price) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (number, airline_names[code], a, b, depart.isoformat(timespec="minutes"),
                         arrive.isoformat(timespec="minutes"), duration, stops, price))
                    # fuller when it leaves soon and at the popular hours
                    occupancy = min(0.85, rng.uniform(0.3, 0.6) + (0.2 if day < 3 else 0.0) + (0.1 if 7 <= minute // 60 < 10 else 0.0))
                    db.conn.executemany("INSERT INTO seats_taken (flight_id, seat) VALUES (?, ?)",
                                        [(fid, f"{row}{letter}") for row in range(1, SEAT_ROWS + 1) for letter in SEAT_LETTERS
                                         if rng.random() < occupancy])
    flights = db.all("SELECT id, price FROM flights ORDER BY id")
    for i in range(3):
        flight = rng.choice(flights)
        taken = {r["seat"] for r in db.all("SELECT seat FROM seats_taken WHERE flight_id = ?", (flight["id"],))}
        free = [f"{r}{c}" for r in range(PREMIUM_ROWS + 1, SEAT_ROWS + 1) for c in SEAT_LETTERS if f"{r}{c}" not in taken]
        seat = rng.choice(free)
        db.execute(
            "INSERT INTO bookings (ref, flight_id, first_name, last_name, email, seat, bags, card_last4, total, status, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'confirmed', ?)",
            (_ref(rng), flight["id"], rng.choice(FIRST), rng.choice(LAST), "me@example.com", seat, i % 2, rng.choice(CARDS)[1],
             flight["price"] + 35 * (i % 2), (now - dt.timedelta(days=rng.randint(2, 30))).isoformat(timespec="minutes")))


def _ref(rng: random.Random) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))
