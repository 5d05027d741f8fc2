"""`fork_sync`: `cua.branch.fork` for the blocking client (`cua.sync_api`).

A script that drives a `cua serve` through `cua.sync_api` and recorded a trajectory with
snapshots branches it at step k here: the async `fork` runs, unchanged, on the
connection's own loop thread (`Sandbox.run_async`), so the connection alone writes bytes
and every check and refusal is the async one's. It lives in the branch layer because the
client layer (`cua.sync_api`) may not import the episode layer that `fork` stands on.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from cua.branch.fork import ForkedSandbox, fork
from cua.client import RemoteSandbox
from cua.errors import InternalError, Timeout
from cua.observation import Observation, ObserveOptions
from cua.sync_api import Sandbox
from cua.trajectory import Trajectory

__all__ = ["SyncForkedSandbox", "fork_sync"]


@dataclass
class SyncForkedSandbox:
    """A live blocking `Sandbox` in the state the agent acted on at `step` (close it when done)."""

    sandbox: Sandbox
    observation: Observation
    step: int
    #: The step whose snapshot it was forked from.
    snapshot_step: int
    #: Recorded actions performed again after the fork (0: the snapshot was at `step`).
    replayed: int
    #: Screens compared with the recording on the way (0 when it kept no frames).
    checked: int

    def close(self) -> None:
        self.sandbox.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def fork_sync(trajectory: Trajectory | str | Path, step: int, *, source: Sandbox,
              observe: ObserveOptions | None = None, timeout: float | None = None) -> SyncForkedSandbox:
    """`cua.branch.fork(trajectory, step, source=...)`, blocking: `source` is the
    `cua.sync_api.Sandbox` that took the trajectory's snapshots. `timeout` bounds the whole
    branch (the fork and the actions performed again; `cua.errors.Timeout` past it, the
    half-made branch closed); each request also keeps the connection's own timeout.

    Raises `BranchRefused` unchanged when the step cannot be reached."""

    async def work(remote: RemoteSandbox) -> ForkedSandbox:
        try:
            async with asyncio.timeout(timeout):
                return await fork(trajectory, step, source=remote, observe=observe)
        except TimeoutError:
            raise Timeout(f"branching at step {step} took over {timeout} s",
                          details={"step": step, "timeout": timeout}) from None

    forked = source.run_async(work)
    if not isinstance(forked.handle, RemoteSandbox):  # a RemoteSandbox's fork is one
        source.run_async(lambda _: forked.handle.close())
        raise InternalError(f"a fork of {source.id} is a {type(forked.handle).__name__}, not a RemoteSandbox")
    return SyncForkedSandbox(sandbox=source.twin(forked.handle), observation=forked.observation, step=forked.step,
                             snapshot_step=forked.snapshot_step, replayed=forked.replayed, checked=forked.checked)
