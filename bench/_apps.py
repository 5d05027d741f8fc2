"""The todo app served on a host port, for the raw Playwright references of the benchmarks."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
from collections.abc import AsyncIterator

APP = [sys.executable, "-m", "cua.tasks.apps.serve", "todo"]


@contextlib.asynccontextmanager
async def host_app() -> AsyncIterator[str]:
    """Run the todo app (seed 0) on a free host port; yields its base URL."""
    from cua.server.app import free_port

    port = free_port()
    sock = os.path.join(tempfile.mkdtemp(prefix="cua-bench-"), "app.sock")
    proc = await asyncio.create_subprocess_exec(*APP, "--port", str(port), "--socket", sock, "--seed", "0",
                                                stdout=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        while (line := await asyncio.wait_for(proc.stdout.readline(), timeout=60)) and b"ready" not in line:
            pass
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        await proc.wait()
