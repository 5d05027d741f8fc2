"""Both sides of each type's equivalence class, generated from one value: other ways to
write it (`equivalents`: a judge must pass them) and values just outside it (`near`: one
day, one minute, one cent, one character, an added or repeated parameter, two values in
one answer: a judge must fail them). Judge QA's `equivalent` probe and the property
tests use them."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from cua.judges.values import TYPES, Refused, When, parse_as, parse_email, parse_money, parse_one_number, parse_when

__all__ = ["equivalents", "near"]

Variant = tuple[str, Any]
_CENT = Decimal("0.01")


def _fmt_date(d: dt.date) -> list[str]:
    return [d.isoformat(), f"{d:%B} {d.day}, {d.year}", f"{d.day} {d:%b} {d.year}", f"{d:%A}, {d:%B} {d.day}, {d.year}"]


def _fmt_time(t: dt.time, seconds: bool = False) -> list[str]:
    twelve = f"{(t.hour % 12) or 12}:{t.minute:02d}" + (f":{t.second:02d}" if seconds else "")
    return [f"{t:%H:%M:%S}" if seconds else f"{t:%H:%M}", f"{twelve} {'PM' if t.hour >= 12 else 'AM'}",
            f"{twelve}{'pm' if t.hour >= 12 else 'am'}"]


def _when(kind: str, w: When) -> list[str]:
    if kind == "time" and w.time is not None:
        return _fmt_time(w.time, bool(w.time.second))
    dates = _fmt_date(w.date) if w.date is not None else []
    if w.time is None:
        return dates
    times = _fmt_time(w.time, bool(w.time.second))
    return [f"{d} {t}" for d, t in zip(dates, times + times[:1])] + [f"{w.date.isoformat()}T{w.time:%H:%M:%S}"
                                                                   if w.date is not None else ""]


def _letter_changed(text: str) -> str | None:
    """`text` with its last letter replaced by another letter (differs in any case)."""
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        if ch.isascii() and ch.isalpha():
            new = "b" if ch.lower() == "a" else "a"
            return text[:i] + (new.upper() if ch.isupper() else new) + text[i + 1:]
    return None


def _digit_changed(text: str, last: bool = True) -> str | None:
    positions = [i for i, ch in enumerate(text) if ch.isdigit()]
    if not positions:
        return None
    i = positions[-1] if last else positions[0]
    return text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1:]


_ABBR = {"street": "St.", "avenue": "Ave", "road": "Rd", "boulevard": "Blvd", "drive": "Dr", "lane": "Ln",
         "apartment": "Apt", "suite": "Ste", "north": "N", "south": "S", "east": "E", "west": "W"}
_FULL = {v.lower().rstrip("."): k.capitalize() for k, v in _ABBR.items()}


def _respelled(value: str) -> str:
    def swap(m: re.Match[str]) -> str:
        low = m[0].lower().rstrip(".")
        return _ABBR.get(low) or _FULL.get(low) or m[0]
    return re.sub(r"[A-Za-z]+\.?", swap, value)


def equivalents(kind: str, value: Any) -> list[Variant]:
    """(what, value) pairs in `value`'s equivalence class as type `kind`, each different
    from `value` as written; none when `value` is not one value of the type."""
    if kind not in TYPES or isinstance(parse_as(kind, value), Refused):
        return []
    text = str(value).strip()
    out: list[Variant] = []
    if kind in ("date", "time", "datetime"):
        w = parse_when(value)
        assert isinstance(w, When)
        out += [("written in another format", v) for v in _when(kind, w) if v]
    elif kind == "number":
        x = parse_one_number(value)
        assert isinstance(x, float)
        out += [("with grouping and two decimals", f"{x:,.2f}"), ("as a bare number", f"{x:g}" if abs(x) < 1e15 else text)]
    elif kind == "money":
        m = parse_money(value)
        assert not isinstance(m, Refused)
        cur, amount = m
        out += [("grouped, the currency first", f"{cur or ''} {amount:,.2f}".strip()),
                ("ungrouped, the currency after", f"{amount:.2f} {cur or ''}".strip())]
        if cur == "USD":
            out.append(("with the symbol", f"${amount:,.2f}" if amount >= 0 else f"-${-amount:,.2f}"))
    elif kind == "email":
        e = parse_email(value)
        assert isinstance(e, str)
        out += [("in upper case", e.upper()), ("with a display name", f"Someone <{e}>"), ("as a mailto: link", "mailto:" + e)]
    elif kind == "url":
        parts = urlsplit(text)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        if len(pairs) > 1:
            out.append(("its parameters in another order", urlunsplit(parts._replace(query=urlencode(pairs[::-1])))))
        letter = re.search(r"[A-Za-z]", parts.path)
        if letter:
            i = letter.start()
            escaped = parts.path[:i] + f"%{ord(parts.path[i]):02x}" + parts.path[i + 1:]
            out.append(("a letter of its path percent-escaped", urlunsplit(parts._replace(path=escaped))))
        if parts.scheme and parts.hostname:
            port = {"http": 80, "https": 443}.get(parts.scheme.lower())
            host = parts.hostname.upper() + (f":{parts.port or port}" if (parts.port or port) else "")
            out.append(("host in upper case, port written", urlunsplit(parts._replace(netloc=host,
                                                                                      scheme=parts.scheme.upper()))))
    elif kind == "text":
        out += [("in enclosing quotes", f'"{text}"'), ("in typographic quotes", f"\u201c{text}\u201d")]
        if re.search(r"[A-Za-z]", text):
            out.append(("in other letter case", text.lower() if text.lower() != text else text.upper()))
        if " " in text:
            out.append(("with doubled inner spaces", re.sub(r"(?<=\S) (?=\S)", "  ", text)))
    elif kind == "rich_text":
        swap = {"b": "strong", "strong": "b", "i": "em", "em": "i", "p": "div", "div": "p"}
        out.append(("in other markup", re.sub(r"<(/?)(\w+)(\s[^>]*)?>", lambda m: f"<{m[1]}{swap.get(m[2], m[2])}"
                                               f"{m[3] or ''}>", text)))
        if "<" not in text:
            out.append(("as a paragraph", f"<p>{text}</p>"))
    elif kind == "formula":
        body = text[1:] if text.startswith("=") else text
        head = "=" if text.startswith("=") else ""
        out += [("with absolute references", head + re.sub(r"(?<![A-Za-z0-9_$])([A-Za-z]{1,3})(\d+)", r"$\1$\2", body)),
                ("in lower case, spaced", head + re.sub(r"([,+*/()])", r" \1 ", body).lower())]
    elif kind == "phone":
        digits = "".join(ch for ch in text if ch.isdigit())
        if len(digits) >= 10:
            out += [("grouped with dots", ".".join([digits[-10:-7], digits[-7:-4], digits[-4:]])),
                    ("with its country code", f"+1 ({digits[-10:-7]}) {digits[-7:-4]}-{digits[-4:]}")]
    elif kind == "address":
        out += [("abbreviations respelled", _respelled(text)), ("in upper case", text.upper())]
    return [(w, v) for w, v in out if v != value and v != text and not isinstance(parse_as(kind, v), Refused)]


def near(kind: str, value: Any, *, step: float = 0.0) -> list[Variant]:
    """(what, value) pairs just outside `value`'s equivalence class as type `kind`: the
    nearest other value and, for scalar types, two values in one answer (the right one
    first). `step` is how far a number must move to leave a comparator's tolerance."""
    if kind not in TYPES or isinstance(parse_as(kind, value), Refused):
        return []
    text = str(value).strip()
    out: list[Variant] = []
    if kind in ("date", "time", "datetime"):
        w = parse_when(value)
        assert isinstance(w, When)
        if kind != "time" and w.date is not None:
            other = When(w.date + dt.timedelta(days=1), w.time)
            out += [("one day later", _when(kind, other)[0]), ("two dates", f"{_when(kind, w)[0]} or {_when(kind, other)[0]}")]
        if kind != "date" and w.time is not None:
            base = dt.datetime.combine(w.date or dt.date(2000, 1, 1), w.time)
            later = (base + dt.timedelta(minutes=1))
            other = When(later.date() if w.date else None, later.time())
            out += [("one minute later", _when(kind, other)[0]),
                    ("two times", f"{_when(kind, w)[0]} or {_fmt_time((base + dt.timedelta(hours=1)).time())[0]}")]
    elif kind == "number":
        x = parse_one_number(value)
        assert isinstance(x, float)
        decimals = len(text.split(".")[1]) if re.fullmatch(r"-?[\d,]*\.\d+", text) else 0
        delta = max(step * 2, 10 ** -decimals)
        bigger = f"{x + delta:.{decimals}f}" if step == 0 else f"{x + delta:.6f}".rstrip("0").rstrip(".")
        out += [("the next value", bigger), ("two numbers", f"{text} or {bigger}")]
    elif kind == "money":
        m = parse_money(value)
        assert not isinstance(m, Refused)
        cur, amount = m
        out += [("one cent more", f"{amount + _CENT:.2f} {cur or ''}".strip()),
                ("two amounts", f"{amount:.2f} or {amount + 1:.2f} {cur or ''}".strip())]
        if cur is not None:
            out.append(("another currency", f"{amount:.2f} {'EUR' if cur != 'EUR' else 'USD'}"))
    elif kind == "email":
        e = parse_email(value)
        assert isinstance(e, str)
        local, _, domain = e.partition("@")
        changed = _letter_changed(local) or _digit_changed(local)
        if changed:
            out.append(("another mailbox", f"{changed}@{domain}"))
        out += [("two addresses", f"{e}, other.{local}@{domain}"), ("another domain", f"{local}@x{domain}")]
    elif kind == "url":
        parts = urlsplit(text)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        out.append(("an added parameter", urlunsplit(parts._replace(query=urlencode([*pairs, ("page", "2")])))))
        filled = [i for i, (_, v) in enumerate(pairs) if v]
        if filled:
            k, v = pairs[filled[0]]
            out.append(("a repeated parameter", urlunsplit(parts._replace(query=urlencode([*pairs, (k, v + "x")])))))
            rest = pairs[:filled[0]] + pairs[filled[0] + 1:]
            out.append(("a parameter dropped", urlunsplit(parts._replace(query=urlencode(rest)))))
        out.append(("another path", urlunsplit(parts._replace(path=(parts.path or "/").rstrip("/") + "/x"))))
    elif kind == "text":
        changed = _letter_changed(text) or _digit_changed(text)
        if changed:
            out.append(("one character changed", changed))
    elif kind == "rich_text":
        changed = _changed_text(text)
        if changed:
            out.append(("one character changed", changed))
        if re.search(r"<(b|strong|i|em|u)>", text):
            out.append(("a mark dropped", re.sub(r"</?(b|strong|i|em|u)>", "", text, count=2)))
    elif kind == "formula":
        changed = _digit_changed(text)
        if changed:
            out.append(("a reference moved", changed))
        out.append(("typed as a value", "0"))
    elif kind == "phone":
        changed = _digit_changed(text)
        if changed:
            out += [("one digit changed", changed), ("two numbers", f"{text} or {changed}")]
    elif kind == "address":
        changed = _digit_changed(text, last=False) or _letter_changed(text)
        if changed:
            out.append(("another number", changed))
    return [(w, v) for w, v in out if v != value]



def _changed_text(html: str) -> str | None:
    """Rich text with the last letter of its shown text changed (markup kept)."""
    pieces = re.split(r"(<[^>]*>)", html)
    for i in range(len(pieces) - 1, -1, -1):
        if not pieces[i].startswith("<"):
            changed = _letter_changed(pieces[i])
            if changed is not None:
                pieces[i] = changed
                return "".join(pieces)
    return None
