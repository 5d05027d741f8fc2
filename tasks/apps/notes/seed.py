"""Deterministic seed data for the notes app: a folder tree and ~200 notes."""

from __future__ import annotations

import datetime as dt
import html
import random

from cua.tasks.apps.base import AppDB

#: (name, parent name or None). Order fixes the ids.
FOLDERS = [
    ("Work", None), ("Projects", "Work"), ("Meetings", "Work"), ("Clients", "Work"),
    ("Personal", None), ("Recipes", "Personal"), ("Travel", "Personal"), ("Health", "Personal"),
    ("Reading", None), ("Books", "Reading"), ("Articles", "Reading"),
    ("Archive", None),
]

SUBJECTS = {
    "Projects": ["Migration plan", "Roadmap Q{q}", "Launch checklist", "Design review", "API redesign", "Pricing page",
                 "Onboarding flow", "Search relevance", "Billing revamp", "Mobile release"],
    "Meetings": ["Standup", "1:1 with {person}", "Sprint planning", "Retro", "All hands", "Budget sync",
                 "Hiring panel", "Vendor call"],
    "Clients": ["{company} kickoff", "{company} renewal", "{company} escalation", "{company} QBR"],
    "Recipes": ["Lentil soup", "Banana bread", "Green curry", "Shakshuka", "Risotto", "Pad thai", "Focaccia",
                "Tomato salad", "Chili", "Pancakes", "Dumplings", "Miso ramen"],
    "Travel": ["Lisbon itinerary", "Packing list", "Tokyo restaurants", "Road trip stops", "Visa documents",
               "Alps hiking", "Berlin museums"],
    "Health": ["Running plan", "Doctor questions", "Meal prep", "Sleep log", "Stretching routine"],
    "Books": ["Notes on {book}", "Quotes from {book}", "Summary: {book}"],
    "Articles": ["Article: {topic}", "Reading list: {topic}", "Clippings on {topic}"],
    "Archive": ["Old ideas", "2024 goals", "Apartment search", "Conference notes", "Wedding plans"],
    "Work": ["Inbox zero tips", "Team contacts", "Weekly priorities"],
    "Personal": ["Gift ideas", "Budget", "House chores"],
    "Reading": ["Want to read", "Library due dates"],
}
PEOPLE = ["Ana", "Bilal", "Chen", "Dara", "Elif", "Femi", "Greta", "Hiro", "Ines", "Jonas"]
COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne"]
BOOKS = ["Dune", "Middlemarch", "The Overstory", "Thinking in Systems", "Piranesi", "The Peregrine", "Stoner",
         "Educated", "Beloved", "Snow Crash"]
TOPICS = ["databases", "urban design", "sleep science", "typography", "climate policy", "compilers",
          "coffee", "beekeeping"]
SENTENCES = [
    "Follow up with the team before Friday.", "Budget is still pending approval.",
    "The first draft is ready for review.", "Remember to book the room in advance.",
    "Numbers look better than last quarter.", "We agreed to revisit this next month.",
    "Keep the scope small and ship early.", "Ask for feedback from two more people.",
    "Needs a clearer owner.", "Risks: timeline, staffing and vendor delays.",
    "Try the variant with less salt.", "Bake for 35 minutes at 180 degrees.",
    "Bring a rain jacket.", "Check opening hours on Mondays.", "Great chapter on feedback loops.",
]
TODO_ITEMS = ["Send the summary", "Update the tracker", "Share slides", "Book tickets", "Buy ingredients",
              "Call back", "Renew the contract", "Write tests", "Confirm the venue", "Pay the invoice"]


def _paragraphs(rng: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(1, 3)):
        parts.append("<p>" + " ".join(rng.sample(SENTENCES, rng.randint(1, 3))) + "</p>")
    if rng.random() < 0.5:
        tag = rng.choice(["ul", "ol"])
        items = "".join(f"<li>{html.escape(x)}</li>" for x in rng.sample(TODO_ITEMS, rng.randint(2, 4)))
        parts.insert(rng.randint(0, len(parts)), f"<{tag}>{items}</{tag}>")
    if rng.random() < 0.3:
        parts.insert(0, f"<h2>{html.escape(rng.choice(['Summary', 'Next steps', 'Context', 'Ideas']))}</h2>")
    return "".join(parts)


def seed_notes(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    ids: dict[str, int] = {}
    for name, parent in FOLDERS:
        new_id = db.insert("INSERT INTO folders (name, parent_id) VALUES (?, ?)", (name, ids.get(parent) if parent else None))
        ids[name] = new_id
    weights = {"Projects": 30, "Meetings": 36, "Clients": 20, "Recipes": 22, "Travel": 14, "Health": 10,
               "Books": 20, "Articles": 16, "Archive": 14, "Work": 6, "Personal": 6, "Reading": 6}
    used: set[str] = set()
    for folder, count in weights.items():
        for _ in range(count):
            title = rng.choice(SUBJECTS[folder]).format(
                q=rng.randint(1, 4), person=rng.choice(PEOPLE), company=rng.choice(COMPANIES),
                book=rng.choice(BOOKS), topic=rng.choice(TOPICS))
            if title in used:
                title = f"{title} ({rng.randint(2, 99)})"
                if title in used:
                    continue
            used.add(title)
            created = now - dt.timedelta(days=rng.randint(1, 400), minutes=rng.randint(0, 1440))
            updated = created + dt.timedelta(days=rng.randint(0, 30), minutes=rng.randint(0, 600))
            if updated > now:
                updated = now - dt.timedelta(minutes=rng.randint(5, 600))
            db.execute(
                "INSERT INTO notes (folder_id, title, body, pinned, created, updated) VALUES (?, ?, ?, ?, ?, ?)",
                (ids[folder], title, _paragraphs(rng), int(rng.random() < 0.06),
                 created.isoformat(timespec="minutes"), updated.isoformat(timespec="minutes")))
