"""Spreadsheet formulas, compared as written."""

from __future__ import annotations

import re
from typing import Any

from cua.judges.values.base import Refused, Result, compare_parsed, scalar_text

__all__ = ["compare_formula", "parse_formula"]

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
