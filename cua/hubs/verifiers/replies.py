"""A model's reply as one cua action, for the verifiers environment (`environment`): apart from
it so that it imports without verifiers, whose venv is not the kit's."""

from __future__ import annotations

import json
import re

from pydantic import ValidationError

from cua.actions import parse_action
from cua.errors import BadRequest
from cua.hubs.openenv.models import CuaAction

__all__ = ["ACTION_HELP", "reply_action"]

ACTION_HELP = (
    "Answer with exactly one action as a JSON object, in the screenshot's pixels, for example "
    '{"type": "click", "x": 120, "y": 48}, {"type": "type", "text": "hello"}, '
    '{"type": "key", "keys": ["Enter"]}, {"type": "scroll", "x": 400, "y": 300, "dy": 300}. '
    'When the task is done answer {"type": "done"}; when it cannot be done, '
    '{"type": "done", "status": "infeasible"}; for a question, {"type": "done", "answer": "..."}.'
)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def reply_action(reply: str) -> CuaAction:
    """The model's reply as one cua action: a JSON object, bare, fenced or amid prose. Raises
    BadRequest saying what is wrong, in words the model reads on its next turn."""
    text = reply.strip()
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else (m.group(0) if (m := _OBJECT.search(text)) else text)
    try:
        data = json.loads(candidate)
    except json.JSONDecodeError:
        raise BadRequest("the reply holds no JSON object. " + ACTION_HELP) from None
    try:
        return CuaAction(action=parse_action(data))
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()[:3])
        raise BadRequest(f"not a cua action ({problems}). " + ACTION_HELP) from None
