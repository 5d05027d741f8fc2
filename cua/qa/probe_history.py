"""Judge QA's `history` probes: end states a judge blind to history would get wrong.

The state probes (`cua.qa.probes`) each build one wrong end state. A history probe ends
in the oracle's own end state, but gets there by a detour, written into the app's activity
log (`cua.tasks.apps.activity`) as the app writes it for a page:

- do, then undo: each must-fail probe's change (over-reach, wrong target, collateral,
  duplicate), made and then put back; the duplicate of a record an irreversible operation
  made (a second message sent, a second order placed) is thus sent and then erased;
- a slip, corrected: the `partial` probe's wrong value on a field the oracle wrote, then
  the right value again.

What the judge must say follows from the detour alone: it must FAIL where the detour made a
change the task does not allow (`expected_changes`, `incidental_changes`, a record named
as it is at the start or the end) or erased an irreversible operation's record, and must
PASS otherwise (an agent may fix its own typo, or rearrange a cart the task lets it change
as it likes: the end state decides).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cua.judges.sidefx import diff, unexpected_history
from cua.qa.probes import DbImage, Probe, ProbeMirror
from cua.state import StateQuery, StateResult
from cua.task import Verdict

__all__ = ["HistoryProbe", "history_probes"]

#: The must-fail probe kinds made and then undone (one probe of each kind is enough: the
#: judge reads every logged change the same way).
UNDONE = ("over_reach", "wrong_target", "collateral", "duplicate")
#: The slip an agent may correct: a wrong value on the task's own field, then the right one.
CORRECTED = ("partial",)


@dataclass(frozen=True)
class HistoryProbe:
    #: "undone" or "corrected" (how the detour was made).
    kind: str
    description: str
    probe: Probe


def history_probes(probes: Sequence[Probe]) -> tuple[list[HistoryProbe], dict[str, str]]:
    """The history probes built from one template's state probes, and why none could be."""
    out: list[HistoryProbe] = []
    for kind in UNDONE:
        first = next((p for p in probes if p.kind == kind), None)
        if first is not None:
            out.append(HistoryProbe("undone", f"{kind} made, then undone ({first.description})", first))
    for kind in CORRECTED:
        first = next((p for p in probes if p.kind == kind), None)
        if first is not None:
            out.append(HistoryProbe("corrected", f"a wrong value corrected ({first.description})", first))
    why = {} if out else {"history": "no state probe to make and undo (the oracle changes no app record)"}
    return out, why


def judge_history_probe(mirror: ProbeMirror, final_db: DbImage, probe: HistoryProbe, allowed: list[str], initial: Any,
                        queries: Sequence[StateQuery], fallback: dict[str, StateResult],
                        evaluate: Callable[[dict[str, StateResult]], Verdict]) -> tuple[bool, bool, Verdict] | str:
    """(whether the judge got it right, whether it must pass, its verdict), or why the probe
    could not be made (the schema refuses its writes). `allowed`: the template's allowed
    change patterns; `initial`: the app's state when the episode started. The mirror is left
    holding the oracle's end state and its log as loaded."""
    app: Any = mirror.app
    mirror.load(final_db)
    at_end = app.state()
    try:
        mirror.load(final_db, probe.probe.writes)
    except Exception as exc:  # sqlite3.Error: the schema refuses the probe's rows
        mirror.load(final_db)
        return f"the schema refuses it ({type(exc).__name__}: {exc})"
    detour = app.state()
    there, back = list(diff(at_end, detour)), list(diff(detour, at_end))
    erases = any(app.irreversible(c) for c in there) and any(c.kind == "removed" for c in back)
    must_pass = not erases and not unexpected_history(there + back, allowed, (initial, at_end))
    mirror.load(final_db)
    app.activity.append(f"history probe: {probe.probe.kind}", at_end, detour)
    app.activity.append("history probe: back", detour, at_end)
    verdict = evaluate(mirror.answer(queries, fallback))
    mirror.load(final_db)
    return verdict.passed == must_pass, must_pass, verdict
