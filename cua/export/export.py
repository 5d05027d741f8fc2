"""`export`: trajectories under a source -> a dataset folder that says how it was made.

Every export writes DIR/export.json last: the source, the format and options, the
filters, how many trajectories and rows went in, and what was skipped and why. A folder
without it is an export that did not finish.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from cua.errors import BadRequest
from cua.export.execute import Execution
from cua.export.ordered import in_order
from cua.export.prm import prm_cases
from cua.export.rows import ImageMode, RowKind, episode_row, step_rows
from cua.export.select import Selection, select
from cua.export.sft import SFT_FAMILIES, LossMode, SftStats, sft_rows
from cua.export.tables import TableFormat, TableSink
from cua.export.transitions import Dropped, transition_rows
from cua.trajectory import Trajectory

__all__ = ["ExportFormat", "ExportOutputError", "ExportSummary", "export"]

ExportFormat = Literal["jsonl", "parquet", "hf", "sft", "prm", "transitions"]
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
           perturbations: bool = True, force: bool = False, execute: Execution | None = None) -> ExportSummary:
    """Export the trajectories under `source` that `selection` accepts into `out`.
    `execute` (prm and transitions only): execute the trajectories again on their tasks
    (`cua.export.execute`) for what the recordings do not hold."""
    t0 = time.perf_counter()
    out = Path(out)
    selection = selection or Selection()
    if format == "sft" and family not in SFT_FAMILIES:
        raise BadRequest(f"--format sft needs --family, one of {', '.join(SFT_FAMILIES)}; got {family!r}")
    if execute is not None and format not in ("prm", "transitions"):
        raise BadRequest(f"--execute is for --format prm or transitions, not {format}")
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
        mode: ImageMode = "path" if images == "path" else "embed"
        cases = list(prm_cases(chosen, images=mode, perturbations=perturbations, root=out))
        if execute is not None:
            options["execute"] = asdict(execute)
            asyncio.run(_execute_prm(chosen, cases, execute, mode, out))
        with path.open("w", encoding="utf-8") as fh:
            for case in cases:
                for column in ("image", "wrong_next_image"):
                    case[column] = _data_url(case.get(column))
                summary.rows += 1
                for count, value in (("by_source", case["wrong_source"]),
                                     ("by_execution", case["wrong_execution"] or "not executed")):
                    options.setdefault(count, {})
                    options[count][value] = options[count].get(value, 0) + 1
                fh.write(json.dumps(case, ensure_ascii=False) + "\n")
        summary.files = [str(path)]
    elif format == "transitions":
        options["executed"] = execute is not None
        if execute is not None:
            options["execute"] = asdict(execute)
        path = out / "transitions.jsonl"
        dropped: list[Dropped] = []
        with path.open("w", encoding="utf-8") as fh:
            def emit(row: dict[str, Any]) -> None:
                for column in ("image", "next_image"):
                    row[column] = _data_url(row.get(column))
                summary.rows += 1
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")

            def counted() -> Iterable[Trajectory]:
                for traj in trajectories:
                    summary.trajectories += 1
                    yield traj

            if execute is None:
                for traj in counted():
                    for row in transition_rows(traj, images, out):
                        emit(row)
            else:
                asyncio.run(_execute_transitions(counted(), execute, images, out, emit, dropped))
        for drop in dropped:
            summary.skipped[drop.kind] = summary.skipped.get(drop.kind, 0) + drop.rows
        options["dropped"] = [asdict(d) for d in dropped]
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


def _data_url(image: Any) -> Any:
    """An embedded image (`{"bytes", "path"}`) as a JSON line holds it: a data URL."""
    if isinstance(image, dict) and image.get("bytes") is not None:
        return "data:image/jpeg;base64," + base64.b64encode(image["bytes"]).decode("ascii")
    return image


async def _execute_prm(chosen: list[Trajectory], cases: list[dict[str, Any]], execute: Execution, images: ImageMode,
                       out: Path) -> None:
    from cua.episode import sandbox_opener
    from cua.export.prm_execute import execute_cases

    by_id = {t.meta.id: t for t in chosen if t.meta is not None}
    groups: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        if case["wrong_source"] == "perturbation":
            groups.setdefault(case["correct_trajectory_id"], []).append(case)
    if not groups:
        return
    async with sandbox_opener(local=execute.local, server=execute.server, token=execute.token,
                              max_sandboxes=execute.parallel) as opener:
        async def one(item: tuple[str, list[dict[str, Any]]]) -> None:
            await execute_cases(by_id[item[0]], item[1], opener, images=images, root=out,
                                threshold=execute.threshold)

        async for _ in in_order(groups.items(), execute.parallel, one):
            pass


async def _execute_transitions(trajectories: Iterable[Trajectory], execute: Execution, images: ImageMode, out: Path,
                               emit: Callable[[dict[str, Any]], None], dropped: list[Dropped]) -> None:
    from cua.episode import sandbox_opener
    from cua.export.transitions import executed_transitions

    async with sandbox_opener(local=execute.local, server=execute.server, token=execute.token,
                              max_sandboxes=execute.parallel) as opener:
        async def one(traj: Trajectory) -> tuple[list[dict[str, Any]], Dropped | None]:
            return await executed_transitions(traj, opener, images, out, threshold=execute.threshold)

        async for rows, drop in in_order(trajectories, execute.parallel, one):
            for row in rows:
                emit(row)
            if drop is not None:
                dropped.append(drop)
