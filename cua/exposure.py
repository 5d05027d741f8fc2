"""Who may reach a server cua runs: the one definition of its exposure rules, without I/O.

Both servers cua runs (the sandbox server, `cua serve`, and the policy server,
`cua policy serve`) sit next to untrusted web pages -- the sandboxes' own pages among
them -- so both apply the same rules, and both take them from here:

- a browser `Origin` not on the allow-list is refused, with or without auth: a web page
  must not drive a server just because the user's machine can reach it;
- on a loopback bind the `Host` header must name loopback too, which defeats DNS
  rebinding (a page whose name resolves to 127.0.0.1 sends its own name as Host);
- binding a non-loopback address without auth is refused unless explicitly opted out of.

Requests without an `Origin` header (every non-browser client) pass the Origin rule. The
bearer-token helpers every server shares live here too.
Plain data: this module imports nothing else of the project.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["OriginPolicy", "bearer_token", "check_bind", "generate_token", "host_name", "is_loopback", "resolve_token",
           "normalize_origins", "token_matches"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """Whether `host` (an interface to bind, or a Host header's name) is loopback only."""
    host = host.strip("[]")
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(host_header: str) -> str:
    """The name in a Host header, without its port (``[::1]:80`` -> ``::1``)."""
    if host_header.startswith("["):
        return host_header[1:].split("]", 1)[0]
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def generate_token() -> str:
    """A fresh random token for a server that was given none."""
    return secrets.token_urlsafe(24)


def resolve_token(explicit: str | None, *, env: str, no_auth: bool) -> tuple[str | None, bool]:
    """The token a server requires, and whether it was generated (so the caller prints it):
    the explicit flag, then the variable `env`, then a fresh random token. `no_auth` (an
    explicit opt-out) gives None: every connection is accepted."""
    if no_auth:
        return None, False
    if explicit:
        return explicit, False
    given = os.environ.get(env)
    if given:
        return given, False
    return generate_token(), True


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header value, else None."""
    scheme, _, value = (authorization or "").partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


def token_matches(expected: str | None, given: str | None) -> bool:
    """Whether `given` is the token `expected` (None: no token is required), compared in
    constant time; any text compares, a non-ASCII one from a URL or header included."""
    if expected is None:
        return True
    if given is None:
        return False
    return hmac.compare_digest(expected.encode("utf-8", "surrogatepass"), given.encode("utf-8", "surrogatepass"))


def check_bind(host: str, *, auth: bool, unsafe_public_no_auth: bool = False) -> None:
    """Refuse to serve a non-loopback `host` without auth, unless opted out; raises ValueError."""
    if not auth and not is_loopback(host) and not unsafe_public_no_auth:
        raise ValueError(f"refusing to serve {host} without auth: anyone who can reach it could run "
                         "commands on this host; use a token, bind 127.0.0.1, or pass --unsafe-public-no-auth")


def normalize_origins(origins: Iterable[str]) -> frozenset[str]:
    """The allow-list as compared (lower case, no trailing slash); raises ValueError for a
    wildcard or anything that is not a ``scheme://host[:port]`` origin."""
    allowed = set()
    for origin in origins:
        if origin == "*" or "://" not in origin:
            raise ValueError(f"allowed origin {origin!r} must be a scheme://host[:port] origin (no wildcards)")
        allowed.add(origin.rstrip("/").lower())
    return frozenset(allowed)


@dataclass(frozen=True)
class OriginPolicy:
    """The per-request rules of a server bound to one address (see the module docstring)."""

    allowed_origins: frozenset[str] = frozenset()
    #: Whether the Host header must name loopback (the server is bound to loopback).
    loopback_only: bool = True

    @classmethod
    def for_bind(cls, host: str, allowed_origins: Iterable[str] = ()) -> OriginPolicy:
        return cls(normalize_origins(allowed_origins), is_loopback(host))

    def refusal(self, origin: str | None, host: str | None) -> str | None:
        """Why a request with these `Origin` and `Host` headers is refused; None if it is not."""
        if origin is not None and origin.rstrip("/").lower() not in self.allowed_origins:
            return f"origin {origin!r} is not allowed"
        if self.loopback_only and host is not None and not is_loopback(host_name(host)):
            return f"host {host!r} is not loopback"
        return None

    def refusal_for_headers(self, headers: Iterable[tuple[bytes, bytes]]) -> str | None:
        """`refusal` over raw headers as ASGI gives them (lower-case names, latin-1 values)."""
        found = {name: value.decode("latin-1") for name, value in headers if name in (b"origin", b"host")}
        return self.refusal(found.get(b"origin"), found.get(b"host"))
