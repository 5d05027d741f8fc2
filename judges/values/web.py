"""Email addresses and URLs."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from cua.judges.values.base import Refused, Result, compare_parsed, scalar_text, strip_quotes

__all__ = ["QueryRule", "Url", "compare_email", "compare_url", "normalize_escapes", "parse_email", "parse_url", "read_query"]

_ADDR = re.compile(r"[^\s@<>,;:\"()\[\]]+@[^\s@<>,;:\"()\[\]]+\.[^\s@<>,;:\"()\[\]]+")


def parse_email(value: Any) -> str | Refused:
    """One email address, canonical. Equivalence class: the same address whatever its
    letter case (domains are case-insensitive by the DNS, and in practice every mail
    system treats the local part so too), enclosing quotes, a `mailto:` prefix, a
    display name around it ("Ana Diaz <ana@x.org>") or a trailing dot on the domain.
    Not equivalent: dots or a "+tag" in the local part (another mailbox on most systems).
    Refused: no address, or more than one ("a@x.org, b@x.org")."""
    text = scalar_text(value, "email address")
    if isinstance(text, Refused):
        return text
    text = strip_quotes(text)
    found = _ADDR.findall(text.replace("mailto:", " ").replace("MAILTO:", " "))
    if len(found) != 1 or text.count("@") != 1:
        return Refused(f"not one email address: {text!r}" if found else f"not an email address: {text!r}")
    local, _, domain = found[0].rpartition("@")
    rest = text.replace(found[0], " ", 1)
    named = re.fullmatch(r"\s*(?:mailto:)?\s*|\s*[^<>@]*<\s*>\s*", rest, re.I)
    if named is None:
        return Refused(f"more than an email address: {text!r}")
    return f"{local.casefold()}@{domain.rstrip('.').casefold()}"


def compare_email(observed: Any, expected: Any) -> Result:
    return compare_parsed(parse_email, observed, expected, "email address")


_UNRESERVED = re.compile(r"%([0-9A-Fa-f]{2})")
_DEFAULT_PORT = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}


def normalize_escapes(text: str) -> str:
    """Percent-encoding normalised: unreserved characters decoded, other escapes upper case."""
    def one(m: re.Match[str]) -> str:
        ch = chr(int(m[1], 16))
        return ch if (ch.isascii() and (ch.isalnum() or ch in "-._~")) else "%" + m[1].upper()
    return _UNRESERVED.sub(one, text)


@dataclass(frozen=True)
class QueryRule:
    """How an app reads one query parameter: plain data, declared once by the app
    (`WebApp.query_params`), read by the app's own routes through `read_query` and by the
    `url` comparator, so a URL is judged by what the app makes of it, not by its text.

    The raw value is trimmed (`strip`), reduced to the first group of `extract` where that
    matches ("Atlanta (ATL)" -> "ATL"), mapped through `aliases` (keys casefolded: a unique
    city name -> its code) unless it already is one of `choices`, put in `case`, and read as
    an integer (`integer`, no lower than `minimum`) or as an on/off switch (`flag`: any
    non-empty value is "1"). A value that is blank, not an integer, or not one of `choices`
    reads as `default` when `otherwise` is "default" (None: as if absent) and stays as it
    is when "keep" (the app shows an error for it). A single-valued parameter is read from
    its last occurrence (as Starlette's `QueryParams.get` does); a `multi` one is the set of
    its values (`getlist`, used as membership)."""

    default: str | None = None
    strip: bool = False
    extract: str | None = None
    aliases: tuple[tuple[str, str], ...] = ()
    case: Literal["exact", "upper", "lower"] = "exact"
    choices: tuple[str, ...] = ()
    integer: bool = False
    minimum: int | None = None
    flag: bool = False
    multi: bool = False
    otherwise: Literal["default", "keep"] = "default"

    def canonical(self, raw: str) -> str | None:
        """The value the app takes for `raw`; None: the parameter reads as absent."""
        text = raw.strip() if self.strip else raw
        if self.flag:
            return "1" if text else self.default
        if not text:
            return self.default
        whole = text
        if self.extract is not None and (m := re.search(self.extract, text)) is not None:
            text = m.group(1)
        cased = text.upper() if self.case == "upper" else text.lower() if self.case == "lower" else text
        if self.aliases and cased not in self.choices:
            cased = dict(self.aliases).get(whole.casefold(), cased)
        if self.integer:
            if not cased.isdigit():
                return self.default if self.otherwise == "default" else cased
            number = int(cased)
            cased = str(max(number, self.minimum) if self.minimum is not None else number)
        if self.choices and cased not in self.choices:
            return self.default if self.otherwise == "default" else cased
        return cased


def read_query(rules: Mapping[str, QueryRule], pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The declared parameters as the app reads them: name -> canonical value (a str, or
    None for absent) or, for a `multi` rule, the sorted list of distinct values."""
    seen: dict[str, list[str]] = {}
    for key, value in pairs:
        if key in rules:
            seen.setdefault(key, []).append(value)
    out: dict[str, Any] = {}
    for key, rule in rules.items():
        values = seen.get(key, [])
        if rule.multi:
            out[key] = sorted({c for c in (rule.canonical(v) for v in values) if c is not None})
        else:
            out[key] = rule.canonical(values[-1]) if values else rule.default
    return out


def _canonical_pairs(rules: Mapping[str, QueryRule], pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The parameters as the app reads them, those at their default dropped (the same
    page). An undeclared one is dropped too: an app that declares its parameters declares
    every one its pages read (its routes read no other, tests/judges/test_judge_url_apps.py), so
    one it does not declare changes nothing it shows."""
    read = read_query(rules, pairs)
    out: list[tuple[str, str]] = []
    for key, rule in rules.items():
        value = read[key]
        if rule.multi:
            out += [(key, v) for v in value]
        elif value is not None and value != rule.default:
            out.append((key, value))
    return out


@dataclass(frozen=True)
class Url:
    """A URL's canonical parts; `origin` is None for a path-only URL ("/c/shoes?sort=x")."""

    origin: tuple[str, str, int | None] | None
    path: str
    query: tuple[tuple[str, str], ...]  # sorted pairs: a multiset
    fragment: str

    def show(self) -> str:
        head = f"{self.origin[0]}://{self.origin[1]}" + (f":{self.origin[2]}" if self.origin[2] else "") \
            if self.origin else ""
        query = "&".join(f"{k}={v}" for k, v in self.query)
        return head + self.path + (f"?{query}" if query else "") + (f"#{self.fragment}" if self.fragment else "")


def parse_url(value: Any, ignore_params: tuple[str, ...] = (), blank_is_absent: bool = True,
              defaults: tuple[tuple[str, str], ...] = (), rules: Mapping[str, QueryRule] | None = None) -> Url | Refused:
    """One URL, canonical. Equivalence class: scheme and host in any case, the scheme's
    default port written or not, an empty path or "/", percent-escapes of unreserved
    characters decoded or not (other escapes in any hex case), "+" or "%20" for a space
    in the query, and query parameters in any order: they are a multiset of (name, value)
    pairs, so a parameter repeated, added or missing is another URL (they change what the
    page shows), except those named in `ignore_params` and, with `blank_is_absent`, those
    with an empty value ("?sort=price&brand=" is "?sort=price": a blank filter field
    submits as an empty parameter, and the page shows the same), and a parameter written
    with the value the page takes when it is absent (`defaults`: "?sort=featured" is no
    sort on a page whose default order is featured). With `rules` (the app's declared
    parameters, `QueryRule`), each declared parameter is compared as the app reads it: "from=atl"
    is "from=ATL", "page=1" is no page, "sort=bogus" is the default sort, and of "sort=a&sort=b"
    only the last counts; a parameter the app does not declare (it reads none) is ignored.
    The fragment is compared.
    Not equivalent: a trailing slash ("/a/" is not "/a": servers may route them apart).
    Refused: no URL, or text holding more than one (whitespace inside)."""
    text = scalar_text(value, "URL")
    if isinstance(text, Refused):
        return text
    text = strip_quotes(text)
    if not text or re.search(r"\s", text):
        return Refused(f"not one URL: {text!r}")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        return Refused(f"not a URL: {text!r} ({exc})")
    origin: tuple[str, str, int | None] | None = None
    if parts.scheme or parts.netloc:
        scheme = parts.scheme.lower()
        if not parts.hostname:
            return Refused(f"not a URL (no host): {text!r}")
        if port == _DEFAULT_PORT.get(scheme):
            port = None
        origin = (scheme, parts.hostname.rstrip(".").lower(), port)
    elif not text.startswith(("/", "?", "#")):
        return Refused(f"not a URL (no scheme, not a path): {text!r}")
    path = normalize_escapes(parts.path) or "/"
    default = dict(defaults)
    written = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in ignore_params]
    if rules:
        written = _canonical_pairs(rules, written)
    pairs = Counter((k, v) for k, v in written if (v or not blank_is_absent or k in (rules or {})) and default.get(k) != v)
    return Url(origin, path, tuple(sorted(pairs.elements())), normalize_escapes(parts.fragment))


def compare_url(observed: Any, expected: Any, ignore_params: tuple[str, ...] = (), blank_is_absent: bool = True,
                defaults: tuple[tuple[str, str], ...] = (), rules: Mapping[str, QueryRule] | None = None) -> Result:
    """Equal canonical URLs; an expected path-only URL compares the observed URL's path,
    query and fragment only (the origin is the app's)."""
    want = parse_url(expected, ignore_params, blank_is_absent, defaults, rules)
    if isinstance(want, Refused):
        return False, f"expected value is not one URL: {want.reason}"
    got = parse_url(observed, ignore_params, blank_is_absent, defaults, rules)
    if isinstance(got, Refused):
        return False, got.reason
    if want.origin is None:
        got = Url(None, got.path, got.query, got.fragment)
    if got == want:
        return True, ""
    extra = Counter(got.query) - Counter(want.query)
    missing = Counter(want.query) - Counter(got.query)
    why = f"; extra parameters {sorted(extra.elements())}" if extra else ""
    why += f"; missing parameters {sorted(missing.elements())}" if missing else ""
    return False, f"URL {got.show()} != {want.show()}{why}"
