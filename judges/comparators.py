"""Comparators: does an observed value satisfy an expectation? Each takes the spec and
the observed value and returns (passed, detail); they never raise on odd input (a value
of the wrong shape simply fails, with the reason in `detail`). Every typed comparison
(text, number, date, time, email, URL, money, phone, address, rich text, formula) is
the one of `cua.judges.values`, so an answer, a stored field and a table cell of a type
share its equivalence class."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from cua.judges import spec as S
from cua.judges import values as V
from cua.judges.normalize import norm_text, to_text
from cua.judges.paths import PathError, get_path

__all__ = ["Result", "compare", "expected_of", "register_comparator"]

Result = tuple[bool, str]
Comparator = Callable[[Any, Any], Result]
_REGISTRY: dict[type, Comparator] = {}


def register_comparator(spec_type: type) -> Callable[[Comparator], Comparator]:
    def wrap(fn: Comparator) -> Comparator:
        _REGISTRY[spec_type] = fn
        return fn

    return wrap


def compare(spec: Any, observed: Any, *, stored: bool = False) -> Result:
    """`stored`: the value was read from the app's own typed state (app state, SQL), where
    its type is part of it: a number check there needs a number. Text that reads as a
    number ("'1623", "1623" in a text cell) is text to the app (its sums skip it), so it
    fails. An answer, a page's text and a file's text are text anyway, and a number is
    parsed out of them (`stored` False)."""
    fn = _REGISTRY.get(type(spec))
    if fn is None:
        return False, f"no comparator for {type(spec).__name__}"
    if stored and isinstance(spec, S.NumberCmp) and not _is_number(observed):
        return False, f"the app stores {observed!r} as {type(observed).__name__}, not a number"
    if isinstance(spec, S.JsonPathCmp):
        return _at_path(spec, observed, stored)
    return fn(spec, observed)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def expected_of(spec: Any) -> Any:
    """What the evidence shows as `expected`."""
    data = spec.model_dump(mode="json", exclude_defaults=True, by_alias=True)
    if set(data) <= {"op", "value"} and "value" in data:
        return data["value"]
    return data


def _same_json(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _same_typed(a: Any, b: Any, kind: str) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_typed(a[k], b[k], kind) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_typed(x, y, kind) for x, y in zip(a, b))
    if isinstance(a, (dict, list, tuple)) or isinstance(b, (dict, list, tuple)):
        return False
    return V.compare_as(kind, a, b)[0]


@register_comparator(S.EqualsCmp)
def _equals(spec: S.EqualsCmp, observed: Any) -> Result:
    if spec.type is not None:
        return _same_typed(observed, spec.value, spec.type), ""
    return _same_json(observed, spec.value), ""


@register_comparator(S.TextCmp)
def _text(spec: S.TextCmp, observed: Any) -> Result:
    if observed is None or isinstance(observed, (dict, list)):
        return False, f"not text: {type(observed).__name__}"
    return V.compare_text(observed, spec.value, case=spec.case, punctuation=spec.punctuation, quotes=spec.quotes)


@register_comparator(S.ContainsCmp)
def _contains(spec: S.ContainsCmp, observed: Any) -> Result:
    if isinstance(observed, list):
        want = norm_text(spec.value, case=spec.case, punctuation=spec.punctuation) if isinstance(spec.value, str) else None
        for item in observed:
            if _same_json(item, spec.value):
                return True, ""
            if want is not None and isinstance(item, str) and norm_text(item, case=spec.case,
                                                                         punctuation=spec.punctuation) == want:
                return True, ""
        return False, "no element equals it"
    if observed is None or isinstance(observed, dict):
        return False, f"not text or a list: {type(observed).__name__}"
    a = norm_text(observed, case=spec.case, punctuation=spec.punctuation)
    b = norm_text(spec.value, case=spec.case, punctuation=spec.punctuation)
    return b in a, ""


@register_comparator(S.RegexCmp)
def _regex(spec: S.RegexCmp, observed: Any) -> Result:
    if observed is None or isinstance(observed, (dict, list)):
        return False, f"not text: {type(observed).__name__}"
    try:
        rx = re.compile(spec.pattern, re.I if spec.ignore_case else 0)
    except re.error as exc:
        return False, f"bad pattern: {exc}"
    text = to_text(observed)
    hit = rx.fullmatch(text) if spec.full else rx.search(text)
    return hit is not None, ""


@register_comparator(S.NumberCmp)
def _number(spec: S.NumberCmp, observed: Any) -> Result:
    return V.compare_number(observed, spec.value, abs_tol=spec.abs, rel_tol=spec.rel, decimal_comma=spec.decimal_comma)


def _key(item: Any, text: bool) -> Any:
    if text and isinstance(item, str):
        return ("s", norm_text(item))
    if isinstance(item, bool):
        return ("b", item)
    if isinstance(item, (int, float)):
        return ("n", float(item))
    if isinstance(item, (dict, list)):
        return ("j", json.dumps(item, sort_keys=True))
    return (type(item).__name__, item)


@register_comparator(S.SetCmp)
def _set(spec: S.SetCmp, observed: Any) -> Result:
    if not isinstance(observed, list) or not isinstance(spec.values, list):
        return False, f"not a list: {type(observed).__name__}"
    a, b = {_key(x, spec.text) for x in observed}, {_key(x, spec.text) for x in spec.values}
    return a == b, "" if a == b else f"missing {sorted(map(str, b - a))}, extra {sorted(map(str, a - b))}"


@register_comparator(S.MultisetCmp)
def _multiset(spec: S.MultisetCmp, observed: Any) -> Result:
    if not isinstance(observed, list) or not isinstance(spec.values, list):
        return False, f"not a list: {type(observed).__name__}"
    a, b = Counter(_key(x, spec.text) for x in observed), Counter(_key(x, spec.text) for x in spec.values)
    if a == b:
        return True, ""
    return False, f"missing {sorted(map(str, (b - a).elements()))}, extra {sorted(map(str, (a - b).elements()))}"


def _subset(expected: Any, observed: Any, list_any: bool) -> bool:
    if isinstance(expected, dict):
        return isinstance(observed, dict) and all(
            k in observed and _subset(v, observed[k], list_any) for k, v in expected.items())
    if isinstance(expected, list):
        if not isinstance(observed, list):
            return False
        if list_any:
            return all(any(_subset(e, o, list_any) for o in observed) for e in expected)
        return len(expected) == len(observed) and all(_subset(e, o, list_any) for e, o in zip(expected, observed))
    return _same_json(observed, expected)


@register_comparator(S.JsonSubsetCmp)
def _json_subset(spec: S.JsonSubsetCmp, observed: Any) -> Result:
    return _subset(spec.value, observed, spec.list_any), ""


@register_comparator(S.JsonPathCmp)
def _json_path(spec: S.JsonPathCmp, observed: Any) -> Result:
    return _at_path(spec, observed, False)


def _at_path(spec: S.JsonPathCmp, observed: Any, stored: bool) -> Result:
    try:
        value = get_path(observed, spec.path, unique=True)
    except PathError as exc:
        return False, str(exc)
    ok, detail = compare(spec.expect, value, stored=stored)  # a value inside stored state is stored
    return ok, f"at {spec.path}: {value!r}" + (f"; {detail}" if detail else "")


@register_comparator(S.DateCmp)
def _date(spec: S.DateCmp, observed: Any) -> Result:
    return V.compare_date(observed, spec.value, day_first=spec.day_first, seconds=spec.seconds)


@register_comparator(S.TimeCmp)
def _time(spec: S.TimeCmp, observed: Any) -> Result:
    return V.compare_time(observed, spec.value, seconds=spec.seconds)


@register_comparator(S.DateTimeCmp)
def _datetime(spec: S.DateTimeCmp, observed: Any) -> Result:
    return V.compare_datetime(observed, spec.value, day_first=spec.day_first, seconds=spec.seconds)


@register_comparator(S.EmailCmp)
def _email(spec: S.EmailCmp, observed: Any) -> Result:
    return V.compare_email(observed, spec.value)


@register_comparator(S.UrlCmp)
def _url(spec: S.UrlCmp, observed: Any) -> Result:
    expected = spec.value
    if spec.params is not None:
        if not isinstance(expected, str) or "?" in expected:
            return False, f"expected URL {expected!r} has a query and `params` too"
        expected += "?" + urlencode(spec.params, doseq=True)
    return V.compare_url(observed, expected, tuple(spec.ignore_params), spec.blank_is_absent,
                         tuple(sorted(spec.defaults.items())), spec.query_rules)


@register_comparator(S.MoneyCmp)
def _money(spec: S.MoneyCmp, observed: Any) -> Result:
    return V.compare_money(observed, spec.value, currency=spec.currency, decimal_comma=spec.decimal_comma)


def _cell_equal(a: Any, b: Any, how: str, case: bool) -> bool:
    if how == "exact":
        return _same_json(a, b)
    if how == "text" and case:
        return V.compare_text(a, b, case=True)[0]
    return V.compare_as(how, a, b)[0]


@register_comparator(S.TableCmp)
def _table(spec: S.TableCmp, observed: Any) -> Result:
    expected = spec.rows
    if not isinstance(observed, list) or not all(isinstance(r, dict) for r in observed):
        return False, "not a list of rows"
    if not isinstance(expected, list) or not all(isinstance(r, dict) for r in expected):
        return False, "expected rows are not a list of objects"
    if len(observed) != len(expected):
        return False, f"{len(observed)} rows, expected {len(expected)}"
    columns = spec.columns or sorted({k for r in expected for k in r})

    def row_eq(o: dict[str, Any], e: dict[str, Any]) -> bool:
        return all(c in o and c in e and _cell_equal(o[c], e[c], spec.normalize.get(c, "exact"), spec.case) for c in columns)

    if spec.ordered:
        for i, (o, e) in enumerate(zip(observed, expected)):
            if not row_eq(o, e):
                return False, f"row {i} differs: {o!r} vs {e!r}"
        return True, ""
    unmatched = list(observed)
    for e in expected:  # greedy is exact here: row equality is an equivalence per column
        for i, o in enumerate(unmatched):
            if row_eq(o, e):
                del unmatched[i]
                break
        else:
            return False, f"no row matches {e!r}"
    return True, ""


@register_comparator(S.LengthCmp)
def _length(spec: S.LengthCmp, observed: Any) -> Result:
    if not isinstance(observed, (str, list, dict)):
        return False, f"no length: {type(observed).__name__}"
    n = len(observed)
    ok = n >= spec.min and (spec.max is None or n <= spec.max)
    return ok, f"length {n}"


@register_comparator(S.PresentCmp)
def _present(spec: S.PresentCmp, observed: Any) -> Result:
    if observed is None:
        return False, "absent"
    return (bool(observed) if spec.truthy else True), ""


@register_comparator(S.AbsentCmp)
def _absent(spec: S.AbsentCmp, observed: Any) -> Result:
    ok = observed is None or observed == [] or observed == {}
    return ok, "" if ok else "present"


@register_comparator(S.RichTextCmp)
def _rich_text(spec: S.RichTextCmp, observed: Any) -> Result:
    if observed is None or isinstance(observed, (dict, list)):
        return False, f"not text: {type(observed).__name__}"
    return V.compare_rich_text(observed, spec.value, formatting=spec.formatting, case=spec.case)


@register_comparator(S.PhoneCmp)
def _phone(spec: S.PhoneCmp, observed: Any) -> Result:
    return V.compare_phone(observed, spec.value, country=spec.country)


@register_comparator(S.AddressCmp)
def _address(spec: S.AddressCmp, observed: Any) -> Result:
    if observed is None or isinstance(observed, (dict, list)):
        return False, f"not an address: {type(observed).__name__}"
    return V.compare_address(observed, spec.value)


@register_comparator(S.FormulaCmp)
def _formula(spec: S.FormulaCmp, observed: Any) -> Result:
    if spec.computes is not None:
        return V.compare_computation(observed, spec.computes)
    return V.compare_formula(observed, spec.value)


#: Types a text cell never holds: a number entered as text ('5) is not the number 5.
_NUMERIC_CELL_TYPES = frozenset({"number", "money"})


def read_cells(dump: str) -> dict[str, tuple[str, str, bool]]:
    """{REF: (formula, value, text)} from a spreadsheet reader's lines "REF<TAB>f=F<TAB>v=V";
    `text`: the reader marked the value as a text cell that reads as a number (v='5)."""
    out: dict[str, tuple[str, str, bool]] = {}
    for line in dump.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1].startswith("f=") and parts[2].startswith("v="):
            value = parts[2][2:]
            text = value.startswith("'")
            out[parts[0].replace("$", "").upper()] = (parts[1][2:], value[1:] if text else value, text)
    return out


def _same_saved_formula(saved: str, want: str) -> bool:
    """A saved formula (no "=") is the one asked for when it computes the same, re-computed
    by the sheets evaluator over perturbed cells ("SUM(B2:B4,B5:B7)" is "SUM(B2:B7)"; one
    with a constant term is not); a formula that evaluator cannot compute (COUNTA) is
    compared as written."""
    if V.computable("=" + want):
        return V.compare_computation("=" + saved, "=" + want)[0]
    return V.compare_formula(saved, want, bare=True)[0]


@register_comparator(S.CellsCmp)
def _cells(spec: S.CellsCmp, observed: Any) -> Result:
    if not isinstance(observed, str):
        return False, f"not a cell dump: {type(observed).__name__}"
    if isinstance(spec.cells, str):
        return False, f"the cells were never rendered: {spec.cells!r}"
    cells = read_cells(observed)
    for ref, want in spec.cells.items():
        got = cells.get(ref.upper())
        if got is None:
            return False, f"{ref} is empty"
        formula, value, text = got
        if want.formula is not None:
            options = [want.formula] if isinstance(want.formula, str) else want.formula
            if formula == "" or "" in options:
                ok = formula == "" and "" in options
            else:
                ok = any(_same_saved_formula(formula, f) for f in options)
            if not ok:
                return False, f"{ref} holds {('formula =' + formula) if formula else 'a plain value'}, " \
                              f"expected {' or '.join(('=' + f) if f else 'a plain value' for f in options)}"
        if want.value is not None:
            if text and want.type in _NUMERIC_CELL_TYPES:
                return False, f"{ref} holds the text {value!r}, not a {want.type}"
            ok, detail = V.compare_as(want.type, value, want.value)
            if not ok:
                return False, f"{ref}: {detail}"
    return True, ""
