"""One vocabulary of failure classes (`cua.errors.FailureClass`): every error type names a
member, every error code is one, and an episode's class is a member whatever ended it."""

from __future__ import annotations

import inspect

import cua.client
import cua.errors as errors
from cua.episode.episode import EpisodeRecord, failure_class
from cua.errors import INFRA_FAILURES, ErrorCode, FailureClass
from cua.rollout.service import StalePolicy


def _error_types() -> list[type[errors.CuaError]]:
    found = [obj for _, obj in inspect.getmembers(errors, inspect.isclass) if issubclass(obj, errors.CuaError)]
    return [*found, cua.client.ConnectionLost, StalePolicy]


def test_every_error_type_and_code_is_a_failure_class() -> None:
    assert {c.value for c in ErrorCode} <= {f.value for f in FailureClass}
    for kind in _error_types():
        error = kind("x")
        assert isinstance(error.failure_class, FailureClass), kind
    assert cua.client.ConnectionLost("x").failure_class is FailureClass.SERVER_LOST
    assert errors.ModelUnreachable("x").failure_class is FailureClass.MODEL_UNREACHABLE
    assert errors.SandboxCrashed("x").failure_class is FailureClass.SANDBOX_CRASHED
    assert INFRA_FAILURES <= set(FailureClass)


def test_an_episode_is_classed_by_a_member_and_a_stored_name_reads_back() -> None:
    record = EpisodeRecord(task_id="t@1", seed=0, instruction="", agent="a", status="infra_error",
                           error={"code": "timeout", "failure": "server_lost"})
    assert failure_class(record, None) is FailureClass.SERVER_LOST
    odd = EpisodeRecord.model_validate({**record.model_dump(), "error": {"code": "no_such_code_in_this_version"}})
    assert failure_class(odd, None) is FailureClass.INTERNAL
    record.failure = failure_class(record, None)
    again = EpisodeRecord.model_validate_json(record.model_dump_json())
    assert again.failure is FailureClass.SERVER_LOST and '"server_lost"' in record.model_dump_json()
