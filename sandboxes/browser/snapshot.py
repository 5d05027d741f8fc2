"""Snapshot blobs of browser sandboxes, kept in the host process.

Only a `SnapshotRef` (id and size) leaves the process; the bytes stay in one store per
process, so a snapshot taken in one sandbox restores into any other sandbox of the
same process: its forks, or a fresh sandbox with the same services.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit
from typing import Any

from cua.errors import UnknownSnapshot
from cua.sandbox import SnapshotRef

__all__ = ["BrowserSnapshot", "SnapshotStore", "STORE", "rebase_url"]


@dataclass
class BrowserSnapshot:
    url: str
    scroll: tuple[float, float]
    pointer: tuple[float, float]
    cookies: list[dict[str, Any]]
    #: origin -> {"local": {...}, "session": {...}} for the page's origin.
    storage: dict[str, dict[str, dict[str, str]]]
    #: service name -> database image.
    services: dict[str, bytes]
    #: service name -> the port the page used; restoring elsewhere rebases URLs onto that sandbox's ports.
    ports: dict[str, int] = field(default_factory=dict)
    #: Unsubmitted form state of the page: edited fields (by index among the page's form
    #: controls) and the focused control with its selection; see sandbox._PAGE_FORMS.
    forms: dict[str, Any] = field(default_factory=dict)

    @property
    def size_bytes(self) -> int:
        storage = sum(len(k) + len(v) for origin in self.storage.values() for area in origin.values()
                      for k, v in area.items())
        return sum(len(b) for b in self.services.values()) + storage + 200 * len(self.cookies) + len(self.url)


def rebase_url(url: str, old: dict[str, int], new: dict[str, int]) -> str:
    """Point a loopback URL at a service's port in another sandbox (shared-mode ports differ)."""
    parts = urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost") or parts.port is None:
        return url
    for name, port in old.items():
        if parts.port == port and name in new:
            return urlunsplit(parts._replace(netloc=f"{parts.hostname}:{new[name]}"))
    return url


class SnapshotStore:
    def __init__(self) -> None:
        self._blobs: dict[str, BrowserSnapshot] = {}
        self._lock = threading.Lock()

    def put(self, snapshot_id: str, blob: BrowserSnapshot) -> None:
        with self._lock:
            self._blobs[snapshot_id] = blob

    def get(self, ref: SnapshotRef) -> BrowserSnapshot:
        with self._lock:
            blob = self._blobs.get(ref.id)
        if blob is None:
            raise UnknownSnapshot(f"no browser snapshot {ref.id!r} in this process", details={"snapshot": ref.id})
        return blob

    def delete(self, ref: SnapshotRef) -> None:
        with self._lock:
            self._blobs.pop(ref.id, None)

    def __len__(self) -> int:
        return len(self._blobs)


STORE = SnapshotStore()
