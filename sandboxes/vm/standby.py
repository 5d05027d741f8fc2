"""The standby: at most one QEMU per VM sandbox loaded with copies of a snapshot's files,
device state in and paused, so that a restore of that snapshot is only "continue".

Prepared in the background after each snapshot and restore (`schedule`); a restore takes
it when it was prepared for the snapshot being restored (`take`), else it is thrown away.
A standby that failed to start costs nothing but the log line: the restore prepares its
own instance.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from cua.errors import CuaError
from cua.sandboxes.vm import snapshots
from cua.sandboxes.vm.instance import Instance
from cua.sandboxes.vm.qemu import LaunchSpec
from cua.sandboxes.vm.snapshots import SnapshotFiles

__all__ = ["Standby"]

log = logging.getLogger(__name__)


class Standby:
    """One sandbox's standby slot: the snapshot it is prepared for, and the preparing task."""

    def __init__(self, sandbox_id: str, *, boot_timeout: float) -> None:
        self._sandbox_id = sandbox_id
        self._boot_timeout = boot_timeout
        self._slot: tuple[str, asyncio.Task[Instance]] | None = None

    @property
    def snapshot_id(self) -> str | None:
        """The snapshot the standby is (being) prepared for; None when there is none."""
        return self._slot[0] if self._slot is not None else None

    def schedule(self, snap: SnapshotFiles, spec: Callable[[], LaunchSpec]) -> None:
        """Prepare a standby for `snap` (once its files are written), replacing one
        prepared for another snapshot; nothing when one is already there for `snap`."""
        if self._slot is not None and self._slot[0] == snap.id:
            return
        old = self._slot
        launch = spec()

        async def prepare() -> Instance:
            await snapshots.ready(snap.id)
            return await Instance.prepare(launch, snap, timeout=self._boot_timeout)

        task = asyncio.create_task(prepare(), name=f"vm-standby-{self._sandbox_id}")
        self._slot = (snap.id, task)
        if old is not None:
            asyncio.create_task(_discard(old[1]))

    async def take(self, snap_id: str) -> Instance | None:
        """The prepared instance when it is for `snap_id` (waiting for it to be ready);
        None otherwise, the slot emptied either way."""
        if self._slot is None:
            return None
        sid, task = self._slot
        self._slot = None
        if sid != snap_id:
            await _discard(task)
            return None
        try:
            return await task
        except CuaError as exc:
            log.warning("vm %s: standby for %s failed (%s); restoring without it", self._sandbox_id, snap_id, exc)
            return None

    async def ready(self) -> bool:
        """Wait until the standby (if any) is prepared; True when one is waiting."""
        if self._slot is None:
            return False
        _, task = self._slot
        with contextlib.suppress(CuaError, asyncio.CancelledError):
            await asyncio.shield(task)
        return task.done() and not task.cancelled() and task.exception() is None

    async def drop(self) -> None:
        """Throw the standby away, prepared or not."""
        if self._slot is not None:
            _, task = self._slot
            self._slot = None
            await _discard(task)


async def _discard(task: asyncio.Task[Instance]) -> None:
    """Throw away a standby instance, finished or not."""
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, CuaError, OSError):
        inst = await task
        await inst.destroy()
