"""What both sides of the protocol share about text frames: the version, the size limit,
parsing a frame into a JSON object, turning a validation failure into one `bad_request`,
and the base of every message."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt, ValidationError
from pydantic_core import from_json

from cua.errors import BadRequest

PROTOCOL_VERSION = 1
#: Largest text frame either side accepts; larger ones are refused with `bad_request`.
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
#: Request ids fit the binary header's u32.
MAX_REQUEST_ID = 2**32 - 1



class WireMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    v: StrictInt = PROTOCOL_VERSION



class ProtocolError(BadRequest):
    """The peer broke the protocol (garbage, an answer to nothing, a missing frame)."""


def loads(data: str | bytes, max_bytes: int) -> dict[str, Any]:
    size = len(data)
    if isinstance(data, str) and 4 * size > max_bytes:  # only long texts can be over: count their bytes
        size = len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise BadRequest(f"message of {size} bytes exceeds the limit of {max_bytes}",
                         details={"size": size, "limit": max_bytes})
    try:
        obj = from_json(data)  # pydantic's parser: faster than json.loads on big trees
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"invalid JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise BadRequest(f"a message must be a JSON object, got {type(obj).__name__}")
    return obj


def recoverable_id(obj: dict[str, Any]) -> int | None:
    rid = obj.get("id")
    if isinstance(rid, int) and not isinstance(rid, bool) and 0 <= rid <= MAX_REQUEST_ID:
        return rid
    return None


def validation_error(exc: ValidationError) -> BadRequest:
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    loc, msg = (errors[0]["loc"], errors[0]["msg"]) if errors else ((), "invalid")
    where = ".".join(str(p) for p in loc)
    return BadRequest(f"invalid message: {where}: {msg}"
                      + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""),
                      details={"errors": errors})


def check_version(obj: dict[str, Any]) -> None:
    v = obj.get("v", PROTOCOL_VERSION)
    if v != PROTOCOL_VERSION:
        raise BadRequest(f"protocol version {v!r} not supported; this side speaks version {PROTOCOL_VERSION}",
                         details={"peer": v, "supported": PROTOCOL_VERSION})


def dumps(message: BaseModel) -> str:
    return message.model_dump_json(exclude_none=False)



def jsonable(value: Any) -> Any:
    """Error details must survive JSON; anything odd becomes its repr."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=repr))
