"""Collection at scale: one live-view server that walks a queue of tasks for several people.

Everyone opens the same URL; each page is a *station* that is handed the next job of
the shared `RecordQueue`, gets a fresh sandbox for it (from one sandbox server, or in
process), and demonstrates it through the live view (`LiveSession`: the same episode,
trajectory and input forwarding as a single `cua record TASK`). The page shows the
instruction and the queue's progress, and has Done, Infeasible, Discard (drop this
demonstration; the task goes back to the queue) and Redo (drop it and start the same
task again). When a demonstration ends its trajectory is kept under OUT/trajectories/
(it passed, or every one is kept), or it is deleted and the task goes back to the queue;
then the station gets the next task. OUT/recording.jsonl has one line per demonstration
(kept, failed, discarded, abandoned, crashed), appended as it ends, each written whole.

A demonstration whose sandbox is lost (`LiveSession.crashed`) is "crashed": its trajectory
ends as `infra_error` with the crash's `ErrorRecord` and is kept under OUT/crashed/, its
index line carries that error, the page is told the outcome with the error, and the task
goes back to the queue (not counted against the person; see `RecordQueue.crashed_one`).

Each demonstration's sandbox, episode, stream and trajectory writer live only while it
does (a `async with` around one job), so memory stays flat however long people record;
bench/record_soak.py measures it. A page closed mid-demonstration keeps what was done
under OUT/abandoned/ and puts the task back first in line.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import secrets
import shutil
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from cua.episode.handle import SandboxOpener
from cua.errors import ErrorRecord, InfraError
from cua.observation import ObserveOptions
from cua.record.live import PAGE, LiveSession, live_gate, page_message
from cua.record.queue import Job, RecordQueue
from cua.trajectory import FramePolicy, TrajectoryWriter

__all__ = ["RecorderService"]

log = logging.getLogger(__name__)
Outcome = Literal["kept", "failed", "discarded", "abandoned", "crashed"]


class _Gone(Exception):
    """The station's page went away."""


class _Ended:
    """What `RecorderService._next` gives when the demonstration ended before the page spoke."""


_ENDED = _Ended()


class RecorderService:
    def __init__(self, queue: RecordQueue, opener: SandboxOpener, out: Path, *, frames: FramePolicy = "all",
                 max_fps: float = 8.0, token: str | None = None, observe: ObserveOptions | None = None,
                 host: str = "127.0.0.1", allowed_origins: Iterable[str] = ()) -> None:
        self.queue, self.opener, self.out = queue, opener, Path(out)
        self.frames: FramePolicy = frames
        self.max_fps = max_fps
        self.observe = observe or ObserveOptions()
        self.token = token or secrets.token_urlsafe(16)
        self.out.mkdir(parents=True, exist_ok=True)
        self._index = self.out / "recording.jsonl"
        self._names = itertools.count(1)
        self.stations: set[str] = set()
        #: (outcome, task id, seed, operator, passed) of each demonstration, in order.
        self.log: list[tuple[str, str, int, str, bool | None]] = []
        #: Who may open the page and its stations: `live_gate`, the same rules as one live view.
        self.app = Starlette(routes=[Route("/", self._page), WebSocketRoute("/ws", self._station)],
                             middleware=[live_gate(self.token, host=host, allowed_origins=allowed_origins)])
        self.app.state.token = self.token

    async def _page(self, request: Request) -> Response:
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    # --- one station: a person's page ---

    async def _station(self, ws: WebSocket) -> None:
        await ws.accept()
        operator = str(ws.query_params.get("operator") or f"person-{next(self._names)}")[:64]
        station = uuid.uuid4().hex
        self.stations.add(station)
        inbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        pump = asyncio.create_task(self._pump(ws, inbox), name=f"record-inbox-{operator}")
        try:
            job: Job | None = None
            while True:
                if job is None:
                    job = self.queue.take(station)
                if job is None:
                    if self.queue.finished.is_set():
                        await self._send(ws, {"type": "finished", "progress": self.queue.progress()})
                        while await inbox.get() is not None:
                            pass
                        return
                    await self._send(ws, {"type": "waiting", "progress": self.queue.progress()})
                    await self._idle(inbox)
                    continue
                redo = await self._demonstrate(ws, station, job, operator, inbox)
                job = job if redo else None
        except (_Gone, WebSocketDisconnect):
            pass
        finally:
            self.queue.release(station)
            self.stations.discard(station)
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump

    async def _pump(self, ws: WebSocket, inbox: asyncio.Queue[dict[str, Any] | None]) -> None:
        try:
            while True:
                text = await ws.receive_text()
                try:
                    message = page_message(text)
                except ValueError as exc:
                    await self._send(ws, {"type": "rejected", "message": f"not a message: {exc}"[:500]})
                    continue
                await inbox.put(message)
        except (WebSocketDisconnect, RuntimeError):
            await inbox.put(None)

    @staticmethod
    async def _next(inbox: asyncio.Queue[dict[str, Any] | None], session: LiveSession
                    ) -> dict[str, Any] | _Ended | None:
        """The page's next message, or `_ENDED` when the demonstration ends first (its sandbox
        was lost while the person was not acting)."""
        message = asyncio.ensure_future(inbox.get())
        ended = asyncio.ensure_future(session.finished.wait())
        done, _ = await asyncio.wait({message, ended}, return_when=asyncio.FIRST_COMPLETED)
        ended.cancel()
        if message in done:
            return message.result()
        message.cancel()
        return _ENDED

    async def _idle(self, inbox: asyncio.Queue[dict[str, Any] | None]) -> None:
        """Wait for a job to come back to the queue (or the page to go)."""
        changed = asyncio.create_task(self.queue.changed.wait())
        message = asyncio.create_task(inbox.get())
        done, pending = await asyncio.wait({changed, message}, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        if message in done and message.result() is None:
            raise _Gone

    @staticmethod
    async def _send(ws: WebSocket, message: dict[str, Any]) -> None:
        try:
            await ws.send_text(json.dumps(message, default=str))
        except (WebSocketDisconnect, RuntimeError):
            raise _Gone from None

    async def _demonstrate(self, ws: WebSocket, station: str, job: Job, operator: str,
                           inbox: asyncio.Queue[dict[str, Any] | None]) -> bool:
        """One demonstration of `job` at this station; True when the person asked to redo it."""
        instance = job.template.instantiate(job.seed)
        folder = self.out / "incoming" / f"{job.name}-{station[:8]}-{int(time.time() * 1000)}"
        writer = TrajectoryWriter(folder, frames=self.frames)
        outcome: Outcome | None = None
        redo = False
        async with self.opener(instance.sandbox_kind, instance.sandbox_config) as handle:
            session = LiveSession(handle=handle, instance=instance, writer=writer, observe=self.observe,
                                  operator=operator)
            try:
                await session.start()
            except InfraError as exc:  # lost while resetting: ended as crashed below
                await session.crashed(exc)
            session.viewers.add(ws)
            progress = self.queue.progress()
            await self._send(ws, {"type": "task", "task_id": job.task_id, "seed": job.seed,
                                  "instruction": session.instance.instruction, "attempt": job.attempts + 1,
                                  "progress": progress, "operator": operator})
            await self._send(ws, session.status())
            if session.last is not None and session.last.screenshot is not None:
                await ws.send_bytes(session.last.screenshot.data)
            stream = asyncio.create_task(session.stream(self.max_fps), name=f"record-stream-{operator}")
            try:
                while not session.finished.is_set():
                    message = await self._next(inbox, session)
                    if isinstance(message, _Ended):
                        break
                    if message is None:
                        await session.finish(None)
                        outcome = "abandoned"
                        break
                    kind = message.get("type")
                    if kind in ("discard", "redo"):
                        await session.finish(None)
                        outcome, redo = "discarded", kind == "redo"
                        break
                    refusal = await session.answer(message)
                    if refusal is not None:
                        await self._send(ws, refusal)
            finally:
                stream.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await stream
                session.viewers.discard(ws)
        record = session.result
        passed = record.verdict.passed if record is not None and record.verdict is not None else None
        error: ErrorRecord | None = record.error if record is not None and record.status == "infra_error" else None
        if error is not None:
            outcome = "crashed"
        elif outcome is None:
            outcome = "kept" if passed or self.queue.keep == "all" else "failed"
        kept_at = self._settle(folder, job, outcome)
        if outcome == "kept":
            self.queue.kept_one(station)
        elif outcome == "failed":
            self.queue.failed_one(station)
        elif outcome == "discarded":
            self.queue.discarded_one(station, redo=redo)
        elif outcome == "crashed":
            self.queue.crashed_one(station)
        self.log.append((outcome, job.task_id, job.seed, operator, passed))
        line = {"outcome": outcome, "task_id": job.task_id, "seed": job.seed, "operator": operator,
                "passed": passed, "steps": record.steps if record is not None else 0, "attempt": job.attempts,
                "trajectory": str(kept_at) if kept_at else None, "t": time.time(),
                "error": error.model_dump(mode="json") if error is not None else None}
        self._append(line)
        log.info("%s %s s%d by %s (%s)", outcome, job.task_id, job.seed, operator, self.queue.progress())
        if outcome == "abandoned":
            raise _Gone
        await self._send(ws, {"type": "outcome", "outcome": outcome, "passed": passed,
                              "progress": self.queue.progress(),
                              "error": error.model_dump(mode="json") if error is not None else None})
        return redo

    def _append(self, line: dict[str, Any]) -> None:
        """Append one index line in one write() of the whole line on an O_APPEND file, so a
        reader (or a crash of this process) never sees half of it."""
        data = (json.dumps(line) + "\n").encode("utf-8")
        fd = os.open(self._index, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, data)
        finally:
            os.close(fd)
        if written != len(data):
            raise OSError(f"{self._index}: wrote {written} of {len(data)} bytes of an index line")

    def _settle(self, folder: Path, job: Job, outcome: Outcome) -> Path | None:
        """Move a kept (abandoned, crashed) trajectory to its place; delete the others."""
        if outcome in ("failed", "discarded"):
            shutil.rmtree(folder, ignore_errors=True)
            return None
        parent = self.out / {"kept": "trajectories", "abandoned": "abandoned", "crashed": "crashed"}[outcome]
        parent.mkdir(parents=True, exist_ok=True)
        target = parent / job.name
        n = 1
        while target.exists():
            n += 1
            target = parent / f"{job.name}-{n}"
        folder.rename(target)
        return target
