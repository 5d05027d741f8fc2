"""Demonstration recordings on disk: crash-safe, replayable, judged.

A recording is a folder:

    meta.json      task, seed, instruction, sandbox kind and config (written first, atomically)
    frames/        000000.jpg (after reset), 000001.jpg (after step 1), ...
    steps.jsonl    one line per action: {"index", "t", "action", "frame", "url", "title", "error"}
    result.json    how it ended: done action, verdict with evidence, status (written last, atomically)

Each step's frame is written (to a temp name, then renamed) before its line is appended
and flushed, so at any moment every line refers to a frame that exists: a recorder
killed mid-step leaves a consistent prefix, never a half-written step. `steps.jsonl`
lines carry an `action` key, so a recording replays as-is through the scripted policy
backend (`cua policy serve --backend scripted --script DIR/steps.jsonl`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from cua.actions import Action, Done, parse_action
from cua.observation import ActionError, Observation
from cua.task import TaskInstance, Verdict

__all__ = ["Recording", "RecordedStep", "RecordingMeta", "RecordingResult", "read_recording"]


class RecordingMeta(BaseModel):
    task_id: str
    seed: int
    instruction: str
    sandbox_kind: str
    sandbox_config: dict[str, Any]
    started_at: float = Field(default_factory=time.time)
    recorder: str = "human"


class RecordedStep(BaseModel):
    index: int
    t: float
    action: dict[str, Any]
    frame: str | None = None
    url: str | None = None
    title: str | None = None
    error: ActionError | None = None


class RecordingResult(BaseModel):
    status: Literal["done", "aborted"]
    steps: int
    done: dict[str, Any] | None = None
    verdict: Verdict | None = None
    ended_at: float = Field(default_factory=time.time)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".part")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class Recording:
    """Appends steps of one episode to a recording folder (which must be new or empty)."""

    def __init__(self, folder: Path, instance: TaskInstance, *, recorder: str = "human") -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        if any(folder.iterdir()):
            raise FileExistsError(f"{folder} is not empty: a recording never overwrites another")
        (folder / "frames").mkdir()
        self.meta = RecordingMeta(task_id=instance.task_id, seed=instance.seed, instruction=instance.instruction,
                                  sandbox_kind=instance.sandbox_kind, sandbox_config=instance.sandbox_config,
                                  recorder=recorder)
        _write_atomic(folder / "meta.json", self.meta.model_dump_json(indent=2).encode())
        self._steps = (folder / "steps.jsonl").open("a", encoding="utf-8")
        self._t0 = time.monotonic()
        self.count = 0
        self.finished = False

    def _frame(self, index: int, obs: Observation) -> str | None:
        if obs.screenshot is None:
            return None
        ext = "jpg" if obs.screenshot.format == "jpeg" else obs.screenshot.format
        name = f"frames/{index:06d}.{ext}"
        _write_atomic(self.folder / name, obs.screenshot.data)
        return name

    def start(self, observation: Observation) -> None:
        """Record the observation right after reset as frame 0."""
        self._frame(0, observation)

    def add(self, action: Action, observation: Observation | None) -> RecordedStep:
        if self.finished:
            raise RuntimeError("the recording is finished")
        self.count += 1
        step = RecordedStep(index=self.count, t=round(time.monotonic() - self._t0, 3),
                            action=action.model_dump(mode="json"))
        if observation is not None:
            step.frame = self._frame(self.count, observation)
            step.url, step.title, step.error = observation.url, observation.title, observation.error
        self._steps.write(step.model_dump_json() + "\n")
        self._steps.flush()
        os.fsync(self._steps.fileno())
        return step

    def finish(self, *, done: Done | None, verdict: Verdict | None) -> RecordingResult:
        result = RecordingResult(status="done" if done is not None else "aborted", steps=self.count,
                                 done=done.model_dump(mode="json") if done else None, verdict=verdict)
        self._steps.close()
        _write_atomic(self.folder / "result.json", result.model_dump_json(indent=2).encode())
        self.finished = True
        return result


def read_recording(folder: Path) -> tuple[RecordingMeta, list[RecordedStep], RecordingResult | None]:
    """Load a recording. A torn last line (the writer died mid-write) is ignored; every
    returned step's frame exists."""
    meta = RecordingMeta.model_validate_json((folder / "meta.json").read_text())
    steps: list[RecordedStep] = []
    for line in _lines(folder / "steps.jsonl"):
        try:
            step = RecordedStep.model_validate_json(line)
        except ValueError:
            break  # only the last line can be torn; nothing after it was written
        if step.frame is not None and not (folder / step.frame).exists():
            break
        parse_action(step.action)
        steps.append(step)
    result_path = folder / "result.json"
    result = RecordingResult.model_validate_json(result_path.read_text()) if result_path.exists() else None
    return meta, steps, result


def _lines(path: Path) -> Iterator[str]:
    if not path.exists():
        return
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.endswith("\n"):
                yield line
            else:
                return  # a line without its newline was cut off mid-write
