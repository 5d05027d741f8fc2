"""How the `cua serve` process asks the C allocator to give image buffers back.

A server encodes screenshots of a megabyte or more on worker threads. glibc serves
such a block with its own mmap and unmaps it on free, but each free of one raises
the mmap threshold to that block's size (up to 32 MiB on 64-bit), so from then on
the same sizes come from the thread's heap arena, which keeps freed pages. A server
that dropped a client with 80 unread 1080p observations then held 90-170 MiB
more than one that never saw it, depending on which threads had done the work.

A fixed threshold turns that adjustment off: a block of 1 MiB or more is always
its own mapping and goes back to the OS the moment it is freed. This is for the
server's own process only (`cua serve`, `python -m cua.server`); a library must
not change its host's allocator.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

_M_MMAP_THRESHOLD = -3  # glibc's malloc.h
LARGE_BLOCK_BYTES = 1 << 20

log = logging.getLogger(__name__)


def map_large_blocks_separately(threshold: int = LARGE_BLOCK_BYTES) -> bool:
    """Fix glibc's mmap threshold at `threshold` bytes; False where the C library is not glibc."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    try:
        mallopt = libc.mallopt
    except AttributeError:  # musl and other C libraries have no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    ok = bool(mallopt(_M_MMAP_THRESHOLD, threshold))
    if not ok:
        log.warning("mallopt(M_MMAP_THRESHOLD, %d) was refused; freed image buffers may stay in the heap", threshold)
    return ok
