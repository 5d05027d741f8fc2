"""Table sinks for exported rows: JSONL, Parquet, and a Hugging Face dataset folder.

- ``jsonl``: DIR/data/{split}.jsonl (one JSON object a line; an embedded image is a
  ``data:image/jpeg;base64,...`` URL, a referenced one the frame's path relative to DIR).
- ``parquet``: DIR/{rows}.parquet, typed columns; the schema carries the Hugging Face
  features (images are `datasets.Image`), so `datasets` decodes frames to PIL images and
  pyarrow reads it as any Parquet file.
- ``hf``: a dataset repository folder: DIR/data/{split}-00000-of-00001.parquet per task
  split (train/test) and a README.md whose card declares them, so
  ``datasets.load_dataset(DIR)`` gives a DatasetDict and the folder can be pushed to a hub.

Rows are written in row groups as they come, so memory holds one group, not the dataset.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from cua.export.rows import ImageMode, RowKind

__all__ = ["TableFormat", "TableSink", "features_for"]

TableFormat = Literal["jsonl", "parquet", "hf"]
ROW_GROUP = 256

_STRING = ("trajectory_id", "trajectory_path", "run_id", "producer", "task_id", "instruction", "app", "split", "variant",
           "sandbox_kind", "agent_name", "agent_kind", "agent_family", "agent_model", "status", "failure", "safety",
           "attack", "safety_violations")
_INT = ("task_version", "seed", "repeat", "tier", "num_steps", "episode_prompt_tokens", "episode_completion_tokens",
        "episode_image_tokens", "violating_step")
_FLOAT = ("score", "episode_progress", "episode_policy_ms", "episode_environment_ms", "episode_judge_ms")
_BOOL = ("complete", "passed", "attacked")
_STEP_STRING = ("action", "action_type", "text", "model_action", "raw", "thought", "parse_error", "error_reason",
                "error_message", "url", "title")
_STEP_INT = ("step", "turn", "attempt", "frame_width", "frame_height", "prompt_tokens", "completion_tokens",
             "image_tokens")
_STEP_FLOAT = ("x", "y", "end_x", "end_y", "x_norm", "y_norm", "end_x_norm", "end_y_norm", "step_progress",
               "policy_ms", "act_ms")


def features_for(rows: RowKind, images_as_strings: bool = False) -> Any:
    """The `datasets.Features` of a row kind (the typed schema of Parquet and hf output;
    JSONL holds images as strings: a data URL or a path)."""
    import datasets

    value = datasets.Value
    cols: dict[str, Any] = {}
    cols.update({c: value("string") for c in _STRING})
    cols.update({c: value("int64") for c in _INT})
    cols.update({c: value("float64") for c in _FLOAT})
    cols.update({c: value("bool") for c in _BOOL})
    if rows == "step":
        cols.update({c: value("string") for c in _STEP_STRING})
        cols.update({c: value("int64") for c in _STEP_INT})
        cols.update({c: value("float64") for c in _STEP_FLOAT})
        cols.update(is_last=value("bool"), step_ok=value("bool"), keys=datasets.List(value("string")),
                    image=value("string") if images_as_strings else datasets.Image())
    else:
        cols.update(actions=datasets.List(value("string")), thoughts=datasets.List(value("string")),
                    urls=datasets.List(value("string")), step_ok=datasets.List(value("bool")),
                    images=datasets.List(value("string") if images_as_strings else datasets.Image()),
                    final_image=value("string") if images_as_strings else datasets.Image(),
                    evidence=value("string"), violations=datasets.List(value("string")))
    return datasets.Features(cols)


def _image_struct(value: Any) -> Any:
    if isinstance(value, str):
        return {"bytes": None, "path": value}
    return value


def _image_json(value: Any) -> Any:
    if isinstance(value, Mapping) and value.get("bytes") is not None:
        return "data:image/jpeg;base64," + base64.b64encode(value["bytes"]).decode("ascii")
    return value


class TableSink:
    """Writes rows of one kind into one format under `out`; `close()` returns the files."""

    def __init__(self, out: Path, fmt: TableFormat, rows: RowKind, images: ImageMode) -> None:
        self.out, self.fmt, self.rows, self.images = out, fmt, rows, images
        self.count = 0
        self.by_split: dict[str, int] = {}
        self._buffers: dict[str, list[dict[str, Any]]] = {}
        self._writers: dict[str, Any] = {}
        self._files: dict[str, Path] = {}
        self._schema: Any = None
        out.mkdir(parents=True, exist_ok=True)
        if fmt != "jsonl":
            self._schema = features_for(rows).arrow_schema

    def _split_of(self, row: Mapping[str, Any]) -> str:
        if self.fmt == "parquet":
            return self.rows
        return str(row.get("split") or "train")

    def write(self, row: dict[str, Any]) -> None:
        split = self._split_of(row)
        self.count += 1
        self.by_split[split] = self.by_split.get(split, 0) + 1
        if self.fmt == "jsonl":
            self._jsonl(split, row)
            return
        buffer = self._buffers.setdefault(split, [])
        buffer.append(row)
        if len(buffer) >= ROW_GROUP:
            self._flush(split)

    def _jsonl(self, split: str, row: dict[str, Any]) -> None:
        if split not in self._writers:
            path = self.out / "data" / f"{split}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            self._files[split] = path
            self._writers[split] = path.open("w", encoding="utf-8")
        if "image" in row:
            row = {**row, "image": _image_json(row["image"])}
        if "images" in row:
            row = {**row, "images": [_image_json(i) for i in row["images"]], "final_image": _image_json(row["final_image"])}
        self._writers[split].write(json.dumps(row, ensure_ascii=False) + "\n")

    def _flush(self, split: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        buffer = self._buffers.get(split) or []
        if not buffer:
            return
        for row in buffer:
            if "image" in row:
                row["image"] = _image_struct(row["image"])
            if "images" in row:
                row["images"] = [_image_struct(i) for i in row["images"]]
                row["final_image"] = _image_struct(row["final_image"])
        table = pa.Table.from_pylist(buffer, schema=self._schema)
        if split not in self._writers:
            if self.fmt == "parquet":
                path = self.out / f"{self.rows}s.parquet"
            else:
                path = self.out / "data" / f"{split}-00000-of-00001.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            self._files[split] = path
            self._writers[split] = pq.ParquetWriter(path, self._schema)
        self._writers[split].write_table(table)
        buffer.clear()

    def close(self) -> list[Path]:
        for split in list(self._buffers):
            self._flush(split)
        if not self._files:  # an empty selection is an empty table, not a missing file
            self._empty()
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
        if self.fmt != "parquet":
            self._card()
        return sorted(self._files.values())

    def _empty(self) -> None:
        split = self.rows if self.fmt == "parquet" else "train"
        if self.fmt == "jsonl":
            path = self.out / "data" / f"{split}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")
            self._files[split] = path
            return
        import pyarrow.parquet as pq

        path = self.out / (f"{split}s.parquet" if self.fmt == "parquet" else f"data/{split}-00000-of-00001.parquet")
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(self._schema.empty_table(), path)
        self._files[split] = path

    def _card(self) -> None:
        """README.md with the dataset card's `configs` and, for JSONL, its features (JSON
        alone cannot say the type of a column that is empty in one split), which
        `load_dataset(DIR)` reads."""
        lines = ["---", "configs:", "- config_name: default", "  data_files:"]
        for split, path in sorted(self._files.items()):
            lines += [f"  - split: {split}", f"    path: {path.relative_to(self.out).as_posix()}"]
        if self.fmt == "jsonl":
            try:
                import yaml

                features = features_for(self.rows, images_as_strings=True)._to_yaml_list()
                info = yaml.safe_dump({"dataset_info": {"features": features}}, sort_keys=False)
                lines += info.rstrip("\n").splitlines()
            except ImportError:  # without datasets the card names the files only
                pass
        lines += ["---", "", f"# cua trajectories ({self.rows} rows)", "",
                  (f"Exported by `cua export --format {self.fmt} --rows {self.rows}`: {self.count} rows "
                   f"({', '.join(f'{k}: {v}' for k, v in sorted(self.by_split.items()))})."),
                  ("Coordinates are pixels of the observation frame (`x`, `y`) and the same point "
                   "normalised to it (`x_norm`, `y_norm`, 0..1)."), ""]
        (self.out / "README.md").write_text("\n".join(lines), encoding="utf-8")
