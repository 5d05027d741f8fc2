"""Who is asking, and what they may do: bearer tokens, principals and scopes.

Every credential resolves to a `Grant`: a principal (the name sandboxes are owned by)
and its scopes.

- `drive`: create sandboxes and act in them (own connection's, and the principal's kept ones);
- `view`: watch the principal's sandboxes (observe, stream, query, list), for live viewers
  and reports;
- `admin`: list every sandbox and close any.

The server's own token (`--token`, `$CUA_TOKEN`, or generated) is the operator's: all
three scopes, principal `operator`. Further tokens are issued into a token file
(`cua token issue --file F`), which the server (`cua serve --tokens F`) re-reads when it
changes, so issuing and revoking need no restart; a revoked token's open connections
are closed at their next request. The file holds only SHA-256 digests of tokens.

Without auth (`--no-auth`, loopback only) everyone is the principal `anonymous` with
`drive` and `view`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from cua.exposure import bearer_token, generate_token, token_matches
from cua.exposure import resolve_token as resolve_any_token

__all__ = ["ANONYMOUS", "OPERATOR", "SCOPES", "Grant", "Scope", "TokenStore", "bearer_token", "generate_token",
           "issue_token", "list_tokens", "resolve_token", "revoke_token", "token_matches"]

TOKEN_ENV = "CUA_TOKEN"
TOKENS_FILE_ENV = "CUA_TOKENS_FILE"

Scope = Literal["drive", "view", "admin"]
SCOPES: tuple[Scope, ...] = get_args(Scope)


@dataclass(frozen=True, slots=True)
class Grant:
    principal: str
    scopes: frozenset[Scope]
    #: "operator" for the server's own token, "anonymous" without auth, else the issued token's id.
    token_id: str

    def has(self, scope: Scope) -> bool:
        return scope in self.scopes


OPERATOR = Grant("operator", frozenset(SCOPES), "operator")
ANONYMOUS = Grant("anonymous", frozenset({"drive", "view"}), "anonymous")


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def resolve_token(explicit: str | None, *, no_auth: bool) -> tuple[str | None, bool]:
    """The token `cua serve` requires (the flag, then $CUA_TOKEN, then a fresh one), and
    whether it was generated; see `cua.exposure.resolve_token`."""
    return resolve_any_token(explicit, env=TOKEN_ENV, no_auth=no_auth)


# --- the token file ------------------------------------------------------------------

def _read_file(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, list):
        raise ValueError(f"{path}: not a cua token file (no `tokens` list)")  # noqa: TRY004 -- bad file content
    return [t for t in tokens if isinstance(t, dict)]


def _write_file(path: Path, tokens: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump({"version": 1, "tokens": tokens}, f, indent=1)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)  # readers see the old file or the new one, never half of one
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _check_scopes(scopes: Iterable[str]) -> list[Scope]:
    out: list[Scope] = []
    for scope in scopes:
        if scope not in SCOPES:
            raise ValueError(f"unknown scope {scope!r}; scopes are {', '.join(SCOPES)}")
        if scope not in out:
            out.append(scope)
    if not out:
        raise ValueError("a token needs at least one scope")
    return out


def issue_token(path: Path, principal: str, scopes: Iterable[str]) -> tuple[str, dict[str, Any]]:
    """Add a token to the file; returns (the token, its entry). The token itself is not stored."""
    if not principal or len(principal) > 128 or not principal.isprintable():
        raise ValueError("the principal is a printable name of 1 to 128 characters")
    if principal in (OPERATOR.principal, ANONYMOUS.principal):
        raise ValueError(f"principal {principal!r} is reserved")
    checked = _check_scopes(scopes)
    tokens = _read_file(path)
    token = generate_token()
    entry = {"id": f"tok-{secrets.token_hex(4)}", "principal": principal, "scopes": checked,
             "sha256": _digest(token), "created_at": time.time(), "revoked_at": None}
    tokens.append(entry)
    _write_file(path, tokens)
    return token, entry


def revoke_token(path: Path, token_id: str) -> bool:
    """Mark a token revoked; False when the file has no live token with that id."""
    tokens = _read_file(path)
    for entry in tokens:
        if entry.get("id") == token_id and entry.get("revoked_at") is None:
            entry["revoked_at"] = time.time()
            _write_file(path, tokens)
            return True
    return False


def list_tokens(path: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in t.items() if k != "sha256"} for t in _read_file(path)]


class TokenStore:
    """Resolves bearer tokens to grants: the operator's token, then the token file's live
    entries (re-read when the file's mtime or size changes)."""

    def __init__(self, operator_token: str | None, tokens_file: Path | None = None) -> None:
        self.operator_token = operator_token
        self.tokens_file = tokens_file
        self._stamp: tuple[float, int] | None = None
        self._by_digest: dict[str, Grant] = {}
        self._live_ids: set[str] = set()
        self._refresh()

    @property
    def auth_required(self) -> bool:
        return self.operator_token is not None

    def _refresh(self) -> None:
        if self.tokens_file is None:
            return
        try:
            st = self.tokens_file.stat()
            stamp: tuple[float, int] | None = (st.st_mtime, st.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp == self._stamp:
            return
        by_digest: dict[str, Grant] = {}
        try:
            entries = _read_file(self.tokens_file) if stamp is not None else []
        except (OSError, ValueError):
            return  # a half-edited file: keep the last good view
        for entry in entries:
            if entry.get("revoked_at") is not None:
                continue
            try:
                scopes = frozenset(_check_scopes(entry.get("scopes") or ()))
                grant = Grant(str(entry["principal"]), scopes, str(entry["id"]))
                by_digest[str(entry["sha256"])] = grant
            except (KeyError, ValueError):
                continue
        self._stamp = stamp
        self._by_digest = by_digest
        self._live_ids = {g.token_id for g in by_digest.values()}

    def authenticate(self, token: str | None) -> Grant | None:
        """The grant of a presented token; None when it is missing or wrong. Without auth
        every caller is anonymous (a presented token is then ignored)."""
        if self.operator_token is None:
            return ANONYMOUS
        if token is None:
            return None
        if hmac.compare_digest(self.operator_token.encode("utf-8", "surrogatepass"),
                               token.encode("utf-8", "surrogatepass")):
            return OPERATOR
        self._refresh()
        return self._by_digest.get(_digest(token))

    def live(self, grant: Grant) -> bool:
        """Whether a grant is still valid (issued tokens can be revoked while in use)."""
        if grant.token_id in (OPERATOR.token_id, ANONYMOUS.token_id):
            return True
        self._refresh()
        return grant.token_id in self._live_ids
