"""Text-like values: quoted text, rich text, phone numbers, postal addresses."""

from __future__ import annotations

import re
from typing import Any

from cua.judges.normalize import RichLines, norm_address, norm_phone, norm_text, rich_text
from cua.judges.values.base import Refused, Result, compare_parsed, scalar_text, strip_quotes

__all__ = ["compare_address", "compare_phone", "compare_rich_text", "compare_text", "parse_address", "parse_phone",
           "parse_rich_text", "parse_text"]


def parse_text(value: Any, *, case: bool = False, punctuation: bool = True, quotes: bool = False) -> str | Refused:
    """Text, canonical. Equivalence class: Unicode NFKC, runs of whitespace as one space,
    leading and trailing whitespace, letter case unless `case`, punctuation too when
    `punctuation` is false, and with `quotes` the quotes enclosing the whole text
    ('"Buy milk"', '“Buy milk”' = 'Buy milk': right for an answer, whose quotes come from
    the instruction; wrong for a stored value, which the app shows with its quotes).
    Refused: no text (None), a list or an object."""
    if isinstance(value, bool):
        return norm_text(value)
    text = scalar_text(value, "text")
    if isinstance(text, Refused):
        return text
    return norm_text(strip_quotes(text) if quotes else text, case=case, punctuation=punctuation)


def compare_text(observed: Any, expected: Any, *, case: bool = False, punctuation: bool = True,
                 quotes: bool = False) -> Result:
    return compare_parsed(lambda v: parse_text(v, case=case, punctuation=punctuation, quotes=quotes),
                          observed, expected, "text")


def parse_rich_text(value: Any, *, formatting: bool = True, case: bool = True) -> str | RichLines | Refused:
    """Rich text as what it shows (see `cua.judges.normalize.rich_text`). Equivalence
    class: the same lines (paragraph, heading, list item) with the same text and inline
    marks, whatever the markup (`strong` = `b`, `em` = `i`, `p` = `div`, attributes other
    than href, whitespace); with `formatting` false only the text; with `case` false
    letter case aside."""
    text = scalar_text(value, "rich text")
    if isinstance(text, Refused):
        return text
    lines = rich_text(text)
    if not formatting:
        return norm_text(" ".join(t for _, runs in lines for t, _ in runs), case=case)
    if case:
        return lines
    return tuple((b, tuple((t.casefold(), m) for t, m in runs)) for b, runs in lines)


def compare_rich_text(observed: Any, expected: Any, *, formatting: bool = True, case: bool = True) -> Result:
    ok, detail = compare_parsed(lambda v: parse_rich_text(v, formatting=formatting, case=case), observed, expected,
                                "rich text")
    return ok, detail[:500]


_LIST_MARK = re.compile(r"[,;|]|\s/\s|\b(?:or|and)\b", re.I)


def parse_phone(value: Any, *, country: str = "1") -> str | Refused:
    """A phone number's digits. Equivalence class: the same digits however grouped or
    punctuated ("(555) 010-2000" = "555.010.2000"), a 10-digit national number with or
    without the country code `country` ("+1 555 010 2000"), "00" for "+", and an
    extension ("x12", "ext. 12") aside. Refused: fewer than 7 digits, letters, more than
    15 digits (E.164's maximum), or two numbers ("555-0100 or 555-0199", "555-0100, 555-0199")."""
    text = scalar_text(value, "phone number")
    if isinstance(text, Refused):
        return text
    text = strip_quotes(text)
    if _LIST_MARK.search(text):
        return Refused(f"not one phone number: {text!r}")
    digits = norm_phone(text, country=country)
    if digits is None or len(digits) > 15:
        return Refused(f"not a phone number: {text!r}")
    return digits


def compare_phone(observed: Any, expected: Any, *, country: str = "1") -> Result:
    return compare_parsed(lambda v: parse_phone(v, country=country), observed, expected, "phone number")


def parse_address(value: Any) -> str | Refused:
    """A postal address, canonical. Equivalence class: letter case, punctuation, line
    breaks and commas between parts, enclosing quotes, and the usual abbreviations spelled
    out or not ("St." = "Street", "Ave" = "Avenue", "Apt" = "Apartment", "N" = "North",
    "#" = "Number"). Not equivalent: another house number, street, city or postcode.
    Refused: no text, a list or an object."""
    text = scalar_text(value, "address")
    if isinstance(text, Refused):
        return text
    return norm_address(strip_quotes(text))


def compare_address(observed: Any, expected: Any) -> Result:
    return compare_parsed(parse_address, observed, expected, "address")
