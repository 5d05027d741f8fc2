"""Branching from any step of a trajectory (issue 35, item 1).

- `snapshots`: `--snapshots every|N|none`: a trajectory that keeps, by reference, a
  snapshot of the state the agent acted on at every N-th step (`SnapshottingHandle`,
  `SnapshotWriter`, `StepSnapshots`).
- `fork`: `fork(trajectory, step=k, source=...)`, a live sandbox in the state of step k
  (pixel- and judge-equal to the recording's); `replay_prefix`, an episode brought to
  step k from the task's reset; `BranchRefused`, why a step cannot be reached.
- `sync`: `fork_sync(trajectory, k, source=...)`, `fork` for a `cua.sync_api.Sandbox`.
- `sources`: `KeptSources`, sandboxes kept with their snapshots for later branches, each
  closed when its branches are done or its time to live runs out.

A layer of its own between the episode layer (which it drives, and which is not changed
for it) and the drivers (`cua eval`, `cua record`, `cua replay`, the rollout service) that
use it.
"""

from cua.branch.fork import BranchRefused, ForkedSandbox, branch_extra, fork, replay_prefix, task_instance
from cua.branch.snapshots import (
    SnapshotPolicy,
    SnapshottingHandle,
    SnapshotWriter,
    StepSnapshots,
    parse_snapshots,
    snapshot_every,
)
from cua.branch.sources import KeptSources
from cua.branch.sync import SyncForkedSandbox, fork_sync

__all__ = [
    "BranchRefused",
    "ForkedSandbox",
    "KeptSources",
    "SnapshotPolicy",
    "SnapshotWriter",
    "SnapshottingHandle",
    "StepSnapshots",
    "SyncForkedSandbox",
    "branch_extra",
    "fork",
    "fork_sync",
    "parse_snapshots",
    "replay_prefix",
    "snapshot_every",
    "task_instance",
]
