"""The bubblewrap container a `container`-isolation sandbox runs in.

Playwright launches "the browser" through a generated wrapper script (its
`executable_path`). The wrapper joins a per-sandbox cgroup (best effort) and execs
`bwrap --unshare-all` (own network namespace with only loopback, own pid namespace,
own /tmp), which runs `_supervisor.py`: it starts the services inside that namespace,
waits for `ready`, then starts Chromium with the debugging pipes passed through.

The host reaches the services' control endpoints over unix sockets in `run_dir`, a
host directory bound read-write at the same path inside the container.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import signal
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cua
from cua.errors import InfraError
from cua.sandbox import ServiceSpec

__all__ = ["Cgroup", "Container", "ro_bind_paths"]

log = logging.getLogger(__name__)

SUPERVISOR = Path(__file__).with_name("_supervisor.py")
_SYSTEM_PATHS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt",
                 "/var/cache/fontconfig")


def _project_root() -> Path:
    return Path(cua.__file__).resolve().parent.parent


def ro_bind_paths(extra: list[str]) -> list[str]:
    """Host paths the container sees read-only: the system, Python (base and venv), the project."""
    wanted = [*_SYSTEM_PATHS, sys.base_prefix, sys.prefix, str(_project_root()), str(SUPERVISOR.parent), *extra]
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


def _argv_paths(services: list[ServiceSpec]) -> list[str]:
    """Absolute host paths named in the services' argv (a user's app script or folder), so
    that a service started from outside the project runs inside the container too."""
    out = []
    for spec in services:
        for arg in spec.argv:
            if os.path.isabs(arg) and os.path.exists(arg):
                out.append(arg if os.path.isdir(arg) else os.path.dirname(arg))
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


@dataclass
class Container:
    """Files of one container sandbox on the host: wrapper, spec, sockets, cgroup."""

    run_dir: Path
    wrapper: Path
    sockets: dict[str, str]
    ports: dict[str, int]
    cgroup: Cgroup

    @classmethod
    def prepare(cls, *, sandbox_id: str, chromium: str, services: list[ServiceSpec], seed: int,
                extra_ro_binds: list[str], memory_mb: int | None, pids: int | None, tmp_root: str | None = None
                ) -> "Container":
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise InfraError("container isolation needs bubblewrap (apt-get install bubblewrap); "
                             "or use isolation='shared'")
        import tempfile

        run_dir = Path(tempfile.mkdtemp(prefix=f"cua-browser-{sandbox_id[:24]}-", dir=tmp_root))
        sockets = {s.name: str(run_dir / f"{s.name}.sock") for s in services}
        ports = {s.name: s.port for s in services}
        spec: dict[str, Any] = {
            "seed": seed,
            "services": [{"name": s.name, "argv": s.argv, "env": s.env, "port": s.port, "socket": sockets[s.name],
                          "ready_timeout": s.ready_timeout} for s in services],
        }
        spec_path = run_dir / "spec.json"
        spec_path.write_text(json.dumps(spec))
        cgroup = Cgroup.create(f"cua-{run_dir.name}", memory_mb, pids)
        # The fresh /tmp comes first, so that host paths under /tmp bound below stay visible.
        argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "cua",
                "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/var/tmp"]
        for p in ro_bind_paths([*extra_ro_binds, *_argv_paths(services)]):
            if os.path.islink(p):
                argv += ["--symlink", os.readlink(p), p]
            else:
                argv += ["--ro-bind", p, p]
        argv += ["--bind", str(run_dir), str(run_dir),
                 "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--chdir", "/tmp",
                 "--", sys.executable, "-I", str(SUPERVISOR), str(spec_path), "--", chromium]
        script = "\n".join(["#!/bin/sh", "# Generated by cua.sandboxes.browser: Chromium in a bubblewrap container.",
                            *cgroup.join_lines(), "exec " + " ".join(shlex.quote(a) for a in argv) + ' "$@"', ""])
        wrapper = run_dir / "chromium-in-bwrap"
        wrapper.write_text(script)
        wrapper.chmod(0o755)
        return cls(run_dir=run_dir, wrapper=wrapper, sockets=sockets, ports=ports, cgroup=cgroup)

    def status(self) -> dict[str, Any]:
        try:
            return json.loads((self.run_dir / "status.json").read_text())
        except (OSError, ValueError):
            return {}

    async def cleanup(self) -> None:
        await self.cgroup.release()
        shutil.rmtree(self.run_dir, ignore_errors=True)
