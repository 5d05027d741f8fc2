"""VM snapshots as plain files, so that any number of VMs can start from one.

A snapshot is a folder on tmpfs holding:

- `devstate`: the migration stream of device state (CPU registers, devices; ~1 MB), written
  with `x-ignore-shared` so that it leaves guest RAM out;
- `ram`: a copy of the guest RAM file at that instant (holes kept: only touched pages);
- `overlay.qcow2`: a copy of the disk overlay at that instant (its backing file is the
  read-only base image);
- `meta.json`: what a restoring QEMU must match (memory size, accelerator, boot files).

Snapshot files are never written after they are made: every VM started from one gets its
own copies of `ram` and `overlay.qcow2`. That makes hard links a free way to share a
snapshot between a VM and its forks.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cua.errors import BadRequest, UnknownSnapshot

__all__ = ["SnapshotFiles", "lookup", "pending", "ready", "register"]


@dataclass(frozen=True)
class SnapshotFiles:
    id: str
    dir: Path

    @property
    def devstate(self) -> Path:
        return self.dir / "devstate"

    @property
    def ram(self) -> Path:
        return self.dir / "ram"

    @property
    def overlay(self) -> Path:
        return self.dir / "overlay.qcow2"

    @property
    def meta_path(self) -> Path:
        return self.dir / "meta.json"

    @classmethod
    def new(cls, root: Path) -> "SnapshotFiles":
        snap_id = f"vmsnap-{uuid.uuid4().hex[:12]}"
        path = root / snap_id
        path.mkdir(parents=True)
        return cls(snap_id, path)

    def meta(self) -> dict[str, Any]:
        return dict(json.loads(self.meta_path.read_text()))

    def write_meta(self, meta: dict[str, Any]) -> None:
        tmp = self.meta_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(meta, indent=2))
        tmp.rename(self.meta_path)  # a snapshot without meta.json is incomplete, never used

    @property
    def complete(self) -> bool:
        return all(p.is_file() for p in (self.devstate, self.ram, self.overlay, self.meta_path))

    def size_bytes(self) -> int:
        """Bytes actually stored (the RAM file is sparse)."""
        return sum(p.stat().st_blocks * 512 for p in self.dir.iterdir() if p.is_file())

    def link_to(self, root: Path) -> "SnapshotFiles":
        """A second name for this snapshot (hard links: no copy; each name deletes alone)."""
        other = SnapshotFiles.new(root)
        for p in (self.devstate, self.ram, self.overlay, self.meta_path):
            os.link(p, other.dir / p.name)
        return other

    def delete(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


# Snapshots known to this process, by id: restore and fork receive only a SnapshotRef.
_registry: dict[str, SnapshotFiles] = {}
_lock = threading.Lock()


def register(snap: SnapshotFiles) -> None:
    with _lock:
        _registry[snap.id] = snap


def forget(snap_id: str) -> SnapshotFiles | None:
    with _lock:
        return _registry.pop(snap_id, None)


#: Snapshots whose files are still being written (a live snapshot's conversion), by id.
_pending: dict[str, "asyncio.Task[None]"] = {}


def pending(snap_id: str, task: "asyncio.Task[None]") -> None:
    """Mark a snapshot as being completed by `task`; `ready()` waits for it."""
    _pending[snap_id] = task
    task.add_done_callback(lambda _t: _pending.pop(snap_id, None) if _pending.get(snap_id) is _t else None)


async def ready(snap_id: str) -> None:
    """Wait until a snapshot's files are complete (at once for most); a failed
    completion is raised here, to the restore or fork that needed it."""
    task = _pending.get(snap_id)
    if task is not None:
        await asyncio.shield(task)


def lookup(snap_id: str, *, memory_mb: int) -> SnapshotFiles:
    with _lock:
        snap = _registry.get(snap_id)
    if snap is None or not snap.complete:
        raise UnknownSnapshot(f"no VM snapshot {snap_id!r}", details={"snapshot_id": snap_id})
    meta = snap.meta()
    if meta.get("memory_mb") != memory_mb:
        raise BadRequest(f"snapshot {snap_id} is of a {meta.get('memory_mb')} MiB VM; this one has {memory_mb} MiB",
                         details={"snapshot_id": snap_id})
    return snap
