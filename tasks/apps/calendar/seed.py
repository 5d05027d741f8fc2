"""Deterministic calendar data: ~200 events around the fixed 'today', recurring series,
people, and invitations in both directions (mine to others, others' to me)."""

from __future__ import annotations

import datetime as dt
import random

from cua.tasks.apps.base import AppDB

FIRST = ["Ava", "Ben", "Chloe", "Daniel", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira", "Liam", "Maya",
         "Noah", "Olga", "Pablo", "Rosa", "Samir", "Tara", "Victor", "Wendy", "Yara", "Zane", "Priya", "Marco", "Lena"]
LAST = ["Adams", "Baker", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jensen", "Lopez", "Murphy",
        "Nakamura", "Okafor", "Patel", "Rossi", "Schmidt", "Tanaka", "Weber", "Young"]
ONE_OFF = [
    ("Dentist appointment", "Personal", "Smile Dental, 4th Ave"), ("Lunch with {p}", "Personal", "Cafe Luna"),
    ("1:1 with {p}", "Work", "Room 3B"), ("Quarterly planning", "Work", "Board room"), ("Design review", "Work", "Room 2A"),
    ("Customer call: {c}", "Work", "Video call"), ("Interview: {role} candidate", "Work", "Room 4C"),
    ("Parent-teacher meeting", "Family", "Lincoln School"), ("Soccer practice", "Family", "City Park field 2"),
    ("Haircut", "Personal", "Barber & Co"), ("Car service", "Personal", "Main St Garage"),
    ("Dinner with {p}", "Personal", "Trattoria Roma"), ("Budget review", "Work", "Room 1A"),
    ("Sprint demo", "Work", "Auditorium"), ("Vet appointment", "Family", "Happy Paws Clinic"),
    ("Birthday party: {p}", "Family", "Home"), ("Flight to {city}", "Work", "Airport T2"),
    ("Workshop: {topic}", "Work", "Training room"), ("Book club", "Personal", "Library"), ("Gym session", "Personal", "Gym"),
]
COMPANIES = ["Northwind", "Acme Corp", "Globex", "Initech", "Umbrella", "Stark Labs", "Wayne Ent."]
ROLES = ["backend", "design", "data", "sales", "support"]
CITIES = ["Lisbon", "Berlin", "Osaka", "Toronto", "Denver", "Oslo"]
TOPICS = ["accessibility", "negotiation", "public speaking", "SQL", "security basics"]
SERIES = [
    ("Daily standup", "Work", "daily", "09:30", "09:45", "Room 2A", 0, 75),
    ("Team sync", "Work", "weekly", "14:00", "15:00", "Board room", 1, 63),
    ("Yoga class", "Personal", "weekly", "18:30", "19:30", "Studio 5", 2, 56),
    ("Piano lesson", "Family", "weekly", "16:00", "17:00", "Music school", 3, 49),
    ("Running club", "Personal", "weekly", "07:00", "08:00", "River path", 5, 42),
    ("Office hours", "Work", "weekly", "11:00", "12:00", "Room 1A", 4, 35),
    ("Medication reminder", "Personal", "daily", "08:00", "08:15", "", 0, 20),
]


def seed_calendar(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    people: list[tuple[str, str]] = []
    seen: set[str] = set()
    while len(people) < 40:
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if name in seen:
            continue
        seen.add(name)
        email = name.lower().replace(" ", ".") + "@example.org"
        people.append((name, email))
        db.execute("INSERT INTO people (name, email) VALUES (?, ?)", (name, email))
    today = now.date()
    # Recurring series start on a Monday in early February and run a few weeks past today.
    start_monday = today - dt.timedelta(days=today.weekday() + 28)
    for title, cal, recur, start, end, loc, weekday, length in SERIES:
        first = start_monday + dt.timedelta(days=weekday + rng.randint(0, 1) * 7)
        until = first + dt.timedelta(days=length + rng.randint(0, 14))
        eid = db.insert(
            "INSERT INTO events (title, date, start, end, all_day, location, description, calendar, recur, recur_until)"
            " VALUES (?,?,?,?,0,?,?,?,?,?)",
            (title, first.isoformat(), start, end, loc, f"Recurring {recur} event.", cal, recur, until.isoformat()))
        if cal == "Work":
            for pid in rng.sample(range(1, len(people) + 1), rng.randint(2, 5)):
                db.execute("INSERT INTO attendees (event_id, person_id, status) VALUES (?,?,?)",
                           (eid, pid, rng.choice(["accepted", "accepted", "declined", "pending"])))
    n = 0
    while n < 193:
        day = today + dt.timedelta(days=rng.randint(-30, 60))
        pattern, cal, loc = rng.choice(ONE_OFF)
        title = pattern.format(p=rng.choice(people)[0].split()[0], c=rng.choice(COMPANIES), role=rng.choice(ROLES),
                               city=rng.choice(CITIES), topic=rng.choice(TOPICS))
        all_day = pattern.startswith(("Birthday", "Flight")) and rng.random() < 0.6
        starts: str | None
        ends: str | None
        if all_day:
            starts = ends = None
        else:
            h = rng.randint(8, 19)
            m = rng.choice([0, 0, 30, 15, 45])
            dur = rng.choice([30, 30, 45, 60, 60, 90, 120])
            s = dt.datetime.combine(day, dt.time(h, m))
            e = s + dt.timedelta(minutes=dur)
            starts, ends = s.strftime("%H:%M"), e.strftime("%H:%M") if e.date() == day else "23:59"
        organizer = None
        my_status = "accepted"
        if cal == "Work" and rng.random() < 0.35:
            organizer = rng.randint(1, len(people))
            my_status = "pending" if day >= today and rng.random() < 0.5 else rng.choice(["accepted", "declined"])
        eid = db.insert(
            "INSERT INTO events (title, date, start, end, all_day, location, description, calendar, recur, recur_until,"
            " organizer_id, my_status) VALUES (?,?,?,?,?,?,?,?,'none',NULL,?,?)",
            (title, day.isoformat(), starts, ends, int(all_day), loc, "", cal, organizer, my_status))
        if cal == "Work" and rng.random() < 0.6:
            for pid in rng.sample(range(1, len(people) + 1), rng.randint(1, 4)):
                if pid == organizer:
                    continue
                status = rng.choice(["accepted", "declined", "pending"]) if day >= today else rng.choice(["accepted", "declined"])
                db.execute("INSERT INTO attendees (event_id, person_id, status) VALUES (?,?,?)", (eid, pid, status))
        n += 1
