"""Deterministic airports, ~500 flights with seat occupancy, saved cards and past trips."""

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
#: (origin, destination, minutes, base fare): each flown both ways.
ROUTES = [("JFK", "LAX", 370, 240), ("BOS", "SFO", 395, 260), ("ORD", "SEA", 265, 180), ("JFK", "MIA", 190, 130),
          ("DEN", "ATL", 175, 140), ("JFK", "LHR", 415, 520), ("BOS", "CDG", 420, 560), ("LGA", "ORD", 150, 110),
          ("SFO", "SEA", 125, 95), ("LHR", "AMS", 75, 90), ("CDG", "FRA", 80, 85), ("LAX", "DEN", 150, 120)]
AIRLINES = [("SJ", "SkyJet"), ("AU", "Aurora Air"), ("BL", "BlueLine"), ("NM", "Nimbus")]
SEAT_ROWS = 24
SEAT_LETTERS = "ABCDEF"
PREMIUM_ROWS = 4
CARDS = [("Visa", "4242", "Personal Visa", "08/28"), ("Mastercard", "5454", "Work Mastercard", "11/27"),
         ("Amex", "1005", "Travel Amex", "03/29")]
FIRST = ["Alex", "Sam", "Jordan", "Taylor", "Robin", "Jamie", "Chris", "Pat"]
LAST = ["Rivera", "Chen", "Okafor", "Novak", "Silva", "Haddad", "Kowalski", "Larsen"]
DAYS = 14


def seed_travel(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    for code, city, name in AIRPORTS:
        db.execute("INSERT INTO airports (code, city, name) VALUES (?, ?, ?)", (code, city, name))
    for brand, last4, label, exp in CARDS:
        db.execute("INSERT INTO cards (brand, last4, label, expires) VALUES (?, ?, ?, ?)", (brand, last4, label, exp))
    numbers: set[str] = set()
    start = now.date() + dt.timedelta(days=1)
    for origin, dest, minutes, fare in ROUTES:
        for a, b in ((origin, dest), (dest, origin)):
            for day in range(DAYS):
                date = start + dt.timedelta(days=day)
                for _ in range(rng.choice([1, 2, 2, 2, 3])):
                    code, _airline = rng.choice(AIRLINES)
                    number = f"{code} {rng.randint(100, 1999)}"
                    while number in numbers:
                        number = f"{code} {rng.randint(100, 1999)}"
                    numbers.add(number)
                    stops = 1 if rng.random() < 0.3 else 0
                    duration = minutes + (rng.randint(60, 150) if stops else rng.randint(-10, 20))
                    depart = dt.datetime.combine(date, dt.time(rng.randint(6, 21), rng.choice([0, 5, 15, 20, 30, 40, 45, 55])))
                    arrive = depart + dt.timedelta(minutes=duration)
                    price = round(fare * rng.uniform(0.7, 1.6) * (0.85 if stops else 1.0))
                    fid = db.insert(
                        "INSERT INTO flights (number, airline, origin, dest, depart, arrive, duration_min, stops, price) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (number, _airline, a, b, depart.isoformat(timespec="minutes"), arrive.isoformat(timespec="minutes"),
                         duration, stops, price))
                    occupancy = rng.uniform(0.3, 0.8)
                    for row in range(1, SEAT_ROWS + 1):
                        for letter in SEAT_LETTERS:
                            if rng.random() < occupancy:
                                db.execute("INSERT INTO seats_taken (flight_id, seat) VALUES (?, ?)", (fid, f"{row}{letter}"))
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
