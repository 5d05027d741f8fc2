"""Judge QA's `page` probes: state probes replayed in the real browser, so that checks
which read the page (its DOM, URL, title) are attacked too.

The state probes (`cua.qa.probes`) are judged in process, on a copy of the app: the
page is not re-rendered for them, so a check of the page keeps the oracle's value and a
judge that reads only the page is never attacked. Here, after the oracle's episode, in
the live sandbox that still shows its end:

1. the oracle's own end database is written back into the live app (the app contract's
   restore, `cua.sandbox.ServiceImages`) and the page reloaded (a snapshot of the sandbox
   restored: its URL, form state and scroll); every query of the judge is read again and
   the verdict must still PASS: the replay itself is faithful;
2. for up to `MAX_PAGE_PROBES` must-fail state probes (over-reach, wrong target,
   collateral, partial, duplicate; then the schema's edits of the targets' parents), the
   probe's database is written and the page reloaded the same way; the verdict must FAIL.
   A probe that changes nothing any check's query reads is not counted;
3. the sandbox's snapshot of the oracle's end is restored, so what runs next (the forged
   signals, the near miss) never sees a probe.

Only templates whose checks read the page run these; the others are judged in full by
the in-process probes, and the report says so.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from cua.episode import gather_state
from cua.judges.judge import StateJudge
from cua.qa import probes as P
from cua.qa.judge_qa import ProbeOutcome, _app, _reads
from cua.qa.probe_schema import FastMirror, foreign_keys, schema_mutations
from cua.sandbox import ServiceImages, Snapshottable
from cua.state import StateQuery, StateResult
from cua.task import JudgeInput, TaskInstance, Verdict, query_key

__all__ = ["KIND", "MAX_PAGE_PROBES", "PAGE_GETTERS", "page_probes", "reads_page"]

KIND = "page"
#: Must-fail probes replayed per variant (each a database write, a page load, a read: ~0.3 s).
MAX_PAGE_PROBES = 3
#: Candidates tried to find them (a probe the page and the app do not show is not counted).
MAX_TRIES = 8
#: Getter kinds that read the page the browser shows.
PAGE_GETTERS = {"dom", "url", "title"}
#: The state probes replayed, in this order of preference (one of each kind first).
KINDS = ("wrong_target", "partial", "collateral", "over_reach", "duplicate")


def reads_page(instance: TaskInstance) -> bool:
    """Whether a check that decides the verdict (not a subgoal) reads the page."""
    spec = getattr(instance.judge, "spec", None)
    if spec is None:
        return False
    return _reads(spec.model_dump(mode="json")["checks"], PAGE_GETTERS, False)


def _verdict_queries(instance: TaskInstance) -> list[StateQuery]:
    """The queries the verdict reads: the judge's own, less those only its subgoals read
    (progress, never the verdict)."""
    judge = instance.judge
    if isinstance(judge, StateJudge):
        return StateJudge(judge.spec.model_copy(update={"subgoals": []}), side_effects=judge.side_effects,
                          feasible=judge.feasible).queries()
    out: list[StateQuery] = judge.queries()
    return out


def _same(a: dict[str, StateResult], b: dict[str, StateResult], keys: Sequence[str]) -> bool:
    def dump(r: StateResult | None) -> str:
        return json.dumps(r.model_dump(mode="json") if r is not None else None, sort_keys=True, default=str)
    return all(dump(a.get(k)) == dump(b.get(k)) for k in keys)


def _candidates(instance: TaskInstance, app_name: str, initial_db: P.DbImage, final_db: P.DbImage
                ) -> tuple[bytes, list[tuple[P.Probe, bytes]]]:
    """The oracle's end database as bytes, and (probe, its database as bytes) for the
    probes whose edit the app's state shows, in the order they are tried. Built at once,
    with no await: the in-process app is shared by concurrent checks."""
    app, infos = _app(app_name)
    mirror = P.ProbeMirror(app, infos)
    spec = getattr(instance.judge, "spec", None)
    free = list(getattr(spec, "free_fields", []) or [])
    diff_db = P.DbDiff.between(initial_db, final_db)
    made, _ = P.generate_probes(infos, initial_db, final_db, diff_db, seed=instance.seed, free=free)
    by_kind = [[p for p in made if p.kind == k] for k in KINDS]
    ordered = [group[i] for i in range(max((len(g) for g in by_kind), default=0)) for group in by_kind if i < len(group)]
    parents, _ = schema_mutations(infos, final_db, diff_db, foreign_keys(app.db.conn, infos), seed=instance.seed,
                                  free=free)
    ordered += parents
    fast = FastMirror(mirror, final_db)
    fast.load()
    oracle_image: bytes = app.db.snapshot()
    at_end = json.dumps(app.state(), sort_keys=True, default=str)
    out: list[tuple[P.Probe, bytes]] = []
    for probe in ordered:
        if len(out) >= MAX_TRIES:
            break
        try:
            fast.load(probe.writes)
            shown = json.dumps(app.state(), sort_keys=True, default=str)
        except (sqlite3.Error, LookupError, TypeError, ValueError):  # the schema or the app's state refuses it
            continue
        if shown != at_end:
            out.append((probe, app.db.snapshot()))
    fast.load()
    return oracle_image, out


async def _replay(handle: Any, image: bytes, queries: Sequence[StateQuery], service: str) -> dict[str, StateResult]:
    """`image` written into the live app, the page reloaded, every query read again."""
    await handle.put_service_image(service, image)
    ref = await handle.snapshot()  # the page as it is (URL, form state, scroll), over the new data
    try:
        await handle.restore(ref)
    finally:
        await handle.delete_snapshot(ref)
    return await gather_state(handle, queries)


async def page_probes(handle: Any, instance: TaskInstance, app_name: str, initial_db: P.DbImage,
                      final_db: P.DbImage, judge_input: JudgeInput, service: str = "app") -> ProbeOutcome:
    """Replay state probes in the live sandbox, which shows the oracle's end (see the
    module's docstring); the sandbox is left showing the oracle's end again."""
    outcome = ProbeOutcome()
    if not reads_page(instance):
        outcome.skipped[KIND] = "no check reads the page (dom, url, title): the in-process probes judge it all"
        return outcome
    if instance.sandbox_kind != "browser":
        outcome.skipped[KIND] = f"a {instance.sandbox_kind} sandbox: no browser page to reload"
        return outcome
    if not isinstance(handle, ServiceImages) or not isinstance(handle, Snapshottable):
        outcome.skipped[KIND] = "the sandbox cannot replace its app's database and reload its page"
        return outcome
    oracle_image, candidates = _candidates(instance, app_name, initial_db, final_db)
    queries = instance.judge.queries()
    keys = [query_key(q) for q in _verdict_queries(instance)]

    def judge(final: dict[str, StateResult]) -> Verdict:
        verdict: Verdict = instance.judge.evaluate(judge_input.model_copy(update={"final": final}))
        return verdict

    start = await handle.snapshot()
    try:
        replayed = await _replay(handle, oracle_image, queries, service)
        outcome.ran[KIND] = 1
        verdict = judge(replayed)
        if not verdict.passed:
            outcome.wrong.append((f"probe:{KIND}", "the oracle's own end state, written back and its page reloaded, "
                                                   "fails: the replay is not faithful, or the judge reads what a "
                                                   "reload of the same data changes", verdict))
            return outcome
        skipped = ""
        for probe, image in candidates:
            if outcome.ran[KIND] > MAX_PAGE_PROBES:
                break
            final = await _replay(handle, image, queries, service)
            if _same(final, replayed, keys):
                skipped = skipped or f"invisible to every query the verdict reads ({probe.description})"
                continue
            outcome.ran[KIND] += 1
            verdict = judge(final)
            if verdict.passed:
                outcome.wrong.append((f"probe:{KIND}", f"passes with the page reloaded on it: {probe.kind}: "
                                                       f"{probe.description}", verdict))
        if outcome.ran[KIND] == 1:
            outcome.skipped[f"{KIND} (must fail)"] = skipped or "no state probe the app's state shows"
    finally:
        await handle.restore(start)
        await handle.delete_snapshot(start)
    return outcome
