"""Deterministic workbooks: Sales (with revenue formulas and totals), Budget, Grades."""

from __future__ import annotations

import random
from collections.abc import Callable

from cua.tasks.apps.base import AppDB

REGIONS = ["North", "South", "East", "West"]
REPS = ["Avery", "Blake", "Casey", "Devon", "Emery", "Finley", "Harper", "Jordan", "Kendall", "Logan", "Morgan", "Quinn"]
PRODUCTS = [("Laptop", 950), ("Monitor", 240), ("Keyboard", 45), ("Mouse", 25), ("Dock", 180), ("Headset", 85),
            ("Webcam", 70), ("Tablet", 420)]
CATEGORIES = ["Rent", "Salaries", "Software", "Hardware", "Travel", "Marketing", "Training", "Utilities",
              "Insurance", "Legal", "Catering", "Office supplies"]
STUDENTS = ["Ada", "Ben", "Cleo", "Dev", "Eva", "Faye", "Gus", "Hana", "Ivan", "Jade", "Kai", "Lena", "Milo", "Nia",
            "Omar", "Pia", "Rex", "Sara", "Theo", "Uma"]


def seed_workbook(db: AppDB, rng: random.Random) -> None:
    def sheet(name: str, position: int) -> Callable[[int, int, object], None]:
        sid = db.insert("INSERT INTO sheets (name, position) VALUES (?, ?)", (name, position))

        def put(row: int, col: int, raw: object) -> None:
            db.execute("INSERT INTO cells (sheet_id, row, col, raw) VALUES (?, ?, ?, ?)", (sid, row, col, str(raw)))

        return put

    put = sheet("Sales", 1)
    for c, h in enumerate(["Region", "Rep", "Product", "Units", "Unit price", "Revenue"], 1):
        put(1, c, h)
    n = 40
    for r in range(2, n + 2):
        product, price = rng.choice(PRODUCTS)
        put(r, 1, rng.choice(REGIONS))
        put(r, 2, rng.choice(REPS))
        put(r, 3, product)
        put(r, 4, rng.randint(1, 60))
        put(r, 5, round(price * rng.uniform(0.85, 1.15)))
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
    cats = rng.sample(CATEGORIES, 10)
    for i, cat in enumerate(cats, 2):
        base = rng.randint(5, 120) * 100
        put(i, 1, cat)
        for c in (2, 3, 4):
            put(i, c, base + rng.randint(-20, 20) * 50)
        put(i, 5, f"=SUM(B{i}:D{i})")
        put(i, 6, f"=MAX(B{i}:D{i})")
    last = len(cats) + 1
    put(last + 1, 1, "Total")
    for c, letter in ((2, "B"), (3, "C"), (4, "D"), (5, "E")):
        put(last + 1, c, f"=SUM({letter}2:{letter}{last})")

    put = sheet("Grades", 3)
    for c, h in enumerate(["Student", "Homework", "Midterm", "Final", "Average", "Lowest"], 1):
        put(1, c, h)
    for i, student in enumerate(rng.sample(STUDENTS, 18), 2):
        put(i, 1, student)
        for c in (2, 3, 4):
            put(i, c, rng.randint(48, 100))
        put(i, 5, f"=ROUND(AVERAGE(B{i}:D{i}),1)")
        put(i, 6, f"=MIN(B{i}:D{i})")
    put(21, 1, "Class average")
    put(21, 5, "=ROUND(AVERAGE(E2:E19),1)")
