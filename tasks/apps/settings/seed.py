"""Deterministic organisation settings for Northwind Labs: a company of 105-135 people in
offices on four continents, its API keys, and three months of its audit trail.

People's names come from their office's locale (a Berlin engineer is a Jonas Becker, a
Bengaluru one an Aarav Iyer); their addresses are the company's `first.last@` form, with the
accents folded away. Teams are of uneven size (engineering is a third of the company, legal
two people). Active people last signed in on a working day, in their office's working hours,
mostly within the week; suspended ones months ago; invited ones never. The audit trail tells
the same story: each invitation, suspension and key creation the users and keys show, plus
sign-ins with their place and browser, and failed ones from elsewhere. Every choice comes from
`rng`; every time is before the app's clock.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import unicodedata
from dataclasses import dataclass

from cua.tasks.apps.base import AppDB

TIMEZONES = ["UTC", "Europe/London", "Europe/Paris", "Europe/Berlin", "Europe/Madrid", "Europe/Warsaw", "Africa/Lagos",
             "Asia/Dubai", "Asia/Kolkata", "Asia/Singapore", "Asia/Tokyo", "Australia/Sydney", "Pacific/Auckland",
             "America/Sao_Paulo", "America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles"]
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("es", "Español"), ("fr", "Français"), ("it", "Italiano"),
             ("ja", "日本語"), ("nl", "Nederlands"), ("pl", "Polski"), ("pt", "Português"), ("sv", "Svenska")]
THEMES = ["light", "dark", "system"]
DATE_FORMATS = ["YYYY-MM-DD", "DD/MM/YYYY", "MM/DD/YYYY"]
SESSION_TIMEOUTS = [15, 30, 60, 240, 480]
ROLES = ["owner", "admin", "member", "viewer"]
TEAMS = ["Engineering", "Design", "Sales", "Support", "Finance", "Marketing", "Operations", "Legal"]
#: how much of the company each team is: engineering a third, legal a couple of people
TEAM_WEIGHTS = [34, 8, 15, 14, 6, 9, 10, 2]
KEY_NAMES = ["CI pipeline", "Billing webhook", "Data warehouse sync", "Mobile app", "Zapier", "Status page",
             "Terraform provider", "Slack bot", "Salesforce connector", "Backup job", "Grafana alerts", "Support inbox"]
ORG = "Northwind Labs"
DOMAIN = "northwind.io"


@dataclass(frozen=True)
class Office:
    city: str
    country: str
    utc_offset: float  # hours, in March
    weight: int
    first: tuple[str, ...]
    last: tuple[str, ...]


OFFICES = [
    Office("New York", "US", -5, 22,
           ("Avery", "Jordan", "Marcus", "Keisha", "Ethan", "Brianna", "Caleb", "Megan", "Tyler", "Danielle", "Rachel",
            "Kevin", "Lauren", "DeShawn", "Emily", "Brandon", "Samantha", "Christopher"),
           ("Whitfield", "Brooks", "Donovan", "Carter", "Hayes", "Sullivan", "Price", "Gallagher", "Reed", "Foster",
            "Johnson", "Washington", "O'Connor", "Kim", "Rivera", "Goldberg", "Patterson")),
    Office("San Francisco", "US", -8, 14,
           ("Kai", "Madison", "Jasmine", "Tyler", "Noah", "Olivia", "Diego", "Vanessa", "Ryan", "Hannah", "Connor", "Mei"),
           ("Nguyen", "Chen", "Alvarez", "Park", "Thompson", "Murphy", "Lopez", "Wright", "Okafor", "Shapiro", "Tran")),
    Office("London", "GB", 0, 12,
           ("Oliver", "Amelia", "Harry", "Isla", "George", "Poppy", "Alfie", "Imogen", "Rhys", "Siobhan", "Callum", "Freya"),
           ("Hughes", "Ellis", "Fletcher", "Pemberton", "Ashworth", "Clarke", "Bhatt", "Rahman", "Doyle", "MacLeod", "Osei")),
    Office("Berlin", "DE", 1, 12,
           ("Jonas", "Lea", "Matthias", "Sophie", "Lukas", "Hannah", "Felix", "Katrin", "Moritz", "Anja", "Tobias", "Jürgen"),
           ("Becker", "Hoffmann", "Krüger", "Wagner", "Schäfer", "Neumann", "Schröder", "Zimmermann", "Braun", "Vogel", "Weiß")),
    Office("Paris", "FR", 1, 8,
           ("Camille", "Julien", "Élodie", "Mathieu", "Chloé", "Antoine", "Manon", "Théo", "Anne-Sophie", "Rémi"),
           ("Laurent", "Moreau", "Fabre", "Lefèvre", "Girard", "Rousseau", "Mercier", "Dubois", "Faure", "Chevalier")),
    Office("Madrid", "ES", 1, 6,
           ("Lucía", "Javier", "Carmen", "Alejandro", "Paula", "Sergio", "Nerea", "Álvaro", "María José"),
           ("Fernández", "Ortega", "García", "Martín", "Navarro", "Ruiz", "Iglesias", "Castillo", "Domínguez")),
    Office("Warsaw", "PL", 1, 5,
           ("Katarzyna", "Piotr", "Agnieszka", "Łukasz", "Magdalena", "Tomasz", "Zofia", "Michał"),
           ("Nowak", "Kowalczyk", "Wójcik", "Kaczmarek", "Mazur", "Krawczyk", "Dudek", "Sikora", "Wróbel")),
    Office("Amsterdam", "NL", 1, 4,
           ("Daan", "Lotte", "Sven", "Fleur", "Bram", "Sanne", "Joost"),
           ("de Vries", "Jansen", "van Dijk", "Bakker", "Visser", "Smit", "de Jong")),
    Office("Bengaluru", "IN", 5.5, 11,
           ("Aarav", "Priya", "Rohan", "Ananya", "Vikram", "Divya", "Karthik", "Sneha", "Arjun", "Lakshmi", "Siddharth"),
           ("Iyer", "Sharma", "Reddy", "Nair", "Krishnan", "Menon", "Rao", "Venkatesh", "Gupta", "Subramanian")),
    Office("Tokyo", "JP", 9, 4,
           ("Haruto", "Yui", "Sota", "Aoi", "Ren", "Keiko", "Daisuke", "Mio"),
           ("Tanaka", "Suzuki", "Takahashi", "Watanabe", "Ito", "Nakamura", "Kobayashi", "Yamamoto")),
    Office("São Paulo", "BR", -3, 4,
           ("João", "Beatriz", "Gabriel", "Larissa", "Thiago", "Fernanda", "Rafael"),
           ("Silva", "Oliveira", "Souza", "Costa", "Pereira", "Almeida", "Carvalho")),
]
BROWSERS = ["Chrome 133 on macOS", "Chrome 133 on Windows 11", "Firefox 135 on Windows 11", "Safari 18 on macOS",
            "Edge 133 on Windows 11", "Chrome 133 on Ubuntu", "Safari on iPhone", "Chrome on Android", "Firefox 135 on Ubuntu"]
#: where failed sign-ins come from: nobody works there
STRANGE_PLACES = ["Lagos, NG", "São Paulo, BR", "Ho Chi Minh City, VN", "Bucharest, RO", "Jakarta, ID", "Kyiv, UA",
                  "Ashburn, US (AWS)", "Frankfurt, DE (Hetzner)", "Singapore, SG (DigitalOcean)"]
SETTING_CHANGES = [("session_timeout", ["30", "60", "240", "480"]), ("password_min_length", ["8", "10", "12"]),
                   ("timezone", ["UTC", "Europe/Berlin", "America/New_York", "Europe/London"]),
                   ("allow_public_links", ["0", "1"]), ("notify_weekly", ["0", "1"]), ("date_format", DATE_FORMATS)]


def key_secret(seed_text: str) -> str:
    return "nw_live_" + hashlib.sha256(seed_text.encode()).hexdigest()[:28]


def email_part(text: str) -> str:
    """A name as an address writes it: `Élodie` → `elodie`, `de Vries` → `devries`, `Weiß` → `weiss`."""
    folded = text.lower().replace("ß", "ss").replace("ł", "l").replace("ø", "o").replace("æ", "ae")
    plain = unicodedata.normalize("NFKD", folded).encode("ascii", "ignore").decode()
    return "".join(ch for ch in plain if ch.isalnum() or ch == "-")


def _working_moment(rng: random.Random, now: dt.datetime, office: Office, days_back: int) -> dt.datetime:
    """A weekday moment in the office's working hours (08:00-19:00 local), `days_back` days or
    more before `now`, as the app's clock (UTC) writes it."""
    local_now = now + dt.timedelta(hours=office.utc_offset)
    for back in range(days_back, days_back + 14):
        day = (local_now - dt.timedelta(days=back)).date()
        if day.weekday() >= 5:
            continue
        minute = int(rng.triangular(8 * 60, 19 * 60, 10 * 60))
        local = dt.datetime.combine(day, dt.time()) + dt.timedelta(minutes=minute)
        utc = local - dt.timedelta(hours=office.utc_offset)
        if utc < now - dt.timedelta(minutes=5):
            return utc
    return now - dt.timedelta(days=days_back + 1, hours=3)


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="minutes")


def seed_settings(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    values = {
        "org_name": ORG, "timezone": rng.choice(TIMEZONES), "language": rng.choice(LANGUAGES)[0],
        "theme": rng.choice(THEMES), "date_format": rng.choice(DATE_FORMATS),
        "notify_email": rng.choice(["1", "0"]), "notify_sms": rng.choice(["1", "0"]),
        "notify_weekly": rng.choice(["1", "0"]), "notify_security": "1", "notify_marketing": rng.choice(["1", "0"]),
        "require_2fa": rng.choice(["1", "0"]), "session_timeout": str(rng.choice(SESSION_TIMEOUTS)),
        "password_min_length": str(rng.choice([8, 10, 12])), "allow_public_links": rng.choice(["1", "0"]),
    }
    for key, value in values.items():
        db.execute("INSERT INTO settings (key, value) VALUES (?, ?)", (key, value))

    audit: list[tuple[dt.datetime, str, str, str]] = []  # (at, actor, action, detail)
    names: set[str] = set()
    emails: set[str] = set()
    people: list[tuple[str, str, str, str, Office]] = []  # name, email, role, status, office
    headcount = rng.randint(105, 135)
    weights = [o.weight for o in OFFICES]
    while len(people) < headcount:
        office = OFFICES[0] if not people else rng.choices(OFFICES, weights=weights)[0]
        first, last = rng.choice(office.first), rng.choice(office.last)
        name = f"{first} {last}"
        if name in names:
            continue
        email = f"{email_part(first)}.{email_part(last)}@{DOMAIN}"
        n = 2
        while email in emails:  # two people who write the same: the later one's address takes a number
            email = f"{email_part(first)}.{email_part(last)}{n}@{DOMAIN}"
            n += 1
        names.add(name)
        emails.add(email)
        i = len(people)
        role = "owner" if i == 0 else rng.choices(ROLES[1:], weights=[7, 71, 22])[0]
        status = "active" if i == 0 else rng.choices(["active", "suspended", "invited"], weights=[84, 7, 9])[0]
        people.append((name, email, role, status, office))
    admins = [p[0] for p in people if p[2] in ("owner", "admin") and p[3] == "active"]

    for name, email, role, status, office in people:
        team = rng.choices(TEAMS, weights=TEAM_WEIGHTS)[0]
        signed_in: str | None = None
        if status == "active":
            back = 0 if rng.random() < 0.4 else min(int(rng.expovariate(1 / 5)), 80)
            at = _working_moment(rng, now, office, back)
            signed_in = _iso(at)
            audit.append((at, name, "user.login", f"signed in · {rng.choice(BROWSERS)} · {office.city}, {office.country}"))
        elif status == "suspended":
            gone = _working_moment(rng, now, office, rng.randint(20, 160))
            signed_in = _iso(gone)
            when = _working_moment(rng, now, OFFICES[0], max(0, (now - gone).days - 1))
            audit.append((when, rng.choice(admins), "user.update", f"{email}: status active → suspended"))
        else:
            when = _working_moment(rng, now, OFFICES[0], rng.randint(0, 21))
            audit.append((when, rng.choice(admins), "user.invite", f"invited {email} as {role}"))
        db.execute("INSERT INTO users (name, email, role, status, team, last_login) VALUES (?, ?, ?, ?, ?, ?)",
                   (name, email, role, status, team, signed_in))

    for i, key_name in enumerate(rng.sample(KEY_NAMES, rng.randint(4, 7))):
        created = _working_moment(rng, now, OFFICES[0], rng.randint(9, 700))
        revoked = 1 if i > 2 and rng.random() < 0.25 else 0
        db.execute("INSERT INTO api_keys (name, secret, created, rotated, revoked) VALUES (?, ?, ?, ?, ?)",
                   (key_name, key_secret(f"{key_name}:{i}:{rng.random()}"), _iso(created), None, revoked))
        if (now - created).days <= 90:
            audit.append((created, rng.choice(admins), "key.create", f"created key {key_name}"))
        if revoked:
            when = _working_moment(rng, now, OFFICES[0], rng.randint(1, max(2, (now - created).days - 1)))
            audit.append((when, rng.choice(admins), "key.revoke", f"revoked key {key_name}"))

    # the rest of three months: earlier sign-ins, failed ones, setting changes, role changes
    active = [p for p in people if p[3] == "active"]
    for _ in range(rng.randint(60, 110)):
        name, _email, _role, _status, office = rng.choice(active)
        at = _working_moment(rng, now, office, rng.randint(1, 90))
        audit.append((at, name, "user.login", f"signed in · {rng.choice(BROWSERS)} · {office.city}, {office.country}"))
    for _ in range(rng.randint(3, 9)):
        name = rng.choice(active)[0]
        at = now - dt.timedelta(days=rng.randint(0, 89), minutes=rng.randint(0, 1439))
        reason = rng.choice(["wrong password", "wrong password", "wrong 2FA code", "account locked after 5 attempts"])
        audit.append((at, name, "user.login_failed", f"failed sign-in ({reason}) · {rng.choice(STRANGE_PLACES)}"))
    for _ in range(rng.randint(2, 6)):
        key, options = rng.choice(SETTING_CHANGES)
        old, new = rng.sample(options, 2)
        at = _working_moment(rng, now, OFFICES[0], rng.randint(3, 90))
        audit.append((at, rng.choice(admins), "setting.change", f"{key}: {old} → {new}"))
    members = [p for p in active if p[2] in ("member", "admin")]
    for _ in range(rng.randint(2, 7)):
        _name, email, role, _status, _office = rng.choice(members)
        old = "viewer" if role == "member" else "member"
        at = _working_moment(rng, now, OFFICES[0], rng.randint(2, 90))
        audit.append((at, rng.choice(admins), "user.update", f"{email}: role {old} → {role}"))
    for at, actor, action, detail in sorted(audit):
        db.execute("INSERT INTO audit (at, actor, action, detail) VALUES (?, ?, ?, ?)", (_iso(at), actor, action, detail))
