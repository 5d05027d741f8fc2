"""Per-step snapshots: a trajectory that keeps the state the agent acted on, by reference.

`--snapshots every|N|none` (`cua eval`, `cua record`, a rollout request's `snapshots`):
before the agent's action at every N-th step (step 0, N, 2N, ...), the sandbox is
snapshotted, and that step's line names the snapshot (`StepLine.snapshot`, a
`cua.info.SnapshotRef` as JSON); meta.extra["snapshots"] says the policy and the sandbox
that holds them. The state itself stays with the sandbox host, stored once: a branch
forked from it (`cua.branch.fork`) names the same ref as its `start_snapshot`, so two
trajectories started from one snapshot share it rather than copy it.

The episode (`cua.episode.Episode`) knows nothing of this: the snapshot is taken by a
`SnapshottingHandle` wrapped around the episode's sandbox (at the step's act, which is the
first thing that changes the state the agent saw), and named on the step's line by a
`SnapshotWriter` (the trajectory writer the episode is given). A step that performs
nothing (a `Done`, an unparseable turn) takes no snapshot; a branch at it starts from the
nearest earlier one.

How long a ref lives: as long as the sandbox that took it, or until `StepSnapshots.release`
deletes it. The driver that kept the sandbox releases its snapshots when it closes it (an
eval worker when its sandbox closes, the recorder when the session ends, the rollout
service when the source's branches are done or its keep time runs out), so nothing
outlives its sandbox and no sandbox is kept for snapshots no one can reach.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, Literal

from cua.actions import Action
from cua.argtypes import snapshot_period
from cua.branch.forwarding import ForwardingHandle
from cua.episode.group import ForkableHandle
from cua.episode.handle import SandboxHandle, StreamingHandle
from cua.errors import CuaError, Unsupported
from cua.info import SnapshotRef
from cua.observation import Observation, ObserveOptions, Screenshot, Size
from cua.state import StateQuery, StateResult
from cua.trajectory import FramePolicy, ObservationRef, StepLine, TrajectoryMeta, TrajectoryWriter

__all__ = ["SnapshotPolicy", "SnapshotWriter", "SnapshottingHandle", "StepSnapshots", "parse_snapshots",
           "snapshot_every"]

log = logging.getLogger(__name__)

#: "every" step, every N-th step, or "none".
SnapshotPolicy = Literal["every", "none"] | int


def parse_snapshots(text: str | int) -> SnapshotPolicy:
    """`every`, `none` or a positive N, as `--snapshots` (`cua.argtypes.snapshot_period`) and
    a request's `snapshots` take it; ValueError otherwise."""
    try:
        return snapshot_period(str(text))
    except argparse.ArgumentTypeError as exc:
        raise ValueError(f"--snapshots: {exc}") from None


def snapshot_every(policy: SnapshotPolicy) -> int | None:
    """The step period of a policy (None: no snapshots)."""
    if policy == "none":
        return None
    return 1 if policy == "every" else int(policy)


class StepSnapshots:
    """The snapshots one trajectory keeps: taken by the handle, named by the writer.

    `every`: the step period (1: every step). Owns every ref it took until `release`."""

    def __init__(self, every: int) -> None:
        if every < 1:
            raise ValueError(f"every must be at least 1, got {every}")
        self.every = every
        #: The index the next step line will have (the writer's count in this attempt).
        self.next_index = 0
        self._armed = False
        self._taken: dict[int, SnapshotRef] = {}
        #: Every ref taken, named on a line or not (an attempt lost before its line): released together.
        self.refs: list[SnapshotRef] = []
        self.sandbox_id: str | None = None

    def arm(self) -> None:
        """The trajectory has begun (setup steps are over): the next act is step 0's."""
        self._armed = True
        self.next_index = 0
        self._taken.clear()

    async def before_act(self, handle: SandboxHandle) -> None:
        """Snapshot the state the next step acts on, when that step is due one. A second act
        for the same step (the recorder's typing, which grows one step) takes none."""
        index = self.next_index
        if not self._armed or index % self.every or index in self._taken:
            return
        try:
            ref = await handle.snapshot()
        except Unsupported as exc:  # the kind keeps no state: the trajectory has no refs, branches replay
            log.warning("sandbox %s cannot snapshot (%s): no per-step snapshots", handle.id, exc.message)
            self._armed = False
            return
        self.sandbox_id = ref.sandbox_id
        self._taken[index] = ref
        self.refs.append(ref)

    def name(self, line: StepLine) -> StepLine:
        """The step's line, naming the snapshot taken before its action (if one was)."""
        ref = self._taken.pop(line.index, None)
        self.next_index = line.index + 1
        if ref is None:
            return line
        return line.model_copy(update={"snapshot": ref.model_dump(mode="json")})

    async def release(self, handle: SandboxHandle) -> None:
        """Delete every snapshot this trajectory took (the sandbox is done with them)."""
        refs, self.refs = self.refs, []
        self._taken.clear()
        for ref in refs:
            try:
                await handle.delete_snapshot(ref)
            except CuaError as exc:  # gone with its sandbox already
                log.debug("snapshot %s was not deleted: %s", ref.id, exc.message)


class SnapshotWriter(TrajectoryWriter):
    """A trajectory writer that names each step's snapshot on its line (see the module docstring)."""

    def __init__(self, folder: str | Path, snapshots: StepSnapshots, *, frames: FramePolicy = "all",
                 quality: int = 80) -> None:
        super().__init__(folder, frames=frames, quality=quality)
        self.snapshots = snapshots

    def begin(self, meta: TrajectoryMeta, observation: Observation) -> ObservationRef:
        extra = {**meta.extra, "snapshots": {"every": self.snapshots.every}}
        ref = super().begin(meta.model_copy(update={"extra": extra}), observation)
        self.snapshots.arm()
        return ref

    def new_attempt(self, **kwargs: Any) -> int:
        self.snapshots.arm()
        return super().new_attempt(**kwargs)

    def step(self, line: StepLine) -> None:
        super().step(self.snapshots.name(line))


class SnapshottingHandle(ForwardingHandle):
    """A `SandboxHandle` that snapshots the sandbox before each act that starts a step due
    one (`StepSnapshots.before_act`); everything else goes straight to the wrapped handle."""

    def __init__(self, inner: SandboxHandle, snapshots: StepSnapshots) -> None:
        super().__init__(inner)
        self.snapshots = snapshots

    async def act(self, action: Action | Sequence[Action], *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation:
        await self.snapshots.before_act(self.inner)
        return await self.inner.act(action, frame=frame, observe=observe)

    async def act_query(self, action: Action | Sequence[Action], queries: Sequence[StateQuery], *,
                        frame: Size | None = None, observe: ObserveOptions | None = None
                        ) -> tuple[Observation, list[StateResult]]:
        await self.snapshots.before_act(self.inner)
        return await super().act_query(action, queries, frame=frame, observe=observe)

    async def fork(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> SandboxHandle:
        if not isinstance(self.inner, ForkableHandle):
            raise Unsupported(f"{type(self.inner).__name__} cannot fork", details={"handle": type(self.inner).__name__})
        return await self.inner.fork(ref, observe=observe)

    def stream(self, options: ObserveOptions | None = None, *, max_fps: float = 10.0) -> AsyncIterator[Screenshot]:
        if not isinstance(self.inner, StreamingHandle):
            raise Unsupported(f"{type(self.inner).__name__} cannot stream", details={"handle": type(self.inner).__name__})
        return self.inner.stream(options, max_fps=max_fps)

