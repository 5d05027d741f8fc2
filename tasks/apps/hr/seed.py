"""Seeded data for Tally People: a 120-person company in ten teams and ten offices, the
signed-in manager's expense reports, receipts, time off and payslips, and the reports and
requests of the people who report to them.

Names come from each office's locale; amounts from each expense category's own band (a taxi
$12-60, a hotel night $110-320, a flight $180-1,400), in the currency of the city where they
were spent; a year of time off is spread over the company's working days. Every date is
before the app's clock; every choice comes from `rng`.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from cua.tasks.apps.base import AppDB

#: The signed-in employee: an engineering manager in Boston (employees.id 1).
ME = 1
HOME_CURRENCY = "USD"
#: Units of the home currency (USD) one unit of each currency buys: the company's fixed rates.
RATES: dict[str, str] = {"USD": "1.0000", "EUR": "1.0850", "GBP": "1.2700", "CAD": "0.7350", "CHF": "1.1300"}
#: category -> (most one line may claim, in home cents; an example of what it covers)
POLICY: dict[str, tuple[int, str]] = {
    "airfare": (150000, "economy flights"), "hotel": (32000, "one night's room"), "taxi": (8000, "one ride"),
    "meals": (7500, "one meal while travelling"), "client_entertainment": (25000, "a meal or event with clients"),
    "office_supplies": (20000, "equipment and stationery"), "training": (100000, "courses, books, conference passes"),
    "phone_internet": (10000, "one month's bill"), "parking": (5000, "one day's parking"),
}
CATEGORIES = tuple(POLICY)
#: A line above this many home cents needs a receipt.
RECEIPT_THRESHOLD = 7500
PROJECTS = [("PLT-100", "Platform reliability"), ("PLT-220", "Payments migration"), ("CUS-310", "Customer onboarding"),
            ("INT-001", "Internal / overhead"), ("SAL-450", "EMEA sales push"), ("RND-560", "Search relevance")]
TIME_OFF_TYPES = {"vacation": 22, "sick": 10, "personal": 3}

#: The company's holidays (the same for every office): no working day, so no day of leave.
HOLIDAYS = [
    ("2025-01-01", "New Year's Day"), ("2025-05-26", "Memorial Day"), ("2025-07-04", "Independence Day"),
    ("2025-09-01", "Labor Day"), ("2025-11-27", "Thanksgiving"), ("2025-11-28", "Day after Thanksgiving"),
    ("2025-12-24", "Christmas Eve"), ("2025-12-25", "Christmas Day"), ("2025-12-31", "New Year's Eve"),
    ("2026-01-01", "New Year's Day"), ("2026-01-19", "Martin Luther King Jr. Day"), ("2026-02-16", "Presidents' Day"),
    ("2026-04-03", "Good Friday"), ("2026-05-25", "Memorial Day"), ("2026-06-19", "Juneteenth"),
    ("2026-07-03", "Independence Day (observed)"), ("2026-09-07", "Labor Day"), ("2026-11-26", "Thanksgiving"),
    ("2026-11-27", "Day after Thanksgiving"), ("2026-12-24", "Christmas Eve"), ("2026-12-25", "Christmas Day"),
]

#: office -> (country, locale, currency spent there, first names, last names)
OFFICES: dict[str, tuple[str, str, str, list[str], list[str]]] = {
    "Boston": ("United States", "en-US", "USD",
               ["Avery", "Jordan", "Taylor", "Marcus", "Keisha", "Ethan", "Brianna", "Caleb", "Megan", "Tyler", "Danielle", "Hunter"],
               ["Whitfield", "Brooks", "Donovan", "Carter", "Hayes", "Sullivan", "Price", "Gallagher", "Reed", "Foster"]),
    "Austin": ("United States", "en-US", "USD",
               ["Rosa", "Diego", "Kayla", "Brandon", "Alyssa", "Jamal", "Courtney", "Logan", "Selena", "Wyatt"],
               ["Delgado", "Nguyen", "Mitchell", "Ramirez", "Coleman", "Harper", "Bennett", "Ortiz", "Walsh"]),
    "Toronto": ("Canada", "en-CA", "CAD",
                ["Priya", "Liam", "Chloé", "Owen", "Mei", "Gabriel", "Hannah", "Raj", "Sophie", "Noah"],
                ["Tremblay", "Singh", "MacDonald", "Gagnon", "Wong", "Roy", "Campbell", "Chen", "Leblanc"]),
    "London": ("United Kingdom", "en-GB", "GBP",
               ["Oliver", "Amelia", "Harry", "Imogen", "Callum", "Freya", "Rhys", "Niamh", "Alfie", "Poppy"],
               ["Hughes", "Patel", "Thornton", "Ashworth", "Okafor", "Pemberton", "Clarke", "Fairbairn", "Doyle"]),
    "Berlin": ("Germany", "de-DE", "EUR",
               ["Lukas", "Hannah", "Jonas", "Lea", "Maximilian", "Anja", "Florian", "Katrin", "Tobias", "Mareike"],
               ["Müller", "Schröder", "Becker", "Hoffmann", "Wagner", "Krüger", "Neumann", "Schulze", "Vogel"]),
    "Madrid": ("Spain", "es-ES", "EUR",
               ["Lucía", "Javier", "Carmen", "Álvaro", "Marta", "Sergio", "Nerea", "Pablo", "Irene"],
               ["García", "Fernández", "Navarro", "Ruiz", "Moreno", "Iglesias", "Castillo", "Ortega"]),
    "Zurich": ("Switzerland", "de-CH", "CHF",
               ["Reto", "Corinne", "Matthias", "Seraina", "Urs", "Nadine", "Beat", "Flurina"],
               ["Keller", "Brunner", "Baumann", "Gerber", "Frei", "Zimmermann", "Steiner", "Huber"]),
    "Bengaluru": ("India", "en-IN", "USD",
                  ["Ananya", "Rohan", "Kavya", "Arjun", "Meera", "Vikram", "Sneha", "Aditya", "Divya", "Karthik"],
                  ["Iyer", "Reddy", "Sharma", "Menon", "Rao", "Krishnan", "Desai", "Bhat", "Kulkarni"]),
    "Tokyo": ("Japan", "ja-JP", "USD",
              ["Haruto", "Yui", "Sota", "Aoi", "Ren", "Hina", "Kaito", "Sakura"],
              ["Sato", "Suzuki", "Takahashi", "Watanabe", "Ito", "Yamamoto", "Nakamura", "Kobayashi"]),
    "São Paulo": ("Brazil", "pt-BR", "USD",
                  ["João", "Ana Clara", "Rafael", "Beatriz", "Thiago", "Larissa", "Gustavo", "Camila"],
                  ["Silva", "Oliveira", "Santos", "Pereira", "Almeida", "Costa", "Ribeiro", "Carvalho"]),
}
DOMAIN = "tallypeople.example"

#: (team, the offices it sits in, size, its lead's title, members' titles)
TEAMS: list[tuple[str, list[str], int, str, list[str]]] = [
    ("Executive", ["Boston"], 5, "Chief Executive Officer", ["Chief Technology Officer", "Chief Financial Officer",
                                                             "VP of Sales", "VP of People"]),
    ("Platform Engineering", ["Boston", "Toronto", "Berlin"], 9, "Engineering Manager",
     ["Senior Software Engineer", "Software Engineer", "Site Reliability Engineer", "Staff Engineer"]),
    ("Product Engineering", ["Austin", "Toronto", "Bengaluru"], 16, "Engineering Manager",
     ["Software Engineer", "Senior Software Engineer", "Frontend Engineer", "QA Engineer"]),
    ("Data & Analytics", ["Boston", "Bengaluru", "London"], 10, "Head of Data",
     ["Data Engineer", "Data Scientist", "Analytics Engineer"]),
    ("Design", ["Berlin", "London"], 7, "Design Lead", ["Product Designer", "UX Researcher", "Content Designer"]),
    ("Sales EMEA", ["London", "Berlin", "Madrid", "Zurich"], 15, "Sales Director, EMEA",
     ["Account Executive", "Sales Development Rep", "Solutions Engineer"]),
    ("Sales Americas", ["Austin", "Toronto", "São Paulo"], 14, "Sales Director, Americas",
     ["Account Executive", "Sales Development Rep", "Solutions Engineer"]),
    ("Customer Success", ["Austin", "London", "Tokyo"], 13, "Head of Customer Success",
     ["Customer Success Manager", "Support Engineer", "Onboarding Specialist"]),
    ("Finance", ["Boston", "Zurich"], 8, "Finance Manager", ["Accountant", "Financial Analyst", "Payroll Specialist"]),
    ("People", ["Boston", "Berlin"], 6, "People Partner Lead", ["People Partner", "Recruiter", "People Operations Specialist"]),
    ("Marketing", ["Austin", "London", "São Paulo"], 17, "Marketing Director",
     ["Product Marketing Manager", "Content Marketer", "Growth Marketer", "Events Manager"]),
]

#: category -> (merchants, low and high of one line in dollars)
MERCHANTS: dict[str, tuple[list[str], float, float]] = {
    "airfare": (["Delta Air Lines", "United Airlines", "JetBlue", "Air Canada", "Lufthansa", "British Airways", "Iberia",
                 "American Airlines"], 180, 1400),
    "hotel": (["Marriott", "Hilton Garden Inn", "Hyatt Regency", "Motel One", "Premier Inn", "NH Collection",
               "Hampton Inn", "citizenM"], 110, 320),
    "taxi": (["Uber", "Lyft", "FREENOW", "Bolt", "Addison Lee", "Yellow Cab", "Checker Cab"], 12, 60),
    "meals": (["Sweetgreen", "Pret A Manger", "Legal Sea Foods", "Five Guys", "Dishoom", "Vapiano", "Tatte Bakery",
               "Shake Shack", "Wagamama", "Le Pain Quotidien", "Flour Bakery", "Nando's"], 9, 70),
    "client_entertainment": (["Oak Long Bar", "The Capital Grille", "Hawksmoor", "Borchardt", "Fogo de Chão", "Zuma"], 80, 240),
    "office_supplies": (["Staples", "Amazon", "Office Depot", "Best Buy", "Apple Store", "IKEA"], 8, 150),
    "training": (["O'Reilly Media", "Coursera", "Udemy", "PyCon US", "KubeCon", "Manning Publications"], 25, 900),
    "phone_internet": (["Verizon Wireless", "AT&T", "Comcast Xfinity", "T-Mobile"], 40, 95),
    "parking": (["SP+ Parking", "LAZ Parking", "ParkWhiz", "Q-Park"], 8, 40),
}
#: Trips a report is about: (title, city, currency, categories)
TRIPS: list[tuple[str, str, str, list[str]]] = [
    ("Customer visit Chicago", "Chicago", "USD", ["airfare", "hotel", "taxi", "meals", "client_entertainment"]),
    ("Platform offsite Berlin", "Berlin", "EUR", ["airfare", "hotel", "taxi", "meals"]),
    ("KubeCon Europe", "Amsterdam", "EUR", ["airfare", "hotel", "training", "taxi", "meals"]),
    ("London partner workshop", "London", "GBP", ["airfare", "hotel", "taxi", "meals"]),
    ("Toronto team week", "Toronto", "CAD", ["airfare", "hotel", "taxi", "meals"]),
    ("Zurich bank onboarding", "Zurich", "CHF", ["airfare", "hotel", "taxi", "meals", "client_entertainment"]),
    ("Home office setup", "", "USD", ["office_supplies", "office_supplies", "phone_internet"]),
    ("Books and courses", "", "USD", ["training", "training"]),
    ("Monthly phone", "", "USD", ["phone_internet"]),
    ("Austin quarterly planning", "Austin", "USD", ["airfare", "hotel", "taxi", "meals", "parking"]),
    ("San Francisco customer dinner", "San Francisco", "USD", ["airfare", "hotel", "client_entertainment", "taxi"]),
]


@dataclass
class Person:
    id: int
    name: str
    email: str
    title: str
    team: str
    office: str
    manager_id: int | None


def convert(amount_cents: int, currency: str) -> int:
    """Cents of `currency` in home cents at the company's fixed rate, half up to the cent."""
    rate = RATES[currency]
    whole, frac = rate.split(".")
    scaled = amount_cents * (int(whole) * 10000 + int(frac))
    return (scaled + 5000) // 10000


def working_days(start: dt.date, end: dt.date, holidays: set[str]) -> int:
    """Monday-Friday days from `start` to `end` inclusive, less the company's holidays."""
    days, day = 0, start
    while day <= end:
        if day.weekday() < 5 and day.isoformat() not in holidays:
            days += 1
        day += dt.timedelta(days=1)
    return days


def _email(name: str, used: set[str]) -> str:
    base = name.lower()
    for a, b in (("ä", "a"), ("ö", "o"), ("ü", "u"), ("ß", "ss"), ("é", "e"), ("á", "a"), ("í", "i"), ("ó", "o"), ("ú", "u"),
                 ("ã", "a"), ("ç", "c"), ("ñ", "n"), ("è", "e"), ("'", "")):
        base = base.replace(a, b)
    first, *rest = base.split()
    local = f"{first}.{rest[-1]}" if rest else first
    candidate, n = local, 2
    while candidate in used:
        candidate, n = f"{local}{n}", n + 1
    used.add(candidate)
    return f"{candidate}@{DOMAIN}"


def _people(rng: random.Random) -> list[Person]:
    """The company: me first (id 1), then my direct reports, then everyone else by team."""
    used_names: set[str] = set()
    used_mail: set[str] = set()

    def name_in(office: str) -> str:
        _, _, _, firsts, lasts = OFFICES[office]
        while True:
            name = f"{rng.choice(firsts)} {rng.choice(lasts)}"
            if name not in used_names:
                used_names.add(name)
                return name

    used_names.add("Morgan Ellis")
    people = [Person(ME, "Morgan Ellis", _email("Morgan Ellis", used_mail), "Engineering Manager", "Platform Engineering",
                     "Boston", None)]
    # my own team first, so that my reports are ids 2..9
    order = [TEAMS[1]] + [t for i, t in enumerate(TEAMS) if i != 1]
    pending_leads: dict[str, int] = {}
    for team, offices, size, lead_title, titles in order:
        if team == "Platform Engineering":
            lead = ME
        else:
            office = offices[0]
            lead = len(people) + 1
            people.append(Person(lead, name_in(office), "", lead_title, team, office, None))
            pending_leads[team] = lead
        for _ in range(size - 1):
            office = rng.choice(offices)
            people.append(Person(len(people) + 1, name_in(office), "", rng.choice(titles), team, office, lead))
    for p in people[1:]:
        p.email = _email(p.name, used_mail)
    ceo = pending_leads["Executive"]
    cto, cfo, vp_sales, vp_people = (p.id for p in people if p.team == "Executive" and p.manager_id == ceo)
    over = {"Platform Engineering": cto, "Product Engineering": cto, "Data & Analytics": cto, "Design": cto,
            "Sales EMEA": vp_sales, "Sales Americas": vp_sales, "Customer Success": vp_sales, "Finance": cfo,
            "People": vp_people, "Marketing": ceo}
    people[0].manager_id = cto
    for team, lead in pending_leads.items():
        if team != "Executive":
            people[lead - 1].manager_id = over[team]
    return people


def _amount(rng: random.Random, category: str) -> int:
    """One line's amount in dollars' cents, log-uniform in its category's band, with the
    endings receipts have (.00 for flat fares, odd cents for the rest)."""
    _, low, high = MERCHANTS[category]
    value = low * (high / low) ** rng.random()
    if category in ("airfare", "hotel") and rng.random() < 0.3:
        return int(round(value)) * 100
    return int(round(value * 100))


def _local(cents: int, currency: str) -> int:
    """A dollar amount as the same price in `currency` (a price, not an exact conversion)."""
    if currency == "USD":
        return cents
    whole, frac = RATES[currency].split(".")
    return max(100, cents * 10000 // (int(whole) * 10000 + int(frac)))


def seed_hr(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    today = now.date()
    stamp = now.strftime("%Y-%m-%d %H:%M")
    holidays = {d for d, _ in HOLIDAYS}
    for day, name in HOLIDAYS:
        db.execute("INSERT INTO holidays (day, name) VALUES (?, ?)", (day, name))
    for currency, rate in RATES.items():
        db.execute("INSERT INTO rates (currency, to_home) VALUES (?, ?)", (currency, rate))
    for category, (limit, covers) in POLICY.items():
        db.execute("INSERT INTO policy (category, limit_cents, covers) VALUES (?, ?, ?)", (category, limit, covers))
    for code, name in PROJECTS:
        db.execute("INSERT INTO projects (code, name) VALUES (?, ?)", (code, name))

    people = _people(rng)
    team_ids: dict[str, int] = {}
    for team, *_ in TEAMS:
        team_ids[team] = db.insert("INSERT INTO teams (name, lead_id) VALUES (?, NULL)", (team,))
    for p in people:
        country, locale, *_ = OFFICES[p.office]
        start = today - dt.timedelta(days=int(60 + 2600 * rng.random() ** 1.6))
        phone = f"+{rng.randint(1, 99)} {rng.randint(100, 999)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}"
        db.execute("INSERT INTO employees (id, name, email, title, team_id, manager_id, office, country, locale, start_date, phone) "
                   "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   (p.id, p.name, p.email, p.title, team_ids[p.team], None, p.office, country, locale,
                    start.isoformat(), phone))
    for p in people:  # once everyone is there: a manager may come later in the list
        db.execute("UPDATE employees SET manager_id = ? WHERE id = ?", (p.manager_id, p.id))
    for p in people:
        if p.team != "Executive" and (p.manager_id is None or people[p.manager_id - 1].team != p.team):
            db.execute("UPDATE teams SET lead_id = ? WHERE id = ?", (p.id, team_ids[p.team]))
    db.execute("UPDATE teams SET lead_id = (SELECT id FROM employees WHERE manager_id IS NULL) WHERE name = 'Executive'")

    reports = [p for p in people if p.manager_id == ME]
    _seed_expenses(db, rng, today, [people[0], *reports])
    # a few people of other teams with reports waiting for their own managers (not mine to decide)
    others = [p for p in people if p.manager_id not in (None, ME) and p.id != ME]
    for person in sorted(rng.sample(others, 6), key=lambda p: p.id):
        for k in range(rng.randint(1, 3)):
            _report(db, rng, person, today - dt.timedelta(days=200 - 60 * k), "paid")
        _report(db, rng, person, today - dt.timedelta(days=rng.randint(2, 10)), "submitted")
    _seed_time_off(db, rng, today, stamp, [people[0], *reports], holidays)
    _seed_payslips(db, rng, today)
    street = rng.choice(["Commonwealth Ave", "Tremont St", "Beacon St", "Centre St", "Dorchester Ave"])
    db.execute("INSERT INTO profile (id, employee_id, street, city, postal_code, country, emergency_name, emergency_relation, "
               "emergency_phone, bank_name, bank_account) VALUES (1, ?, ?, 'Boston, MA', ?, 'United States', ?, ?, ?, ?, ?)",
               (ME, f"{rng.randint(12, 980)} {street}", f"02{rng.randint(108, 135)}",
                rng.choice(["Jamie Ellis", "Sam Ellis", "Riley Ellis"]), rng.choice(["Spouse", "Partner", "Sibling"]),
                f"+1 617 555 {rng.randint(1000, 9999)}", "Boston Harbor Credit Union",
                f"{rng.randint(10**11, 10**12 - 1)}"))


def _seed_expenses(db: AppDB, rng: random.Random, today: dt.date, staff: list[Person]) -> None:
    """A year of reports for me and my reports: most paid, some approved, the direct
    reports' newest submitted and waiting for me, and two drafts of my own (one still
    missing a receipt), with receipts in my inbox waiting to be matched."""
    for person in staff:
        n = rng.randint(6, 10) if person.id == ME else rng.randint(3, 7)
        for k in range(n):
            age = int(330 * (1 - k / n) * rng.uniform(0.85, 1.0)) + 12
            created = today - dt.timedelta(days=age)
            if person.id != ME and k == n - 1:
                status = "submitted"
                created = today - dt.timedelta(days=rng.randint(3, 12))
            elif age > 40:
                status = "paid"
            else:
                status = rng.choice(["approved", "paid", "rejected"]) if person.id != ME else "approved"
            _report(db, rng, person, created, status)
        if person.id != ME and rng.random() < 0.35:  # a second one waiting
            _report(db, rng, person, today - dt.timedelta(days=rng.randint(2, 6)), "submitted")
    # mine: one submitted and waiting for my manager, two drafts
    me = staff[0]
    _report(db, rng, me, today - dt.timedelta(days=9), "submitted")
    _report(db, rng, me, today - dt.timedelta(days=6), "draft", missing_receipt=True)
    _report(db, rng, me, today - dt.timedelta(days=2), "draft")
    # my receipt inbox: receipts not yet matched to a line
    for _ in range(rng.randint(4, 6)):
        category = rng.choice(["taxi", "meals", "office_supplies", "parking", "hotel"])
        merchants, *_ = MERCHANTS[category]
        cents = _amount(rng, category)
        day = today - dt.timedelta(days=rng.randint(1, 20))
        db.execute("INSERT INTO receipts (employee_id, merchant, day, amount_cents, currency, filename, line_id) "
                   "VALUES (?,?,?,?,?,?,NULL)", (ME, rng.choice(merchants), day.isoformat(), cents, "USD",
                                                 f"IMG_{rng.randint(1000, 9999)}.jpg"))


def _report(db: AppDB, rng: random.Random, person: Person, created: dt.date, status: str, *,
            missing_receipt: bool = False) -> None:
    title, city, currency, categories = rng.choice(TRIPS)
    while db.one("SELECT id FROM reports WHERE employee_id = ? AND title = ?", (person.id, f"{title} ({created.strftime('%b %Y')})")):
        title, city, currency, categories = rng.choice(TRIPS)
    if currency != "USD" and person.id != ME and rng.random() < 0.4:
        title, city, currency, categories = TRIPS[0]
    project = rng.choice(PROJECTS)[0]
    month = created.strftime("%b %Y")
    rid = db.insert("INSERT INTO reports (employee_id, title, status, created_at, submitted_at, decided_at, decided_by, "
                    "decision_comment, paid_at) VALUES (?,?,?,?,NULL,NULL,NULL,'',NULL)",
                    (person.id, f"{title} ({month})", "draft", f"{created.isoformat()} 10:{rng.randint(10, 59)}"))
    _event(db, rid, person.id, "created", "", f"{created.isoformat()} 10:05")
    trip_start = created - dt.timedelta(days=rng.randint(3, 12))
    line_day = trip_start
    nights = rng.randint(1, 3)
    for category in categories:
        repeats = nights if category == "hotel" else (rng.randint(1, 3) if category in ("taxi", "meals") else 1)
        for r in range(repeats):
            merchants, *_ = MERCHANTS[category]
            merchant = rng.choice(merchants)
            usd = _amount(rng, category)
            line_currency = currency if category not in ("airfare", "training", "phone_internet", "office_supplies") else "USD"
            amount = _local(usd, line_currency)
            home = convert(amount, line_currency)
            limit = POLICY[category][0]
            if home > limit:  # what was claimed stays inside the policy, but for the warning a task fixes
                amount = _local(limit - rng.randint(100, 2000), line_currency)
                home = convert(amount, line_currency)
            day = line_day + dt.timedelta(days=r if category in ("hotel", "meals", "taxi") else 0)
            receipt = home > RECEIPT_THRESHOLD or rng.random() < 0.6
            lid = db.insert("INSERT INTO lines (report_id, day, merchant, category, amount_cents, currency, home_cents, project, "
                            "note) VALUES (?,?,?,?,?,?,?,?,'')",
                            (rid, day.isoformat(), merchant, category, amount, line_currency, home, project))
            if receipt:
                db.execute("INSERT INTO receipts (employee_id, merchant, day, amount_cents, currency, filename, line_id) "
                           "VALUES (?,?,?,?,?,?,?)", (person.id, merchant, day.isoformat(), amount, line_currency,
                                                      f"receipt_{lid:05d}.pdf", lid))
        line_day += dt.timedelta(days=1)
    if missing_receipt:  # the largest line's receipt came in but was never attached
        line = db.one("SELECT * FROM lines WHERE report_id = ? ORDER BY home_cents DESC LIMIT 1", (rid,))
        assert line is not None
        if line["home_cents"] <= RECEIPT_THRESHOLD:
            db.execute("UPDATE lines SET amount_cents = 9640, currency = 'USD', home_cents = 9640, "
                       "category = 'client_entertainment', merchant = 'The Capital Grille' WHERE id = ?", (line["id"],))
            line = db.one("SELECT * FROM lines WHERE id = ?", (line["id"],))
            assert line is not None
        db.execute("DELETE FROM receipts WHERE line_id = ?", (line["id"],))
        db.execute("INSERT INTO receipts (employee_id, merchant, day, amount_cents, currency, filename, line_id) "
                   "VALUES (?,?,?,?,?,?,NULL)", (person.id, line["merchant"], line["day"], line["amount_cents"], line["currency"],
                                                 f"Scan_{line['day'].replace('-', '')}_{rng.randint(100, 999)}.pdf"))
    if status == "draft":
        return
    submitted = created + dt.timedelta(days=rng.randint(0, 2))
    db.execute("UPDATE reports SET status = 'submitted', submitted_at = ? WHERE id = ?", (f"{submitted.isoformat()} 16:20", rid))
    _event(db, rid, person.id, "submitted", "", f"{submitted.isoformat()} 16:20")
    if status == "submitted":
        return
    decided = submitted + dt.timedelta(days=rng.randint(1, 4))
    approver = person.manager_id or ME
    comment = "" if status != "rejected" else rng.choice(
        ["Please split the client dinner by attendee.", "The hotel is over the city rate; please explain.",
         "Wrong project code: this was for PLT-220."])
    action = "rejected" if status == "rejected" else "approved"
    db.execute("UPDATE reports SET status = ?, decided_at = ?, decided_by = ?, decision_comment = ? WHERE id = ?",
               (action, f"{decided.isoformat()} 11:40", approver, comment, rid))
    _event(db, rid, approver, action, comment, f"{decided.isoformat()} 11:40")
    if status == "paid":
        paid = decided + dt.timedelta(days=rng.randint(3, 9))
        db.execute("UPDATE reports SET status = 'paid', paid_at = ? WHERE id = ?", (f"{paid.isoformat()} 08:00", rid))
        _event(db, rid, 0, "paid", "", f"{paid.isoformat()} 08:00")


def _event(db: AppDB, report_id: int, actor: int, action: str, comment: str, at: str) -> None:
    db.execute("INSERT INTO report_events (report_id, actor_id, action, comment, created_at) VALUES (?,?,?,?,?)",
               (report_id, actor or None, action, comment, at))


def _seed_time_off(db: AppDB, rng: random.Random, today: dt.date, stamp: str, staff: list[Person],
                   holidays: set[str]) -> None:
    """A year of leave for me and my reports: last year's taken, this year's so far, some
    approved ahead, and a few waiting (mine for my manager, theirs for me)."""
    for person in staff:
        for kind, allowance in TIME_OFF_TYPES.items():
            extra = rng.choice([0, 0, 1, 2, 3]) if kind == "vacation" else 0
            db.execute("INSERT INTO balances (employee_id, kind, year, allowance_days) VALUES (?,?,?,?)",
                       (person.id, kind, today.year, allowance + extra))
        taken: list[tuple[dt.date, dt.date]] = []

        def book(start: dt.date, length: int, kind: str, status: str) -> bool:
            while start.weekday() >= 5 or start.isoformat() in holidays:
                start += dt.timedelta(days=1)
            end, days = start, 0
            while True:
                if end.weekday() < 5 and end.isoformat() not in holidays:
                    days += 1
                if days >= length:
                    break
                end += dt.timedelta(days=1)
            if any(not (end < s or start > e) for s, e in taken) or start.year != end.year:
                return False
            taken.append((start, end))
            created = min(start, today) - dt.timedelta(days=rng.randint(5, 40))
            decided = f"{(created + dt.timedelta(days=rng.randint(0, 3))).isoformat()} 12:15" if status != "pending" else None
            db.execute("INSERT INTO time_off (employee_id, kind, start_day, end_day, days, note, status, created_at, decided_at, "
                       "decided_by, decision_comment) VALUES (?,?,?,?,?,?,?,?,?,?,'')",
                       (person.id, kind, start.isoformat(), end.isoformat(), days,
                        rng.choice(["", "", "Family trip", "Moving flat", "Wedding", "Long weekend", "Dentist"]), status,
                        f"{created.isoformat()} 09:30", decided,
                        None if status == "pending" else (person.manager_id or ME)))
            return True

        for _ in range(rng.randint(4, 6)):  # last year
            book(dt.date(today.year - 1, 1, 1) + dt.timedelta(days=rng.randint(10, 340)), rng.choice([1, 2, 3, 5, 5, 8]),
                 "vacation", "approved")
        for _ in range(rng.randint(1, 3)):
            book(dt.date(today.year - 1, 1, 1) + dt.timedelta(days=rng.randint(5, 350)), rng.choice([1, 1, 2]), "sick", "approved")
        book(dt.date(today.year, 1, 5) + dt.timedelta(days=rng.randint(0, 45)), rng.choice([1, 2, 3]), "vacation", "approved")
        if rng.random() < 0.5:
            book(dt.date(today.year, 1, 5) + dt.timedelta(days=rng.randint(0, 45)), 1, "sick", "approved")
        book(today + dt.timedelta(days=rng.randint(40, 120)), rng.choice([3, 5, 8]), "vacation", "approved")
        for _ in range(20):  # one request each waits for a decision
            kind = rng.choice(["vacation", "vacation", "personal"])
            if book(today + dt.timedelta(days=rng.randint(10, 200)), 1 if kind == "personal" else rng.choice([1, 2, 4, 5]), kind,
                    "pending"):
                break
        if person.id == ME:
            book(today + dt.timedelta(days=rng.randint(150, 250)), 2, "personal", "approved")


def _seed_payslips(db: AppDB, rng: random.Random, today: dt.date) -> None:
    """Twelve monthly payslips to the last month: salary, a bonus in December, US withholdings."""
    salary = rng.choice([14250000, 15100000, 15800000, 16650000])  # a year, in cents
    for k in range(12, 0, -1):
        y, m = today.year, today.month - k
        while m <= 0:
            y, m = y - 1, m + 12
        gross = salary // 12 + (salary // 10 if m == 12 else 0)
        if (y, m) >= (2026, 1):
            gross += salary // 12 * 3 // 100  # the January raise
        federal = gross * 22 // 100
        state = gross * 5 // 100
        social = min(gross * 62 // 1000, 1100000 // 12)
        medicare = gross * 145 // 10000
        retirement = gross * 6 // 100
        health = 21480
        net = gross - federal - state - social - medicare - retirement - health
        db.execute("INSERT INTO payslips (month, pay_day, gross_cents, federal_tax_cents, state_tax_cents, social_security_cents, "
                   "medicare_cents, retirement_cents, health_cents, net_cents) VALUES (?,?,?,?,?,?,?,?,?,?)",
                   (f"{y:04d}-{m:02d}", _last_weekday(y, m).isoformat(), gross, federal, state, social, medicare, retirement,
                    health, net))


def _last_weekday(y: int, m: int) -> dt.date:
    day = (dt.date(y + (m == 12), m % 12 + 1, 1)) - dt.timedelta(days=1)
    while day.weekday() >= 5:
        day -= dt.timedelta(days=1)
    return day
