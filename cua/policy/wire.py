"""The policy server's wire format, shared by the server and `RemotePolicy`.

An act request carries the session id, the instruction, the observation and options.
The screenshot travels as raw bytes (a multipart file part, or a binary websocket
frame right after the JSON header) or, for convenience, base64 in JSON
(``observation.screenshot.data``). Errors are ``{"error": {"code", "message", "details"}}``
with the codes of `cua.errors`.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from pydantic import ValidationError

from cua.errors import BadRequest
from cua.observation import ImageFormat, Observation, Screenshot
from cua.policy.base import PolicyOptions

__all__ = ["ActRequest", "decode_act_request", "encode_act_header"]


class ActRequest:
    __slots__ = ("instruction", "observation", "options", "session_id")

    def __init__(self, session_id: str, instruction: str, observation: Observation, options: PolicyOptions | None):
        self.session_id = session_id
        self.instruction = instruction
        self.observation = observation
        self.options = options


def encode_act_header(
    session_id: str, instruction: str, observation: Observation, options: PolicyOptions | None
) -> dict[str, Any]:
    """The JSON part of a request; the screenshot's bytes go separately."""
    header: dict[str, Any] = {
        "session_id": session_id,
        "instruction": instruction,
        "observation": observation.model_dump(mode="json", exclude_none=True),
    }
    if observation.screenshot is not None:  # model_dump drops the bytes; keep the metadata
        header["observation"]["screenshot"] = observation.screenshot.model_dump(mode="json")
    if options is not None:
        header["options"] = options.model_dump(mode="json", exclude_none=True, exclude_unset=True)
    return header


def decode_act_request(header: Any, screenshot: bytes | None = None) -> ActRequest:
    """Validate an act request; `screenshot` is the binary part when one came.

    Raises BadRequest with a message that names the faulty field."""
    if isinstance(header, (str, bytes)):
        try:
            header = json.loads(header)
        except json.JSONDecodeError as exc:
            raise BadRequest(f"request is not JSON: {exc.msg}") from None
    if not isinstance(header, dict):
        raise BadRequest("request must be a JSON object")
    session_id, instruction = header.get("session_id"), header.get("instruction")
    if not isinstance(session_id, str) or not session_id or len(session_id) > 256:
        raise BadRequest("session_id must be a non-empty string of at most 256 characters")
    if not isinstance(instruction, str):
        raise BadRequest("instruction must be a string")
    raw_obs = header.get("observation")
    if not isinstance(raw_obs, dict):
        raise BadRequest("observation must be an object")
    raw_obs = dict(raw_obs)
    raw_shot = raw_obs.pop("screenshot", None)
    observation = _validate(Observation, raw_obs, "observation")
    options = _validate(PolicyOptions, header["options"], "options") if header.get("options") is not None else None
    if raw_shot is not None or screenshot is not None:
        observation.screenshot = _screenshot(raw_shot or {}, screenshot, observation)
    return ActRequest(session_id, instruction, observation, options)


def _validate(model: Any, data: Any, where: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        path = ".".join([where, *map(str, first["loc"])])
        raise BadRequest(f"invalid {path}: {first['msg']}") from None


def _screenshot(meta: Any, data: bytes | None, observation: Observation) -> Screenshot:
    if not isinstance(meta, dict):
        raise BadRequest("observation.screenshot must be an object")
    if data is None:
        encoded = meta.get("data")
        if not isinstance(encoded, str):
            raise BadRequest("screenshot bytes missing: send a binary part or base64 in observation.screenshot.data")
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest("observation.screenshot.data is not valid base64") from None
    if not data:
        raise BadRequest("the screenshot is empty")
    fields = {
        "format": meta.get("format") or _sniff(data),
        "width": meta.get("width", observation.frame.width),
        "height": meta.get("height", observation.frame.height),
        "data": data,
    }
    try:  # the client's metadata is untrusted: the model validates and names the faulty field
        return Screenshot.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BadRequest(f"invalid observation.screenshot.{'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def _sniff(data: bytes) -> ImageFormat:
    if data.startswith(b"\x89PNG"):
        return "png"
    if data.startswith(b"\xff\xd8"):
        return "jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    raise BadRequest("unknown screenshot format: expected PNG, JPEG or WebP")
