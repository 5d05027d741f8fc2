"""Numbers and money."""

from __future__ import annotations

import re
import unicodedata
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from cua.judges.normalize import parse_number
from cua.judges.values.base import Refused, Result, scalar_text

__all__ = ["Money", "compare_money", "compare_number", "parse_money", "parse_one_number"]


#: Words and signs after a number that scale it or name a smaller unit: "103 cents" is not
#: 103 of the dollars asked, "1118.99 thousand" not 1118.99, "249k" not 249.
_SCALED = re.compile(r"\d\s*(?:hundreds?|thousands?|millions?|billions?|trillions?|dozens?|k|mn|bn|cents?|¢|pence)(?![A-Za-z])",
                     re.I)


def parse_one_number(value: Any, *, decimal_comma: bool = False) -> float | Refused:
    """One number. Equivalence class: the same value however grouped and decorated:
    "1,234.50" = "1234.5" = 1234.5 = "$1,234.50" = "1 234.5"; "1.234,5" with
    `decimal_comma`; a sign before a currency symbol ("-$12") counts. Refused: no number,
    more than one ("3 of 11", "12 or 13"), or one with a scale or a smaller unit after it
    ("103 cents", "1.2 thousand", "249k"): the digits are then not the value."""
    if isinstance(value, bool) or value is None or isinstance(value, (list, tuple, dict, set)):
        return Refused(f"not one number: {value!r}")
    if isinstance(value, str) and _SCALED.search(unicodedata.normalize("NFKC", value)):
        return Refused(f"a number with a scale or unit that changes it: {value!r}")
    number = parse_number(value, decimal_comma=decimal_comma)
    if number is None:
        return Refused(f"not one number: {value!r}")
    return number


def compare_number(observed: Any, expected: Any, *, abs_tol: float = 0.0, rel_tol: float = 0.0,
                   decimal_comma: bool = False) -> Result:
    """|a - b| <= max(abs_tol, rel_tol * |b|), plus float noise ("0.1 + 0.2" is 0.3)."""
    b = parse_one_number(expected, decimal_comma=decimal_comma)
    if isinstance(b, Refused):
        return False, f"expected value is not a number: {expected!r}"
    a = parse_one_number(observed, decimal_comma=decimal_comma)
    if isinstance(a, Refused):
        return False, a.reason
    tolerance = max(abs_tol, rel_tol * abs(b)) + 1e-12 * max(1.0, abs(b))
    ok = abs(a - b) <= tolerance
    return ok, "" if ok else f"|{a:g} - {b:g}| > {tolerance:g}"


_SYMBOLS = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "C$": "CAD", "A$": "AUD",
            "CHF": "CHF"}
_CODES = ("USD", "EUR", "GBP", "JPY", "INR", "CAD", "AUD", "CHF", "CNY", "SEK", "NOK", "DKK", "NZD", "MXN", "BRL",
          "SGD", "HKD", "KRW", "ZAR", "PLN")
_WORDS = {"dollar": "USD", "dollars": "USD", "euro": "EUR", "euros": "EUR", "pound": "GBP", "pounds": "GBP"}
_CURRENCY = re.compile(r"US\$|C\$|A\$|[$€£¥₹]|\b(?:" + "|".join(_CODES) + "|" + "|".join(_WORDS) + r")\b", re.I)

Money = tuple[str | None, Decimal]
"""(currency code or None when the text names none, amount rounded to the cent)."""


def parse_money(value: Any, *, decimal_comma: bool = False) -> Money | Refused:
    """One amount of money. Equivalence class: the same currency and the same amount to
    the cent (rounded half up): "$1,234.50" = "1234.5 USD" = "USD 1,234.50" =
    "1234.50 dollars" = "US$1234.5"; "€ 1.234,50" with `decimal_comma`. Refused: no
    amount, two amounts ("$12 or $13"), or two currencies ("$12 (€11)")."""
    text = scalar_text(value, "amount")
    if isinstance(text, Refused):
        return text
    names = {(_SYMBOLS.get(m.upper()) or _SYMBOLS.get(m) or _WORDS.get(m.lower()) or m.upper())
             for m in _CURRENCY.findall(text)}
    if len(names) > 1:
        return Refused(f"more than one currency: {text!r}")
    number = parse_one_number(value, decimal_comma=decimal_comma)
    if isinstance(number, Refused):
        return Refused(f"not one amount: {text!r}")
    if number > 0 and re.match(r"-\s*(?:US\$|C\$|A\$|[A-Za-z]{3}\b)", text):  # "-US$12", "-USD 12"
        number = -number
    cents = Decimal(repr(number)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return (next(iter(names)) if names else None), cents


def compare_money(observed: Any, expected: Any, *, currency: str | None = None, decimal_comma: bool = False) -> Result:
    """Equal amounts to the cent; the currency is compared when both sides name one (or
    `currency` gives the expected one): an amount without a currency is in the task's."""
    want = parse_money(expected, decimal_comma=decimal_comma)
    if isinstance(want, Refused):
        return False, f"expected value is not one amount: {want.reason}"
    got = parse_money(observed, decimal_comma=decimal_comma)
    if isinstance(got, Refused):
        return False, got.reason
    want_cur = want[0] or (currency.upper() if currency else None)
    if got[1] != want[1]:
        return False, f"amount {got[1]} != {want[1]}"
    if got[0] is not None and want_cur is not None and got[0] != want_cur:
        return False, f"currency {got[0]} != {want_cur}"
    return True, ""
