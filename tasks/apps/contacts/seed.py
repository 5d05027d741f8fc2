"""Deterministic CRM data: 6 owners, ~80 companies, 500 contacts with tags, ~160 deals."""

from __future__ import annotations

import datetime as dt
import random

from cua.tasks.apps.base import AppDB

OWNERS = ["Alex Morgan", "Priya Patel", "Marco Rossi", "Lena Weber", "Kenji Tanaka", "Sofia Silva"]
TAGS = ["vip", "newsletter", "partner", "event-2026", "cold", "renewal", "trial", "referral"]
FIRST = ["Aaron", "Bella", "Caleb", "Diana", "Ethan", "Freya", "Gabriel", "Hannah", "Isaac", "Jade", "Kevin", "Laura", "Mason",
         "Nora", "Owen", "Paula", "Quentin", "Rachel", "Simon", "Tessa", "Umar", "Violet", "William", "Ximena", "Yusuf", "Zara",
         "Adrian", "Brooke", "Connor", "Delia", "Felix", "Gemma", "Henry", "Iris", "Jack", "Keira", "Lucas", "Mila", "Nathan",
         "Olivia", "Peter", "Rita", "Stefan", "Tina", "Ulrich", "Vanessa", "Walter", "Yasmin"]
LAST = ["Abbott", "Bishop", "Carter", "Dawson", "Ellis", "Foster", "Grant", "Harper", "Irwin", "Jordan", "Keller", "Lambert",
        "Mercer", "Nolan", "Ortega", "Price", "Quinn", "Reyes", "Sutton", "Turner", "Underwood", "Vaughn", "Walsh", "Yates",
        "Zhang", "Barnes", "Cole", "Doyle", "Fleming", "Gibson", "Holt", "Ingram", "Kemp", "Lowe", "Marsh", "Nash", "Osborne",
        "Palmer", "Rhodes", "Shaw", "Tate", "Vance", "Wolfe"]
INDUSTRIES = ["Software", "Retail", "Healthcare", "Finance", "Manufacturing", "Education", "Logistics", "Media", "Energy"]
CITIES = ["Austin", "Boston", "Chicago", "Denver", "Seattle", "Toronto", "London", "Berlin", "Madrid", "Dublin", "Sydney"]
WORDS_A = ["Blue", "Bright", "Cedar", "Delta", "Echo", "Frontier", "Golden", "Harbor", "Iron", "Juniper", "Keystone", "Lumen",
           "Maple", "North", "Orbit", "Pioneer", "Quartz", "River", "Summit", "True", "Urban", "Vertex", "West", "Zenith"]
WORDS_B = ["Labs", "Systems", "Group", "Partners", "Works", "Analytics", "Foods", "Health", "Logistics", "Media", "Energy",
           "Capital", "Studio", "Networks"]
TITLES = ["CEO", "CTO", "VP Sales", "Head of Marketing", "Procurement Manager", "Engineer", "Office Manager", "Designer",
          "Operations Lead", "Account Manager", "Data Scientist", "CFO"]
STATUSES = ["lead", "lead", "prospect", "prospect", "customer", "customer", "customer", "churned"]
STAGES = ["qualification", "proposal", "negotiation", "won", "lost"]


def seed_contacts(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    for name in OWNERS:
        db.execute("INSERT INTO owners (name) VALUES (?)", (name,))
    for tag in TAGS:
        db.execute("INSERT INTO tags (name) VALUES (?)", (tag,))
    companies: list[tuple[int, str]] = []
    seen: set[str] = set()
    while len(companies) < 80:
        name = f"{rng.choice(WORDS_A)} {rng.choice(WORDS_B)}"
        if name in seen:
            continue
        seen.add(name)
        domain = name.lower().replace(" ", "") + ".com"
        cid = db.insert("INSERT INTO companies (name, industry, city, website) VALUES (?,?,?,?)",
                         (name, rng.choice(INDUSTRIES), rng.choice(CITIES), domain))
        companies.append((cid, domain))
    emails: set[str] = set()
    for _ in range(500):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        company_id, domain = rng.choice(companies)
        email = f"{first.lower()}.{last.lower()}@{domain}"
        n = 2
        while email in emails:
            email = f"{first.lower()}.{last.lower()}{n}@{domain}"
            n += 1
        emails.add(email)
        phone = f"+1 {rng.randint(201, 989)}-{rng.randint(200, 999)}-{rng.randint(0, 9999):04d}"
        created = (now - dt.timedelta(days=rng.randint(0, 720), minutes=rng.randint(0, 1439))).strftime("%Y-%m-%d %H:%M")
        cid = db.insert(
            "INSERT INTO contacts (first_name, last_name, email, phone, title, company_id, owner_id, status, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (first, last, email, phone, rng.choice(TITLES), company_id, rng.randint(1, len(OWNERS)), rng.choice(STATUSES), created))
        for t in rng.sample(range(1, len(TAGS) + 1), rng.choice([0, 0, 1, 1, 1, 2, 3])):
            db.execute("INSERT INTO contact_tags (contact_id, tag_id) VALUES (?,?)", (cid, t))
    for _ in range(160):
        contact = db.one("SELECT id, company_id, owner_id FROM contacts WHERE id = ?", (rng.randint(1, 500),))
        assert contact is not None
        product = rng.choice(["Annual license", "Pilot", "Expansion", "Support plan", "Onboarding package", "Renewal"])
        company = db.scalar("SELECT name FROM companies WHERE id = ?", (contact["company_id"],))
        close = (now.date() + dt.timedelta(days=rng.randint(-120, 150))).isoformat()
        db.execute("INSERT INTO deals (name, company_id, contact_id, owner_id, amount_cents, stage, close_date) VALUES (?,?,?,?,?,?,?)",
                   (f"{company} — {product}", contact["company_id"], contact["id"], contact["owner_id"],
                    rng.randint(10, 900) * 10000, rng.choice(STAGES), close))
