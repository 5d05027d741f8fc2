"""The state judge: a `cua.task.Judge` built from a `JudgeSpec`.

It names its queries up front (`queries()`); the runner reads them after reset and at
the end; `evaluate()` then decides from those values and the agent's `done` alone, in a
few milliseconds, and deterministically: the same input always gives the same verdict.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cua.judges import spec as S
from cua.judges.comparators import compare, expected_of
from cua.judges.files import file_violations
from cua.judges.getters import Getter, GetterError, build_getter
from cua.judges.sidefx import Change, change_from_json, unexpected_changes, unexpected_history
from cua.state import AppStateQuery, FileQuery, FilesQuery, SqlQuery, StateQuery, StateResult
from cua.task import Evidence, JudgeInput, Verdict, query_key

__all__ = ["StateJudge"]

MAX_VIOLATIONS = 20


@dataclass
class _Leaf:
    name: str
    getter: Getter
    expect: Any


@dataclass
class _Node:
    kind: str  # all | any | not | weighted | check
    children: list[Any]
    weights: list[float]
    threshold: float = 1.0
    leaf: _Leaf | None = None


def _compile(node: Any) -> _Node:
    if isinstance(node, S.CheckNode):
        return _Node("check", [], [], leaf=_Leaf(node.check, build_getter(node.get), node.expect))
    if isinstance(node, S.AllNode):
        return _Node("all", [_compile(n) for n in node.all], [])
    if isinstance(node, S.AnyNode):
        return _Node("any", [_compile(n) for n in node.any], [])
    if isinstance(node, S.NotNode):
        return _Node("not", [_compile(node.not_)], [])
    if isinstance(node, S.WeightedNode):
        return _Node("weighted", [_compile(i.node) for i in node.weighted], [i.weight for i in node.weighted],
                     threshold=node.threshold)
    raise TypeError(f"not a judge node: {type(node).__name__}")


class StateJudge:
    """Checks that must all hold, an optional side-effect diff, and the done-status rule:
    a feasible task fails if the agent declares it infeasible; an infeasible one passes
    only on `done(status="infeasible")`."""

    def __init__(self, spec: S.JudgeSpec, *, side_effects: bool = False, feasible: bool = True) -> None:
        self.spec = spec
        self.side_effects = side_effects
        self.feasible = feasible
        self._root = _Node("all", [_compile(n) for n in spec.checks], [])
        self._subgoals = _Node("all", [_compile(n) for n in spec.subgoals], [])
        self._state_query = AppStateQuery(service=spec.service)
        self._state_key = query_key(self._state_query)
        self._queries: list[StateQuery] = []
        seen: set[str] = set()
        for leaf in self._leaves(self._root) + self._leaves(self._subgoals):
            if leaf.getter.query is not None and leaf.getter.key not in seen:
                seen.add(leaf.getter.key)
                self._queries.append(leaf.getter.query)
        if side_effects and self._state_key not in seen:
            self._queries.append(self._state_query)
        #: The app's activity log (`cua.tasks.apps.activity`): the episode's history of writes.
        self._history_query = SqlQuery(service=spec.service, query=HISTORY_SQL)
        self._history_key = query_key(self._history_query)
        if side_effects:
            self._queries.append(self._history_query)
        #: A workflow's other apps, each diffed from reset to the end as this judge diffs its own.
        self._others = [StateJudge(sub, side_effects=True) for sub in spec.apps.values()] if side_effects else []
        for other in self._others:
            self._queries += [q for q in other.queries() if query_key(q) not in {query_key(o) for o in self._queries}]
        #: A file task (one that reads a file, or names the files it may change): the home
        #: folder's manifest after reset and at the end shows every other file it touched.
        leaves = self._leaves(self._root) + self._leaves(self._subgoals)
        self.files_judged = spec.expected_files is not None or any(
            isinstance(leaf.getter.query, FileQuery) for leaf in leaves)
        self._files_query = FilesQuery()
        self._files_key = query_key(self._files_query)
        if self.files_judged and self._files_key not in seen:
            self._queries.append(self._files_query)

    def _leaves(self, node: _Node) -> list[_Leaf]:
        if node.leaf is not None:
            return [node.leaf]
        return [leaf for child in node.children for leaf in self._leaves(child)]

    def queries(self) -> list[StateQuery]:
        return list(self._queries)

    def evaluate(self, data: JudgeInput) -> Verdict:
        started = time.perf_counter()
        evidence: list[Evidence] = []
        # The root decides: a failed leaf under `any`, `not` or a `weighted` node above
        # its threshold need not fail the task.
        score, passed = self._eval(self._root, data, evidence)
        # Progress counts what the agent achieved in the state: never how it ended.
        counted = [e for e in evidence if e.getter != "done_status"]
        milestones: list[Evidence] = []
        reached = 0
        in_order = 0  # checkpoints met in order, from the first
        for i, node in enumerate(self._subgoals.children, start=1):
            found: list[Evidence] = []
            if self._eval(node, data, found)[1]:
                reached = i  # subgoals are in order: reaching one counts those before it
                in_order += int(in_order == i - 1)
            milestones += [e.model_copy(update={"check": f"subgoal {i}: {e.check}"}) for e in found]
        leaves_met = sum(1 for e in counted if e.passed) + reached
        leaves = len(counted) + len(self._subgoals.children)
        status = data.done.status if data.done is not None else None
        if self.feasible:
            if status == "infeasible":
                evidence.append(Evidence(check="the agent did not give up on a feasible task", getter="done_status",
                                         observed=status, expected="success", passed=False))
                passed, score = False, 0.0
        else:
            ok = status == "infeasible"
            evidence.append(Evidence(check="the agent declared the task infeasible", getter="done_status",
                                     observed=status, expected="infeasible", passed=ok))
            leaves, leaves_met = leaves + 1, leaves_met + int(ok)
            if not ok:
                passed, score = False, 0.0
        violations = self._violations(data) if self.side_effects else []
        if violations:
            evidence.append(Evidence(check="no unexpected side effects", getter=f"app_state[{self.spec.service}] diff",
                                     observed=violations[:MAX_VIOLATIONS], expected=list(self.spec.expected_changes),
                                     passed=False))
            passed, score = False, 0.0
        for other in self._others:
            found_there = other._violations(data)
            if found_there:
                evidence.append(Evidence(check=f"no unexpected side effects in {other.spec.service}",
                                         getter=f"app_state[{other.spec.service}] diff",
                                         observed=found_there[:MAX_VIOLATIONS],
                                         expected=list(other.spec.expected_changes), passed=False))
                violations = violations + [f"{other.spec.service}: {v}" for v in found_there[:MAX_VIOLATIONS]]
                passed, score = False, 0.0
        if self.files_judged:
            touched = self._file_violations(data)
            if touched:
                evidence.append(Evidence(check="no other file created, removed, moved or changed",
                                         getter="files ['.'] diff", observed=touched[:MAX_VIOLATIONS],
                                         expected=list(self.spec.expected_files or []), passed=False))
                violations = violations + touched[:MAX_VIOLATIONS]
                passed, score = False, 0.0
        progress = leaves_met / leaves if leaves else 0.0
        if passed and score >= 1.0 - 1e-9:
            progress = 1.0
        elif not passed:
            # short of passing is short of full progress; damage done halves what was earned
            progress = min(progress, 1.0 - 1.0 / (2 * max(1, leaves)))
            if violations:
                progress *= 0.5
        evidence += milestones
        credit = None
        if self.spec.checkpoints:
            total = len(self._subgoals.children)
            credit = (in_order if passed else min(in_order, total - 1)) / total
        return Verdict(score=max(0.0, min(1.0, score)), passed=passed, progress=progress, credit=credit,
                       evidence=evidence, violations=violations, judge_ms=(time.perf_counter() - started) * 1000)

    def _eval(self, node: _Node, data: JudgeInput, evidence: list[Evidence]) -> tuple[float, bool]:
        if node.leaf is not None:
            leaf = node.leaf
            try:
                observed = leaf.getter.extract(data)
            except GetterError as exc:
                evidence.append(Evidence(check=leaf.name, getter=leaf.getter.describe, observed=None,
                                         expected=expected_of(leaf.expect), passed=False, detail=str(exc)))
                return 0.0, False
            ok, detail = compare(leaf.expect, observed, stored=leaf.getter.stored)
            evidence.append(Evidence(check=leaf.name, getter=leaf.getter.describe, observed=_jsonable(observed),
                                     expected=expected_of(leaf.expect), passed=ok, detail=detail))
            return (1.0 if ok else 0.0), ok
        results = [self._eval(child, data, evidence) for child in node.children]
        if node.kind == "all":
            return min((r[0] for r in results), default=1.0), all(r[1] for r in results)
        if node.kind == "any":
            return max((r[0] for r in results), default=0.0), any(r[1] for r in results)
        if node.kind == "not":
            return (0.0, False) if results[0][1] else (1.0, True)
        value = sum(w * r[0] for w, r in zip(node.weights, results)) / sum(node.weights)
        return value, value + 1e-9 >= node.threshold

    def _violations(self, data: JudgeInput) -> list[str]:
        before, after = data.initial.get(self._state_key), data.final.get(self._state_key)
        if before is None or after is None:
            return [f"app state of {self.spec.service!r} was not read {'after reset' if before is None else 'at the end'}"]
        if not before.ok or not after.ok:
            bad = before if not before.ok else after
            return [f"app state of {self.spec.service!r} unreadable: {bad.error}: {bad.message or ''}"]
        allowed = [*self.spec.expected_changes, *self.spec.incidental_changes]
        found = [str(c) for c in unexpected_changes(before.value, after.value, allowed)]
        found += self._history_violations(data, allowed, set(found), (before.value, after.value))
        out = found[:MAX_VIOLATIONS]
        if len(found) > MAX_VIOLATIONS:
            out.append(f"... and {len(found) - MAX_VIOLATIONS} more")
        return out

    def _file_violations(self, data: JudgeInput) -> list[str]:
        before, after = data.initial.get(self._files_key), data.final.get(self._files_key)
        if before is None or after is None:
            return [f"the user's files were not read {'after reset' if before is None else 'at the end'}"]
        if not before.ok or not after.ok:
            bad = before if not before.ok else after
            return [f"the user's files are unreadable: {bad.error}: {bad.message or ''}"]
        return file_violations(before.value, after.value, list(self.spec.expected_files or []))

    def _history_violations(self, data: JudgeInput, allowed: list[str], seen: set[str],
                            states: tuple[Any, ...]) -> list[str]:
        """What the episode's history shows that its end state may hide: a change the task
        does not allow, made at any point (undone by the end or not), and an irreversible
        operation (a message sent, an order placed) whose record was erased afterwards.
        `seen`: what the end state's diff already reported; `states`: the app's state at the
        episode's start and end (a record a pattern names stays named through the episode)."""
        rows = _history_rows(data.final.get(self._history_key))
        if rows is None:  # an app that keeps no activity log: the end state is all there is
            return []
        start = max((int(r["seq"]) for r in _history_rows(data.initial.get(self._history_key)) or []), default=0)
        out: list[str] = []
        made: dict[str, str] = {}
        for row in rows:
            if int(row["seq"]) <= start:
                continue
            request, changes = str(row["request"]), _changes(str(row["changes"]))
            for change in changes:
                if change.kind == "removed" and change.path in made:
                    out.append(f"{change.path}: {made.pop(change.path)} then erased ({request})")
            if len(out) + len(seen) <= MAX_VIOLATIONS:  # past that, only erasures are still worth the time
                out += [f"{c} (at {request}, whatever the end state shows)"
                        for c in unexpected_history(list(changes), allowed, states) if str(c) not in seen]
            made.update({e["record"]: e["event"] for e in _events(str(row["events"]))})
        return out


#: The activity log as a judge reads it (every entry; those after the episode's start count).
HISTORY_SQL = "SELECT seq, request, events, changes FROM cua_activity ORDER BY seq"


def _history_rows(result: StateResult | None) -> list[dict[str, Any]] | None:
    """The activity log's rows, or None where the app keeps none (or it was not read)."""
    if result is None or not result.ok or not isinstance(result.value, list):
        return None
    return result.value


@lru_cache(maxsize=1024)
def _changes(text: str) -> tuple[Change, ...]:
    """An entry's changes, parsed once: the log is append-only, and every step's progress
    read hands the judge the same entries again."""
    return tuple(change_from_json(c) for c in json.loads(text))


@lru_cache(maxsize=1024)
def _events(text: str) -> tuple[dict[str, str], ...]:
    return tuple(json.loads(text))


#: Evidence keeps observed values readable in run logs: bigger containers are summarised.
MAX_EVIDENCE_ITEMS = 50
MAX_EVIDENCE_CHARS = 2000


def _jsonable(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_EVIDENCE_CHARS else value[:MAX_EVIDENCE_CHARS] + f"... ({len(value)} chars)"
    if value is None or isinstance(value, (int, float, bool)):
        return value
    if isinstance(value, (list, dict)):
        if len(value) <= MAX_EVIDENCE_ITEMS:
            return value
        text = json.dumps(value, default=str)
        kind = "list" if isinstance(value, list) else "object"
        return f"<{kind} of {len(value)}> " + text[:MAX_EVIDENCE_CHARS] + "..."
    return repr(value)
