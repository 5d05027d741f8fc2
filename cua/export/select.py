"""Which trajectories an export reads: every one under SOURCE that passes the filters.

SOURCE is anything `cua.trajectory.find_trajectories` finds (an eval run folder, a
recordings folder, an RL run's trajectories, one trajectory, or a tree of them). The
filters read only meta.json and end.json, so selecting from a large tree costs no frames.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cua.errors import BadRequest
from cua.trajectory import Trajectory, find_trajectories, read_trajectory

__all__ = ["ExportSourceError", "Selection", "select"]

VerdictFilter = Literal["pass", "fail", "any"]


class ExportSourceError(BadRequest):
    """The export source does not exist or holds no trajectory (the caller's input)."""


@dataclass
class Selection:
    """Filters over trajectories; empty sequences select everything."""

    verdict: VerdictFilter = "any"
    apps: Sequence[str] = ()
    tiers: Sequence[int] = ()
    splits: Sequence[str] = ()
    producers: Sequence[str] = ()
    #: Shell patterns over task ids (``todo.*``).
    tasks: Sequence[str] = ()
    #: Keep trajectories that never finished (no end.json): a valid prefix, no verdict.
    incomplete: bool = False
    #: Trajectories skipped as unreadable: (folder, why).
    unreadable: list[tuple[Path, str]] = field(default_factory=list)

    def accepts(self, traj: Trajectory) -> bool:
        meta, end = traj.meta, traj.end
        if meta is None:
            return False
        if end is None and not self.incomplete:
            return False
        passed = end is not None and end.verdict is not None and end.verdict.passed
        if self.verdict == "pass" and not passed:
            return False
        if self.verdict == "fail" and (passed or end is None):
            return False
        tags = meta.tags
        if self.apps and str(tags.get("app") or meta.sandbox_config.get("app")) not in self.apps:
            return False
        if self.tiers and tags.get("tier") not in self.tiers:
            return False
        if self.splits and tags.get("split") not in self.splits:
            return False
        if self.producers and meta.producer not in self.producers:
            return False
        return not self.tasks or any(fnmatch.fnmatchcase(meta.task_id, p) for p in self.tasks)


def select(source: str | Path, selection: Selection | None = None) -> Iterator[Trajectory]:
    """The trajectories under `source` that `selection` accepts, in path order, read one
    at a time (an export of a large tree holds one trajectory's lines in memory)."""
    selection = selection or Selection()
    root = Path(source)
    if not root.exists():
        raise ExportSourceError(f"export source {str(root)!r} does not exist")
    folders = find_trajectories(root)
    if not folders:
        raise ExportSourceError(f"no trajectory under {str(root)!r} (a trajectory folder has meta.json)")
    for folder in folders:
        try:
            traj = read_trajectory(folder)
        except (ValueError, OSError) as exc:
            selection.unreadable.append((folder, str(exc).splitlines()[0]))
            continue
        if selection.accepts(traj):
            yield traj
