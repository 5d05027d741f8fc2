"""Process trees read from /proc, for the benchmarks that measure a run's processes."""

from __future__ import annotations

import os
from dataclasses import dataclass

_HZ = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcStat:
    pid: int
    ppid: int
    #: The kernel's short name (`comm`), at most 15 characters.
    name: str
    #: User plus system CPU seconds so far.
    cpu_s: float


def process_tree(root: int) -> list[ProcStat]:
    """`root` and all its descendants, as they are now (processes that exit meanwhile are left out)."""
    stats: dict[int, ProcStat] = {}
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # exited meanwhile
        name, rest = stat.split("(", 1)[1].rsplit(")", 1)
        fields = rest.split()
        proc = ProcStat(pid=int(entry.name), ppid=int(fields[1]), name=name,
                        cpu_s=(int(fields[11]) + int(fields[12])) / _HZ)
        stats[proc.pid] = proc
        children.setdefault(proc.ppid, []).append(proc.pid)
    out: list[ProcStat] = []
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid in stats:
            out.append(stats[pid])
        stack += children.get(pid, [])
    return out
