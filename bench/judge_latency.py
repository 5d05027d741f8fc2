"""Judge latency: p50 of `evaluate()` on the state of a realistic app task.

For every bundled app suite's templates (the todo app has 240 todos in 6 lists), the
judge's queries are answered in process from the real app (its `/__cua/state` JSON and
read-only SQL) right after reset and after plausible agent edits, then the judge is
timed on that gathered state, side-effect diff and history included: each edit is written
to the app's activity log as a page request's would be (`EDITS` of them, half of them
undone again), so the judge reads an episode's history too. Goal: p50 <= 5 ms.

    python bench/judge_latency.py [--suite todo] [--seeds 3] [--repeat 200]

Last line: `judge_p50_ms=<x>`.
"""

from __future__ import annotations

import argparse
import sqlite3
import time
from typing import Any

from _latency import p50, spread  # bench/ is this script's folder

from cua.state import AppStateQuery, SqlQuery, StateQuery, StateResult
from cua.task import JudgeInput, query_key
from cua.tasks.apps import app_names
from cua.tasks.params import seeded_app
from cua.tasks.registry import list_templates


def answer(app: Any, query: StateQuery) -> StateResult:
    if isinstance(query, AppStateQuery):
        return StateResult(value=app.state())
    if isinstance(query, SqlQuery):
        return StateResult(value=app.db.read_only_query(query.query, list(query.params)))
    return StateResult.failure("unsupported", "no page in this benchmark")


def gather(app: Any, queries: list[StateQuery]) -> dict[str, StateResult]:
    return {query_key(q): answer(app, q) for q in queries}


#: Page requests that write in one benchmarked episode (every second one undoes the one before).
EDITS = 6


def edit(app: Any, offset: int, suffix: str) -> None:
    """A plausible agent edit so the diff has work: change one row of the first table,
    logged in the app's activity log as the page request that made it would be."""
    table = app.db.tables()[0]
    row = app.db.one(f'SELECT rowid AS r, * FROM "{table}" ORDER BY rowid LIMIT 1 OFFSET ?', (offset,))
    if row is None:
        return
    app.activity.begin()
    for column, value in row.items():
        if column not in ("r", "id") and isinstance(value, str):
            new = value[: -len(" (edited)")] if value.endswith(" (edited)") else value + suffix
            try:
                app.db.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (new, row["r"]))
                break
            except sqlite3.IntegrityError:  # a key or CHECK column: edit another one
                continue
    app.activity.end(f"POST /bench/edit/{offset}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", action="append", help="suites to time (default: every bundled app's suite)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    suites = args.suite or [name for name in app_names()]
    samples: list[float] = []
    for suite in suites:
        try:
            templates = list_templates(suite=suite)
        except KeyError:
            continue
        suite_samples: list[float] = []
        for template in templates:
            app_name = template.spec.sandbox.app
            if not app_name:
                continue
            for seed in range(args.seeds):
                try:
                    instance = template.instantiate(seed)
                except Exception as exc:  # a broken template is `cua tasks check`'s business
                    print(f"skip {template.id} seed {seed}: {exc}")
                    continue
                queries = instance.judge.queries()
                with seeded_app(app_name, instance.reset_seed) as app:
                    initial = gather(app, queries)
                    for i in range(EDITS):
                        edit(app, 3 + i // 2, " (edited)")  # the second edit of a row undoes the first
                    edit(app, 3, " (edited)")
                    final = gather(app, queries)
                data = JudgeInput(initial=initial, final=final, done=None, steps=10)
                instance.judge.evaluate(data)  # warm-up
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    instance.judge.evaluate(data)
                    suite_samples.append((time.perf_counter() - started) * 1000)
        if suite_samples:
            print(f"{suite}: templates={len(templates)} {spread(suite_samples, 3)}")
            samples += suite_samples
    print(f"judge_p50_ms={p50(samples):.3f}")


if __name__ == "__main__":
    main()
