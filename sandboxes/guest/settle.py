"""What settle detection watches: screen updates (the X DAMAGE extension) and the CPU
time of the desktop's processes."""

from __future__ import annotations

import os
import select

try:
    from .faults import UnsupportedFault
except ImportError:  # run as a script from this folder (inside a VM image)
    from faults import UnsupportedFault  # type: ignore[no-redef,import-not-found]

__all__ = ["BUSY_FRACTION", "CpuWatch", "DamageWatch"]

#: An app using more CPU than this share of a settle window is still working.
BUSY_FRACTION = 0.1

_PF_KTHREAD = 0x00200000


class CpuWatch:
    """CPU time used by the desktop's processes (not the agent, not the X server), from
    /proc/PID/schedstat (nanoseconds, main threads). An app that is still computing its
    response (building a dialog, starting up) has not settled even before it draws."""

    def __init__(self) -> None:
        self.ignore: set[int] = {os.getpid()}
        self._kernel: dict[int, bool] = {}
        self.available = os.path.exists(f"/proc/{os.getpid()}/schedstat")

    def _is_kernel(self, pid: int) -> bool:
        known = self._kernel.get(pid)
        if known is None:
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                known = bool(int(fields[6]) & _PF_KTHREAD)
            except (OSError, IndexError, ValueError):
                known = True  # gone, or unreadable: leave it out
            self._kernel[pid] = known
        return known

    def sample(self) -> dict[int, int]:
        out: dict[int, int] = {}
        if not self.available:
            return out
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            if pid in self.ignore or self._is_kernel(pid):
                continue
            try:
                with open(f"/proc/{name}/schedstat", "rb") as f:
                    out[pid] = int(f.read().split()[0])
            except (OSError, IndexError, ValueError):
                continue  # exited between listing and reading
        return out

    @staticmethod
    def used_ns(before: dict[int, int], after: dict[int, int]) -> int:
        """CPU used between two samples; a process born in between counts in full."""
        return sum(max(0, ns - before.get(pid, 0)) for pid, ns in after.items())


class DamageWatch:
    """Counts screen updates through the X DAMAGE extension on the root window."""

    def __init__(self, display_name: str) -> None:
        from Xlib import display
        from Xlib.ext import damage

        self._d = display.Display(display_name)
        if not self._d.has_extension("DAMAGE"):
            self._d.close()
            raise UnsupportedFault("the X server lacks the DAMAGE extension", reason="no_damage")
        self._d.damage_query_version()
        self._damage = self._d.screen().root.damage_create(damage.DamageReportRawRectangles)
        self._d.sync()

    def drain(self) -> int:
        n = 0
        while self._d.pending_events():
            self._d.next_event()
            n += 1
        return n

    def wait(self, seconds: float) -> bool:
        """True if any update arrives within `seconds` (all pending ones are consumed)."""
        if self.drain():
            return True
        if seconds > 0:
            ready, _, _ = select.select([self._d.fileno()], [], [], seconds)
            if ready:
                return self.drain() > 0 or self._d.pending_events() > 0
        return False

    def close(self) -> None:
        self._d.close()
