"""`cua.errors.ErrorRecord`: a failure as every record keeps it, built from the exception in
one place, and read back from the dicts older versions wrote (trajectories, index lines)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

import cua.client
from cua.episode.episode import EpisodeRecord, failure_class
from cua.errors import (
    ActionFailed,
    BadRequest,
    ErrorRecord,
    FailureClass,
    ModelUnreachable,
    SandboxCrashed,
    Timeout,
)
from cua.report import load_run
from cua.trajectory import END, META, AgentInfo, TrajectoryEnd, TrajectoryMeta, TrajectoryWriter, read_trajectory


def test_a_typed_error_says_its_code_fault_class_and_retry() -> None:
    lost = ErrorRecord.of(cua.client.ConnectionLost("the server went away", details={"url": "ws://x"}))
    assert (lost.code, lost.fault, lost.failure, lost.retryable, lost.type) == (
        "internal", "infra", FailureClass.SERVER_LOST, False, "ConnectionLost")
    assert lost.message == "the server went away" and lost.details == {"url": "ws://x"}
    model = ErrorRecord.of(ModelUnreachable("refused"))
    assert model.failure is FailureClass.MODEL_UNREACHABLE and model.retryable
    assert ErrorRecord.of(Timeout("slow")).retryable and ErrorRecord.of(Timeout("slow")).failure is FailureClass.TIMEOUT
    assert ErrorRecord.of(BadRequest("no")).fault == "client"
    action = ErrorRecord.of(ActionFailed("missed", reason="out_of_bounds"))
    assert action.fault == "agent" and action.failure is FailureClass.ACTION_FAILED
    assert action.details == {"reason": "out_of_bounds"}


def test_any_other_exception_is_the_machinerys_and_the_agents_own_keeps_its_traceback() -> None:
    bug = ErrorRecord.of(KeyError("k"))
    assert (bug.code, bug.fault, bug.failure, bug.type) == ("internal", "infra", FailureClass.INTERNAL, "KeyError")
    assert bug.message == "KeyError: 'k'"

    def agent_turn() -> None:
        raise ValueError("the agent's own bug")

    try:
        agent_turn()
    except ValueError as exc:
        own = ErrorRecord.of_agent(exc)
    assert (own.code, own.fault, own.failure) == ("agent_error", "agent", FailureClass.AGENT_ERROR)
    assert own.traceback is not None and "agent_turn" in own.traceback
    assert own.message == "ValueError: the agent's own bug"


def test_a_record_reads_back_what_it_wrote() -> None:
    record = ErrorRecord.of(SandboxCrashed("chromium died", details={"exit": -9}))
    assert ErrorRecord.model_validate_json(record.model_dump_json()) == record
    with pytest.raises(ValidationError):
        ErrorRecord.model_validate({"code": "timeout", "message": "m", "fault": "nobody"})
    with pytest.raises(ValidationError):  # a field no version wrote
        ErrorRecord.model_validate({"code": "timeout", "message": "m", "severity": 3})


@pytest.mark.parametrize("stored,fault,failure,retryable", [
    # as cua.errors' to_dict() plus fault and failure (the dicts of the last version)
    ({"code": "internal", "message": "m", "details": {}, "fault": "infra", "failure": "server_lost"},
     "infra", FailureClass.SERVER_LOST, False),
    # the oldest: to_dict() plus fault, the class told by the code
    ({"code": "timeout", "message": "m", "details": {}, "fault": "infra"}, "infra", FailureClass.TIMEOUT, True),
    # the fault too told by the code
    ({"code": "unknown_sandbox", "message": "m"}, "client", FailureClass.UNKNOWN_SANDBOX, False),
    # the agent's own exception, with its traceback
    ({"code": "agent_error", "message": "ValueError: x", "fault": "agent", "traceback": "Traceback..."},
     "agent", FailureClass.AGENT_ERROR, False),
    # a class or code a later version knows and this one does not
    ({"code": "sandbox_crashed", "message": "m", "fault": "infra", "failure": "meteor_strike"},
     "infra", FailureClass.SANDBOX_CRASHED, False),
    ({"code": "no_such_code", "message": "m"}, "infra", FailureClass.INTERNAL, False),
])
def test_dicts_older_versions_wrote_read_as_records(stored: dict[str, object], fault: str, failure: FailureClass,
                                                    retryable: bool) -> None:
    record = ErrorRecord.model_validate(stored)
    assert (record.fault, record.failure, record.retryable) == (fault, failure, retryable)
    assert record.code == stored["code"] and record.message == stored["message"]


def _meta() -> TrajectoryMeta:
    return TrajectoryMeta(producer="eval", task_id="todo.mark_done@1", task_version=1, seed=3, reset_seed=3,
                          instruction="Mark it done.", sandbox_kind="browser", agent=AgentInfo(name="oracle"))


def test_a_trajectory_written_with_dict_errors_still_reads(tmp_path: Path) -> None:
    """end.json as the last version wrote it: errors as dicts (the oldest without a class),
    the failure class as a free string."""
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / META).write_text(_meta().model_dump_json(), encoding="utf-8")
    (folder / "steps.jsonl").write_text("", encoding="utf-8")
    crashed = {"code": "sandbox_crashed", "message": "the browser died", "details": {}, "fault": "infra"}
    lost = {"code": "internal", "message": "the connection closed", "details": {}, "fault": "infra",
            "failure": "server_lost"}
    end = {"status": "infra_error", "failure": "server_lost", "attempt": 1, "steps": 0, "truncated": False,
           "done": None, "verdict": None, "error": lost,
           "attempts": [{"attempt": 0, "status": "infra_error", "error": crashed, "steps": 2,
                         "started_at": 1.0, "ended_at": 2.0},
                        {"attempt": 1, "status": "infra_error", "error": lost, "steps": 0,
                         "started_at": 2.0, "ended_at": 3.0}],
           "final": None, "timings_ms": {}, "ended_at": 3.0}
    (folder / END).write_text(json.dumps(end), encoding="utf-8")
    traj = read_trajectory(folder)
    assert traj.end is not None and traj.end.failure is FailureClass.SERVER_LOST
    assert traj.end.error is not None and traj.end.error.failure is FailureClass.SERVER_LOST
    first = traj.end.attempts[0].error
    assert first is not None and first.failure is FailureClass.SANDBOX_CRASHED and first.message == "the browser died"
    # a failure class a later version named reads as its status's default, not as unreadable
    (folder / END).write_text(json.dumps({**end, "failure": "meteor_strike"}), encoding="utf-8")
    later = read_trajectory(folder).end
    assert later is not None and later.failure is FailureClass.INTERNAL


def test_a_trajectory_keeps_each_attempts_record(tmp_path: Path) -> None:
    writer = TrajectoryWriter(tmp_path / "t")
    writer.new_attempt(error=ErrorRecord.of(ModelUnreachable("refused")), steps=0)
    error = ErrorRecord.of(SandboxCrashed("died"))
    writer.end(TrajectoryEnd(status="infra_error", failure=error.failure, error=error))
    stored = json.loads((tmp_path / "t" / END).read_text(encoding="utf-8"))
    assert stored["error"]["failure"] == "sandbox_crashed" and stored["error"]["type"] == "SandboxCrashed"
    assert stored["attempts"][0]["error"]["retryable"] is True
    end = TrajectoryEnd.model_validate(stored)
    assert [a.error for a in end.attempts] == [ErrorRecord.of(ModelUnreachable("refused")), error]


def test_an_episode_is_classed_by_its_records_class() -> None:
    record = EpisodeRecord(task_id="t@1", seed=0, instruction="", agent="a", status="infra_error",
                           error=ErrorRecord.of(cua.client.ConnectionLost("gone")))
    assert failure_class(record, None) is FailureClass.SERVER_LOST
    stored = json.loads(record.model_dump_json())
    assert stored["error"]["failure"] == "server_lost" and stored["error"]["fault"] == "infra"
    agent = EpisodeRecord(task_id="t@1", seed=0, instruction="", agent="a", status="agent_error")
    assert failure_class(agent, None) is FailureClass.AGENT_ERROR


def test_the_report_classes_an_old_index_line_by_its_dict_error(tmp_path: Path) -> None:
    """An index line from before records carried a failure class: the report reads its class
    from its error dict (and a line whose error is unreadable by its status)."""
    lines = [
        {"task_id": "todo.mark_done@1", "seed": 0, "status": "infra_error", "steps": 0,
         "error": {"code": "timeout", "message": "slow", "details": {}, "fault": "infra"}},
        {"task_id": "todo.mark_done@1", "seed": 1, "status": "agent_error", "steps": 1,
         "error": {"code": "agent_error", "message": "ValueError: x", "fault": "agent", "traceback": "..."}},
        {"task_id": "todo.mark_done@1", "seed": 2, "status": "infra_error", "steps": 0, "error": "not a dict"},
        # a class a later version named: derived as if none were named
        {"task_id": "todo.mark_done@1", "seed": 3, "status": "infra_error", "steps": 0, "failure": "meteor_strike",
         "error": {"code": "capacity", "message": "full", "fault": "infra"}},
        {"task_id": "todo.mark_done@1", "seed": 4, "status": "infra_error", "steps": 0, "failure": "server_lost"},
    ]
    (tmp_path / "episodes.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    rows = sorted(load_run(tmp_path).rows, key=lambda r: r.seed)
    assert [r.failure for r in rows] == [FailureClass.TIMEOUT, FailureClass.AGENT_ERROR, FailureClass.INTERNAL,
                                         FailureClass.CAPACITY, FailureClass.SERVER_LOST]
    assert all(isinstance(r.failure, FailureClass) for r in rows)
