"""The error tree: every failure has a typed code, and says whose fault it is.

- ClientError: the request was wrong (malformed, unauthorized, unknown id). Fix the caller.
- InfraError: the machinery failed (sandbox crashed, timeout, no capacity). Retry, or
  recreate the sandbox; the episode is not the agent's fault.
- AgentError: the agent's action could not be performed. Reported in the observation
  (`Observation.error`) so that the episode goes on.

A failure that ends an episode is kept in a run's records as an `ErrorRecord`, built from
the exception in one place (`ErrorRecord.of`).

Each type also names the failure class a run files an episode under (`failure_class`):
its code, unless the type says more (a lost server connection is `server_lost`, a model
that could not be reached is `model_unreachable`), so runs classify failures by type.
"""

from __future__ import annotations

import traceback
from enum import StrEnum
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "AGENT_ERROR_CODE",
    "ActionFailed",
    "AgentError",
    "BadRequest",
    "Cancelled",
    "Capacity",
    "ClientError",
    "CuaError",
    "ErrorCode",
    "ErrorRecord",
    "FailureClass",
    "INFRA_FAILURES",
    "Forbidden",
    "InfraError",
    "InternalError",
    "ModelUnreachable",
    "NodeLost",
    "SandboxCrashed",
    "SlowConsumer",
    "SnapshotUnusable",
    "Timeout",
    "Unauthorized",
    "UnknownSandbox",
    "UnknownSnapshot",
    "Unsupported",
    "error_for_code",
]


class ErrorCode(StrEnum):
    BAD_REQUEST = "bad_request"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    UNKNOWN_SANDBOX = "unknown_sandbox"
    UNKNOWN_SNAPSHOT = "unknown_snapshot"
    UNSUPPORTED = "unsupported"
    ACTION_FAILED = "action_failed"
    SANDBOX_CRASHED = "sandbox_crashed"
    TIMEOUT = "timeout"
    CAPACITY = "capacity"
    CANCELLED = "cancelled"
    SLOW_CONSUMER = "slow_consumer"
    INTERNAL = "internal"


Fault = Literal["client", "agent", "infra"]


class FailureClass(StrEnum):
    """Why an episode did not pass: the one vocabulary of every record, trajectory, report,
    export and rollout. An error's class is its code unless its type says more (`CuaError.failure`);
    an episode judged to the end is classed by its verdict (`cua.episode.failure_class`)."""

    # the infrastructure's: retried on a fresh sandbox, never scored against the agent
    SANDBOX_CRASHED = "sandbox_crashed"
    TIMEOUT = "timeout"
    SERVER_LOST = "server_lost"
    CAPACITY = "capacity"
    MODEL_UNREACHABLE = "model_unreachable"
    INTERNAL = "internal"
    #: a rollout group not started: the trainer's policy is older than the service allows
    STALE = "stale"
    # what an error's code says where its type says no more
    BAD_REQUEST = "bad_request"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    UNKNOWN_SANDBOX = "unknown_sandbox"
    UNKNOWN_SNAPSHOT = "unknown_snapshot"
    UNSUPPORTED = "unsupported"
    ACTION_FAILED = "action_failed"
    CANCELLED = "cancelled"
    SLOW_CONSUMER = "slow_consumer"
    # the agent's
    AGENT_ERROR = "agent_error"
    PARSE_ERROR = "parse_error"
    STEP_LIMIT = "step_limit"
    WRONG_INFEASIBLE_CLAIM = "wrong_infeasible_claim"
    MISSED_INFEASIBLE = "missed_infeasible"
    ACTION_ERRORS = "action_errors"
    JUDGED_WRONG = "judged_wrong"
    #: closed before it was judged (an RL reset mid-episode, a recorder stopped)
    ABANDONED = "abandoned"

    @classmethod
    def of(cls, text: str | None, default: FailureClass) -> FailureClass:
        """The class a stored text names (a record written by another version: `default` for
        a name this version does not know)."""
        try:
            return cls(text) if text else default
        except ValueError:
            return default


#: The classes that are the infrastructure's fault (an episode lost, not failed).
INFRA_FAILURES = frozenset({FailureClass.SANDBOX_CRASHED, FailureClass.TIMEOUT, FailureClass.SERVER_LOST,
                            FailureClass.CAPACITY, FailureClass.MODEL_UNREACHABLE, FailureClass.INTERNAL})


class CuaError(Exception):
    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL
    fault: ClassVar[Fault] = "infra"
    #: Whether the same request may succeed if simply sent again.
    retryable: ClassVar[bool] = False
    #: The failure class of an episode this ends, where it is more precise than the code.
    failure: ClassVar[FailureClass | None] = None

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details or {}

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code.value, "message": self.message, "details": self.details}

    @property
    def failure_class(self) -> FailureClass:
        """The failure class a run's records file this under (see the module docstring)."""
        return self.failure or FailureClass(self.code.value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class ClientError(CuaError):
    fault = "client"


class BadRequest(ClientError):
    code = ErrorCode.BAD_REQUEST


class Unauthorized(ClientError):
    code = ErrorCode.UNAUTHORIZED


class Forbidden(ClientError):
    """The credential is valid but lacks the scope the request needs (e.g. a view-only
    token asked to act)."""

    code = ErrorCode.FORBIDDEN


class SlowConsumer(ClientError):
    """The client stopped reading: its unsent answers outgrew the server's bound, and the
    server closed the connection rather than buffer without end."""

    code = ErrorCode.SLOW_CONSUMER


class UnknownSandbox(ClientError):
    code = ErrorCode.UNKNOWN_SANDBOX


class UnknownSnapshot(ClientError):
    code = ErrorCode.UNKNOWN_SNAPSHOT


class Unsupported(ClientError):
    """The sandbox kind lacks the capability (e.g. fork), or the action is foreign to it."""

    code = ErrorCode.UNSUPPORTED


class Cancelled(ClientError):
    code = ErrorCode.CANCELLED


class AgentError(CuaError):
    fault = "agent"


class ActionFailed(AgentError):
    code = ErrorCode.ACTION_FAILED

    def __init__(self, message: str, *, reason: str = "failed", details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details={"reason": reason, **(details or {})})
        self.reason = reason


class InfraError(CuaError):
    fault = "infra"


class SandboxCrashed(InfraError):
    code = ErrorCode.SANDBOX_CRASHED


class SnapshotUnusable(SandboxCrashed):
    """A snapshot whose every restore fails: the guest started from it crashes or hangs
    each time, from fresh copies of its files. Restoring it again cannot help; a sandbox
    rebuilds its own initial snapshot, any other must be taken again. On the wire, and so
    in a run's records, it is a `sandbox_crashed` like any other."""


class Timeout(InfraError):
    code = ErrorCode.TIMEOUT
    retryable = True


class Capacity(InfraError):
    code = ErrorCode.CAPACITY
    retryable = True


class InternalError(InfraError):
    code = ErrorCode.INTERNAL


class ModelUnreachable(InternalError):
    """The policy's model server did not answer (refused, dropped, overloaded past its retries)."""

    retryable = True
    failure = FailureClass.MODEL_UNREACHABLE


class NodeLost(InternalError):
    """A cluster node (a Ray node) died with the work it was doing: the work runs again on
    another node. It is lost the way a sandbox server is, whoever's fault the node's death was."""

    retryable = True
    failure = FailureClass.SERVER_LOST


_BY_CODE: dict[ErrorCode, type[CuaError]] = {
    cls.code: cls
    for cls in (
        BadRequest, Unauthorized, Forbidden, SlowConsumer, UnknownSandbox, UnknownSnapshot, Unsupported, Cancelled,
        ActionFailed, SandboxCrashed, Timeout, Capacity, InternalError,
    )
}


def error_for_code(code: str, message: str, details: dict[str, Any] | None = None) -> CuaError:
    """Rebuild the typed exception for a wire error code (unknown codes become InternalError)."""
    try:
        cls = _BY_CODE[ErrorCode(code)]
    except ValueError:
        return InternalError(f"[{code}] {message}", details=details)
    if cls is ActionFailed:
        details = dict(details or {})
        return ActionFailed(message, reason=str(details.pop("reason", "failed")), details=details)
    return cls(message, details=details)


_CODES = frozenset(c.value for c in ErrorCode)

#: The code of an `ErrorRecord` for the agent's own exception (its code raised, not a `CuaError`).
AGENT_ERROR_CODE = "agent_error"


class ErrorRecord(BaseModel):
    """A failure as a run's records keep it: an episode's record, a trajectory's attempts and
    end, a rollout's result, a service's error reply. Built from the exception in one place
    (`of`, `of_agent`); read back from any version's JSON, including the dicts written before
    this model (they lacked `type` and `retryable`, and the oldest `fault` or `failure`,
    which are then told by the code)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: The wire code (`ErrorCode`), or `agent_error` for the agent's own exception.
    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)
    #: The exception's type name (`SandboxCrashed`, `ValueError`); None in older records.
    type: str | None = None
    fault: Fault
    #: The failure class an episode it ends is filed under (`CuaError.failure_class`).
    failure: FailureClass
    #: Whether the same request may succeed if simply sent again.
    retryable: bool = False
    #: The agent's own traceback (an `agent_error`).
    traceback: str | None = None
    #: Why the episode's trajectory could not be written to the end (it is incomplete on disk).
    trajectory: str | None = None

    @classmethod
    def of(cls, exc: BaseException) -> ErrorRecord:
        """The record of an exception that ended an episode: a `CuaError` says its own code,
        fault, class and retryability; any other exception is the machinery's (`internal`)."""
        if isinstance(exc, CuaError):
            return cls(code=exc.code.value, message=exc.message, details=dict(exc.details), type=type(exc).__name__,
                       fault=exc.fault, failure=exc.failure_class, retryable=exc.retryable)
        return cls(code=ErrorCode.INTERNAL.value, message=f"{type(exc).__name__}: {exc}", type=type(exc).__name__,
                   fault="infra", failure=FailureClass.INTERNAL)

    @classmethod
    def of_agent(cls, exc: BaseException) -> ErrorRecord:
        """The record of the agent's own exception (its code raised): the agent's fault, with
        its traceback."""
        return cls(code=AGENT_ERROR_CODE, message=f"{type(exc).__name__}: {exc}", type=type(exc).__name__,
                   fault="agent", failure=FailureClass.AGENT_ERROR,
                   traceback="".join(traceback.format_exception(exc, limit=8)))

    def with_message(self, message: str) -> ErrorRecord:
        return self.model_copy(update={"message": message})

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        """Fill in what a record written by an older version lacks, from its code; a failure
        class this version does not know becomes the code's, or the fault's default."""
        if not isinstance(data, dict) or "code" not in data:
            return data
        code = str(data["code"])
        known = _BY_CODE.get(ErrorCode(code)) if code in _CODES else None
        fault: Fault = data.get("fault") or (
            "agent" if code == AGENT_ERROR_CODE else known.fault if known is not None else "infra")
        default = FailureClass.AGENT_ERROR if fault == "agent" else FailureClass.INTERNAL
        failure = data.get("failure")
        filled = {"message": "", **data, "fault": fault,
                  "failure": FailureClass.of(str(failure), FailureClass.of(code, default)) if failure
                  else FailureClass.of(code, default)}
        if "retryable" not in data and known is not None:
            filled["retryable"] = known.retryable
        return filled
