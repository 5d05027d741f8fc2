"""Normalisation for comparing what an agent produced with what a task expects:
text (Unicode, case, whitespace, punctuation), numbers written by people, and dates and
times in the formats people and apps write them."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from typing import Any

__all__ = ["norm_text", "parse_datetime", "parse_number", "to_text"]

_WS = re.compile(r"\s+")


def to_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def norm_text(value: Any, *, case: bool = False, punctuation: bool = True) -> str:
    """NFKC, whitespace collapsed and trimmed, casefolded unless `case`, punctuation
    removed unless `punctuation` (Unicode categories P*; symbols such as $ stay)."""
    text = unicodedata.normalize("NFKC", to_text(value))
    if not case:
        text = text.casefold()
    if not punctuation:
        text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
    return _WS.sub(" ", text).strip()


_NUM_DOT = re.compile(r"(?<![\d.,])[-+]?(?:\d{1,3}(?:[,\u202f\u00a0' ]\d{3})+|\d+)(?:\.\d+)?(?![\d])")
_NUM_COMMA = re.compile(r"(?<![\d.,])[-+]?(?:\d{1,3}(?:[.\u202f\u00a0' ]\d{3})+|\d+)(?:,\d+)?(?![\d])")


def parse_number(value: Any, *, decimal_comma: bool = False) -> float | None:
    """A number from a JSON number or from text such as "1,234.50", "$12", "-3 %",
    "€ 1.234,50" (with `decimal_comma`), "12 items". None when the text holds no number
    or more than one (an answer like "3 of 11" is not a number)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = unicodedata.normalize("NFKC", str(value)).replace("\u2212", "-").strip()
    pattern = _NUM_COMMA if decimal_comma else _NUM_DOT
    matches = pattern.findall(text)
    if len(matches) != 1:
        return None
    token = matches[0]
    for sep in ("\u202f", "\u00a0", "'", " "):
        token = token.replace(sep, "")
    token = token.replace(".", "").replace(",", ".") if decimal_comma else token.replace(",", "")
    # "-$12": a sign written before a currency symbol
    if not token.startswith(("-", "+")) and re.search(r"-\s*[$€£¥₹]\s*" + re.escape(matches[0]), text):
        token = "-" + token
    try:
        return float(token)
    except ValueError:
        return None


_MONTHS = {name: i for i, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
     ("november", "nov"), ("december", "dec")], start=1) for name in names}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_NUMERIC = re.compile(r"(?<!\d)(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})(?!\d)")
_MDY = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.I)
_TIME = re.compile(r"(?<![\d:])(\d{1,2})(?::(\d{2}))(?::(\d{2}))?\s*([ap])?\.?\s*(?:m\b\.?)?", re.I)
_TIME_AMPM = re.compile(r"(?<![\d:])(\d{1,2})\s*([ap])\.?\s*m\b\.?", re.I)


def _year(text: str) -> int:
    year = int(text)
    return year + 2000 if len(text) == 2 else year


def parse_datetime(value: Any, *, day_first: bool = False) -> tuple[dt.date | None, dt.time | None]:
    """(date, time) found in a value; either may be None. Raises nothing."""
    if isinstance(value, dt.datetime):
        return value.date(), value.time()
    if isinstance(value, dt.date):
        return value, None
    if isinstance(value, dt.time):
        return None, value
    if value is None or isinstance(value, (bool, int, float)):
        return None, None
    text = unicodedata.normalize("NFKC", str(value)).strip()
    date: dt.date | None = None
    rest = text
    for finder in (_find_iso, _find_named, lambda t: _find_numeric(t, day_first)):
        found = finder(text)
        if found is not None:
            date, span = found
            rest = text[:span[0]] + " " + text[span[1]:]
            break
    return date, _find_time(rest)


def _find_iso(text: str) -> tuple[dt.date, tuple[int, int]] | None:
    m = _ISO.search(text)
    if not m:
        return None
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3])), m.span()
    except ValueError:
        return None


def _find_named(text: str) -> tuple[dt.date, tuple[int, int]] | None:
    for regex, order in ((_MDY, "mdy"), (_DMY, "dmy")):
        m = regex.search(text)
        if m:
            month_s, day_s = (m[1], m[2]) if order == "mdy" else (m[2], m[1])
            try:
                return dt.date(int(m[3]), _MONTHS[month_s.lower()], int(day_s)), m.span()
            except ValueError:
                return None
    return None


def _find_numeric(text: str, day_first: bool) -> tuple[dt.date, tuple[int, int]] | None:
    m = _NUMERIC.search(text)
    if not m:
        return None
    a, b, year = int(m[1]), int(m[2]), _year(m[3])
    day, month = (a, b) if day_first else (b, a)
    try:
        return dt.date(year, month, day), m.span()
    except ValueError:
        return None


def _find_time(text: str) -> dt.time | None:
    m = _TIME.search(text)
    if m:
        hour, minute, second = int(m[1]), int(m[2]), int(m[3] or 0)
        ampm = m[4]
    else:
        m = _TIME_AMPM.search(text)
        if not m:
            return None
        hour, minute, second, ampm = int(m[1]), 0, 0, m[2]
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm.lower() == "p" else 0)
    try:
        return dt.time(hour, minute, second)
    except ValueError:
        return None
