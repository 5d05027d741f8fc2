"""Deterministic mail data: ~60 correspondents and ~300 messages in threads, folders and labels."""

from __future__ import annotations

import datetime as dt
import random

from cua.tasks.apps.base import AppDB

ME_NAME = "Alex Morgan"
ME_EMAIL = "alex.morgan@example.com"

FIRST = ["Ava", "Ben", "Chloe", "Daniel", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira", "Liam",
         "Maya", "Noah", "Olga", "Pablo", "Quinn", "Rosa", "Samir", "Tara", "Uma", "Victor", "Wendy", "Xavier",
         "Yara", "Zane", "Amir", "Bianca", "Carlos", "Dana", "Emil", "Fiona", "Gavin", "Hana", "Ivan", "Julia",
         "Kenji", "Lena", "Marco", "Nina", "Oscar", "Priya", "Rafael", "Sofia", "Tomas", "Ursula", "Vera",
         "Wei", "Yusuf", "Zoe"]
LAST = ["Adams", "Baker", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jensen", "Kowalski",
        "Lopez", "Murphy", "Nakamura", "Okafor", "Patel", "Quist", "Rossi", "Schmidt", "Tanaka", "Usman",
        "Varga", "Weber", "Xu", "Young", "Zimmer", "Novak", "Silva", "Berg", "Moreau"]
DOMAINS = ["northwind.io", "acme-corp.com", "bluepeak.org", "lumen.dev", "harbor.co", "gmail.test", "fastmail.test"]
LABELS = [("Work", "#1f6feb"), ("Personal", "#2da44e"), ("Travel", "#bf8700"), ("Finance", "#8250df"),
          ("Receipts", "#cf222e"), ("Newsletters", "#57606a")]
PROJECTS = ["Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Helix", "Ion", "Juniper"]
CITIES = ["Lisbon", "Berlin", "Osaka", "Toronto", "Nairobi", "Denver", "Oslo", "Madrid", "Seoul", "Dublin"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]

# (subject pattern, body pattern, label) with {placeholders} filled from the generator.
TOPICS = [
    ("{project} status update", "Hi {to},\n\nQuick update on {project}: we finished the {phase} phase and are on track for the {month} milestone. The open risk is {risk}.\n\nBest,\n{sender}", "Work"),
    ("Q{q} budget review", "Hi {to},\n\nCould you review the Q{q} budget before {day}? The total is {amount} and I flagged two line items.\n\nThanks,\n{sender}", "Finance"),
    ("Lunch on {day}?", "Hey {to},\n\nAre you free for lunch on {day}? I was thinking of the new place near the office around 12:30.\n\n{sender}", "Personal"),
    ("Invoice #{n}", "Hello,\n\nPlease find invoice #{n} for {amount}, due in 30 days. Reply to this email with any questions.\n\nRegards,\n{sender}", "Finance"),
    ("Flight confirmation {code}", "Your flight to {city} is confirmed. Booking reference: {code}. Departure on {date} at {time}.\n\nHave a good trip!", "Travel"),
    ("Hotel booking in {city}", "Dear {to},\n\nYour reservation in {city} from {date} for {nights} nights is confirmed. Confirmation number {code}.\n\n{sender}", "Travel"),
    ("Meeting notes: {project} sync", "Hi all,\n\nNotes from today's {project} sync:\n- decided to move the launch to {month}\n- {to} owns the rollout plan\n- next sync on {day}\n\n{sender}", "Work"),
    ("Your order #{n} has shipped", "Good news! Order #{n} ({amount}) has shipped and should arrive by {date}.\n\nTracking: {code}", "Receipts"),
    ("Receipt for your payment of {amount}", "Thanks for your payment of {amount} on {date}. Reference {code}.", "Receipts"),
    ("Weekly digest: {topic}", "This week in {topic}: five articles you might like, plus a roundup of community news.\n\nUnsubscribe any time.", "Newsletters"),
    ("Can you review my PR for {project}?", "Hi {to},\n\nI opened a pull request for {project} that touches the {phase} code. Could you take a look when you have a minute?\n\nCheers,\n{sender}", "Work"),
    ("Birthday plans for {first}", "Hi {to},\n\n{first}'s birthday is on {date}. Want to chip in for a gift? I was thinking around {amount}.\n\n{sender}", "Personal"),
    ("Interview schedule for {day}", "Hi {to},\n\nThe interviews for the {phase} role are on {day}. You're on the panel at {time}.\n\nThanks,\n{sender}", "Work"),
    ("Expense report {month}", "Hi {to},\n\nI submitted my expense report for {month}: {amount} in total, mostly travel to {city}.\n\n{sender}", "Finance"),
    ("Weekend hike to {place}?", "Hey {to},\n\nA few of us are hiking to {place} on Saturday. Meet at 8:00 at the station?\n\n{sender}", "Personal"),
    ("Contract renewal with {company}", "Dear {to},\n\nThe contract with {company} is up for renewal on {date}. The new quote is {amount}.\n\nKind regards,\n{sender}", "Work"),
]
REPLIES = [
    "Hi {to},\n\nThanks, that works for me. Let's go with {day}.\n\n{sender}",
    "Hi {to},\n\nGot it, I'll take a look before {day} and get back to you.\n\n{sender}",
    "Thanks {to}! One question: can we keep the total under {amount}?\n\n{sender}",
    "Sounds good. I've added it to the calendar for {date}.\n\n{sender}",
    "Hi {to},\n\nSorry for the delay. I'm travelling to {city} this week, so {day} is better for me.\n\n{sender}",
]
PHASES = ["design", "research", "backend", "frontend", "testing", "security", "data"]
RISKS = ["vendor delays", "the hiring freeze", "API rate limits", "the data migration", "budget approval"]
MONTHS = ["April", "May", "June", "July", "September", "October"]
TOPIC_NAMES = ["Python", "design systems", "urban cycling", "home cooking", "astronomy", "personal finance"]
PLACES = ["Eagle Peak", "Silver Lake", "the old lighthouse", "Pine Ridge", "Fox Valley"]
COMPANIES = ["Northwind", "Acme Corp", "Bluepeak", "Lumen Labs", "Harbor & Co", "Globex"]


def _code(rng: random.Random, n: int = 6) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(n))


def seed_mail(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    for name, color in LABELS:
        db.execute("INSERT INTO labels (name, color) VALUES (?, ?)", (name, color))
    label_ids = {name: i + 1 for i, (name, _) in enumerate(LABELS)}
    people: list[tuple[str, str]] = []
    used: set[str] = set()
    while len(people) < 60:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        if f"{first} {last}" in used:
            continue
        used.add(f"{first} {last}")
        email = f"{first.lower()}.{last.lower()}@{rng.choice(DOMAINS)}"
        people.append((f"{first} {last}", email))
        db.execute("INSERT INTO people (name, email) VALUES (?, ?)", (f"{first} {last}", email))

    stamps = sorted((now - dt.timedelta(minutes=rng.randint(5, 120 * 24 * 60)) for _ in range(300)), reverse=True)
    thread = 0
    for i, stamp in enumerate(stamps):
        subject_t, body_t, label = rng.choice(TOPICS)
        other = rng.choice(people)
        r = rng.random()
        folder = "inbox" if r < 0.66 else "sent" if r < 0.80 else "archive" if r < 0.93 else "drafts" if r < 0.96 else "trash"
        outgoing = folder in ("sent", "drafts")
        sender_name, sender_email = (ME_NAME, ME_EMAIL) if outgoing else other
        to_name = other[0].split()[0] if outgoing else ME_NAME.split()[0]
        fill = {
            "project": rng.choice(PROJECTS), "phase": rng.choice(PHASES), "month": rng.choice(MONTHS),
            "risk": rng.choice(RISKS), "q": rng.randint(1, 4), "day": rng.choice(DAYS),
            "amount": f"${rng.randint(20, 9000)}.{rng.randint(0, 99):02d}", "n": rng.randint(10000, 99999),
            "code": _code(rng), "city": rng.choice(CITIES),
            "date": (stamp.date() + dt.timedelta(days=rng.randint(2, 40))).strftime("%b %d, %Y"),
            "time": f"{rng.randint(6, 21):02d}:{rng.choice(['00', '15', '30', '45'])}", "nights": rng.randint(1, 6),
            "topic": rng.choice(TOPIC_NAMES), "first": rng.choice(FIRST), "place": rng.choice(PLACES),
            "company": rng.choice(COMPANIES), "to": to_name, "sender": sender_name.split()[0],
        }
        subject = subject_t.format(**fill)
        thread_id = thread = thread + 1
        in_reply_to = None
        if i > 0 and rng.random() < 0.18:
            prev = db.one("SELECT id, thread_id, subject FROM messages WHERE folder != 'drafts' ORDER BY id DESC LIMIT 1 OFFSET ?",
                          (rng.randint(0, min(i - 1, 20)),))
            if prev is not None:
                thread_id, in_reply_to = prev["thread_id"], prev["id"]
                subject = prev["subject"] if prev["subject"].startswith("Re: ") else "Re: " + prev["subject"]
        body = body_t.format(**fill)
        if in_reply_to is not None:
            body = rng.choice(REPLIES).format(**fill)
        to_addrs = other[1] if outgoing else ME_EMAIL
        cc = ""
        if rng.random() < 0.2:
            cc = rng.choice(people)[1]
        read = 1 if outgoing or folder != "inbox" else int(stamp < now - dt.timedelta(days=3) or rng.random() < 0.4)
        new_id = db.insert(
            "INSERT INTO messages (thread_id, folder, from_name, from_email, to_addrs, cc_addrs, subject, body, sent_at,"
            " read, starred, in_reply_to) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (thread_id, folder, sender_name, sender_email, to_addrs, cc, subject, body,
             stamp.strftime("%Y-%m-%d %H:%M"), read, int(rng.random() < 0.08), in_reply_to))
        mid = new_id
        if rng.random() < 0.75:
            db.execute("INSERT INTO message_labels (message_id, label_id) VALUES (?, ?)", (mid, label_ids[label]))
        if label in ("Finance", "Travel", "Receipts") and rng.random() < 0.5:
            ext = rng.choice(["pdf", "pdf", "xlsx", "png"])
            name = f"{subject.split()[0].lower().strip(':#')}-{fill['n']}.{ext}"
            data = (f"{subject}\nReference {fill['code']}\n" * rng.randint(20, 120)).encode()
            db.execute("INSERT INTO attachments (message_id, filename, content_type, size, data) VALUES (?,?,?,?,?)",
                       (mid, name, {"pdf": "application/pdf", "xlsx": "application/vnd.ms-excel", "png": "image/png"}[ext],
                        len(data), data))
