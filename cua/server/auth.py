"""Bearer-token auth: one shared token per server, compared in constant time."""

from __future__ import annotations

import hmac
import os
import secrets

__all__ = ["bearer_token", "generate_token", "resolve_token", "token_matches"]

TOKEN_ENV = "CUA_TOKEN"


def generate_token() -> str:
    return secrets.token_urlsafe(24)


def resolve_token(explicit: str | None, *, no_auth: bool) -> tuple[str | None, bool]:
    """The token to require, and whether it was generated (so the caller prints it).

    Order: the explicit flag, then $CUA_TOKEN, then a fresh random token. `no_auth`
    (an explicit opt-out) gives None: every connection is accepted.
    """
    if no_auth:
        return None, False
    if explicit:
        return explicit, False
    env = os.environ.get(TOKEN_ENV)
    if env:
        return env, False
    return generate_token(), True


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header value, else None."""
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def token_matches(expected: str | None, given: str | None) -> bool:
    if expected is None:
        return True
    if given is None:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())
