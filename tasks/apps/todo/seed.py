"""Deterministic seed data for the todo app: one person's account, as a real one looks.

An account has an Inbox and a Work list (every seed: ids 1 and 2) and a seeded handful of
others drawn from a pool, of very different sizes (a busy Work list, a Garden list of a few
items). Titles come from per-list phrasings with slots (people from several locales, places,
shops, books, amounts in their currency), so lengths run from a two-word shopping item to a
long work reminder; some carry notes (a phone number, an address, a reference). Due dates
follow the list's rhythm (work on weekdays, the garden at weekends, bills monthly); about a
third are done, most of those in the past; a few open ones are overdue, as in any account.
Titles are unique as a reader compares them (`same_text`), and never one a template asks an
agent to add (an add task must start from its title being absent).
"""

from __future__ import annotations

import datetime as dt
import random

from cua.judges.normalize import norm_text
from cua.tasks.apps.base import AppDB

#: Every account's first two lists (tests and examples open /lists/1 and /lists/2).
FIXED_LISTS = [("Inbox", "#57606a"), ("Work", "#1f6feb")]
#: The other lists an account may hold, with their colours; a seed draws 3 to 7 of them.
#: (No "Travel", "Projects", "Health", "Groceries" or "Someday": infeasible tasks name those as absent.)
LIST_POOL = [("Home", "#2da44e"), ("Errands", "#bf8700"), ("Reading", "#8250df"), ("Garden", "#1a7f37"),
             ("Shopping", "#cf222e"), ("Kids", "#e16f24"), ("Finances", "#0969da"), ("Fitness", "#bc4c00"),
             ("Side project", "#6639ba"), ("Car", "#6e7781"), ("Japan trip", "#d1242f"), ("Wedding", "#bf3989")]
#: The tags of the app's data (the add-tag tasks draw from these).
TAGS = ["urgent", "phone", "online", "weekend", "waiting", "money", "family", "office"]

#: People from several locales: (first name, family name).
PEOPLE = [("Emily", "Carter"), ("Jake", "Morgan"), ("Olivia", "Brooks"), ("Marcus", "Reed"),
          ("Jonas", "Becker"), ("Lena", "Schneider"), ("Jürgen", "Wagner"), ("Anke", "Hoffmann"),
          ("Élodie", "Martin"), ("Léa", "Dubois"), ("François", "Lefèvre"), ("Camille", "Roux"),
          ("José", "García"), ("Lucía", "Fernández"), ("Mateo", "López"), ("Carmen", "Ruiz"),
          ("Yuki", "Tanaka"), ("Haruto", "Sato"), ("Aiko", "Suzuki"), ("Ren", "Watanabe"),
          ("Priya", "Sharma"), ("Arjun", "Mehta"), ("Ananya", "Iyer"), ("Rohan", "Gupta")]
FAMILY = ["Mum", "Dad", "Grandma", "Aunt Sofia", "Tom", "Nina", "Oma"]
KIDS = ["Mia", "Leo", "Noah", "Hana"]
PROJECTS = ["Atlas", "billing migration", "Q2 roadmap", "mobile app 3.4", "search relaunch", "data warehouse",
            "partner portal", "SSO rollout", "pricing page", "Kestrel"]
COMPANIES = ["Northwind", "Brightline GmbH", "Société Lumière", "Grupo Alba", "Sakura Logistics",
             "Tata Consult", "Bluefin Labs", "Meridian & Co."]
CITIES = ["Munich", "Lyon", "Madrid", "Osaka", "Bengaluru", "Chicago", "Hamburg", "Seville"]
BOOKS = ["Piranesi", "Middlemarch", "The Overstory", "Der Zauberberg", "L'Étranger", "Cien años de soledad",
         "Norwegian Wood", "The God of Small Things", "Thinking in Systems", "Stoner", "Klara and the Sun",
         "Die Verwandlung", "Le Petit Prince", "Kafka on the Shore"]
AUTHORS = {"Piranesi": "Susanna Clarke", "Middlemarch": "George Eliot", "The Overstory": "Richard Powers",
           "Der Zauberberg": "Thomas Mann", "L'Étranger": "Albert Camus", "Cien años de soledad": "García Márquez",
           "Norwegian Wood": "Haruki Murakami", "The God of Small Things": "Arundhati Roy",
           "Thinking in Systems": "Donella Meadows", "Stoner": "John Williams", "Klara and the Sun": "Kazuo Ishiguro",
           "Die Verwandlung": "Franz Kafka", "Le Petit Prince": "Saint-Exupéry", "Kafka on the Shore": "Haruki Murakami"}
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]

#: Per list: phrasings with slots. {p}/{P}: a person's first/full name, {f}: family, {k}: a child,
#: {proj}, {co}, {city}, {book}, {author}, {month}, {n}: a small number, {eur}: an amount.
PHRASES: dict[str, list[str]] = {
    "Work": [
        "Reply to {p} about the {proj} timeline", "Review {p}'s pull request", "1:1 with {p}",
        "Prepare slides for the {proj} review", "Send the Q{q} forecast to {P}", "Book a room for the {proj} retro",
        "Follow up with {co} on the overdue invoice", "Expense report: {city} trip", "Draft OKRs for Q{q}",
        "Read {p}'s design doc on the {proj}", "Update the onboarding wiki", "Ask {p} for feedback on the proposal",
        "Timesheet", "Renew the {co} contract", "Fix the flaky login test", "Write the {proj} status update",
        "Interview feedback for {P}", "Schedule a call with {co} ({city})", "Approve {p}'s holiday request",
        "Clean up the shared drive", "Prep agenda for Monday's all-hands", "Migrate the {proj} dashboards",
        "Send {p} the notes from the {co} meeting", "Check the SLA numbers before the {co} QBR",
        "Write a short post-mortem for last week's outage and share it with {p} and the on-call team",
        "Figure out why the {proj} nightly export is 40 min slower since the upgrade",
        "Submit conference talk abstract", "Invoice {co} for {month}", "Order a new laptop charger",
        "Train {p} on the release checklist", "Decline the {city} offsite invite (clashes with the launch)",
    ],
    "Inbox": [
        "Call {fam}", "Reply to {p}", "Look into heat pumps", "Idea: newsletter about home brewing",
        "Recipe from {p}: tarte tatin", "Cancel the streaming trial before it renews", "Back up photos",
        "Ask {p} about the spare room", "Birthday present for {fam}", "Renew the library card",
        "Check if the warranty on the dishwasher is still valid", "Unsubscribe from old newsletters",
        "Find the receipt for the bike", "Text {p} the photos from Saturday", "Podcast {p} recommended",
        "Look up the train times to {city}", "Sort out the phone contract", "Plan {fam}'s 70th",
        "Thank-you card for {P}", "Watch the documentary {p} mentioned", "Learn basic Japanese phrases",
        "Print the concert tickets", "Donate old clothes", "Reschedule the dentist", "Doctor: blood test results",
    ],
    "Home": [
        "Fix the dripping kitchen tap", "Descale the kettle", "Replace the smoke alarm battery",
        "Call the plumber ({f}) about the boiler", "Hang the pictures in the hallway", "Clean the oven",
        "Change the bed sheets", "Bleed the radiators", "Re-grout the shower", "Vacuum the car seats",
        "Wash the windows", "Buy a new shower curtain", "Get quotes for painting the living room",
        "Read the gas meter", "Clear out the garage", "Put up the new curtain rail", "Deep-clean the fridge",
        "Book the chimney sweep", "Assemble the bookshelf (IKEA, 3 boxes)", "Tidy the cable drawer",
    ],
    "Errands": [
        "Pick up dry cleaning", "Return the parcel to the post office", "Get keys cut for {p}",
        "Drop off shoes at the cobbler", "Collect prescription", "Pharmacy: sunscreen and plasters",
        "Bank: new debit card", "Recycle old batteries", "Post the birthday card to {fam}",
        "Pick up the photo prints", "Return the drill to {p}", "Town hall: register the new address",
        "Hardware store: wall plugs and 6 mm drill bit", "Collect the repaired watch", "Bottle deposit",
    ],
    "Reading": [
        "Read {book} ({author})", "Finish {book}", "Return {book} to the library", "Lend {book} to {p}",
        "Article on sleep and memory", "Long read: the history of the shipping container",
        "Book club: pick next month's title", "Buy {book} for {fam}", "Essay {p} sent about remote work",
    ],
    "Garden": [
        "Prune the roses", "Sow tomato seeds indoors", "Mow the lawn", "Order compost", "Fix the hose reel",
        "Plant the tulip bulbs", "Cut back the lavender", "Clean the bird bath", "Repot the fig tree",
        "Weed the vegetable patch", "Buy slug pellets", "Paint the fence panels",
    ],
    "Shopping": [
        "Oat milk", "Crème fraîche", "Batteries (AA)", "Birthday card for {p}", "Dishwasher tablets",
        "Basmati rice, 5 kg", "Coffee beans", "Light bulbs E27", "Olive oil", "Parmesan", "Bin bags",
        "Running socks", "Wrapping paper", "Matcha", "Toothpaste", "Sourdough", "Sparkling water", "Ginger",
        "Fresh basil", "Miso paste", "Tortillas",
    ],
    "Kids": [
        "Sign {k}'s permission slip", "Parent-teacher meeting", "Football boots for {k} (size 34)",
        "Book swimming lessons", "Pay for the school trip", "Label {k}'s new school clothes",
        "Dentist appointment for {k}", "Costume for the school play", "Birthday party gift for {k}'s friend",
        "Sort out summer camp", "Renew {k}'s passport", "Library books back (due Friday)",
    ],
    "Finances": [
        "Pay rent ({month})", "File the tax return", "Cancel the gym direct debit", "Transfer {eur} to savings",
        "Check the credit card statement", "Pay the water bill", "Compare electricity tariffs",
        "Send {p} the {eur} for the concert tickets", "Renew home insurance", "Update the budget spreadsheet",
        "Claim the {city} train fare back", "Pension statement: check contributions",
    ],
    "Fitness": [
        "Run {n} km", "Book a physio appointment", "Yoga class, Thursday 18:30", "New running shoes",
        "Sign up for the {city} half marathon", "Stretch 10 minutes", "Swim 1,000 m", "Climbing with {p}",
        "Replace the bike chain", "Plan the training schedule for {month}",
    ],
    "Side project": [
        "Set up CI for the blog", "Write the README", "Upgrade to Postgres 16", "Buy the domain name",
        "Fix dark-mode contrast", "Add an RSS feed", "Ask {p} to test the beta", "Write about the rewrite",
        "Move hosting off the old VPS", "Profile the slow image uploads", "Reply to the GitHub issue from {p}",
    ],
    "Car": [
        "Car service at 60,000 km", "Renew the car insurance", "Switch to winter tyres", "Wash the car",
        "Book the MOT", "Top up the screen wash", "Fix the rear wiper", "Pay the parking fine",
    ],
    "Japan trip": [
        "Book the ryokan in Kyoto", "Japan Rail Pass", "Ask {p} for Osaka restaurant tips",
        "Exchange yen", "Book the Shinkansen seats to Hiroshima", "Pocket Wi-Fi", "Pack the travel adapters",
        "TeamLab tickets", "Check the passport expiry", "Email the hotel in Shinjuku about late check-in",
    ],
    "Wedding": [
        "Send the save-the-dates", "Book the photographer", "Cake tasting", "Playlist for the reception",
        "Seating plan", "Dress fitting", "Ask {p} to give a speech", "Confirm the caterer's menu",
        "Hotel block for guests from {city}", "Buy the rings", "Thank-you cards",
    ],
}
#: Tags a list's todos lean to (and what a phrasing's first word suggests).
LIST_TAGS = {"Work": ["office", "urgent", "waiting"], "Home": ["weekend"], "Garden": ["weekend"],
             "Finances": ["money", "online"], "Kids": ["family"], "Shopping": ["weekend"],
             "Errands": ["weekend"], "Wedding": ["family", "money"], "Japan trip": ["online", "money"],
             "Car": ["money"], "Inbox": ["family", "online"], "Side project": ["online", "weekend"]}
VERB_TAGS = {"Call": "phone", "Text": "phone", "Reply": "online", "Email": "online", "Order": "online",
             "Book": "online", "Pay": "money", "Transfer": "money", "Follow": "waiting", "Ask": "waiting"}
#: Notes a todo may carry (a quarter of them do).
NOTES = [
    "Ref. {ref}, ask for {P}.", "Opening hours Mon–Fri 9:00–18:00, Sat 10:00–14:00.", "Tel. {phone}",
    "{P} said it should take about 2 weeks.", "Receipt is in the blue folder.", "Budget: {eur}.",
    "Address: {addr}", "Waiting for {p} to confirm.", "Last time it was {eur}; check for a discount code.",
    "See the email from {P} ({month} 3).", "Only if the weather holds.", "Needs the car.",
]
PHONES = ["+1 312 555 0147", "+49 30 4820 1193", "+33 1 42 68 53 00", "+34 912 34 56 78", "+81 3 5412 7780",
          "+91 80 4112 9087", "+44 20 7946 0321"]
ADDRESSES = ["Kastanienallee 12, 10435 Berlin", "14 rue des Martyrs, 75009 Paris", "Calle de Alcalá 48, 28014 Madrid",
             "2-11-3 Jingumae, Shibuya-ku, Tokyo", "221 W Erie St, Chicago, IL 60654",
             "12th Main Rd, Indiranagar, Bengaluru 560038"]
#: Titles the templates ask an agent to add or rename to: never seeded, so each starts absent.
RESERVED = {norm_text(t) for t in (
    "Renew passport", "Call the bank", "Buy bird seed", "Fix the fence", "Book a haircut", "Send the invoice",
    "Water the ferns", "Email the architect", "Buy stamps", "Call grandma", "Defrost the freezer",
    "Print boarding passes", "Oil the bike chain", "Back up the laptop", "Sort the recycling",
    "Call the dentist back", "Return the library books today", "Order printer ink (black)", "Draft the budget sheet v2",
    "Plan the team offsite agenda", "Return the library books", "Order printer ink", "Draft the budget sheet",
    "Plan the team offsite", "Book the car service", "Renew the gym pass", "Sort the tax receipts")}


def _due(rng: random.Random, today: dt.date, list_name: str, done: bool) -> str | None:
    """A due date in the list's rhythm: work on weekdays, house and garden at weekends."""
    if rng.random() < (0.2 if list_name in ("Work", "Finances", "Kids") else 0.45):
        return None
    if done:
        day = today - dt.timedelta(days=int(rng.triangular(1, 60, 5)))
    elif rng.random() < 0.14:
        day = today - dt.timedelta(days=rng.randint(1, 21))  # overdue
    else:
        day = today + dt.timedelta(days=int(rng.triangular(0, 75, 6)))
    if list_name in ("Work", "Side project", "Finances") and day.weekday() >= 5:
        day -= dt.timedelta(days=day.weekday() - 4)  # the Friday before
    elif list_name in ("Garden", "Home") and day.weekday() < 5 and rng.random() < 0.6:
        day += dt.timedelta(days=5 - day.weekday())  # the Saturday after
    return day.isoformat()


def _fill(rng: random.Random, phrase: str, today: dt.date) -> str:
    first, family = rng.choice(PEOPLE)
    book = rng.choice(BOOKS)
    return phrase.format(
        p=first, P=f"{first} {family}", f=rng.choice(PEOPLE)[1], k=rng.choice(KIDS), fam=rng.choice(FAMILY),
        proj=rng.choice(PROJECTS), co=rng.choice(COMPANIES), city=rng.choice(CITIES), book=book,
        author=AUTHORS[book], month=MONTHS[(today.month - 1 + rng.randint(0, 3)) % 12], n=rng.choice([5, 8, 10, 12, 21]),
        q=rng.randint(1, 4), eur=_amount(rng), ref=f"{rng.randint(1000, 9999)}-{rng.randint(10, 99)}",
        phone=rng.choice(PHONES), addr=rng.choice(ADDRESSES))


def _amount(rng: random.Random) -> str:
    value = rng.choice([25, 40, 60, 85, 120, 150, 200, 350, 500, 1200])
    return rng.choice([f"€{value}", f"${value}", f"£{value}", f"{value:,} €"])


def _tags(rng: random.Random, list_name: str, title: str) -> str:
    pool = list(LIST_TAGS.get(list_name, []))
    verb = VERB_TAGS.get(title.split(" ", 1)[0])
    chosen: set[str] = set()
    if verb and rng.random() < 0.6:
        chosen.add(verb)
    if pool and rng.random() < 0.35:
        chosen.add(rng.choice(pool))
    if rng.random() < 0.08:
        chosen.add(rng.choice(TAGS))
    return ",".join(sorted(chosen))


def _priority(rng: random.Random, list_name: str) -> str:
    high = {"Work": 0.25, "Finances": 0.25, "Kids": 0.2, "Wedding": 0.2, "Shopping": 0.03}.get(list_name, 0.1)
    low = {"Shopping": 0.35, "Reading": 0.4, "Garden": 0.3, "Side project": 0.35}.get(list_name, 0.15)
    r = rng.random()
    return "high" if r < high else "low" if r < high + low else "normal"


def seed_todos(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    today = now.date()
    extra = rng.sample(LIST_POOL, rng.randint(3, 7))
    lists = FIXED_LISTS + sorted(extra, key=LIST_POOL.index)
    # how full each list is: Work and Inbox hold the most, the rest a long tail
    sizes = {"Work": rng.randint(28, 55), "Inbox": rng.randint(14, 32)}
    for name, _ in extra:
        sizes[name] = max(4, int(rng.paretovariate(1.6) * rng.randint(4, 8)))
    used = set(RESERVED)
    rows: list[tuple[int, str, int, str | None, str, str, str]] = []
    for list_id, (name, color) in enumerate(lists, start=1):
        db.execute("INSERT INTO lists (name, color) VALUES (?, ?)", (name, color))
        phrases = PHRASES[name]
        for _ in range(min(sizes[name], 3 * len(phrases))):
            for _attempt in range(12):
                title = _fill(rng, rng.choice(phrases), today)
                if norm_text(title) not in used:
                    break
            else:
                continue  # the list's phrasings are used up: a shorter list
            used.add(norm_text(title))
            done = rng.random() < 0.32
            notes = _fill(rng, rng.choice(NOTES), today) if rng.random() < 0.22 else ""
            rows.append((list_id, title, int(done), _due(rng, today, name, done), _priority(rng, name),
                         _tags(rng, name, title), notes))
    rng.shuffle(rows)  # todos were captured over time, not list by list
    for row in rows:
        db.execute("INSERT INTO todos (list_id, title, done, due, priority, tags, notes) VALUES (?, ?, ?, ?, ?, ?, ?)", row)
