"""The trajectory: the one on-disk record of an episode, written by every producer (eval,
record, rl, replay) and read by export, replay and the report.

A trajectory is one folder::

    meta.json         TrajectoryMeta: the task, seed, instruction, sandbox, agent; written
                      atomically once the episode has reset (the instruction is known then)
    steps.jsonl       one StepLine per step, each appended as one write() of one line
    frames/           JPEG frames: a{attempt}-{index:04d}.jpg is the observation the agent
                      acted on at step `index`; the frame after the last step is the final one
    axtree/           accessibility trees, when they were requested (JSON, same names)
    end.json          TrajectoryEnd: status, verdict with evidence, every attempt; written
                      atomically last

Numbers count from 0, everywhere they are shown: a step's `index`, its `turn`, its
`attempt`, the frame names, the exports' `step` column, the report's "step 0" and the
`index` of a step in a run's episodes.jsonl. Counts (`steps`, `attempts`) are counts.

Why this shape: a producer killed at any moment (SIGKILL included) leaves a valid prefix.
Lines are whole or absent (a last line without its newline is ignored), a frame is written
before the line that names it, and meta/end are replaced atomically, so a reader never
needs the producer to have finished. An infrastructure retry does not overwrite the lost
attempt: every line carries its attempt number and `end.json` lists each attempt with its
typed error, so a retry leaves a trace and the lost attempt's policy calls are kept.

Plain data and file I/O only: this module imports no sandbox, client or policy.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cua.attack import SafetyReport
from cua.errors import ErrorRecord, FailureClass
from cua.observation import ActionError, Observation, Size
from cua.task import Verdict

__all__ = [
    "ENVIRONMENT_TIMINGS",
    "FORMAT",
    "FORMAT_VERSION",
    "AgentInfo",
    "AttemptInfo",
    "FramePolicy",
    "ModelRetry",
    "ObservationRef",
    "Problem",
    "Producer",
    "StepLine",
    "TokenTrace",
    "Trajectory",
    "TrajectoryEnd",
    "TrajectoryMeta",
    "TrajectoryWriter",
    "ValidationReport",
    "find_trajectories",
    "json_schema",
    "read_trajectory",
    "validate",
]

FORMAT: Literal["cua.trajectory"] = "cua.trajectory"
FORMAT_VERSION = 1

FramePolicy = Literal["all", "last", "none"]
Producer = Literal["eval", "record", "rl", "replay"]
Status = Literal["completed", "agent_error", "infra_error"]

META, STEPS, END, FRAMES, AXTREE = "meta.json", "steps.jsonl", "end.json", "frames", "axtree"
_JPEG_MAGIC = b"\xff\xd8\xff"


class AgentInfo(BaseModel):
    """Who acted, and how it was configured (a policy's family, model and sampling settings)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    #: oracle | near_miss | noop | random | policy | python | human | replay
    kind: str = "policy"
    family: str | None = None
    model: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)


class ObservationRef(BaseModel):
    """An observation as stored: its frame file (relative to the trajectory) and its text state."""

    model_config = ConfigDict(extra="forbid")
    #: Relative path of the JPEG frame; None when the frame policy kept no frame for it.
    frame: str | None = None
    #: The frame that action coordinates refer to (the screenshot's size).
    size: Size
    #: The sandbox's real screen size.
    screen: Size | None = None
    url: str | None = None
    title: str | None = None
    #: Relative path of the accessibility tree (JSON), when it was requested.
    axtree: str | None = None
    focused: dict[str, Any] | None = None
    #: The sandbox's step counter at this observation.
    sandbox_step: int = 0


class TokenTrace(BaseModel):
    """What a policy's model read and wrote, token by token, when the backend reports it."""

    model_config = ConfigDict(extra="forbid")
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    #: One log-probability per completion token.
    logprobs: list[float] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    #: The prompt's tokens that stand for images (part of `prompt_tokens`), when known.
    image_tokens: int | None = None


class ModelRetry(BaseModel):
    """A call to the policy's model that failed and was sent again before the step's answer
    came (an HTTP 500, a dropped connection), as the backend reported it."""

    model_config = ConfigDict(extra="forbid")
    error: str
    status: int | None = None
    #: How long the backend waited before the next call (milliseconds).
    backoff_ms: float = 0.0
    #: Wall-clock time of the failure (seconds since the epoch).
    t: float


class StepLine(BaseModel):
    """One step: the observation the agent acted on, what it did, and what that cost."""

    model_config = ConfigDict(extra="forbid")
    attempt: int = Field(0, ge=0)
    #: 0-based, contiguous within an attempt.
    index: int = Field(ge=0)
    #: The policy turn this step belongs to (a turn may yield several actions).
    turn: int = Field(0, ge=0)
    observation: ObservationRef
    #: The unified action in screen pixels (`cua.actions`, as JSON); None for a turn whose
    #: output did not parse.
    action: dict[str, Any] | None = None
    #: The same action in the model's own coordinate frame, where its family has one.
    model_action: dict[str, Any] | None = None
    model_frame: Size | None = None
    #: The pointer action an element action was resolved to (`Observation.resolved_action`),
    #: in the observation's frame: what a pixel replay performs instead.
    resolved_action: dict[str, Any] | None = None
    raw: str | None = None
    thought: str | None = None
    parse_error: str | None = None
    tokens: TokenTrace | None = None
    #: The failed model calls retried before this turn's answer (first step of a turn only).
    retries: list[ModelRetry] | None = None
    error: ActionError | None = None
    #: Dense progress of the state after this step, when the producer computed it.
    progress: float | None = None
    #: The snapshot of the state the agent acted on at this step (`cua.info.SnapshotRef` as
    #: JSON), when the producer kept one (`--snapshots`): a reference to state the source
    #: sandbox holds, not the state itself; `cua.branch.fork` starts a sandbox from it.
    snapshot: dict[str, Any] | None = None
    #: policy, act, settle, judge (milliseconds), as measured.
    timings_ms: dict[str, float] = Field(default_factory=dict)
    #: Wall-clock time the step ended (seconds since the epoch).
    t: float = Field(default_factory=time.time)


class AttemptInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    attempt: int = Field(ge=0)
    status: Status
    #: The typed error that ended it.
    error: ErrorRecord | None = None
    steps: int = 0
    started_at: float
    ended_at: float


class TrajectoryMeta(BaseModel):
    """How the episode was set up. Enough to reproduce it: task, version, seed, sandbox, agent."""

    model_config = ConfigDict(extra="forbid")
    format: Literal["cua.trajectory"] = FORMAT
    version: int = FORMAT_VERSION
    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    producer: Producer
    run_id: str | None = None
    task_id: str
    task_version: int | None = None
    seed: int
    #: Which try of this variant (task at seed) the episode is, from 0 (`cua eval --repeats`).
    repeat: int = 0
    reset_seed: int | None = None
    instruction: str
    tags: dict[str, Any] = Field(default_factory=dict)
    sandbox_kind: str
    sandbox_config: dict[str, Any] = Field(default_factory=dict)
    #: The snapshot the episode started from, when it started from one (`SnapshotRef` as JSON).
    start_snapshot: dict[str, Any] | None = None
    agent: AgentInfo
    observe: dict[str, Any] = Field(default_factory=dict)
    frames: FramePolicy = "all"
    created_at: float = Field(default_factory=time.time)
    #: Producer-specific facts (a recording's operator, an RL run's policy version, ...).
    extra: dict[str, Any] = Field(default_factory=dict)


#: The environment's part of an episode's time (`TrajectoryEnd.timings_ms` and the eval
#: record's keys): starting the sandbox, resetting it, and acting with settle and observation.
ENVIRONMENT_TIMINGS = ("sandbox", "reset", "act")


class TrajectoryEnd(BaseModel):
    """How the episode ended. Written last: a trajectory without it is an unfinished prefix."""

    model_config = ConfigDict(extra="forbid")
    status: Status
    #: The failure class when it did not pass (server_lost, parse_error, step_limit, judged_wrong, ...).
    failure: FailureClass | None = None
    #: The attempt whose steps are the episode (the earlier ones were lost to the infrastructure).
    attempt: int = 0
    steps: int = 0
    truncated: bool = False
    done: dict[str, Any] | None = None
    verdict: Verdict | None = None
    #: The typed error that ended it (None when it completed).
    error: ErrorRecord | None = None
    attempts: list[AttemptInfo] = Field(default_factory=list)
    #: The observation after the last step.
    final: ObservationRef | None = None
    #: The episode's time by part (policy, sandbox, reset, act, judge, ...); see ENVIRONMENT_TIMINGS.
    timings_ms: dict[str, float] = Field(default_factory=dict)
    #: Its safety, apart from success (None: not judged): safe or unsafe, the violations, their steps and attacks.
    safety: SafetyReport | None = None
    ended_at: float = Field(default_factory=time.time)

    @model_validator(mode="before")
    @classmethod
    def _unknown_failure(cls, data: Any) -> Any:
        """A failure class this version does not know (written by a later one) reads as the
        class its status defaults to, so the trajectory stays readable."""
        if isinstance(data, dict) and isinstance(data.get("failure"), str):
            default = {"infra_error": FailureClass.INTERNAL, "agent_error": FailureClass.AGENT_ERROR}.get(
                str(data.get("status")), FailureClass.JUDGED_WRONG)
            return {**data, "failure": FailureClass.of(data["failure"], default)}
        return data


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _jpeg(obs: Observation, quality: int) -> bytes | None:
    shot = obs.screenshot
    if shot is None:
        return None
    if shot.format == "jpeg":
        return shot.data
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.open(io.BytesIO(shot.data)).convert("RGB").save(out, "JPEG", quality=quality)
    return out.getvalue()


class TrajectoryWriter:
    """Writes one trajectory folder as the episode happens.

    Call order: `begin(meta, first_observation)`, then per step `observation(obs)` for the
    observation the action produced and `step(line)` for the step, then `end(...)`. After an
    infrastructure failure, `new_attempt()` and `begin(...)` again: the folder keeps both.

    Frames: "all" keeps every frame; "last" keeps only the final one (frames/last.jpg);
    "none" keeps none. Screenshots that are JPEG already are written as they came, so a frame
    costs one file write; others are re-encoded at `quality`.
    """

    def __init__(self, folder: str | Path, *, frames: FramePolicy = "all", quality: int = 80) -> None:
        self.folder = Path(folder)
        self.frames: FramePolicy = frames
        self.quality = quality
        self.attempt = 0
        self._next_frame = 0
        self._meta: TrajectoryMeta | None = None
        self._steps: Any = None
        self._attempts: list[AttemptInfo] = []
        self._attempt_started = time.time()
        self._last: ObservationRef | None = None
        self._ended = False
        self.folder.mkdir(parents=True, exist_ok=True)

    @property
    def meta(self) -> TrajectoryMeta | None:
        return self._meta

    @property
    def attempts(self) -> list[AttemptInfo]:
        return list(self._attempts)

    def begin(self, meta: TrajectoryMeta, observation: Observation) -> ObservationRef:
        """Start (or restart, after `new_attempt`) the trajectory at its first observation."""
        meta = meta.model_copy(update={"frames": self.frames})
        if self._meta is None or meta != self._meta:
            _write_atomic(self.folder / META, meta.model_dump_json(indent=2))
        self._meta = meta
        if self._steps is None:
            self._steps = (self.folder / STEPS).open("a", encoding="utf-8")
        self._next_frame = 0
        self._attempt_started = time.time()
        return self.observation(observation)

    def new_attempt(self, *, status: Status = "infra_error", error: ErrorRecord | None = None,
                    steps: int = 0) -> int:
        """Close the current attempt (lost to `error`) and start numbering the next one."""
        self._attempts.append(AttemptInfo(attempt=self.attempt, status=status, error=error, steps=steps,
                                          started_at=self._attempt_started, ended_at=time.time()))
        self.attempt += 1
        self._next_frame = 0
        self._attempt_started = time.time()
        return self.attempt

    def observation(self, obs: Observation) -> ObservationRef:
        """Store an observation's frame (per the frame policy) and tree; return its reference."""
        index = self._next_frame
        self._next_frame += 1
        name = f"a{self.attempt}-{index:04d}"
        frame: str | None = None
        if self.frames != "none":
            data = _jpeg(obs, self.quality)
            if data is not None:
                (self.folder / FRAMES).mkdir(exist_ok=True)
                if self.frames == "all":
                    frame = f"{FRAMES}/{name}.jpg"
                    (self.folder / frame).write_bytes(data)
                else:  # "last": replaced atomically, named only by the end
                    tmp = self.folder / FRAMES / ".last.jpg.tmp"
                    tmp.write_bytes(data)
                    os.replace(tmp, self.folder / FRAMES / "last.jpg")
        axtree: str | None = None
        if obs.axtree is not None:
            (self.folder / AXTREE).mkdir(exist_ok=True)
            axtree = f"{AXTREE}/{name}.json"
            (self.folder / axtree).write_text(json.dumps(obs.axtree, separators=(",", ":")), encoding="utf-8")
        self._last = ObservationRef(frame=frame, size=obs.frame, screen=obs.screen, url=obs.url, title=obs.title,
                                    axtree=axtree, focused=obs.focused, sandbox_step=obs.step)
        return self._last

    def step(self, line: StepLine) -> None:
        if self._steps is None:
            raise RuntimeError("TrajectoryWriter.begin() must come before step()")
        if line.attempt != self.attempt:
            line = line.model_copy(update={"attempt": self.attempt})
        self._steps.write(line.model_dump_json(exclude_none=True) + "\n")
        self._steps.flush()

    def end(self, end: TrajectoryEnd) -> None:
        """Write end.json: the final attempt is the current one; earlier ones are listed first."""
        if self._ended:
            return
        final = end.final if end.final is not None else self._last
        if final is not None and self.frames == "last" and (self.folder / FRAMES / "last.jpg").exists():
            final = final.model_copy(update={"frame": f"{FRAMES}/last.jpg"})
        attempts = [*self._attempts, AttemptInfo(attempt=self.attempt, status=end.status, error=end.error,
                                                 steps=end.steps, started_at=self._attempt_started,
                                                 ended_at=time.time())]
        end = end.model_copy(update={"attempt": self.attempt, "attempts": attempts, "final": final})
        self.close()
        _write_atomic(self.folder / END, end.model_dump_json(indent=2))
        self._ended = True

    def close(self) -> None:
        if self._steps is not None:
            self._steps.close()
            self._steps = None


@dataclass
class Trajectory:
    """A trajectory read back: complete, or the valid prefix an interrupted producer left."""

    folder: Path
    meta: TrajectoryMeta | None
    #: The final attempt's steps (the attempt `end.attempt`, or the latest one seen).
    steps: list[StepLine]
    #: Every attempt's steps, in file order.
    all_steps: list[StepLine]
    end: TrajectoryEnd | None
    #: Lines that did not parse (the report lists them; a torn last line is not among them).
    bad_lines: list[tuple[int, str]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.end is not None

    @property
    def attempt(self) -> int:
        if self.end is not None:
            return self.end.attempt
        return max((s.attempt for s in self.all_steps), default=0)

    def frame_path(self, ref: ObservationRef | None) -> Path | None:
        return self.folder / ref.frame if ref is not None and ref.frame else None

    def frame_bytes(self, ref: ObservationRef | None) -> bytes | None:
        path = self.frame_path(ref)
        return path.read_bytes() if path is not None and path.exists() else None

    def axtree(self, ref: ObservationRef | None) -> list[dict[str, Any]] | None:
        if ref is None or not ref.axtree:
            return None
        return json.loads((self.folder / ref.axtree).read_text(encoding="utf-8"))  # type: ignore[no-any-return]

    def observations(self) -> list[ObservationRef]:
        """Each observation of the final attempt in order: one per step, then the final one."""
        refs = [s.observation for s in self.steps]
        if self.end is not None and self.end.final is not None:
            refs.append(self.end.final)
        return refs


def _complete_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each newline-terminated line; a torn last line is skipped."""
    if not path.exists():
        return
    with path.open(encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if line.endswith("\n") and line.strip():
                yield number, line


def read_trajectory(folder: str | Path) -> Trajectory:
    """Read a trajectory folder. Raises `ValueError` when meta.json or end.json is unreadable."""
    folder = Path(folder)
    meta = TrajectoryMeta.model_validate_json((folder / META).read_text(encoding="utf-8")) \
        if (folder / META).exists() else None
    end = TrajectoryEnd.model_validate_json((folder / END).read_text(encoding="utf-8")) \
        if (folder / END).exists() else None
    all_steps: list[StepLine] = []
    bad: list[tuple[int, str]] = []
    for number, line in _complete_lines(folder / STEPS):
        try:
            all_steps.append(StepLine.model_validate_json(line))
        except ValidationError as exc:
            bad.append((number, str(exc).splitlines()[0]))
    traj = Trajectory(folder=folder, meta=meta, steps=[], all_steps=all_steps, end=end, bad_lines=bad)
    traj.steps = [s for s in all_steps if s.attempt == traj.attempt]
    return traj


def _is_trajectory(folder: Path) -> bool:
    return (folder / META).exists() or (folder / STEPS).exists()


def find_trajectories(path: str | Path) -> list[Path]:
    """The trajectory folders at or under `path` (one trajectory, a run folder, a tree of runs)."""
    root = Path(path)
    if _is_trajectory(root):
        return [root]
    found: set[Path] = set()
    for marker in (META, STEPS):
        found.update(p.parent for p in root.rglob(marker))
    return sorted(found)


@dataclass
class Problem:
    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass
class ValidationReport:
    trajectories: int = 0
    complete: int = 0
    steps: int = 0
    frames: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and self.trajectories > 0

    def summary(self) -> str:
        return (f"trajectories={self.trajectories} complete={self.complete} steps={self.steps} "
                f"frames={self.frames} problems={len(self.problems)}")


def _check_frame(traj: Trajectory, ref: ObservationRef | None, where: str, report: ValidationReport) -> None:
    if ref is None or ref.frame is None:
        return
    path = traj.folder / ref.frame
    if not path.exists():
        report.problems.append(Problem(traj.folder, f"{where}: frame {ref.frame} is missing"))
        return
    with path.open("rb") as fh:
        if fh.read(3) != _JPEG_MAGIC:
            report.problems.append(Problem(traj.folder, f"{where}: frame {ref.frame} is not a JPEG"))
            return
    report.frames += 1
    if ref.axtree and not (traj.folder / ref.axtree).exists():
        report.problems.append(Problem(traj.folder, f"{where}: accessibility tree {ref.axtree} is missing"))


def _validate_one(folder: Path, report: ValidationReport) -> None:
    try:
        traj = read_trajectory(folder)
    except (ValidationError, ValueError, OSError) as exc:
        report.problems.append(Problem(folder, f"unreadable meta.json or end.json: {str(exc).splitlines()[0]}"))
        return
    report.trajectories += 1
    for number, message in traj.bad_lines:
        report.problems.append(Problem(folder, f"steps.jsonl line {number}: {message}"))
    if traj.meta is None:
        if traj.all_steps or traj.end is not None:
            report.problems.append(Problem(folder, "steps or an end without meta.json"))
        return
    if traj.meta.version > FORMAT_VERSION:
        report.problems.append(Problem(folder, f"format version {traj.meta.version} is newer than this "
                                               f"reader's {FORMAT_VERSION}"))
    expected: dict[int, int] = {}
    for step in traj.all_steps:
        want = expected.get(step.attempt, 0)
        if step.index != want:
            report.problems.append(Problem(folder, f"attempt {step.attempt}: step {step.index} where {want} "
                                                   "was expected"))
        expected[step.attempt] = step.index + 1
        _check_frame(traj, step.observation, f"attempt {step.attempt} step {step.index}", report)
    report.steps += len(traj.steps)
    end = traj.end
    if end is None:
        return
    report.complete += 1
    if end.steps != len(traj.steps):
        report.problems.append(Problem(folder, f"end.json says {end.steps} steps, steps.jsonl has "
                                               f"{len(traj.steps)} in attempt {end.attempt}"))
    if [a.attempt for a in end.attempts] != list(range(len(end.attempts))) or \
            (end.attempts and end.attempts[-1].attempt != end.attempt):
        report.problems.append(Problem(folder, "end.json's attempts are not numbered 0..final"))
    _check_frame(traj, end.final, "final observation", report)
    if traj.meta.frames == "all" and end.final is not None and end.final.frame is not None:
        missing = [s.index for s in traj.steps if s.observation.frame is None]
        if missing:
            report.problems.append(Problem(folder, f"frames=all but steps {missing[:5]} have no frame"))


def _validate_index(run: Path, report: ValidationReport) -> None:
    """A run folder's episodes.jsonl: every line parses, and names a trajectory that exists."""
    index = run / "episodes.jsonl"
    for number, line in _complete_lines(index):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            report.problems.append(Problem(index, f"line {number}: {exc}"))
            continue
        rel = record.get("trajectory") if isinstance(record, dict) else None
        if rel and not _is_trajectory(run / rel):
            report.problems.append(Problem(index, f"line {number}: trajectory {rel} does not exist"))


def validate(path: str | Path) -> ValidationReport:
    """Check a trajectory, a run folder or a tree of them. Unfinished prefixes are valid."""
    root = Path(path)
    report = ValidationReport()
    if not root.exists():
        report.problems.append(Problem(root, "does not exist"))
        return report
    for folder in find_trajectories(root):
        _validate_one(folder, report)
    for index in ([root / "episodes.jsonl"] if (root / "episodes.jsonl").exists() else
                  sorted(root.rglob("episodes.jsonl"))):
        _validate_index(index.parent, report)
    if report.trajectories == 0:
        report.problems.append(Problem(root, "no trajectory found (no meta.json or steps.jsonl)"))
    return report


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the three files: `meta.json`, each line of `steps.jsonl`, `end.json`."""
    from pydantic.json_schema import models_json_schema

    _, schema = models_json_schema([(TrajectoryMeta, "validation"), (StepLine, "validation"),
                                    (TrajectoryEnd, "validation")],
                                   title=f"{FORMAT} v{FORMAT_VERSION}")
    defs = schema.get("$defs", {})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{FORMAT} v{FORMAT_VERSION}",
        "description": (__doc__ or "").strip().split("\n\n")[0],
        "files": {
            META: {"$ref": "#/$defs/TrajectoryMeta"},
            STEPS: {"$ref": "#/$defs/StepLine", "description": "one JSON object per line"},
            END: {"$ref": "#/$defs/TrajectoryEnd"},
        },
        "$defs": defs,
    }
