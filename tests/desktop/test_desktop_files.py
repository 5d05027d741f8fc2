"""The protocol's `upload` and `run` on a desktop sandbox, through a real server and client:
binary files arrive byte for byte (chunked when big) as the desktop user, commands are
bounded in time and output, and paths outside the user's home are refused."""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest

import cua
from cua.errors import BadRequest
from cua.server.app import serve_in_background

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]

if any(shutil.which(t) is None for t in ("bwrap", "Xvfb", "openbox", "xterm")):
    pytest.skip("desktop sandboxes need bwrap, Xvfb, openbox and xterm", allow_module_level=True)


async def test_upload_and_run_through_the_server() -> None:
    data = os.urandom(5 * 1024 * 1024 + 17)  # three chunks
    async with serve_in_background(max_sandboxes=2) as server, \
            cua.connect(server.url, server.token, default_timeout=120) as client:
        sb = await client.create("desktop", {"apps": []})
        try:
            path = await sb.upload("in/blob.bin", data)
            assert path == "/home/user/in/blob.bin"
            out = await sb.run(["sh", "-c", "sha256sum in/blob.bin; stat -c '%U %s' in/blob.bin; id -un"])
            sums, owner_size, who = out.stdout.splitlines()
            digest = sums.split()[0]
            assert out.returncode == 0 and not out.timed_out
            assert digest == hashlib.sha256(data).hexdigest()
            assert owner_size == f"user {len(data)}" and who == "user"

            await sb.upload("run.sh", b"#!/bin/sh\necho \"$1 from $(pwd)\"\ncat\n", mode=0o755)
            out = await sb.run(["./run.sh", "hi"], stdin=b"piped", cwd=".")
            assert out.stdout == "hi from /home/user\npiped" and out.returncode == 0

            slow = await sb.run(["sleep", "30"], time_limit=1.0)
            assert slow.timed_out and slow.returncode is None and slow.duration_ms < 20_000
            big = await sb.run(["head", "-c", "50000", "/dev/zero"], max_output_bytes=1000)
            assert big.truncated and len(big.stdout) == 1000

            with pytest.raises(BadRequest):
                await sb.upload("../../etc/evil", b"x")
            with pytest.raises(BadRequest):
                await sb.upload("/etc/evil", b"x")
        finally:
            await sb.close()
