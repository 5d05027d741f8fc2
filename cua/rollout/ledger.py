"""Rollout requests by the key their client gives them: a retry joins or is answered, and
never runs the rollouts again.

A trainer whose connection breaks asks for the same prompts again. Without a key the
service cannot tell the second request from a new one: it runs the group twice, the
curriculum counts both, and the disk keeps both. With `Idempotency-Key: K` on `POST
/rollouts` (or `idempotency_key` in a websocket message):

- a request with a key still running is joined: the retry waits for the same answer;
- a request with a key that finished is answered from the ledger (memory, then disk:
  `runs_dir/requests/`, so a restarted service answers too), for `ttl_s`;
- the same key with another body is a `KeyConflict` (409): a key names one request;
- a request with a key runs to its end when its client hangs up (one without a key is
  cancelled then: `cua.rollout.app`), since the key says the client will ask again;
- a request that ends in an error is not kept: its retry runs it again (a `capacity`
  refusal, an infrastructure failure of the whole request).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from cua.errors import BadRequest
from cua.rollout.models import RolloutRequest, RolloutResponse

__all__ = ["KeyConflict", "RequestLedger"]

_KEY = re.compile(r"[A-Za-z0-9._:\-]{1,128}")


class KeyConflict(BadRequest):
    """The key names another request (its body differs): a client bug, never retried."""


@dataclass
class _Running:
    digest: str
    task: asyncio.Task[RolloutResponse]


class RequestLedger:
    """Requests by key: those running, and the answers of those that finished (`ttl_s`)."""

    def __init__(self, folder: Path, *, ttl_s: float = 3600.0) -> None:
        self.folder = folder
        self.ttl_s = ttl_s
        self._running: dict[str, _Running] = {}
        #: Requests answered from the ledger (joined while running, or after), for /health.
        self.replayed = 0

    async def run(self, key: str, request: RolloutRequest,
                  start: Callable[[], Awaitable[RolloutResponse]]) -> RolloutResponse:
        """`start()`'s answer, run once per key: joined or replayed for a retry."""
        if not _KEY.fullmatch(key):
            raise BadRequest("an idempotency key is 1-128 letters, digits and . _ : -",
                             details={"idempotency_key": key[:200]})
        digest = hashlib.sha256(request.model_dump_json().encode()).hexdigest()
        running = self._running.get(key)
        if running is not None:
            self._same(key, digest, running.digest)
            self.replayed += 1
            return await asyncio.shield(running.task)
        kept = self._load(key)
        if kept is not None:
            self._same(key, digest, kept[0])
            self.replayed += 1
            return kept[1]
        task = asyncio.ensure_future(self._run_and_keep(key, digest, start))
        self._running[key] = _Running(digest, task)
        task.add_done_callback(lambda _: self._running.pop(key, None))
        return await asyncio.shield(task)

    async def aclose(self) -> None:
        """Cancel the requests still running (the service is going away)."""
        tasks = [r.task for r in self._running.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    @property
    def running(self) -> int:
        return len(self._running)

    @staticmethod
    def _same(key: str, digest: str, kept: str) -> None:
        if digest != kept:
            raise KeyConflict(f"idempotency key {key!r} names another request: a key is for one request and its "
                              "retries, with the same body", details={"idempotency_key": key})

    def _path(self, key: str) -> Path:
        return self.folder / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"

    async def _run_and_keep(self, key: str, digest: str,
                            start: Callable[[], Awaitable[RolloutResponse]]) -> RolloutResponse:
        response = await start()
        self._store(key, digest, response)
        return response

    def _store(self, key: str, digest: str, response: RolloutResponse) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._prune()
        path = self._path(key)
        body = {"key": key, "digest": digest, "at": time.time(), "response": response.model_dump(mode="json")}
        partial = path.with_suffix(".part")
        partial.write_text(json.dumps(body))
        os.replace(partial, path)  # a reader never sees half an answer

    def _load(self, key: str) -> tuple[str, RolloutResponse] | None:
        path = self._path(key)
        try:
            body = json.loads(path.read_text())
            if body.get("key") != key or time.time() - float(body["at"]) > self.ttl_s:
                return None
            return str(body["digest"]), RolloutResponse.model_validate(body["response"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, ValidationError):
            with contextlib.suppress(OSError):  # a damaged entry is as good as none: the request runs again
                path.unlink()
            return None

    def _prune(self) -> None:
        cutoff = time.time() - self.ttl_s
        for entry in self.folder.glob("*.json"):
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime < cutoff:
                    entry.unlink()
