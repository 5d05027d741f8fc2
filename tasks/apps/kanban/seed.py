"""Deterministic kanban data: three boards, ~150 cards with tags, assignees, due dates, comments."""

from __future__ import annotations

import datetime as dt
import random

from cua.tasks.apps.base import AppDB

MEMBERS = [("Alex Morgan", "#1f6feb"), ("Priya Patel", "#8250df"), ("Marco Rossi", "#bf3989"), ("Lena Weber", "#1a7f37"),
           ("Kenji Tanaka", "#bc4c00"), ("Sofia Silva", "#0969da"), ("Omar Haddad", "#6e7781"), ("Julia Chen", "#9a6700")]
TAGS = [("bug", "#cf222e"), ("feature", "#1f6feb"), ("design", "#bf3989"), ("urgent", "#bc4c00"), ("backend", "#1a7f37"),
        ("frontend", "#8250df"), ("docs", "#57606a"), ("research", "#0969da"), ("blog", "#9a6700"), ("social", "#2da44e")]
BOARDS = [
    ("Product Launch", "Everything for the v2 launch.", ["Backlog", "To do", "In progress", "Review", "Done"], 62,
     ["Fix {thing} crash on {place}", "Add {thing} export", "Redesign {place} page", "Write API docs for {thing}",
      "Migrate {thing} to new schema", "Speed up {place} loading", "Add dark mode to {place}", "Audit {thing} permissions",
      "Improve {thing} error messages", "Add tests for {thing}", "Localize {place} page", "Set up alerts for {thing}"],
     ["bug", "feature", "design", "urgent", "backend", "frontend", "docs"]),
    ("Marketing", "Content calendar and campaigns.", ["Ideas", "Planned", "Writing", "Published"], 46,
     ["Blog post: {topic}", "Newsletter: {month} edition", "Case study with {customer}", "Webinar on {topic}",
      "Social campaign: {topic}", "Landing page for {topic}", "Video: {topic} in 2 minutes"],
     ["blog", "social", "design", "urgent", "research"]),
    ("Hiring", "Open roles and candidates.", ["Applied", "Phone screen", "Onsite", "Offer", "Hired"], 44,
     ["{person} — {role}", "{person} — {role} (referral)"],
     ["urgent", "research", "backend", "frontend", "design"]),
]
THINGS = ["invoice", "search", "login", "billing", "upload", "report", "webhook", "profile", "notification", "calendar sync",
          "CSV", "onboarding", "audit log", "payment", "settings"]
PLACES = ["checkout", "dashboard", "settings", "mobile", "signup", "pricing", "admin", "home"]
TOPICS = ["remote work", "data privacy", "our roadmap", "customer stories", "AI features", "pricing changes", "team culture",
          "security tips", "product updates"]
CUSTOMERS = ["Northwind", "Globex", "Initech", "Acme Corp", "Umbrella", "Stark Labs"]
MONTHS = ["March", "April", "May", "June"]
PEOPLE = ["Ava Baker", "Ben Okafor", "Chloe Ito", "Daniel Young", "Elena Novak", "Farid Xu", "Grace Berg", "Hugo Moreau",
          "Ines Lopez", "Jonas Fischer", "Kira Adams", "Liam Murphy", "Maya Evans", "Noah Garcia", "Olga Varga", "Pablo Diaz",
          "Rosa Jensen", "Samir Usman", "Tara Hughes", "Victor Schmidt", "Wendy Quist", "Yara Zimmer", "Zane Kowalski"]
ROLES = ["Backend engineer", "Product designer", "Data analyst", "Frontend engineer", "Support lead", "Recruiter"]


def seed_kanban(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    for name, color in MEMBERS:
        initials = "".join(w[0] for w in name.split())
        db.execute("INSERT INTO members (name, initials, color) VALUES (?,?,?)", (name, initials, color))
    tag_ids = {}
    for name, color in TAGS:
        tag_ids[name] = db.insert("INSERT INTO tags (name, color) VALUES (?,?)", (name, color))
    for bname, desc, columns, n_cards, patterns, tag_pool in BOARDS:
        bid = db.insert("INSERT INTO boards (name, description) VALUES (?,?)", (bname, desc))
        col_ids = [db.insert("INSERT INTO columns (board_id, name, position) VALUES (?,?,?)", (bid, c, i))
                   for i, c in enumerate(columns)]
        titles: set[str] = set()
        people = rng.sample(PEOPLE, len(PEOPLE))
        for k in range(n_cards):
            while True:
                title = rng.choice(patterns).format(
                    thing=rng.choice(THINGS), place=rng.choice(PLACES), topic=rng.choice(TOPICS), customer=rng.choice(CUSTOMERS),
                    month=rng.choice(MONTHS), person=people[k % len(people)], role=rng.choice(ROLES))
                if title not in titles:
                    break
                if "{person}" in patterns[0]:
                    people.append(rng.choice(PEOPLE) + f" {chr(65 + k % 26)}.")
            titles.add(title)
            weights = [4, 3, 2, 1.5, 3][: len(col_ids)]
            col = rng.choices(col_ids, weights=weights)[0]
            pos = db.scalar("SELECT COUNT(*) FROM cards WHERE column_id = ?", (col,))
            due = (now.date() + dt.timedelta(days=rng.randint(-14, 45))).isoformat() if rng.random() < 0.65 else None
            created = (now - dt.timedelta(days=rng.randint(1, 90), hours=rng.randint(0, 23))).strftime("%Y-%m-%d %H:%M")
            cid = db.insert(
                "INSERT INTO cards (board_id, column_id, title, description, due, position, created_at) VALUES (?,?,?,?,?,?,?)",
                (bid, col, title, f"Details for “{title}”. " + rng.choice(
                    ["Acceptance criteria in the spec.", "See the linked doc.", "Needs sign-off from the lead.", "Estimate: 3 points.",
                     "Blocked until the API is ready.", ""]), due, pos, created))
            for t in rng.sample(tag_pool, rng.choice([0, 1, 1, 2, 2, 3])):
                db.execute("INSERT INTO card_tags (card_id, tag_id) VALUES (?,?)", (cid, tag_ids[t]))
            for m in rng.sample(range(1, len(MEMBERS) + 1), rng.choice([0, 1, 1, 1, 2])):
                db.execute("INSERT INTO card_assignees (card_id, member_id) VALUES (?,?)", (cid, m))
            for _ in range(rng.choice([0, 0, 0, 1, 2])):
                db.execute("INSERT INTO comments (card_id, member_id, body, created_at) VALUES (?,?,?,?)",
                           (cid, rng.randint(1, len(MEMBERS)), rng.choice(
                               ["Looks good to me.", "Can we split this up?", "I'll pick this up tomorrow.", "Blocked on review.",
                                "Updated the description.", "Moving this to next sprint?"]), created))
