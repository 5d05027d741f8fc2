"""Deterministic calendar data: the calendar of one busy person (a product lead in Berlin
with a team spread over several time zones, a partner and a child) around the fixed
'today' (Monday 2026-03-02): weekly series (standups, 1:1s, classes), a daily one, work
meetings they organise and invitations from others (answered in the past, some waiting),
personal and family appointments in the evenings and at weekends, a work trip and a
weekend away, public holidays, birthdays and the clock changes, all-day and timed, from
15-minute check-ins to afternoon workshops. The app keeps one time zone; where another one
matters (a flight, a call with Tokyo or San Francisco) the description gives the local times.
Descriptions are one line, without edge spaces: the edit form posts a textarea's line breaks
back as CRLF and strips, so a saved event would otherwise differ from its seed.

Titles never equal the ones the task suites have an agent create (`RESERVED`), so a
judge that finds an event by its title finds the agent's."""

from __future__ import annotations

import datetime as dt
import random

from cua.tasks.apps.base import AppDB

#: the company's mail domain; friends and family write from their own providers
DOMAIN = "brightloop.example"

#: locale -> (first names, last names); colleagues and friends come from all of them
NAMES: dict[str, tuple[list[str], list[str]]] = {
    "en-US": (["Emily", "Jacob", "Madison", "Tyler", "Hannah", "Marcus", "Olivia", "Brandon", "Kayla", "Ethan"],
              ["Johnson", "Miller", "Thompson", "Reed", "Coleman", "Price", "Brooks", "Sullivan", "Hayes", "Foster"]),
    "de-DE": (["Jonas", "Lea", "Felix", "Anna", "Lukas", "Miriam", "Tobias", "Katharina", "Jürgen", "Sophie"],
              ["Müller", "Schneider", "Becker", "Hoffmann", "Wagner", "Krüger", "Vogel", "Schäfer", "Brandt", "Zimmermann"]),
    "fr-FR": (["Camille", "Léa", "Hugo", "Élodie", "Mathieu", "Chloé", "Théo", "Inès", "Julien", "Margaux"],
              ["Dubois", "Lefèvre", "Moreau", "Fontaine", "Girard", "Rousseau", "Bonnet", "Chevalier", "Lambert", "Mercier"]),
    "es-ES": (["Lucía", "Javier", "Carmen", "Alejandro", "Paula", "Sergio", "Nuria", "Álvaro"],
              ["García", "Fernández", "López", "Martínez", "Sánchez", "Romero", "Navarro", "Ortega"]),
    "ja-JP": (["Haruto", "Yui", "Sota", "Aoi", "Ren", "Hina", "Kaito", "Sakura"],
              ["Sato", "Suzuki", "Takahashi", "Watanabe", "Yamamoto", "Nakamura", "Kobayashi", "Kato"]),
    "en-IN": (["Aarav", "Priya", "Rohan", "Ananya", "Vikram", "Kavya", "Arjun", "Neha"],
              ["Sharma", "Iyer", "Reddy", "Nair", "Gupta", "Menon", "Kapoor", "Banerjee"]),
    "pt-BR": (["Gabriel", "Beatriz", "Rafael", "Larissa"], ["Oliveira", "Souza", "Carvalho", "Almeida"]),
    "pl-PL": (["Kasia", "Piotr", "Magda", "Tomasz"], ["Nowak", "Kowalczyk", "Wiśniewska", "Zieliński"]),
}
#: how many colleagues and friends each locale gives (a Berlin team with offices in SF, Tokyo and Bengaluru)
WEIGHTS = {"en-US": 8, "de-DE": 10, "fr-FR": 5, "es-ES": 4, "ja-JP": 4, "en-IN": 5, "pt-BR": 2, "pl-PL": 2}
PERSONAL_MAIL = {"en-US": ["gmail.com", "outlook.com", "icloud.com"], "de-DE": ["web.de", "gmx.de", "posteo.de"],
                 "fr-FR": ["orange.fr", "free.fr", "gmail.com"], "es-ES": ["gmail.com", "hotmail.es"],
                 "ja-JP": ["yahoo.co.jp", "gmail.com"], "en-IN": ["gmail.com", "rediffmail.com"], "pt-BR": ["uol.com.br"],
                 "pl-PL": ["wp.pl", "o2.pl"]}

#: titles the suites have an agent create: the seed never holds them (compared case-blind)
RESERVED = {"dentist check-up", "coffee with ines", "project kickoff", "call with the bank", "yoga trial", "school play",
            "team retro", "plumber visit", "guitar lesson", "company holiday", "anniversary", "moving day", "conference day 1",
            "spanish class", "choir practice", "team lunch", "climbing", "gym", "shared calendar", "office closed: public holiday"}

FEATURES = ["checkout redesign", "usage-based billing", "SSO for teams", "mobile offline mode", "audit log export",
            "onboarding checklist", "search relevance", "invoice PDFs", "dark mode", "Slack integration", "data residency (EU)",
            "role-based permissions", "API rate limits", "self-serve upgrades"]
COMPANIES = ["Nordlicht Logistik", "Helvetia Pharma", "Maison Lacroix", "Aguirre & Hijos", "Kobe Precision", "Tata Freight",
             "Greenfield Analytics", "Rivermark Health", "Studio Pixelwald", "Pampa Agro"]
ROLES = ["Senior Backend Engineer", "Product Designer", "Data Analyst", "Engineering Manager", "Staff Frontend Engineer",
         "Product Marketing Manager", "QA Engineer"]
INCIDENTS = ["checkout latency spike (SEV-2)", "EU region outage on 11 Feb", "duplicate invoice emails",
             "expired TLS cert on status page", "search index lag"]
METRICS = ["activation funnel", "churn by plan", "NPS comments", "trial-to-paid", "weekly active teams"]
VENDORS = ["Amplitude", "Intercom", "Datadog", "Figma Enterprise", "LaunchDarkly"]
TOPICS = ["LLM features in support", "accessibility basics", "writing good specs", "pricing psychology", "GDPR for PMs"]
RESTAURANTS = ["Cocolo Ramen", "Lokal", "Café Einstein Stammhaus", "Mrs Robinson's", "Tulus Lotrek", "Markthalle Neun",
               "La Bonne Franquette", "Umami", "Osteria Centrale", "Monsieur Vuong"]
ARTISTS = [("Bonobo", "Columbiahalle"), ("Berliner Philharmoniker: Mahler 5", "Philharmonie"), ("Khruangbin", "Tempodrom"),
           ("Nils Frahm", "Funkhaus"), ("Rosalía", "Uber Arena")]
FILMS = ["the new Villeneuve", "Perfect Days (OmU)", "Anatomie d'une chute (OmU)", "a Ghibli double bill"]
DOCTORS = [("Dentist – Dr. Krüger", "Zahnarztpraxis Krüger, Oranienstr. 45"), ("Dermatologist", "Hautarztpraxis am Zoo"),
           ("Physio (knee)", "Physio Kreuzberg, Gneisenaustr. 12"), ("GP check-up", "Praxis Dr. Aydın"),
           ("Eye test", "Fielmann, Schlossstr. 7")]
TRIPS = [  # (city, flight out, dep, arr local, zone name, hours behind Berlin, airport, hotel, flight back, dep local, arr)
    ("Lisbon", "TP 573", "07:05", "09:15", "WET", 1, "LIS", "Memmo Príncipe Real", "TP 576", "16:40", "20:45"),
    ("London", "BA 983", "08:40", "09:55", "GMT", 1, "LHR", "citizenM Tower of London", "BA 992", "17:15", "20:10"),
    ("Barcelona", "VY 1887", "06:50", "09:30", "CET", 0, "BCN", "Hotel Casa Bonay", "VY 1886", "18:05", "20:40"),
    ("Paris", "AF 1735", "10:25", "12:10", "CET", 0, "CDG", "Hôtel Grands Boulevards", "AF 1534", "19:20", "21:05"),
]
AWAY = [("Train to Hamburg (ICE 1007)", "Weekend in Hamburg", "Train back (ICE 1010)", "Hamburg Hbf"),
        ("Train to Leipzig (ICE 1509)", "Leipzig: visiting Oma & Opa", "Train back (ICE 1508)", "Leipzig Hbf"),
        ("Drive to Usedom", "Baltic weekend – Usedom", "Drive back from Usedom", "Ferienwohnung Ahlbeck")]
ZOOM = ["Zoom", "Google Meet", "Room Spree (3rd floor)", "Room Havel (2nd floor)", "Room Tiergarten", "Focus booth 4", "Kitchen area"]


def _reserved(title: str) -> bool:
    return title.lower() in RESERVED


def _email(first: str, last: str, domain: str, used: set[str]) -> str:
    local = f"{first}.{last}".lower()
    for a, b in (("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("ß", "ss"), ("é", "e"), ("è", "e"), ("á", "a"), ("í", "i"),
                 ("ó", "o"), ("ú", "u"), ("ç", "c"), ("ñ", "n"), ("É", "e"), ("Á", "a"), ("ś", "s"), ("ń", "n")):
        local = local.replace(a, b)
    candidate, n = local, 2
    while f"{candidate}@{domain}" in used:
        candidate, n = f"{local}{n}", n + 1
    used.add(f"{candidate}@{domain}")
    return f"{candidate}@{domain}"


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _berlin_offset(day: dt.date) -> int:
    """Hours Berlin is ahead of UTC (the EU clocks go forward on 29 March 2026)."""
    return 2 if day >= dt.date(2026, 3, 29) else 1


def _berlin_zone(day: dt.date, zone: str) -> str:
    """A European zone's abbreviation on that day (summer time from 29 March 2026)."""
    summer = {"CET": "CEST", "WET": "WEST", "GMT": "BST"}
    return summer.get(zone, zone) if day >= dt.date(2026, 3, 29) else zone


def _zone_note(day: dt.date, start: int, zone: str) -> str:
    """The same start in another zone, as a calendar invite's description spells it."""
    utc = {"PT": -7 if day >= dt.date(2026, 3, 8) else -8, "ET": -4 if day >= dt.date(2026, 3, 8) else -5,
           "JST": 9, "IST": 5.5}[zone]
    local = (start + int((utc - _berlin_offset(day)) * 60)) % (24 * 60)
    return f"{_hhmm(local)} {zone}"


class _Seeder:
    def __init__(self, db: AppDB, rng: random.Random, today: dt.date) -> None:
        self.db, self.rng, self.today = db, rng, today
        self.colleagues: list[int] = []
        self.team: list[int] = []  # my reports
        self.friends: list[int] = []
        self.first: dict[int, str] = {}
        self.busy: dict[dt.date, list[tuple[int, int]]] = {}
        self.count = 0

    # --- people ---
    def people(self) -> None:
        rng, used_names, used_mail = self.rng, set[str](), set[str]()
        pool = [loc for loc, w in WEIGHTS.items() for _ in range(w)]
        rows: list[tuple[str, str, str, bool]] = []
        while len(rows) < 46:
            loc = rng.choice(pool)
            firsts, lasts = NAMES[loc]
            first, last = rng.choice(firsts), rng.choice(lasts)
            repeat = any(r[0].split()[0] == first for r in rows)
            if f"{first} {last}" in used_names or (repeat and rng.random() < 0.8):
                continue
            used_names.add(f"{first} {last}")
            work = len(rows) < 32
            domain = DOMAIN if work else rng.choice(PERSONAL_MAIL[loc])
            rows.append((f"{first} {last}", _email(first, last, domain, used_mail), loc, work))
        for name, email, _, work in rows:
            pid = self.db.insert("INSERT INTO people (name, email) VALUES (?, ?)", (name, email))
            self.first[pid] = name.split()[0]
            (self.colleagues if work else self.friends).append(pid)
        self.team = self.colleagues[:6]

    # --- writing ---
    def event(self, title: str, day: dt.date, start: int | None, minutes: int, calendar: str, location: str = "",
              description: str = "", *, recur: str = "none", until: dt.date | None = None, organizer: int | None = None,
              my_status: str = "accepted", guests: list[int] | tuple[int, ...] = ()) -> int:
        assert not _reserved(title), title
        if start is None:
            starts = ends = None
        else:
            starts, ends = _hhmm(start), _hhmm(min(start + minutes, 23 * 60 + 59))
            self.busy.setdefault(day, []).append((start, start + minutes))
        eid = self.db.insert(
            "INSERT INTO events (title, date, start, end, all_day, location, description, calendar, recur, recur_until,"
            " organizer_id, my_status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (title, day.isoformat(), starts, ends, int(start is None), location, description, calendar, recur,
             until.isoformat() if until else None, organizer, my_status))
        past = day < self.today and recur == "none"
        for pid in guests:
            if pid == organizer:
                continue
            status = self.rng.choices(["accepted", "declined", "pending"], [6, 1.2, 0 if past else 2.5])[0]
            self.db.execute("INSERT INTO attendees (event_id, person_id, status) VALUES (?,?,?)", (eid, pid, status))
        self.count += 1
        return eid

    def free(self, day: dt.date, start: int, minutes: int) -> bool:
        return all(start + minutes <= s or start >= e for s, e in self.busy.get(day, []))

    def slot(self, day: dt.date, lo: int, hi: int, minutes: int, step: int = 30) -> int | None:
        """A free start between lo and hi (minutes after midnight), on the half hour mostly."""
        starts = list(range(lo, hi - minutes + 1, step))
        self.rng.shuffle(starts)
        return next((s for s in starts if self.free(day, s, minutes)), None)

    def guests(self, lo: int, hi: int, pool: list[int] | None = None) -> list[int]:
        pool = pool or self.colleagues
        return self.rng.sample(pool, min(len(pool), self.rng.randint(lo, hi)))

    # --- series ---
    def series(self) -> None:
        rng, today = self.rng, self.today
        monday = today - dt.timedelta(days=today.weekday())

        def until(lo: int, hi: int) -> dt.date:
            return today + dt.timedelta(days=rng.randint(lo, hi))

        team = self.team
        start0 = monday - dt.timedelta(weeks=rng.randint(6, 9))
        for wd in range(5):  # the team's standup, Monday to Friday
            self.event("Platform standup", start0 + dt.timedelta(days=wd), 9 * 60 + 30, 15, "Work", "Google Meet",
                       "Yesterday / today / blockers. Keep it under 15 minutes; deep dives go to the parking lot.",
                       recur="weekly", guests=team)
        for i, pid in enumerate(team[:4]):  # 1:1s with my reports, one a day
            day = monday - dt.timedelta(weeks=rng.randint(3, 12)) + dt.timedelta(days=i % 4 + 1)
            self.event(f"1:1 {self.first[pid]} / me", day, rng.choice([11 * 60, 13 * 60 + 30, 15 * 60, 16 * 60]),
                       rng.choice([30, 30, 45]), "Work", rng.choice(["Focus booth 4", "Google Meet", "Walk by the canal"]),
                       "Shared notes doc: wins, worries, growth. Their agenda first.", recur="weekly",
                       until=until(20, 75) if rng.random() < 0.5 else None, guests=[pid])
        boss = self.colleagues[6]
        self.event(f"1:1 with {self.first[boss]}", monday - dt.timedelta(weeks=20) + dt.timedelta(days=3), 17 * 60, 30,
                   "Work", "Google Meet", "", recur="weekly", organizer=boss)
        sync_day = monday - dt.timedelta(weeks=rng.randint(2, 5)) + dt.timedelta(days=3)
        self.event("Product sync – Tokyo & Berlin", sync_day, 8 * 60 + 30, 45, "Work", "Zoom",
                   f"Early for Berlin, end of day in Tokyo ({_zone_note(sync_day, 8 * 60 + 30, 'JST')} on the first one). "
                   "Agenda in the Confluence page 'APAC roadmap'.", recur="weekly", until=until(10, 45),
                   guests=self.guests(2, 4))
        self.event("Sprint planning", monday - dt.timedelta(weeks=rng.randint(4, 8)), 10 * 60, 90, "Work",
                   "Room Spree (3rd floor)", "Bring your estimates. Board: Platform Sprint.", recur="weekly",
                   until=until(9, 60), guests=team)
        personal = [("Yoga – Vinyasa flow", 1, 18 * 60 + 30, 75, "Personal", "Yogaloft Kreuzberg", "Bring own mat."),
                    ("Swimming lesson (Mila)", 2, 16 * 60 + 30, 45, "Family", "Stadtbad Neukölln", "Towel + goggles!"),
                    ("Piano – Mila", 3, 17 * 60, 45, "Family", "Musikschule Friedrichshain", ""),
                    ("5-a-side football", 0, 20 * 60, 90, "Personal", "Soccer World Tempelhof", "€6 pitch share"),
                    ("Farmers' market run", 5, 10 * 60, 60, "Family", "Kollwitzplatz", ""),
                    ("Italian evening class", 2, 19 * 60, 90, "Personal", "VHS Mitte, Raum 204", "Livello A2 – Unità 7")]
        for title, wd, start, minutes, cal, loc, desc in rng.sample(personal, rng.randint(4, 6)):
            first = monday - dt.timedelta(weeks=rng.randint(1, 10)) + dt.timedelta(days=wd)
            self.event(title, first, start, minutes, cal, loc, desc, recur="weekly",
                       until=until(7, 80) if rng.random() < 0.8 else None)
        course = today - dt.timedelta(days=rng.randint(3, 10))
        self.event("Physio exercises", course, 7 * 60, 15, "Personal", "", "Knee: 3 x 12 squats, balance board, stretch.",
                   recur="daily", until=course + dt.timedelta(days=rng.randint(20, 35)))

    # --- one-offs ---
    def work_day(self, day: dt.date) -> None:
        rng = self.rng
        for _ in range(rng.choices([0, 1, 2, 3, 4], [1, 3, 4, 2.5, 1])[0]):
            minutes = rng.choices([15, 25, 30, 45, 50, 60, 90, 120, 180], [1, 1.5, 5, 3, 1.5, 5, 2, 1, 0.4])[0]
            start = self.slot(day, 8 * 60 + 30, 18 * 60 + 30, minutes, rng.choice([30, 30, 30, 15]))
            if start is None:
                continue
            if rng.random() < 0.3:
                self.invite(day, start, minutes)
            else:
                self.mine(day, start, minutes)

    def mine(self, day: dt.date, start: int, minutes: int) -> None:
        rng = self.rng
        p = rng.choice(self.colleagues)
        kind = rng.randrange(14)
        loc = rng.choice(ZOOM)
        desc = ""
        guests: list[int] = []
        if kind == 0:
            title, guests = f"Design critique – {rng.choice(FEATURES)}", self.guests(2, 5)
            desc = "Figma link in the channel. Please leave comments before the session."
        elif kind == 1:
            title, guests = f"Kickoff: {rng.choice(FEATURES)}", self.guests(3, 7)
            desc = "Goals, non-goals, owners, first milestone. Pre-read: the one-pager."
        elif kind == 2:
            title, loc = f"Customer call – {rng.choice(COMPANIES)}", "Zoom"
            guests = self.guests(1, 2)
            desc = rng.choice(["Renewal is in April; they want SSO first.", "Feedback on the beta. Record with consent.", ""])
        elif kind == 3:
            first, last = rng.choice(list(NAMES.values()))
            title = f"Interview: {rng.choice(first)} {rng.choice(last)} ({rng.choice(ROLES)})"
            guests, minutes = self.guests(1, 2), 60
            desc = "Product sense round. Scorecard in Greenhouse within 24h."
        elif kind == 4:
            title, guests = f"Postmortem: {rng.choice(INCIDENTS)}", self.guests(3, 6)
            desc = "Blameless. Timeline → contributing factors → action items with owners."
        elif kind == 5:
            title, guests = f"Metrics deep-dive: {rng.choice(METRICS)}", self.guests(1, 3)
        elif kind == 6:
            title, guests = f"Coffee chat – {self.first[p]}", [p]
            loc, minutes = "Kitchen area", 25
        elif kind == 7:
            title, guests = f"Vendor demo: {rng.choice(VENDORS)}", self.guests(1, 3)
            desc = "They asked for 45 min; we need answers on pricing tiers and EU hosting."
        elif kind == 8:
            title, guests = f"Spec walkthrough – {rng.choice(FEATURES)}", self.guests(2, 6)
        elif kind == 9:
            title, desc = "Focus time: write the Q2 roadmap narrative", "Do not book. Slack on DND."
            minutes, loc = 120, ""
        elif kind == 10:
            title, guests = f"Pricing sync with {self.first[p]}", [p, *self.guests(0, 1)]
        elif kind == 11:
            title, guests = rng.choice(["Hiring sync", "Roadmap prioritisation", "Q2 OKR drafting", "Release go/no-go",
                                        "Support escalations review", "Budget check-in (Q2)"]), self.guests(2, 5)
        elif kind == 12:
            title = f"Prep: {rng.choice(COMPANIES)} QBR"
            desc = "Usage numbers, open tickets, renewal risk. Deck template in Drive."
        else:
            title, guests = f"Lunch w/ {self.first[p]}", [p]
            loc, start = rng.choice(RESTAURANTS), rng.choice([12 * 60, 12 * 60 + 30, 13 * 60])
            minutes = 60
            if not self.free(day, start, minutes):
                return
        if "Meet" in loc or "Zoom" in loc:
            desc = (desc + " " if desc else "") + f"Join: meet.{DOMAIN}/{rng.choice('abcdefghkmnpqrstuvwxyz')}" \
                f"{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"
        self.event(title, day, start, minutes, "Work", loc, desc, guests=guests)

    def invite(self, day: dt.date, start: int, minutes: int) -> None:
        rng = self.rng
        org = rng.choice(self.colleagues[6:])
        titles = ["Company all-hands", "Security awareness training", "Architecture council", "Quarterly business review",
                  f"Lunch & learn: {rng.choice(TOPICS)}", f"Farewell drinks for {self.first[rng.choice(self.colleagues)]}",
                  "Welcome breakfast for new joiners", f"Incident review: {rng.choice(INCIDENTS)}", "Sales kickoff dry-run",
                  "Leadership sync", f"Skip-level with {self.first[org]}", f"{rng.choice(COMPANIES)} escalation – SSO",
                  "Brand refresh: first concepts", f"Partner call – {rng.choice(COMPANIES)}",
                  "Data retention policy review (legal)"]
        title = rng.choice(titles)
        desc = ""
        if rng.random() < 0.3:  # a colleague in another office organises it: their time in the invite
            zone = rng.choice(["PT", "ET", "JST", "IST"])
            start = rng.choice({"PT": [17 * 60, 17 * 60 + 30, 18 * 60], "ET": [14 * 60, 15 * 60, 16 * 60],
                                "JST": [8 * 60, 9 * 60], "IST": [10 * 60, 11 * 60 + 30, 13 * 60]}[zone])
            if not self.free(day, start, minutes):
                return
            desc = f"Scheduled for {_zone_note(day, start, zone)} by the organiser. Agenda to follow."
        status = "pending" if day >= self.today and rng.random() < 0.45 else rng.choices(["accepted", "declined"], [4, 1])[0]
        self.event(title, day, start, minutes, "Work", rng.choice(ZOOM), desc, organizer=org, my_status=status,
                   guests=self.guests(1, 6, self.colleagues[:6] + self.colleagues[7:]))

    def evening_or_weekend(self, day: dt.date, weekend: bool) -> None:
        rng = self.rng
        f = rng.choice(self.friends)
        kind = rng.randrange(11)
        cal, loc, desc = "Personal", "", ""
        if kind == 0:
            title, loc = rng.choice(DOCTORS)
            start, minutes = self.slot(day, 8 * 60, 18 * 60, 45) if not weekend else None, 45
            if start is None:
                return
        elif kind == 1:
            title, loc = f"Dinner with {self.first[f]}", rng.choice(RESTAURANTS)
            start, minutes = rng.choice([19 * 60, 19 * 60 + 30, 20 * 60]), 120
        elif kind == 2:
            artist, venue = rng.choice(ARTISTS)
            title, loc, start, minutes = f"Concert: {artist}", venue, 20 * 60, 150
            desc = "Tickets in the Eventim app. Doors 19:00."
        elif kind == 3:
            title, loc, start, minutes = f"Cinema: {rng.choice(FILMS)}", "Kino International", 20 * 60 + 15, 150
        elif kind == 4:
            title, cal = rng.choice(["Parents' evening – Class 2b", "Pediatrician – Mila's check-up (U9)",
                                     "Playdate: Mila at Jonas's", "Kids' birthday party – Emil turns 7"]), "Family"
            start, minutes = (15 * 60 if weekend else 17 * 60), 90
        elif kind == 5:
            title, start, minutes = rng.choice(["Haircut – Salon Meyer", "Bike service", "IKEA run", "Bürgeramt: passport pickup",
                                                "Car: winter → summer tyres", "Tax advisor – 2025 return"]), \
                rng.choice([10 * 60, 11 * 60, 17 * 60 + 30]), rng.choice([30, 45, 60])
        elif kind == 6:
            title, loc, start, minutes = f"Run with {self.first[f]}", "Tempelhofer Feld", rng.choice([8 * 60, 9 * 60]), 60
        elif kind == 7:
            title, cal, start, minutes = rng.choice(["Call Mum & Dad", "Video call with Grandma"]), "Family", 18 * 60, 30
        elif kind == 8:
            title, cal, loc = "Brunch", "Family", rng.choice(RESTAURANTS)
            start, minutes = 10 * 60 + 30, 120
            if not weekend:
                return
        elif kind == 9:
            title, start, minutes = f"Drinks with {self.first[f]} & {self.first[rng.choice(self.friends)]}", 19 * 60 + 30, 150
            loc = rng.choice(["Klunkerkranich", "Prater Garten", "Becketts Kopf", "Zola"])
        else:
            title, cal, start, minutes = "Cleaner comes", "Family", 9 * 60, 180
            loc = "Home"
        if not self.free(day, start, minutes):
            return
        self.event(title, day, start, minutes, cal, loc, desc)

    def all_days(self) -> None:
        rng, today = self.rng, self.today
        fixed = [("Berlin holiday: Women's Day", dt.date(2026, 3, 8), "Family", "Public holiday in Berlin."),
                 ("US clocks go forward", dt.date(2026, 3, 8), "Work",
                  "San Francisco and New York calls move one hour earlier for us until 29 March."),
                 ("Clocks go forward (CEST)", dt.date(2026, 3, 29), "Personal", "02:00 → 03:00."),
                 ("Good Friday", dt.date(2026, 4, 3), "Family", "Public holiday."),
                 ("Easter Monday", dt.date(2026, 4, 6), "Family", "Public holiday."),
                 ("Q1 ends – board deck due", dt.date(2026, 3, 31), "Work", ""),
                 ("Mila: no school (teacher training)", today + dt.timedelta(days=rng.randint(10, 40)), "Family", "")]
        for title, day, cal, desc in fixed:
            self.event(title, day, None, 0, cal, "", desc)
        for pid in rng.sample(self.friends + self.colleagues, rng.randint(5, 8)):
            day = today + dt.timedelta(days=rng.randint(-30, 60))
            self.event(f"{self.first[pid]}'s birthday", day, None, 0, "Personal" if pid in self.friends else "Work")
        self.event("Mum's birthday 🎂", today + dt.timedelta(days=rng.randint(-25, 55)), None, 0, "Family", "",
                   "Call in the morning! Present: the photo book.")
        # a work trip
        city, out_no, dep, arr, zone, behind, apt, hotel, back_no, dep_b, arr_b = rng.choice(TRIPS)
        go = today + dt.timedelta(days=rng.randint(8, 35))
        go -= dt.timedelta(days=go.weekday() % 3)  # Monday to Wednesday
        nights = rng.randint(1, 3)
        dh, dm = map(int, dep.split(":"))
        ah, am = map(int, arr.split(":"))
        dur = (ah * 60 + am + behind * 60) - (dh * 60 + dm)
        self.event(f"Flight to {city} ({out_no})", go, dh * 60 + dm, dur, "Work", "Berlin Brandenburg (BER), Terminal 1",
                   f"BER {dep} {_berlin_zone(go, 'CET')} → {apt} {arr} {_berlin_zone(go, zone)} (local). Seat {rng.randint(3, 30)}{rng.choice('ACDF')}. "
                   f"Booking ref {''.join(rng.choice('ABCDEFGHJKLMNPQRSTUVWXYZ23456789') for _ in range(6))}.")
        company = rng.choice(COMPANIES)
        for i in range(nights + 1):
            day = go + dt.timedelta(days=i)
            if i < nights:
                self.event(f"Hotel: {hotel}", day, None, 0, "Work", f"{hotel}, {city}", "Check-in from 15:00. Booked via Navan.")
            if i > 0 or nights == 0:
                self.event(f"On site at {company} ({city})", day, None, 0, "Work", city,
                           f"Times in {zone}: workshop 09:30–17:00 local." if behind else "Workshop 09:30–17:00.")
        bh, bm = map(int, dep_b.split(":"))
        rh, rm = map(int, arr_b.split(":"))
        back_day = go + dt.timedelta(days=nights)
        self.event(f"Flight home from {city} ({back_no})", back_day, bh * 60 + bm + behind * 60,
                   (rh * 60 + rm) - (bh * 60 + bm + behind * 60), "Work", f"{apt}",
                   f"{apt} {dep_b} {_berlin_zone(back_day, zone)} (local) → BER {arr_b} {_berlin_zone(back_day, 'CET')}.")
        # a weekend away
        there, stay, back, loc = rng.choice(AWAY)
        sat = today + dt.timedelta(days=(5 - today.weekday()) % 7 + 7 * rng.randint(1, 7))
        self.event(there, sat - dt.timedelta(days=1), 17 * 60 + 30, rng.choice([120, 135, 180]), "Family", "Berlin Hbf",
                   "Seats 55/56, coach 7.")
        self.event(stay, sat, None, 0, "Family", loc, "")
        self.event(stay, sat + dt.timedelta(days=1), None, 0, "Family", loc, "")
        self.event(back, sat + dt.timedelta(days=1), 16 * 60, rng.choice([120, 135, 180]), "Family", loc, "")


def seed_calendar(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    today = now.date()
    s = _Seeder(db, rng, today)
    s.people()
    s.series()
    s.all_days()
    for offset in range(-30, 61):
        day = today + dt.timedelta(days=offset)
        weekend = day.weekday() >= 5
        if not weekend:
            s.work_day(day)
        if rng.random() < (0.75 if weekend else 0.4):
            s.evening_or_weekend(day, weekend)
        if weekend and rng.random() < 0.35:
            s.evening_or_weekend(day, weekend)
    while s.count < 205:  # a quiet draw: top it up with meetings, as a busy month would
        day = today + dt.timedelta(days=rng.randint(-30, 60))
        if day.weekday() < 5:
            s.work_day(day)
