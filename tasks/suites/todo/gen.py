"""Parameter generators for todo templates whose parameters need a computation over the
seeded data (not expressible as one row pick)."""

from __future__ import annotations

import random
from typing import Any

from cua.tasks.params import GenerationError


def extreme_list(app: Any, rng: random.Random) -> dict[str, Any]:
    """Ask for the list with the most (or fewest) open todos, only when the answer is
    unique; the runner-up is the near miss's answer."""
    rows = app.db.all(
        "SELECT l.name, COUNT(t.id) AS n FROM lists l LEFT JOIN todos t ON t.list_id = l.id AND t.done = 0 "
        "GROUP BY l.id ORDER BY n DESC, l.id")
    orders = [("most", rows), ("fewest", list(reversed(rows)))]
    rng.shuffle(orders)
    for word, ranked in orders:
        if len(ranked) >= 2 and ranked[0]["n"] != ranked[1]["n"]:
            return {"which": word, "answer": ranked[0]["name"], "count": ranked[0]["n"],
                    "runner_up": ranked[1]["name"]}
    raise GenerationError("no list has a unique most or fewest open todos at this seed")
