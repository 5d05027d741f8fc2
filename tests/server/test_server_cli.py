"""`cua serve` (as `python -m cua.server`) and `cua protocol schema`, as real processes."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys

import httpx
import jsonschema
import pytest

import cua
from cua.errors import Unauthorized
from cua.server import cli
from cua.server.app import free_port, serve_in_background, serve_in_subprocess

pytestmark = pytest.mark.slow  # starts Chromium, Xvfb, QEMU, a server or Ray


async def read_until(stream: asyncio.StreamReader, prefix: str) -> str:
    while True:
        line = (await asyncio.wait_for(stream.readline(), timeout=60)).decode()
        assert line, f"the server exited before printing {prefix!r}"
        if line.startswith(prefix):
            return line[len(prefix):].strip()


async def test_serve_generates_and_prints_a_token() -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "CUA_TOKEN"}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "cua.server", "--port", str(port),
                                                "--log-level", "warning", stdout=asyncio.subprocess.PIPE, env=env)
    try:
        assert proc.stdout is not None
        token = await read_until(proc.stdout, "token: ")
        assert len(token) >= 24
        url = f"ws://127.0.0.1:{port}/v1/ws"
        async with httpx.AsyncClient() as http:
            for _ in range(600):  # until it listens
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get(f"http://127.0.0.1:{port}/v1/health")).status_code == 200:
                        break
                await asyncio.sleep(0.1)  # polling a starting process
        async with cua.connect(url, token) as client:
            await client.ping()
        with pytest.raises(Unauthorized):
            await cua.connect(url, "guess")
    finally:
        proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(proc.wait(), timeout=60) == 0


async def test_serve_in_subprocess_with_a_chosen_token() -> None:
    async with serve_in_subprocess(token="fixed-token") as (url, token):
        assert token == "fixed-token"
        async with cua.connect(url, token) as client:
            assert await client.list(all=True) == []


async def test_no_auth_only_when_asked() -> None:
    async with serve_in_background(auth=False) as (url, token):
        assert token is None
        async with cua.connect(url) as client:
            await client.ping()
    async with serve_in_background() as (url, token):
        assert token
        with pytest.raises(Unauthorized):
            await cua.connect(url)


def test_protocol_schema_command(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    args = parser.parse_args(["protocol", "schema"])
    assert args.func(args) == 0
    schema = json.loads(capsys.readouterr().out)
    jsonschema.validate({"type": "ping", "id": 1, "v": 1}, schema["client_message"])
    jsonschema.validate({"v": 1, "type": "event", "sandbox_id": "s", "event": "died", "data": {}},
                        schema["server_message"])
    assert schema["binary_frame"]["fields"][0]["value"] == "CUA"


def test_serve_refuses_nonsense_limits(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    args = parser.parse_args(["serve", "--max-sandboxes", "0"])
    assert args.func(args) == 2
    assert "max-sandboxes" in capsys.readouterr().err
