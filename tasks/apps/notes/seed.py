"""Deterministic seed data for the notes app: one person's notebook, as a real one looks.

The tree always holds Work and Personal (each with a seeded handful of subfolders) and an
Archive at the end; a seed adds some of Reading, Learning and Journal. Folders fill very
unevenly (a busy Meetings folder, a Gifts folder of three notes). Titles come from
per-folder phrasings with slots (people from several locales, clients, cities, books), so
they run from "Focaccia" to a long meeting title; bodies run from one line to several
paragraphs with lists and headings, in the toolbar's tags only (`sanitize.ALLOWED`).
Work notes are written on weekdays in work hours, personal ones in evenings and weekends;
many are edited days after they were created. Titles are unique as a reader compares them,
and never one a template asks an agent to create or rename to.
"""

from __future__ import annotations

import datetime as dt
import html
import random

from cua.judges.normalize import norm_text
from cua.tasks.apps.base import AppDB

#: (top folder, its subfolder pool, how many of the pool a seed keeps, always present).
#: No folder is named as a template's new folder (Drafts, Q2, Receipts, Ideas, Someday, Team,
#: Old projects, Kitchen, Trips 2026, Library, Misc, Keep, Follow-ups, Best of, Current).
TREE: list[tuple[str, list[str], tuple[int, int], bool]] = [
    ("Work", ["Projects", "Meetings", "Clients", "1:1s", "Hiring", "Conferences"], (2, 4), True),
    ("Personal", ["Recipes", "Travel", "Health", "Home", "Finances", "Gifts"], (2, 4), True),
    ("Reading", ["Books", "Articles", "Podcasts"], (1, 3), False),
    ("Learning", ["Spanish", "Guitar", "Photography"], (1, 2), False),
    ("Journal", [], (0, 0), False),
]
#: How full a folder is, relative to the others (a seed scales and jitters these).
WEIGHT = {"Work": 4, "Projects": 22, "Meetings": 34, "Clients": 14, "1:1s": 18, "Hiring": 8, "Conferences": 6,
          "Personal": 5, "Recipes": 20, "Travel": 12, "Health": 7, "Home": 9, "Finances": 6, "Gifts": 4,
          "Reading": 3, "Books": 14, "Articles": 10, "Podcasts": 6, "Learning": 2, "Spanish": 9, "Guitar": 5,
          "Photography": 5, "Journal": 16, "Archive": 12}
WORKISH = {"Work", "Projects", "Meetings", "Clients", "1:1s", "Hiring", "Conferences"}

PEOPLE = [("Emily", "Carter"), ("Jake", "Morgan"), ("Olivia", "Brooks"), ("Marcus", "Reed"),
          ("Jonas", "Becker"), ("Lena", "Schneider"), ("Jürgen", "Wagner"), ("Anke", "Hoffmann"),
          ("Élodie", "Martin"), ("Léa", "Dubois"), ("François", "Lefèvre"), ("Camille", "Roux"),
          ("José", "García"), ("Lucía", "Fernández"), ("Mateo", "López"), ("Carmen", "Ruiz"),
          ("Yuki", "Tanaka"), ("Haruto", "Sato"), ("Aiko", "Suzuki"), ("Ren", "Watanabe"),
          ("Priya", "Sharma"), ("Arjun", "Mehta"), ("Ananya", "Iyer"), ("Rohan", "Gupta")]
CLIENTS = ["Northwind", "Brightline GmbH", "Société Lumière", "Grupo Alba", "Sakura Logistics", "Tata Consult",
           "Bluefin Labs", "Meridian & Co."]
PROJECTS = ["Atlas", "Billing migration", "Q3 roadmap", "Mobile app 3.4", "Search relaunch", "Data warehouse",
            "Partner portal", "SSO rollout", "Pricing page", "Kestrel"]
CITIES = ["Lisbon", "Kyoto", "Berlin", "Seville", "Lyon", "Jaipur", "Chicago", "Copenhagen", "Oaxaca", "Vienna"]
BOOKS = ["Piranesi", "Middlemarch", "The Overstory", "Der Zauberberg", "L'Étranger", "Cien años de soledad",
         "Norwegian Wood", "The God of Small Things", "Thinking in Systems", "Stoner", "Klara and the Sun",
         "Die Verwandlung", "Le Petit Prince", "Kafka on the Shore", "Educated", "Beloved"]
TOPICS = ["sleep and memory", "urban heat islands", "typography on the web", "the four-day week", "CRDTs",
          "sourdough hydration", "heat pumps", "the history of the shipping container", "LLM evaluation",
          "Japanese joinery"]
DISHES = ["Lentil soup", "Banana bread", "Thai green curry", "Shakshuka", "Mushroom risotto", "Pad thai", "Focaccia",
          "Gazpacho", "Chili sin carne", "Pancakes", "Gyoza", "Miso ramen", "Dal makhani", "Tarte tatin",
          "Käsespätzle", "Paella valenciana", "Okonomiyaki", "Palak paneer", "Ratatouille", "Flammkuchen",
          "Tortilla española", "Coq au vin", "Chana masala", "Onigiri", "Apfelstrudel"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]

#: Per folder: title phrasings. {p}: a first name, {P}: a full name, {client}, {proj}, {city},
#: {book}, {topic}, {dish}, {month}, {q}, {year}.
TITLES: dict[str, list[str]] = {
    "Work": ["Weekly priorities", "Team contacts", "Inbox zero tips", "Desk setup", "Notes for my review",
             "Things to raise at the team meeting", "Ideas backlog"],
    "Projects": ["{proj}: plan", "{proj} launch checklist", "{proj} risks", "{proj} open questions",
                 "Design review: {proj}", "Estimates: {proj}", "{proj}: rollout plan",
                 "Lessons learned: {proj}", "API sketch: {proj}",
                 "{proj}: notes from the design review with {P} and the platform team"],
    "Meetings": ["Standup {d}", "Sprint planning {d}", "Retro {d}", "All hands {d}", "Budget sync {d}",
                 "Architecture review {d}", "Vendor call with {client} {d}", "Offsite brainstorm {d}",
                 "Call with {client} about the contract renewal and the new SLA terms, {d}"],
    "Clients": ["{client} kickoff", "{client} renewal", "{client} escalation", "{client} QBR {q}",
                "{client}: contacts and who decides", "{client} requirements"],
    "1:1s": ["1:1 {p} {d}", "{p}: career goals", "{p}: feedback to give"],
    "Hiring": ["Interview: {P}", "Backend role scorecard", "Interview questions (system design)",
               "Hiring plan {year}"],
    "Conferences": ["{city} conference notes", "Talk ideas", "CFP drafts", "Travel for the {city} summit"],
    "Personal": ["Gift ideas", "Budget {year}", "House chores rota", "Passwords hint card (no passwords!)",
                 "Things I want to learn", "Birthdays"],
    "Recipes": ["{dish}", "{dish} (from {p})", "{dish}, quick version"],
    "Travel": ["{city} itinerary", "Packing list for {city}", "{city} restaurants", "{city}: what to see",
               "Road trip stops", "Visa documents for {city}"],
    "Health": ["Running plan", "Questions for Dr. {family}", "Meal prep", "Sleep log {month}",
               "Stretching routine", "Physio exercises"],
    "Home": ["Paint colours", "Appliance manuals and warranties", "Garden plan for spring", "Broadband contract",
             "Handyman: {P}", "Furniture measurements"],
    "Finances": ["Tax return {year}", "Pension notes", "Subscriptions to cancel", "Savings goals {year}"],
    "Gifts": ["Gift ideas for {p}", "Christmas {year}", "Wedding gift for {p}"],
    "Reading": ["Want to read", "Library due dates", "Reading goals {year}"],
    "Books": ["Notes on {book}", "Quotes from {book}", "{book}: summary"],
    "Articles": ["Article: {topic}", "Reading list: {topic}", "Clippings on {topic}"],
    "Podcasts": ["Episodes on {topic}", "Podcast recommendations from {p}"],
    "Learning": ["Courses to try", "Study plan {year}", "Flashcard decks", "Learning goals for {month}"],
    "Spanish": ["Spanish verbs: {tense}", "Spanish vocabulary: {vocab}", "Conversation class {d}"],
    "Guitar": ["Chords for {song}", "Practice log {month}", "Fingerpicking patterns"],
    "Photography": ["Lightroom presets", "Photo walk in {city}", "Camera settings for night shots"],
    "Journal": ["{d}", "{d}: a good day", "Thoughts on the move", "{month} review"],
    "Archive": ["Old ideas", "{year0} goals", "Apartment search", "Conference notes {year0}", "Wedding plans",
                "{proj} (cancelled)", "Old onboarding notes", "Flat viewing in {city}"],
}
TENSES = ["preterite", "imperfect", "subjunctive", "future"]
VOCAB = ["kitchen", "travel", "work", "feelings", "weather"]
SONGS = ["Wonderwall", "Blackbird", "La Bamba", "Hallelujah", "Redemption Song"]

#: Sentences a body is written from, by the kind of folder.
LINES = {
    "work": ["Follow up with {p} before Friday.", "Budget is still pending approval from {P}.",
             "The first draft is ready for review.", "Numbers look better than last quarter (+{pct}%).",
             "We agreed to revisit this next month.", "Keep the scope small and ship early.",
             "Needs a clearer owner; {p} offered to take it.", "Risks: timeline, staffing and vendor delays.",
             "{client} wants a fixed price; we prefer time and materials.", "Decision: go with option B.",
             "Dependencies on the platform team are unclear, so we should ask for a named contact.",
             "Demo went well; {p} asked about SSO and audit logs.", "Next check-in: {weekday} at {clock}."],
    "recipe": ["Try the variant with less salt.", "Bake for 35 minutes at 180 °C.", "Ask {p} for the exact spices.",
               "Tried it on {weekday}: good, but needs more garlic.", "Serves 4; doubles well.",
               "Soak overnight if using dried beans.", "Rest the dough for at least an hour.",
               "{p} makes it with smoked paprika instead.", "Freezes well for up to three months."],
    "travel": ["Bring a rain jacket.", "Check opening hours on Mondays.", "Book at least two weeks ahead.",
               "Don't forget the adapter plug.", "Hotel is near {street}; 10 min walk to the station.",
               "{p} recommends the market on Saturday morning.", "Budget so far: {eur}.",
               "Last train back leaves at 23:10.", "Museums are free on the first Sunday of the month."],
    "health": ["Ask about the knee pain after running.", "Dr. {family}: {weekday} at {clock}.",
               "Blood pressure 121/79 this morning.", "Three sets of 12, twice a day.", "Less coffee after 14:00.",
               "Slept 7 h on average this week.", "Bring the insurance card and the last test results.",
               "Ice for 15 minutes after exercise."],
    "home": ["Total so far: {eur}.", "The shop on {street} has it cheaper.", "Call before {clock}; they close early.",
             "Warranty runs until {month} next year.", "{P} can come on {weekday} morning.",
             "Measure twice before ordering.", "Keep the receipts in the blue folder.",
             "Ask {p} if they still have the ladder.", "Next appointment: {weekday} at {clock}."],
    "journal": ["Slept badly, but the run helped.", "Long call with {p}; we should meet more often.",
                "Finally finished {book}.", "Rain all day, so I stayed in and cooked {dish}.",
                "Worried about the {proj} deadline.", "Walked along the river after work.",
                "{p} visited; we talked until midnight.", "Grateful for a quiet weekend.",
                "Started planning the trip to {city}.", "Too much coffee again."],
    "learn": ["Practise 20 minutes a day.", "Teacher: {P}, {weekday}s at {clock}.", "Hard part: keeping the rhythm.",
              "Watch the lesson again before {weekday}.", "Progress is slow but steady.",
              "{p} recommended a better exercise for this."],
    "read": ["Great chapter on feedback loops.", "The ending felt rushed.", "Recommended by {p}.",
             "Worth rereading the middle part.", "Compare with what {P} wrote last year.",
             "Main argument: small changes compound.", "Not convinced by the data in part two."],
}
ITEMS = {
    "work": ["Send the summary", "Update the tracker", "Share slides", "Ask {p} for numbers", "Book the room",
             "Write tests", "Confirm the agenda", "Pay the invoice", "Draft the email to {client}", "Review the PR"],
    "recipe": ["2 onions", "400 g lentils", "1 tin of tomatoes", "1 tsp cumin", "200 ml coconut milk",
               "Fresh coriander", "3 cloves of garlic", "500 g flour", "1 tbsp miso", "Juice of a lemon"],
    "travel": ["Passport", "Charger", "Sunscreen", "Train tickets", "Comfortable shoes", "Adapter plug",
               "Travel insurance papers", "Rain jacket", "Headphones"],
    "health": ["Knee", "Sleep", "Vitamin D levels", "Stretch hamstrings", "Plank, 3 × 45 s", "Oats and berries"],
    "home": ["Call the landlord", "Order the filter", "Measure the window", "Compare three quotes",
             "Pay the deposit", "Check the warranty", "Book the technician"],
    "journal": ["Call {p}", "Go for a run", "Book tickets to {city}", "Read 30 pages", "Water the plants"],
    "learn": ["Scales, 10 min", "Vocabulary list", "Listening exercise", "Review last week's notes", "Homework p. 42"],
    "read": ["Chapter 3", "The epilogue", "Footnotes on p. 212", "Interview with the author", "Part two"],
}
#: Titles the templates ask an agent to create, rename to or restore: never seeded.
RESERVED = {norm_text(t) for t in (
    "Ideas for the offsite", "Questions for the landlord", "Book club picks", "Sprint goals", "Garden plan",
    "Gift list for June", "Weekly sync notes", "Old draft - keep", "Shopping list", "Ideas (2026)", "Final version",
    "Tax documents 2025", "Passwords backup", "Old resume", "Moving checklist", "Medical certificate",
    "Doctor's appointment")}


def _kind(folder: str) -> str:
    if folder in WORKISH:
        return "work"
    if folder in ("Journal", "Learning", "Spanish", "Guitar", "Photography"):
        return "journal" if folder == "Journal" else "learn"
    if folder in ("Reading", "Books", "Articles", "Podcasts"):
        return "read"
    return {"Recipes": "recipe", "Travel": "travel", "Health": "health"}.get(folder, "home")


def _slots(rng: random.Random, when: dt.datetime) -> dict[str, str]:
    first, family = rng.choice(PEOPLE)
    return {"p": first, "P": f"{first} {family}", "family": rng.choice(PEOPLE)[1], "client": rng.choice(CLIENTS),
            "proj": rng.choice(PROJECTS), "city": rng.choice(CITIES), "book": rng.choice(BOOKS),
            "topic": rng.choice(TOPICS), "dish": rng.choice(DISHES), "month": MONTHS[when.month - 1],
            "q": f"Q{(when.month - 1) // 3 + 1}", "year": str(when.year), "year0": str(when.year - 1),
            "d": when.date().isoformat(), "tense": rng.choice(TENSES), "vocab": rng.choice(VOCAB),
            "song": rng.choice(SONGS), "pct": str(rng.randint(3, 27)), "eur": f"€{rng.randint(12, 900)}",
            "weekday": rng.choice(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]),
            "clock": f"{rng.randint(8, 17)}:{rng.choice(['00', '15', '30', '45'])}",
            "street": rng.choice(["Kastanienallee", "rue des Martyrs", "Calle Mayor", "Main Street", "Omotesandō"])}


def _line(rng: random.Random, pool: list[str], when: dt.datetime) -> str:
    return html.escape(rng.choice(pool).format(**_slots(rng, when)), quote=False)


def _body(rng: random.Random, folder: str, when: dt.datetime) -> str:
    """One line to several paragraphs, with lists and a heading now and then (a long tail)."""
    kind = _kind(folder)
    size = min(8, max(1, int(rng.paretovariate(1.3))))
    parts: list[str] = []
    deck = rng.sample(LINES[kind], len(LINES[kind]))  # no sentence twice in one note
    for _ in range(size):
        if not deck:
            break
        picked = [deck.pop() for _ in range(min(len(deck), rng.randint(1, 4)))]
        sentences = " ".join(_line(rng, [line], when) for line in picked)
        parts.append(f"<p>{sentences}</p>")
    if rng.random() < 0.45:
        tag = "ol" if rng.random() < 0.3 else "ul"
        picked = rng.sample(ITEMS[kind], min(len(ITEMS[kind]), rng.randint(2, 7)))
        items = "".join(f"<li>{_line(rng, [item], when)}</li>" for item in picked)
        parts.insert(rng.randint(0, len(parts)), f"<{tag}>{items}</{tag}>")
    if size > 2 and rng.random() < 0.5:
        heading = rng.choice(["Summary", "Next steps", "Context", "Ideas", "Action items", "Open questions"])
        parts.insert(rng.randint(1, len(parts) - 1), f"<h2>{heading}</h2>")
    if deck and rng.random() < 0.1:
        parts.append(f"<p><b>{html.escape(rng.choice(['Important', 'TODO', 'Decision']))}:</b> "
                     f"{_line(rng, [deck.pop()], when)}</p>")
    return "".join(parts)


def _created(rng: random.Random, folder: str, now: dt.datetime) -> dt.datetime:
    """Work notes on weekdays in work hours; the rest in evenings and at weekends too."""
    day = (now - dt.timedelta(days=int(rng.triangular(1, 720, 20)))).date()
    if folder in WORKISH:
        while day.weekday() >= 5:
            day -= dt.timedelta(days=1)
        clock = dt.time(rng.randint(8, 17), rng.randrange(0, 60, 1))
    else:
        clock = dt.time(rng.choice([7, 8, 12, 18, 19, 20, 21, 22]), rng.randrange(0, 60, 1))
    return dt.datetime.combine(day, clock)


def _folders(rng: random.Random) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for top, pool, (lo, hi), always in TREE:
        if not always and rng.random() < 0.45:
            continue
        out.append((top, None))
        for sub in sorted(rng.sample(pool, rng.randint(lo, hi)), key=pool.index):
            out.append((sub, top))
    out.append(("Archive", None))
    return out


def seed_notes(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    ids: dict[str, int] = {}
    folders = _folders(rng)
    for name, parent in folders:
        ids[name] = db.insert("INSERT INTO folders (name, parent_id) VALUES (?, ?)",
                              (name, ids[parent] if parent else None))
    scale = rng.uniform(1.3, 2.0)
    used = set(RESERVED)
    rows: list[tuple[int, str, str, int, str, str]] = []
    for name, _ in folders:
        count = max(1, round(WEIGHT[name] * scale * rng.uniform(0.4, 1.6)))
        for _ in range(count):
            for _attempt in range(10):
                created = _created(rng, name, now)
                title = rng.choice(TITLES[name]).format(**_slots(rng, created))
                title = title[:1].upper() + title[1:]
                if norm_text(title) not in used and "certificate" not in title.lower():
                    break
            else:
                continue  # the folder's phrasings are used up: a smaller folder
            used.add(norm_text(title))
            if rng.random() < 0.55:
                updated = created + dt.timedelta(days=int(rng.triangular(0, 60, 1)), minutes=rng.randint(5, 600))
            else:
                updated = created + dt.timedelta(minutes=rng.randint(2, 90))
            if updated > now:
                updated = max(created + dt.timedelta(minutes=5), now - dt.timedelta(minutes=rng.randint(5, 600)))
            rows.append((ids[name], title, _body(rng, name, created), int(rng.random() < 0.05),
                         created.isoformat(timespec="minutes"), updated.isoformat(timespec="minutes")))
    rows.sort(key=lambda r: r[4])  # ids in the order the notes were written
    for row in rows:
        db.execute("INSERT INTO notes (folder_id, title, body, pinned, created, updated) VALUES (?, ?, ?, ?, ?, ?)", row)
