"""Side effects: diff an app's state from reset to the end, and find the changes the
task did not allow.

Lists of objects that all carry a unique `id` are matched by id (so an insert or a
delete does not shift every later row); other lists by position. A change is one changed
scalar field, one added or removed key, or one inserted or deleted element. Each is
matched against the task's `expected_changes` patterns (see `cua.judges.paths`): a
pattern allows a change when it matches a prefix of the change's path, where a pattern's
row selectors are tested against the row as it was before and after. A pattern that
ends at a row (`todos[id=4]`) allows only adding or removing that row: a change to a
field of an existing row is allowed only by a pattern that names the field
(`todos[id=4].title`), so that damage to the target's other fields is caught. A pattern
may also name the one value its field may change to (`ChangeTo`: a message opened is
marked read, never unread): a change of that field to any other value is not allowed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from cua.judges.paths import Segment, parse_path, row_matches

__all__ = ["Change", "ChangeTo", "allowed_by", "change_from_json", "change_to_json", "diff", "row_path", "unexpected_changes",
           "unexpected_history"]


class ChangeTo(str):
    """A change pattern (the string itself: `messages[*].read`) that allows its field to
    change only to `to` (`True`): using an app moves a field one way (opening a message
    marks it read), and the other way is something the agent did. Being a `str`, it stands
    wherever a pattern does (as a key of `unjudged`, in `parse_path`)."""

    to: Any

    def __new__(cls, pattern: str, to: Any) -> ChangeTo:
        out = super().__new__(cls, pattern)
        out.to = to
        return out

    def __getnewargs__(self) -> tuple[str, Any]:  # type: ignore[override]  # pickle and copy keep the target
        return str(self), self.to

    def __repr__(self) -> str:
        return f"{str.__repr__(self)} -> {self.to!r}"


#: A parsed pattern and the value it allows its field to change to (`_ANY`: any value).
_ANY: Any = object()
_Pattern = tuple[tuple[Segment, ...], Any]


def _parsed(patterns: Sequence[str]) -> list[_Pattern]:
    return [(parse_path(p), p.to if isinstance(p, ChangeTo) else _ANY) for p in patterns]


@dataclass(frozen=True)
class Step:
    """One step of a change's path: a key, or an element of a list."""

    key: str | None = None
    #: For an element: its value before and/or after (for matching row selectors).
    rows: tuple[Any, ...] = ()
    index: int | None = None
    label: str = ""


@dataclass(frozen=True)
class Change:
    steps: tuple[Step, ...]
    kind: str  # changed | added | removed
    before: Any = None
    after: Any = None

    @property
    def path(self) -> str:
        out = ""
        for step in self.steps:
            if step.key is not None:
                out += f".{step.key}" if out else step.key
            else:
                out += step.label
        return out

    def __str__(self) -> str:
        if self.kind == "changed":
            return f"{self.path}: {_short(self.before)} -> {_short(self.after)}"
        if self.kind == "added":
            return f"{self.path}: added {_short(self.after)}"
        return f"{self.path}: removed {_short(self.before)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _id_keyed(items: list[Any]) -> dict[Any, Any] | None:
    if not items or not all(isinstance(x, dict) and "id" in x for x in items):
        return None
    keyed = {x["id"]: x for x in items}
    return keyed if len(keyed) == len(items) else None


def diff(before: Any, after: Any, steps: tuple[Step, ...] = ()) -> Iterator[Change]:
    if before == after and type(before) is type(after):
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key in after:
                yield from diff(before[key], after[key], (*steps, Step(key=key)))
            else:
                yield Change((*steps, Step(key=key)), "removed", before=before[key])
        for key in after:
            if key not in before:
                yield Change((*steps, Step(key=key)), "added", after=after[key])
        return
    if isinstance(before, list) and isinstance(after, list):
        old, new = _id_keyed(before), _id_keyed(after)
        if (old is not None or not before) and (new is not None or not after) and (old or new):
            old, new = old or {}, new or {}
            for rid, row in old.items():
                if rid in new:
                    if row != new[rid]:
                        yield from diff(row, new[rid], (*steps, Step(rows=(row, new[rid]), label=f"[id={rid}]")))
                else:
                    yield Change((*steps, Step(rows=(row,), label=f"[id={rid}]")), "removed", before=row)
            for rid, row in new.items():
                if rid not in old:
                    yield Change((*steps, Step(rows=(row,), label=f"[id={rid}]")), "added", after=row)
            return
        for i in range(max(len(before), len(after))):
            if i < len(before) and i < len(after):
                yield from diff(before[i], after[i], (*steps, Step(rows=(before[i], after[i]), index=i, label=f"[{i}]")))
            elif i < len(before):
                yield Change((*steps, Step(rows=(before[i],), index=i, label=f"[{i}]")), "removed", before=before[i])
            else:
                yield Change((*steps, Step(rows=(after[i],), index=i, label=f"[{i}]")), "added", after=after[i])
        return
    yield Change(steps, "changed", before=before, after=after)


def _allows(parsed: _Pattern, change: Change) -> bool:
    pattern, to = parsed
    steps = change.steps
    i = 0
    if not pattern:
        return False
    for seg in pattern:
        if seg.key is not None:
            if i >= len(steps) or steps[i].key is None:
                return False
            if seg.key != "*" and seg.key != steps[i].key:
                return False
            i += 1
        if seg.selectors:
            if i >= len(steps) or steps[i].key is not None:
                return False
            if not row_matches(seg.selectors, steps[i].rows, steps[i].index):
                return False
            i += 1
    # A pattern that ends at a row allows the row to be added or removed; a change
    # inside an existing row needs the field named (no collateral edits on the target).
    if pattern[-1].selectors and i < len(steps):
        return False
    # A pattern with a target allows only its field itself taking that value (True == 1:
    # SQLite keeps a flag as 0 or 1), never a change inside it, an added or removed key.
    return to is _ANY or (change.kind == "changed" and i == len(steps) and _same(change.after, to))


def _same(value: Any, to: Any) -> bool:
    numeric = (bool, int, float)
    if isinstance(value, numeric) and isinstance(to, numeric):
        return bool(value == to)
    return type(value) is type(to) and bool(value == to)


def unexpected_changes(before: Any, after: Any, expected: Sequence[str]) -> list[Change]:
    """The changes from `before` to `after` that no pattern of `expected` allows (a
    `ChangeTo` only its field's change to its value)."""
    patterns = _parsed(expected)
    return [c for c in diff(before, after) if not any(_allows(p, c) for p in patterns)]


def allowed_by(change: Change, patterns: Sequence[str]) -> bool:
    """Whether one of `patterns` allows `change` (a `ChangeTo` only its field's change to
    its value)."""
    return any(_allows(p, change) for p in _parsed(patterns))


# ---------------------------------------------------------------- history

def change_to_json(change: Change) -> dict[str, Any]:
    """A change as plain JSON, for an app's activity log; `change_from_json` reads it back
    whole (row selectors of a pattern still match the rows it carries)."""
    steps = [{"key": s.key} if s.key is not None else {"rows": list(s.rows), "index": s.index, "label": s.label}
             for s in change.steps]
    return {"steps": steps, "kind": change.kind, "before": change.before, "after": change.after}


def change_from_json(data: dict[str, Any]) -> Change:
    steps = tuple(Step(key=s["key"]) if "key" in s else
                  Step(rows=tuple(s.get("rows") or ()), index=s.get("index"), label=str(s.get("label", "")))
                  for s in data["steps"])
    return Change(steps, str(data["kind"]), before=data.get("before"), after=data.get("after"))


def row_path(change: Change) -> str:
    """The path of the record a change is in (`messages[id=12]` for `messages[id=12].folder`)."""
    last = max((i for i, step in enumerate(change.steps) if step.key is None), default=len(change.steps) - 1)
    return Change(change.steps[: last + 1], change.kind).path


class _Endpoints:
    """The records of the episode's first and last state by id, per list, indexed once per
    judging: each history change is looked up in them (`with_endpoints`)."""

    def __init__(self, states: tuple[Any, ...]) -> None:
        self.states = states
        self._by_id: dict[int, dict[Any, Any]] = {}

    def _row(self, rows: Any, rid: Any) -> Any:
        if not isinstance(rows, list):
            return None
        index = self._by_id.get(id(rows))
        if index is None:
            index = self._by_id[id(rows)] = {r["id"]: r for r in rows if isinstance(r, dict) and "id" in r}
        return index.get(rid)

    def with_endpoints(self, change: Change) -> Change:
        """`change` with each record it passes through also as it is in the first and last
        state: a record the task names (`deals[contact_id=132]`) stays named while an
        intermediate write moves it through other values."""
        nodes = list(self.states)
        steps: list[Step] = []
        for step in change.steps:
            if step.key is not None:
                nodes = [n.get(step.key) if isinstance(n, dict) else None for n in nodes]
                steps.append(step)
                continue
            rid = next((r["id"] for r in step.rows if isinstance(r, dict) and "id" in r), None)
            found = [self._row(n, rid) if rid is not None else None for n in nodes]
            steps.append(Step(rows=(*step.rows, *(r for r in found if r is not None)), index=step.index,
                              label=step.label))
            nodes = found
        return Change(tuple(steps), change.kind, change.before, change.after)

    def creation(self, change: Change) -> Change | None:
        """The adding of the record `change` happens inside, when that record is not in the
        episode's first state: filling in a record the episode created is part of creating it."""
        nodes: list[Any] = [self.states[0]] if self.states else []
        for i, step in enumerate(change.steps):
            if step.key is not None:
                nodes = [n.get(step.key) if isinstance(n, dict) else None for n in nodes]
                continue
            rid = next((r["id"] for r in step.rows if isinstance(r, dict) and "id" in r), None)
            if rid is None or not nodes:
                return None
            first = self._row(nodes[0], rid)
            if first is None:
                widened = self.with_endpoints(Change(change.steps[: i + 1], "added"))
                row = next((r for r in reversed(widened.steps[-1].rows) if isinstance(r, dict)), None)
                return Change(widened.steps, "added", after=row)
            nodes = [first]
        return None


def unexpected_history(changes: list[Change], expected: Sequence[str], states: tuple[Any, ...] = ()) -> list[Change]:
    """The changes made at any point of an episode (an app's activity log) that no pattern
    of `expected` allows: a change undone by the end is still one the task did not allow.
    A pattern's row selectors match a record as it was before or after the change, or as it
    is in any of `states` (the episode's first and last state); a change inside a record the
    episode created is allowed where the record's creation is. A `ChangeTo` allows only
    its field's change to its value, at every point: read -> unread -> read is seen."""
    patterns = _parsed(expected)
    endpoints = _Endpoints(states) if states else None
    out = []
    for change in changes:
        if any(_allows(p, change) for p in patterns):
            continue
        if endpoints is not None:
            widened = endpoints.with_endpoints(change)
            if any(_allows(p, widened) for p in patterns):
                continue
            created = endpoints.creation(change)
            if created is not None and any(_allows(p, created) for p in patterns):
                continue
        out.append(change)
    return out
