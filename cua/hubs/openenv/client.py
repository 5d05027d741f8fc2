"""`CuaEnvClient`: OpenEnv's websocket client (`EnvClient`) for cua's server, typed.

OpenEnv's environments each ship their client as a subclass of its `EnvClient`; this one
parses cua's observation and state, passes the server's token (`?token=` on the websocket,
which the kit's guard accepts: `EnvClient` sends no headers), and raises the typed
`cua.errors` for the server's error replies instead of a bare `RuntimeError`:
`VALIDATION_ERROR` (a wrong action or reset parameter) is `BadRequest` and the session goes
on; `CAPACITY_REACHED` is `Capacity` (retryable); an environment's error
(`EXECUTION_ERROR`, carried as `[code] message`) is rebuilt from its code.

    async with CuaEnvClient(url, token=token) as env:
        result = await env.reset(task="fake.set_counter@1", seed=3)
        result = await env.step(CuaAction(action=Click(x=10, y=20)))
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from websockets.exceptions import ConnectionClosed

from cua.errors import BadRequest, Capacity, CuaError, InternalError, error_for_code
from cua.hubs.openenv.models import CuaAction, CuaObservation, CuaState

__all__ = ["CuaEnvClient", "wire_error"]

_CODED = re.compile(r"\[([a-z_]+)\] (.*)", re.DOTALL)


def wire_error(data: dict[str, Any]) -> CuaError:
    """The typed error of an OpenEnv websocket error reply's `data` ({"message", "code", ...})."""
    code, message = str(data.get("code", "")), str(data.get("message", ""))
    if code in ("VALIDATION_ERROR", "INVALID_JSON", "UNKNOWN_TYPE"):
        return BadRequest(message, details={k: v for k, v in data.items() if k not in ("code", "message")})
    if code == "CAPACITY_REACHED":
        return Capacity(message, details={k: data[k] for k in ("active_sessions", "max_sessions") if k in data})
    coded = _CODED.fullmatch(message) if code == "EXECUTION_ERROR" else None
    if coded is not None:
        return error_for_code(coded.group(1), coded.group(2))
    return InternalError(f"[{code}] {message}")


class CuaEnvClient(EnvClient[CuaAction, CuaObservation, CuaState]):
    def __init__(self, base_url: str, *, token: str | None = None, **kwargs: Any) -> None:
        super().__init__(base_url, **kwargs)
        if token:
            self._ws_url = f"{self._ws_url}?token={quote(token, safe='')}"

    def _step_payload(self, action: CuaAction) -> dict[str, Any]:
        payload: dict[str, Any] = action.model_dump(mode="json", exclude_defaults=True)
        payload["action"] = action.action.model_dump(mode="json")
        return payload

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CuaObservation]:
        obs = CuaObservation.model_validate({**payload.get("observation", {}), "reward": payload.get("reward"),
                                             "done": payload.get("done", False)})
        return StepResult(observation=obs, reward=obs.reward, done=obs.done)

    def _parse_state(self, payload: dict[str, Any]) -> CuaState:
        return CuaState.model_validate(payload)

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            await self._send(message)
        except ConnectionClosed:
            # the server refuses a session past its limit as soon as it is opened, then closes
            # it: its error reply is the one message still to be read
            try:
                response = await self._receive()
            except ConnectionClosed:
                raise InternalError("the OpenEnv server closed the session") from None
            if response.get("type") == "error":
                raise wire_error(response.get("data", {})) from None
            raise
        response = await self._receive()
        if response.get("type") == "error":
            raise wire_error(response.get("data", {}))
        return response
