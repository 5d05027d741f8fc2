"""Deterministic workbook of a hardware reseller's European sales office: Sales (a quarter's
deals by region, with revenue formulas and totals), Budget (the office's first-quarter
operating costs) and Grades (the evening course some of the team teaches).

Reps sell in their own region and carry its names (the DACH desk has a Jonas Becker, Iberia
a Lucía Fernández); products sell at their list price less a volume discount, laptops in
ones and twos, mice by the box; some products sell far more often than others. Budget lines
behave as costs do: rent and insurance flat, salaries nearly so, travel and marketing lumpy,
heating falling towards spring. Each student's three scores follow their own level. The
layout is fixed (the suite reads Sales A2:F41 with its total on row 43, Budget rows 2-11,
Grades rows 2-19); what fills it comes from `rng`. No fourth sheet (an inventory would fit):
a sheet the agent adds gets the next id, and sheets.build_table's judge reads only the cells
it asks for, so a seeded sheet ahead of it lets judge QA's copied-cell probe through.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from cua.tasks.apps.base import AppDB

#: region -> the reps who sell there
REGIONS: dict[str, tuple[str, ...]] = {
    "DACH": ("Jonas Becker", "Lea Hoffmann", "Matthias Krüger", "Sophie Wagner"),
    "France": ("Camille Laurent", "Julien Moreau", "Élodie Fabre"),
    "Iberia": ("Lucía Fernández", "Javier Ortega", "Inês Carvalho"),
    "Nordics": ("Erik Lindqvist", "Sanna Virtanen", "Mikkel Sørensen"),
    "UK & Ireland": ("Siobhan Murphy", "Oliver Bennett", "Priya Patel"),
    "Benelux": ("Daan de Vries", "Lotte Peeters"),
    "Italy": ("Giulia Romano", "Marco Bianchi"),
    "CEE": ("Katarzyna Nowak", "Tomáš Dvořák"),
}


@dataclass(frozen=True)
class Product:
    name: str
    list_price: int  # euros
    units: tuple[int, int]  # a deal's usual size, smallest and largest
    popularity: int


PRODUCTS = [
    Product("Laptop 14-inch", 1249, (1, 18), 9), Product("Laptop 16-inch", 1899, (1, 8), 4),
    Product("27-inch 4K monitor", 429, (2, 30), 8), Product("24-inch monitor", 189, (2, 45), 7),
    Product("USB-C dock", 229, (2, 35), 7), Product("Wireless keyboard", 79, (5, 80), 6),
    Product("Ergonomic mouse", 59, (5, 120), 6), Product("Noise-cancelling headset", 219, (3, 50), 5),
    Product("4K webcam", 149, (2, 40), 4), Product("Conference speakerphone", 329, (1, 12), 2),
    Product("11-inch tablet", 599, (1, 20), 3), Product("Laptop sleeve", 35, (10, 150), 3),
]

#: budget line -> (a typical month in euros, how it moves: flat, steady, lumpy or seasonal)
BUDGET_LINES: list[tuple[str, int, str]] = [
    ("Salaries", 68400, "steady"), ("Rent", 8500, "flat"), ("Software subscriptions", 2380, "steady"),
    ("Hardware", 3100, "lumpy"), ("Travel", 4200, "lumpy"), ("Marketing", 6500, "lumpy"), ("Training", 1400, "lumpy"),
    ("Heating and power", 1150, "seasonal"), ("Insurance", 1120, "flat"), ("Legal fees", 1800, "lumpy"),
    ("Accounting", 1650, "flat"), ("Cleaning", 640, "flat"), ("Phone and internet", 415, "steady"),
    ("Office supplies", 380, "lumpy"), ("Team events", 900, "lumpy"), ("Recruiting", 3600, "lumpy"),
]

STUDENTS = [
    "Emma Johnson", "Liam O'Brien", "Chloé Martin", "Lukas Schneider", "Aiko Tanaka", "Mateo García", "Aarav Sharma",
    "Olivia Brown", "Noah Williams", "Zoë Müller", "Sebastián Rojas", "Amara Okafor", "Yuki Sato", "Freya Nilsson",
    "Ines Dubois", "Ravi Menon", "Hannah Kowalski", "Oskar Lindgren", "Fatima Al-Sayed", "Lucas Moreira",
    "Mia Rossi", "Ethan Chen", "Anya Petrova", "Jakub Novák", "Sara Haddad", "Tomás Fernández", "Leila Haidari",
    "Finn Murphy", "Isabelle Lefèvre", "Daniel Kim",
]


def _last_name(full: str) -> str:
    return full.split(" ", 1)[1]


def _sales_rows(rng: random.Random) -> list[tuple[str, str, str, int, int]]:
    """40 deals (region, rep, product, units, unit price), grouped by region and rep as an
    export from the CRM lists them; one product at least sells 4-10 times (the suite asks to
    reprice such a product)."""
    while True:
        regions = rng.sample(sorted(REGIONS), rng.randint(4, 6))
        region_weight = {r: rng.uniform(0.5, 2.5) for r in regions}
        catalogue = rng.sample(PRODUCTS, rng.randint(8, 10))
        rows = []
        for _ in range(40):
            region = rng.choices(regions, weights=[region_weight[r] for r in regions])[0]
            rep = rng.choice(REGIONS[region][:max(1, len(REGIONS[region]) - rng.randint(0, 1))])
            product = rng.choices(catalogue, weights=[p.popularity for p in catalogue])[0]
            lo, hi = product.units
            units = 0
            while not lo <= units <= hi:
                units = round(rng.lognormvariate(0, 0.7) * (lo * hi) ** 0.5)
            discount = 0 if units < 5 else 5 if units < 15 else 10 if units < 40 else 15
            price = round(product.list_price * (100 - discount) / 100 * rng.uniform(0.97, 1.0))
            rows.append((region, rep, product.name, units, price))
        counts = Counter(r[2] for r in rows)
        if any(4 <= n <= 10 for n in counts.values()):
            return sorted(rows, key=lambda r: (r[0], _last_name(r[1])))


def _month(rng: random.Random, typical: int, kind: str, month: int) -> int:
    if kind == "flat":
        return typical
    if kind == "steady":
        return round(typical * rng.uniform(0.97, 1.04))
    if kind == "seasonal":  # winter heating, falling into spring
        return round(typical * (1.25, 1.05, 0.85)[month] * rng.uniform(0.95, 1.05))
    return round(typical * rng.lognormvariate(0, 0.55) / 10) * 10


def _grades(rng: random.Random) -> list[tuple[str, list[int]]]:
    """18 students (by last name) with homework, midterm and final; at least one exam has a
    single best score (the suite asks who has it)."""
    while True:
        students = sorted(rng.sample(STUDENTS, 18), key=_last_name)
        rows = []
        for student in students:
            level = rng.gauss(74, 10)
            scores = [level + 8 + rng.gauss(0, 6), level + rng.gauss(0, 8), level - 2 + rng.gauss(0, 9)]
            rows.append((student, [max(31, min(100, round(s))) for s in scores]))
        if any(sum(1 for _, s in rows if s[e] == max(x[e] for _, x in rows)) == 1 for e in range(3)):
            return rows


def seed_workbook(db: AppDB, rng: random.Random) -> None:
    def sheet(name: str, position: int) -> Callable[[int, int, object], None]:
        sid = db.insert("INSERT INTO sheets (name, position) VALUES (?, ?)", (name, position))

        def put(row: int, col: int, raw: object) -> None:
            db.execute("INSERT INTO cells (sheet_id, row, col, raw) VALUES (?, ?, ?, ?)", (sid, row, col, str(raw)))

        return put

    put = sheet("Sales", 1)
    for c, h in enumerate(["Region", "Rep", "Product", "Units", "Unit price", "Revenue"], 1):
        put(1, c, h)
    rows = _sales_rows(rng)
    n = len(rows)
    for r, (region, rep, product, units, price) in enumerate(rows, 2):
        put(r, 1, region)
        put(r, 2, rep)
        put(r, 3, product)
        put(r, 4, units)
        put(r, 5, price)
        put(r, 6, f"=D{r}*E{r}")
    put(n + 3, 3, "Total")
    put(n + 3, 4, f"=SUM(D2:D{n + 1})")
    put(n + 3, 6, f"=SUM(F2:F{n + 1})")
    put(n + 4, 3, "Average")
    put(n + 4, 4, f"=ROUND(AVERAGE(D2:D{n + 1}),2)")
    put(n + 4, 6, f"=ROUND(AVERAGE(F2:F{n + 1}),2)")

    put = sheet("Budget", 2)
    for c, h in enumerate(["Category", "Jan", "Feb", "Mar", "Q1 total", "Max month"], 1):
        put(1, c, h)
    lines = sorted(rng.sample(range(len(BUDGET_LINES)), 10))  # in the office's own order: payroll and rent first
    for i, line in enumerate(lines, 2):
        cat, typical, kind = BUDGET_LINES[line]
        typical = round(typical * rng.uniform(0.8, 1.25) / 10) * 10
        put(i, 1, cat)
        for month, c in enumerate((2, 3, 4)):
            put(i, c, max(40, _month(rng, typical, kind, month)))
        put(i, 5, f"=SUM(B{i}:D{i})")
        put(i, 6, f"=MAX(B{i}:D{i})")
    last = len(lines) + 1
    put(last + 1, 1, "Total")
    for c, letter in ((2, "B"), (3, "C"), (4, "D"), (5, "E")):
        put(last + 1, c, f"=SUM({letter}2:{letter}{last})")

    put = sheet("Grades", 3)
    for c, h in enumerate(["Student", "Homework", "Midterm", "Final", "Average", "Lowest"], 1):
        put(1, c, h)
    for i, (student, scores) in enumerate(_grades(rng), 2):
        put(i, 1, student)
        for c, score in zip((2, 3, 4), scores):
            put(i, c, score)
        put(i, 5, f"=ROUND(AVERAGE(B{i}:D{i}),1)")
        put(i, 6, f"=MIN(B{i}:D{i})")
    put(21, 1, "Class average")
    put(21, 5, "=ROUND(AVERAGE(E2:E19),1)")

