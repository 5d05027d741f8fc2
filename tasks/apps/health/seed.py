"""Seeded data for the health portal: one household's membership of a PPO plan.

A subscriber and three dependants (a family drawn per seed from several locales), about 80
providers across 15 specialties with names from a dozen locales, the languages they speak,
their city, network and whether they see patients by video, and three weeks of open
slots; appointments past and upcoming; prescriptions with generic drug names, doses and
refills left; about 40 claims over the last 14 months with a long tail of billed amounts,
whose lines the plan adjudicated in date order (deductible, copay, coinsurance, the
out-of-pocket maximum), so what a member owes and what is left of a deductible follow from
the lines; lab results in clinical ranges, flagged against their reference ranges;
message threads with the care team; documents on file. Only `rng` and the app's clock.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from typing import Any

from cua.tasks.apps.base import AppDB

#: (surname, subscriber, spouse, two children, the family's city). Drawn per seed.
FAMILIES = [
    ("Okafor", "Daniel", "Ngozi", ("Chidi", "Amara")),
    ("Nguyen", "Minh", "Lan", ("Bao", "Vy")),
    ("García", "Javier", "Lucía", ("Mateo", "Sofía")),
    ("Kowalski", "Piotr", "Agnieszka", ("Jakub", "Zofia")),
    ("Haddad", "Karim", "Leila", ("Omar", "Yasmin")),
]
CITIES = ["Sacramento", "Davis", "Roseville", "Elk Grove", "Folsom"]
STREETS = ["J Street", "Capitol Ave", "Fair Oaks Blvd", "Alhambra Blvd", "Broadway", "Folsom Blvd", "Sunrise Blvd",
           "Douglas Blvd", "Laguna Blvd", "Russell Blvd", "Howe Ave", "Watt Ave"]
#: locale -> (given names, surnames, the language they add besides English)
LOCALES: dict[str, tuple[list[str], list[str], str]] = {
    "en-US": (["Emily", "Michael", "Sarah", "David", "Rachel", "Brian", "Megan", "Thomas"],
              ["Carter", "Brooks", "Hughes", "Bennett", "Sullivan", "Reed", "Foster", "Harper"], ""),
    "es-MX": (["Alejandro", "Gabriela", "Ricardo", "Mariana", "Fernando", "Valeria"],
              ["Hernández", "Morales", "Castillo", "Ortega", "Navarro", "Delgado"], "Spanish"),
    "zh-CN": (["Wei", "Jing", "Hao", "Xiu", "Lei", "Mei"], ["Chen", "Wang", "Liu", "Zhou", "Huang", "Lin"], "Mandarin"),
    "hi-IN": (["Priya", "Arjun", "Ananya", "Rohan", "Kavita", "Vikram"], ["Sharma", "Patel", "Iyer", "Reddy", "Gupta", "Rao"],
              "Hindi"),
    "vi-VN": (["Thanh", "Hoa", "Tuan", "Ngoc", "Quang"], ["Tran", "Pham", "Le", "Vo", "Dang"], "Vietnamese"),
    "ko-KR": (["Ji-woo", "Min-jun", "Seo-yeon", "Hyun"], ["Park", "Kim", "Choi", "Jung"], "Korean"),
    "ar-EG": (["Youssef", "Nour", "Samir", "Rania"], ["Mansour", "Farouk", "Saleh", "Khalil"], "Arabic"),
    "ru-RU": (["Irina", "Dmitri", "Olga", "Sergei"], ["Volkova", "Petrov", "Sokolova", "Morozov"], "Russian"),
    "tl-PH": (["Maria", "Jose", "Angelica", "Ramon"], ["Santos", "Reyes", "Cruz", "Bautista"], "Tagalog"),
    "fr-FR": (["Camille", "Julien", "Élise", "Mathieu"], ["Laurent", "Moreau", "Fournier", "Girard"], "French"),
    "pt-BR": (["Beatriz", "Rafael", "Larissa", "Thiago"], ["Oliveira", "Souza", "Ribeiro", "Carvalho"], "Portuguese"),
    "yo-NG": (["Adebayo", "Funmilayo", "Tunde", "Chioma"], ["Adeyemi", "Okonkwo", "Balogun", "Eze"], "Yoruba"),
}
#: specialty slug -> (label, how many providers, credentials drawn, takes video visits: probability)
SPECIALTIES: dict[str, tuple[str, int, tuple[str, ...], float]] = {
    "family_medicine": ("Family Medicine", 9, ("MD", "DO", "NP"), 0.7),
    "internal_medicine": ("Internal Medicine", 7, ("MD", "DO"), 0.6),
    "pediatrics": ("Pediatrics", 7, ("MD", "NP"), 0.5),
    "dermatology": ("Dermatology", 7, ("MD", "PA"), 0.6),
    "cardiology": ("Cardiology", 5, ("MD",), 0.4),
    "endocrinology": ("Endocrinology", 4, ("MD",), 0.7),
    "orthopedics": ("Orthopedic Surgery", 5, ("MD", "DO"), 0.2),
    "obgyn": ("Obstetrics & Gynecology", 5, ("MD", "CNM"), 0.4),
    "psychiatry": ("Psychiatry", 5, ("MD", "PMHNP"), 0.9),
    "physical_therapy": ("Physical Therapy", 5, ("DPT",), 0.2),
    "ophthalmology": ("Ophthalmology", 4, ("MD", "OD"), 0.0),
    "gastroenterology": ("Gastroenterology", 4, ("MD",), 0.3),
    "neurology": ("Neurology", 4, ("MD",), 0.5),
    "allergy": ("Allergy & Immunology", 3, ("MD",), 0.5),
    "ent": ("Otolaryngology (ENT)", 3, ("MD",), 0.2),
}
PRACTICES = ["Capitol Health Partners", "Riverbend Medical Group", "Sutter Park Clinic", "American River Specialists",
             "Valley Oak Medical", "Midtown Family Practice", "Delta Care Associates", "Oak Ridge Health Center"]
PHARMACIES = [("Riverbend Pharmacy", "2210 J Street, Sacramento", "retail"),
              ("CareWay Pharmacy #2214", "1825 Douglas Blvd, Roseville", "retail"),
              ("Midtown Apothecary", "1120 Capitol Ave, Sacramento", "retail"),
              ("QuickRx Folsom", "305 Sunrise Blvd, Folsom", "retail"),
              ("Juniper Mail Order Pharmacy", "Delivered to your home (90-day supply)", "mail")]
#: (drug, strength, form, directions, quantity, who takes it: 0 subscriber, 1 spouse, 2/3 children)
DRUGS = [
    ("Atorvastatin", "20 mg", "tablet", "Take 1 tablet by mouth once daily at bedtime", 90, 0),
    ("Lisinopril", "10 mg", "tablet", "Take 1 tablet by mouth once daily", 90, 0),
    ("Metformin ER", "500 mg", "extended-release tablet", "Take 2 tablets by mouth with the evening meal", 180, 0),
    ("Omeprazole", "20 mg", "delayed-release capsule", "Take 1 capsule by mouth 30 minutes before breakfast", 30, 0),
    ("Levothyroxine", "75 mcg", "tablet", "Take 1 tablet by mouth every morning on an empty stomach", 90, 1),
    ("Sertraline", "50 mg", "tablet", "Take 1 tablet by mouth once daily", 30, 1),
    ("Norgestimate/ethinyl estradiol", "0.25 mg/35 mcg", "tablet", "Take 1 tablet by mouth daily", 84, 1),
    ("Albuterol HFA", "90 mcg/actuation", "inhaler", "Inhale 2 puffs every 4-6 hours as needed for wheezing", 1, 2),
    ("Fluticasone propionate", "50 mcg/spray", "nasal spray", "Use 1 spray in each nostril once daily", 1, 2),
    ("Cetirizine", "10 mg", "tablet", "Take 1 tablet by mouth once daily", 30, 3),
    ("Methylphenidate ER", "18 mg", "extended-release tablet", "Take 1 tablet by mouth every morning", 30, 3),
    ("Amoxicillin", "400 mg/5 mL", "oral suspension", "Take 5 mL by mouth twice daily for 10 days", 100, 3),
]
#: (code, description, median billed $, sigma, kind). kind: visit (copay), preventive (covered in full),
#: other (deductible, then coinsurance)
SERVICES: dict[str, list[tuple[str, str, float, float, str]]] = {
    "family_medicine": [("99213", "Office visit, established patient, low complexity", 185, 0.2, "visit"),
                        ("99214", "Office visit, established patient, moderate complexity", 265, 0.2, "visit"),
                        ("99396", "Preventive visit, age 40-64", 340, 0.15, "preventive"),
                        ("80061", "Lipid panel", 96, 0.4, "other"), ("85025", "Complete blood count (CBC)", 54, 0.4, "other"),
                        ("36415", "Venipuncture", 22, 0.3, "other")],
    "internal_medicine": [("99214", "Office visit, established patient, moderate complexity", 275, 0.2, "visit"),
                          ("83036", "Hemoglobin A1c", 68, 0.4, "other"), ("80053", "Comprehensive metabolic panel", 118, 0.4, "other"),
                          ("93000", "Electrocardiogram (ECG), 12-lead", 145, 0.3, "other")],
    "pediatrics": [("99392", "Preventive visit, age 1-4", 260, 0.15, "preventive"),
                   ("99393", "Preventive visit, age 5-11", 270, 0.15, "preventive"),
                   ("99213", "Office visit, established patient, low complexity", 175, 0.2, "visit"),
                   ("87880", "Rapid strep test", 42, 0.3, "other"), ("90460", "Immunization administration", 38, 0.2, "preventive")],
    "dermatology": [("99203", "Office visit, new patient", 310, 0.2, "visit"), ("11102", "Tangential skin biopsy", 285, 0.3, "other"),
                    ("88305", "Surgical pathology, tissue exam", 190, 0.3, "other"),
                    ("17110", "Destruction of benign lesions (warts)", 215, 0.3, "other")],
    "cardiology": [("99204", "Office visit, new patient, moderate complexity", 420, 0.2, "visit"),
                   ("93306", "Echocardiogram, complete", 1850, 0.35, "other"),
                   ("93015", "Cardiovascular stress test", 1240, 0.3, "other")],
    "orthopedics": [("99204", "Office visit, new patient, moderate complexity", 395, 0.2, "visit"),
                    ("73721", "MRI of knee without contrast", 2650, 0.4, "other"),
                    ("29881", "Knee arthroscopy with meniscectomy", 9800, 0.35, "other"),
                    ("20610", "Joint injection, major joint", 340, 0.3, "other")],
    "physical_therapy": [("97110", "Therapeutic exercise, each 15 minutes", 95, 0.2, "other"),
                         ("97140", "Manual therapy, each 15 minutes", 88, 0.2, "other"),
                         ("97161", "Physical therapy evaluation", 240, 0.2, "other")],
    "obgyn": [("99395", "Preventive visit, age 18-39", 320, 0.15, "preventive"), ("88175", "Cervical cytology (Pap)", 120, 0.3, "other"),
              ("76830", "Transvaginal ultrasound", 540, 0.3, "other")],
    "psychiatry": [("90837", "Psychotherapy, 60 minutes", 210, 0.15, "visit"), ("90792", "Psychiatric evaluation", 430, 0.2, "visit")],
    "emergency": [("99284", "Emergency department visit, high severity", 1650, 0.35, "other"),
                  ("71046", "Chest X-ray, 2 views", 210, 0.3, "other"), ("12002", "Repair of wound, 2.6-7.5 cm", 780, 0.3, "other")],
}
DENIALS = ["Prior authorization was not obtained for this service.",
           "The service is not covered under your plan (cosmetic procedure).",
           "Duplicate of a claim already processed.",
           "The provider is out of network and the service was not an emergency.",
           "Missing information: the provider did not send the diagnosis code."]
#: panel -> [(test, unit, reference low, reference high, typical value, spread, decimals)]
PANELS: dict[str, list[tuple[str, str, float, float, float, float, int]]] = {
    "Lipid panel": [("Total cholesterol", "mg/dL", 100, 199, 196, 28, 0), ("LDL cholesterol", "mg/dL", 0, 99, 118, 26, 0),
                    ("HDL cholesterol", "mg/dL", 40, 100, 52, 11, 0), ("Triglycerides", "mg/dL", 0, 149, 138, 45, 0)],
    "Comprehensive metabolic panel": [("Glucose", "mg/dL", 70, 99, 97, 12, 0), ("Creatinine", "mg/dL", 0.6, 1.3, 0.95, 0.18, 2),
                                      ("Sodium", "mmol/L", 135, 145, 139, 2.5, 0), ("Potassium", "mmol/L", 3.5, 5.1, 4.3, 0.4, 1),
                                      ("ALT", "U/L", 7, 56, 31, 14, 0), ("Calcium", "mg/dL", 8.6, 10.3, 9.4, 0.4, 1)],
    "Complete blood count": [("White blood cells", "10^3/uL", 4.0, 11.0, 6.8, 1.8, 1), ("Hemoglobin", "g/dL", 12.0, 17.5, 14.1, 1.3, 1),
                             ("Platelets", "10^3/uL", 150, 400, 255, 55, 0)],
    "Hemoglobin A1c": [("Hemoglobin A1c", "%", 4.0, 5.6, 5.9, 0.6, 1)],
    "Thyroid panel": [("TSH", "mIU/L", 0.4, 4.0, 2.6, 1.4, 2), ("Free T4", "ng/dL", 0.8, 1.8, 1.2, 0.2, 2)],
}
#: who has which panels: member index -> panels
MEMBER_PANELS = {0: ["Lipid panel", "Comprehensive metabolic panel", "Hemoglobin A1c", "Complete blood count"],
                 1: ["Thyroid panel", "Complete blood count", "Lipid panel"], 2: ["Complete blood count"], 3: []}
DOCUMENTS = ["Itemized bill - urgent care.pdf", "Receipt - physical therapy.pdf", "Pharmacy receipt.jpg",
             "Referral letter - dermatology.pdf", "Vaccination record.pdf", "Eye exam receipt.pdf",
             "School sports physical form.pdf", "Ambulance invoice.pdf", "Dental x-ray report.pdf"]
PLAN_YEAR = 2026


def _person(rng: random.Random, locale: str) -> tuple[str, str]:
    given, family, lang = LOCALES[locale]
    return f"{rng.choice(given)} {rng.choice(family)}", lang


def _cents(rng: random.Random, median: float, sigma: float) -> int:
    """A billed amount: log-normal around `median` dollars, ending in whole dollars or .00/.50 as bills do."""
    value = median * math.exp(rng.gauss(0, sigma))
    return int(round(value)) * 100 + rng.choice([0, 0, 0, 50])


def _phone(rng: random.Random, area: str = "916") -> str:
    return f"({area}) {rng.randint(200, 989)}-{rng.randint(1000, 9999)}"


def seed_health(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    today = now.date()
    surname, sub, spouse, kids = rng.choice(FAMILIES)
    city = rng.choice(CITIES)
    plan_id = f"JH{rng.randint(10_000_000, 99_999_999)}"
    db.execute("INSERT INTO plan (id, name, group_no, group_name, year_start, deductible_cents, family_deductible_cents, "
               "oop_max_cents, family_oop_max_cents, oon_deductible_cents, coinsurance_pct, oon_coinsurance_pct, rx_bin, rx_pcn, "
               "rx_group) VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
               ("Juniper Gold PPO 1500", f"G{rng.randint(100000, 999999)}", rng.choice(["Westlake Logistics", "Sierra Unified School District",
                                                                                        "Bright Path Software", "Capitol Credit Union"]),
                f"{PLAN_YEAR}-01-01", 150000, 300000, 500000, 1000000, 300000, 20, 40, "610279", "JHRX", "JUNIPER1"))
    benefits = [("Primary care visit", 2500, 0, 40), ("Specialist visit", 5000, 0, 40), ("Telehealth (video) visit", 1000, 0, 40),
                ("Preventive care", 0, 0, 40), ("Urgent care", 7500, 0, 40), ("Emergency room", 35000, 20, 20),
                ("Lab tests", 0, 20, 40), ("Imaging (MRI, CT)", 0, 20, 40), ("Physical therapy", 4000, 0, 40),
                ("Mental health visit", 2500, 0, 40), ("Generic drugs (30 days)", 1000, 0, 50), ("Brand drugs (30 days)", 4500, 0, 50)]
    for name, copay, coins, oon in benefits:
        db.execute("INSERT INTO benefits (service, copay_cents, coinsurance_pct, oon_coinsurance_pct) VALUES (?,?,?,?)",
                   (name, copay, coins, oon))
    births = [dt.date(1979 + rng.randint(0, 8), rng.randint(1, 12), rng.randint(1, 28)),
              dt.date(1981 + rng.randint(0, 8), rng.randint(1, 12), rng.randint(1, 28)),
              dt.date(2012 + rng.randint(0, 3), rng.randint(1, 12), rng.randint(1, 28)),
              dt.date(2016 + rng.randint(0, 3), rng.randint(1, 12), rng.randint(1, 28))]
    for i, (given, relation) in enumerate([(sub, "self"), (spouse, "spouse"), (kids[0], "child"), (kids[1], "child")]):
        db.execute("INSERT INTO members (id, name, relation, birth_date, member_no) VALUES (?,?,?,?,?)",
                   (i + 1, f"{given} {surname}", relation, births[i].isoformat(), f"{plan_id}-{i + 1:02d}"))
    street = f"{rng.randint(100, 9899)} {rng.choice(STREETS)}"
    ec_given = rng.choice(["Grace", "Robert", "Helen", "Samuel", "Teresa"])
    db.execute("INSERT INTO profile (id, address, city, state, zip, phone, email, preferred_contact, ec_name, ec_relation, "
               "ec_phone) VALUES (1,?,?,?,?,?,?,?,?,?,?)",
               (street, city, "CA", f"95{rng.randint(600, 899)}", _phone(rng),
                f"{sub.lower()}.{surname.lower().replace('í', 'i')}@mailbox.example", "email",
                f"{ec_given} {surname}", "parent", _phone(rng, "530")))
    for name, address, kind in PHARMACIES:
        db.execute("INSERT INTO pharmacies (name, address, kind, phone) VALUES (?,?,?,?)", (name, address, kind, _phone(rng)))

    # providers, with names from many locales, and their open slots
    used_names: set[str] = set()
    locales = list(LOCALES)
    for slug, (_label, count, creds, video_p) in SPECIALTIES.items():
        for _ in range(count):
            locale = rng.choice(locales)
            name, lang = _person(rng, locale)
            while name in used_names:
                name, lang = _person(rng, rng.choice(locales))
            used_names.add(name)
            langs = ["English"] + ([lang] if lang and rng.random() < 0.75 else [])
            if rng.random() < 0.15:
                langs.append(rng.choice(["Spanish", "Mandarin", "Tagalog", "Vietnamese"]))
            langs = list(dict.fromkeys(langs))
            db.execute("INSERT INTO providers (name, credential, specialty, practice, address, city, network, languages, video, "
                       "accepting, gender) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       (name, rng.choice(creds), slug, rng.choice(PRACTICES),
                        f"{rng.randint(100, 4999)} {rng.choice(STREETS)}", rng.choice(CITIES),
                        "in" if rng.random() < 0.78 else "out", ", ".join(langs), int(rng.random() < video_p),
                        int(rng.random() < 0.85), rng.choice(["female", "male"])))
    providers = db.all("SELECT * FROM providers ORDER BY id")
    by_spec: dict[str, list[dict[str, Any]]] = {}
    for p in providers:
        by_spec.setdefault(p["specialty"], []).append(p)
    # make sure each task-worthy kind exists: dermatology in and out of network, with video
    derm = by_spec["dermatology"]
    for p, net in zip(derm[:4], ("in", "in", "out", "in")):
        db.execute("UPDATE providers SET network = ?, video = 1, accepting = 1 WHERE id = ?", (net, p["id"]))
    db.execute("UPDATE providers SET network = 'in', accepting = 1 WHERE id = ?", (by_spec["pediatrics"][0]["id"],))
    providers = db.all("SELECT * FROM providers ORDER BY id")
    taken_times: dict[str, set[str]] = {}
    days = [today + dt.timedelta(days=d) for d in range(1, 26) if (today + dt.timedelta(days=d)).weekday() < 5]
    for p in providers:
        if not p["accepting"]:
            continue
        times = taken_times.setdefault(p["specialty"], set())
        for _ in range(rng.randint(4, 11)):
            day = rng.choice(days[rng.randint(0, 4):])
            at = f"{day.isoformat()} {rng.randint(8, 16):02d}:{rng.choice(['00', '15', '30', '45'])}"
            if at in times:  # one specialty's slots never share a start: "the earliest" is one slot
                continue
            times.add(at)
            kind = "video" if p["video"] and rng.random() < 0.5 else "in_person"
            db.execute("INSERT INTO slots (provider_id, starts_at, visit_type, status) VALUES (?,?,?, 'open')", (p["id"], at, kind))

    # appointments: past visits, upcoming ones for everybody, and two siblings seen back to back
    reasons = ["Annual physical", "Follow-up", "Skin check", "Medication review", "Knee pain", "Sore throat", "Rash",
               "Blood pressure check", "Well-child visit", "Allergy follow-up", "Back pain", "Headaches"]
    care: dict[int, list[int]] = {1: [], 2: [], 3: [], 4: []}
    spec_of_member = {1: ["family_medicine", "internal_medicine", "cardiology", "dermatology", "orthopedics", "physical_therapy"],
                      2: ["family_medicine", "obgyn", "endocrinology", "dermatology", "psychiatry"],
                      3: ["pediatrics", "allergy", "orthopedics", "ent"], 4: ["pediatrics", "dermatology", "ophthalmology"]}
    for mid, specs in spec_of_member.items():
        for spec in specs:
            ins = [p for p in by_spec[spec] if p["id"] not in care[mid]]
            care[mid].append(rng.choice(ins)["id"])

    def add_appt(mid: int, pid: int, at: str, kind: str, reason: str, status: str, slot: int | None) -> None:
        aid = db.insert("INSERT INTO appointments (member_id, provider_id, slot_id, starts_at, visit_type, reason, status, "
                        "cancel_reason, created_at) VALUES (?,?,?,?,?,?,?, '', ?)",
                        (mid, pid, slot, at, kind, reason, status, (dt.datetime.fromisoformat(at) - dt.timedelta(days=rng.randint(5, 40))
                                                                   ).strftime("%Y-%m-%d %H:%M")))
        db.execute("INSERT INTO appointment_log (appointment_id, action, slot_id, starts_at, logged_at) VALUES (?, 'book', ?, ?, ?)",
                   (aid, slot, at, (dt.datetime.fromisoformat(at) - dt.timedelta(days=20)).strftime("%Y-%m-%d %H:%M")))

    for mid, pids in care.items():
        for pid in pids:
            for _ in range(rng.randint(1, 2)):
                day = today - dt.timedelta(days=rng.randint(15, 400))
                at = f"{day.isoformat()} {rng.randint(8, 16):02d}:{rng.choice(['00', '30'])}"
                add_appt(mid, pid, at, "in_person", rng.choice(reasons), "completed", None)

    def take_slot(pid: int, kind: str | None = None, after: str = "") -> dict[str, Any] | None:
        q = "SELECT * FROM slots WHERE provider_id = ? AND status = 'open' AND starts_at > ?"
        args: list[Any] = [pid, after]
        if kind:
            q += " AND visit_type = ?"
            args.append(kind)
        slot = db.one(q + " ORDER BY starts_at LIMIT 1", args)
        if slot is not None:
            db.execute("UPDATE slots SET status = 'booked' WHERE id = ?", (slot["id"],))
        return slot

    upcoming = [(1, care[1][0], "Follow-up"), (1, care[1][3], "Skin check"), (2, care[2][0], "Annual physical"),
                (2, care[2][2], "Medication review"), (3, care[3][1], "Allergy follow-up"), (4, care[4][2], "Eye exam")]
    for mid, pid, reason in upcoming:
        slot = take_slot(pid)
        if slot is not None:
            add_appt(mid, pid, slot["starts_at"], slot["visit_type"], reason, "scheduled", slot["id"])
    ped = care[3][0]
    if care[4][0] != ped:
        db.execute("UPDATE appointments SET provider_id = ? WHERE member_id = 4 AND provider_id = ?", (ped, care[4][0]))
        care[4][0] = ped
    db.execute("UPDATE providers SET accepting = 1, network = 'in' WHERE id = ?", (ped,))
    day = days[rng.randint(3, 8)]
    for mid, hh in ((3, "15:30"), (4, "16:00")):  # the siblings' check-ups, back to back
        at = f"{day.isoformat()} {hh}"
        if db.one("SELECT id FROM slots WHERE provider_id = ? AND starts_at = ?", (ped, at)) is None:
            sid = db.insert("INSERT INTO slots (provider_id, starts_at, visit_type, status) VALUES (?,?, 'in_person', 'booked')", (ped, at))
        else:
            sid = db.scalar("SELECT id FROM slots WHERE provider_id = ? AND starts_at = ?", (ped, at))
            db.execute("UPDATE slots SET status = 'booked', visit_type = 'in_person' WHERE id = ?", (sid,))
        add_appt(mid, ped, at, "in_person", "Well-child visit", "scheduled", sid)
    past_cancel = db.one("SELECT id FROM appointments WHERE status = 'completed' ORDER BY starts_at DESC LIMIT 1")
    if past_cancel is not None:
        db.execute("UPDATE appointments SET status = 'cancelled', cancel_reason = 'Schedule conflict' WHERE id = ?", (past_cancel["id"],))

    # prescriptions
    pharmacies = [r["id"] for r in db.all("SELECT id FROM pharmacies ORDER BY id")]
    prescriber = {0: care[1][0], 1: care[2][0], 2: care[3][0], 3: care[4][0]}
    zero_left = rng.sample([i for i in range(len(DRUGS)) if DRUGS[i][0] != "Amoxicillin"], 2)
    for i, (drug, strength, form, directions, qty, who) in enumerate(DRUGS):
        if drug == "Amoxicillin":
            refills, status = 0, "completed"
        else:
            refills = 0 if i in zero_left else rng.choice([1, 2, 3, 3, 5, 11])
            status = "active"
        filled = today - dt.timedelta(days=rng.randint(3, 70))
        db.execute("INSERT INTO prescriptions (member_id, drug, strength, form, directions, quantity, refills_left, pharmacy_id, "
                   "prescriber_id, last_filled, status) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   (who + 1, drug, strength, form, directions, qty, refills, rng.choice(pharmacies[:4]) if qty < 90 else pharmacies[4],
                    prescriber[who], filled.isoformat(), status))

    # claims, adjudicated in service-date order against each member's and the family's accumulators
    encounters: list[tuple[dt.date, int, str, int, str]] = []  # (date, member, specialty key, provider, network)
    spec_keys = {"family_medicine": 8, "internal_medicine": 4, "pediatrics": 6, "dermatology": 4, "cardiology": 2,
                 "orthopedics": 3, "physical_therapy": 5, "obgyn": 2, "psychiatry": 3, "emergency": 2}
    members_for = {"family_medicine": [1, 2], "internal_medicine": [1], "pediatrics": [3, 4], "dermatology": [1, 2, 4],
                   "cardiology": [1], "orthopedics": [1, 3], "physical_therapy": [1, 3], "obgyn": [2], "psychiatry": [2],
                   "emergency": [1, 2, 3, 4]}
    for spec, n in spec_keys.items():
        for _ in range(n):
            mid = rng.choice(members_for[spec])
            if spec == "emergency":
                pid = rng.choice(by_spec["family_medicine"])["id"]
            else:
                mine = [p for p in care[mid] if db.scalar("SELECT specialty FROM providers WHERE id = ?", (p,)) == spec]
                pid = mine[0] if mine and rng.random() < 0.8 else rng.choice(by_spec[spec])["id"]
            net = str(db.scalar("SELECT network FROM providers WHERE id = ?", (pid,)))
            # about a third in this plan year (so far), the rest over last year
            day = today - dt.timedelta(days=rng.randint(6, 58) if rng.random() < 0.36 else rng.randint(62, 420))
            encounters.append((day, mid, spec, pid, net))
    encounters.sort()
    denied_at = set(rng.sample(range(len(encounters) - 6), 5))
    pending_from = len(encounters) - 3
    acc: dict[tuple[int, int, str], dict[str, int]] = {}
    for n, (day, mid, spec, pid, net) in enumerate(encounters):
        ind = acc.setdefault((day.year, mid, net), {"ded": 0, "oop": 0})  # each network has its own accumulators
        fam = acc.setdefault((day.year, 0, net), {"ded": 0, "oop": 0})
        received = day + dt.timedelta(days=rng.randint(2, 12))
        status = "pending" if n >= pending_from else ("denied" if n in denied_at else "paid")
        if status != "pending" and received >= today:
            received = today - dt.timedelta(days=1)
        claim_no = f"JH-{received:%y}-{rng.randint(100000, 999999)}"
        menu = SERVICES[spec]
        lines = [menu[0]] + rng.sample(menu[1:], k=min(len(menu) - 1, rng.choice([0, 1, 1, 2]))) if len(menu) > 1 else [menu[0]]
        cid = db.insert("INSERT INTO claims (claim_no, member_id, provider_id, provider_name, service_date, received_date, status, "
                        "network, denial_reason, source, description, submitted_at) VALUES (?,?,?, '',?,?,?,?,?, 'provider', '', ?)",
                        (claim_no, mid, pid, day.isoformat(), received.isoformat(), status, net,
                         rng.choice(DENIALS) if status == "denied" else "", f"{received.isoformat()} 08:00"))
        for code, desc, median, sigma, kind in lines:
            billed = _cents(rng, median, sigma)
            allowed = deductible = copay = coins = paid = 0
            if status == "paid":
                allowed = int(billed * (rng.uniform(0.42, 0.68) if net == "in" else rng.uniform(0.3, 0.45)))
                rest = allowed
                if kind == "preventive" and net == "in":
                    pass
                elif kind == "visit":
                    copay = min(rest, 5000 if spec not in ("family_medicine", "pediatrics", "internal_medicine", "psychiatry") else 2500)
                    rest -= copay
                else:
                    ded, fam_ded = (150000, 300000) if net == "in" else (300000, 600000)
                    deductible = max(0, min(rest, ded - ind["ded"], fam_ded - fam["ded"]))
                    rest -= deductible
                    coins = rest * (20 if net == "in" else 40) // 100
                member = deductible + copay + coins
                oop, fam_oop = (500000, 1000000) if net == "in" else (1000000, 2000000)
                room = max(0, min(oop - ind["oop"], fam_oop - fam["oop"]))
                if member > room:  # the out-of-pocket maximum: the plan pays the rest
                    coins -= member - room
                    member = room
                ind["ded"] += deductible
                fam["ded"] += deductible
                ind["oop"] += member
                fam["oop"] += member
                paid = allowed - member
            owes = (deductible + copay + coins) if status == "paid" else (billed if status == "denied" else 0)
            db.execute("INSERT INTO claim_lines (claim_id, code, description, billed_cents, allowed_cents, deductible_cents, "
                       "copay_cents, coinsurance_cents, plan_paid_cents, member_owes_cents) VALUES (?,?,?,?,?,?,?,?,?,?)",
                       (cid, code, desc, billed, allowed, deductible, copay, coins, paid, owes))

    # documents on file (to attach to a claim or a message)
    for i, name in enumerate(rng.sample(DOCUMENTS, 6)):
        ext = name.rsplit(".", 1)[1]
        db.execute("INSERT INTO documents (name, content_type, size_bytes, uploaded_at, source) VALUES (?,?,?,?, 'upload')",
                   (name, "application/pdf" if ext == "pdf" else "image/jpeg", rng.randint(48_000, 2_400_000),
                    f"{(today - dt.timedelta(days=3 + 11 * i)).isoformat()} {rng.randint(8, 21):02d}:{rng.randint(0, 59):02d}"))

    # lab results
    for idx, panels in MEMBER_PANELS.items():
        for panel in panels:
            for k in range(rng.randint(1, 3)):
                day = today - dt.timedelta(days=rng.randint(20, 120) + 150 * k)
                orderer = care[idx + 1][0]
                for test, unit, lo, hi, typical, spread, dec in PANELS[panel]:
                    value = round(max(lo * 0.5 if lo else typical * 0.3, rng.gauss(typical, spread)), dec)
                    flag = "H" if value > hi else ("L" if value < lo else "")
                    db.execute("INSERT INTO labs (member_id, panel, test, value, unit, ref_low, ref_high, flag, collected_on, "
                               "ordered_by) VALUES (?,?,?,?,?,?,?,?,?,?)",
                               (idx + 1, panel, test, value, unit, lo, hi, flag, day.isoformat(), orderer))

    # message threads with the care team
    topics = [("Question about my lab results", "Hi, I saw my lipid panel results online. Is the LDL something we should talk about?",
               "Thanks for reaching out. Your LDL is a little above goal; let's review diet and recheck in 3 months."),
              ("Refill for my inhaler", "My son's inhaler is almost empty before our trip. Could you send a refill?",
               "Sent to the pharmacy on file. Please let us know if it isn't ready by tomorrow."),
              ("Rash after new medication", "I started the new prescription on Monday and have a mild rash on my arms.",
               "Please stop the medication and send a photo of the rash through this message."),
              ("Physical therapy exercises", "Could you resend the knee exercise sheet? I lost the printout.",
               "Attached is the sheet again. Three sets of ten, twice a day."),
              ("School form", "Our daughter needs her sports physical form signed for school.",
               "The form is signed and ready to download from your documents."),
              ("Blood pressure readings", "My home readings have been around 138/88 this week.",
               "Thanks for tracking. Keep logging and bring the readings to your follow-up.")]
    for i, (subject, first, reply) in enumerate(rng.sample(topics, 5)):
        mid = [1, 3, 1, 1, 4, 1][i]
        pid = care[mid][0]
        started = now - dt.timedelta(days=rng.randint(4, 90), hours=rng.randint(0, 8))
        tid = db.insert("INSERT INTO threads (subject, member_id, provider_id, started_at) VALUES (?,?,?,?)",
                        (subject, mid, pid, started.strftime("%Y-%m-%d %H:%M")))
        db.execute("INSERT INTO messages (thread_id, from_member, body, sent_at, document_id) VALUES (?, 1, ?, ?, NULL)",
                   (tid, first, started.strftime("%Y-%m-%d %H:%M")))
        db.execute("INSERT INTO messages (thread_id, from_member, body, sent_at, document_id) VALUES (?, 0, ?, ?, NULL)",
                   (tid, reply, (started + dt.timedelta(hours=rng.randint(3, 30))).strftime("%Y-%m-%d %H:%M")))
