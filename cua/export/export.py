"""`export`: trajectories under a source -> a dataset folder that says how it was made.

Every export writes DIR/export.json last: the source, the format and options, the
filters, how many trajectories and rows went in, and what was skipped and why. A folder
without it is an export that did not finish.
"""

from __future__ import annotations

import base64
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from cua.errors import BadRequest
from cua.export.prm import prm_cases
from cua.export.rows import ImageMode, RowKind, episode_row, step_rows
from cua.export.select import Selection, select
from cua.export.sft import SFT_FAMILIES, LossMode, SftStats, sft_rows
from cua.export.tables import TableFormat, TableSink

__all__ = ["ExportFormat", "ExportOutputError", "ExportSummary", "export"]

ExportFormat = Literal["jsonl", "parquet", "hf", "sft", "prm"]
MANIFEST = "export.json"


class ExportOutputError(BadRequest):
    """The output folder cannot be used (it holds files and overwriting was not asked for)."""


class ExportDependencyError(BadRequest):
    """The format needs an optional dependency that is not installed (the `data` extra)."""


@dataclass
class ExportSummary:
    source: str
    out: str
    format: str
    options: dict[str, Any]
    trajectories: int = 0
    rows: int = 0
    files: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        skipped = sum(self.skipped.values())
        return (f"format={self.format} trajectories={self.trajectories} rows={self.rows} skipped={skipped} "
                f"files={len(self.files)} out={self.out}")


def _prepare(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise ExportOutputError(f"{str(out)!r} is a file, not a folder")
    if out.exists() and any(out.iterdir()):
        if not force:
            raise ExportOutputError(f"{str(out)!r} is not empty (pass --force to write into it)")
        (out / MANIFEST).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)


def export(source: str | Path, out: str | Path, *, format: ExportFormat = "parquet", rows: RowKind = "step",
           images: ImageMode | None = None, selection: Selection | None = None, family: str | None = None,
           history_images: int | None = None, loss: LossMode = "last", approximate: bool = True,
           perturbations: bool = True, force: bool = False) -> ExportSummary:
    """Export the trajectories under `source` that `selection` accepts into `out`."""
    t0 = time.perf_counter()
    out = Path(out)
    selection = selection or Selection()
    if format == "sft" and family not in SFT_FAMILIES:
        raise BadRequest(f"--format sft needs --family, one of {', '.join(SFT_FAMILIES)}; got {family!r}")
    images = images or ("embed" if format in ("parquet", "hf") else "path")
    if format in ("parquet", "hf"):
        try:
            import datasets  # noqa: F401 - the schema's features
            import pyarrow  # noqa: F401
        except ImportError as exc:
            raise ExportDependencyError(f"--format {format} needs {exc.name} (pip install 'cua[data]')") from None
    _prepare(out, force)
    options: dict[str, Any] = {"rows": rows, "images": images, "filters": {
        "verdict": selection.verdict, "apps": list(selection.apps), "tiers": list(selection.tiers),
        "splits": list(selection.splits), "producers": list(selection.producers), "tasks": list(selection.tasks),
        "incomplete": selection.incomplete}}
    summary = ExportSummary(source=str(source), out=str(out), format=format, options=options)
    trajectories = select(source, selection)
    if format == "sft":
        from cua.policy.engine import DEFAULT_HISTORY_IMAGES

        assert family is not None
        options.update(family=family, history_images=history_images or DEFAULT_HISTORY_IMAGES, loss=loss,
                       approximate=approximate)
        stats = SftStats()
        path = out / f"{family}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for traj in trajectories:
                summary.trajectories += 1
                for row in sft_rows(traj, family, out, images=images, history_images=options["history_images"],
                                    loss=loss, approximate=approximate, stats=stats):
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        summary.rows, summary.skipped = stats.samples, stats.skipped
        options["approximated_rows"] = stats.approximated
        summary.files = [str(path)]
    elif format == "prm":
        options["perturbations"] = perturbations
        path = out / "prm.jsonl"
        chosen = []
        for traj in trajectories:
            summary.trajectories += 1
            chosen.append(traj)
        with path.open("w", encoding="utf-8") as fh:
            for case in prm_cases(chosen, images="path" if images == "path" else "embed",
                                  perturbations=perturbations, root=out):
                if isinstance(case.get("image"), dict):
                    case["image"] = "data:image/jpeg;base64," + base64.b64encode(case["image"]["bytes"]).decode()
                summary.rows += 1
                source_kind = case["wrong_source"]
                options.setdefault("by_source", {})
                options["by_source"][source_kind] = options["by_source"].get(source_kind, 0) + 1
                fh.write(json.dumps(case, ensure_ascii=False) + "\n")
        summary.files = [str(path)]
    else:
        table_format: TableFormat = format
        sink = TableSink(out, table_format, rows, images)
        try:
            for traj in trajectories:
                summary.trajectories += 1
                if rows == "step":
                    for row in step_rows(traj, images, out):
                        sink.write(row)
                else:
                    sink.write(episode_row(traj, images, out))
        finally:
            summary.files = [str(p) for p in sink.close()]
        summary.rows = sink.count
    summary.unreadable = [f"{folder}: {why}" for folder, why in selection.unreadable]
    summary.seconds = round(time.perf_counter() - t0, 3)
    manifest = {**asdict(summary), "created_at": time.time(), "cua_export_version": 1}
    tmp = out / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    os.replace(tmp, out / MANIFEST)
    return summary
