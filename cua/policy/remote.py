"""`RemotePolicy`: a `Policy` that asks a running `cua policy serve` over HTTP.

Screenshots go as multipart binary (no base64 inflation); the connection is kept alive
across calls. Server errors come back as the typed `cua.errors` they were raised as;
an unreachable server or a timeout is an infrastructure error (`InternalError`,
`Timeout`), never a parse error.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx

from cua.errors import CuaError, InternalError, Timeout, error_for_code
from cua.observation import Observation
from cua.policy.base import PolicyOptions, PolicyStep
from cua.policy.wire import encode_act_header

__all__ = ["RemotePolicy"]


class RemotePolicy:
    def __init__(self, url: str, *, token: str | None = None, timeout: float = 300.0) -> None:
        token = token or os.environ.get("CUA_POLICY_TOKEN")
        if not token:
            raise ValueError("a policy server needs its token: pass token=... or set CUA_POLICY_TOKEN")
        self.url = url.rstrip("/")
        self._client = httpx.AsyncClient(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(timeout, connect=10.0),
            limits=httpx.Limits(max_keepalive_connections=64, max_connections=256),
        )

    async def act(
        self,
        session_id: str,
        instruction: str,
        observation: Observation,
        options: PolicyOptions | None = None,
    ) -> PolicyStep:
        header = json.dumps(encode_act_header(session_id, instruction, observation, options))
        if observation.screenshot is not None:
            shot = observation.screenshot
            files = {"screenshot": (f"screenshot.{shot.format}", shot.data, f"image/{shot.format}")}
            response = await self._request("POST", "/v1/act", data={"request": header}, files=files)
        else:
            response = await self._request(
                "POST", "/v1/act", content=header, headers={"content-type": "application/json"}
            )
        return PolicyStep.model_validate_json(response.content)

    async def reset(self, session_id: str) -> None:
        await self._request("POST", f"/v1/sessions/{session_id}/reset")

    async def health(self) -> dict[str, Any]:
        return (await self._request("GET", "/v1/health")).json()

    async def metrics(self) -> dict[str, Any]:
        return (await self._request("GET", "/v1/metrics")).json()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        try:
            response = await self._client.request(method, path, **kw)
        except httpx.TimeoutException as exc:
            raise Timeout(f"policy server {self.url} timed out: {exc!r}") from exc
        except httpx.TransportError as exc:
            raise InternalError(f"policy server {self.url} unreachable: {exc!r}") from exc
        if response.status_code >= 400:
            raise _error_from(response)
        return response


def _error_from(response: httpx.Response) -> CuaError:
    try:
        error = response.json()["error"]
        return error_for_code(str(error["code"]), str(error["message"]), error.get("details"))
    except (ValueError, KeyError, TypeError):
        return InternalError(f"policy server answered HTTP {response.status_code}: {response.text[:300]}")
