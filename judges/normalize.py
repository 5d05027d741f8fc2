"""Normalisation for comparing what an agent produced with what a task expects:
text (Unicode, case, whitespace, punctuation), numbers written by people, dates and
times in the formats people and apps write them, phone numbers (digits, country code),
addresses (abbreviations spelled out), rich text (what it shows, not its markup) and
spreadsheet formulas (what they reference)."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from typing import Any

__all__ = ["RichLines", "formula_refs", "norm_address", "norm_phone", "norm_text", "parse_datetime", "parse_number",
           "rich_text", "rich_text_plain", "same_shown_text", "to_text"]

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
    """Whitespace collapsed and trimmed, punctuation removed unless `punctuation` (Unicode
    categories P*; symbols such as $ stay). Without `case`: NFKC and casefolded, text as
    words ("ＢＵＹ milk" is "buy milk"). With `case`: NFC, text as shown, whose case and
    character forms a reader sees (a full-width title is another title)."""
    text = unicodedata.normalize("NFC" if case else "NFKC", to_text(value))
    if not case:
        text = text.casefold()
    if not punctuation:
        text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
    return _WS.sub(" ", text).strip()


_EMAIL_ONLY = re.compile(r"\s*[^@\s<>\"',;]+@[^@\s<>\"',;]+\.[^@\s<>\"',;]+\s*")


def same_shown_text(a: str, b: str) -> bool:
    """Whether two stored texts show the same: runs of whitespace and the ends aside, case and
    character forms kept (`norm_text` with `case`), but for two email addresses, which are
    one address whatever their case (`cua.judges.values.web.parse_email`). The judges' `~=`
    lookup and the apps' SQL `same_text` both mean this."""
    if _EMAIL_ONLY.fullmatch(a) and _EMAIL_ONLY.fullmatch(b):
        return a.strip().casefold() == b.strip().casefold()
    return norm_text(a, case=True) == norm_text(b, case=True)


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


# ---------------------------------------------------------------- phones, addresses, rich text, formulas

def norm_phone(value: Any, *, country: str = "1") -> str | None:
    """The digits of a phone number, with the country code `country` put in front of a
    national number: "+1 (555) 010-2000", "555.010.2000" and "1 555 010 2000" are all
    "15550102000". None when the value holds fewer than 7 digits or letters other than
    an extension mark ("x", "ext")."""
    if value is None or isinstance(value, bool):
        return None
    text = unicodedata.normalize("NFKC", to_text(value)).strip().lower()
    text = re.split(r"\s*(?:x|ext\.?|extension)\s*\d+$", text)[0]
    if re.search(r"[a-z]", text):
        return None
    digits = "".join(ch for ch in text if ch.isdigit())
    if text.startswith("00"):
        digits = digits[2:]
    elif not text.startswith("+") and country and len(digits) == 10:
        digits = country + digits
    return digits if len(digits) >= 7 else None


_ADDRESS_WORDS = {
    "st": "street", "str": "street", "ave": "avenue", "av": "avenue", "rd": "road", "blvd": "boulevard",
    "dr": "drive", "ln": "lane", "ct": "court", "pl": "place", "sq": "square", "hwy": "highway", "pkwy": "parkway",
    "ste": "suite", "apt": "apartment", "fl": "floor", "n": "north", "s": "south", "e": "east", "w": "west",
    "ne": "northeast", "nw": "northwest", "se": "southeast", "sw": "southwest", "no": "number", "#": "number",
}


def norm_address(value: Any) -> str:
    """An address for comparison: casefolded, punctuation dropped, the usual abbreviations
    spelled out ("St." -> "street", "Ave" -> "avenue", "Apt" -> "apartment", "N" -> "north"),
    whitespace collapsed. Line breaks and commas between parts do not matter."""
    text = norm_text(value, punctuation=False).replace("#", " # ")
    return " ".join(_ADDRESS_WORDS.get(w, w) for w in text.split())


_INLINE_EQUIV = {"strong": "b", "em": "i", "ins": "u", "strike": "s", "del": "s"}
_BLOCKS = {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "blockquote", "pre", "tr", "table",
           "br"}


RichLines = tuple[tuple[str, tuple[tuple[str, frozenset[str]], ...]], ...]
"""Rich text as `rich_text` reads it: lines of (block kind, runs of (text, inline marks))."""


def rich_text(value: Any) -> RichLines:
    """Rich text as what it shows: its lines, each (block kind, runs of (text, inline
    marks)). Tag spellings that look the same are one (`strong` = `b`, `em` = `i`; `p` and
    `div` are both a paragraph), attributes other than a link's href are ignored,
    whitespace is collapsed (a space between two bold words may be bold or not), adjacent
    runs with the same marks merge, and empty lines vanish. Plain text is one paragraph."""
    from html.parser import HTMLParser

    lines: list[tuple[str, tuple[tuple[str, frozenset[str]], ...]]] = []
    blocks: list[str] = []
    marks: list[str] = []
    pending: list[tuple[str, frozenset[str]]] = []
    # A line broken inside a list item (`<li>a<br>b</li>`) is still that one item: its
    # continuation is kept apart from a new item's line, which shows another bullet.
    continued = [False]

    def flush() -> None:
        merged: list[tuple[str, frozenset[str]]] = []
        for text, mark in pending:
            text = _WS.sub(" ", unicodedata.normalize("NFKC", text))
            if merged and merged[-1][0].endswith(" ") and text.startswith(" "):
                text = text[1:]
            if not text:
                continue
            if not merged and not text.strip():
                continue
            if merged and (merged[-1][1] == mark or not text.strip()):
                merged[-1] = (merged[-1][0] + text, merged[-1][1])
            elif merged and not merged[-1][0].strip():
                merged[-1] = (merged[-1][0] + text, mark)
            else:
                merged.append((text, mark))
        pending.clear()
        for i in range(len(merged) - 1):  # a space between two runs belongs to the later one
            if merged[i][0].endswith(" "):
                merged[i] = (merged[i][0].rstrip(), merged[i][1])
                merged[i + 1] = (" " + merged[i + 1][0].lstrip(), merged[i + 1][1])
        if merged:
            merged[0] = (merged[0][0].lstrip(), merged[0][1])
            merged[-1] = (merged[-1][0].rstrip(), merged[-1][1])
            runs = tuple((t, m) for t, m in merged if t)
            if runs:
                kind = "/".join(b for b in blocks if b not in ("p", "div")) or "p"
                lines.append((kind + "/br" if continued[0] else kind, runs))

    class _P(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tag = _INLINE_EQUIV.get(tag, tag)
            if tag in _BLOCKS:
                flush()
                continued[0] = tag == "br" and "li" in blocks
                if tag != "br":
                    blocks.append(tag)
            elif tag == "a":
                marks.append("a:" + (dict(attrs).get("href") or ""))
            elif tag in ("b", "i", "u", "s", "code", "sub", "sup", "mark"):
                marks.append(tag)

        def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.handle_starttag(tag, attrs)
            if tag not in ("br",):
                self.handle_endtag(tag)

        def handle_endtag(self, tag: str) -> None:
            tag = _INLINE_EQUIV.get(tag, tag)
            if tag in _BLOCKS and tag != "br":
                flush()
                continued[0] = False
                if tag in blocks:
                    del blocks[len(blocks) - 1 - blocks[::-1].index(tag):]
            elif tag == "a":
                for i in range(len(marks) - 1, -1, -1):
                    if marks[i].startswith("a:"):
                        del marks[i]
                        break
            elif tag in marks:
                del marks[len(marks) - 1 - marks[::-1].index(tag)]

        def handle_data(self, data: str) -> None:
            pending.append((data, frozenset(marks)))

    parser = _P(convert_charrefs=True)
    parser.feed(to_text(value))
    parser.close()
    flush()
    return tuple(lines)


def rich_text_plain(value: Any) -> str:
    """Only the text rich text shows, whitespace collapsed."""
    return _WS.sub(" ", " ".join(t for _, runs in rich_text(value) for t, _ in runs)).strip()


_REF = re.compile(r"(?<![A-Za-z0-9_])\$?([A-Za-z]{1,3})\$?(\d{1,5})(?:\s*:\s*\$?([A-Za-z]{1,3})\$?(\d{1,5}))?(?![A-Za-z0-9_(])")
_FUNC = re.compile(r"([A-Za-z][A-Za-z0-9_.]*)\s*\(")


def _col(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n


def formula_refs(value: Any) -> tuple[frozenset[str], frozenset[str]] | None:
    """(cells referenced, function names) of a spreadsheet formula, ranges expanded and
    `$` ignored ("=SUM($B$2:B4)" -> {B2, B3, B4}, {SUM}); None when the value is not a
    formula (it does not start with "="). Text inside string literals is ignored."""
    text = to_text(value).strip()
    if not text.startswith("="):
        return None
    body = re.sub(r'"[^"]*"', '""', text[1:])
    functions = frozenset(m[1].upper() for m in _FUNC.finditer(body))
    cells: set[str] = set()
    for m in _REF.finditer(body):
        c1, r1 = _col(m[1]), int(m[2])
        c2, r2 = (_col(m[3]), int(m[4])) if m[3] else (c1, r1)
        for c in range(min(c1, c2), max(c1, c2) + 1):
            for r in range(min(r1, r2), max(r1, r2) + 1):
                name = ""
                n = c
                while n:
                    n, rem = divmod(n - 1, 26)
                    name = chr(65 + rem) + name
                cells.add(f"{name}{r}")
    return frozenset(cells), functions
