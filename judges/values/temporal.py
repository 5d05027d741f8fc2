"""Dates, times and date-times.

Equivalence class: the same calendar date, and the same wall-clock time to the minute
(to the second with `seconds`), however written: "2026-03-05", "March 5, 2026",
"5 Mar 2026", "Thursday, 5th of March 2026", "03/05/2026" (month first; day first only
with `day_first`), "2026-03-05T14:30:00Z" (an ISO offset is not compared: the apps keep
local wall time), "14:30" = "2:30 PM" = "2:30 p.m." = "14:30:00".

Refused: a text holding no date (no time) where one is needed, an impossible date
("2026-02-30"), and any text holding more than one: two dates, two times, or a date
or time beside other numbers or month names ("March 5 or 6, 2026", "2 or 3 PM",
"14:30-15:00", "March or April 5, 2026"). A hedged answer never passes, nor a weekday
that is not the date's own ("Thursday, April 8, 2026" when April 8 is a Wednesday).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from cua.judges.normalize import _DMY, _ISO, _MDY, _MONTHS, _NUMERIC, _year
from cua.judges.values.base import Refused, Result, scalar_text

__all__ = ["When", "compare_date", "compare_datetime", "compare_time", "parse_when"]


@dataclass(frozen=True)
class When:
    """What a text says: at most one date and at most one time."""

    date: dt.date | None
    time: dt.time | None


_ISO_OFFSET = re.compile(r"(\d{4}-\d{1,2}-\d{1,2})[T ](\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(?:Z|[+-]\d{2}:?\d{2})?(?!\d)")
_TIME = re.compile(r"(?<![\d:.])(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:\s*([ap])\.?\s*m\b\.?)?(?![\d:])", re.I)
_TIME_AMPM = re.compile(r"(?<![\d:.])(\d{1,2})\s*([ap])\.?\s*m\b\.?", re.I)
#: Month names left over once the date is read: another date mentioned ("may" is also a word).
_MONTH_WORD = re.compile(r"\b(" + "|".join(sorted((m for m in _MONTHS if m != "may"), key=len, reverse=True))
                         + r")\b\.?", re.I)


def _blank(text: str, span: tuple[int, int]) -> str:
    return text[:span[0]] + " " * (span[1] - span[0]) + text[span[1]:]


def _dates(text: str, day_first: bool) -> tuple[list[dt.date | None], str]:
    """Every date written in `text` (None for an impossible one), and the text without them."""
    found: list[dt.date | None] = []
    for regex, order in ((_ISO, "ymd"), (_MDY, "mdy"), (_DMY, "dmy"), (_NUMERIC, "num")):
        while (m := regex.search(text)) is not None:
            text = _blank(text, m.span())
            try:
                if order == "ymd":
                    found.append(dt.date(int(m[1]), int(m[2]), int(m[3])))
                elif order == "mdy":
                    found.append(dt.date(int(m[3]), _MONTHS[m[1].lower()], int(m[2])))
                elif order == "dmy":
                    found.append(dt.date(int(m[3]), _MONTHS[m[2].lower()], int(m[1])))
                else:
                    a, b = int(m[1]), int(m[2])
                    day, month = (a, b) if day_first else (b, a)
                    found.append(dt.date(_year(m[3]), month, day))
            except ValueError:
                found.append(None)
    return found, text


def _times(text: str) -> tuple[list[dt.time | None], str]:
    found: list[dt.time | None] = []
    for regex in (_TIME, _TIME_AMPM):
        while (m := regex.search(text)) is not None:
            text = _blank(text, m.span())
            if regex is _TIME:
                hour, minute, second, ampm = int(m[1]), int(m[2]), int(m[3] or 0), m[4]
            else:
                hour, minute, second, ampm = int(m[1]), 0, 0, m[2]
            if ampm:
                if not 1 <= hour <= 12:
                    found.append(None)
                    continue
                hour = hour % 12 + (12 if ampm.lower() == "p" else 0)
            try:
                found.append(dt.time(hour, minute, second))
            except ValueError:
                found.append(None)
    return found, text


def parse_when(value: Any, *, day_first: bool = False) -> When | Refused:
    """At most one date and one time from a value (see the module's equivalence class)."""
    if isinstance(value, dt.datetime):
        return When(value.date(), value.time().replace(microsecond=0))
    if isinstance(value, dt.date):
        return When(value, None)
    if isinstance(value, dt.time):
        return When(None, value.replace(microsecond=0))
    text = scalar_text(value, "date or time")
    if isinstance(text, Refused):
        return text
    if isinstance(value, (int, float)):
        return Refused(f"a number, not a date or time: {value!r}")
    text = _ISO_OFFSET.sub(lambda m: f"{m[1]} {m[2]}", text)
    dates, rest = _dates(text, day_first)
    times, rest = _times(rest)
    if any(d is None for d in dates) or any(t is None for t in times):
        return Refused(f"an impossible date or time: {text!r}")
    if len(dates) > 1 or len(times) > 1:
        return Refused(f"more than one value ({len(dates)} dates, {len(times)} times): {text!r}")
    if re.search(r"\d", rest) or _MONTH_WORD.search(rest):
        return Refused(f"more than one value: {text!r} holds another number or month beside its date/time")
    if not dates and not times:
        return Refused(f"not a date or time: {text!r}")
    days = {_WEEKDAYS[m.lower().rstrip(".")] for m in _WEEKDAY_WORD.findall(rest)}
    if len(days) > 1:
        return Refused(f"more than one weekday: {text!r}")
    if days and dates and dates[0] is not None and dates[0].weekday() not in days:
        return Refused(f"the weekday contradicts the date: {text!r} ({dates[0]:%A})")
    return When(dates[0] if dates else None, times[0] if times else None)


_WEEKDAYS = {name: i for i, names in enumerate(
    [("monday", "mon"), ("tuesday", "tue", "tues"), ("wednesday", "wed"), ("thursday", "thu", "thur", "thurs"),
     ("friday", "fri"), ("saturday", "sat"), ("sunday", "sun")]) for name in names}
#: A weekday named beside a date ("Thursday, April 8, 2026"): it must be the date's own.
_WEEKDAY_WORD = re.compile(r"\b(" + "|".join(sorted(_WEEKDAYS, key=len, reverse=True)) + r")\b\.?", re.I)


def _trim(t: dt.time, seconds: bool) -> dt.time:
    return t.replace(microsecond=0) if seconds else t.replace(second=0, microsecond=0)


def _parse_both(observed: Any, expected: Any, day_first: bool) -> tuple[When, When] | str:
    """Both sides parsed, or why not."""
    want = parse_when(expected, day_first=day_first)
    if isinstance(want, Refused):
        return f"expected value is not one date/time: {want.reason}"
    got = parse_when(observed, day_first=day_first)
    if isinstance(got, Refused):
        return got.reason
    return got, want


def compare_date(observed: Any, expected: Any, *, day_first: bool = False, seconds: bool = False) -> Result:
    """The same date; the time too when the expected value carries one (else any time,
    or none, may accompany the date)."""
    both = _parse_both(observed, expected, day_first)
    if isinstance(both, str):
        return False, both
    got, want = both
    if want.date is None and want.time is None:
        return False, "expected value is not a date"
    if want.date is not None and got.date != want.date:
        return False, f"date {got.date} != {want.date}" if got.date else "no date given"
    if want.time is not None:
        if got.time is None:
            return False, "no time given"
        if _trim(got.time, seconds) != _trim(want.time, seconds):
            return False, f"time {got.time} != {want.time}"
    return True, ""


def compare_time(observed: Any, expected: Any, *, seconds: bool = False) -> Result:
    """The same wall-clock time; a date beside it is not compared."""
    both = _parse_both(observed, expected, False)
    if isinstance(both, str):
        return False, both
    got, want = both
    if want.time is None:
        return False, "expected value is not a time"
    if got.time is None:
        return False, "no time given"
    ok = _trim(got.time, seconds) == _trim(want.time, seconds)
    return ok, "" if ok else f"time {got.time} != {want.time}"


def compare_datetime(observed: Any, expected: Any, *, day_first: bool = False, seconds: bool = False) -> Result:
    """The same date and the same time: both must be given."""
    both = _parse_both(observed, expected, day_first)
    if isinstance(both, str):
        return False, both
    got, want = both
    if want.date is None or want.time is None:
        return False, "expected value is not a date with a time"
    if got.date is None or got.time is None:
        return False, "a date and a time are both needed"
    if got.date != want.date:
        return False, f"date {got.date} != {want.date}"
    ok = _trim(got.time, seconds) == _trim(want.time, seconds)
    return ok, "" if ok else f"time {got.time} != {want.time}"
