"""Typed values: one comparator per type, each with its equivalence class stated in its
parser's docstring, used by every comparison of that type (answers, stored fields, table
cells, the cells of saved files).

| type | parser | equivalence class in short |
|---|---|---|
| `email` | `parse_email` | case, quotes, `mailto:`, a display name |
| `url` | `parse_url` | scheme/host case, default port, escapes; parameters a multiset |
| `date`, `time`, `datetime` | `parse_when` | any unambiguous format; to the minute |
| `money` | `parse_money` | currency and amount to the cent |
| `number` | `parse_one_number` | grouping, decoration; within a stated tolerance |
| `text` (quoted text) | `parse_text` | NFKC, whitespace, enclosing quotes, case |
| `rich_text` | `parse_rich_text` | what it shows, not its markup |
| `formula` | `parse_formula` | `$`, case, spacing, range corner order |
| `formula` (computed) | `compare_computation` | what it computes over its cells, re-computed by the sheets evaluator |
| `phone` | `parse_phone` | grouping, country code, extension |
| `address` | `parse_address` | case, punctuation, the usual abbreviations |
| `ini` (a configuration file) | `parse_ini` | spacing around `=`, key case, comments, blank lines, order |

Every scalar type refuses a multi-value value: a list, or text holding two of them ("March
5 or 6", "$12 or $13", "a@x.org, b@x.org", "555-0100 or 555-0199"); a hedge never passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, get_args

from cua.judges.values.amounts import compare_money, compare_number, parse_money, parse_one_number
from cua.judges.values.base import Refused, Result, strip_quotes
from cua.judges.values.config import compare_ini, parse_ini
from cua.judges.values.formula import compare_computation, compare_formula, computable, parse_formula
from cua.judges.values.temporal import When, compare_date, compare_datetime, compare_time, parse_when
from cua.judges.values.text import (
    compare_address,
    compare_phone,
    compare_rich_text,
    compare_text,
    parse_address,
    parse_phone,
    parse_rich_text,
    parse_text,
)
from cua.judges.values.web import Url, compare_email, compare_url, parse_email, parse_url

__all__ = ["TYPES", "Refused", "Result", "Url", "ValueType", "When", "compare_address", "compare_as",
           "compare_computation", "compare_date", "computable", "compare_datetime", "compare_email", "compare_formula",
           "compare_ini",
           "compare_money", "compare_number", "compare_phone", "compare_rich_text", "compare_text", "compare_time", "compare_url",
           "parse_address", "parse_as", "parse_email", "parse_formula", "parse_ini", "parse_money", "parse_one_number",
           "parse_phone", "parse_rich_text", "parse_text", "parse_url", "parse_when", "strip_quotes"]

ValueType = Literal["email", "url", "date", "time", "datetime", "money", "number", "text", "rich_text", "formula",
                    "phone", "address", "ini"]
TYPES: tuple[str, ...] = get_args(ValueType)

_COMPARE: dict[str, Callable[[Any, Any], Result]] = {
    "email": compare_email,
    "url": compare_url,
    "date": compare_date,
    "time": compare_time,
    "datetime": compare_datetime,
    "money": compare_money,
    "number": compare_number,
    "text": compare_text,
    "rich_text": compare_rich_text,
    "formula": lambda a, b: compare_formula(a, b, bare=True),
    "phone": compare_phone,
    "address": compare_address,
    "ini": compare_ini,
}

_PARSE: dict[str, Callable[[Any], Any]] = {
    "email": parse_email,
    "url": parse_url,
    "date": parse_when,
    "time": parse_when,
    "datetime": parse_when,
    "money": parse_money,
    "number": parse_one_number,
    "text": parse_text,
    "rich_text": parse_rich_text,
    "formula": lambda v: parse_formula(v, bare=True),
    "phone": parse_phone,
    "address": parse_address,
    "ini": parse_ini,
}


def compare_as(kind: str, observed: Any, expected: Any) -> Result:
    """`observed` against `expected` as values of type `kind`, default options (a table
    cell, a file's cell: a formula there may be stored without its "=")."""
    fn = _COMPARE.get(kind)
    if fn is None:
        return False, f"no value type {kind!r}"
    return fn(observed, expected)


def parse_as(kind: str, value: Any) -> Any:
    """The canonical form of `value` as type `kind`, or a `Refused`."""
    fn = _PARSE.get(kind)
    if fn is None:
        return Refused(f"no value type {kind!r}")
    return fn(value)
