"""Write the report folder: `index.html`, its script and style, and the data as script files.

The data travels as `.js` files that call `window.__cuaLoaded(id, payload)` rather than as
JSON, because a page opened from `file://` may load scripts but may not fetch files: the
folder opens by double-click, with no server and no network. Each episode's steps are their
own file, loaded when its viewer opens, so a run of thousands of episodes opens at once.

Frames are never copied: each episode's frames folder is linked into the report
(`frames/<run>/<episode>`, a relative symlink), for the run reported and for the one it is
compared with alike, so a report of two runs of 70 episodes adds 140 links, not 43 MB. A
browser follows the links from disk, and so does `--serve`, whose pages see only the report
folder. Where the file system has no symlinks, a frame is named by its path relative to the
report instead (which opens from disk). The report and the runs it shows move together.
Rebuilding is incremental: an episode's file is rewritten only when its trajectory changed,
which is what lets `cua report --serve` rebuild every second while a run goes on.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from importlib import resources
from pathlib import Path
from typing import Any

from cua.report.data import (
    EpisodeRow,
    RowCache,
    RunData,
    compare_runs,
    failure_counts,
    load_run,
    success_by,
    timing_split,
    trajectory_signature,
)
from cua.report.evidence import evidence_lines
from cua.trajectory import ObservationRef, StepLine, Trajectory

__all__ = ["ASSETS", "BREAKDOWNS", "ReportBuilder", "build_report"]

ASSETS = ("index.html", "report.js", "report.css")
BREAKDOWNS = ("suite", "app", "tier", "tag", "split")
_SIGNATURES = ".signatures.json"


def _script(ident: str, payload: Any) -> str:
    body = json.dumps(payload, separators=(",", ":"), default=str).replace("</", "<\\/")
    return f"window.__cuaLoaded({json.dumps(ident)},{body});\n"


def _write_if_changed(path: Path, text: str) -> bool:
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return True


def _is_inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


class ReportBuilder:
    """Builds (and rebuilds) one report folder for a run and, optionally, a run to compare with."""

    def __init__(self, run: str | Path, *, out: str | Path | None = None, compare: str | Path | None = None,
                 live: bool = False) -> None:
        self.runs = [Path(run)] + ([Path(compare)] if compare is not None else [])
        self.out = Path(out) if out is not None else self.runs[0] / "report"
        self.live = live
        self._signatures: dict[str, list[int]] = {}
        self._rows: list[RowCache] = [{} for _ in self.runs]
        #: Frame links made this build: `frames/<run>/<key>` -> whether it could be made.
        self._links: dict[str, bool] = {}
        sig_file = self.out / "data" / _SIGNATURES
        if sig_file.exists():
            try:
                self._signatures = json.loads(sig_file.read_text(encoding="utf-8"))
            except ValueError:
                self._signatures = {}

    # ------------------------------------------------------------------ files

    def _frame_url(self, run_index: int, row: EpisodeRow, traj: Trajectory, ref: ObservationRef | None) -> str | None:
        path = traj.frame_path(ref)
        if path is None or not path.exists():
            return None
        link = self._linked(run_index, row, path.parent)
        if link is None:
            return Path(os.path.relpath(path.resolve(), self.out.resolve())).as_posix()
        return f"{link}/{path.name}"

    def _linked(self, run_index: int, row: EpisodeRow, folder: Path) -> str | None:
        """`frames/<run>/<key>` in the report, a relative symlink to the episode's frames folder
        (made or mended once per build); None where symlinks cannot be made."""
        rel = f"frames/{run_index}/{row.key}"
        known = self._links.get(rel)
        if known is not None:
            return rel if known else None
        link = self.out / rel
        target = os.path.relpath(folder.resolve(), link.parent.resolve())
        try:
            if link.is_symlink():
                if os.readlink(link) != target:
                    link.unlink()
            elif link.is_dir():  # copies an older report made
                shutil.rmtree(link)
            if not link.is_symlink():
                link.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(target, link, target_is_directory=True)
        except OSError:
            self._links[rel] = False
            return None
        self._links[rel] = True
        return rel

    def _axtree_id(self, run_index: int, row: EpisodeRow, traj: Trajectory, ref: ObservationRef | None) -> str | None:
        if ref is None or not ref.axtree or not (traj.folder / ref.axtree).exists():
            return None
        ident = f"ax/{run_index}/{row.key}/{Path(ref.axtree).stem}"
        target = self.out / "data" / f"{ident}.js"
        source = traj.folder / ref.axtree
        if not target.exists() or target.stat().st_mtime_ns < source.stat().st_mtime_ns:
            try:
                tree = json.loads(source.read_text(encoding="utf-8"))
            except ValueError:
                return None
            _write_if_changed(target, _script(ident, tree))
        return ident

    def _observation(self, run_index: int, row: EpisodeRow, traj: Trajectory,
                     ref: ObservationRef | None) -> dict[str, Any] | None:
        if ref is None:
            return None
        return {"frame": self._frame_url(run_index, row, traj, ref), "size": ref.size.model_dump(),
                "url": ref.url, "title": ref.title, "axtree": self._axtree_id(run_index, row, traj, ref),
                "focused": ref.focused}

    def _step(self, run_index: int, row: EpisodeRow, traj: Trajectory, step: StepLine) -> dict[str, Any]:
        tokens = step.tokens
        return {
            "attempt": step.attempt, "index": step.index, "turn": step.turn,
            "observation": self._observation(run_index, row, traj, step.observation),
            "action": step.action, "model_action": step.model_action,
            "model_frame": step.model_frame.model_dump() if step.model_frame else None,
            "raw": step.raw, "thought": step.thought, "parse_error": step.parse_error,
            "error": step.error.model_dump() if step.error else None, "progress": step.progress,
            "timings_ms": step.timings_ms, "t": step.t,
            "retries": [r.model_dump(mode="json") for r in step.retries] if step.retries else None,
            "tokens": {"prompt": tokens.prompt_tokens, "completion": tokens.completion_tokens} if tokens else None,
        }

    def _episode(self, run_index: int, row: EpisodeRow, traj: Trajectory) -> dict[str, Any]:
        meta, end = traj.meta, traj.end
        assert meta is not None
        return {
            "run": run_index, "key": row.key, "task_id": meta.task_id, "seed": meta.seed,
            "instruction": meta.instruction, "agent": meta.agent.model_dump(), "producer": meta.producer,
            "sandbox_kind": meta.sandbox_kind, "tags": meta.tags, "observe": meta.observe, "frames": meta.frames,
            "created_at": meta.created_at, "task_version": meta.task_version, "reset_seed": meta.reset_seed,
            "status": row.status, "failure": row.failure, "complete": traj.complete,
            "final_attempt": traj.attempt,
            "steps": [self._step(run_index, row, traj, s) for s in traj.all_steps],
            "final": self._observation(run_index, row, traj, end.final if end else None),
            "end": None if end is None else {
                "status": end.status, "failure": end.failure, "steps": end.steps, "truncated": end.truncated,
                "done": end.done, "error": end.error.model_dump(mode="json") if end.error else None,
                "timings_ms": end.timings_ms, "ended_at": end.ended_at,
                "verdict": end.verdict.model_dump(mode="json") if end.verdict else None,
                "evidence": evidence_lines(e.model_dump(mode="json") for e in end.verdict.evidence)
                if end.verdict else [],
                "attempts": [a.model_dump(mode="json") for a in end.attempts],
                "safety": end.safety.model_dump(mode="json") if end.safety else None,
            },
            "bad_lines": traj.bad_lines,
        }

    # ------------------------------------------------------------------ build

    def _run_payload(self, run_index: int, data: RunData) -> dict[str, Any]:
        rows = data.rows
        scored = [r for r in rows if r.scored]
        for row in rows:
            if row.trajectory is None:
                continue
            ident = f"ep/{run_index}/{row.key}"
            signature = trajectory_signature(row.trajectory)
            target = self.out / "data" / f"{ident}.js"
            if self._signatures.get(ident) == signature and target.exists():
                continue
            traj = data.trajectory(row)
            if traj is None or traj.meta is None:
                continue
            _write_if_changed(target, _script(ident, self._episode(run_index, row, traj)))
            self._signatures[ident] = signature
        return {
            "name": data.name, "folder": str(data.folder.resolve()), "manifest": data.manifest,
            "summary": data.summary, "problems": data.problems,
            "rows": [r.as_json() for r in rows],
            "totals": {"episodes": len(rows), "scored": len(scored), "passed": sum(r.passed for r in scored),
                       "infra": sum(r.status == "infra_error" for r in rows),
                       "running": sum(r.status == "running" for r in rows),
                       "success": sum(r.passed for r in scored) / len(scored) if scored else None,
                       "mean_score": sum(r.score or 0.0 for r in scored) / len(scored) if scored else None},
            "breakdowns": {by: success_by(rows, by) for by in BREAKDOWNS},
            "failures": failure_counts(rows),
            "timing": timing_split(rows),
        }

    def build(self) -> Path:
        """Write (or bring up to date) the report; returns its index.html."""
        self.out.mkdir(parents=True, exist_ok=True)
        self._links = {}
        for name in ASSETS:
            _write_if_changed(self.out / name, resources.files("cua.report").joinpath(name).read_text("utf-8"))
        loaded = [load_run(run, self._rows[i]) for i, run in enumerate(self.runs)]
        payload = {
            "generated_at": time.time(), "live": self.live,
            "runs": [self._run_payload(i, data) for i, data in enumerate(loaded)],
            "compare": [d.as_json() for d in compare_runs(loaded[0], loaded[1])] if len(loaded) > 1 else None,
        }
        _write_if_changed(self.out / "data" / "index.js", _script("index", payload))
        _write_if_changed(self.out / "data" / _SIGNATURES, json.dumps(self._signatures))
        return self.out / "index.html"


def build_report(run: str | Path, *, out: str | Path | None = None, compare: str | Path | None = None) -> Path:
    """Write the static report of `run` (default folder `RUN/report/`); returns its index.html."""
    return ReportBuilder(run, out=out, compare=compare).build()
