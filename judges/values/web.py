"""Email addresses and URLs."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from cua.judges.values.base import Refused, Result, compare_parsed, scalar_text, strip_quotes

__all__ = ["Url", "compare_email", "compare_url", "normalize_escapes", "parse_email", "parse_url"]

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
              defaults: tuple[tuple[str, str], ...] = ()) -> Url | Refused:
    """One URL, canonical. Equivalence class: scheme and host in any case, the scheme's
    default port written or not, an empty path or "/", percent-escapes of unreserved
    characters decoded or not (other escapes in any hex case), "+" or "%20" for a space
    in the query, and query parameters in any order: they are a multiset of (name, value)
    pairs, so a parameter repeated, added or missing is another URL (they change what the
    page shows), except those named in `ignore_params` and, with `blank_is_absent`, those
    with an empty value ("?sort=price&brand=" is "?sort=price": a blank filter field
    submits as an empty parameter, and the page shows the same), and a parameter written
    with the value the page takes when it is absent (`defaults`: "?sort=featured" is no
    sort on a page whose default order is featured). The fragment is compared.
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
    pairs = Counter((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                    if k not in ignore_params and (v or not blank_is_absent) and default.get(k) != v)
    return Url(origin, path, tuple(sorted(pairs.elements())), normalize_escapes(parts.fragment))


def compare_url(observed: Any, expected: Any, ignore_params: tuple[str, ...] = (), blank_is_absent: bool = True,
                defaults: tuple[tuple[str, str], ...] = ()) -> Result:
    """Equal canonical URLs; an expected path-only URL compares the observed URL's path,
    query and fragment only (the origin is the app's)."""
    want = parse_url(expected, ignore_params, blank_is_absent, defaults)
    if isinstance(want, Refused):
        return False, f"expected value is not one URL: {want.reason}"
    got = parse_url(observed, ignore_params, blank_is_absent, defaults)
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
