"""What every typed value shares: a parse that either gives the value's canonical form or
says why the text is not one such value (`Refused`), and one comparison built on it.

A canonical form is a plain, hashable Python value: two values of a type are
equivalent exactly when their canonical forms are equal. So each type states its
equivalence class once, in its parser's docstring, and every comparison (an answer, a
stored field, a table cell, a cell of a saved spreadsheet) goes through that parser.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["Refused", "Result", "compare_parsed", "scalar_text", "strip_quotes"]

Result = tuple[bool, str]
T = TypeVar("T")


@dataclass(frozen=True)
class Refused:
    """The text is not one value of the type: none at all, a malformed one, or more than
    one (a hedged answer such as "March 5 or March 6": every scalar type refuses those)."""

    reason: str


def scalar_text(value: Any, what: str) -> str | Refused:
    """A scalar value as text (NFKC, trimmed); a list, an object or nothing is refused:
    a scalar type holds one value, never several."""
    if value is None:
        return Refused(f"no {what} given")
    if isinstance(value, (list, tuple, set, dict)):
        return Refused(f"not one {what}: a {type(value).__name__} of {len(value)}")
    if isinstance(value, bool):
        return Refused(f"not a {what}: {value!r}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return unicodedata.normalize("NFKC", str(value)).strip()


#: Enclosing quote pairs: ASCII, typographic, guillemets, German low-high, backticks.
_QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb", "\u201e": "\u201c",
           "`": "`", "\u201d": "\u201d"}


def strip_quotes(text: str) -> str:
    """`text` without the quotes that enclose all of it (repeatedly, whitespace trimmed):
    '"Buy milk"' and '“Buy milk”' are 'Buy milk'. Quotes inside stay, and a text whose
    inside holds the same quote again ('"a" and "b"') is not enclosed: it is kept."""
    text = text.strip()
    while len(text) >= 2 and text[0] in _QUOTES and text[-1] == _QUOTES[text[0]]:
        inner = text[1:-1]
        if text[0] in inner or text[-1] in inner:
            break
        text = inner.strip()
    return text


def compare_parsed(parse: Callable[[Any], T | Refused], observed: Any, expected: Any, what: str,
                   show: Callable[[T], str] = repr) -> Result:
    """The one comparison: both sides parsed, equal canonical forms pass. A refused
    expected value is the template's fault and says so."""
    want = parse(expected)
    if isinstance(want, Refused):
        return False, f"expected value is not one {what}: {want.reason}"
    got = parse(observed)
    if isinstance(got, Refused):
        return False, got.reason
    if got == want:
        return True, ""
    return False, f"{what} {show(got)} != {show(want)}"


_WS = re.compile(r"\s+")


def collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()
