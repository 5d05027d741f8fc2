"""The task instance a trajectory was recorded on, as it was recorded: its template and
version at its seed, in its appearance variant.

Forking at a step, replaying a trajectory and executing it again for an export all start
from this one answer; a copy that forgot the variant would diverge from the recording at
the first frame.
"""

from __future__ import annotations

from typing import Literal

from cua.errors import BadRequest
from cua.task import TaskInstance
from cua.trajectory import Trajectory

__all__ = ["NotReproducible", "recorded_instance"]

Why = Literal["no_meta", "unknown_task", "task_changed", "unknown_variant"]


class NotReproducible(BadRequest):
    """The trajectory's task instance cannot be made again here (`details["why"]`): the
    input's fault; asking again will not help."""


def _refuse(traj: Trajectory, why: Why, message: str) -> NotReproducible:
    return NotReproducible(f"{traj.folder}: {message}", details={"trajectory": str(traj.folder), "why": why})


def recorded_instance(traj: Trajectory) -> TaskInstance:
    """The instance `traj` ran; `NotReproducible` when its meta is missing, its task is not
    bundled here, its seed now resets differently, or its variant is not one here."""
    from cua.tasks.registry import get_template
    from cua.tasks.variants import in_variant
    from cua.variant import parse_variant

    meta = traj.meta
    if meta is None:
        raise _refuse(traj, "no_meta", "the trajectory has no meta.json")
    try:
        template = get_template(meta.task_id)
    except KeyError as exc:
        raise _refuse(traj, "unknown_task", f"task {meta.task_id!r} is not bundled here ({exc.args[0]})") from None
    instance: TaskInstance = template.instantiate(meta.seed)
    if meta.reset_seed is not None and instance.reset_seed != meta.reset_seed:
        raise _refuse(traj, "task_changed", f"task {meta.task_id} seed {meta.seed} now resets with seed "
                                            f"{instance.reset_seed}, the recording with {meta.reset_seed}")
    shown = meta.sandbox_config.get("variant")
    if shown:
        try:
            instance = in_variant(instance, parse_variant(shown))
        except BadRequest as exc:
            raise _refuse(traj, "unknown_variant",
                          f"{meta.task_id}: its variant {shown!r} is not one here ({exc.message})") from None
    return instance
