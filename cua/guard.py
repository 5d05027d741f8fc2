"""The exposure rules of a token-guarded service, as the outermost ASGI layer of its app.

The rollout service and the OpenEnv server start sandboxes for whoever reaches them, so
both apply, before any route runs (those a library installs included):

- a browser `Origin` not on the allowed list is refused (403; a websocket handshake is
  closed before it is accepted), with or without the token, and on a loopback bind a
  `Host` that is not loopback is refused too (DNS rebinding): `cua.exposure.OriginPolicy`;
- every route but the open ones (`/health`) needs the token: `Authorization: Bearer TOKEN`
  over HTTP, that header or `?token=TOKEN` on a websocket. HTTP never takes the token from
  the URL: a page's no-cors request can carry neither a header nor, then, the token;
- `token=None` serves without auth (the caller has checked the bind with `check_bind`).

Refusals are counted by rule in `refused` ("origin", "token") for the service's /health.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from urllib.parse import parse_qs

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from cua.errors import CuaError, ErrorRecord, Forbidden, Unauthorized
from cua.exposure import OriginPolicy, bearer_token, token_matches

__all__ = ["ServiceGuard"]


class ServiceGuard:
    """The rules above as ASGI middleware (`app.add_middleware(ServiceGuard, ...)`, added last)."""

    def __init__(self, app: ASGIApp, origins: OriginPolicy, token: str | None, refused: Counter[str],
                 open_paths: Iterable[str] = ("/health",)) -> None:
        self.app, self.origins, self.token, self.refused = app, origins, token, refused
        self.open_paths = frozenset(open_paths)

    def _authorized(self, scope: Scope) -> bool:
        if self.token is None or scope.get("path") in self.open_paths:
            return True
        header = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"authorization"), None)
        if token_matches(self.token, bearer_token(header)):
            return True
        if scope["type"] != "websocket":
            return False
        query = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [])
        return len(query) == 1 and token_matches(self.token, query[0])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        why = self.origins.refusal_for_headers(scope.get("headers", ()))
        error: CuaError | None = None
        if why is not None:
            self.refused["origin"] += 1
            error, status, close = Forbidden(why), 403, 1008
        elif not self._authorized(scope):
            self.refused["token"] += 1
            error, status, close = Unauthorized("missing or wrong token (Authorization: Bearer TOKEN)"), 401, 4401
        if error is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":  # closed before it is accepted: the client sees HTTP 403
            await send({"type": "websocket.close", "code": close, "reason": error.message})
        else:
            headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
            record = ErrorRecord.of(error).model_dump(mode="json", exclude_none=True)
            await JSONResponse({"error": record}, status, headers=headers)(scope, receive, send)
