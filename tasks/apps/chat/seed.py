"""Deterministic workspace data: 25 members from several locales, 15 channels of very
different sizes (a long tail of activity), about three thousand messages with threads,
reactions, pins, mentions of the signed-in member, and direct messages."""

from __future__ import annotations

import datetime as dt
import random

from cua.tasks.apps.base import AppDB

#: (name, handle, title, locale, timezone). The first is the signed-in member ("me").
PEOPLE = [
    ("Sam Rivera", "sam", "Product Manager", "en-US", "America/Chicago"),
    ("Aiko Tanaka", "aiko", "Frontend Engineer", "ja-JP", "Asia/Tokyo"),
    ("Lukas Becker", "lukas", "Backend Engineer", "de-DE", "Europe/Berlin"),
    ("Camille Durand", "camille", "Product Designer", "fr-FR", "Europe/Paris"),
    ("Mateo García", "mateo", "Site Reliability Engineer", "es-ES", "Europe/Madrid"),
    ("Priya Nair", "priya", "Data Scientist", "en-IN", "Asia/Kolkata"),
    ("Olusegun Adeyemi", "segun", "Engineering Manager", "en-NG", "Africa/Lagos"),
    ("Ingrid Johansson", "ingrid", "QA Lead", "sv-SE", "Europe/Stockholm"),
    ("Wei Chen", "wei", "Mobile Engineer", "zh-CN", "Asia/Shanghai"),
    ("Fatima Zahra El Amrani", "fatima", "Support Lead", "fr-MA", "Africa/Casablanca"),
    ("João Pereira", "joao", "Sales Engineer", "pt-BR", "America/Sao_Paulo"),
    ("Chloe Williams", "chloe", "Marketing Manager", "en-GB", "Europe/London"),
    ("Dmitri Volkov", "dmitri", "Security Engineer", "ru-RU", "Europe/Moscow"),
    ("Hannah Schmidt", "hannah", "Technical Writer", "de-AT", "Europe/Vienna"),
    ("Kwame Mensah", "kwame", "Platform Engineer", "en-GH", "Africa/Accra"),
    ("Sofia Rossi", "sofia", "Recruiter", "it-IT", "Europe/Rome"),
    ("Min-jun Park", "minjun", "Data Engineer", "ko-KR", "Asia/Seoul"),
    ("Emily Clarke", "emily", "Customer Success", "en-AU", "Australia/Sydney"),
    ("Noah Cohen", "noah", "Finance Lead", "he-IL", "Asia/Jerusalem"),
    ("Ana Lucía Torres", "analucia", "UX Researcher", "es-MX", "America/Mexico_City"),
    ("Jakub Nowak", "jakub", "DevOps Engineer", "pl-PL", "Europe/Warsaw"),
    ("Aisha Khan", "aisha", "Legal Counsel", "en-PK", "Asia/Karachi"),
    ("Liam O'Brien", "liam", "Office Manager", "en-IE", "Europe/Dublin"),
    ("Yuki Sato", "yuki", "Illustrator", "ja-JP", "Asia/Tokyo"),
    ("Ethan Brooks", "ethan", "CTO", "en-US", "America/New_York"),
]
STATUSES = [("", ""), ("🌴", "On vacation"), ("🤒", "Out sick"), ("📅", "In meetings"), ("🏠", "Working remotely"),
            ("🚆", "Commuting"), ("🎧", "Focus time")]
PRESENCE = ["active", "active", "active", "away", "away", "dnd"]

#: (name, private, topic, weight of activity, member share)
CHANNELS = [
    ("general", False, "Company-wide announcements and work-based matters", 40, 1.0),
    ("random", False, "Non-work banter and water cooler conversation", 25, 1.0),
    ("engineering", False, "Architecture, code and everything we ship", 30, 0.6),
    ("design", False, "Crits, mockups and the design system", 9, 0.35),
    ("support", False, "Customer escalations and help-desk handoffs", 14, 0.45),
    ("sales", False, "Deals, demos and pipeline", 6, 0.3),
    ("incidents", False, "Live incidents only: keep chatter in threads", 8, 0.5),
    ("releases", False, "Release notes and deploy announcements", 5, 0.7),
    ("hiring", True, "Candidates and interview loops (confidential)", 4, 0.25),
    ("leadership", True, "Leadership team", 3, 0.2),
    ("security-audit", True, "Pen-test findings under embargo", 2, 0.16),
    ("book-club", False, "This month: The Pragmatic Programmer", 1.2, 0.3),
    ("office-berlin", False, "Berlin office logistics", 1.5, 0.25),
    ("data-platform", False, "Pipelines, warehouse and dashboards", 4, 0.3),
    ("fundraising-2026", True, "Series B prep", 0.6, 0.16),
]

SUBJECTS = {
    "general": ["the all-hands", "the holiday calendar", "Q2 planning", "the new expense policy", "the office move", "benefits enrolment"],
    "random": ["lunch", "the coffee machine", "weekend hiking", "a great podcast", "the football match", "cat pictures"],
    "engineering": ["the payments service", "flaky CI", "the Postgres upgrade", "API rate limits", "the auth refactor", "build times"],
    "design": ["the onboarding flow", "dark mode", "icon set v3", "the settings page", "button states", "empty states"],
    "support": ["ticket #4821", "the refund queue", "an angry enterprise customer", "SSO login loops", "the CSV export bug"],
    "sales": ["the Acme renewal", "a demo with Globex", "pricing tiers", "the Initech pilot", "Q1 quota"],
    "incidents": ["elevated 5xx on checkout", "queue backlog", "the DNS blip", "disk pressure on db-3", "slow search"],
    "releases": ["v4.12", "v4.13", "the mobile 2.8 build", "hotfix 4.12.1", "the feature flag cleanup"],
    "hiring": ["the staff engineer loop", "a design candidate", "the offer for the SRE role", "referral bonuses"],
    "leadership": ["the board deck", "headcount for H2", "the reorg", "OKR scoring"],
    "security-audit": ["finding SA-7 (IDOR on invoices)", "the token leak report", "the embargo date", "TLS config"],
    "book-club": ["chapter 3", "the broken-windows essay", "next month's pick"],
    "office-berlin": ["the key cards", "Friday breakfast", "the heating", "desk booking"],
    "data-platform": ["the nightly ETL", "dbt models", "warehouse costs", "the churn dashboard"],
    "fundraising-2026": ["the data room", "investor intros", "the valuation memo"],
}
OPENERS = ["Quick update on {s}:", "Heads up about {s}.", "Has anyone looked at {s}?", "Reminder: {s} is today.",
           "Can someone help me with {s}?", "Notes from the sync on {s}.", "I pushed a draft for {s}.",
           "FYI {s} slipped to next week.", "Thoughts on {s}?", "Good news on {s}!"]
TAILS = ["", " Details in the doc.", " Will share more tomorrow.", " Let me know if I missed anything.",
         " Thanks everyone!", " Please review by Friday.", " It should be fine now.", " Still digging."]
REPLIES = ["Thanks, looking now.", "+1", "Agreed.", "I can take this.", "Done ✅", "Can we sync later?", "Good catch!",
           "Not sure that's right, checking.", "Merged.", "Works for me.", "Let's discuss in standup.",
           "I'll add it to the doc.", "Nice!", "Following.", "Same here."]
EMOJI = ["👍", "🎉", "👀", "❤️", "😂", "🙏", "✅", "🔥"]


def seed_chat(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    for i, (name, handle, title, locale, tz) in enumerate(PEOPLE):
        emoji, text = (("", "") if i == 0 else rng.choice(STATUSES))
        db.execute("INSERT INTO users (name, handle, title, locale, timezone, status_emoji, status_text, presence, is_me)"
                   " VALUES (?,?,?,?,?,?,?,?,?)",
                   (name, handle, title, locale, tz, emoji, text, "active" if i == 0 else rng.choice(PRESENCE), int(i == 0)))
    n_users = len(PEOPLE)
    others = list(range(2, n_users + 1))
    start = now - dt.timedelta(days=180)
    channel_members: dict[int, list[int]] = {}
    weights: dict[int, float] = {}
    order = list(CHANNELS)
    rng.shuffle(order)  # which channels get which ids varies by seed
    for name, private, topic, weight, share in order:
        k = max(2, round(share * (n_users - 1)))
        members = sorted(rng.sample(others, min(k, len(others))))
        if name in ("general", "random") or not private or rng.random() < 0.6:
            members = sorted({1, *members})
        creator = members[0]
        cid = db.insert("INSERT INTO channels (name, kind, topic, archived, created_by, created_at) VALUES (?,?,?,?,?,?)",
                        (name, "private" if private else "public", topic, 0, creator, start.strftime("%Y-%m-%d %H:%M")))
        channel_members[cid] = members
        weights[cid] = weight * rng.uniform(0.7, 1.4)
        for uid in members:
            db.execute("INSERT INTO members (channel_id, user_id, last_read_id) VALUES (?,?,0)", (cid, uid))
    if not any(1 in channel_members[c] for c in channel_members
               if db.scalar("SELECT kind FROM channels WHERE id = ?", (c,)) == "private"):
        # the signed-in member sits in at least one private channel (no draw: other seeds keep their data)
        first = db.scalar("SELECT MIN(id) FROM channels WHERE kind = 'private'")
        channel_members[first] = sorted({1, *channel_members[first]})
        db.execute("INSERT INTO members (channel_id, user_id, last_read_id) VALUES (?,?,0)", (first, 1))
    # direct messages: the signed-in member with a handful of people
    dm_people = rng.sample(others, 6)
    for uid in dm_people:
        cid = db.insert("INSERT INTO channels (name, kind, topic, archived, created_by, created_at) VALUES (?,?,?,?,?,?)",
                        (f"dm-1-{uid}", "dm", "", 0, 1, start.strftime("%Y-%m-%d %H:%M")))
        channel_members[cid] = [1, uid]
        weights[cid] = rng.uniform(0.3, 2.0)
        for m in (1, uid):
            db.execute("INSERT INTO members (channel_id, user_id, last_read_id) VALUES (?,?,0)", (cid, m))
    names = {cid: db.scalar("SELECT name FROM channels WHERE id = ?", (cid,)) for cid in channel_members}
    total = 2600
    cids = list(channel_members)
    cw = [weights[c] for c in cids]
    times = sorted(start + dt.timedelta(minutes=rng.randint(0, 180 * 24 * 60 - 120)) for _ in range(total))
    posted: dict[int, list[int]] = {c: [] for c in cids}
    for when in times:
        cid = rng.choices(cids, cw)[0]
        members = channel_members[cid]
        author = rng.choice(members)
        subjects = SUBJECTS.get(str(names[cid]), ["our chat", "the plan", "tomorrow", "the trip", "that doc"])
        body = rng.choice(OPENERS).format(s=rng.choice(subjects)) + rng.choice(TAILS)
        if author != 1 and 1 in members and rng.random() < 0.06:
            body = f"@sam {body}"
        elif rng.random() < 0.05:
            body = f"@{PEOPLE[rng.choice(members) - 1][1]} {body}"
        edited = (when + dt.timedelta(minutes=rng.randint(1, 30))).strftime("%Y-%m-%d %H:%M") if rng.random() < 0.04 else None
        mid = db.insert("INSERT INTO messages (channel_id, user_id, parent_id, body, created_at, edited_at, pinned)"
                        " VALUES (?,?,?,?,?,?,?)",
                        (cid, author, None, body, when.strftime("%Y-%m-%d %H:%M"), edited, int(rng.random() < 0.012)))
        posted[cid].append(mid)
        if rng.random() < 0.16:  # a thread: a long tail of reply counts
            n = min(40, int(rng.paretovariate(1.3)))
            t = when
            for _ in range(n):
                t += dt.timedelta(minutes=rng.randint(1, 240))
                db.execute("INSERT INTO messages (channel_id, user_id, parent_id, body, created_at, edited_at, pinned)"
                           " VALUES (?,?,?,?,?,?,0)",
                           (cid, rng.choice(members), mid, rng.choice(REPLIES), t.strftime("%Y-%m-%d %H:%M"), None))
        if rng.random() < 0.3:
            for emoji in rng.sample(EMOJI, rng.choice([1, 1, 1, 2, 3])):
                for uid in rng.sample(members, min(len(members), rng.choice([1, 1, 2, 3, 5, 8]))):
                    db.execute("INSERT INTO reactions (message_id, user_id, emoji) VALUES (?,?,?)", (mid, uid, emoji))
    # read markers: the signed-in member has read most channels up to some point
    for cid, mids in posted.items():
        for uid in channel_members[cid]:
            if not mids:
                continue
            behind = 0 if rng.random() < 0.45 else rng.choice([1, 2, 3, 5, 8, 13, 30])
            last = mids[max(0, len(mids) - 1 - behind)] if behind < len(mids) else 0
            db.execute("UPDATE members SET last_read_id = ? WHERE channel_id = ? AND user_id = ?", (last, cid, uid))
