"""Seeded data for the bank: one customer's checking, savings and credit card over six
months, with amounts that fit their categories (groceries in tens, rent in hundreds, a
monthly salary), a long tail of merchants, payees from several countries with valid IBANs,
cards, scheduled payments and support messages. Every amount is integer cents; running
balances are computed here, in posting order, as the app computes them for new postings."""

from __future__ import annotations

import datetime as dt
import random
import string
from typing import Any

from cua.tasks.apps.base import AppDB

#: category -> (merchants, min cents, max cents, visits per month on the card or checking)
SPEND: dict[str, tuple[list[str], int, int, float]] = {
    "groceries": (["Lidl", "Aldi Süd", "Carrefour Market", "Albert Heijn", "Rewe", "Monoprix", "Edeka", "Mercadona",
                   "Spar", "Jumbo"], 1150, 14890, 13),
    "dining": (["Pizzeria Da Marco", "Sushi Kan", "Le Petit Bistro", "Burger Lab", "Taverna Nikos", "Curry House",
                "Brasserie Lumière", "Pho Saigon"], 1480, 9650, 5),
    "coffee": (["Bean There Café", "Espresso Bar 21", "Kaffeehaus Wien", "Starbucks"], 290, 780, 14),
    "transport": (["City Metro", "Shell", "TotalEnergies", "Uber", "Deutsche Bahn", "SNCF"], 250, 8900, 6),
    "shopping": (["Zara", "IKEA", "MediaMarkt", "Decathlon", "H&M", "Fnac", "Amazon", "Bol.com"], 990, 24900, 4),
    "health": (["Apotheke am Markt", "Pharmacie Centrale", "Dr. Lind Dental"], 450, 18500, 1),
    "entertainment": (["Cinema Paradiso", "Spotify", "Netflix", "Steam", "Concertgebouw"], 899, 6500, 2),
    "travel": (["Lufthansa", "Booking.com", "Airbnb", "Ryanair", "KLM"], 4900, 61000, 0.4),
}
CATEGORIES = ("income", "rent", "utilities", "groceries", "dining", "coffee", "transport", "shopping", "health",
              "entertainment", "travel", "subscriptions", "transfers", "fees", "other")
CARD_CATS = ("dining", "shopping", "entertainment", "travel", "coffee")
START = dt.date(2025, 9, 1)

#: (name, country, bank) of payees from several locales
PAYEES: list[tuple[str, str, str]] = [
    ("Greenfield Property Management", "DE", "Commerzbank"), ("Marie Dubois", "FR", "BNP Paribas"),
    ("Javier Moreno", "ES", "Banco Santander"), ("Stadtwerke Nord", "DE", "Sparkasse"),
    ("Anouk de Vries", "NL", "ING"), ("Luca Bianchi", "IT", "UniCredit"), ("Oliver Hughes", "GB", "Barclays"),
    ("Fitness Club Athletica", "NL", "ABN AMRO"), ("Sofia Lindqvist", "SE", "SEB"), ("Kenji Watanabe", "DE", "N26"),
    ("Piotr Kowalski", "PL", "PKO Bank Polski"), ("Helena Costa", "PT", "Millennium bcp"),
]
IBAN_LEN = {"DE": 22, "FR": 27, "ES": 24, "NL": 18, "IT": 27, "GB": 22, "SE": 24, "PL": 28, "PT": 25}


def iban_check_ok(iban: str) -> bool:
    """ISO 13616 mod-97: the IBAN's check digits agree with the rest of it."""
    s = iban[4:] + iban[:4]
    digits = "".join(str(int(ch, 36)) for ch in s)
    return int(digits) % 97 == 1


def make_iban(rng: random.Random, country: str) -> str:
    body_len = IBAN_LEN[country] - 4
    if country in ("NL", "GB"):
        body = "".join(rng.choice(string.ascii_uppercase) for _ in range(4)) + "".join(
            rng.choice(string.digits) for _ in range(body_len - 4))
    else:
        body = "".join(rng.choice(string.digits) for _ in range(body_len))
    digits = "".join(str(int(ch, 36)) for ch in body + country + "00")
    check = 98 - int(digits) % 97
    return f"{country}{check:02d}{body}"


def _days(rng: random.Random, month_start: dt.date, n: float, until: dt.date) -> list[dt.date]:
    count = int(n) + (1 if rng.random() < n - int(n) else 0)
    nxt = (month_start.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    span = (min(nxt, until + dt.timedelta(days=1)) - month_start).days
    return sorted(month_start + dt.timedelta(days=rng.randrange(span)) for _ in range(count)) if span > 0 else []


def _months(until: dt.date) -> list[dt.date]:
    out, m = [], START
    while m <= until:
        out.append(m)
        m = (m.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return out


def seed_bank(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    today = now.date()
    db.execute("INSERT INTO profile (id, name, email, password, two_factor, password_changed_at, daily_limit_cents) "
               "VALUES (1, 'Alex Morgan', 'alex.morgan@example.com', 'harbour-Light-42', 0, '2025-06-14 10:12', ?)",
               (rng.choice([250000, 300000, 500000]),))
    accounts = [("Everyday Checking", "checking", make_iban(rng, "DE"), 0),
                ("Rainy Day Savings", "savings", make_iban(rng, "DE"), 0),
                ("Platinum Credit Card", "credit", "", rng.choice([300000, 500000, 800000]))]
    for i, (name, kind, iban, limit) in enumerate(accounts, 1):
        db.execute("INSERT INTO accounts (id, name, kind, iban, balance_cents, credit_limit_cents) VALUES (?,?,?,?,0,?)",
                   (i, name, kind, iban, limit))
    lines: dict[int, list[tuple[dt.date, str, str, int, str]]] = {1: [], 2: [], 3: []}
    rent = rng.randrange(95000, 185000, 500)
    salary = rng.randrange(420000, 640000, 100)
    employer = rng.choice(["Northwind GmbH", "Atelier Lumen SARL", "Kestrel Logistics BV", "Bluefin Software AG"])
    opening = {1: rng.randrange(350000, 700000), 2: rng.randrange(800000, 2500000), 3: 0}
    for month in _months(today):
        pay_day = month.replace(day=25)
        if pay_day <= today:
            lines[1].append((pay_day, f"Salary {employer}", "income", salary, "salary"))
        lines[1].append((month, "Greenfield Property Management rent", "rent", -rent, "direct_debit"))
        for merchant, lo, hi in (("Stadtwerke Nord electricity", 6500, 14500), ("Telekom mobile & internet", 3999, 6999)):
            day = month.replace(day=rng.randrange(3, 12))
            if day <= today:
                lines[1].append((day, merchant, "utilities", -rng.randrange(lo, hi), "direct_debit"))
        for merchant, amount in (("Netflix", 1399), ("Spotify", 1099), ("Fitness Club Athletica", 3490)):
            day = month.replace(day=rng.randrange(2, 20))
            if day <= today:
                acct = 3 if merchant != "Fitness Club Athletica" else 1
                lines[acct].append((day, merchant, "subscriptions", -amount, "card"))
        save_day = month.replace(day=26)
        if save_day <= today:
            amt = rng.randrange(20000, 60000, 5000)
            lines[1].append((save_day, "Transfer to Rainy Day Savings", "transfers", -amt, "transfer"))
            lines[2].append((save_day, "Transfer from Everyday Checking", "transfers", amt, "transfer"))
        interest_day = month.replace(day=1)
        if month != START:
            lines[2].append((interest_day, "Interest", "income", rng.randrange(900, 3400), "interest"))
        for cat, (merchants, lo, hi, per_month) in SPEND.items():
            weights = [1.0 / (k + 1) for k in range(len(merchants))]  # a long tail: a few favourite shops
            for day in _days(rng, month, per_month, today):
                merchant = rng.choices(merchants, weights)[0]
                # amounts skew low within the range, with an occasional big one
                amount = lo + int((hi - lo) * rng.random() ** 2.2)
                acct = 3 if cat in CARD_CATS and rng.random() < 0.7 else 1
                lines[acct].append((day, merchant, cat, -amount, "card"))
        pay_card = month.replace(day=15)
        if month != START and pay_card <= today:
            lines[1].append((pay_card, "Credit card payment", "transfers", 0, "card_payment"))  # filled below
    for acct in (1, 2, 3):
        lines[acct].sort(key=lambda x: x[0])
    # the card is paid off monthly from checking: the previous month's spending
    card_spent: dict[str, int] = {}
    for day, _, _, amount, _ in lines[3]:
        card_spent[day.strftime("%Y-%m")] = card_spent.get(day.strftime("%Y-%m"), 0) - amount
    fixed: list[tuple[dt.date, str, str, int, str]] = []
    for day, desc, cat, amount, kind in lines[1]:
        if kind == "card_payment":
            prev = (day.replace(day=1) - dt.timedelta(days=1)).strftime("%Y-%m")
            amount = -card_spent.get(prev, 0)
            lines[3].append((day, "Payment received, thank you", "transfers", -amount, "card_payment"))
        fixed.append((day, desc, cat, amount, kind))
    lines[1] = fixed
    lines[3].sort(key=lambda x: x[0])
    ref = 0
    for acct in (1, 2, 3):
        balance = opening[acct]
        for k, (day, desc, cat, amount, kind) in enumerate(lines[acct]):
            balance += amount
            ref += 1
            hour = 7 + (k * 7) % 14
            db.execute("INSERT INTO transactions (account_id, posted_at, description, category, amount_cents, balance_cents, "
                       "kind, reference) VALUES (?,?,?,?,?,?,?,?)",
                       (acct, f"{day.isoformat()} {hour:02d}:{(k * 13) % 60:02d}", desc, cat, amount, balance, kind,
                        f"TX{acct}{ref:06d}"))
        db.execute("UPDATE accounts SET balance_cents = ? WHERE id = ?", (balance, acct))
    payees = rng.sample(PAYEES, 8)
    if not any(p[0] == "Greenfield Property Management" for p in payees):
        payees[0] = PAYEES[0]
    for name, country, bank in payees:
        db.execute("INSERT INTO payees (name, iban, bank, created_at) VALUES (?,?,?,?)",
                   (name, make_iban(rng, country), bank, f"2025-{rng.randrange(1, 9):02d}-{rng.randrange(1, 28):02d} 12:00"))
    landlord = db.scalar("SELECT id FROM payees WHERE name = 'Greenfield Property Management'")
    others = [r["id"] for r in db.all("SELECT id FROM payees WHERE id != ? ORDER BY id", (landlord,))]
    db.execute("INSERT INTO scheduled (from_account_id, payee_id, amount_cents, reference, frequency, next_date, status, created_at) "
               "VALUES (1, ?, ?, 'Rent', 'monthly', '2026-04-01', 'active', '2025-08-20 18:00')", (landlord, rent))
    pick = rng.sample(others, 2)
    db.execute("INSERT INTO scheduled (from_account_id, payee_id, amount_cents, reference, frequency, next_date, status, created_at) "
               "VALUES (1, ?, ?, ?, 'monthly', ?, 'active', '2025-10-02 09:30')",
               (pick[0], rng.randrange(2000, 15000, 500), rng.choice(["Pocket money", "Shared flat costs", "Lessons"]),
                f"2026-03-{rng.randrange(10, 28):02d}"))
    db.execute("INSERT INTO scheduled (from_account_id, payee_id, amount_cents, reference, frequency, next_date, status, created_at) "
               "VALUES (1, ?, ?, ?, 'weekly', ?, 'active', '2025-12-01 08:15')",
               (pick[1], rng.randrange(1500, 6000, 500), rng.choice(["Cleaning", "Dog walking", "Childcare"]),
                f"2026-03-{rng.randrange(3, 9):02d}"))
    cards: list[tuple[Any, ...]] = [(1, "Debit card", f"{rng.randrange(1000, 9999)}", rng.choice([100000, 150000]), "2028-09"),
                                    (3, "Platinum credit card", f"{rng.randrange(1000, 9999)}", rng.choice([200000, 300000]), "2029-04")]
    for acct, name, last4, limit, exp in cards:
        db.execute("INSERT INTO cards (account_id, name, last4, daily_limit_cents, expires, frozen, online_payments, status) "
                   "VALUES (?,?,?,?,?,0,1,'active')", (acct, name, last4, limit, exp))
    for subject, body, when in (
            ("Your new card PIN", "Your PIN letter for the Platinum credit card was sent by post.", "2025-09-03 10:00"),
            ("Statement ready", "Your February statement is ready under Statements.", "2026-03-01 06:00"),
            ("Security tip", "We will never ask for your password by phone or email.", "2026-01-12 14:30")):
        db.execute("INSERT INTO messages (subject, body, sent_at, from_bank) VALUES (?,?,?,1)", (subject, body, when))
