"""`RemotePolicy`: a `Policy` that asks a running `cua policy serve`.

By default calls go over one websocket (``/v1/ws``): a JSON header, then the screenshot
as a binary frame, with replies matched by request id, so concurrent sessions share
the connection without head-of-line blocking on the client. ``transport="http"`` uses
``POST /v1/act`` with a multipart body instead. Server errors come back as the typed
`cua.errors` they were raised as; an unreachable server or a timeout is an
infrastructure error (`InternalError`, `Timeout`), never a parse error.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import uuid
from typing import Any, Literal
from urllib.parse import quote

import httpx

from cua.errors import CuaError, InternalError, Timeout, Unauthorized, error_for_code
from cua.observation import Observation
from cua.policy.base import PolicyOptions, PolicyStep
from cua.policy.wire import encode_act_header

__all__ = ["RemotePolicy"]


class RemotePolicy:
    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        timeout: float = 300.0,
        transport: Literal["ws", "http"] = "ws",
    ) -> None:
        token = token or os.environ.get("CUA_POLICY_TOKEN")
        if not token:
            raise ValueError("a policy server needs its token: pass token=... or set CUA_POLICY_TOKEN")
        if transport not in ("ws", "http"):
            raise ValueError(f"transport must be 'ws' or 'http', got {transport!r}")
        self.url = url.rstrip("/")
        self.transport = transport
        self.timeout = timeout
        self._token = token
        limits = httpx.Limits(max_keepalive_connections=64, max_connections=256)
        # Without TCP_NODELAY, a request body written after its headers waits for the
        # server's delayed ACK (~40 ms on Linux) on every call.
        http_transport = httpx.AsyncHTTPTransport(
            limits=limits, socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        )
        self._client = httpx.AsyncClient(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(timeout, connect=10.0),
            transport=http_transport,
        )
        self._ws: Any = None
        self._ws_lock = asyncio.Lock()
        self._send_lock = asyncio.Lock()
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)

    # -- Policy ----------------------------------------------------------------------
    async def act(
        self,
        session_id: str,
        instruction: str,
        observation: Observation,
        options: PolicyOptions | None = None,
    ) -> PolicyStep:
        header = encode_act_header(session_id, instruction, observation, options)
        if self.transport == "ws":
            reply = await self._ws_call({"op": "act", **header}, observation.screenshot.data if observation.screenshot else None)
            return PolicyStep.model_validate(reply["step"])
        text = json.dumps(header)
        if observation.screenshot is not None:
            body, content_type = _multipart(text, observation.screenshot.data, observation.screenshot.format)
            response = await self._request("POST", "/v1/act", content=body, headers={"content-type": content_type})
        else:
            response = await self._request("POST", "/v1/act", content=text, headers={"content-type": "application/json"})
        return PolicyStep.model_validate_json(response.content)

    async def reset(self, session_id: str) -> None:
        if self.transport == "ws":
            await self._ws_call({"op": "reset", "session_id": session_id}, None)
        else:
            await self._request("POST", f"/v1/sessions/{quote(session_id, safe='')}/reset")

    async def health(self) -> dict[str, Any]:
        return await self._get_object("/v1/health")

    async def server_metrics(self) -> dict[str, Any]:
        return await self._get_object("/v1/metrics")

    async def aclose(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        await self._client.aclose()

    # -- websocket -------------------------------------------------------------------
    async def _connect(self) -> Any:
        async with self._ws_lock:
            if self._ws is not None:
                return self._ws
            from websockets.asyncio.client import connect
            from websockets.exceptions import InvalidStatus, WebSocketException

            ws_url = self.url.replace("https://", "wss://", 1).replace("http://", "ws://", 1) + "/v1/ws"
            try:
                self._ws = await asyncio.wait_for(
                    connect(ws_url, additional_headers={"Authorization": f"Bearer {self._token}"},
                            max_size=None, compression=None, ping_interval=None),
                    timeout=30,
                )
            except InvalidStatus as exc:
                if exc.response.status_code in (401, 403):
                    raise Unauthorized("missing or wrong bearer token") from exc
                raise InternalError(f"policy server {self.url} refused the websocket: {exc}") from exc
            except (TimeoutError, OSError, WebSocketException) as exc:
                raise InternalError(f"policy server {self.url} unreachable: {exc!r}") from exc
            self._reader = asyncio.create_task(self._read(self._ws))
            return self._ws

    async def _read(self, ws: Any) -> None:
        error: CuaError = InternalError(f"policy server {self.url} closed the connection")
        try:
            async for message in ws:
                reply = json.loads(message)
                future = self._pending.pop(reply.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(reply)
        except Exception as exc:  # the connection failed: every waiting call learns why
            error = InternalError(f"policy server connection failed: {exc!r}")
        finally:
            if self._ws is ws:
                self._ws = None
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(error)
            self._pending.clear()

    async def _ws_call(self, message: dict[str, Any], binary: bytes | None) -> dict[str, Any]:
        ws = await self._connect()
        request_id = next(self._ids)
        message["id"] = request_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            async with self._send_lock:  # the header and its binary frame stay adjacent
                await ws.send(json.dumps(message))
                if binary is not None:
                    await ws.send(binary)
            reply = await asyncio.wait_for(future, self.timeout)
        except TimeoutError:
            raise Timeout(f"policy server {self.url} did not answer in {self.timeout} s") from None
        except CuaError:
            raise
        except Exception as exc:  # sending failed: the connection is gone
            raise InternalError(f"policy server connection failed: {exc!r}") from exc
        finally:
            self._pending.pop(request_id, None)
        if not reply.get("ok"):
            error = reply.get("error") or {}
            raise error_for_code(str(error.get("code", "internal")), str(error.get("message", "")), error.get("details"))
        return reply

    # -- http ------------------------------------------------------------------------
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

    async def _get_object(self, path: str) -> dict[str, Any]:
        response = await self._request("GET", path)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise InternalError(f"policy server {self.url}{path} did not answer a JSON object: {response.text[:300]!r}")
        return data


def _multipart(header: str, image: bytes, fmt: str) -> tuple[bytes, str]:
    """A multipart/form-data body (a `request` JSON part, a `screenshot` file part)."""
    boundary = uuid.uuid4().hex
    head = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"request\"\r\n"
        f"Content-Type: application/json\r\n\r\n{header}\r\n"
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"screenshot\"; filename=\"screenshot.{fmt}\"\r\n"
        f"Content-Type: image/{fmt}\r\n\r\n"
    ).encode()
    return b"".join((head, image, f"\r\n--{boundary}--\r\n".encode())), f"multipart/form-data; boundary={boundary}"


def _error_from(response: httpx.Response) -> CuaError:
    try:
        error = response.json()["error"]
        return error_for_code(str(error["code"]), str(error["message"]), error.get("details"))
    except (ValueError, KeyError, TypeError):
        return InternalError(f"policy server answered HTTP {response.status_code}: {response.text[:300]}")


def from_spec(url: str, **kw: Any) -> RemotePolicy:
    """`make_policy("http://host:port", token=...)`: a running `cua policy serve`."""
    return RemotePolicy(url, **kw)
