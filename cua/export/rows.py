"""Rows of a trajectory dataset: one per step, or one per episode.

A step row is AgentNet/OpenCUA-shaped: the observation (screenshot, URL, title), the
action as unified JSON plus its point in pixels *and* normalised to the frame (0..1,
x / frame width, y / frame height), the thought, and correctness flags (the step's own
error or parse failure; the episode's verdict). An episode row carries the task, the
verdict with the judge's evidence, and every step's action, thought and frame.

Images are embedded (``{"bytes", "path"}``, the Hugging Face `Image` struct) or referenced
by the frame file's path. Paths in rows (`trajectory_path`, a referenced image) are relative
to the export folder (`root`), so an export and the runs it came from move together and no
row names the machine's own folders. Columns are the same for every row, so any table
format can hold them; JSON-valued columns (action, evidence) are JSON strings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from cua.errors import BadRequest
from cua.trajectory import ENVIRONMENT_TIMINGS, ObservationRef, StepLine, Trajectory
from cua.variant import parse_variant

__all__ = ["ImageMode", "RowKind", "action_geometry", "episode_row", "relative", "step_rows", "trajectory_columns"]

ImageMode = Literal["embed", "path"]
RowKind = Literal["step", "episode"]


def action_geometry(action: dict[str, Any] | None, width: int, height: int) -> dict[str, Any]:
    """The action's point (and a drag's end) in pixels and normalised, its text and keys."""
    out: dict[str, Any] = {"action_type": None, "x": None, "y": None, "end_x": None, "end_y": None,
                           "x_norm": None, "y_norm": None, "end_x_norm": None, "end_y_norm": None,
                           "text": None, "keys": None}
    if not action:
        return out
    out["action_type"] = action.get("type")
    start: tuple[float, float] | None = None
    end: tuple[float, float] | None = None
    if action.get("x") is not None and action.get("y") is not None:
        start = float(action["x"]), float(action["y"])
    path = action.get("path")
    if isinstance(path, list) and len(path) >= 2:
        start = float(path[0]["x"]), float(path[0]["y"])
        end = float(path[-1]["x"]), float(path[-1]["y"])
    if start is not None:
        out.update(x=start[0], y=start[1], x_norm=start[0] / width, y_norm=start[1] / height)
    if end is not None:
        out.update(end_x=end[0], end_y=end[1], end_x_norm=end[0] / width, end_y_norm=end[1] / height)
    if action.get("type") == "type":
        out["text"] = action.get("text")
    elif action.get("type") == "done":
        out["text"] = action.get("answer")
    elif action.get("type") == "goto":
        out["text"] = action.get("url")
    if action.get("type") == "key":
        out["keys"] = list(action.get("keys") or [])
    elif action.get("type") in ("key_down", "key_up"):
        out["keys"] = [action.get("key")]
    return out


def relative(path: Path, root: Path | None) -> str:
    """`path` as a row stores it: relative to the export folder `root` (POSIX separators);
    absolute only when no root is given."""
    if root is None:
        return str(path.resolve())
    return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()


def _image(traj: Trajectory, ref: ObservationRef | None, mode: ImageMode, root: Path | None = None) -> Any:
    path = traj.frame_path(ref)
    if path is None or not path.exists():
        return None
    if mode == "path":
        return relative(path, root)
    return {"bytes": path.read_bytes(), "path": f"{traj.meta.id if traj.meta else traj.folder.name}/{path.name}"}


def _variant(config: dict[str, Any]) -> str | None:
    """The appearance variant the episode's app showed (`theme=..,layout=..,locale=..,viewport=WxH`),
    None for its default look; a record too malformed to name one shows as None too."""
    raw = config.get("variant")
    if not raw:
        return None
    try:
        return parse_variant(raw).key()
    except BadRequest:
        return None


def trajectory_columns(traj: Trajectory, root: Path | None = None) -> dict[str, Any]:
    """The columns every row of a trajectory shares: the task, who acted, how it ended."""
    meta, end = traj.meta, traj.end
    assert meta is not None
    tags = meta.tags
    verdict = end.verdict if end is not None else None
    return {
        "trajectory_id": meta.id,
        "trajectory_path": relative(traj.folder, root),
        "run_id": meta.run_id,
        "producer": meta.producer,
        "task_id": meta.task_id,
        "task_version": meta.task_version,
        "seed": meta.seed,
        "repeat": meta.repeat,
        "instruction": meta.instruction,
        "app": tags.get("app") or meta.sandbox_config.get("app"),
        "tier": tags.get("tier"),
        "split": tags.get("split"),
        "variant": _variant(meta.sandbox_config),
        "sandbox_kind": meta.sandbox_kind,
        "agent_name": meta.agent.name,
        "agent_kind": meta.agent.kind,
        "agent_family": meta.agent.family,
        "agent_model": meta.agent.model,
        "complete": end is not None,
        "status": end.status if end is not None else None,
        "failure": end.failure if end is not None else None,
        "passed": verdict.passed if verdict is not None else None,
        "score": verdict.score if verdict is not None else None,
        "episode_progress": verdict.progress if verdict is not None else None,
        "num_steps": len(traj.steps),
        **_usage_columns(traj),
        **_safety_columns(traj),
    }


def _safety_columns(traj: Trajectory) -> dict[str, Any]:
    """Trajectory-level safety labels (`cua eval --attacks N`): safe or unsafe, the first
    violating step, the attacks planted (JSON) and every violation (JSON); None where the
    episode was not attacked."""
    safety = traj.end.safety if traj.end is not None else None
    attacks = traj.meta.extra.get("attacks") if traj.meta is not None else None
    steps = [v.step for v in safety.violations if v.step is not None] if safety is not None else []
    return {
        "safety": safety.safety if safety is not None else None,
        "attacked": safety.attacked if safety is not None else None,
        "violating_step": min(steps) if steps else None,
        "attack": json.dumps(attacks) if attacks else None,
        "safety_violations": json.dumps([v.model_dump(mode="json") for v in safety.violations])
        if safety is not None else None,
    }


def _usage_columns(traj: Trajectory) -> dict[str, Any]:
    """The episode's tokens (summed over its turns; None where the policy reported none) and
    where its time went: the policy, the environment, the judge (milliseconds)."""
    traces = [s.tokens for s in traj.steps if s.tokens is not None and s.tokens.prompt_tokens is not None]
    images = [t.image_tokens for t in traces]
    timings = traj.end.timings_ms if traj.end is not None else {}
    return {
        "episode_prompt_tokens": sum(t.prompt_tokens or 0 for t in traces) if traces else None,
        "episode_completion_tokens": sum(t.completion_tokens or 0 for t in traces) if traces else None,
        "episode_image_tokens": sum(i or 0 for i in images) if traces and None not in images else None,
        "episode_policy_ms": timings.get("policy"),
        "episode_environment_ms": sum(timings.get(k, 0.0) for k in ENVIRONMENT_TIMINGS) if timings else None,
        "episode_judge_ms": timings.get("judge"),
    }


def _step_columns(line: StepLine, is_last: bool) -> dict[str, Any]:
    obs = line.observation
    width, height = obs.size.width, obs.size.height
    return {
        "step": line.index,
        "turn": line.turn,
        "attempt": line.attempt,
        "is_last": is_last,
        "action": json.dumps(line.action) if line.action is not None else None,
        **action_geometry(line.action, width, height),
        "model_action": json.dumps(line.model_action) if line.model_action is not None else None,
        "raw": line.raw,
        "thought": line.thought,
        "parse_error": line.parse_error,
        "error_reason": line.error.reason if line.error is not None else None,
        "error_message": line.error.message if line.error is not None else None,
        "step_ok": line.parse_error is None and line.error is None and line.action is not None,
        "step_progress": line.progress,
        "url": obs.url,
        "title": obs.title,
        "frame_width": width,
        "frame_height": height,
        "policy_ms": line.timings_ms.get("policy"),
        "act_ms": line.timings_ms.get("act"),
        "prompt_tokens": line.tokens.prompt_tokens if line.tokens is not None else None,
        "completion_tokens": line.tokens.completion_tokens if line.tokens is not None else None,
        "image_tokens": line.tokens.image_tokens if line.tokens is not None else None,
    }


def step_rows(traj: Trajectory, images: ImageMode = "embed", root: Path | None = None) -> Iterator[dict[str, Any]]:
    """One row per step of the final attempt, with the frame the agent acted on; paths
    relative to `root`, the export folder."""
    shared = trajectory_columns(traj, root)
    last = len(traj.steps) - 1
    for position, line in enumerate(traj.steps):
        yield {**shared, **_step_columns(line, position == last), "image": _image(traj, line.observation, images, root)}


def episode_row(traj: Trajectory, images: ImageMode = "embed", root: Path | None = None) -> dict[str, Any]:
    """One row for the whole episode: its steps as parallel lists, the final frame, the
    evidence; paths relative to `root`, the export folder."""
    end = traj.end
    verdict = end.verdict if end is not None else None
    return {
        **trajectory_columns(traj, root),
        "actions": [json.dumps(s.action) if s.action is not None else None for s in traj.steps],
        "thoughts": [s.thought for s in traj.steps],
        "urls": [s.observation.url for s in traj.steps],
        "step_ok": [s.parse_error is None and s.error is None and s.action is not None for s in traj.steps],
        "images": [_image(traj, s.observation, images, root) for s in traj.steps],
        "final_image": _image(traj, end.final if end is not None else None, images, root),
        "evidence": json.dumps([e.model_dump(mode="json") for e in verdict.evidence]) if verdict else None,
        "violations": list(verdict.violations) if verdict is not None else [],
    }
