"""Typed failures the agent reports back as wire errors (standard library only)."""

from __future__ import annotations

__all__ = ["GuestFault", "ActionFault", "BadRequestFault", "UnsupportedFault"]


class GuestFault(Exception):
    code = "internal"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


class ActionFault(GuestFault):
    """The agent's action could not be performed (an agent fault, reported, not fatal)."""

    code = "action_failed"


class BadRequestFault(GuestFault):
    code = "bad_request"


class UnsupportedFault(GuestFault):
    """The guest lacks what the request needs (a Python module, a tool, an X extension)."""

    code = "unsupported"
