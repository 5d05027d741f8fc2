"""Deterministic mail data: the mailbox of Alex Morgan, a project lead at a US company with
colleagues, clients and friends across several countries.

What a real mailbox of four months holds: 55-75 correspondents from eight locales (en-US, en-GB,
de-DE, fr-FR, es-ES, ja-JP, en-IN, pt-BR) whose names keep their accents and whose addresses are
their names in ASCII at a domain of their country; a few people write most of the mail (Zipf
weights), the rest now and then; automated senders (airlines, hotels, shops, newsletters,
billing) beside them. Work mail arrives on weekdays in the sender's office hours, personal mail
in evenings and at weekends, each newsletter on its own weekday at its own hour. Subjects and
bodies vary in length (one-liners to several paragraphs), a few friends write in their own
language, replies come after what they answer and keep its thread. 300-390 messages in all.
Every choice comes from `rng`; subjects never hold a double quote (a `subject:"..."` search
quotes them).
"""

from __future__ import annotations

import datetime as dt
import random
import re
import unicodedata
from dataclasses import dataclass

from cua.tasks.apps.base import AppDB

ME_NAME = "Alex Morgan"
ME_EMAIL = "alex.morgan@example.com"

#: locale -> (weight among correspondents, first names, last names, company domains, personal domains)
LOCALES: dict[str, tuple[int, list[str], list[str], list[str], list[str]]] = {
    "en-US": (30, ["Ava", "Ben", "Chloe", "Daniel", "Grace", "Tyler", "Madison", "Jordan", "Keisha", "Marcus", "Brianna",
                   "Ethan", "Megan", "Caleb", "Rosa", "Diego", "Hannah", "Wyatt", "Courtney", "Jamal"],
              ["Adams", "Baker", "Brooks", "Carter", "Donovan", "Evans", "Gallagher", "Hayes", "Mitchell", "Murphy",
               "Nguyen", "Ortiz", "Ramirez", "Sullivan", "Whitfield", "Young", "Coleman", "Bennett"],
              ["northwind.io", "bluepeak.org", "harbor.co", "acme-corp.com", "lumen.dev"], ["gmail.com", "outlook.com", "icloud.com"]),
    "en-GB": (9, ["Oliver", "Amelia", "Harry", "Imogen", "Callum", "Freya", "Rhys", "Niamh", "Alfie", "Poppy"],
              ["Ashworth", "Clarke", "Fairbairn", "Hughes", "Pemberton", "Thornton", "Doyle", "Whitaker"],
              ["thamesbridge.co.uk", "northwind.io"], ["btinternet.com", "gmail.com"]),
    "de-DE": (14, ["Lukas", "Jonas", "Lea", "Maximilian", "Anja", "Florian", "Katrin", "Tobias", "Mareike", "Jürgen",
                   "Sören", "Britta"],
              ["Müller", "Schröder", "Becker", "Hoffmann", "Wagner", "Krüger", "Neumann", "Schulze", "Vogel", "Weiß",
               "Köhler"],
              ["kessler-logistik.de", "nordlicht-software.de", "northwind.io"], ["web.de", "gmx.de", "posteo.de"]),
    "fr-FR": (11, ["Élodie", "Camille", "Théo", "Mathilde", "Hugo", "Inès", "Baptiste", "Chloé", "Léa", "François"],
              ["Lefèvre", "Dubois", "Moreau", "Girard", "Rousseau", "Fontaine", "Chevalier", "Bonnet", "Mercier"],
              ["atelier-dumas.fr", "groupe-lumiere.fr"], ["orange.fr", "free.fr", "laposte.net"]),
    "es-ES": (9, ["Lucía", "Javier", "Carmen", "Álvaro", "Marta", "Sergio", "Nerea", "Pablo", "Irene"],
              ["García", "Fernández", "Navarro", "Ruiz", "Moreno", "Iglesias", "Castillo", "Ibáñez"],
              ["solaris-energia.es", "northwind.io"], ["gmail.com", "hotmail.es"]),
    "ja-JP": (7, ["Haruto", "Yui", "Sota", "Aoi", "Ren", "Hina", "Kaito", "Sakura", "Kenji"],
              ["Sato", "Suzuki", "Takahashi", "Watanabe", "Ito", "Yamamoto", "Nakamura", "Kobayashi"],
              ["kanto-seimitsu.co.jp"], ["yahoo.co.jp", "gmail.com"]),
    "en-IN": (12, ["Ananya", "Rohan", "Kavya", "Arjun", "Meera", "Vikram", "Sneha", "Aditya", "Divya", "Karthik"],
              ["Iyer", "Reddy", "Sharma", "Menon", "Rao", "Krishnan", "Desai", "Kulkarni", "Bhat"],
              ["sundaram-infotech.in", "northwind.io"], ["gmail.com", "rediffmail.com"]),
    "pt-BR": (5, ["João", "Beatriz", "Thiago", "Larissa", "Gustavo", "Camila"],
              ["Silva", "Oliveira", "Santos", "Pereira", "Conceição", "Ribeiro"],
              ["vertice.com.br"], ["gmail.com", "uol.com.br"]),
}
#: a sender's office hours, in the mailbox's time (US Eastern): a colleague abroad writes early
OFFICE_HOURS = {"en-US": (8, 18), "en-GB": (4, 12), "de-DE": (3, 11), "fr-FR": (3, 11), "es-ES": (3, 12),
                "ja-JP": (19, 23), "en-IN": (0, 8), "pt-BR": (7, 16)}

LABELS = [("Work", "#1f6feb"), ("Personal", "#2da44e"), ("Travel", "#bf8700"), ("Finance", "#8250df"),
          ("Receipts", "#cf222e"), ("Newsletters", "#57606a"), ("Family", "#d4a72c"), ("Follow-up", "#bc4c00")]
PROJECTS = ["Atlas", "Beacon", "Cobalt", "Ember", "Falcon", "Helix", "Juniper", "Polaris", "Nordlicht"]
CITIES = ["Lisbon", "Berlin", "Osaka", "Toronto", "Nairobi", "Denver", "Oslo", "Madrid", "Seoul", "Dublin", "São Paulo",
          "Bengaluru", "Lyon", "Zürich", "Chicago"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
PHASES = ["design", "research", "backend", "frontend", "testing", "security", "data", "migration"]
RISKS = ["vendor delays", "the hiring freeze", "API rate limits", "the data migration", "budget approval",
         "the SSO cut-over in EMEA", "a single point of failure in the billing job"]
MONTHS = ["March", "April", "May", "June", "July", "September"]
PLACES = ["Eagle Peak", "Silver Lake", "the old lighthouse", "Pine Ridge", "Fox Valley", "Bear Mountain"]
COMPANIES = ["Northwind", "Acme Corp", "Bluepeak", "Lumen Labs", "Harbor & Co", "Kessler Logistik", "Atelier Dumas",
             "Solaris Energía", "Sundaram Infotech"]

#: automated senders: kind -> [(name, address)]
SERVICES: dict[str, list[tuple[str, str]]] = {
    "flight": [("Lufthansa", "booking@lufthansa.example"), ("Delta Air Lines", "deltaassist@delta.example"),
               ("TAP Air Portugal", "noreply@flytap.example"), ("ANA", "reservations@ana.example")],
    "hotel": [("Booking.com", "noreply@booking.example"), ("Marriott Bonvoy", "reservations@marriott.example"),
              ("Hotel Adlon Kempinski", "reservations@adlon.example")],
    "shop": [("Amazon", "shipment-tracking@amazon.example"), ("REI Co-op", "orders@rei.example"),
             ("IKEA", "order@ikea.example"), ("Etsy", "transaction@etsy.example")],
    "billing": [("Comcast Xfinity", "billing@xfinity.example"), ("Verizon", "vzwbilling@verizon.example"),
                ("Con Edison", "noreply@coned.example"), ("Figma", "billing@figma.example")],
    "newsletter": [("Python Weekly", "news@pythonweekly.example"), ("The Morning Brew", "crew@morningbrew.example"),
                   ("Smashing Magazine", "newsletter@smashingmagazine.example"), ("Bicycling", "ride@bicycling.example")],
    "vendor": [("Lumen Labs Accounts", "ar@lumenlabs.example"), ("Harbor & Co Finance", "invoices@harborco.example")],
}
#: newsletter -> (weekday it comes on, hour, its topic)
NEWSLETTER_SLOTS = {"Python Weekly": (3, 11, "Python"), "The Morning Brew": (0, 6, "business news"),
                    "Smashing Magazine": (1, 10, "design systems"), "Bicycling": (5, 8, "urban cycling")}


@dataclass(frozen=True)
class Topic:
    """A kind of message: its subject and body patterns, label, who sends it and how often."""

    subject: str
    body: str
    label: str
    sender: str  # "person" (work), "friend" (personal) or a SERVICES kind
    weight: int


TOPICS = [
    Topic("{project} status update", "Hi {to},\n\nQuick update on {project}: we finished the {phase} phase and are on track for "
          "the {month} milestone. The open risk is {risk}.{extra}\n\nBest,\n{sender}", "Work", "person", 9),
    Topic("Q{q} budget review", "Hi {to},\n\nCould you review the Q{q} budget before {day}? The total is {amount} and I flagged "
          "two line items (travel and contractors).\n\nThanks,\n{sender}", "Finance", "person", 4),
    Topic("Lunch on {day}?", "Hey {to},\n\nAre you free for lunch on {day}? I was thinking of the new place near the office "
          "around 12:30.\n\n{sender}", "Personal", "friend", 5),
    Topic("Invoice #{n} from {vendor}", "Hello,\n\nPlease find attached invoice #{n} for {invoice}, due in 30 days.\n"
          "Bank transfer or card are both fine. Reply to this email with any questions.\n\nRegards,\n{vendor} accounts team",
          "Finance", "vendor", 5),
    Topic("Flight confirmation {code}", "Your flight to {city} is confirmed.\n\nBooking reference: {code}\nDeparture: {date} at "
          "{time}\nSeat: {seat}\n\nCheck-in opens 24 hours before departure. Have a good trip!", "Travel", "flight", 5),
    Topic("Hotel booking in {city}", "Dear {to},\n\nYour reservation in {city} from {date} for {nights} nights is confirmed.\n"
          "Confirmation number {code}. Free cancellation until 48 hours before arrival.\n\nWe look forward to welcoming you.",
          "Travel", "hotel", 4),
    Topic("Meeting notes: {project} sync", "Hi all,\n\nNotes from today's {project} sync:\n- decided to move the launch to "
          "{month}\n- {to} owns the rollout plan\n- {first} to check {risk}\n- next sync on {day}\n\n{sender}", "Work", "person", 6),
    Topic("Your order #{n} has shipped", "Good news! Your order #{n} ({amount}) has shipped and should arrive by {date}.\n\n"
          "Tracking number: {code}\n\nYou can follow the delivery in your account.", "Receipts", "shop", 5),
    Topic("Receipt for your payment of {amount}", "Thanks for your payment of {amount} on {date}.\nReference {code}.\n\n"
          "This is an automated message, please do not reply.", "Receipts", "billing", 4),
    Topic("Weekly digest: {topic}", "This week in {topic}: five articles you might like, a long read on {risk}, and a "
          "roundup of community news.\n\nUnsubscribe any time from your settings.", "Newsletters", "newsletter", 8),
    Topic("Can you review my PR for {project}?", "Hi {to},\n\nI opened a pull request for {project} that touches the {phase} "
          "code. Could you take a look when you have a minute?\n\nCheers,\n{sender}", "Work", "person", 4),
    Topic("Birthday plans for {first}", "Hi {to},\n\n{first}'s birthday is on {date}. Want to chip in for a gift? I was "
          "thinking around {amount}.\n\n{sender}", "Personal", "friend", 5),
    Topic("Interview schedule for {day}", "Hi {to},\n\nThe interviews for the {phase} role are on {day}. You're on the panel "
          "at {time}; the candidate's CV is in the hiring folder.\n\nThanks,\n{sender}", "Work", "person", 3),
    Topic("Expense report {month}", "Hi {to},\n\nI submitted my expense report for {month}: {amount} in total, mostly travel "
          "to {city}.\n\n{sender}", "Finance", "person", 2),
    Topic("Weekend hike to {place}?", "Hey {to},\n\nA few of us are hiking to {place} on Saturday. Meet at 8:00 at the "
          "station?\n\n{sender}", "Personal", "friend", 2),
    Topic("Contract renewal with {company}", "Dear {to},\n\nThe contract with {company} is up for renewal on {date}. The new "
          "quote is {amount}, about 6% above last year.{extra}\n\nKind regards,\n{sender}", "Work", "person", 2),
    Topic("quick q", "{to} — do you still have the login for the staging dashboard? Mine expired.\n\n{sender}", "Work",
          "person", 2),
    Topic("Re-org of the {phase} team: what changes for {project} (and what doesn't)", "Hi {to},\n\nAhead of Thursday's "
          "all-hands, here is the short version.\n\n1. The {phase} team moves under {first}'s group from {month}.\n"
          "2. {project} keeps its roadmap and its on-call rotation.\n3. Nobody changes managers before the end of the "
          "quarter.{extra}\n\nHappy to talk it through 1:1 — grab any slot in my calendar.\n\n{sender}", "Work", "person", 1),
    Topic("Slides for {day}", "Attached are the slides for {day}. Slide 7 still has placeholder numbers.\n\n{sender}", "Work",
          "person", 2),
    Topic("Out of office until {date}", "I'm out of office until {date} with limited access to email. For anything urgent "
          "about {project}, please contact {first}.\n\n{sender}", "", "person", 2),
    Topic("Photos from {place} 📷", "Hi {to},\n\nHere are the photos from {place}! The one by the lake is my favourite.\n\n"
          "{sender}", "Family", "friend", 2),
    Topic("Your {month} statement is ready", "Your statement for {month} is ready to view in online banking. Balance due: "
          "{amount}.\n\nThis mailbox is not monitored.", "Finance", "billing", 2),
    Topic("Parent-teacher evening on {day}", "Dear parents,\n\nThe parent-teacher evening is on {day} from 17:30 to 20:00 in "
          "the school hall. Please book a 10-minute slot with each teacher.\n\nThank you,\n{sender}", "Family", "friend", 1),
]
#: personal notes some friends write in their own language: locale -> [(subject, body)]
NATIVE: dict[str, list[tuple[str, str]]] = {
    "de-DE": [("Grillen am Samstag?", "Hallo {to},\n\nwir grillen am Samstag ab 16 Uhr bei uns im Garten. Kommst du? "
               "Bring gern jemanden mit.\n\nViele Grüße\n{sender}"),
              ("Kurze Frage zu {city}", "Hi {to},\n\nkannst du mir ein gutes Café in {city} empfehlen? Ich bin nächste "
               "Woche dort.\n\nLG {sender}")],
    "fr-FR": [("Dîner vendredi ?", "Salut {to},\n\nÇa te dit de dîner vendredi soir ? On pensait à ce petit restaurant "
               "près du canal, vers 20 h.\n\nBises,\n{sender}"),
              ("Photos du week-end à {place}", "Coucou {to} !\n\nVoici les photos du week-end. Merci encore pour "
               "l'accueil.\n\n{sender}")],
    "es-ES": [("¿Café el {day}?", "Hola {to},\n\n¿Tienes un rato para un café el {day}? Te cuento lo del nuevo "
               "proyecto.\n\nUn abrazo,\n{sender}")],
    "pt-BR": [("Churrasco no domingo", "Oi {to}!\n\nVai ter churrasco lá em casa no domingo a partir do meio-dia. "
               "Aparece!\n\nAbraço,\n{sender}")],
}
#: the extra paragraph a long message carries (the long tail of bodies)
EXTRAS = [
    "\n\nFor context: the last two sprints slipped because of {risk}, so I'd rather keep a week of buffer before "
    "{month}. If that's a problem for the client, let's discuss it on {day}.",
    "\n\nOne more thing: finance asked for the updated numbers by {date}; I've put a draft in the shared folder "
    "(tab 'Q{q}'). Please check the rows for {city} — they look off by roughly {amount}.",
    "", "", "",
]
REPLIES = [
    "Hi {to},\n\nThanks, that works for me. Let's go with {day}.\n\n{sender}",
    "Hi {to},\n\nGot it, I'll take a look before {day} and get back to you.\n\n{sender}",
    "Thanks {to}! One question: can we keep the total under {amount}?\n\n{sender}",
    "Sounds good. I've added it to the calendar for {date}.\n\n{sender}",
    "Hi {to},\n\nSorry for the delay. I'm travelling to {city} this week, so {day} is better for me.\n\n{sender}",
    "👍\n\n{sender}",
    "Hi {to},\n\nI read it twice and I think we're mostly aligned. Two small points: the {phase} estimate looks "
    "optimistic, and I'd like {first} to review the plan before we commit. Otherwise good to go.\n\n{sender}",
]
ALL_FIRST = sorted({first for _, firsts, _, _, _ in LOCALES.values() for first in firsts})
CURRENCY = {"de-DE": "€", "fr-FR": "€", "es-ES": "€", "en-GB": "£", "ja-JP": "¥", "en-IN": "₹", "pt-BR": "R$"}


def ascii_fold(text: str) -> str:
    """`text` in lower-case ASCII letters (an address's local part): accents dropped, ß as ss."""
    text = text.lower().replace("ß", "ss").replace("ø", "o")
    folded = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return re.sub(r"[^a-z]", "", folded)


def _code(rng: random.Random, n: int = 6) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(n))


def _amount(rng: random.Random, locale: str, low: int, high: int) -> str:
    """A price in the sender's currency, with a plausible long tail (most small, a few large)."""
    value = min(high, low + int(rng.paretovariate(1.2) * low))
    symbol = CURRENCY.get(locale, "$")
    if symbol == "¥":
        return f"¥{value * 150:,}"
    if symbol in ("€", "R$"):
        return f"{value:,}.{rng.randint(0, 99):02d}".replace(",", " ").replace(".", ",") + f" {symbol}"
    return f"{symbol}{value:,}.{rng.randint(0, 99):02d}"


@dataclass(frozen=True)
class Person:
    name: str
    email: str
    locale: str
    friend: bool  # writes personal mail (at evenings and weekends) rather than work mail


def _people(rng: random.Random) -> list[Person]:
    locales = list(LOCALES)
    weights = [LOCALES[loc][0] for loc in locales]
    people: list[Person] = []
    names: set[str] = set()
    emails: set[str] = set()
    target = rng.randint(55, 75)
    while len(people) < target:
        locale = rng.choices(locales, weights)[0]
        _, firsts, lasts, work, home = LOCALES[locale]
        first, last = rng.choice(firsts), rng.choice(lasts)
        name = f"{last} {first}" if locale == "ja-JP" and rng.random() < 0.3 else f"{first} {last}"
        if name in names:
            continue
        friend = rng.random() < 0.3
        f, la = ascii_fold(first), ascii_fold(last)
        local = rng.choice([f"{f}.{la}", f"{f}.{la}", f"{f[0]}{la}", f"{f}{la[0]}", f"{f}_{la}{rng.randint(70, 99)}"]
                           if friend else [f"{f}.{la}", f"{f}.{la}", f"{f[0]}.{la}", f"{f[0]}{la}"])
        email = f"{local}@{rng.choice(home if friend else work)}"
        if email in emails:
            continue
        names.add(name)
        emails.add(email)
        people.append(Person(name, email, locale, friend))
    return people


def _stamp(rng: random.Random, now: dt.datetime, kind: str, locale: str, name: str) -> dt.datetime:
    """When a message of this kind from this sender plausibly arrived, in the last 120 days."""
    for _ in range(200):
        day = now.date() - dt.timedelta(days=min(119, int(rng.expovariate(1 / 45))))
        if kind == "newsletter":
            weekday, hour, _ = NEWSLETTER_SLOTS[name]
            day -= dt.timedelta(days=(day.weekday() - weekday) % 7)
            at = dt.datetime.combine(day, dt.time(hour, rng.choice([0, 0, 1, 2, 5])))
        elif kind in ("person", "vendor"):
            if day.weekday() >= 5 and rng.random() < 0.9:
                continue
            start, end = OFFICE_HOURS[locale]
            at = dt.datetime.combine(day, dt.time(rng.randint(start, end), rng.randint(0, 59)))
        elif kind == "friend":
            evening = day.weekday() < 5
            at = dt.datetime.combine(day, dt.time(rng.randint(18, 22) if evening else rng.randint(9, 21), rng.randint(0, 59)))
        else:  # shops, airlines, billing: any hour, mostly daytime
            at = dt.datetime.combine(day, dt.time(rng.choice([rng.randint(7, 22), rng.randint(0, 23)]), rng.randint(0, 59)))
        if at < now - dt.timedelta(minutes=5):
            return at
    return now - dt.timedelta(hours=1)


@dataclass
class _Draft:
    """One message as drawn, before it gets its id."""

    stamp: dt.datetime
    topic: Topic
    other: Person
    folder: str
    fill: dict[str, object]
    subject: str
    body: str
    parent: int | None = None

    @property
    def outgoing(self) -> bool:
        return self.folder in ("sent", "drafts")


def _zipf(n: int) -> list[float]:
    return [1 / (i + 1) ** 0.9 for i in range(n)]


def _draw(rng: random.Random, now: dt.datetime, people: list[Person], colleagues: list[Person],
          friends: list[Person]) -> _Draft:
    topic = rng.choices(TOPICS, [t.weight for t in TOPICS])[0]
    native = None
    if topic.sender == "person":
        other = rng.choices(colleagues, _zipf(len(colleagues)))[0]
    elif topic.sender == "friend":
        other = rng.choices(friends, _zipf(len(friends)))[0]
        if other.locale in NATIVE and rng.random() < 0.5:
            native = rng.choice(NATIVE[other.locale])
    else:
        service = rng.choice(SERVICES[topic.sender])
        other = Person(service[0], service[1], "en-US", False)
    r = rng.random()
    if topic.sender in SERVICES:
        folder = "inbox" if r < 0.62 else "archive" if r < 0.93 else "trash"
    else:
        folder = "inbox" if r < 0.62 else "sent" if r < 0.82 else "archive" if r < 0.93 else "drafts" if r < 0.96 else "trash"
    outgoing = folder in ("sent", "drafts")
    stamp = (_stamp(rng, now, "person", "en-US", ME_NAME) if outgoing
             else _stamp(rng, now, topic.sender, other.locale, other.name))
    news = NEWSLETTER_SLOTS.get(other.name)
    fill: dict[str, object] = {
        "project": rng.choice(PROJECTS), "phase": rng.choice(PHASES), "month": rng.choice(MONTHS),
        "risk": rng.choice(RISKS), "q": rng.randint(1, 4), "day": rng.choice(DAYS),
        "amount": _amount(rng, other.locale, 18, 9000), "n": rng.randint(10000, 99999),
        "invoice": f"${min(6000, int(80 * rng.paretovariate(1.1)))}.{rng.randint(0, 99):02d}",  # a US vendor's: no separator
        "code": _code(rng), "city": rng.choice(CITIES), "seat": f"{rng.randint(3, 42)}{rng.choice('ABCDEF')}",
        "date": (stamp.date() + dt.timedelta(days=rng.randint(2, 40))).strftime("%b %d, %Y"),
        "time": f"{rng.randint(6, 21):02d}:{rng.choice(['00', '15', '30', '45', '05', '50'])}", "nights": rng.randint(1, 6),
        "topic": news[2] if news else "Python", "first": rng.choice(ALL_FIRST), "place": rng.choice(PLACES),
        "company": rng.choice(COMPANIES), "vendor": other.name.split(" Accounts")[0].split(" Finance")[0],
        "to": other.name.split()[0] if outgoing else ME_NAME.split()[0],
        "sender": "Alex" if outgoing else other.name.split()[0],
    }
    fill["extra"] = rng.choice(EXTRAS).format(**fill)
    subject, body = native if native else (topic.subject, topic.body)
    return _Draft(stamp, topic, other, folder, fill, subject.format(**fill), body.format(**fill))


def seed_mail(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    for name, color in LABELS:
        db.execute("INSERT INTO labels (name, color) VALUES (?, ?)", (name, color))
    label_ids = {name: i + 1 for i, (name, _) in enumerate(LABELS)}
    people = _people(rng)
    for p in people:
        db.execute("INSERT INTO people (name, email) VALUES (?, ?)", (p.name, p.email))
    order = list(people)  # a few people write most of the mail: Zipf weights over a shuffled order
    rng.shuffle(order)
    colleagues = [p for p in order if not p.friend]
    friends = [p for p in order if p.friend]

    # every message drawn first, oldest to newest, so that a reply follows what it answers
    drafted = sorted((_draw(rng, now, people, colleagues, friends) for _ in range(rng.randint(300, 390))),
                     key=lambda d: d.stamp)
    for i, d in enumerate(drafted):
        if d.topic.sender in SERVICES or rng.random() > 0.3:
            continue
        # a reply in a conversation with the same person: to their last few messages
        earlier = [j for j in range(i) if drafted[j].other.email == d.other.email and drafted[j].folder != "drafts"][-4:]
        if not earlier:
            continue
        parent = drafted[rng.choice(earlier)]
        d.parent = drafted.index(parent)
        d.subject = parent.subject if parent.subject.startswith("Re: ") else "Re: " + parent.subject
        d.body = rng.choice(REPLIES).format(**d.fill)
    threads: dict[int, int] = {}
    for k, d in enumerate(drafted):  # a reply keeps the thread of what it answers
        threads[k] = threads[d.parent] if d.parent is not None else k + 1

    # the newest message first (id 1); a reply's link to its parent is set once both exist
    ids: dict[int, int] = {}
    for k in sorted(range(len(drafted)), key=lambda k: drafted[k].stamp, reverse=True):
        d = drafted[k]
        automated = d.topic.sender in SERVICES
        sender_name, sender_email = (ME_NAME, ME_EMAIL) if d.outgoing else (d.other.name, d.other.email)
        cc = ""
        if d.topic.sender == "person" and rng.random() < 0.25:
            cc = ", ".join(p.email for p in rng.sample(colleagues, rng.choice([1, 1, 1, 2, 3])) if p.email != d.other.email)
        # unread: most of the last days' mail, a few older ones, and the newsletters and notices nobody opens
        recent = d.stamp >= now - dt.timedelta(days=3)
        unread_p = 0.6 if recent else 0.3 if d.topic.sender in ("newsletter", "shop") else 0.04
        read = 1 if d.outgoing or d.folder != "inbox" else int(rng.random() >= unread_p)
        mid = db.insert(
            "INSERT INTO messages (thread_id, folder, from_name, from_email, to_addrs, cc_addrs, subject, body, sent_at,"
            " read, starred, in_reply_to) VALUES (?,?,?,?,?,?,?,?,?,?,?,NULL)",
            (threads[k], d.folder, sender_name, sender_email, d.other.email if d.outgoing else ME_EMAIL, cc, d.subject,
             d.body, d.stamp.strftime("%Y-%m-%d %H:%M"), read, int(rng.random() < (0.03 if automated else 0.1))))
        ids[k] = mid
        label = d.topic.label
        if label and rng.random() < (0.9 if automated else 0.6):
            db.execute("INSERT INTO message_labels (message_id, label_id) VALUES (?, ?)", (mid, label_ids[label]))
        if not d.outgoing and d.topic.sender == "person" and rng.random() < 0.08:
            db.execute("INSERT INTO message_labels (message_id, label_id) VALUES (?, ?)", (mid, label_ids["Follow-up"]))
        if (label in ("Finance", "Travel", "Receipts") and rng.random() < 0.5) or (
                d.topic.subject.startswith("Slides") and rng.random() < 0.8):
            ext, name = _attachment_name(rng, d.topic, d.fill, d.stamp)
            data = (f"{d.subject}\nReference {d.fill['code']}\n" * rng.randint(20, 400)).encode()
            db.execute("INSERT INTO attachments (message_id, filename, content_type, size, data) VALUES (?,?,?,?,?)",
                       (mid, name, CONTENT_TYPES[ext], len(data), data))
    for k, d in enumerate(drafted):
        if d.parent is not None:
            db.execute("UPDATE messages SET in_reply_to = ? WHERE id = ?", (ids[d.parent], ids[k]))


CONTENT_TYPES = {"pdf": "application/pdf", "xlsx": "application/vnd.ms-excel", "png": "image/png", "jpg": "image/jpeg",
                 "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation"}


def _attachment_name(rng: random.Random, topic: Topic, fill: dict[str, object], stamp: dt.datetime) -> tuple[str, str]:
    """A file name of the kind each sender attaches (an invoice number, a boarding pass, a spreadsheet)."""
    s = topic.subject
    if s.startswith("Invoice"):
        return "pdf", f"invoice-{fill['n']}.pdf"
    if s.startswith("Flight"):
        return "pdf", f"boarding-pass-{fill['code']}.pdf"
    if s.startswith("Hotel"):
        return "pdf", f"reservation-{fill['code']}.pdf"
    if s.startswith("Slides"):
        return "pptx", f"{fill['project']}-review-v{rng.randint(2, 7)}.pptx"
    if "budget" in s or "Expense" in s:
        ext = rng.choice(["xlsx", "xlsx", "pdf"])
        return ext, f"Q{fill['q']}-budget-{stamp:%Y%m%d}.{ext}" if "budget" in s else f"expenses-{fill['month']}.{ext}"
    if rng.random() < 0.3:
        return "jpg", f"IMG_{rng.randint(1000, 9999)}.jpg"
    return "pdf", f"receipt-{stamp:%Y-%m-%d}-{fill['code']}.pdf"
