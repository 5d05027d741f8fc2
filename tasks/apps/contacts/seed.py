"""Deterministic CRM data: the customer base of a B2B software vendor selling in North America,
Europe and Asia. 6 owners (the sales team), 60-95 companies, 500-580 contacts with tags, 140-200
deals.

Each company belongs to a market (en-US, en-GB, de-DE, fr-FR, es-ES, ja-JP, en-IN) and takes
its name's shape (Kessler Maschinenbau GmbH, Atelier Dumas SARL, Kanto Seimitsu K.K.), its city
and its people from there: names keep their accents, emails are their ASCII form at the
company's domain, phone numbers are written as that country writes them. Company sizes follow
a long tail (a few key accounts with dozens of contacts, many with one or two); tags, titles,
statuses and deal sizes have their own skewed frequencies; contacts were created on working
days in office hours. Every choice comes from `rng`.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import unicodedata

from cua.tasks.apps.base import AppDB

OWNERS = ["Alex Morgan", "Priya Patel", "Marco Rossi", "Lena Weber", "Kenji Tanaka", "Sofia Silva"]
#: tag -> how often a contact carries it (newsletter common, vip rare)
TAGS = {"vip": 0.05, "newsletter": 0.3, "partner": 0.08, "event-2026": 0.12, "cold": 0.1, "renewal": 0.08, "trial": 0.1,
        "referral": 0.06}
INDUSTRIES = ["Software", "Retail", "Healthcare", "Finance", "Manufacturing", "Education", "Logistics", "Media", "Energy"]

#: market -> (weight, cities, first names, last names, company name shapes, domain suffix)
MARKETS: dict[str, tuple[int, list[str], list[str], list[str], list[str], str]] = {
    "en-US": (34, ["Austin", "Boston", "Chicago", "Denver", "Seattle", "Atlanta", "San Diego", "Pittsburgh"],
              ["Aaron", "Bella", "Caleb", "Diana", "Ethan", "Hannah", "Isaac", "Jade", "Kevin", "Laura", "Mason", "Nora",
               "Owen", "Rachel", "Tessa", "Tyler", "Brianna", "Jamal", "Keisha", "Marcus", "Madison", "Hunter", "Ximena",
               "DeShawn", "Mary-Kate"],
              ["Abbott", "Bishop", "Carter", "Dawson", "Ellis", "Foster", "Grant", "Harper", "Jordan", "Mercer", "Nolan",
               "Ortega", "Reyes", "Sutton", "Turner", "Vaughn", "Walsh", "Zhang", "Nguyen", "O'Brien", "Washington",
               "Kowalski", "Goldberg"],
              ["{a} {b}", "{a} {b}", "{a}{b2}", "{a} & {c}", "{a} {b} Inc."], ".com"),
    "en-GB": (10, ["London", "Manchester", "Edinburgh", "Bristol", "Leeds"],
              ["Oliver", "Amelia", "Harry", "Imogen", "Callum", "Freya", "Rhys", "Niamh", "Alfie", "Poppy", "Siobhan"],
              ["Ashworth", "Clarke", "Fairbairn", "Hughes", "Pemberton", "Thornton", "Whitaker", "Okafor", "Patel",
               "Featherstonehaugh"],
              ["{a} {b} Ltd", "{c} & {c2} LLP", "{a} {b} plc"], ".co.uk"),
    "de-DE": (16, ["Berlin", "München", "Hamburg", "Köln", "Stuttgart", "Leipzig", "Düsseldorf"],
              ["Lukas", "Jonas", "Lea", "Maximilian", "Anja", "Florian", "Katrin", "Tobias", "Mareike", "Jürgen", "Sören",
               "Britta", "Hans-Peter", "Ülkü"],
              ["Müller", "Schröder", "Becker", "Hoffmann", "Wagner", "Krüger", "Neumann", "Schulze", "Vogel", "Weiß",
               "Köhler", "Schmidt-Rottluff", "Yılmaz"],
              ["{c} {de} GmbH", "{c} & {c2} {de} GmbH", "{a}{de2} AG", "{c} {de} KG"], ".de"),
    "fr-FR": (11, ["Paris", "Lyon", "Marseille", "Toulouse", "Nantes", "Lille"],
              ["Élodie", "Camille", "Théo", "Mathilde", "Hugo", "Inès", "Baptiste", "Chloé", "Léa", "François",
               "Jean-Baptiste", "Anaïs"],
              ["Lefèvre", "Dubois", "Moreau", "Girard", "Rousseau", "Fontaine", "Chevalier", "Bonnet", "Mercier",
               "Da Silva", "Benali"],
              ["{fr} {c} SARL", "Groupe {c}", "{c} & Fils", "{fr} {c} SAS"], ".fr"),
    "es-ES": (9, ["Madrid", "Barcelona", "Valencia", "Sevilla", "Bilbao"],
              ["Lucía", "Javier", "Carmen", "Álvaro", "Marta", "Sergio", "Nerea", "Pablo", "Irene", "Íñigo", "María José"],
              ["García", "Fernández", "Navarro", "Ruiz", "Moreno", "Iglesias", "Castillo", "Ibáñez", "Muñoz",
               "de la Fuente"],
              ["{es} {c} S.L.", "{es} {c} S.A.", "Grupo {c}"], ".es"),
    "ja-JP": (8, ["Tokyo", "Osaka", "Nagoya", "Fukuoka", "Yokohama"],
              ["Haruto", "Yui", "Sota", "Aoi", "Ren", "Hina", "Kaito", "Sakura", "Yuki", "Daisuke"],
              ["Sato", "Suzuki", "Takahashi", "Watanabe", "Ito", "Yamamoto", "Nakamura", "Kobayashi", "Saito"],
              ["{jp} {jp2} K.K.", "{jp} {jp2} Co., Ltd."], ".co.jp"),
    "en-IN": (12, ["Bengaluru", "Mumbai", "Pune", "Hyderabad", "Chennai", "New Delhi"],
              ["Ananya", "Rohan", "Kavya", "Arjun", "Meera", "Vikram", "Sneha", "Aditya", "Divya", "Karthik", "Lakshmi"],
              ["Iyer", "Reddy", "Sharma", "Menon", "Rao", "Krishnan", "Desai", "Kulkarni", "Bhat", "Venkataraman"],
              ["{in} {b} Pvt Ltd", "{c} {b} Pvt Ltd", "{in} {b}"], ".in"),
}
WORDS_A = ["Blue", "Bright", "Cedar", "Echo", "Frontier", "Golden", "Harbor", "Iron", "Juniper", "Keystone", "Lumen",
           "Maple", "North", "Orbit", "Pioneer", "Quartz", "River", "Summit", "Vertex", "Zenith", "Copper", "Tidewater"]
WORDS_B = ["Labs", "Systems", "Group", "Partners", "Works", "Analytics", "Foods", "Health", "Logistics", "Media", "Energy",
           "Capital", "Studio", "Networks", "Robotics", "Clinics", "Outfitters"]
WORDS_B2 = ["ly", "io", "hub", "stack", "wise"]
DE = ["Maschinenbau", "Logistik", "Medizintechnik", "Software", "Verpackung", "Elektrotechnik", "Immobilien"]
DE2 = ["tec", "plan", "werk"]
FR = ["Atelier", "Boulangeries", "Transports", "Laboratoires", "Éditions", "Cabinet"]
ES = ["Construcciones", "Distribuciones", "Energía Solar", "Consultoría", "Alimentación"]
JP = ["Kanto", "Sakura", "Fuji", "Hikari", "Nishi", "Midori", "Asahi"]
JP2 = ["Seimitsu", "Shoji", "Denki", "Logistics", "Pharma", "Foods"]
IN = ["Sundaram", "Lotus", "Ganga", "Shakti", "Vistaar", "Nilgiri"]
#: (title, weight): many individual contributors and managers, few executives
TITLES = [("CEO", 3), ("CTO", 3), ("CFO", 2), ("VP Sales", 3), ("Head of Marketing", 4), ("Procurement Manager", 8),
          ("Engineer", 10), ("Senior Software Engineer", 8), ("Office Manager", 4), ("Designer", 4), ("Operations Lead", 6),
          ("Account Manager", 8), ("Data Scientist", 4), ("IT Administrator", 6), ("Einkaufsleiter", 2),
          ("Directrice commerciale", 2), ("Senior Director, Strategic Partnerships & Alliances (EMEA)", 1),
          ("Founder", 2), ("Intern", 1), ("Customer Success Manager", 5), ("Head of People", 2)]
STATUSES = [("lead", 3), ("prospect", 2), ("customer", 4), ("churned", 1)]
STAGES = ["qualification", "proposal", "negotiation", "won", "lost"]
PRODUCTS = ["Annual license", "Pilot", "Expansion", "Support plan", "Onboarding package", "Renewal", "Enterprise upgrade",
            "Data migration", "Training (5 seats)"]


def ascii_fold(text: str) -> str:
    """`text` in lower-case ASCII letters (an address or domain): accents dropped, ß as ss, ı as i."""
    text = text.lower().replace("ß", "ss").replace("ı", "i")
    folded = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return re.sub(r"[^a-z]", "", folded)


def _phone(rng: random.Random, market: str) -> str:
    """A number as the market writes it (every one passes the app's own phone validation)."""
    def d(n: int) -> str:
        return "".join(str(rng.randint(0, 9)) for _ in range(n))

    if market == "en-US":
        return rng.choice([f"+1 {rng.randint(201, 989)}-{rng.randint(200, 999)}-{d(4)}",
                           f"({rng.randint(201, 989)}) {rng.randint(200, 999)}-{d(4)}"])
    if market == "en-GB":
        return rng.choice([f"+44 20 {rng.randint(3000, 8999)} {d(4)}", f"+44 7{d(3)} {d(6)}"])
    if market == "de-DE":
        return rng.choice([f"+49 {rng.choice(['30', '89', '40', '221', '711'])} {d(rng.randint(6, 8))}",
                           f"+49 1{rng.choice(['51', '60', '71', '76'])} {d(7)}"])
    if market == "fr-FR":
        return f"+33 {rng.randint(1, 7)} {d(2)} {d(2)} {d(2)} {d(2)}"
    if market == "es-ES":
        return f"+34 {rng.choice(['91', '93', '96', '6' + d(1)])}{d(1)} {d(3)} {d(3)}"
    if market == "ja-JP":
        return rng.choice([f"+81 3-{d(4)}-{d(4)}", f"+81 6-{d(4)}-{d(4)}", f"+81 90-{d(4)}-{d(4)}"])
    return f"+91 {rng.randint(70, 99)}{d(3)} {d(5)}"


def _company_name(rng: random.Random, market: str) -> str:
    _, _, _, lasts, shapes, _ = MARKETS[market]
    last = rng.choice(lasts)
    other = rng.choice([x for x in lasts if x != last])
    return rng.choice(shapes).format(a=rng.choice(WORDS_A), b=rng.choice(WORDS_B), b2=rng.choice(WORDS_B2), c=last, c2=other,
                                     de=rng.choice(DE), de2=rng.choice(DE2), fr=rng.choice(FR), es=rng.choice(ES),
                                     jp=rng.choice(JP), jp2=rng.choice(JP2), **{"in": rng.choice(IN)})


def _created(rng: random.Random, now: dt.datetime) -> str:
    """A working day in the last two years, in office hours."""
    while True:
        day = now - dt.timedelta(days=rng.randint(0, 720))
        if day.weekday() < 5:
            return day.replace(hour=rng.randint(8, 17), minute=rng.randint(0, 59)).strftime("%Y-%m-%d %H:%M")


def seed_contacts(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    for name in OWNERS:
        db.execute("INSERT INTO owners (name) VALUES (?)", (name,))
    for tag in TAGS:
        db.execute("INSERT INTO tags (name) VALUES (?)", (tag,))
    markets = list(MARKETS)
    companies: list[tuple[int, str, str]] = []
    seen: set[str] = set()
    domains: set[str] = set()
    n_companies = rng.randint(60, 95)
    while len(companies) < n_companies:
        market = rng.choices(markets, [MARKETS[m][0] for m in markets])[0]
        name = _company_name(rng, market)
        base = ascii_fold(re.sub(r"\b(GmbH|AG|KG|SARL|SAS|S\.L\.|S\.A\.|K\.K\.|Co\., Ltd\.|Pvt Ltd|Ltd|LLP|plc|Inc\.)$", "",
                                 name))[:24]
        domain = base + MARKETS[market][5]
        if name in seen or domain in domains or not base:
            continue
        seen.add(name)
        domains.add(domain)
        cid = db.insert("INSERT INTO companies (name, industry, city, website) VALUES (?,?,?,?)",
                        (name, rng.choice(INDUSTRIES), rng.choice(MARKETS[market][1]), domain))
        companies.append((cid, domain, market))
    # a long tail of company sizes: a few key accounts, many with one or two contacts
    weights = [1 / (i + 1) ** 0.8 for i in range(len(companies))]
    rng.shuffle(weights)
    emails: set[str] = set()
    titles, title_w = zip(*TITLES)
    statuses, status_w = zip(*STATUSES)
    n_contacts = rng.randint(500, 580)
    for _ in range(n_contacts):
        company_id, domain, market = rng.choices(companies, weights)[0]
        person_market = market if rng.random() < 0.85 else rng.choice(markets)
        _, _, firsts, lasts, _, _ = MARKETS[person_market]
        first, last = rng.choice(firsts), rng.choice(lasts)
        f, la = ascii_fold(first), ascii_fold(last)
        local = rng.choices([f"{f}.{la}", f"{f[0]}{la}", f"{f}", f"{f}_{la}", f"{la}.{f}"], [10, 4, 1, 1, 1])[0]
        email = f"{local}@{domain}"
        n = 2
        while email in emails:
            email = f"{f}.{la}{n}@{domain}"
            n += 1
        emails.add(email)
        cid = db.insert(
            "INSERT INTO contacts (first_name, last_name, email, phone, title, company_id, owner_id, status, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (first, last, email, _phone(rng, market), rng.choices(titles, title_w)[0], company_id,
             rng.choices(range(1, len(OWNERS) + 1), [5, 4, 3, 3, 2, 2])[0], rng.choices(statuses, status_w)[0],
             _created(rng, now)))
        for t, (_, share) in enumerate(TAGS.items(), start=1):
            if rng.random() < share:
                db.execute("INSERT INTO contact_tags (contact_id, tag_id) VALUES (?,?)", (cid, t))
    for _ in range(rng.randint(140, 200)):
        contact = db.one("SELECT id, company_id, owner_id FROM contacts WHERE id = ?", (rng.randint(1, n_contacts),))
        assert contact is not None
        company = db.scalar("SELECT name FROM companies WHERE id = ?", (contact["company_id"],))
        close = (now.date() + dt.timedelta(days=rng.randint(-120, 150))).isoformat()
        amount = min(2_000_000, int(rng.lognormvariate(10.3, 1.0) / 500 + 1) * 500) * 100  # $500 steps, median ~$30k
        db.execute("INSERT INTO deals (name, company_id, contact_id, owner_id, amount_cents, stage, close_date) VALUES (?,?,?,?,?,?,?)",
                   (f"{company} — {rng.choice(PRODUCTS)}", contact["company_id"], contact["id"], contact["owner_id"],
                    amount, rng.choice(STAGES), close))
