"""What every namespace container of cua shares: the read-only host paths it sees, and
cgroup v1 memory/pids limits. The browser and desktop containers both build on these."""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import cua

__all__ = ["Cgroup", "ro_bind_paths"]

log = logging.getLogger(__name__)

_SYSTEM_PATHS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt",
                 "/var/cache/fontconfig")


def _project_root() -> Path:
    return Path(cua.__file__).resolve().parent.parent


def ro_bind_paths(extra: list[str]) -> list[str]:
    """Host paths the container sees read-only: the system, Python (base and venv), the project."""
    wanted = [*_SYSTEM_PATHS, sys.base_prefix, sys.prefix, str(_project_root()), *extra]
    out: list[str] = []
    for p in wanted:
        if not os.path.lexists(p):
            continue
        if os.path.islink(p):
            out.append(p)  # bound as a symlink, below
            continue
        real = os.path.realpath(p)
        if not any(real == q or real.startswith(q.rstrip("/") + "/") for q in out if not os.path.islink(q)):
            out.append(real)
    return out


@dataclass
class Cgroup:
    """A cgroup v1 memory+pids group for one container, if this host lets us make one."""

    dirs: list[Path] = field(default_factory=list)
    applied: bool = False
    reason: str = ""

    @classmethod
    def create(cls, name: str, memory_mb: int | None, pids: int | None) -> "Cgroup":
        group = cls()
        root = Path("/sys/fs/cgroup")
        if (root / "cgroup.controllers").exists():
            group.reason = "cgroup v2 only host; limits not applied"
            return group
        try:
            mine = {parts[1]: parts[2] for parts in (line.split(":", 2) for line in
                                                       Path("/proc/self/cgroup").read_text().splitlines())}
        except OSError as exc:
            group.reason = f"cannot read /proc/self/cgroup: {exc}"
            return group
        for controller, limit_file, value in (("memory", "memory.limit_in_bytes", memory_mb and memory_mb << 20),
                                              ("pids", "pids.max", pids)):
            if value is None or controller not in mine:
                continue
            path = root / controller / mine[controller].lstrip("/") / name
            try:
                path.mkdir(exist_ok=True)
                group.dirs.append(path)
                (path / limit_file).write_text(str(value))
            except OSError as exc:
                group.reason = f"{controller}: {exc.strerror or exc}"
                group.remove()
                group.dirs = []
                return group
        group.applied = bool(group.dirs)
        if not group.applied:
            group.reason = group.reason or "no memory/pids controller"
        return group

    def verdict(self) -> str | None:
        """Why the kernel stopped this group's processes, if a limit did: the memory limit
        (an OOM kill) or the process limit (a refused fork). None when no limit was hit."""
        found: list[str] = []
        for d in self.dirs:
            try:
                if (d / "memory.oom_control").exists():
                    control = dict(line.split() for line in (d / "memory.oom_control").read_text().splitlines()
                                   if len(line.split()) == 2)
                    if int(control.get("oom_kill", 0)) > 0 or int(control.get("under_oom", 0)) > 0:
                        limit_mib = int((d / "memory.limit_in_bytes").read_text()) >> 20
                        found.append(f"out of memory: the sandbox hit its memory limit of {limit_mib} MiB "
                                     f"({control.get('oom_kill', '?')} process(es) killed)")
                if (d / "pids.events").exists():
                    events = dict(line.split() for line in (d / "pids.events").read_text().splitlines()
                                  if len(line.split()) == 2)
                    if int(events.get("max", 0)) > 0:
                        max_pids = (d / "pids.max").read_text().strip()
                        found.append(f"process limit: the sandbox hit its limit of {max_pids} processes "
                                     f"({events['max']} fork(s) refused)")
            except (OSError, ValueError):
                continue  # the group is gone (released) or unreadable: nothing to add
        return "; ".join(found) or None

    def join_lines(self) -> list[str]:
        return [f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))} 2>/dev/null || true" for d in self.dirs]

    def populated(self) -> bool:
        try:
            return any((d / "cgroup.procs").read_text().strip() for d in self.dirs)
        except OSError:
            return False

    def remove(self) -> None:
        """Remove the groups if they are empty (a failed setup); see `release` for a used one."""
        for d in self.dirs:
            try:
                d.rmdir()
            except FileNotFoundError:
                continue
            except OSError as exc:
                log.warning("cgroup %s not removed: %s", d, exc)

    async def release(self, grace_s: float = 3.0) -> None:
        """Kill whatever still runs in the groups (only this sandbox's processes are there),
        then remove them once the kernel has reaped those processes."""
        deadline = time.monotonic() + grace_s
        for d in self.dirs:
            while d.exists():
                try:
                    pids = [int(p) for p in (d / "cgroup.procs").read_text().split()]
                    for pid in pids:
                        os.kill(pid, signal.SIGKILL)
                    d.rmdir()
                except ProcessLookupError:
                    continue
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if time.monotonic() > deadline:
                        log.warning("cgroup %s not removed: %s", d, exc)
                        break
                    await asyncio.sleep(0.02)  # killed processes leave the group when the kernel reaps them
