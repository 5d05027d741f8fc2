"""Spreadsheet formulas, compared as written (`compare_formula`) or by what they compute
(`compare_computation`)."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator
from typing import Any

from cua.judges.values.base import Refused, Result, compare_parsed, scalar_text
from cua.judges.values.spreadsheet import CellError, Value, col_name, display, evaluate, references

__all__ = ["compare_computation", "compare_formula", "computable", "parse_formula"]

_PIECES = re.compile(r'"(?:[^"]|"")*"|\'(?:[^\']|\'\')*\'|[^"\']+')
_RANGE = re.compile(r"(?<![A-Z0-9_.])([A-Z]{1,3})(\d{1,7}):([A-Z]{1,3})(\d{1,7})(?![A-Z0-9_(])")


def _col(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


def _ordered(m: re.Match[str]) -> str:
    (c1, r1), (c2, r2) = (m[1], int(m[2])), (m[3], int(m[4]))
    left = c1 if _col(c1) <= _col(c2) else c2
    right = c2 if left == c1 else c1
    return f"{left}{min(r1, r2)}:{right}{max(r1, r2)}"


def parse_formula(value: Any, *, bare: bool = False) -> str | Refused:
    """A formula's canonical text. Equivalence class: the same formula up to absolute
    references ("$B$2" = "B2": the `$` only matters when the formula is copied, and the
    cell holds the same computation), the letter case of function names, references and
    sheet names, whitespace outside string literals, and the corner order of a range
    ("B7:B2" = "B2:B7"). String literals compare exactly. Not equivalent: another function
    or range even when it computes the same value today. A value that does not start with
    "=" is a typed value, not a formula, and is refused (with `bare`, the text is the
    formula without its "=", as a file format stores it)."""
    text = scalar_text(value, "formula")
    if isinstance(text, Refused):
        return text
    if text.startswith("="):
        body = text[1:]
    elif bare and text:
        body = text
    else:
        return Refused(f"not a formula (a typed value?): {text!r}")
    out: list[str] = []
    for piece in _PIECES.findall(body):
        if piece.startswith('"'):
            out.append(piece)
        elif piece.startswith("'"):
            out.append(piece.upper())
        else:
            out.append(_RANGE.sub(_ordered, re.sub(r"\s+|\$", "", piece).upper()))
    canonical = "".join(out)
    if not canonical:
        return Refused("an empty formula")
    return "=" + canonical


def compare_formula(observed: Any, expected: Any, *, bare: bool = False) -> Result:
    return compare_parsed(lambda v: parse_formula(v, bare=bare), observed, expected, "formula")


_TRIALS = 12


def _same_value(a: Value, b: Value) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return type(a) is type(b) and a == b


def _trials(cells: list[tuple[int, int]], rng: random.Random) -> Iterator[dict[tuple[int, int], str]]:
    """Random fillings of `cells`, then each cell in turn made the largest, the smallest,
    and empty: a formula that skips one cell of a MIN or MAX differs only when that cell
    is the extreme, which random fillings alone rarely make it, and a COUNT over another
    range of the same size only when a cell is empty."""
    base: dict[tuple[int, int], str] = {}
    for trial in range(_TRIALS):
        base = {cell: repr(rng.randint(-999, 999) + (rng.randint(1, 99) / 100 if trial % 2 else 0)) for cell in cells}
        yield base
    for i, cell in enumerate(cells):
        for sign in (1, -1):
            yield {**base, cell: repr(sign * (10 ** 6 + i))}
        yield {other: raw for other, raw in base.items() if other != cell}


def compare_computation(observed: Any, expected: str) -> Result:
    """Does the formula `observed` compute what `expected` computes? Both are computed by
    the sheets app's own evaluator (`spreadsheet`) over every cell either one reads, filled
    with numbers drawn anew for each of several trials, and must agree on every trial.
    Equivalence class: any formula that computes the same function of the cells: "$D$2",
    case, spacing, "=SUM(D2:D20,D21:D41)" or "=D2+D3+D4" for "=SUM(D2:D4)". Not
    equivalent: a typed number, a constant dressed as a formula ("=MIN(D2:D41)*0+2",
    "=971"), another range or function, a formula that reads a cell `expected` does not
    (unless it cancels out). The draws are seeded by both formulas' text: the verdict is
    deterministic, and a formula cannot be written to match draws it determines itself."""
    if not isinstance(observed, str):  # the cell's raw text, read as the app reads it: untrimmed
        return False, f"not a formula (a typed value?): {observed!r}"
    text = observed
    if not text.startswith("="):
        return False, f"not a formula (a typed value?): {text!r}"
    mine, theirs = references(text), references(expected)
    if theirs is None:
        return False, f"the expected formula does not parse: {expected!r}"
    if mine is None:
        return False, f"a formula the sheet cannot compute (it shows #ERROR!): {text!r}"
    cells = sorted(mine | theirs)
    for raws in _trials(cells, random.Random(hashlib.sha256(f"{text}\0{expected}".encode()).digest())):
        got, want = evaluate(text, raws), evaluate(expected, raws)
        if isinstance(want, CellError):  # two errors agree on nothing: judge only what computes a value
            return False, f"the expected formula {expected} computes no value here ({want}): judge it as written"
        if not _same_value(got, want):
            shown = ", ".join(f"{col_name(c)}{r}={raws.get((r, c), 'empty')}" for r, c in cells[:6])
            return False, (f"computes {display(got)} where {expected} gives {display(want)} "
                           f"(cells {shown}{', ...' if len(cells) > 6 else ''})")
    return True, ""


def computable(formula: str) -> bool:
    """Whether the sheets evaluator computes `formula` (with "=") to a value over numeric
    cells: a function it lacks (COUNTA) or a syntax it lacks (another sheet) is not, and
    such a formula can only be compared as written."""
    cells = references(formula)
    if cells is None:
        return False
    raws = {cell: repr(i + 1) for i, cell in enumerate(sorted(cells))}
    return not isinstance(evaluate(formula, raws), CellError)
