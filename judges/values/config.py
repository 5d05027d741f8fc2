"""Configuration files judged as what they configure: an INI file is its settings, not its
text. An agent that writes `key=new` for `key = new`, drops a comment or puts the keys in
another order configures the same program; one that adds, drops or changes a setting, or
writes one key twice, does not.
"""

from __future__ import annotations

import configparser
from typing import Any

from cua.judges.values.base import Refused, Result

__all__ = ["Ini", "compare_ini", "parse_ini"]

#: The settings of an INI file: (section, ((key, value), ...)) pairs, both levels sorted.
Ini = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]

#: configparser treats a section named DEFAULT as defaults inherited by every section; here
#: no name is special, so `[DEFAULT]` is a section like any other and nothing is copied.
_NO_DEFAULT_SECTION = "\x00no default section"


def _parser() -> configparser.ConfigParser:
    return configparser.ConfigParser(strict=True, interpolation=None, delimiters=("=", ":"),
                                     comment_prefixes=("#", ";"), inline_comment_prefixes=None,
                                     default_section=_NO_DEFAULT_SECTION)


def parse_ini(value: Any) -> Ini | Refused:
    """An INI file's settings, canonical, read as Python's `configparser` reads them
    (strict, no interpolation, `=` or `:` between key and value, `#`/`;` full-line comments).

    Equivalence class: the same sections, each with the same keys holding the same values,
    whatever the whitespace around `=`/`:` or at the ends of a value, `=` or `:`, the letter
    case of a key (configparser folds it to lower case; a section name keeps its case),
    comment lines, blank lines, and the order of sections and of keys.
    Not equivalent: another value (compared as text after trimming, case kept: the program
    reads it so), a key or section added or missing (an empty section counts), a key moved
    into another section.
    Refused: text that does not parse (a line outside any section, a key without a value),
    a key written twice in one section or a section written twice (a hedge: which one the
    program reads is not the file's to say), anything that is not text."""
    if not isinstance(value, str):
        return Refused(f"not the text of an INI file: {type(value).__name__}")
    parser = _parser()
    try:
        parser.read_string(value)
    except (configparser.DuplicateSectionError, configparser.DuplicateOptionError) as exc:
        return Refused(f"INI file sets a key or section twice: {exc.message}")
    except configparser.Error as exc:
        return Refused(f"not an INI file: {exc.message}")
    return tuple(sorted((name, tuple(sorted((k, v.strip()) for k, v in parser.items(name, raw=True))))
                        for name in parser.sections()))


def _differences(got: Ini, want: Ini) -> str:
    have = {(s, k): v for s, items in got for k, v in items}
    need = {(s, k): v for s, items in want for k, v in items}
    notes = [f"[{s}] {k} = {have[s, k]!r}, expected {v!r}" for (s, k), v in need.items() if (s, k) in have and have[s, k] != v]
    notes += [f"[{s}] {k} missing" for (s, k) in need if (s, k) not in have]
    notes += [f"[{s}] {k} added" for (s, k) in have if (s, k) not in need]
    sections_got, sections_want = {s for s, _ in got}, {s for s, _ in want}
    notes += [f"section [{s}] missing" for s in sorted(sections_want - sections_got)]
    notes += [f"section [{s}] added" for s in sorted(sections_got - sections_want)]
    return "INI settings differ: " + "; ".join(notes)


def compare_ini(observed: Any, expected: Any) -> Result:
    """The observed file's settings equal the expected file's, every one of them: a setting
    the task did not ask for, added or changed, fails as surely as the asked one missing."""
    want = parse_ini(expected)
    if isinstance(want, Refused):
        return False, f"expected value is not one INI file: {want.reason}"
    got = parse_ini(observed)
    if isinstance(got, Refused):
        return False, got.reason
    if got == want:
        return True, ""
    return False, _differences(got, want)
