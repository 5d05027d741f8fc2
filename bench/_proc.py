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


def argv(pid: int) -> list[bytes]:
    """The process's command line (empty when the process is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def _proc_bytes(path: str, key: str) -> int:
    """A `Key:  N kB` line of a /proc file, in bytes (0 when the process is gone)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def rss_bytes(pid: int) -> int:
    """The process's resident set size."""
    return _proc_bytes(f"/proc/{pid}/status", "VmRSS:")


def tree_pss_bytes(root: int) -> int:
    """Proportional set size summed over `root` and its descendants: shared pages counted once."""
    return sum(_proc_bytes(f"/proc/{p.pid}/smaps_rollup", "Pss:") for p in process_tree(root))


def memory_sample(pid: int) -> tuple[int, int]:
    """(resident set size of `pid`, proportional set size of its whole tree), in bytes."""
    return rss_bytes(pid), tree_pss_bytes(pid)
