"""`recorded_instance`: the one answer to "which task instance did this trajectory run",
shared by forks at a step, `cua replay` and `cua export --execute`. A trajectory recorded
in an appearance variant is set up again in that variant (a copy that forgot it diverged
at the first frame); what cannot be set up again is a typed refusal that says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from cua.branch import BranchRefused, task_instance
from cua.branch.instance import NotReproducible, recorded_instance
from cua.export.execute import NotExecutable, instance_of
from cua.replay.replay import ReplayError, _instance
from cua.tasks.registry import task_instance as bundled_instance
from cua.trajectory import AgentInfo, Trajectory, TrajectoryMeta

TASK = "todo.add_todo@1"
VARIANT = {"theme": "dark", "layout": "top", "locale": "de-DE", "viewport": {"width": 1024, "height": 768}}


def _trajectory(tmp_path: Path, **meta: object) -> Trajectory:
    instance = bundled_instance(TASK, 3)
    fields: dict[str, object] = {"producer": "eval", "task_id": TASK, "seed": 3, "reset_seed": instance.reset_seed,
                                 "instruction": instance.instruction, "sandbox_kind": instance.sandbox_kind,
                                 "sandbox_config": dict(instance.sandbox_config), "agent": AgentInfo(name="oracle")}
    fields.update(meta)
    return Trajectory(folder=tmp_path, meta=TrajectoryMeta.model_validate(fields), steps=[], all_steps=[], end=None)


def test_a_trajectory_recorded_in_a_variant_is_set_up_in_it_by_every_driver(tmp_path: Path) -> None:
    config = {**bundled_instance(TASK, 3).sandbox_config, "variant": VARIANT}
    traj = _trajectory(tmp_path, sandbox_config=config)
    for get in (recorded_instance, task_instance, _instance, instance_of):
        shown = get(traj).sandbox_config["variant"]
        assert (shown["theme"], shown["locale"], shown["viewport"]["width"]) == ("dark", "de-DE", 1024), get


def test_a_trajectory_without_a_variant_runs_the_plain_instance(tmp_path: Path) -> None:
    instance = recorded_instance(_trajectory(tmp_path))
    assert "variant" not in instance.sandbox_config and instance.seed == 3


@pytest.mark.parametrize(("meta", "why"), [
    ({"task_id": "todo.retired_task@1"}, "unknown_task"),
    ({"reset_seed": 987654321}, "task_changed"),
    ({"sandbox_config": {"variant": {"colour": "red"}}}, "unknown_variant"),  # no variant has that axis
])
def test_what_cannot_be_set_up_again_is_refused_with_its_reason_by_every_driver(
        tmp_path: Path, meta: dict[str, object], why: str) -> None:
    traj = _trajectory(tmp_path, **meta)
    for get, error in ((recorded_instance, NotReproducible), (task_instance, BranchRefused),
                       (_instance, ReplayError), (instance_of, NotExecutable)):
        with pytest.raises(error) as raised:
            get(traj)
        assert raised.value.details["why"] == why and raised.value.fault == "client", get
