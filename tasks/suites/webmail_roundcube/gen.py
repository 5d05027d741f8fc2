"""Seeded parameters the Roundcube suite's SQL params cannot give: each function is a
template's `generator`, called with the in-process Roundcube at the task's seed and the
template's rng."""

from __future__ import annotations

import random
import re
from typing import Any

from cua.tasks.products.roundcube import Roundcube

__all__ = ["invoice_amount", "invoice_due_date"]

_AMOUNT = re.compile(r"for ([0-9][0-9,]*\.[0-9]{2}) EUR")
_NUMBER = re.compile(r"^Invoice (INV-[0-9]+) from ")
_DUE = re.compile(r"due on ([0-9]{4}-[0-9]{2}-[0-9]{2})\.")


def invoice_amount(app: Roundcube, rng: random.Random) -> dict[str, Any]:
    """An invoice in Ben's mailbox (its number once in the whole store), the amount its
    email states, and another invoice's amount (the near miss)."""
    rows = app.db.all("SELECT user, folder, subject, body FROM messages WHERE subject LIKE 'Invoice INV-%' ORDER BY id")
    numbers: dict[str, int] = {}
    amounts: dict[str, str] = {}
    for r in rows:
        number, amount = _NUMBER.search(str(r["subject"])), _AMOUNT.search(str(r["body"]))
        if number is None or amount is None:
            continue
        numbers[number.group(1)] = numbers.get(number.group(1), 0) + 1
        amounts[number.group(1)] = amount.group(1).replace(",", "")
    mine = sorted({_NUMBER.search(str(r["subject"])).group(1)  # type: ignore[union-attr]
                   for r in rows if r["user"] == "ben.okafor@harborview.test" and r["folder"] != "Trash"
                   and _NUMBER.search(str(r["subject"])) is not None})
    choices = [n for n in mine if numbers.get(n) == 1 and n in amounts]
    chosen = rng.choice(choices)
    others = sorted(set(amounts.values()) - {amounts[chosen]})
    return {"number": chosen, "amount": amounts[chosen], "wrong": rng.choice(others)}


def invoice_due_date(app: Roundcube, rng: random.Random) -> dict[str, Any]:
    """An invoice in Ben's mailbox outside Trash (its number once in the whole store), the
    due date its email states, and another invoice's due date (the near miss)."""
    dues: dict[str, list[str]] = {}
    mine: set[str] = set()
    for r in app.db.all("SELECT user, folder, subject, body FROM messages WHERE subject LIKE 'Invoice INV-%' ORDER BY id"):
        number, due = _NUMBER.search(str(r["subject"])), _DUE.search(str(r["body"]))
        if number is None or due is None:
            continue
        dues.setdefault(number.group(1), []).append(due.group(1))
        if r["user"] == "ben.okafor@harborview.test" and r["folder"] != "Trash":
            mine.add(number.group(1))
    chosen = rng.choice(sorted(n for n in mine if len(dues[n]) == 1))
    others = sorted({d for n, ds in dues.items() for d in ds} - {dues[chosen][0]})
    return {"number": chosen, "due": dues[chosen][0], "wrong": rng.choice(others)}
