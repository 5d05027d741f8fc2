"""A recording whose sandbox crashes (its browser process killed) ends as the infrastructure's
failure: status infra_error with the crash's ErrorRecord in the trajectory, the recording
queue's index line and the page's messages; the queue puts the task back, not counted
against the person."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from websockets.asyncio.client import ClientConnection, connect

from cua.episode.handle import SandboxHandle
from cua.episode.local import open_local
from cua.episode.openers import sandbox_opener
from cua.errors import FailureClass
from cua.record.live import LiveSession
from cua.record.queue import Job, RecordQueue
from cua.record.service import RecorderService
from cua.server_process import free_port
from cua.tasks.registry import get_template
from cua.trajectory import TrajectoryWriter, read_trajectory, validate

TASK = "todo.mark_done@1"


def _assert_crash(error: dict[str, Any] | None) -> None:
    assert error is not None
    assert error["code"] == "sandbox_crashed" and error["type"] == "SandboxCrashed", error
    assert error["fault"] == "infra" and error["failure"] == FailureClass.SANDBOX_CRASHED
    assert error["retryable"] is False  # as SandboxCrashed says


def _assert_crashed_trajectory(folder: Path) -> None:
    assert validate(folder).ok, validate(folder).problems
    traj = read_trajectory(folder)
    assert traj.end is not None and traj.end.status == "infra_error" and traj.end.verdict is None
    assert traj.end.failure is FailureClass.SANDBOX_CRASHED
    assert traj.end.error is not None
    _assert_crash(traj.end.error.model_dump(mode="json"))
    assert not list(folder.glob(".*.tmp"))  # nothing half-written left beside it


@pytest.mark.slow
async def test_a_live_recording_ends_as_infra_error_when_its_browser_dies(tmp_path: Path) -> None:
    instance = get_template(TASK).instantiate(0)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        session = LiveSession(handle=handle, instance=instance, writer=TrajectoryWriter(tmp_path / "rec"))
        await session.start()
        os.kill(handle.info.details["browser_pid"], signal.SIGKILL)
        await asyncio.wait_for(session.finished.wait(), 60)  # nobody acted: the sandbox's death ends it
    record = session.result
    assert record is not None and record.status == "infra_error" and record.verdict is None
    assert record.failure is FailureClass.SANDBOX_CRASHED
    assert record.error is not None
    _assert_crash(record.error.model_dump(mode="json"))
    _assert_crashed_trajectory(tmp_path / "rec")


@pytest.mark.slow
async def test_a_desktop_recording_ends_as_infra_error_when_its_x_server_dies(tmp_path: Path) -> None:
    instance = get_template("desktop.create_file@1").instantiate(0)
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        session = LiveSession(handle=handle, instance=instance, writer=TrajectoryWriter(tmp_path / "rec"))
        await session.start()
        os.kill(_host_pid_of(handle.info.details["container_pid"], b"Xvfb"), signal.SIGKILL)
        await asyncio.wait_for(session.finished.wait(), 60)
    record = session.result
    assert record is not None and record.status == "infra_error" and record.error is not None
    _assert_crash(record.error.model_dump(mode="json"))
    _assert_crashed_trajectory(tmp_path / "rec")


@pytest.mark.slow
async def test_a_recording_over_a_server_ends_as_server_lost_when_the_connection_drops(tmp_path: Path) -> None:
    token = secrets.token_urlsafe(16)
    port = free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cua.server", "--port", str(port), "--log-level", "warning",
        env={**os.environ, "CUA_TOKEN": token}, stdout=asyncio.subprocess.DEVNULL)
    try:
        deadline = asyncio.get_running_loop().time() + 60
        async with httpx.AsyncClient() as http:
            while True:
                assert server.returncode is None and asyncio.get_running_loop().time() < deadline
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get(f"http://127.0.0.1:{port}/v1/health", timeout=2)).status_code == 200:
                        break
                await asyncio.sleep(0.1)  # a starting process: nothing else to wait on
        instance = get_template("fake.set_counter@1").instantiate(0)
        async with sandbox_opener(server=f"ws://127.0.0.1:{port}/v1/ws", token=token, reconnect_s=1) as opener, \
                opener(instance.sandbox_kind, instance.sandbox_config) as handle:
            session = LiveSession(handle=handle, instance=instance, writer=TrajectoryWriter(tmp_path / "rec"))
            await session.start()
            streaming = asyncio.create_task(session.stream(8.0))
            server.kill()  # the connection drops (and the sandbox with its server)
            await asyncio.wait_for(session.finished.wait(), 60)
            await streaming
    finally:
        if server.returncode is None:
            server.kill()
        await server.wait()
    record = session.result
    assert record is not None and record.status == "infra_error" and record.error is not None
    error = record.error
    assert error.type == "ConnectionLost" and error.failure is FailureClass.SERVER_LOST
    assert error.fault == "infra" and error.retryable is False  # as ConnectionLost says
    traj = read_trajectory(tmp_path / "rec")
    assert validate(tmp_path / "rec").ok
    assert traj.end is not None and traj.end.status == "infra_error" and traj.end.failure is FailureClass.SERVER_LOST


def _host_pid_of(root: int, program: bytes) -> int:
    """The host pid of the process running `program` in the process tree under `root`."""
    todo, seen = [root], set()
    while todo:
        pid = todo.pop()
        seen.add(pid)
        if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].rsplit(b"/", 1)[-1] == program:
            return pid
        for task in Path(f"/proc/{pid}/task").iterdir():
            todo += [int(c) for c in (task / "children").read_text().split() if int(c) not in seen]
    raise AssertionError(f"no process under {root} runs {program!r}")


async def _until(ws: ClientConnection, kind: str) -> dict[str, Any]:
    """The next JSON message of type `kind` (frames and other messages skipped)."""
    while True:
        message = await asyncio.wait_for(ws.recv(), 60)
        if isinstance(message, str) and (data := json.loads(message))["type"] == kind:
            return dict(data)


@pytest.mark.slow
async def test_the_recording_queue_reports_a_crash_and_gives_the_task_back(tmp_path: Path) -> None:
    out = tmp_path / "out"
    queue = RecordQueue([Job(template=get_template(TASK), seed=0)], keep="all")
    opened: list[SandboxHandle] = []

    @asynccontextmanager
    async def opener(kind: str, config: dict[str, Any]) -> AsyncIterator[SandboxHandle]:
        async with open_local(kind, config) as handle:
            opened.append(handle)
            yield handle

    service = RecorderService(queue, opener, out, frames="last")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(service.app, log_level="warning", lifespan="off"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        deadline = asyncio.get_running_loop().time() + 30
        while not server.started:
            assert asyncio.get_running_loop().time() < deadline, "the recorder did not start"
            await asyncio.sleep(0.05)  # uvicorn says it is up with a flag, not an event
        url = f"ws://127.0.0.1:{sock.getsockname()[1]}/ws?t={service.token}&operator=alice"
        async with connect(url, max_size=None) as ws:
            task = await _until(ws, "task")
            assert task["task_id"] == TASK and task["attempt"] == 1
            status = await _until(ws, "status")
            assert status["error"] is None
            assert len(opened) == 1
            os.kill(opened[0].info.details["browser_pid"], signal.SIGKILL)
            result = await _until(ws, "result")
            assert result["status"] == "infra_error" and result["verdict"] is None
            _assert_crash(result["error"])
            outcome = await _until(ws, "outcome")
            assert outcome["outcome"] == "crashed"
            _assert_crash(outcome["error"])
            assert outcome["progress"]["crashed"] == 1 and outcome["progress"]["failed"] == 0
            again = await _until(ws, "task")  # the same task, on a fresh sandbox, not an attempt used up
            assert again["task_id"] == TASK and again["attempt"] == 1 and len(opened) == 2
            await ws.send(json.dumps({"type": "done", "status": "success"}))
            kept = await _until(ws, "outcome")
            assert kept["outcome"] == "kept"
    finally:
        server.should_exit = True
        await serving
    lines = [json.loads(line) for line in (out / "recording.jsonl").read_text().splitlines()]
    assert [line["outcome"] for line in lines] == ["crashed", "kept"]
    _assert_crash(lines[0]["error"])
    assert lines[1]["error"] is None
    _assert_crashed_trajectory(Path(lines[0]["trajectory"]))
    assert Path(lines[0]["trajectory"]).parent == out / "crashed"

