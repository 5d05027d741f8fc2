"""JSON paths for judges: reading a value out of state, and naming the changes a task may make.

Grammar: segments joined by `.`; a segment is a key (or `*`: every value of an object)
followed by any number of selectors in brackets:

- `[3]`, `[-1]`  an index;
- `[*]`          every element (the result becomes a list);
- `[k=v]`        the first element whose field k equals v (a lookup: the result stays one value);
- `[k~=v]`       a lookup by the same text as shown: runs of whitespace and the ends do not
                 matter (a title the agent typed: "Buy  milk " is "Buy milk"); case and
                 character forms do, as for every stored text ("BUY MILK" is another title),
                 but for email addresses, one whatever their case;
- `[k!=v]`, `[k<v]`, `[k<=v]`, `[k>v]`, `[k>=v]`  every matching element (a list).

Several selectors on one segment all filter the same list: `todos[list_id=3][due<2026-03-02]`.
Values compare as numbers when both sides are numbers, `true`/`false`/`null` as JSON,
otherwise as strings (ISO dates order correctly as strings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

from cua.judges.normalize import same_shown_text

__all__ = ["Cond", "PathError", "Segment", "get_path", "parse_path", "row_matches", "coerce_literal"]


class PathError(ValueError):
    """A JSON path that does not parse."""


_MISSING = object()


@dataclass(frozen=True)
class Cond:
    field: str
    op: str  # = ~= != < <= > >=
    text: str
    value: Any

    def holds(self, row: Any) -> bool:
        if not isinstance(row, dict):
            return False
        observed = row.get(self.field, _MISSING)
        if observed is _MISSING:
            return False
        if self.op == "=" and type(observed) is type(self.value):  # the common case, decided at once
            return bool(observed == self.value)
        if self.op == "~=":
            return isinstance(observed, str) and same_shown_text(observed, self.text)
        return _compare(observed, self.op, self.value, self.text)


@dataclass(frozen=True)
class Segment:
    key: str | None  # None: the segment only selects ("[0]" at the start)
    #: ("index", int) | ("star", None) | ("cond", Cond)
    selectors: tuple[tuple[str, Any], ...] = ()


_COND = re.compile(r"^\s*([^=!<>~\s]+)\s*(~=|!=|<=|>=|=|<|>)\s*(.*?)\s*$", re.S)
#: The operators of a lookup (one element, the first match): equal, and the same text.
_LOOKUP = ("=", "~=")


def coerce_literal(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "null":
        return None
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d*|-?\.\d+", text):
        return float(text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _compare(observed: Any, op: str, value: Any, text: str) -> bool:
    if _is_number(observed) and _is_number(value):
        return _order(float(observed), float(value), op)
    if isinstance(value, bool) or value is None:
        if op == "=":
            return observed is value or (isinstance(observed, int) and not isinstance(observed, bool)
                                         and value is not None and observed == int(value))
        if op == "!=":
            return not _compare(observed, "=", value, text)
        return False
    if observed is None:
        return op == "!="
    a, b = (str(observed).lower(), text.lower()) if isinstance(observed, bool) else (str(observed), text)
    if isinstance(value, str) and value != text:  # a quoted literal
        b = value
    return _order(a, b, op)


_Ordered = TypeVar("_Ordered", float, str)


def _order(a: _Ordered, b: _Ordered, op: str) -> bool:
    """`a op b` for two numbers or two strings (never one of each)."""
    if op == "=":
        return a == b
    if op == "!=":
        return a != b
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    return a >= b


@lru_cache(maxsize=4096)
def parse_path(path: str) -> tuple[Segment, ...]:
    segments: list[Segment] = []
    i, n = 0, len(path)
    if not path.strip():
        return ()
    while i < n:
        start = i
        while i < n and path[i] not in ".[":
            i += 1
        key = path[start:i].strip() or None
        selectors: list[tuple[str, Any]] = []
        while i < n and path[i] == "[":
            end = _closing_bracket(path, i)
            if end < 0:
                raise PathError(f"unclosed '[' in path {path!r}")
            body = path[i + 1:end].strip()
            i = end + 1
            if body == "*":
                selectors.append(("star", None))
            elif re.fullmatch(r"-?\d+", body):
                selectors.append(("index", int(body)))
            else:
                match = _COND.match(body)
                if not match:
                    raise PathError(f"bad selector [{body}] in path {path!r}")
                field, op, text = match.groups()
                selectors.append(("cond", Cond(field, op, text, coerce_literal(text))))
        if key is None and not selectors:
            raise PathError(f"empty segment in path {path!r}")
        segments.append(Segment(key, tuple(selectors)))
        if i < n:
            if path[i] != ".":
                raise PathError(f"unexpected {path[i]!r} at {i} in path {path!r}")
            i += 1
            if i == n:
                raise PathError(f"path {path!r} ends with '.'")
    return tuple(segments)


def _closing_bracket(path: str, start: int) -> int:
    """Index of the `]` closing the selector at `start`; a quoted value may hold `]` or `.`."""
    match = re.compile(r"\[\s*[^=!<>~\]]+?\s*(?:~=|!=|<=|>=|=|<|>)\s*(['\"])").match(path, start)
    if match:
        close = path.find(match.group(1), match.end())
        if close < 0:
            return -1
        return path.find("]", close)
    return path.find("]", start)


def get_path(value: Any, path: str | None, *, unique: bool = False) -> Any:
    """The value at `path` (None when absent); a list when the path fans out (`*`, filters).

    With `unique` (as judges read), a lookup `[k=v]` that matches more than one element
    raises PathError instead of taking the first: a check that names one row must not be
    satisfied by the first of two copies (`[k=v][*]` reads them all, `[k=v][0]` picks)."""
    if not path:
        return value
    current = [value]
    fanned = False
    for seg in parse_path(path):
        if seg.key is not None:
            if seg.key == "*":
                current = [v for item in current if isinstance(item, dict) for v in item.values()]
                fanned = True
            else:
                current = [item[seg.key] for item in current if isinstance(item, dict) and seg.key in item]
        groups = _group(seg.selectors)
        filtered = False  # `current` holds lists of matches still to be flattened
        for g, (kind, arg) in enumerate(groups):
            followed_by_star = g + 1 < len(groups) and groups[g + 1][0] in ("star", "index")
            nxt: list[Any] = []
            for item in current:
                if not isinstance(item, list):
                    continue
                if kind == "index":
                    if -len(item) <= arg < len(item):
                        nxt.append(item[arg])
                elif kind == "star":
                    nxt.extend(item)
                else:
                    if len(arg) == 1:
                        holds = arg[0].holds
                        matches = [row for row in item if holds(row)]
                    else:
                        matches = [row for row in item if all(c.holds(row) for c in arg)]
                    # `[k=v]` is a lookup (the first match) unless a `[*]` asks for all of them
                    if all(c.op in _LOOKUP for c in arg) and not followed_by_star:
                        if unique and len(matches) > 1:
                            conds = "".join(f"[{c.field}{c.op}{c.text}]" for c in arg)
                            raise PathError(f"{conds} matches {len(matches)} elements; a lookup names one "
                                            f"(read them all with {conds}[*])")
                        nxt.extend(matches[:1])
                    else:
                        nxt.append(matches)
            current = nxt
            filtered = kind == "cond" and not (all(c.op in _LOOKUP for c in arg) and not followed_by_star)
            if kind == "star":
                fanned = True
        if filtered:
            current = [row for matches in current for row in matches]
            fanned = True
    if fanned:
        return current
    return current[0] if current else None


def _group(selectors: tuple[tuple[str, Any], ...]) -> list[tuple[str, Any]]:
    """Merge consecutive conditions into one conjunction over the same list."""
    out: list[tuple[str, Any]] = []
    for kind, arg in selectors:
        if kind == "cond" and out and out[-1][0] == "cond":
            out[-1] = ("cond", (*out[-1][1], arg))
        elif kind == "cond":
            out.append(("cond", (arg,)))
        else:
            out.append((kind, arg))
    return out


def row_matches(selectors: tuple[tuple[str, Any], ...], rows: tuple[Any, ...], index: int | None) -> bool:
    """Whether an element (seen as `rows`: its value before and/or after a change, at
    position `index`) satisfies every selector of a pattern segment."""
    for kind, arg in selectors:
        if kind == "star":
            continue
        if kind == "index":
            if index is None or arg != index:
                return False
        elif not any(arg.holds(row) for row in rows):
            return False
    return True
