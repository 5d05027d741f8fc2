"""Seeded parameters the Roundcube suite's SQL params cannot give: each function is a
template's `generator`, called with the in-process Roundcube at the task's seed and the
template's rng."""

from __future__ import annotations

import random
import re
from typing import Any

from cua.tasks.products.roundcube import Roundcube

__all__ = ["invoice_amount"]

_AMOUNT = re.compile(r"for ([0-9][0-9,]*\.[0-9]{2}) EUR")
_NUMBER = re.compile(r"^Invoice (INV-[0-9]+) from ")


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
