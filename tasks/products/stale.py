"""The products' folders in the temp folder that outlive their process: a service (or an
image build) killed with SIGKILL cannot remove its folder, so each such folder holds its
owner's pid, and the next service of the product removes those whose owner is gone (as the
VM sandbox does with its runtime folders)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["OWNER_FILE", "own_folder", "reap_stale"]

#: In an instance's folder: the pid of the process that owns it, and its pid namespace.
OWNER_FILE = "owner.pid"


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def reap_stale(name: str) -> list[Path]:
    """Remove the instance folders of product `name` (and its builds' scratch folders) in
    the temp folder whose owner process is gone: a service killed with SIGKILL cannot
    remove its own. A folder with no owner file, a live owner, or an owner in another pid
    namespace (a sandbox's: its pids are not ours to judge) is left alone."""
    removed = []
    namespace = _pid_namespace()
    for owner in Path(tempfile.gettempdir()).glob(f"cua-{name}-*/{OWNER_FILE}"):
        try:
            pid_text, _, owner_namespace = owner.read_text().strip().partition(" ")
            pid = int(pid_text)
        except (OSError, ValueError):
            continue
        if owner_namespace == namespace and pid > 0 and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(owner.parent, ignore_errors=True)
            removed.append(owner.parent)
    return removed


def own_folder(folder: Path) -> None:
    """Mark `folder` as this process's (see `reap_stale`)."""
    (folder / OWNER_FILE).write_text(f"{os.getpid()} {_pid_namespace()}\n")
