"""OSWorld metric functions: `metric(result, expected, **options) -> float` in [0, 1].

The ones behind the os, calc, writer, impress, text/json and chrome domains, written from
the format's public description: comparisons of command output against rules, of text,
JSON, CSV and office files (openpyxl, python-docx, python-pptx) against reference files,
and of the guest Chromium's tabs against expected URLs. Formulas and URLs compare as
the typed values of `cua.judges.values` (one equivalence class for every judge). A metric that meets an option it
does not know fails loudly (MetricError) rather than guess.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cua.judges.values import compare_formula, compare_url

__all__ = ["METRICS", "MetricError"]


class MetricError(Exception):
    """The metric cannot judge these inputs (a missing file, an unknown option)."""


def _unreadable() -> tuple[type[BaseException], ...]:
    """What the office libraries raise for a file that is not what its name says."""
    import zipfile

    out: list[type[BaseException]] = [zipfile.BadZipFile, KeyError, ValueError, OSError]
    try:
        from openpyxl.utils.exceptions import InvalidFileException

        out.append(InvalidFileException)
    except ImportError:
        pass  # without openpyxl, compare_table reports the import error itself
    for module in ("docx.opc.exceptions", "pptx.exc"):
        try:
            out.append(__import__(module, fromlist=["PackageNotFoundError"]).PackageNotFoundError)
        except (ImportError, AttributeError):
            continue  # that library is not installed
    return tuple(out)


_UNREADABLE = _unreadable()


def _known(options: dict[str, Any], allowed: set[str], name: str) -> None:
    extra = set(options) - allowed
    if extra:
        raise MetricError(f"{name}: unsupported option(s) {', '.join(sorted(extra))}")


def _text(value: Any) -> str:
    return "" if value is None else str(value)


# --- command output and plain values ---

def exact_match(result: Any, rules: dict[str, Any], **options: Any) -> float:
    _known(options, set(), "exact_match")
    return float(_text(result).strip() == _text(rules.get("expected")).strip())


def check_include_exclude(result: Any, rules: dict[str, Any], **options: Any) -> float:
    _known(options, set(), "check_include_exclude")
    text = _text(result)
    return float(all(s in text for s in rules.get("include", [])) and
                 not any(s in text for s in rules.get("exclude", [])))


def match_in_list(result: Any, rules: dict[str, Any], **options: Any) -> float:
    _known(options, set(), "match_in_list")
    return float(_text(result).strip() in [_text(x).strip() for x in rules.get("expected", [])])


def literal_match(result: Any, expected: Any, **options: Any) -> float:
    _known(options, {"type", "ignore_case"}, "literal_match")
    a, b = _text(result).strip(), _text(expected).strip()
    if options.get("ignore_case"):
        a, b = a.lower(), b.lower()
    return float(a == b)


# --- text, JSON, CSV files ---

def _read(path: Any, what: str) -> str:
    if path is None or not Path(str(path)).is_file():
        raise MetricError(f"the {what} file is missing ({path})")
    return Path(str(path)).read_text(encoding="utf-8", errors="replace")


def compare_text_file(result: Any, expected: Any, **options: Any) -> float:
    _known(options, {"ignore_blanks", "ignore_case"}, "compare_text_file")
    a, b = _read(result, "result"), _read(expected, "expected")
    if options.get("ignore_blanks"):
        a, b = re.sub(r"\s+", " ", a).strip(), re.sub(r"\s+", " ", b).strip()
    if options.get("ignore_case"):
        a, b = a.lower(), b.lower()
    return float(a == b)


def _dig(data: Any, keys: list[Any]) -> Any:
    for key in keys:
        if (isinstance(data, dict) and key in data) or \
                (isinstance(data, list) and isinstance(key, int) and -len(data) <= key < len(data)):
            data = data[key]
        else:
            raise KeyError(key)
    return data


def check_json(result: Any, rules: dict[str, Any], **options: Any) -> float:
    """Every `expect` rule ({key: [path...], method: eq|ne|in|not_in, ref}) holds in the
    result JSON file (`is_yaml` not supported)."""
    _known(options, set(), "check_json")
    if rules.get("is_yaml"):
        raise MetricError("check_json: YAML files are not supported")
    try:
        data = json.loads(_read(result, "result"))
    except json.JSONDecodeError:
        return 0.0
    for rule in rules.get("expect", []):
        try:
            value = _dig(data, list(rule["key"]))
        except KeyError:
            return 0.0
        method, ref = rule.get("method", "eq"), rule.get("ref")
        if method == "eq":
            ok = value == ref
        elif method == "ne":
            ok = value != ref
        elif method in ("in", "not_in"):
            ok = (value in ref) == (method == "in")
        else:
            raise MetricError(f"check_json: unknown method {method!r}")
        if not ok:
            return 0.0
    return 1.0


def compare_csv(result: Any, expected: Any, **options: Any) -> float:
    _known(options, set(), "compare_csv")
    rows = [list(csv.reader(_read(p, w).splitlines())) for p, w in ((result, "result"), (expected, "expected"))]
    return float(rows[0] == rows[1])


# --- office files ---

def _cells(path: Any) -> dict[str, list[list[Any]]]:
    import openpyxl

    if path is None or not Path(str(path)).is_file():
        raise MetricError(f"the spreadsheet is missing ({path})")
    book = openpyxl.load_workbook(str(path), data_only=False, read_only=True)
    out = {}
    for sheet in book.worksheets:
        rows = [list(r) for r in sheet.iter_rows(values_only=True)]
        while rows and all(v is None for v in rows[-1]):
            rows.pop()
        out[sheet.title] = [r[:max((i + 1 for i, v in enumerate(r) if v is not None), default=0)] for r in rows]
    book.close()
    return out


def _same_cell(a: Any, b: Any) -> bool:
    """A formula compared as a formula (`cua.judges.values`: `$`, case, spacing and a
    range's corner order aside), any other value as itself."""
    if isinstance(a, str) and isinstance(b, str) and a.startswith("=") and b.startswith("="):
        return compare_formula(a, b)[0]
    return bool(a == b)


def _same_book(a: dict[str, list[list[Any]]], b: dict[str, list[list[Any]]]) -> bool:
    return a.keys() == b.keys() and all(
        len(a[s]) == len(b[s]) and all(len(ra) == len(rb) and all(_same_cell(x, y) for x, y in zip(ra, rb))
                                       for ra, rb in zip(a[s], b[s])) for s in a)


def compare_table(result: Any, expected: Any, **options: Any) -> float:
    """Same sheets, same cell contents (formulas as formulas, values otherwise) as the
    reference workbook. Per-sheet `rules` are not supported."""
    _known(options, set(), "compare_table")
    try:
        return float(_same_book(_cells(result), _cells(expected)))
    except MetricError:
        if result is None or not Path(str(result)).is_file():
            return 0.0  # the agent did not save the file: a fail, not an error
        raise
    except _UNREADABLE:  # a file openpyxl cannot read is not the expected workbook
        return 0.0


def _docx_paragraphs(path: Any) -> list[str]:
    import docx

    return [p.text for p in docx.Document(str(path)).paragraphs]


def compare_docx_files(result: Any, expected: Any, **options: Any) -> float:
    _known(options, {"ignore_blanks", "ignore_case"}, "compare_docx_files")
    if result is None or not Path(str(result)).is_file():
        return 0.0
    try:
        a, b = _docx_paragraphs(result), _docx_paragraphs(expected)
    except _UNREADABLE:  # not a Word document
        return 0.0
    if options.get("ignore_blanks"):
        a, b = [re.sub(r"\s+", " ", x).strip() for x in a if x.strip()], \
            [re.sub(r"\s+", " ", x).strip() for x in b if x.strip()]
    if options.get("ignore_case"):
        a, b = [x.lower() for x in a], [x.lower() for x in b]
    return float(a == b)


def _slides(path: Any) -> list[list[str]]:
    import pptx

    out = []
    for slide in pptx.Presentation(str(path)).slides:
        out.append([shape.text_frame.text for shape in slide.shapes if shape.has_text_frame])
    return out


def compare_pptx_files(result: Any, expected: Any, **options: Any) -> float:
    _known(options, set(), "compare_pptx_files")
    if result is None or not Path(str(result)).is_file():
        return 0.0
    try:
        return float(_slides(result) == _slides(expected))
    except _UNREADABLE:  # not a presentation
        return 0.0


# --- the guest's Chromium ---

def is_expected_tabs(open_tabs: Any, rule: dict[str, Any], **options: Any) -> float:
    _known(options, set(), "is_expected_tabs")
    if rule.get("type") != "url":
        raise MetricError(f"is_expected_tabs: rule type {rule.get('type')!r} is not supported")
    urls, want = [t["url"] for t in open_tabs or []], list(rule.get("urls", []))
    return float(len(urls) == len(want) and all(compare_url(u, w)[0] for u, w in zip(urls, want)))


def is_expected_active_tab(active_tab: Any, rule: dict[str, Any], **options: Any) -> float:
    _known(options, set(), "is_expected_active_tab")
    if rule.get("type") != "url":
        raise MetricError(f"is_expected_active_tab: rule type {rule.get('type')!r} is not supported")
    return float(bool(active_tab) and compare_url(active_tab.get("url"), rule.get("url"))[0])


def infeasible(*_: Any, **__: Any) -> float:
    """A task the agent should refuse: the runner's `done(status="infeasible")` decides."""
    return 0.0


METRICS: dict[str, Callable[..., float]] = {f.__name__: f for f in (
    exact_match, check_include_exclude, match_in_list, literal_match, compare_text_file, check_json, compare_csv,
    compare_table, compare_docx_files, compare_pptx_files, is_expected_tabs, is_expected_active_tab, infeasible)}
