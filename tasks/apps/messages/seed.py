"""Deterministic SMS history: about 45 conversations with the address book's people (and a
few services and unknown numbers), a few to dozens of messages each over three months,
some in the sender's own language; the latest incoming messages of a few threads unread."""

from __future__ import annotations

import datetime as dt
import random

from cua.tasks.apps.base import AppDB
from cua.tasks.apps.phone_people import phone_book

#: (their message, your reply) pairs by language; English for most people.
CHAT: dict[str, list[tuple[str, str]]] = {
    "en": [("Are we still on for tonight?", "Yes! 7:30 at the usual place"), ("Running 10 min late, sorry", "No worries"),
           ("Did you see the match?", "Unbelievable second half"), ("Can you pick up milk on the way home?", "Sure, anything else?"),
           ("Happy birthday!! 🎉", "Thank you so much!"), ("What time is the dentist tomorrow?", "9:15, I'll drive"),
           ("Sent you the photos from Saturday", "They came out great"), ("Call me when you're free", "In a meeting, ring you at 3"),
           ("Is the train on time?", "Delayed 20 minutes again"), ("Dinner at ours on Sunday?", "We'd love to, what can we bring?"),
           ("Left my keys at yours I think", "Found them, I'll drop them round"), ("Good luck with the interview!", "Thanks, fingers crossed"),
           ("How's the new flat?", "Still unpacking boxes"), ("Fancy a coffee this week?", "Thursday morning works"),
           ("Parcel arrived for you", "Brilliant, thanks for taking it in")],
    "de": [("Kommst du heute Abend?", "Ja, bin um acht da"), ("Hast du die Unterlagen bekommen?", "Ja, danke!"),
           ("Alles Gute zum Geburtstag!", "Danke dir!")],
    "fr": [("On se voit demain ?", "Oui, vers midi"), ("Tu as reçu mon message ?", "Oui, je te rappelle ce soir"),
           ("Bon voyage !", "Merci, à bientôt")],
    "es": [("¿Quedamos el sábado?", "¡Claro! ¿A qué hora?"), ("Ya he llegado", "Perfecto, bajo ahora"),
           ("¡Feliz cumpleaños!", "¡Muchas gracias!")],
    "pt": [("Tudo bem? Chegou bem?", "Cheguei sim, obrigado!"), ("Vamos almoçar amanhã?", "Bora, meio-dia?")],
    "ja": [("明日は何時に会いますか？", "10時はどうですか"), ("ありがとうございました！", "こちらこそ！")],
    "pl": [("Jesteś już w domu?", "Tak, właśnie wróciłem"), ("Dzięki za wczoraj!", "Nie ma sprawy")],
}
SERVICE_TEXTS = [("+44 7860 010101", "Your Royal Mail parcel {ref} will be delivered today between 11:05 and 13:05."),
                 ("+44 7860 020202", "{code} is your verification code for Northway Bank. Never share this code."),
                 ("+44 7860 030303", "Reminder: your appointment at Dr Patel's Surgery is on {day} at 10:40. Reply C to cancel."),
                 ("+44 7860 040404", "Your table for 2 at Bella Napoli is confirmed for {day}, 19:30.")]


def seed_messages(db: AppDB, rng: random.Random, seed: int, now: dt.datetime) -> None:
    people = phone_book(seed)
    for p in people:
        db.execute("INSERT INTO contacts (name, number) VALUES (?, ?)", (p.name, p.number))
    chosen = rng.sample(range(len(people)), 40)
    threads: list[tuple[str, int | None, str]] = [(people[i].number, i + 1, people[i].locale[:2]) for i in chosen]
    stamps: list[tuple[dt.datetime, int, str, str]] = []
    for t_index, (number, cid, lang) in enumerate(threads, start=1):
        db.execute("INSERT INTO threads (number, contact_id) VALUES (?, ?)", (number, cid))
        pool = CHAT.get(lang, []) + CHAT["en"] if lang != "en" else CHAT["en"]
        when = now - dt.timedelta(days=rng.randint(0, 90), minutes=rng.randint(0, 1439))
        for _ in range(rng.choice([1, 2, 3, 5, 8, 12])):
            theirs, mine = rng.choice(pool)
            stamps.append((when, t_index, "in", theirs))
            when += dt.timedelta(minutes=rng.randint(1, 90))
            if rng.random() < 0.85:
                stamps.append((when, t_index, "out", mine))
            when += dt.timedelta(hours=rng.randint(2, 120))
            if when >= now:
                break
    for number, text in SERVICE_TEXTS:
        db.execute("INSERT INTO threads (number, contact_id) VALUES (?, NULL)", (number,))
        t_index = db.scalar("SELECT MAX(id) FROM threads")
        for _ in range(rng.randint(1, 4)):
            when = now - dt.timedelta(days=rng.randint(0, 60), minutes=rng.randint(0, 1439))
            day = (when + dt.timedelta(days=rng.randint(1, 6))).strftime("%a %-d %b")
            stamps.append((when, t_index, "in", text.format(ref=f"RM{rng.randint(10**8, 10**9 - 1)}GB",
                                                             code=f"{rng.randint(0, 999999):06d}", day=day)))
    stamps = [s for s in stamps if s[0] < now]
    stamps.sort(key=lambda s: (s[0], s[1]))
    latest_in: dict[int, int] = {}
    for i, (_, tid, direction, _) in enumerate(stamps):
        latest_in[tid] = i if direction == "in" else -1  # a thread's last message is an unanswered incoming one
    unread = {i for i in sorted((i for i in latest_in.values() if i >= 0), reverse=True)[:5]}
    for i, (when, tid, direction, body) in enumerate(stamps):
        db.execute("INSERT INTO messages (thread_id, direction, body, sent_at, read) VALUES (?, ?, ?, ?, ?)",
                   (tid, direction, body, when.strftime("%Y-%m-%d %H:%M"), 0 if i in unread else 1))
    db.execute("DELETE FROM threads WHERE id NOT IN (SELECT thread_id FROM messages)")
